"""The matrix-vector Karcher step and the one-eigh log-Euclidean mean at the edges of the public
ball, against independent oracles (mpmath, scipy, pyRiemann)."""

import mpmath
import numpy as np
import pytest
import scipy.linalg

from geodp.errors import ConvergenceWarning
from geodp.frechet import frechet_mean
from geodp.manifolds import SPD, Sphere
from geodp.sensitivity import max_radius

mpmath.mp.dps = 40


def _mp_sphere_gradient(mean, X):
    """``Σ θ_i/sin θ_i (x_i − cos θ_i m)/n`` in 40-digit arithmetic (an independent oracle)."""
    m = [mpmath.mpf(float(v)) for v in mean]
    norm = mpmath.sqrt(sum(v * v for v in m))
    m = [v / norm for v in m]
    total = [mpmath.mpf(0)] * len(m)
    for x in X:
        x = [mpmath.mpf(float(v)) for v in x]
        c = sum(a * b for a, b in zip(x, m))
        theta = mpmath.acos(min(c, mpmath.mpf(1)))
        f = theta / mpmath.sin(theta) if theta else mpmath.mpf(1)
        total = [t + f * (a - c * b) for t, a, b in zip(total, x, m)]
    return float(mpmath.sqrt(sum(t * t for t in total))) / len(X)


@pytest.mark.parametrize("dim", [2, 30])
def test_sphere_mean_of_records_on_the_boundary_of_the_largest_ball(dim):
    space = Sphere(dim)
    r = max_radius(space) * (1 - 1e-9)
    center = np.eye(dim + 1)[0]
    rng = np.random.default_rng(dim)
    directions = space.to_tangent(center, rng.normal(size=(40, dim + 1)))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    X = space.exp(center, r * directions[:-10] * rng.uniform(0.5, 1.0, size=(30, 1)))
    X = np.concatenate([X, space.exp(center, r * directions[-10:])])  # ten on the boundary
    mean, info = frechet_mean(space, X, tol=1e-13, return_info=True)
    assert info.converged
    assert _mp_sphere_gradient(mean, X) < 1e-12


def test_sphere_mean_of_nearly_equal_records_is_exact():
    # Spread 1e-9: cos θ rounds to 1, yet θ/sin θ and the direction stay exact.
    space = Sphere(5)
    rng = np.random.default_rng(3)
    X = space.project(np.eye(6)[0] + 1e-9 * rng.normal(size=(50, 6)))
    mean = frechet_mean(space, X, tol=1e-15)
    assert _mp_sphere_gradient(mean, X) < 1e-18


def test_log_euclidean_mean_of_ill_conditioned_matrices_matches_scipy():
    space = SPD(4, metric="log-euclidean")
    rng = np.random.default_rng(4)
    q = np.linalg.qr(rng.normal(size=(20, 4, 4)))[0]
    logs = rng.uniform(-6.0, 6.0, size=(20, 4))  # condition numbers up to e^12 (float64 holds them)
    X = (q * np.exp(logs)[:, None, :]) @ np.swapaxes(q, 1, 2)
    X = 0.5 * (X + np.swapaxes(X, 1, 2))
    oracle = scipy.linalg.expm(np.mean([scipy.linalg.logm(x).real for x in X], axis=0))
    mean = frechet_mean(space, X)
    np.testing.assert_allclose(scipy.linalg.logm(mean).real, scipy.linalg.logm(oracle).real, rtol=0, atol=1e-9)


def test_affine_mean_matches_pyriemann_at_the_ball_edge():
    pyriemann = pytest.importorskip("pyriemann.utils.mean")
    space = SPD(5)
    rng = np.random.default_rng(5)
    X = space.exp(np.eye(5), 3.0 * space.random_unit_tangent(np.eye(5), size=30, rng=rng))
    expected = pyriemann.mean_riemann(X, tol=1e-14, maxiter=500)
    mean = frechet_mean(space, X, tol=1e-13)
    assert float(space.dist(mean, expected)) < 1e-10


def test_affine_newton_flow_matches_the_plain_flow_in_few_passes():
    # The Newton trial step (CG on the exact Hessian) from the log-Euclidean start: the same
    # mean as the papers' fixed-step flow, in at most 3 steps and one pass per step.
    rng = np.random.default_rng(4)
    X = SPD(6, metric="log-euclidean").from_coordinates(0.6 * rng.standard_normal((500, 21)))
    space = SPD(6)
    mean, info = frechet_mean(space, X, tol=1e-12, return_info=True)
    plain = frechet_mean(space, X, tol=1e-12, max_iter=500, adaptive=False)
    np.testing.assert_allclose(mean, plain, rtol=0, atol=1e-10)
    assert info.converged and info.n_iter <= 3 and info.n_passes == info.n_iter + 2


def test_affine_flow_falls_back_to_the_safe_step_when_newton_fails_armijo(monkeypatch):
    # A Newton direction that increases F is refused by the Armijo test: the safe gradient step
    # is taken instead, and the flow still converges to the same mean.
    rng = np.random.default_rng(5)
    X = SPD(3, metric="log-euclidean").from_coordinates(rng.standard_normal((200, 6)))
    space = SPD(3)
    expected = frechet_mean(space, X, tol=1e-12)
    bad = lambda self, x, direction, states, grad_norm, tol: (-10.0 * direction, 1e6)  # noqa: E731
    monkeypatch.setattr(type(space), "_newton_direction", bad)
    mean, info = frechet_mean(space, X, tol=1e-12, max_iter=500, return_info=True)
    np.testing.assert_allclose(mean, expected, rtol=0, atol=1e-10)
    assert info.converged and info.n_passes == 2 * info.n_iter + 2  # every trial refused


def test_rounding_level_asymmetric_records_give_the_mean_of_their_symmetric_parts():
    # Records from matrix products are symmetric only to rounding; a visible (but accepted)
    # asymmetry is symmetrised as check_points does.
    rng = np.random.default_rng(6)
    A = rng.standard_normal((300, 4, 4))
    X = A @ np.swapaxes(A, -1, -2) + 0.5 * np.eye(4)
    skew = 1e-10 * np.triu(np.ones((4, 4)), 1)
    Y = X + skew  # symmetric within the default tolerance, not to rounding
    for space in (SPD(4), SPD(4, metric="log-euclidean")):
        sym = 0.5 * (Y + np.swapaxes(Y, -1, -2))
        np.testing.assert_allclose(frechet_mean(space, Y), frechet_mean(space, sym), rtol=0, atol=1e-12)


def test_sphere_certifies_uniqueness_from_its_last_pass():
    # The sphere's passes measure angles exactly (atan2): no extra pass for the certificate, and
    # antipodal records (distance π from any point between them) are not certified.
    rng = np.random.default_rng(7)
    space = Sphere(20)
    X = space.project(rng.normal(size=(1000, 21)) * 0.1 + np.eye(21)[0])
    _, info = frechet_mean(space, X, tol=1e-12, return_info=True)
    assert info.converged and info.n_passes == info.n_iter + 2
    north = np.eye(21)[0]
    with pytest.warns(ConvergenceWarning, match="unique"):
        _, info = frechet_mean(space, np.stack([north, -north, np.eye(21)[1]]), init=np.eye(21)[1], return_info=True)
    assert not info.unique


@pytest.mark.parametrize("spread", [0.3, 1e-3, 1e-9])
def test_kendall_matrix_product_direction_matches_the_aligned_logs(spread):
    # The Kendall pass forms Σ w_i log_x(x_i) from two real products (θ/sin θ from rounded
    # cosines); the reference sums the careful aligned logs record by record (the generic hook).
    from geodp.manifolds import KendallShape
    from geodp.manifolds.frechet_hooks import FrechetFlowHooks
    from geodp.manifolds.kendall import to_complex, to_real

    space, rng = KendallShape(12), np.random.default_rng(11)
    x = space.random_point(rng=1)
    Y = space.exp(x, spread * space.random_tangent(x, size=40, rng=2) / np.sqrt(space.dim))
    Y = to_real(to_complex(Y) * np.exp(2j * np.pi * rng.random(40))[:, None])  # arbitrary rotations
    w = rng.random(40)
    w /= w.sum()
    direction, objective, far = space._karcher_direction(x, Y, w)
    ref_direction, ref_objective, ref_far = FrechetFlowHooks._karcher_direction(space, x, Y, w)
    np.testing.assert_allclose(direction, ref_direction, rtol=0, atol=1e-15)
    assert abs(objective - ref_objective) < 1e-15 and abs(far - ref_far) < 1e-7
    logs = space.log(x, Y)
    uniform = np.linalg.norm(np.mean(logs, axis=0))
    assert space._mean_log_norms(x[None], Y)[0] == pytest.approx(uniform, rel=1e-12, abs=1e-16)


def test_kendall_direction_at_the_cut_locus_and_the_certificate():
    # A record at ρ = π/2 (⟨x, y⟩ = 0 up to rounding): every rotation is optimal, so the log is
    # (π/2)·e^{iφ}y for a φ set by rounding; the pass measures that distance (the flow certifies from it).
    from geodp.manifolds import KendallShape

    space = KendallShape(5)
    x = space.random_point(rng=3)
    u = space.random_unit_tangent(x, rng=4)
    direction, objective, far = space._karcher_direction(x, u[None], np.ones(1))
    turned = np.stack([-u[:, 1], u[:, 0]], axis=-1)  # i·u
    a, b = np.sum(direction * u), np.sum(direction * turned)  # direction = (π/2)(a' u + b' iu), |a' + ib'| = 1
    np.testing.assert_allclose(direction, a * u + b * turned, rtol=0, atol=1e-15)
    assert np.hypot(a, b) == pytest.approx(np.pi / 2, abs=1e-15)
    assert far == pytest.approx(np.pi / 2, abs=1e-15) and objective == pytest.approx(np.pi**2 / 8)
    X = space.exp(x, 0.05 * space.random_tangent(x, size=30, rng=5))
    mean, info = frechet_mean(space, X, tol=1e-13, init=x, return_info=True)
    assert info.converged and info.unique  # certified from the passes' own distances
    assert np.linalg.norm(np.mean(space.log(mean, X), axis=0)) < 1e-13
