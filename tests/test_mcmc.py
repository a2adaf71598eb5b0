import numpy as np
import pytest
from scipy import stats

from geodp.distributions.mcmc import effective_sample_size, random_walk_metropolis
from geodp.errors import InvalidParameterError
from geodp.manifolds import Euclidean


def test_ess_of_an_ar1_chain_matches_its_closed_form():
    # AR(1) with coefficient φ: integrated autocorrelation time (1 + φ)/(1 − φ).
    phi, n, m = 0.8, 20000, 4
    rng = np.random.default_rng(0)
    x = np.zeros((n, m))
    for t in range(1, n):
        x[t] = phi * x[t - 1] + rng.standard_normal(m)
    expected = n * m * (1 - phi) / (1 + phi)
    assert abs(effective_sample_size(x) / expected - 1) < 0.15


def test_mh_targets_the_gaussian_and_adapts_only_during_burn_in():
    space = Euclidean(2)
    result = random_walk_metropolis(
        space,
        lambda x: -0.5 * np.sum(x**2, axis=-1),
        np.zeros((2000, 2)),
        n_samples=1,
        burn_in=300,
        thinning=1,
        step_size=0.1,
        rng=1,
    )
    assert result.diagnostics.step_size > 0.5  # adapted up from 0.1 toward 30% acceptance
    assert stats.kstest(result.samples[0, :, 0], "norm").pvalue > 1e-3
    frozen = random_walk_metropolis(
        space,
        lambda x: -0.5 * np.sum(x**2, axis=-1),
        np.zeros((10, 2)),
        n_samples=20,
        burn_in=0,
        thinning=5,
        step_size=0.1,
        rng=2,
    )
    assert frozen.diagnostics.step_size == pytest.approx(0.1, rel=1e-12) and frozen.diagnostics.n_steps == 100


def test_mh_refuses_bad_settings_and_starts_outside_the_support():
    space = Euclidean(1)
    with pytest.raises(InvalidParameterError, match="thinning"):
        random_walk_metropolis(space, lambda x: -(x[..., 0] ** 2), np.zeros((1, 1)), thinning=0)
    with pytest.raises(InvalidParameterError, match="support"):
        random_walk_metropolis(
            space, lambda x: -(x[..., 0] ** 2), np.ones((1, 1)), in_support=lambda x: x[..., 0] < 0.5
        )
