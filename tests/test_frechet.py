import numpy as np
import pytest

from geodp import frechet_mean
from geodp.errors import (
    ConvergenceWarning,
    InvalidDataError,
    InvalidParameterError,
    InvalidTypeError,
    NotOnManifoldError,
)
from geodp.manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Sphere
from geodp.manifolds import matrix_functions as mf


def spread_spd(k, n, seed, scale=1.0):
    rng = np.random.default_rng(seed)
    return mf.expm(mf.invvecd(scale * rng.standard_normal((n, k * (k + 1) // 2)), k))


def test_affine_mean_matches_pyriemann():
    pytest.importorskip("pyriemann")
    from pyriemann.geometry.mean import mean_riemann

    X = spread_spd(5, 200, 0)
    ours, info = frechet_mean(SPD(5), X, tol=1e-12, return_info=True)
    theirs = mean_riemann(X, tol=1e-14, maxiter=200)
    assert info.converged and info.grad_norm < 1e-12
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-11)


def test_log_euclidean_mean_matches_pyriemann():
    pytest.importorskip("pyriemann")
    from pyriemann.geometry.mean import mean_logeuclid

    X = spread_spd(6, 100, 1, scale=2.0)
    w = np.random.default_rng(2).uniform(size=100)
    np.testing.assert_allclose(
        frechet_mean(SPD(6, metric="log-euclidean"), X, weights=w),
        mean_logeuclid(X, sample_weight=w),
        rtol=1e-9,
        atol=1e-10,
    )


def test_affine_mean_matches_geomstats():
    pytest.importorskip("geomstats")
    from geomstats.geometry.spd_matrices import SPDMatrices
    from geomstats.learning.frechet_mean import FrechetMean

    X = spread_spd(3, 60, 3)
    est = FrechetMean(SPDMatrices(3))
    est.set(max_iter=500, epsilon=1e-12)
    theirs = est.fit(X).estimate_
    ours = frechet_mean(SPD(3), X)
    # geomstats stops on its own criterion ~1e-6 short of the optimum: agree to 1e-5, and ours
    # must be the more stationary point.
    np.testing.assert_allclose(ours, theirs, atol=1e-5)
    grad = lambda m: SPD(3).norm(m, SPD(3).log(m, X).mean(axis=0))
    assert grad(ours) < 1e-9 and grad(ours) <= grad(theirs)


def test_affine_mean_is_congruence_equivariant_and_first_order_optimal():
    X = spread_spd(4, 50, 4)
    a = np.random.default_rng(5).standard_normal((4, 4))
    space = SPD(4)
    m = frechet_mean(space, X)
    np.testing.assert_allclose(frechet_mean(space, mf.congruence(a, X)), mf.congruence(a, m), rtol=1e-8)
    # the gradient -mean log_m(x_i) vanishes at the mean, checked independently of the solver
    assert space.norm(m, space.log(m, X).mean(axis=0)) < 1e-9


def test_euclidean_mean_is_the_arithmetic_mean():
    X = np.random.default_rng(6).standard_normal((30, 3))
    np.testing.assert_allclose(frechet_mean(Euclidean(3), X), X.mean(axis=0), rtol=1e-14)


def test_papers_settings_and_convergence_warning():
    X = spread_spd(3, 40, 7, scale=2.0)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        _, info = frechet_mean(SPD(3), X, step=0.05, max_iter=3, adaptive=False, return_info=True)
    assert not info.converged and info.n_iter == 3
    mean, info = frechet_mean(SPD(3), X, step=0.5, tol=1e-5, max_iter=500, return_info=True)
    assert info.converged and info.grad_norm < 1e-5


@pytest.mark.parametrize(
    "X,kwargs,error",
    [
        (np.zeros((0, 2, 2)), {}, InvalidDataError),
        (np.full((3, 2, 2), np.nan), {}, InvalidDataError),
        (np.stack([np.eye(2), -np.eye(2)]), {}, NotOnManifoldError),
        (np.eye(3)[None], {}, InvalidDataError),
        (np.stack([np.eye(2)] * 2), {"weights": [1.0, -1.0]}, InvalidParameterError),
        (np.stack([np.eye(2)] * 2), {"weights": [1.0]}, InvalidDataError),
        (np.stack([np.eye(2)] * 2), {"tol": 0.0}, InvalidParameterError),
        (np.stack([np.eye(2)] * 2), {"max_iter": 0}, InvalidParameterError),
    ],
)
def test_bad_input(X, kwargs, error):
    with pytest.raises(error):
        frechet_mean(SPD(2), X, **kwargs)


def test_space_must_be_a_manifold():
    with pytest.raises(InvalidTypeError):
        frechet_mean("spd", np.eye(2)[None])


def test_adaptive_step_converges_on_dispersed_data_where_fixed_step_overshoots():
    pytest.importorskip("pyriemann")
    from pyriemann.geometry.mean import mean_riemann

    X = spread_spd(3, 300, 8, scale=3.0)
    with pytest.warns(ConvergenceWarning):
        frechet_mean(SPD(3), X, adaptive=False, tol=1e-8, max_iter=100)
    mean, info = frechet_mean(SPD(3), X, tol=1e-10, return_info=True)
    assert info.converged and info.n_iter < 30
    assert SPD(3).dist(mean, mean_riemann(X, tol=1e-12, maxiter=1000)) < 1e-8


def _clustered(space, seed, spread):
    center = space.random_point(rng=seed)
    return space.exp(center, spread * space.random_tangent(center, size=60, rng=seed + 1))


@pytest.mark.parametrize(
    "ours, module, name",
    [(Sphere(3), "hypersphere", "Hypersphere"), (Hyperbolic(3), "hyperboloid", "Hyperboloid")],
    ids=["sphere", "hyperbolic"],
)
def test_curved_means_match_geomstats(ours, module, name):
    gs_module = pytest.importorskip(f"geomstats.geometry.{module}")
    from geomstats.learning.frechet_mean import FrechetMean

    X = _clustered(ours, 50, 0.4)
    mean, info = frechet_mean(ours, X, tol=1e-12, return_info=True)
    assert info.converged
    estimator = FrechetMean(getattr(gs_module, name)(3))
    estimator.set(max_iter=500, epsilon=1e-12)
    theirs = estimator.fit(X).estimate_
    np.testing.assert_allclose(mean, theirs, atol=1e-6)
    # ours is first-order optimal to the tolerance; the gradient at geomstats' answer is larger or equal
    assert np.linalg.norm(np.mean(ours.log(mean, X), axis=0)) <= 1e-11


def test_kendall_mean_is_rotation_invariant_and_optimal():
    space = KendallShape(7)
    X = _clustered(space, 52, 0.1)  # within the uniqueness radius π/4 of the mean
    angles = np.random.default_rng(53).uniform(0, 2 * np.pi, len(X))
    rot = np.stack(
        [np.stack([np.cos(angles), -np.sin(angles)], -1), np.stack([np.sin(angles), np.cos(angles)], -1)], -2
    )
    turned = np.einsum("nkj,nij->nki", X, rot) * 3.0 + 1.0  # each record rotated, scaled, moved
    mean, info = frechet_mean(space, X, tol=1e-12, return_info=True)
    mean2 = frechet_mean(space, space.check_points(turned), tol=1e-12)
    assert info.converged and float(space.dist(mean, mean2)) < 1e-9
    np.testing.assert_allclose(np.mean(space.log(mean, X), axis=0), 0.0, atol=1e-11)
