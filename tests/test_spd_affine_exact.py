"""The exact affine-invariant SPD Laplace sampler (Gaussian-gap envelope, docs/math.md §5).

Oracles: for k = 2 the law of |r| is ∝ ρ e^(−ρ/σ) L_0(ρ/√2) (L_0 the modified Struve function,
from ∫_0^{π/2} sinh(x cos θ) dθ = π L_0(x)/2), integrated with scipy; the projection is checked
against an independent exact k = 2 sampler (inverse CDF of that radial law, angle by rejection);
larger k against long MH chains; the envelope's inequalities against mpmath.
"""

import math

import mpmath
import numpy as np
import pytest
from scipy import integrate, special, stats

from geodp.distributions.laplace import ACCEPTANCE_FLOOR, RiemannianLaplace
from geodp.distributions.spd_affine import (
    SPDEigenvalueLaw,
    _direction_quartic,
    angular_log_bound,
    log_sinhc,
    spd_laplace_scale_limit,
)
from geodp.manifolds import SPD

#: Documented range (docs/math.md §5): untruncated, the exact sampler is chosen for
#: σ ≤ 0.55·σ_max(k) up to k = 48; truncated to a ball of radius ≤ 3 (t_max ≤ 6), for every σ.
EXACT_SHARE_OF_SIGMA_MAX = 0.55


def k2_radial_log_density(rho, scale):
    return np.log(rho) - rho / scale + np.log(special.modstruve(0, rho / math.sqrt(2.0)))


def k2_radial_cdf(scale, t_max):
    upper = min(t_max, 80 * scale)
    grid = np.linspace(0.0, upper, 4001)
    dens = np.exp(np.where(grid > 0, k2_radial_log_density(np.maximum(grid, 1e-300), scale), -np.inf))
    cum = integrate.cumulative_simpson(dens, x=grid, initial=0.0)
    return grid, cum / cum[-1]


def k2_reference(n, scale, t_max, rng):
    """Independent exact k = 2 draws of r: |r| by inverse CDF, the angle φ of r by rejection from
    the uniform law with acceptance sinh(ρ|cos φ − sin φ|/2)/sinh(ρ/√2)."""
    grid, cdf = k2_radial_cdf(scale, t_max)
    rho = np.interp(rng.random(n), cdf, grid)
    phi = np.empty(n)
    todo = np.arange(n)
    while todo.size:
        cand = rng.uniform(0, 2 * np.pi, todo.size)
        gap = rho[todo] * np.abs(np.cos(cand) - np.sin(cand))
        ok = np.log(rng.random(todo.size)) < (log_sinh(gap / 2) - log_sinh(rho[todo] / math.sqrt(2.0)))
        phi[todo[ok]] = cand[ok]
        todo = todo[~ok]
    return rho[:, None] * np.stack([np.cos(phi), np.sin(phi)], axis=1)


def log_sinh(x):
    return x + np.log(-np.expm1(-2 * x)) - math.log(2.0)


def eigen_draws(k, scale, n, seed, t_max=math.inf):
    S = SPDEigenvalueLaw(k, scale, t_max).sample_symmetric(n, rng=seed)
    return np.linalg.eigvalsh(S)


@pytest.mark.parametrize("scale, t_max", [(0.5, math.inf), (1.0, 3.0)], ids=["untruncated", "truncated"])
def test_k2_norm_and_projection_match_independent_references_and_catch_a_scale_mutant(scale, t_max):
    n = 20_000
    r = eigen_draws(2, scale, n, seed=1, t_max=t_max)
    grid, cdf = k2_radial_cdf(scale, t_max)
    norm_cdf = lambda x: np.interp(x, grid, cdf)  # noqa: E731
    assert stats.kstest(np.linalg.norm(r, axis=1), norm_cdf).pvalue > 1e-3
    # projection: the larger log-eigenvalue (eigvalsh sorts), against the independent sampler
    reference = np.sort(k2_reference(n, scale, t_max, np.random.default_rng(2)), axis=1)
    assert stats.ks_2samp(r[:, 1], reference[:, 1]).pvalue > 1e-3
    wrong = eigen_draws(2, 1.5 * scale, n, seed=3, t_max=t_max)
    assert stats.kstest(np.linalg.norm(wrong, axis=1), norm_cdf).pvalue < 1e-6
    assert stats.ks_2samp(wrong[:, 1], reference[:, 1]).pvalue < 1e-6


# (k, σ, mutant factor, draws, MH burn-in): k = 16 at 0.58 σ_max ran MH before the pairwise-Jensen
# bound; its ×1.5 mutant would leave σ_max's exact range, so it is scaled the other way, and its
# chains (started at r ≈ 0, |r| ≈ 5.3 in the law) need a longer burn-in (1,200 steps left them at 5.1)
@pytest.mark.parametrize(
    "k, scale, mutant, n, burn_in",
    [(5, 0.1, 1.5, 3000, 1200), (10, 0.04, 1.5, 3000, 1200), (16, 0.0314, 1 / 1.5, 1500, 6000)],
)
def test_exact_draws_match_long_mh_and_catch_a_scale_mutant(k, scale, mutant, n, burn_in):
    law = SPDEigenvalueLaw(k, scale)
    assert law.acceptance_rate > 0.3
    r = np.linalg.eigvalsh(law.sample_symmetric(n, rng=4))
    S, result = law.sample_symmetric_mcmc(n, rng=5, burn_in=burn_in, thinning=2)
    mh = np.linalg.eigvalsh(S)
    assert 0.1 < result.diagnostics.acceptance_rate < 0.8
    wrong = np.linalg.eigvalsh(SPDEigenvalueLaw(k, mutant * scale).sample_symmetric(n, rng=6))
    for stat in (lambda x: np.linalg.norm(x, axis=1), lambda x: x[:, -1] - x[:, 0]):  # |r| and the spread
        assert stats.ks_2samp(stat(r), stat(mh)).pvalue > 1e-3
        assert stats.ks_2samp(stat(wrong), stat(mh)).pvalue < 1e-6


def test_k3_norm_near_the_limit_matches_quadrature_over_directions():
    # k = 3 at 0.69 σ_max (MH before): the density of |r| is ∝ ρ² e^(−ρ/σ) E_u Π sinh(ρ|u_i − u_j|/2)
    # over uniform unit u ∈ R³, the expectation by 200,000 fixed-seed directions on a ρ grid
    k, scale = 3, 0.49
    rng = np.random.default_rng(0)
    u = rng.standard_normal((200_000, k))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    a = np.abs(u[:, [0, 0, 1]] - u[:, [1, 2, 2]]) / 2.0
    grid = np.linspace(1e-6, 60.0, 1500)
    log_density = np.empty_like(grid)
    for n, rho in enumerate(grid):
        terms = np.sum(np.log(np.sinh(rho * a) + 1e-300), axis=1)
        top = terms.max()
        log_density[n] = 2 * math.log(rho) - rho / scale + top + math.log(np.mean(np.exp(terms - top)))
    cdf = np.cumsum(np.exp(log_density - log_density.max()))
    cdf /= cdf[-1]
    reference = lambda x: np.interp(x, grid, cdf)  # noqa: E731
    for factor, expect_match in ((1.0, True), (1 / 1.5, False)):
        law = SPDEigenvalueLaw(k, factor * scale)
        assert law.acceptance_rate > 0.3
        rho = np.linalg.norm(np.linalg.eigvalsh(law.sample_symmetric(20_000, rng=4)), axis=1)
        p = stats.kstest(rho, reference).pvalue
        assert p > 1e-3 if expect_match else p < 1e-6


def test_envelope_inequalities_against_mpmath():
    # y²/6 − y⁴/180 ≤ log(sinh y / y) ≤ min(y²/6, y) (docs/math.md §5)
    for y in [1e-6, 1e-3, 0.1, 0.5, 1.0, 2.0, 3.5, 10.0, 50.0, 700.0]:
        with mpmath.workdps(60):
            exact = float(mpmath.log(mpmath.sinh(y) / y))
        assert log_sinhc(np.array(y)) == pytest.approx(exact, rel=1e-12, abs=1e-300)
        assert y**2 / 6 - y**4 / 180 <= exact * (1 + 1e-12) and exact <= min(y**2 / 6, y)


def pair_log_sinhc_sum(r):
    """Σ_{i<j} log(sinh y / y), y = |r_i − r_j|/2, straight from numpy (independent of log_sinhc):
    the Taylor series y²/6 − y⁴/180 + y⁶/2835 below 0.01 (next term < 1e-15 relative), where the
    ratio's logarithm would round."""
    i, j = np.triu_indices(r.shape[-1], 1)
    y = np.abs(r[..., i] - r[..., j]) / 2.0
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.log(np.sinh(np.minimum(y, 700.0)) / np.maximum(y, 1e-300))
    value = np.where(y > 700.0, y - np.log(2 * np.maximum(y, 1.0)), value)
    return np.sum(np.where(y < 0.01, y**2 / 6 - y**4 / 180 + y**6 / 2835, value), axis=-1)


@pytest.mark.parametrize("k", [2, 3, 4, 7, 16, 48])
def test_angular_log_bound_holds_on_adversarial_configurations(k):
    # Σ f(y_ij) ≤ q(|r|) for every r (docs/math.md §5): two clusters (where Σ f is largest at
    # moderate |r|), equal spacing (largest at large |r|), one outlier, a trace shift, random
    # directions, and a local search for the worst direction at each |r|.
    rng = np.random.default_rng(3)
    half = np.r_[np.ones(k // 2), -np.ones(k - k // 2)]
    configs = [half - half.mean(), np.arange(k) - (k - 1) / 2.0, np.eye(k)[0] - 1.0 / k, np.eye(k)[0]]
    configs += list(rng.standard_normal((20, k)))
    for rho in [1e-3, 0.1, 1.0, 5.0, 20.0, 200.0]:
        q = float(angular_log_bound(k, np.array(rho)))
        assert q <= min(k * rho**2 / 24.0, 0.5 * math.sqrt(k * (k * k - 1) / 3.0) * rho) * (1 + 1e-12)
        for u in configs:
            assert pair_log_sinhc_sum(rho * u / np.linalg.norm(u)) <= q * (1 + 1e-9), (rho, u)
        worst = configs[0] / np.linalg.norm(configs[0])
        for _ in range(300):  # hill climbing on the sphere |r| = ρ
            step = worst + 0.05 * rng.standard_normal(k)
            step /= np.linalg.norm(step)
            if pair_log_sinhc_sum(rho * step) > pair_log_sinhc_sum(rho * worst):
                worst = step
        assert pair_log_sinhc_sum(rho * worst) <= q * (1 + 1e-9)
    # k = 2: one pair, and the bound is attained at r = (ρ, −ρ)/√2
    y = 3.0 / math.sqrt(2.0)
    assert float(angular_log_bound(2, np.array(3.0))) == pytest.approx(math.log(math.sinh(y) / y))


def test_direction_quartic_against_monte_carlo():
    # E Σ_{i<j} (u_i − u_j)⁴ for a uniform unit direction of Sym(k), by plain Monte Carlo
    rng = np.random.default_rng(7)
    for k in (2, 5, 12):
        G = rng.standard_normal((20_000, k, k))
        G = (G + np.swapaxes(G, 1, 2)) / 2.0  # GOE: diagonal variance 1, off-diagonal 1/2
        u = np.linalg.eigvalsh(G / np.linalg.norm(G, axis=(1, 2))[:, None, None])
        i, j = np.triu_indices(k, 1)
        quartic = np.sum((u[:, i] - u[:, j]) ** 4, axis=1)
        assert np.mean(quartic) == pytest.approx(
            _direction_quartic(k), rel=5 * np.std(quartic) / math.sqrt(len(quartic)) / np.mean(quartic)
        )


SWEEP = [
    (2, 0.5, math.inf),
    (5, 0.15, math.inf),
    (10, 0.02, math.inf),
    (16, 0.02, math.inf),
    (16, 0.002, math.inf),
    (24, 0.01, math.inf),
    (32, 0.002, math.inf),
    (32, 0.01, math.inf),
    (48, 0.004, math.inf),
    (128, 0.0007, math.inf),
    (8, 5.0, 4.0),
    (32, 100.0, 6.0),
]


@pytest.mark.parametrize("k, scale, t_max", SWEEP)
def test_proven_bound_is_below_the_observed_acceptance(k, scale, t_max):
    law = SPDEigenvalueLaw(k, scale, t_max)
    _, log_acc = law._propose(4000, np.random.default_rng(8))
    acc = np.exp(log_acc)
    assert np.all(log_acc <= 0.0)
    assert law.acceptance_rate <= np.mean(acc) + 4 * np.std(acc) / math.sqrt(len(acc))
    assert law.acceptance_rate >= 0.05  # and it is useful on the whole sweep


def test_hat_dominates_the_radial_envelope():
    for k, scale, t_max in SWEEP:
        law = SPDEigenvalueLaw(k, scale, t_max)
        rho, log_hat = law._hat.propose(20_000, np.random.default_rng(9))
        assert np.all(law._psi(rho) - law._shift - log_hat <= 1e-9 * (1 + np.abs(log_hat)))
        assert np.all((rho > 0) & (rho <= t_max))


def test_spd48_default_release_scale_is_exact_with_an_honest_bound():
    # PrivateFrechetMean(SPD(48), epsilon=1, center=I, radius=3) on n = 1000 records: Δ = 2r/n,
    # σ = Δ/ε = 0.006 = 0.58 σ_max(48), untruncated. MH before the pairwise-Jensen bound
    # (proven 2.5e-5, observed 1e-4); the bound now clears the floor and stays below the
    # observed acceptance.
    law = SPDEigenvalueLaw(48, 0.006)
    assert law.acceptance_rate >= ACCEPTANCE_FLOOR
    _, log_acc = law._propose(8000, np.random.default_rng(12))
    acc = np.exp(log_acc)
    assert law.acceptance_rate <= np.mean(acc) + 4 * np.std(acc) / math.sqrt(len(acc))
    assert RiemannianLaplace(SPD(48), np.eye(48), 0.006).exact


@pytest.mark.parametrize("k", [2, 3, 8, 16, 24, 32, 48])
def test_exact_sampler_is_chosen_in_the_documented_range(k):
    top = EXACT_SHARE_OF_SIGMA_MAX * spd_laplace_scale_limit(k)
    eye = np.eye(k)
    for scale in np.geomspace(1e-4, top, 5):
        law = RiemannianLaplace(SPD(k), eye, scale)
        assert law.exact and "proven" in law.sampler, (k, scale)
    for scale in (1e-3, 0.1, 10.0, 1e4):  # truncated to a ball of radius 3: every scale
        assert SPDEigenvalueLaw(k, scale, 6.0).acceptance_rate >= ACCEPTANCE_FLOOR, (k, scale)


@pytest.mark.parametrize(
    "k, scale, t_max",
    [
        (32, 1e-9, math.inf),
        (32, 0.011, math.inf),
        (32, 1e8, 6.0),
        (32, 1e8, 60.0),
        (2, 1e-9, 1e-6),
        (16, 0.05, math.inf),
    ],
)
def test_extremes_are_finite_and_raise_no_overflow_or_invalid_value(k, scale, t_max):
    with np.errstate(over="raise", divide="raise", invalid="raise"):  # underflow to 0 is harmless
        law = SPDEigenvalueLaw(k, scale, t_max)
        assert 0.0 <= law.acceptance_rate <= 1.0
        S, log_acc = law._propose(200, np.random.default_rng(10))
    assert np.all(np.isfinite(S)) and not np.any(np.isnan(log_acc))
    if law.acceptance_rate >= ACCEPTANCE_FLOOR:
        r = np.linalg.eigvalsh(law.sample_symmetric(20, rng=11))
        assert np.all(np.isfinite(r)) and np.all(np.linalg.norm(r, axis=1) <= t_max * (1 + 1e-12))


def test_not_normalisable_untruncated_law_is_refused_with_a_fix():
    with pytest.raises(Exception, match="Truncate it to a ball or use a smaller scale"):
        SPDEigenvalueLaw(16, 0.06)


@pytest.mark.parametrize("k, scale, radius", [(3, 0.1, 0.5), (5, 0.05, 1.0), (16, 0.002, 1.0)])
def test_ball_bound_is_below_the_observed_in_ball_share_at_adversarial_footpoints(k, scale, radius):
    # Footpoints at the centre and on the boundary, in a generic, a rank-one and the trace
    # direction (where the law's direction is least uniform); the bound is public: (k, σ, r).
    from geodp.distributions.laplace import _eigenvalue_law
    from geodp.distributions.spd_affine import spd_ball_acceptance_bound
    from geodp.manifolds import matrix_functions as mf

    bound = spd_ball_acceptance_bound(k, scale, radius)
    assert bound > 0.02
    space, law = SPD(k), _eigenvalue_law(k, scale, 2 * radius)
    g = np.random.default_rng(1).standard_normal((k, k))
    directions = [g + g.T, np.diag(np.eye(k)[0]), np.eye(k), -np.eye(k)]
    S = law.sample_symmetric(3000, rng=2)
    for frac, direction in [(0.0, directions[0])] + [(1.0, w) for w in directions]:
        eta = mf.expm(frac * radius * direction / np.linalg.norm(direction))
        X = mf.congruence(mf.sqrtm_and_invsqrtm(eta)[0], mf.expm(S))
        observed = np.mean(space._dist(np.eye(k), X) <= radius)
        # 3000 draws: 4 binomial standard deviations of slack for the observed share
        assert bound <= observed + 4 * np.sqrt(observed * (1 - observed) / 3000), (frac, observed)


def test_truncated_spd_decision_uses_the_proven_ball_bound():
    from geodp.distributions.spd_affine import spd_ball_acceptance_bound

    space, c = SPD(3), np.eye(3)
    law = RiemannianLaplace(space, c, 0.1, center=c, radius=0.5)
    assert law.exact and law._ball_bound == spd_ball_acceptance_bound(3, 0.1, 0.5)
    assert "every footpoint" in law.sampler
    # k = 10, σ = 0.01, r = 0.5: bound 5e-5 < 1e-3 (observed 2.5e-4 on the boundary) → MH,
    # whatever the footpoint; the old centre pilot (0.25) chose rejection
    far = space.exp(c, 0.5 * np.diag([1.0, 0.0, 0.0]))
    assert spd_ball_acceptance_bound(10, 0.01, 0.5) < 1e-3
    big = RiemannianLaplace(SPD(10), np.eye(10), 0.01, center=np.eye(10), radius=0.5)
    assert not big.exact and "every footpoint" in big.sampler
    boundary = RiemannianLaplace(space, far, 0.1, center=c, radius=0.5)
    assert boundary.sampler == law.sampler
    x = boundary.sample(500, rng=3)  # the loop's budget is the bound: it must not raise
    assert np.all(space._dist(c, x) <= 0.5 + 1e-12)
