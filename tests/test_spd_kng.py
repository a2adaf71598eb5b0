"""Exact KNG on affine-invariant SPD (docs/math.md §5, "KNG on affine-invariant SPD"): the
truncated l2-Laplace against brute-force rejection, the released law on SPD(2) against 3-D
quadrature with a volume computed from the metric by finite differences (×1.5 mutants caught),
the inequalities the construction rests on against adversarial points, and the public route."""

import mpmath
import numpy as np
import pytest
from scipy import special, stats

from geodp.distributions import KNGDistribution
from geodp.distributions import kng as kng_module
from geodp.distributions.kng import kng_route
from geodp.distributions.laplace import l2_laplace_noise
from geodp.distributions.spd_kng import BallLaplace, SPDTangentKNGProposal, log_gammainc
from geodp.manifolds import SPD
from geodp.manifolds import matrix_functions as mf
from geodp.models import PrivateFrechetMean
from geodp.sensitivity import frechet_mean_sensitivity

MUTANT_P = 1e-6


def brute_ball_laplace(d, radius, centre, rate, n, rng):
    """Rejection from the untruncated l2-Laplace into the ball (independent of BallLaplace)."""
    out, got = [], 0
    while got < n:
        z = centre + l2_laplace_noise(d, 1.0 / rate, size=(200_000,), rng=rng)
        z = z[np.linalg.norm(z, axis=1) <= radius]
        out.append(z)
        got += len(z)
    return np.concatenate(out)[:n]


@pytest.mark.parametrize(
    ("d", "radius", "s", "rate"),
    [(5, 1.0, 0.9, 10.0), (6, 1.0, 1.0, 4.0), (4, 2.0, 0.0, 1.0), (10, 1.0, 0.5, 25.0)],
)
def test_ball_laplace_matches_rejection_and_catches_a_mutant(d, radius, s, rate):
    rng = np.random.default_rng(7)
    centre = np.zeros(d)
    centre[1] = s
    exact = BallLaplace(d, radius, centre, rate).sample(6000, rng)
    reference = brute_ball_laplace(d, radius, centre, rate, 6000, rng)
    mutant = BallLaplace(d, radius, centre, rate / 1.5).sample(6000, rng)
    assert np.all(np.linalg.norm(exact, axis=1) <= radius * (1 + 1e-12))
    for stat in (lambda v: np.linalg.norm(v, axis=1), lambda v: v[:, 1], lambda v: np.linalg.norm(v - centre, axis=1)):
        assert stats.ks_2samp(stat(exact), stat(reference)).pvalue > 1e-3
    distance = np.linalg.norm(reference - centre, axis=1)
    assert stats.ks_2samp(np.linalg.norm(mutant - centre, axis=1), distance).pvalue < MUTANT_P


def test_ball_laplace_radius_tail_where_the_incomplete_gamma_underflows():
    """λT ≪ d (P(d, λT) ~ 1e-375): the tangent-hat branch against an independent sampler of
    τ = t/T ∝ τ^{d−1} e^{−λTτ} (Beta(d, 1) proposals kept with probability e^{−λTτ})."""
    d, x = 200, 1.0
    law = BallLaplace(d, 1.0, np.zeros(d), x)  # T = 1 for every direction
    assert special.gammainc(d, x) == 0.0
    rng = np.random.default_rng(3)
    tau = law._radii(np.ones(20_000), rng)
    u = rng.random(200_000) ** (1.0 / d)
    reference = u[rng.random(len(u)) < np.exp(-x * u)][:20_000]
    assert stats.ks_2samp(tau, reference).pvalue > 1e-3
    mutant = law._radii(np.full(20_000, 1.0), rng) ** 1.5
    assert stats.ks_2samp(mutant, reference).pvalue < MUTANT_P


@pytest.mark.parametrize(("d", "x"), [(36, 20.0), (36, 0.5), (528, 1.0), (528, 300.0), (3, 1e-3)])
def test_log_gammainc_against_mpmath(d, x):
    expected = float(mpmath.log(mpmath.gammainc(d, 0, x, regularized=True)))
    assert float(log_gammainc(d, x)) == pytest.approx(expected, rel=1e-10, abs=1e-10)


def test_hadamard_inequalities_on_adversarial_points():
    """ρ(a, x) ≥ |v − v_a| in normal coordinates at m0, and log J(v) ≤ k|v|²/24, on rank-one,
    trace and random directions far from the centre (the volume from the metric, by finite
    differences, independent of the sinh formula)."""
    space, k = SPD(3), 3
    rng = np.random.default_rng(0)
    root = mf.sqrtm_and_invsqrtm(space.random_point(rng=1))[0]
    e = np.zeros((3, 3))
    e[0, 0] = 1.0
    rank_one = mf.vecd(e)
    directions = [rank_one, -rank_one, mf.vecd(np.eye(3)) / np.sqrt(3)] + list(rng.standard_normal((40, 6)))
    worst = np.inf
    for i, va in enumerate(directions):
        for vb in directions[i + 1 :]:
            for sa, sb in ((3.0, 3.0), (0.5, 4.0)):
                a, b = sa * va / np.linalg.norm(va), sb * vb / np.linalg.norm(vb)
                xa = mf.congruence(root, mf.expm(mf.invvecd(a, k)))
                xb = mf.congruence(root, mf.expm(mf.invvecd(b, k)))
                worst = min(worst, float(space.dist(xa, xb)) - float(np.linalg.norm(a - b)))
    assert worst >= -1e-9
    for v in directions[:10]:
        v = 2.5 * v / np.linalg.norm(v)
        assert np.log(metric_volume(root, v[None], k))[0] <= k * 2.5**2 / 24 + 1e-6


def metric_volume(root, v, k, h=1e-5):
    """``√det g`` of the map ``v ↦ root·Exp(invvecd v)·root`` (vecd coordinates), with
    ``g(A, B) = tr(x⁻¹ A x⁻¹ B)`` and the partial derivatives by central differences."""
    d = v.shape[-1]
    x = mf.congruence(root, mf.expm(mf.invvecd(v, k)))
    inv = np.linalg.inv(x)
    parts = []
    for j in range(d):
        step = np.zeros(d)
        step[j] = h
        plus = mf.congruence(root, mf.expm(mf.invvecd(v + step, k)))
        minus = mf.congruence(root, mf.expm(mf.invvecd(v - step, k)))
        parts.append(inv @ ((plus - minus) / (2 * h)))
    g = np.einsum("...ij,...ji->...", np.stack(parts, -3)[..., :, None, :, :], np.stack(parts, -3)[..., None, :, :, :])
    return np.sqrt(np.linalg.det(g))


def spd2_quadrature_cdf(law, steps=80, polar=28, turns=56):
    """CDF of ρ(m0, X) for X ~ KNG on SPD(2), by the midpoint rule in spherical coordinates
    ``v = t·u`` of the normal coordinates at m0 (``|v| = ρ(m0, x)``), the density
    ``exp(−‖mean_i log_x(x_i)‖_x/σ)`` from the space's own log and norm and the volume from the
    metric: independent of the sampler."""
    space, r = law.space, law.radius
    root = mf.sqrtm_and_invsqrtm(law.center)[0]
    t = (np.arange(steps) + 0.5) * r / steps
    theta = (np.arange(polar) + 0.5) * np.pi / polar
    phi = (np.arange(turns) + 0.5) * 2 * np.pi / turns
    T, TH, PH = np.meshgrid(t, theta, phi, indexing="ij")
    u = np.stack([np.sin(TH) * np.cos(PH), np.sin(TH) * np.sin(PH), np.cos(TH)], -1)
    v = (T[..., None] * u).reshape(-1, 3)
    x = mf.congruence(root, mf.expm(mf.invvecd(v, 2)))
    grad = np.mean(space.log(x[:, None], law.data[None]), axis=1)
    weight = np.exp(-space.norm(x, grad) / law.scale) * metric_volume(root, v, 2)
    radial = (weight.reshape(T.shape) * (T**2 * np.sin(TH))).sum(axis=(1, 2))
    cdf = np.concatenate([[0.0], np.cumsum(radial)]) / radial.sum()
    return lambda s: np.interp(s, np.concatenate([[0.0], t + 0.5 * r / steps]), cdf)


def spd2_law(X, scale, center, radius, monkeypatch):
    monkeypatch.setattr(kng_module, "_spd_laplace_proposal_exact", lambda *args: False)
    law = KNGDistribution(SPD(2), X, scale, center=center, radius=radius, sampler="exact")
    assert law.route == "spd-tangent" and law.exact
    return law


@pytest.mark.parametrize("dataset", ["spread", "one boundary point"])
def test_spd2_kng_matches_quadrature_and_catches_a_mutant(dataset, monkeypatch):
    space, radius = SPD(2), 1.5
    center = mf.congruence(np.array([[1.2, 0.3], [0.3, 0.8]]), np.eye(2))
    rng = np.random.default_rng(5)
    if dataset == "spread":
        V = rng.standard_normal((6, 3))
        V *= (rng.random(6) * radius / np.linalg.norm(V, axis=1))[:, None]
    else:  # the anchor on the boundary: s = r in the tangent proposal
        V = np.tile([radius * (1 - 1e-9), 0.0, 0.0], (6, 1))
    root = mf.sqrtm_and_invsqrtm(center)[0]
    X = mf.congruence(root, mf.expm(mf.invvecd(V, 2)))
    law = spd2_law(X, 0.25, center, radius, monkeypatch)
    cdf = spd2_quadrature_cdf(law)
    draws = law.sample(3000, rng=11)
    assert stats.kstest(space.dist(center, draws), cdf).pvalue > 1e-3
    mutant = spd2_law(X, 0.25 * 1.5, center, radius, monkeypatch).sample(3000, rng=12)
    assert stats.kstest(space.dist(center, mutant), cdf).pvalue < MUTANT_P


def test_tangent_proposal_acceptances_are_probabilities():
    """Every log acceptance of the volume step is ≤ 0 (its bound holds), at the boundary too."""
    space = SPD(4)
    anchor = space.exp(np.eye(4), 2.0 * space.random_unit_tangent(np.eye(4), rng=0))
    for scale in (0.002, 0.05, 5.0):
        proposal = SPDTangentKNGProposal(4, np.eye(4), 2.0, anchor, scale)
        x, log_acc, t = proposal.propose(2000, np.random.default_rng(1))
        assert np.all(log_acc <= 0) and np.all(np.isfinite(log_acc))
        assert np.all(space.dist(np.eye(4), x) <= 2.0 + 1e-9)
        assert np.all(t <= space.dist(anchor, x) + 1e-9)


def _spd_off_centre(n=200, seed=0):
    """The issue's target: SPD(8), ball of radius 3 at I, 200 covariances 1.5 off the centre."""
    space = SPD(8)
    middle = space.exp(np.eye(8), 1.5 * space.random_unit_tangent(np.eye(8), rng=seed))
    v = space.random_tangent(middle, size=n, rng=seed + 1) * 0.5 / np.sqrt(space.dim)
    return space.clip_to_ball(space.exp(middle, v), np.eye(8), 3.0)[0]


@pytest.mark.parametrize("epsilon", [0.5, 5.0])
def test_issue_target_is_exact_from_public_quantities_and_neighbours_see_the_same_route(epsilon):
    space, X = SPD(8), _spd_off_centre()
    scale = 2 * frechet_mean_sensitivity(space, 3.0, len(X), "kng") / epsilon
    assert kng_route(space, scale, 3.0) == ("spd-tangent", 0.0)
    model = PrivateFrechetMean(space, epsilon=epsilon, center=np.eye(8), radius=3.0, mechanism="kng", random_state=0)
    assert model.plan(X).exact is True
    neighbour = X.copy()
    neighbour[0] = space.exp(np.eye(8), 3.0 * (1 - 1e-9) * space.random_unit_tangent(np.eye(8), rng=9))
    fits = [
        PrivateFrechetMean(space, epsilon=epsilon, center=np.eye(8), radius=3.0, mechanism="kng", random_state=0).fit(D)
        for D in (X, neighbour)
    ]
    assert all(f.mechanism_.exact for f in fits)
    assert str(fits[0].privacy_report_) == str(fits[1].privacy_report_)
