"""MH: the state cache keeps the law, the start is public, the diagnostics are standard estimators
(checked on AR(1) chains against their closed forms) and reach the curator only."""

import warnings

import numpy as np
import pytest
from scipy import stats

import geodp.distributions.kng as kng_module
import geodp.distributions.laplace as laplace_module
from geodp.distributions import KNGDistribution
from geodp.distributions.laplace import RiemannianLaplace
from geodp.distributions.mcmc import batch_means_ess, effective_sample_size, random_walk_metropolis, split_rhat
from geodp.errors import ApproximateSamplerWarning
from geodp.manifolds import SPD
from geodp.manifolds import matrix_functions as mf


def ar1(phi, n, m, seed):
    rng = np.random.default_rng(seed)
    x = np.zeros((n, m))
    x[0] = rng.standard_normal(m) / np.sqrt(1 - phi**2)  # stationary start
    for t in range(1, n):
        x[t] = phi * x[t - 1] + rng.standard_normal(m)
    return x


@pytest.mark.parametrize("phi", [-0.5, 0.5, 0.9])
def test_ess_estimators_match_the_ar1_closed_form(phi):
    n, m = 20000, 4
    x = ar1(phi, n, m, seed=int(10 * (phi + 1)))
    expected = n * m * (1 - phi) / (1 + phi)
    assert effective_sample_size(x) == pytest.approx(expected, rel=0.15)
    assert batch_means_ess(x) == pytest.approx(expected, rel=0.25)


def test_split_rhat_flags_chains_that_disagree_or_drift():
    x = ar1(0.5, 4000, 4, seed=1)
    assert split_rhat(x) < 1.01
    assert split_rhat(x + np.array([0.0, 0.0, 0.0, 3.0])) > 1.2  # one chain elsewhere
    assert split_rhat(x + np.linspace(0, 6, 4000)[:, None]) > 1.2  # every chain drifts (halves differ)
    assert np.isnan(split_rhat(x[:, :1]))


def spd_laplace(footpoint_scale=0.3, seed=1):
    space, c = SPD(3), np.eye(3)
    v = space.random_tangent(c, rng=seed)
    eta = space.exp(c, footpoint_scale * v / space.norm(c, v))
    return space, c, RiemannianLaplace(space, eta, 0.1, center=c, radius=0.5)


def test_factored_log_densities_equal_the_plain_ones_for_any_factor():
    space, c, law = spd_laplace()
    x = space.exp(c, 0.15 * space.random_tangent(c, size=6, rng=2))
    root, inv_root = mf.sqrtm_and_invsqrtm(x)
    q = np.linalg.qr(np.random.default_rng(3).standard_normal((6, 3, 3)))[0]  # L = x^½ Q: another factor
    factor, inv_factor = root @ q, np.swapaxes(q, -1, -2) @ inv_root
    np.testing.assert_allclose(law._factored_log_density(x, factor, inv_factor), law.log_density(x), rtol=1e-10)
    data = space.exp(c, 0.1 * space.random_tangent(c, size=30, rng=4))
    kng = KNGDistribution(space, data, 0.05, center=c, radius=0.5, sampler="mcmc")
    np.testing.assert_allclose(kng._factored_log_density(x, factor, inv_factor), kng.log_density(x), rtol=1e-9)


def test_cached_spd_chain_samples_the_exact_law():
    # Cached MH (one eigh per proposal) against the exact sampler of the same truncated law.
    space, c, law = spd_laplace()
    assert law.exact
    exact = law.sample(400, rng=5)
    result = random_walk_metropolis(
        space,
        law.log_density,
        np.repeat(c[None], 400, axis=0),
        burn_in=300,
        thinning=20,
        step_size=0.1,
        rng=6,
        factored_log_density=law._factored_log_density,
    )
    mh = result.samples[0]
    for d in (lambda x: space._dist(law.footpoint, x), lambda x: np.trace(x, axis1=-2, axis2=-1)):
        assert stats.ks_2samp(d(exact), d(mh)).pvalue > 1e-3
    # x = L Lᵀ stays symmetric positive definite along the chain
    assert np.all(np.linalg.eigvalsh(mh) > 0) and np.allclose(mh, np.swapaxes(mh, -1, -2), atol=0)
    assert 0.1 < result.diagnostics.acceptance_rate < 0.6
    # 400 chains of 20 steps: split-R̂ rightly says the halves are too short to agree
    assert result.diagnostics.max_rhat > 1.1
    diag = random_walk_metropolis(
        space,
        law.log_density,
        np.repeat(c[None], 4, axis=0),
        burn_in=300,
        thinning=2000,
        step_size=0.1,
        rng=7,
        factored_log_density=law._factored_log_density,
    ).diagnostics
    assert diag.max_rhat < 1.05 and diag.min_ess > 200 and diag.record_stride == 2
    assert diag.functional_names == ("distance to the start", "fixed projection")


def test_mh_starts_at_the_public_center_and_keeps_diagnostics_for_the_curator(monkeypatch):
    starts = []
    original = laplace_module.random_walk_metropolis

    def spy(space, log_density, initial, *args, **kwargs):
        starts.append(np.array(initial))
        return original(space, log_density, initial, *args, **kwargs)

    monkeypatch.setattr(laplace_module, "random_walk_metropolis", spy)
    texts = []
    for footpoint_scale in (0.1, 0.45):  # two private footpoints
        space, c, law = spd_laplace(footpoint_scale)
        law._method, law.exact = "mcmc", False  # force MH on this small law
        law.approximation_notice = "MH"
        law.burn_in, law.thinning = 100, 10
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            law.sample(3, rng=0)
        texts.append([str(w.message) for w in caught if issubclass(w.category, ApproximateSamplerWarning)])
        assert law.diagnostics.n_chains == 3 and len(law.diagnostics.functional_ess) == 2
    assert texts[0] == texts[1]  # nothing observable carries the chain's diagnostics
    for s in starts:
        np.testing.assert_array_equal(s, np.repeat(np.eye(3)[None], 3, axis=0))


def test_kng_mh_uses_the_factored_density_and_starts_at_the_center(monkeypatch):
    space, c = SPD(3), np.eye(3)
    data = space.exp(c, 0.1 * space.random_tangent(c, size=20, rng=4))
    law = KNGDistribution(space, data, 0.05, center=c, radius=0.5, sampler="mcmc", burn_in=50, thinning=5)
    seen = {}
    original = kng_module.random_walk_metropolis

    def spy(space, log_density, initial, *args, **kwargs):
        seen.update(initial=np.array(initial), factored=kwargs.get("factored_log_density"))
        return original(space, log_density, initial, *args, **kwargs)

    monkeypatch.setattr(kng_module, "random_walk_metropolis", spy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ApproximateSamplerWarning)
        law.sample(2, rng=1)
    np.testing.assert_array_equal(seen["initial"], np.repeat(c[None], 2, axis=0))
    assert seen["factored"] is not None and law.diagnostics.n_chains == 2
