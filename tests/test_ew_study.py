"""The EW study's matching of pure ε-DP releases to μ-GDP."""

import numpy as np
import pytest
from scipy.stats import norm

from geodp.experiments.ew_study import epsilon_for_mu


@pytest.mark.parametrize("mu", [0.1, 0.5, 1.0, 2.0])
def test_epsilon_for_mu_is_the_largest_epsilon_whose_dp_implies_mu_gdp(mu):
    """ε-DP's trade-off curve f_ε(α) = max(0, 1 − e^ε α, e^−ε (1 − α)) must lie above the
    Gaussian one G_μ(α) = Φ(Φ⁻¹(1 − α) − μ) everywhere, touching it at the kink."""
    alpha = np.linspace(1e-9, 1 - 1e-9, 200_001)
    gaussian = norm.cdf(norm.ppf(1 - alpha) - mu)

    def dp_curve(epsilon):
        return np.maximum.reduce([np.zeros_like(alpha), 1 - np.exp(epsilon) * alpha, np.exp(-epsilon) * (1 - alpha)])

    epsilon = epsilon_for_mu(mu)
    assert np.all(dp_curve(epsilon) >= gaussian - 1e-12)
    assert np.any(dp_curve(1.01 * epsilon) < gaussian - 1e-9)  # a larger ε would not be μ-GDP


@pytest.mark.parametrize("mu", [0.1, 1.0, 2.0])
def test_epsilon_at_delta_solves_the_gdp_profile(mu):
    """Independent closed form of the μ-GDP profile (Dong, Roth & Su, Cor. 2.13): δ(ε) at the
    returned ε is the target; a 1.5× larger or smaller μ misses it."""
    from geodp.experiments.ew_study import epsilon_at_delta

    def profile(epsilon, m):
        return norm.cdf(-epsilon / m + m / 2) - np.exp(epsilon) * norm.cdf(-epsilon / m - m / 2)

    epsilon = epsilon_at_delta(mu, 1e-5)
    assert profile(epsilon, mu) == pytest.approx(1e-5, rel=1e-6)
    assert profile(epsilon, 1.5 * mu) > 2e-5 and profile(epsilon, mu / 1.5) < 0.5e-5


def test_riemannian_gaussian_cells_use_sigma_delta_over_mu_on_flat_spaces():
    """On LE- and LC-SPD the Riemannian Gaussian is the Gaussian in a chart: calibrated at one
    point of the μ-GDP profile it must have exactly σ = Δ/μ (a miscalibrated σ fails)."""
    from geodp.experiments.ew_study import _release_laws
    from geodp.manifolds import SPD

    for metric in ("log-euclidean", "log-cholesky"):
        space = SPD(3, metric=metric)
        for mu in (0.3, 1.0):
            _, _, sigma, status = _release_laws("riemannian-gaussian", space, space.reference_point(), mu, 0.075)
            assert status == "exact" and sigma == pytest.approx(0.075 / mu, rel=1e-4)


def test_riemannian_gaussian_cell_is_empty_when_no_sigma_meets_the_target():
    from geodp.experiments.ew_study import NO_SIGMA, _release_laws
    from geodp.manifolds import SPD

    law_of, _, sigma, status = _release_laws("riemannian-gaussian", SPD(10), np.eye(10), 0.1, 0.075)
    assert (law_of, status) == (None, NO_SIGMA) and np.isnan(sigma)


def test_a_cell_with_a_release_beyond_float64_gets_no_mean():
    """Leaving out only the invalid (farthest) releases would bias the mean down: no mean at all."""
    from geodp.experiments.ew_study import BEYOND_FLOAT64, _row
    from geodp.manifolds import SPD

    row = _row("spd-affine", 3, SPD(3), "wrapped-laplace", 0.1, 0.04, 1.0, BEYOND_FLOAT64, [1.0, np.nan, 3.0], 0.3)
    assert row["not_finite"] == 1 and np.isnan(row["error"]) and np.isnan(row["error_se"]) and row["exact"]
    ok = _row("spd-affine", 3, SPD(3), "wrapped-laplace", 0.1, 0.04, 1.0, "exact", [1.0, 3.0], 0.2)
    assert ok["error"] == 2.0 and ok["ms_per_release"] == pytest.approx(100.0)
