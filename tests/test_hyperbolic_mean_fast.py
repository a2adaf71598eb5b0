"""The hyperboloid's fast Karcher pass (issue 24): the cross form from one matrix–vector product
where its rounding is harmless, the exact forms elsewhere, checked against 50-digit arithmetic."""

import mpmath
import numpy as np
import pytest

from geodp import frechet_mean
from geodp.errors import NotOnManifoldError
from geodp.manifolds import Hyperbolic
from geodp.manifolds.frechet_hooks import FrechetFlowHooks

mpmath.mp.dps = 50


def exact_pass(x, X, weights, radius):
    """``(Σ w_i log_x x_i spatial part, ½ Σ w_i ρ², max ρ)`` in 50 digits; points lifted from their
    spatial coordinates (as the space does)."""
    R = mpmath.mpf(radius)

    def lift(p):
        s = [mpmath.mpf(float(v)) / R for v in p[1:]]
        return [mpmath.sqrt(1 + sum(v * v for v in s))] + s

    a = lift(x)
    total = [mpmath.mpf(0)] * (len(x) - 1)
    objective, far = mpmath.mpf(0), mpmath.mpf(0)
    for w, y in zip(weights, X):
        b = lift(y)
        cosh = a[0] * b[0] - sum(p * q for p, q in zip(a[1:], b[1:]))
        theta = mpmath.acosh(cosh) if cosh > 1 else mpmath.mpf(0)
        factor = theta / mpmath.sinh(theta) if theta > 0 else mpmath.mpf(1)
        for i in range(len(total)):
            total[i] += mpmath.mpf(float(w)) * R * factor * (b[i + 1] - cosh * a[i + 1])
        objective += mpmath.mpf(float(w)) * (R * theta) ** 2 / 2
        far = max(far, R * theta)
    return np.array([float(t) for t in total]), float(objective), float(far)


def cloud(space, centre_distance, spread, n, rng):
    o = space.origin
    c = space.exp(o, centre_distance * space.random_unit_tangent(o, rng=rng)) if centre_distance else o
    u = space.random_unit_tangent(c, size=n, rng=rng)
    return c, space.project(space._polar_exp(c, u, spread * rng.uniform(size=n)))


def pass_inputs(dim, curvature, centre_distance, spread, n=40, seed=7):
    rng = np.random.default_rng(seed)
    space = Hyperbolic(dim, curvature=curvature)
    c, X = cloud(space, centre_distance, spread, n, rng)
    x = space.project(c + 1e-3 * space.random_tangent(c, rng=rng)) if spread > 1e-3 else c
    w = rng.uniform(size=n)
    return space, x, X, w / w.sum()


@pytest.mark.parametrize(
    ("dim", "curvature", "centre_distance", "spread"),
    [(2, -1.0, 0.0, 1.5), (5, -0.3, 0.0, 6.0), (3, -4.0, 1.0, 1.0), (3, -1.0, 2.0, 1e-6), (4, -1.0, 1.0, 20.0)],
)
def test_pass_matches_50_digits(dim, curvature, centre_distance, spread):
    """Data near the origin (the cross form) and near pairs away from it (the exact forms), tiny
    and huge spreads: the direction, objective and largest distance to 1e-12."""
    space, x, X, w = pass_inputs(dim, curvature, centre_distance, spread)
    direction, objective, far = space._karcher_direction(x, X, w)
    ref_direction, ref_objective, ref_far = exact_pass(x, X, w, space.radius)
    # Spatial parts of tangent vectors at x are up to x_0/R times their length (the radial part).
    scale = float(w @ space.dist(x, X)) * x[0] / space.radius
    assert np.linalg.norm(direction[1:] - ref_direction) <= 1e-12 * scale
    assert objective == pytest.approx(ref_objective, rel=1e-12)
    assert far == pytest.approx(ref_far, rel=1e-12)


@pytest.mark.parametrize(
    ("dim", "curvature", "centre_distance", "spread"),
    [(3, -4.0, 12.0, 1.0), (3, -1.0, 25.0, 1e-6), (4, -1.0, 8.0, 20.0), (2, -1.0, 300.0, 1.0)],
)
def test_pass_far_from_the_origin_matches_the_exact_forms(dim, curvature, centre_distance, spread):
    """Far from the origin float64 coordinates hold distances to ~eps·x_0 only (class notes): the
    pass must match the per-record exact forms of log and dist there (which the precision tests
    check against mpmath), not the cancelling cross form."""
    space, x, X, w = pass_inputs(dim, curvature, centre_distance, spread)
    direction, objective, far = space._karcher_direction(x, X, w)
    logs, dists = space.log(x, X), space.dist(x, X)
    np.testing.assert_allclose(direction[1:], (w @ logs)[1:], rtol=1e-12, atol=1e-12 * np.abs(w @ logs).max())
    assert objective == pytest.approx(0.5 * float(w @ dists**2), rel=1e-12)
    assert far == pytest.approx(float(dists.max()), rel=1e-12)


def test_cross_form_alone_would_fail():
    """The mutant: the cross form for every record (no per-record test) misses the 50-digit
    distances of near pairs far from the origin by far more than the check's tolerance."""
    rng = np.random.default_rng(3)
    space = Hyperbolic(3)
    c, X = cloud(space, 25.0, 1e-6, 40, rng)
    w = np.full(40, 1 / 40)
    cosh = c[0] * X[:, 0] - X[:, 1:] @ c[1:]
    cross_far = float(np.max(np.arccosh(np.maximum(cosh, 1.0))))
    ref_far = float(space.dist(c, X).max())
    assert abs(cross_far - ref_far) > 1e-3 * ref_far
    assert space._karcher_direction(c, X, w)[2] == pytest.approx(ref_far, rel=1e-12)


def test_mean_agrees_with_the_generic_pass():
    """The flow with the fast pass lands where the generic per-record pass (logs and norms)
    lands, on centred and on spread data."""
    rng = np.random.default_rng(11)
    space = Hyperbolic(10)
    for centre_distance, spread in [(0.0, 1.5), (1.0, 3.0)]:
        _, X = cloud(space, centre_distance, spread, 500, rng)
        mean, info = frechet_mean(space, X, tol=1e-11, return_info=True)
        generic = type("Generic", (Hyperbolic,), {"_karcher_direction": FrechetFlowHooks._karcher_direction})(10)
        reference = frechet_mean(generic, X, tol=1e-11)
        assert info.converged
        assert space.dist(mean, reference) < 1e-9


def test_checked_records_no_copy_and_same_errors():
    rng = np.random.default_rng(5)
    space = Hyperbolic(4)
    _, X = cloud(space, 0.0, 2.0, 50, rng)
    assert space._checked_records(X) is X  # on the sheet: the block itself
    off = X.copy()
    off[:, 0] *= 1 + 1e-7  # within record_rtol: lifted as check_points lifts it
    np.testing.assert_array_equal(space._checked_records(off), space.check_points(off, "X", batch_ndim=1))
    bad = X.copy()
    bad[3, 0] *= 1.5
    with pytest.raises(NotOnManifoldError, match="1 point"):
        space._checked_records(bad)
    bad[3, 0] = np.nan
    with pytest.raises(Exception) as caught:
        space._checked_records(bad)
    with pytest.raises(type(caught.value)):
        space.check_points(bad, "X", batch_ndim=1)
