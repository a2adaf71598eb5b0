"""The truncated Laplace drawn in polar coordinates at its footpoint (distributions/ball_polar.py):
its law against rejection from the exact untruncated law, its ≥ 1/2 construction guarantee at the
extremes, and the route RiemannianLaplace takes where rejection into the ball would be slow."""

import numpy as np
import pytest
from scipy import stats

from geodp.distributions import RiemannianLaplace
from geodp.distributions.ball_polar import exact_ball_proposal, has_exact_ball_proposal
from geodp.distributions.laplace import ACCEPTANCE_FLOOR, ball_acceptance_bound
from geodp.manifolds import Hyperbolic, KendallShape, Sphere


def _pole(space):
    return (
        space.project(np.eye(space.point_shape[-1])[0])
        if not isinstance(space, KendallShape)
        else space.project(
            np.stack([np.cos(np.arange(space.n_landmarks)), np.sin(2.0 * np.arange(space.n_landmarks))], 1)
        )
    )


def _footpoint(space, center, distance, seed=0):
    v = space.random_tangent(center, rng=seed)
    return space.exp(center, distance * v / space.norm(center, v))


def _polar_draws(space, footpoint, center, scale, radius, n, seed):
    law = exact_ball_proposal(space, footpoint, center, 1.0 / scale, radius)
    rng, out, proposed = np.random.default_rng(seed), [], 0
    while sum(len(x) for x in out) < n:
        x, kept = law.propose(4 * n, rng)
        proposed += 4 * n
        out.append(x[np.asarray(space.dist(center, x)) <= radius])
    x = np.concatenate(out)[:n]
    return x, sum(len(x) for x in out) / proposed


def _rejection_draws(space, footpoint, center, scale, radius, n, seed):
    """The reference: the exact untruncated radial law at the footpoint, kept when inside."""
    law, rng, out = RiemannianLaplace(space, footpoint, scale), np.random.default_rng(seed), []
    batch = 20 * n if space.dim < 100 else 2 * n  # high dimension: most draws land inside, memory
    while sum(len(x) for x in out) < n:
        x = law.sample(batch, rng=rng)
        out.append(x[np.asarray(space.dist(center, x)) <= radius])
    return np.concatenate(out)[:n]


CASES = [  # (space, radius, footpoint distance from the centre, σ): footpoints inside and on the edge
    (Sphere(3), 1.0, 0.9, 0.5),
    (Sphere(2), 1.2, 0.0, 0.4),
    (Hyperbolic(4), 1.5, 1.5, 0.3),
    (Hyperbolic(2), 2.0, 0.7, 0.6),
    (KendallShape(6), 0.3, 0.25, 0.2),
    (Hyperbolic(1000), 0.6, 0.3, 5e-4),  # the new sizes: d = 1000, the mode ρ ≈ dσ = 0.5 from η
]


@pytest.mark.parametrize("space, radius, distance, scale", CASES, ids=lambda v: repr(v))
def test_polar_law_is_the_truncated_laplace(space, radius, distance, scale):
    """Two-sample KS on ρ(m0, x) and ρ(η, x), 6,000 draws each (2,000 at d = 1000): the polar law
    agrees with rejection from the exact untruncated law (p > 1e-3); drawn at 1.5σ it is told apart."""
    center = _pole(space)
    eta = _footpoint(space, center, distance)
    n = 6000 if space.dim < 100 else 2000
    reference = _rejection_draws(space, eta, center, scale, radius, n, seed=1)
    for factor, agree in ((1.0, True), (1.5, False)):
        x, _ = _polar_draws(space, eta, center, factor * scale, radius, n, seed=2)
        p = min(
            stats.ks_2samp(np.asarray(space.dist(point, x)), np.asarray(space.dist(point, reference))).pvalue
            for point in (center, eta)
        )
        assert (p > 1e-3) if agree else (p < 1e-6), (factor, p)


@pytest.mark.parametrize(
    "space, radius",
    [(Hyperbolic(1000), 0.1), (Hyperbolic(1000), 3.0), (Sphere(1000), 1.5), (Sphere(2), 1.5), (KendallShape(100), 0.2)],
    ids=repr,
)
@pytest.mark.parametrize("scale", [1e-6, 1e-2, 1.0, 1e6])
def test_construction_keeps_half_of_the_proposals_at_the_extremes(space, radius, scale):
    """d up to 1000, σ from 1e-6 to 1e6, footpoint at the centre and on the boundary: every
    proposal kept is inside the ball, and ≥ 1/2 are kept (the construction's guarantee)."""
    center = _pole(space)
    for distance in (0.0, radius):
        eta = _footpoint(space, center, distance)
        law = exact_ball_proposal(space, eta, center, 1.0 / scale, radius)
        x, kept = law.propose(2000, np.random.default_rng(0))
        assert kept.mean() >= 0.45, (distance, kept.mean())  # ≥ 1/2 in expectation; 2,000 draws
        assert np.all(np.asarray(space.dist(center, x)) <= radius * (1 + 1e-9))


def test_riemannian_laplace_takes_the_polar_route_where_rejection_would_be_slow():
    """H^1000 at σ = 1 in a ball of radius 0.1: rejection into the ball could accept below the
    floor (it used to fall back to MH, 10-30 s per release); the law is exact, its sampler text
    does not depend on the footpoint, and its draws lie in the ball."""
    space, radius, scale = Hyperbolic(1000), 0.1, 1.0
    assert ball_acceptance_bound(space, scale, radius) < ACCEPTANCE_FLOOR and has_exact_ball_proposal(space, radius)
    center = _pole(space)
    laws = [
        RiemannianLaplace(space, _footpoint(space, center, d), scale, center=center, radius=radius)
        for d in (0.0, 0.05, radius)
    ]
    assert all(law.exact for law in laws) and len({law.sampler for law in laws}) == 1
    assert "polar coordinates" in laws[0].sampler
    x = laws[-1].sample(500, rng=0)
    assert np.all(np.asarray(space.dist(center, x)) <= radius)
    assert np.median(np.asarray(space.dist(laws[-1].footpoint, x))) > 0.05  # the volume pulls draws outward


def test_no_polar_construction_where_it_does_not_hold():
    from geodp.manifolds import SPD, Euclidean

    assert not has_exact_ball_proposal(SPD(3), 1.0)  # curvature not constant
    assert not has_exact_ball_proposal(Euclidean(3), 1.0)  # flat: the chart's own sampler
    assert not has_exact_ball_proposal(Sphere(3), 1.6)  # r > π/2: the ball is not convex
    assert not has_exact_ball_proposal(KendallShape(6), 0.8)  # r ≥ π/4


@pytest.mark.parametrize("space, radius", [(Sphere(1000), 0.3), (Sphere(3), 0.3), (KendallShape(100), 0.2)], ids=repr)
def test_draws_stay_on_the_manifold_for_footpoints_next_to_the_centre(space, radius):
    """A footpoint 1e-10·r to 1e-5·r from the centre: the direction of the centre is projected onto
    the tangent space before use, so draws are on the manifold to rounding (they were 1e-10 to 1e-8
    off, by an amount that depended on the private footpoint)."""
    center = _pole(space)
    for relative in (1e-10, 1.5e-9, 3e-7, 2e-6, 1e-5):
        law = exact_ball_proposal(space, _footpoint(space, center, relative * radius), center, 1.0, radius)
        x, _ = law.propose(200, np.random.default_rng(2))
        axes = tuple(range(1, x.ndim))
        assert np.max(np.abs(np.sqrt(np.sum(x * x, axis=axes)) - 1.0)) < 1e-14, relative


def test_a_footpoint_a_rounding_error_outside_the_ball_is_moved_onto_it():
    """η accepted within the tolerance outside the ball is clipped onto its boundary, where the
    public acceptance bounds hold (H^1000, r = 3, σ = 1e-12: the rejection route raised there)."""
    space, radius = Hyperbolic(1000), 3.0
    center = _pole(space)
    eta = _footpoint(space, center, radius * (1 + 3e-10))
    law = RiemannianLaplace(space, eta, 1e-12, center=center, radius=radius)
    assert float(space.dist(center, law.footpoint)) <= radius
    x = law.sample(20, rng=0)
    assert np.all(np.asarray(space.dist(center, x)) <= radius)


@pytest.mark.parametrize("a", [0.5, 1.0, 2.5, 49.5, 499.5])  # d = 2 to 1000
def test_log_incomplete_beta_and_its_inverse_against_mpmath(a):
    """log I_x(a, a) from x = 1e-300 (far below where betainc underflows) to 1/2, and the
    truncated inverse z with I_z = u·I_Q, against 40-digit arithmetic."""
    mp = pytest.importorskip("mpmath")
    from geodp.distributions.ball_polar import _log_sym_betainc, _truncated_sym_beta

    mp.mp.dps = 40
    xs = np.array([1e-300, 1e-120, 1e-30, 1e-6, 0.01, 0.1, 0.3, 0.5])
    got = _log_sym_betainc(a, np.log(xs))
    for x, value in zip(xs, got):
        reference = float(mp.log(mp.betainc(a, a, 0, mp.mpf(x), regularized=True)))
        assert abs(value - reference) <= 1e-10 * max(1.0, abs(reference)), (x, value, reference)
    u = np.array([1e-9, 0.3, 0.999])
    for q in (1e-200, 1e-5, 0.05, 0.4):
        z = _truncated_sym_beta(a, np.full(3, np.log(q)), u)
        assert np.all((z > 0) & (z <= q))
        for ui, zi in zip(u, z):
            ratio = mp.betainc(a, a, 0, mp.mpf(zi), regularized=True) / mp.betainc(a, a, 0, mp.mpf(q), regularized=True)
            assert abs(float(ratio) - ui) <= 1e-8 * ui, (q, ui, float(ratio))
