"""Short paths of the Fréchet mean at n = 100 (issue 24): each against the general path it
shortens (bit for bit where it claims to be the same computation) or against mpmath."""

import warnings

import mpmath
import numpy as np
import pytest

from geodp import frechet_mean
from geodp.errors import InvalidDataError, NotOnManifoldError
from geodp.manifolds import SPD, Hyperbolic, Sphere
from geodp.manifolds import spd as spd_module
from geodp.manifolds.pass_products import ONE_THREAD, pass_dot, pass_matvec

mpmath.mp.dps = 40


def _spd_block(k, n, seed, spread=1.0):
    rng = np.random.default_rng(seed)
    S = rng.normal(size=(n, k, k)) * spread / k
    return SPD(k).unchecked.exp(np.eye(k), 0.5 * (S + np.swapaxes(S, -1, -2)))


def _general_eigen_records(space, X, monkeypatch):
    with monkeypatch.context() as patch:
        patch.setattr(spd_module, "_common_eigen_records", lambda X: None)
        return space._eigen_records(X)


@pytest.mark.parametrize("k", [2, 3, 10])
@pytest.mark.parametrize("symmetric", [False, True])
def test_common_eigen_records_are_the_general_ones_bit_for_bit(k, symmetric, monkeypatch):
    """Valid blocks (products that are symmetric to the rounding level, or exactly): the short
    path returns the general path's eigenvalues, vectors, logs and verdicts, bit for bit."""
    X = _spd_block(k, 50, seed=k)
    if symmetric:
        X = 0.5 * (X + np.swapaxes(X, -1, -2))
    space = SPD(k, metric="log-euclidean")
    assert spd_module._common_eigen_records(X) is not None
    short, general = space._eigen_records(X), _general_eigen_records(space, X, monkeypatch)
    for a, b in zip(short[:4], general[:4]):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    assert short[4] is general[4] is True


def _spoiled(X, how):
    X = X.copy()
    k = X.shape[-1]
    if how == "asymmetric":  # beyond the rounding level, within the tolerance
        X[3, 0, 1] += 1e-12
    elif how == "singular":  # λ_min at the rounding level
        w, u = np.linalg.eigh(X[3])
        w[0] = 2.0 * k * np.finfo(float).eps * w[-1]
        X[3] = (u * w) @ u.T
    elif how == "tiny":  # norm below 1e-125: the general path scales it
        X[3] *= 1e-130
    elif how == "nan":
        X[3, 1, 1] = np.nan
    elif how == "indefinite":
        X[3] = -X[3]
    return X


@pytest.mark.parametrize("how", ["asymmetric", "singular", "tiny", "nan", "indefinite"])
def test_unusual_blocks_leave_the_short_path(how, monkeypatch):
    """One unusual record sends the block to the general path (the short path says None), whose
    verdicts and arrays the result then is."""
    X = _spoiled(_spd_block(3, 20, seed=1), how)
    assert spd_module._common_eigen_records(X) is None
    space = SPD(3, metric="log-euclidean")
    general = _general_eigen_records(space, X, monkeypatch)
    for a, b in zip(space._eigen_records(X)[:4], general[:4]):
        assert np.array_equal(a, b, equal_nan=True)


def _mp_centroid(X, radius):
    """``R m/√(−⟨m, m⟩_L)`` of the plain average ``m`` of the records, in 40 digits."""
    cols = [mpmath.fsum(mpmath.mpf(float(v)) for v in X[:, j]) / len(X) for j in range(X.shape[1])]
    scale = mpmath.mpf(radius) / mpmath.sqrt(cols[0] ** 2 - mpmath.fsum(c * c for c in cols[1:]))
    return np.array([float(c * scale) for c in cols])


@pytest.mark.parametrize("curvature", [-1.0, -0.25])
def test_hyperboloid_start_is_the_lorentzian_centroid(curvature):
    """The start is the extrinsic mean scaled onto the sheet (40 digits), on the sheet, and
    nearer the Fréchet mean than the extrinsic mean lifted by its spatial part (the old start)."""
    space = Hyperbolic(3, curvature=curvature)
    rng = np.random.default_rng(3)
    c = space.exp(space.origin, space.radius * space.random_unit_tangent(space.origin, rng=rng))
    X = space.project(space._polar_exp(c, space.random_unit_tangent(c, size=60, rng=rng), 2.5 * space.radius))
    start = space._karcher_start(np.full(60, 1 / 60) @ X)
    np.testing.assert_allclose(start, _mp_centroid(X, space.radius), rtol=1e-13)
    assert space.belongs(start)
    mean = frechet_mean(space, X)
    lifted = space.project(X.mean(axis=0))
    assert float(space.dist(start, mean)) < 0.5 * float(space.dist(lifted, mean))


def test_hyperboloid_start_falls_back_to_the_lift_where_the_centroid_cancels():
    """Far from the origin ``−⟨m, m⟩_L`` cancels: the start is then the lifted extrinsic mean."""
    space = Hyperbolic(2)
    rng = np.random.default_rng(4)
    c = space.exp(space.origin, 30.0 * space.random_unit_tangent(space.origin, rng=rng))
    X = space.project(space._polar_exp(c, space.random_unit_tangent(c, size=10, rng=rng), 1e-9))
    m = np.full(10, 0.1) @ X
    np.testing.assert_array_equal(space._karcher_start(m), space.project(m))


def _cross_bound(space, x, X):
    """The pass's test, recomputed: bound of the cross form and ``cosh θ − 1``, in units of eps."""
    a = x / space.radius
    B = X / space.radius
    big = a[0] * B[:, 0]
    cosh = big - B[:, 1:] @ a[1:]
    return big + np.abs(big - cosh) + 1.0, cosh - 1.0


def test_moderately_distant_records_take_the_cross_form(monkeypatch):
    """Records about 1.3 from the mean (cosh θ − 1 ≈ 1) with cross-form bounds of 16–32 eps no
    longer go through the exact forms, and the pass still agrees with 40-digit arithmetic; a
    tight cluster 2 from the origin (bounds ≈ 28 eps at cosh θ − 1 ≈ 0) still does."""
    space = Hyperbolic(2)
    rng = np.random.default_rng(5)
    x = space.exp(space.origin, 1.2 * space.random_unit_tangent(space.origin, rng=rng))
    X = space.project(space._polar_exp(x, space.random_unit_tangent(x, size=400, rng=rng), 1.3))
    bound, c = _cross_bound(space, x, X)
    assert np.any((bound > 16.0 * np.maximum(c, 1.0)) & (bound <= 32.0 * c))  # the records in question
    calls = []
    original = Hyperbolic._separation
    monkeypatch.setattr(Hyperbolic, "_separation", lambda self, *a, **k: calls.append(1) or original(self, *a, **k))
    _, objective, far = space._karcher_direction(x, X, np.full(400, 1 / 400))
    assert not calls
    a = [mpmath.mpf(float(t)) for t in x]
    b = [[mpmath.mpf(float(t)) for t in y] for y in X]
    rho = [mpmath.acosh(a[0] * y[0] - mpmath.fsum(p * q for p, q in zip(a[1:], y[1:]))) for y in b]
    assert objective == pytest.approx(float(mpmath.fsum(r * r for r in rho) / 800), rel=1e-13)
    assert far == pytest.approx(float(max(rho)), rel=1e-13)
    y = space.exp(space.origin, 2.0 * space.random_unit_tangent(space.origin, rng=rng))
    cluster = space.project(space._polar_exp(y, space.random_unit_tangent(y, size=20, rng=rng), 1e-6))
    space._karcher_direction(y, cluster, np.full(20, 0.05))
    assert calls


def test_hyperboloid_validation_short_path():
    """Records on the sheet come back as the same array; a time coordinate 64 ulp off is lifted;
    a lower-sheet record, a NaN and a record off the hyperboloid raise the usual errors."""
    space = Hyperbolic(3)
    X = space.random_point(size=30, rng=np.random.default_rng(6))
    assert space._checked_records(X) is X
    off = X.copy()
    off[4, 0] *= 1 + 64 * np.finfo(float).eps
    np.testing.assert_array_equal(space._checked_records(off), space.project(off))
    faults = [(0, -X[0, 0], NotOnManifoldError), (1, np.nan, InvalidDataError), (2, 2 * X[2, 0], NotOnManifoldError)]
    for row, value, error in faults:
        bad = X.copy()
        bad[row, 0] = value
        with pytest.raises(error):
            space._checked_records(bad)


def test_sphere_validation_short_path():
    """Unit records come back as the same array, a record 1e-6 off the sphere is normalised, one
    2e-4 off (beyond ``record_rtol``) and a NaN raise the usual errors."""
    space = Sphere(2)
    X = space.random_point(size=30, rng=np.random.default_rng(7))
    X = X / np.linalg.norm(X, axis=1, keepdims=True)
    X = X[np.abs(np.linalg.norm(X, axis=1) - 1) <= 4 * np.finfo(float).eps]
    assert space._checked_records(X) is X
    off = X.copy()
    off[2] *= 1 + 1e-6
    expected = np.where(np.arange(len(X))[:, None] == 2, X, off)
    np.testing.assert_allclose(space._checked_records(off), expected, atol=2e-16)
    for value, error in [(1 + 2e-4, NotOnManifoldError), (np.nan, InvalidDataError)]:
        bad = X.copy()
        bad[3] *= value
        with pytest.raises(error):
            space._checked_records(bad)


SPACES = [Sphere(2), Sphere(40, curvature=4.0), Hyperbolic(2), Hyperbolic(30, curvature=-0.25)]


@pytest.mark.parametrize("space", SPACES, ids=repr)
def test_single_point_gradient_norm_is_the_space_norm(space):
    """``_karcher_grad_norm`` (one dot, or the frame in Python floats) is ``space.norm``."""
    rng = np.random.default_rng(8)
    o = space.reference_point()
    for distance in (0.0, 0.7, 1.5):
        x = space.exp(o, distance * space.radius * space.random_unit_tangent(o, rng=rng)) if distance else o
        v = 0.3 * space.random_tangent(x, rng=rng)
        assert space._karcher_grad_norm(x, v) == pytest.approx(float(space.norm(x, v)), rel=1e-14)


@pytest.mark.parametrize("shape", [(100, 3), (3000, 3), (100, 200), (40, 101)])
def test_pass_products_agree_with_and_without_blas(shape):
    """Both routes of :func:`pass_matvec` and :func:`pass_dot` compute the same products."""
    rng = np.random.default_rng(9)
    A, v, u = rng.normal(size=shape), rng.normal(size=shape[1]), rng.normal(size=shape[0])
    np.testing.assert_allclose(pass_matvec(A, v), np.einsum("ij,j->i", A, v), rtol=1e-13, atol=1e-13)
    assert pass_dot(u, u) == pytest.approx(float(np.einsum("i,i->", u, u)), rel=1e-14)
    assert (A.size < ONE_THREAD) == (shape in [(100, 3), (40, 101)])


EXTREMES = [(Sphere(2, curvature=1e-200), 1.0), (Sphere(3, curvature=1e200), 1.0), (Hyperbolic(2), 300.0)]


@pytest.mark.parametrize(("space", "reach"), EXTREMES + [(Hyperbolic(3, curvature=-1e-100), 20.0)], ids=repr)
def test_small_n_paths_raise_no_floating_point_warning(space, reach):
    """A floating-point warning depends on the data (it is observable): the BLAS products and the
    single-point paths stay silent at extreme radii and, on the hyperboloid, with records far
    from the origin (whose products overflow and take the exact forms)."""
    rng = np.random.default_rng(10)
    o = space.reference_point()
    X = space.exp(o, reach * space.radius * space.random_unit_tangent(o, size=50, rng=rng))
    if isinstance(space, Hyperbolic):
        X = np.concatenate([X, space.exp(o, 0.5 * space.radius * space.random_unit_tangent(o, size=50, rng=rng))])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        mean, info = frechet_mean(space, X, tol=1e-10 * space.radius, return_info=True)
        space._karcher_direction(o, X, np.full(len(X), 1 / len(X)))
    assert np.all(np.isfinite(mean)) and info.converged
