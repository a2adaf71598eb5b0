"""The KNG samplers driven by the data's own envelope of the gradient norm (docs/math.md §5,
"The data's own envelope"): the law against 2-D quadrature of the unnormalised density on S² and
H² (KS, with a ×1.5 ε mutant caught), the envelope inequality against optimised datasets and
points, and the public routes at the issue's targets (counted, not timed)."""

import numpy as np
import pytest
from scipy import optimize, stats

from geodp.distributions import KNGDistribution
from geodp.distributions import kng as kng_module
from geodp.distributions.kng import kng_route
from geodp.distributions.kng_envelope import data_envelope, envelope_knots, has_envelope_proposal
from geodp.frechet import frechet_mean
from geodp.manifolds import SPD, Hyperbolic, KendallShape, Sphere
from geodp.mechanisms import KNGMechanism
from geodp.sensitivity import frechet_mean_sensitivity


def ball_data(space, center, radius, n, seed, spread):
    v = space.random_tangent(center, size=n, rng=seed)
    X, _ = space.clip_to_ball(space.exp(center, spread * radius * v / np.sqrt(space.dim)), center, radius)
    return X


def quadrature_cdf(law, s_grid, steps=300, angles=240):
    """CDF of ρ(a, X) for X ~ KNG, by quadrature of ``exp(−‖∇F_D‖/σ)`` in polar coordinates at
    the mean ``a`` (dimension 2: ``J(t) = sn(t)``), independent of the sampler."""
    space, a = law.space, law.frechet_mean
    length = law.radius + float(space.dist(law.center, a))
    t = (np.arange(steps) + 0.5) * length / steps
    theta = (np.arange(angles) + 0.5) * 2 * np.pi / angles
    e1 = space.random_unit_tangent(a, rng=0)
    e2 = space.to_tangent(a, space.random_unit_tangent(a, rng=1))
    e2 = e2 - space.inner(a, e2, e1) * e1
    e2 = e2 / space.norm(a, e2)
    u = np.cos(theta)[:, None] * e1 + np.sin(theta)[:, None] * e2
    x = space.exp(a, (t[None, :, None] * u[:, None, :]).reshape(-1, a.shape[0]))
    density = np.exp(law.log_density(x)).reshape(angles, steps) * np.exp(space.radial_log_jacobian(t))[None]
    radial = density.sum(axis=0)
    cdf = np.concatenate([[0.0], np.cumsum(radial)]) / radial.sum()
    return np.interp(s_grid, np.concatenate([[0.0], t + 0.5 * length / steps]), cdf)


CASES = [
    # (space, radius, n, σ, route). In dimension 2 the public bounds never fall below the floor,
    # so the two data-envelope routes are forced here (kng_route is the only switch).
    (Sphere(2), 0.5, 20, 0.04, "envelope"),
    (Hyperbolic(2), 1.0, 20, 0.2, "cap"),
    (Hyperbolic(2), 1.0, 20, 0.05, "envelope"),
]


@pytest.mark.parametrize("space, radius, n, scale, route", CASES, ids=lambda v: repr(v))
def test_law_matches_quadrature_and_a_1_5_epsilon_mutant_fails(space, radius, n, scale, route, monkeypatch):
    monkeypatch.setattr(kng_module, "kng_route", lambda *args: (route, 0.0))
    center = space.random_point(rng=3)
    X = ball_data(space, center, radius, n, seed=4, spread=0.9)
    law = KNGDistribution(space, X, scale, center=center, radius=radius)
    assert law.route == route and law.exact
    if route == "cap":  # the data's chord is steeper than the public h: the rate follows the data
        assert law._rate_h >= law.h
    draws = 3000
    rho = space.dist(law.frechet_mean, law.sample(draws, rng=5))
    cdf = lambda s: quadrature_cdf(law, s)  # noqa: E731
    assert stats.kstest(rho, cdf).pvalue > 1e-3
    mutant = KNGDistribution(space, X, scale / 1.5, center=center, radius=radius)  # ε × 1.5
    rho_mutant = space.dist(law.frechet_mean, mutant.sample(draws, rng=6))
    assert stats.kstest(rho_mutant, cdf).pvalue < 1e-6


def _envelope_gap(space, center, radius, scale, params, n, inflate=1.0):
    """``‖∇F_D(y)‖ + ‖∇F_D(a)‖ − inflate·ℓ(ρ(a, y))`` for records and a point given by tangent
    coordinates at the centre (clipped to the ball): never negative if the envelope is sound."""
    v = params.reshape(n + 1, *space.point_shape)
    v = np.stack([space.to_tangent(center, w) for w in v])
    pts, _ = space.clip_to_ball(space.exp(center, v), center, radius)
    X, y = pts[:n], pts[n]
    a = frechet_mean(space, X, init=center, tol=1e-13)
    delta = float(space.dist(center, a))
    knots = envelope_knots(scale, min(radius * (1 + 1e-6) + delta, 2 * radius * (1 + 1e-6)))
    values = data_envelope(space, a, X, radius, knots)
    grad = lambda p: float(space.unchecked.mean_log_norms(p[None], X)[0])  # noqa: E731
    return grad(y) + grad(a) - inflate * float(np.interp(space.dist(a, y), knots, values))


@pytest.mark.parametrize(
    "space, radius", [(KendallShape(4), 0.35), (Sphere(3), 0.6), (Hyperbolic(2), 1.5)], ids=lambda v: repr(v)
)
def test_envelope_inequality_against_optimised_data_and_points(space, radius):
    center = space.random_point(rng=7)
    n, scale = 3, 0.01
    size = (n + 1) * int(np.prod(space.point_shape))
    rng = np.random.default_rng(8)
    worst = np.inf
    starts = [rng.normal(size=size) * radius for _ in range(2)]
    # Structured starts: every record on one geodesic through the centre (one complex line on
    # Kendall's shape space, where the Kähler term of the envelope is largest), the point across.
    axis = space.random_unit_tangent(center, rng=9).ravel()
    line = np.concatenate([np.outer([0.9, -0.9, 0.5], axis).ravel(), 0.3 * axis])
    starts.append(line * radius)
    for x0 in starts:
        result = optimize.minimize(
            lambda p: _envelope_gap(space, center, radius, scale, p, n),
            x0,
            method="Nelder-Mead",
            options={"maxfev": 250, "xatol": 1e-8, "fatol": 1e-12},
        )
        worst = min(worst, result.fun)
    assert worst >= -1e-9
    # The check can fail: an envelope overstated by 5 % is beaten by records at one point.
    clustered = np.concatenate([np.tile(0.01 * axis, n), 0.5 * axis]) * radius
    assert _envelope_gap(space, center, radius, scale, clustered, n, inflate=1.05) < 0


TARGETS = [(KendallShape(100), 0.2, n, eps) for n in (100, 300, 1000) for eps in (0.5, 1.0, 4.0)] + [
    (Hyperbolic(10), 2.5, 2000, eps) for eps in (0.5, 5.0)
]


@pytest.mark.parametrize("space, radius, n, epsilon", TARGETS, ids=lambda v: repr(v))
def test_issue_targets_are_exact_from_public_quantities(space, radius, n, epsilon):
    delta = frechet_mean_sensitivity(space, radius, n, mechanism="kng")
    center = space.random_point(rng=0)
    mech = KNGMechanism(space, epsilon=epsilon, sensitivity=delta, center=center, radius=radius)
    assert mech.exact and mech.guarantee.exact
    assert kng_route(space, mech.scale, radius)[0] in ("cap", "envelope")


def test_spaces_without_the_envelope_keep_their_routes():
    assert not has_envelope_proposal(SPD(3), 1.0)
    # affine SPD has its own exact route (tests/test_spd_kng.py), MH only in balls too large for it
    assert kng_route(SPD(3), 1e-4, 3.0)[0] == "spd-tangent"
    assert kng_route(SPD(5), 3.0, 12.0)[0] == "mcmc"
    assert kng_route(KendallShape(100), 1e-3, 0.2, "mcmc")[0] == "mcmc"
