"""SPD(k) under the log-Cholesky metric (Lin 2019), checked against formulas written here from the
paper with numpy's own Cholesky factorisation (the space computes its factor another way)."""

import numpy as np
import pytest
from scipy import optimize, stats

from geodp.frechet import frechet_mean
from geodp.manifolds import SPD, LogCholeskySPD
from geodp.models import PrivateFrechetMean
from manifold_contract import ManifoldContract


class TestLogCholeskySPD(ManifoldContract):
    space = SPD(4, metric="log-cholesky")
    tangent_scale = 2.0

    def off_manifold_point(self):
        return np.diag([1.0, 1.0, 1.0, -1e-3])


def _lin_distance(p, q):
    """Lin 2019, Thm 2/Prop. 8: ‖⌊L⌋ − ⌊K⌋‖² + ‖log D(L) − log D(K)‖², with numpy's Cholesky."""
    a, b = np.linalg.cholesky(p), np.linalg.cholesky(q)
    lower = np.tril(a, -1) - np.tril(b, -1)
    diag = np.log(np.diagonal(a, axis1=-2, axis2=-1)) - np.log(np.diagonal(b, axis1=-2, axis2=-1))
    return np.sqrt(np.sum(lower**2, axis=(-2, -1)) + np.sum(diag**2, axis=-1))


def _lin_exp(p, x):
    """Lin 2019, Prop. 8: Exp_P X = L̃ L̃ᵀ, L̃ = ⌊L⌋ + ⌊W⌋ + D(L) exp(D(W) D(L)⁻¹), W = L(L⁻¹XL⁻ᵀ)_½."""
    chol = np.linalg.cholesky(p)
    inv = np.linalg.inv(chol)
    s = inv @ x @ inv.T
    w = chol @ (np.tril(s, -1) + 0.5 * np.diag(np.diag(s)))
    d = np.diag(chol)
    new = np.tril(chol, -1) + np.tril(w, -1) + np.diag(d * np.exp(np.diag(w) / d))
    return new @ new.T


def test_the_metric_is_registered_and_spelled_in_the_space_repr():
    space = SPD(3, metric="log-cholesky")
    assert isinstance(space, LogCholeskySPD) and isinstance(space, SPD)
    assert repr(space) == "SPD(3, metric='log-cholesky')" and space.is_flat and space.dim == 6


def test_distance_and_exp_match_lin_2019():
    rng = np.random.default_rng(3)
    space = SPD(4, metric="log-cholesky")
    p, q = space.random_point(20, rng=rng), 3.0 * space.random_point(20, rng=rng)
    np.testing.assert_allclose(space.dist(p, q), _lin_distance(p, q), rtol=1e-12)
    x = space.random_tangent(p[0], rng=rng)
    np.testing.assert_allclose(space.exp(p[0], x), _lin_exp(p[0], x), rtol=1e-11)


def test_inner_product_is_the_pullback_of_the_distance():
    """⟨X, X⟩_P = lim d(P, Exp-free straight step P + hX)²/h² (the metric is the distance's Hessian)."""
    rng = np.random.default_rng(4)
    space = SPD(3, metric="log-cholesky")
    p = space.random_point(rng=rng)
    x = space.random_tangent(p, rng=rng)
    h = 1e-6
    assert _lin_distance(p, p + h * x) / h == pytest.approx(float(space.norm(p, x)), rel=1e-5)


def test_closed_form_mean_minimises_the_sum_of_squared_lin_distances():
    rng = np.random.default_rng(5)
    space = SPD(3, metric="log-cholesky")
    X = space.random_point(15, rng=rng)
    m = frechet_mean(space, X)
    rows, cols = np.tril_indices(3)

    def objective(theta):
        chol = np.zeros((3, 3))
        chol[rows, cols] = theta
        chol[np.diag_indices(3)] = np.exp(chol[np.diag_indices(3)])
        return np.sum(_lin_distance(chol @ chol.T, X) ** 2)

    best = optimize.minimize(objective, np.zeros(6), method="BFGS", options={"gtol": 1e-10})
    chol = np.zeros((3, 3))
    chol[rows, cols] = best.x
    chol[np.diag_indices(3)] = np.exp(chol[np.diag_indices(3)])
    np.testing.assert_allclose(m, chol @ chol.T, rtol=1e-6)
    assert objective(best.x) <= np.sum(_lin_distance(m, X) ** 2) + 1e-9


def test_private_mean_releases_laplace_noise_of_the_stated_scale_in_the_chart():
    """The release minus the mean, in the chart, has norm ~ Gamma(d, σ): a 1.5× scale fails."""
    rng = np.random.default_rng(6)
    space = SPD(3, metric="log-cholesky")
    X = space.random_point(40, rng=rng)
    model = PrivateFrechetMean(space, epsilon=1.0, center=np.eye(3), radius=4.0, random_state=0)
    model.fit(X)
    sigma = model.privacy_report_.to_dict()["scale"]
    assert "log-cholesky" in model.privacy_report_
    assert sigma == pytest.approx(2 * 4.0 / 40 / 1.0)  # Δ = 2r/n on a flat space, σ = Δ/ε
    footpoint = X[0]
    draws = model.mechanism_.randomise(footpoint, rng=np.random.default_rng(7), size=4000)
    norms = space.dist(draws, footpoint)
    assert stats.kstest(norms, stats.gamma(a=space.dim, scale=sigma).cdf).pvalue > 1e-3
    assert stats.kstest(norms, stats.gamma(a=space.dim, scale=1.5 * sigma).cdf).pvalue < 1e-6


def test_the_command_line_names_the_metric():
    from geodp.cli.specs import parse_space, space_spec

    assert parse_space("spd:3:log-cholesky") == SPD(3, metric="log-cholesky")
    assert space_spec(SPD(3, metric="log-cholesky")) == "spd:3:log-cholesky"


def test_records_far_from_the_identity_keep_their_chart_coordinates():
    """Per-record coordinates (one eigh and one QR) agree with numpy's Cholesky on matrices spread
    over 20 orders of magnitude, and a record's coordinates do not depend on the other records."""
    rng = np.random.default_rng(8)
    space = SPD(3, metric="log-cholesky")
    X = space.random_point(30, rng=rng) * np.logspace(-10, 10, 30)[:, None, None]
    coords, invalid = space._record_coordinates(X)
    assert not invalid.any()
    chol = np.linalg.cholesky(X)
    rows, cols = np.tril_indices(3)
    expected = np.tril(chol, -1) + np.log(np.diagonal(chol, axis1=-2, axis2=-1))[..., None] * np.eye(3)
    np.testing.assert_allclose(coords, expected[:, rows, cols], atol=1e-12 * np.abs(expected).max())
    alone, _ = space._record_coordinates(X[7:8])
    np.testing.assert_array_equal(alone[0], coords[7])
