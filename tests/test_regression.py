"""Geodesic regression: closed forms against numpy OLS and geomstats, adjoint Jacobi fields and
gradients against finite differences, convergence on curved spaces, typed errors."""

import os
import warnings

import numpy as np
import pytest

from geodp import regression
from geodp.errors import (
    ConvergenceWarning,
    InvalidDataError,
    InvalidParameterError,
    InvalidTypeError,
    NotOnManifoldError,
)
from geodp.manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Sphere
from geodp.regression import (
    RegressionInfo,
    adjoint_exp_derivatives,
    geodesic_predict,
    geodesic_regression,
    regression_gradient,
    regression_objective,
)


def synthetic(space, n, m, noise, seed, speed=0.4, low=-1.0):
    """Records scattered with tangent noise around ``Exp(p, Σ x_j v_j)``; returns x, Y, p, v."""
    rng = np.random.default_rng(seed)
    p = space.random_point(rng=rng)
    v = space.random_tangent(p, size=m, rng=rng) * speed / np.sqrt(space.dim)
    x = rng.uniform(low, 1.0, (n, m))
    fitted = space.exp(p, np.einsum("nm,m...->n...", x, v))
    noise_vectors = space.random_tangent(fitted, rng=rng) * noise / np.sqrt(space.dim)
    return x, space.project(space.exp(fitted, noise_vectors)), p, v


# ------------------------------------------------------------------------------ Euclidean
@pytest.mark.parametrize("d", [1, 4])
@pytest.mark.parametrize("m", [1, 3])
def test_euclidean_equals_numpy_ols(m, d):
    rng = np.random.default_rng(10 * m + d)
    n = 40
    x = rng.normal(2.0, 3.0, (n, m))
    Y = 5.0 + x @ rng.normal(size=(m, d)) + rng.normal(size=(n, d))
    coef = np.linalg.lstsq(np.column_stack([np.ones(n), x]), Y, rcond=None)[0]
    p, v, info = geodesic_regression(Euclidean(d), x, Y, return_info=True)
    np.testing.assert_allclose(p, coef[0], rtol=0, atol=1e-10)
    np.testing.assert_allclose(v, coef[1:], rtol=0, atol=1e-10)
    assert v.shape == (m, d) and info.n_iter == 0 and info.converged and info.grad_norm < 1e-12
    residual = Y - coef[0] - x @ coef[1:]
    assert info.objective == pytest.approx(0.5 * np.mean(np.sum(residual**2, axis=1)), rel=1e-12)
    if m == 1:  # a covariate vector gives one tangent vector of the point's shape
        p1, v1 = geodesic_regression(Euclidean(d), x[:, 0], Y)
        assert v1.shape == (d,)
        np.testing.assert_allclose(v1, coef[1], rtol=0, atol=1e-10)
        np.testing.assert_allclose(p1, coef[0], rtol=0, atol=1e-10)


def test_log_euclidean_spd_is_ols_in_the_log_chart():
    space = SPD(3, metric="log-euclidean")
    x, Y, _, _ = synthetic(space, 50, 2, 0.2, 1, speed=1.0)
    p, v, info = geodesic_regression(space, x, Y, return_info=True)
    chart = space.to_coordinates(Y)
    design = np.column_stack([np.ones(len(x)), x])
    coef = np.linalg.lstsq(design, chart, rcond=None)[0]
    # v_j is the tangent vector whose chart differential is the OLS slope: the predictions
    # Exp(p, Σ x_j v_j) are the OLS fitted values in the chart.
    np.testing.assert_allclose(space.to_coordinates(geodesic_predict(space, p, v, x)), design @ coef, atol=1e-10)
    np.testing.assert_allclose(space.to_coordinates(p), coef[0], atol=1e-10)
    assert info.converged and info.n_iter == 0
    gp, gv = regression_gradient(space, p, v, x, Y)
    assert np.sqrt(space.norm(p, gp) ** 2 + np.sum(space.norm(p, gv) ** 2)) < 1e-8


# ------------------------------------------------------------------------------ geomstats
def _central_gradient(fun, param, h=1e-6):
    grad = np.zeros_like(param)
    for idx in np.ndindex(param.shape):
        step = np.zeros_like(param)
        step[idx] = h
        grad[idx] = (fun(param + step) - fun(param - step)) / (2 * h)
    return grad


def test_sphere_matches_geomstats():
    os.environ.setdefault("GEOMSTATS_BACKEND", "numpy")
    gs_regression = pytest.importorskip("geomstats.learning.geodesic_regression")
    from geomstats.geometry.hypersphere import Hypersphere

    rng = np.random.default_rng(3)
    space = Sphere(2)
    x = rng.uniform(0.0, 1.0, 30)
    Y = geodesic_predict(space, [0.0, 0.0, 1.0], [0.6, 0.3, 0.0], x)
    Y = space.project(space.exp(Y, 0.05 * space.random_tangent(Y, rng=rng)))
    p, v, info = geodesic_regression(space, x, Y, return_info=True)
    assert info.converged

    # geomstats' model is Exp_{intercept_}(coef_ · x) with x centred unless center_X=False: the
    # same parametrisation as ours then. Its Riemannian descent needs autodiff, which the numpy
    # backend lacks: give it central differences of its own loss instead.
    est = gs_regression.GeodesicRegression(
        Hypersphere(2), center_X=False, method="riemannian", initialization="frechet"
    )
    est.optimizer._handle_jac = lambda fun, point_ndim: lambda param: (fun(param), _central_gradient(fun, param))
    est.set(max_iter=3000, tol=1e-16, init_step_size=0.1)
    est.fit(x, Y)
    np.testing.assert_allclose(p, est.intercept_, atol=1e-6)
    np.testing.assert_allclose(v, est.coef_, atol=1e-6)
    # ours is the more stationary point
    gs_grad = regression_gradient(space, est.intercept_, space.to_tangent(est.intercept_, est.coef_), x, Y)
    assert info.grad_norm <= np.sqrt(sum(np.sum(g**2) for g in gs_grad))


# ---------------------------------------------------------------------------- convergence
@pytest.mark.parametrize(
    "space",
    [Hyperbolic(2), KendallShape(8), SPD(3, metric="log-euclidean"), SPD(3), Sphere(2), Hyperbolic(3, curvature=-4.0)],
    ids=repr,
)
@pytest.mark.parametrize("m", [1, 2])
def test_converges_from_default_start(space, m):
    x, Y, p_true, v_true = synthetic(space, 60, m, 0.1, 7 + m)
    p, v, info = geodesic_regression(space, x, Y, return_info=True)
    assert isinstance(info, RegressionInfo) and info.converged and info.grad_norm <= 1e-8
    assert info.n_iter <= (0 if space.is_flat else 30)
    # stationary, measured independently of the solver's report
    gp, gv = regression_gradient(space, p, v, x, Y)
    assert np.sqrt(space.norm(p, gp) ** 2 + np.sum(space.norm(p, gv) ** 2)) <= 1e-8
    # a minimiser: no worse than the generating parameters, and close to them at this noise level
    assert info.objective == pytest.approx(regression_objective(space, p, v, x, Y), rel=1e-12)
    assert info.objective <= regression_objective(space, p_true, v_true, x, Y)
    assert space.dist(p, p_true) < 0.1
    assert space.norm(p, v - space.transport(p_true, p, v_true)).max() < 0.15


def test_badly_scaled_covariates_and_explicit_start_reach_the_same_minimum():
    # covariates in [0, 5], not centred: the design preconditioner keeps the descent short
    space = Hyperbolic(2)
    x, Y, _, _ = synthetic(space, 60, 2, 0.2, 4, speed=0.3, low=0.0)
    p, v, info = geodesic_regression(space, 5.0 * x, Y, return_info=True)
    assert info.converged and info.n_iter <= 30
    start = (Y[0], np.zeros((2, 3)))
    p2, v2, info2 = geodesic_regression(space, 5.0 * x, Y, init=start, return_info=True)
    assert info2.converged and info2.n_iter > 0
    np.testing.assert_allclose(p2, p, atol=1e-9)
    np.testing.assert_allclose(v2, v, atol=1e-9)


def test_max_iter_reached_warns():
    x, Y, _, _ = synthetic(Sphere(2), 30, 1, 0.3, 5, speed=1.5)
    with pytest.warns(ConvergenceWarning, match="stopped after 1 iterations"):
        _, _, info = geodesic_regression(Sphere(2), x, Y, max_iter=1, tol=1e-14, return_info=True)
    assert not info.converged and info.n_iter == 1


# ---------------------------------------------------------------- adjoints vs finite differences
ADJOINT_SPACES = [
    Euclidean(3),
    Sphere(3),
    Sphere(2, curvature=2.5),
    Hyperbolic(3),
    Hyperbolic(2, curvature=-0.3),
    Hyperbolic(2, curvature=-4.0),
    KendallShape(3),
    KendallShape(8),
    SPD(3, metric="log-euclidean"),
    SPD(3),
]


def _fd_adjoint_errors(space, length, seed, h=1e-5):
    """Relative errors of ⟨adjoint(w), a⟩_p = ⟨w, dExp[a]⟩_{Exp(p,u)} for d_p and d_u, dExp from
    central differences (d_p: u parallel transported along p's variation)."""
    rng = np.random.default_rng(seed)
    p = space.random_point(rng=rng)
    u = space.random_unit_tangent(p, rng=rng) * length
    y = space.exp(p, u)
    w, a = space.random_tangent(y, rng=rng), space.random_tangent(p, rng=rng)
    dp, du = adjoint_exp_derivatives(space, p, u, w)

    def moved(t):
        q = space.exp(p, t * a)
        return space.exp(q, space.transport(p, q, u))

    # difference quotients are tangent only up to O(h²) (and vertical parts on Kendall's
    # preshapes): project them, as the public geometry asks (w is tangent: the value is unchanged)
    d_u = space.to_tangent(y, (space.exp(p, u + h * a) - space.exp(p, u - h * a)) / (2 * h))
    d_p = space.to_tangent(y, (moved(h) - moved(-h)) / (2 * h))
    scale = float(space.norm(y, w) * space.norm(p, a))
    return (
        abs(float(space.inner(p, dp, a) - space.inner(y, w, d_p))) / scale,
        abs(float(space.inner(p, du, a) - space.inner(y, w, d_u))) / scale,
    )


@pytest.mark.parametrize("length", [0.0, 1e-6, 0.3, 1.2, 2.5])
@pytest.mark.parametrize("space", ADJOINT_SPACES, ids=repr)
def test_adjoints_match_finite_differences(space, length):
    for seed in range(3):
        err_p, err_u = _fd_adjoint_errors(space, length, seed)
        assert err_p < 1e-7 and err_u < 1e-7, (seed, err_p, err_u)


@pytest.mark.parametrize("space", [KendallShape(6), Sphere(2), SPD(3)], ids=repr)
def test_adjoints_are_not_the_identity_and_are_vectorised(space):
    rng = np.random.default_rng(0)
    p = space.random_point(size=4, rng=rng)
    lengths = np.array([0.0, 0.5, 1.0, 2.0]).reshape((4,) + (1,) * len(space.point_shape))
    u = space.random_unit_tangent(p, rng=rng) * lengths
    y = space.exp(p, u)
    w = space.random_tangent(y, size=(2, 4), rng=rng)  # an extra leading axis broadcasts against p
    dp, du = adjoint_exp_derivatives(space, p, u, w)
    assert dp.shape == du.shape == (2, 4) + space.point_shape
    for i in range(2):
        for j in range(4):
            one_p, one_u = adjoint_exp_derivatives(space, p[j], u[j], w[i, j])
            np.testing.assert_allclose(dp[i, j], one_p, atol=1e-12)
            np.testing.assert_allclose(du[i, j], one_u, atol=1e-12)
    # at u = 0 both adjoints are the identity; at |u| = 2 d_uExp^† shrinks w where the curvature
    # is positive and stretches it where it is negative (affine-invariant SPD)
    np.testing.assert_allclose(dp[:, 0], w[:, 0], atol=1e-12)
    np.testing.assert_allclose(du[:, 0], w[:, 0], atol=1e-12)
    ratio = space.norm(p[3], du[:, 3]) / space.norm(y[3], w[:, 3])
    assert np.all(ratio < 0.99) if space.curvature_bounds[0] >= 0 else np.all(ratio > 1.01)


# --------------------------------------------------------------- gradient vs finite differences
@pytest.mark.parametrize(
    "space",
    [Euclidean(2), Sphere(2), Hyperbolic(2, curvature=-2.0), KendallShape(6), SPD(3, metric="log-euclidean"), SPD(2)],
    ids=repr,
)
def test_gradient_matches_finite_differences_of_the_objective(space):
    x, Y, p, v = synthetic(space, 25, 2, 0.3, 11, speed=1.0)
    rng = np.random.default_rng(12)
    gp, gv = regression_gradient(space, p, v, x, Y)
    h = 1e-5
    for _ in range(3):
        a = space.random_tangent(p, rng=rng)
        b = space.random_tangent(p, size=2, rng=rng)

        def energy_p(t, a=a):
            q = space.exp(p, t * a)
            return regression_objective(space, q, space.transport(p, q, v), x, Y)

        def energy_v(t, b=b):
            return regression_objective(space, p, v + t * b, x, Y)

        fd_p = (energy_p(h) - energy_p(-h)) / (2 * h)
        fd_v = (energy_v(h) - energy_v(-h)) / (2 * h)
        scale_p = float(space.norm(p, gp) * space.norm(p, a))
        scale_v = float(np.sqrt(np.sum(space.norm(p, gv) ** 2) * np.sum(space.norm(p, b) ** 2)))
        assert abs(float(space.inner(p, gp, a)) - fd_p) <= 1e-6 * scale_p
        assert abs(float(np.sum(space.inner(p, gv, b))) - fd_v) <= 1e-6 * scale_v


def test_batched_fast_path_matches_pointwise_and_chunking(monkeypatch):
    space = KendallShape(5)
    x, Y, p, v = synthetic(space, 30, 2, 0.3, 13)
    rng = np.random.default_rng(14)
    P = space.exp(p, 0.2 * space.random_tangent(p, size=(2, 3), rng=rng))
    V = space.to_tangent(P[:, :, None], v + 0.1 * rng.standard_normal((2, 3, 2, 5, 2)))
    gp, gv = regression.unchecked_regression_gradient(space, P, V, x, Y)
    assert gp.shape == (2, 3, 5, 2) and gv.shape == (2, 3, 2, 5, 2)
    for i, j in np.ndindex(2, 3):
        one_p, one_v = regression_gradient(space, P[i, j], V[i, j], x, Y)
        np.testing.assert_allclose(gp[i, j], one_p, atol=1e-14)
        np.testing.assert_allclose(gv[i, j], one_v, atol=1e-14)
    # chunks smaller than one point's records: split over records and over points
    monkeypatch.setattr(regression, "_CHUNK_FLOATS", 70)
    gp_small, gv_small = regression.unchecked_regression_gradient(space, P, V, x, Y)
    np.testing.assert_allclose(gp_small, gp, atol=1e-14)
    np.testing.assert_allclose(gv_small, gv, atol=1e-14)
    np.testing.assert_allclose(
        regression._regression_objective(space, P, V, x, Y)[1, 2],
        regression_objective(space, P[1, 2], V[1, 2], x, Y),
        rtol=1e-13,
    )


# ------------------------------------------------------------------------- residual bound
def test_residual_bound_clips_each_residual_to_tau():
    space = Euclidean(2)
    rng = np.random.default_rng(15)
    x = rng.uniform(-1, 1, (20, 1))
    Y = rng.normal(size=(20, 2)) * 3.0
    p, v = np.array([0.5, -0.5]), np.array([[1.0, 2.0]])
    residual = Y - p - x @ v
    tau = 1.0
    clipped = residual * np.minimum(1.0, tau / np.linalg.norm(residual, axis=1))[:, None]
    gp, gv = regression_gradient(space, p, v, x, Y, residual_bound=tau)
    np.testing.assert_allclose(gp, -clipped.mean(axis=0), atol=1e-14)
    np.testing.assert_allclose(gv, -(x * clipped).mean(axis=0, keepdims=True), atol=1e-14)
    assert (
        np.linalg.norm(clipped, axis=1).max() == pytest.approx(tau) and np.linalg.norm(residual, axis=1).max() > 2 * tau
    )
    # a bound above every residual changes nothing
    loose = regression_gradient(space, p, v, x, Y, residual_bound=1e3)
    np.testing.assert_allclose(loose[0], regression_gradient(space, p, v, x, Y)[0], atol=1e-15)


def test_residual_bound_bounds_each_records_contribution_on_the_sphere():
    # κ ≥ 0: the adjoints are contractions, so replacing one record moves ∇_p E by ≤ 2τ/n and
    # ∇_v E by ≤ 2τ·max|x|/n (docs/math.md §9).
    space, tau, n = Sphere(2), 0.3, 10
    rng = np.random.default_rng(16)
    worst_p = worst_v = 0.0
    for _ in range(30):
        x, Y, p, v = synthetic(space, n, 1, 1.0, int(rng.integers(1 << 30)), speed=3.0, low=0.0)
        gp, gv = regression_gradient(space, p, v, x, Y, residual_bound=tau)
        Y2 = Y.copy()
        Y2[0] = space.random_point(rng=rng)
        gp2, gv2 = regression_gradient(space, p, v, x, Y2, residual_bound=tau)
        worst_p = max(worst_p, np.linalg.norm(gp - gp2) / (2 * tau / n))
        worst_v = max(worst_v, np.linalg.norm(gv - gv2) / (2 * tau * np.abs(x).max() / n))
    assert 0.3 < worst_p <= 1 + 1e-12 and 0.1 < worst_v <= 1 + 1e-12


def test_non_finite_residuals_contribute_zero_under_a_bound():
    space = Hyperbolic(2)
    x = np.array([[0.0], [0.01], [2.0]])
    Y = space.project(np.array([[0.0, 0.1, 0.0], [0.0, 0.2, 0.3], [0.0, -0.1, 0.2]]))
    p = space.origin
    v = np.array([[0.0, 400.0, 0.0]])  # Exp overflows for the third record (cosh 800)
    with np.errstate(all="ignore"):
        gp_free, gv_free = regression_gradient(space, p, v, x, Y)
    assert not (np.all(np.isfinite(gp_free)) and np.all(np.isfinite(gv_free)))
    gp, gv = regression_gradient(space, p, v, x, Y, residual_bound=0.5)
    gp_two, gv_two = regression_gradient(space, p, v, x[:2], Y[:2], residual_bound=0.5)
    # the third record contributes exactly 0: the sums over records agree (means over 3 and 2)
    np.testing.assert_allclose(3 * gp, 2 * gp_two, atol=1e-12)
    np.testing.assert_allclose(3 * gv, 2 * gv_two, atol=1e-12)
    assert np.all(np.isfinite(gp_two)) and np.linalg.norm(gp_two) > 0


# ------------------------------------------------------------------------------ predict
def test_predict_shapes_and_values():
    space = Sphere(2)
    p, v = np.array([0.0, 0.0, 1.0]), np.array([[0.3, 0.0, 0.0], [0.0, 0.4, 0.0]])
    x = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    y = geodesic_predict(space, p, v, x)
    assert y.shape == (3, 3)
    np.testing.assert_allclose(y[2], space.exp(p, v[0] + v[1]), atol=1e-15)
    np.testing.assert_allclose(geodesic_predict(space, p, v[0], x[:, 0]), space.exp(p, x[:, :1] * v[0]), atol=1e-15)


# ------------------------------------------------------------------------------ bad input
def test_bad_input_raises_typed_errors():
    space = Sphere(2)
    x, Y, p, v = synthetic(space, 12, 2, 0.1, 17)
    with pytest.raises(InvalidDataError, match=r"constant covariate \(column\(s\) \[1\]\)"):
        geodesic_regression(space, np.column_stack([x[:, 0], np.full(12, 0.1)]), Y)
    with pytest.raises(InvalidDataError, match="collinear.*rank 1 < m = 2"):
        geodesic_regression(space, np.column_stack([x[:, 0], 2.0 * x[:, 0] + 1.0]), Y)
    with pytest.raises(InvalidDataError, match="at least m \\+ 1 = 3 records, got n = 2"):
        geodesic_regression(space, x[:2], Y[:2])
    with pytest.raises(InvalidDataError, match="x has 11 rows but Y has 12 records"):
        geodesic_regression(space, x[:11], Y)
    with pytest.raises(InvalidDataError, match=r"shape \(n,\) or \(n, m\)"):
        geodesic_regression(space, x[:, :, None], Y)
    bad = x.copy()
    bad[3, 1] = np.nan
    with pytest.raises(InvalidDataError, match="x holds 1 NaN"):
        geodesic_regression(space, bad, Y)
    with pytest.raises(NotOnManifoldError):
        geodesic_regression(space, x, 2.0 * Y)
    with pytest.raises(InvalidDataError, match=r"Y must have shape \(n, 3\)"):
        geodesic_regression(space, x, Y[0])
    with pytest.raises(InvalidParameterError, match="tol"):
        geodesic_regression(space, x, Y, tol=-1.0)
    with pytest.raises(InvalidParameterError, match="max_iter"):
        geodesic_regression(space, x, Y, max_iter=0)
    with pytest.raises(InvalidTypeError, match="init must be a pair"):
        geodesic_regression(space, x, Y, init=p)
    with pytest.raises(InvalidTypeError, match="geodp Manifold"):
        geodesic_regression("sphere", x, Y)
    with pytest.raises(InvalidDataError, match=r"v must have shape \(2, 3\)"):
        regression_gradient(space, p, v[0], x, Y)
    with pytest.raises(InvalidDataError, match=r"not tangent to Sphere\(2\) at p"):
        regression_gradient(space, p, v + p, x, Y)
    with pytest.raises(InvalidParameterError, match="residual_bound"):
        regression_gradient(space, p, v, x, Y, residual_bound=0.0)
    with pytest.raises(InvalidDataError, match="not tangent .* at Exp"):
        adjoint_exp_derivatives(space, p, v[0], p)
    with pytest.raises(InvalidDataError, match=r"v must have shape \(3,\)"):
        geodesic_predict(space, p, v, x[:, 0])


def test_unsupported_space_is_refused():
    from geodp.manifolds.base import Manifold

    class Other(Manifold):
        point_shape, dim, curvature_bounds, injectivity_radius, is_homogeneous = (2,), 2, (0.0, 0.0), np.inf, True
        _exp = _log = _inner = _transport = _random_tangent = random_point = _belongs = lambda *a, **k: None

        def __repr__(self):
            return "Other()"

    with pytest.raises(InvalidTypeError, match=r"adjoint Jacobi fields.*Other\(\) does not implement them"):
        geodesic_regression(Other(), np.arange(4.0), np.zeros((4, 2)))


def test_well_posed_fit_emits_no_warning():
    x, Y, _, _ = synthetic(KendallShape(4), 20, 1, 0.1, 18)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, _, info = geodesic_regression(KendallShape(4), x[:, 0], Y, return_info=True)
    assert info.converged
