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
