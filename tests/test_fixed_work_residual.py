"""Timing-safe mode's last data-dependent work (SECURITY.md): the polar proposal's construction,
the conjugate-gradient loop of the affine-invariant SPD Newton step, and KNG's gradient norm.
Under fixed work each is counted (geodp.work.count), and the counts must be the same on
adversarial neighbours (an anchor at the centre vs on the boundary; records that start converged
vs one record far out); the laws and results stay those of the default path."""

import math

import numpy as np
import pytest
from scipy import stats

from geodp.distributions import ball_polar
from geodp.distributions.ball_polar import exact_ball_proposal
from geodp.distributions.laplace import RiemannianLaplace
from geodp.frechet import _direction, frechet_mean
from geodp.manifolds import SPD, Hyperbolic, KendallShape, Sphere
from geodp.models import PrivateFrechetMean
from geodp.records import InMemoryRecords
from geodp.work import counting, fixed_work_section

NORTH = np.array([0.0, 0.0, 1.0])
DEADLINE = 1e-3  # a given deadline: no calibration (the counts, not the clock, are tested here)


@pytest.fixture
def three_levels(monkeypatch):
    """Fixed work builds every refinement level; three keep these tests fast (the level the
    default path stops at is below three in every case here)."""
    monkeypatch.setattr(ball_polar, "_LEVELS", 3)


def _anchors(space, center, radius, seed):
    """An anchor at the centre, one halfway, and one on the boundary (the adversarial ends)."""
    v = space.random_unit_tangent(center, rng=seed)
    return [center.copy()] + [space.exp(center, f * radius * v) for f in (0.5, 1.0)]


def _build_work(space, center, radius, rate, anchor, fixed):
    """The work of building the proposal and making 64 candidates."""
    with counting() as work:
        if fixed:
            with fixed_work_section(1e-10):
                exact_ball_proposal(space, anchor, center, rate, radius).propose(64, np.random.default_rng(0))
        else:
            exact_ball_proposal(space, anchor, center, rate, radius).propose(64, np.random.default_rng(0))
    return dict(work)


POLAR_CASES = [
    (Hyperbolic(100), 3.0, 1.0),  # the default refines to 1,025 nodes off-centre, 257 at the centre
    (Sphere(2), 0.7, 3.0),
    (KendallShape(5), 0.3, 10.0),  # the exact direction tables are built off-centre only
]


@pytest.mark.parametrize(("space", "radius", "rate"), POLAR_CASES, ids=lambda c: str(c))
def test_polar_proposal_work_is_the_same_for_every_anchor(three_levels, space, radius, rate):
    center = space.reference_point() if isinstance(space, Hyperbolic) else space.random_point(rng=0)
    if isinstance(space, Sphere):
        center = NORTH
    anchors = _anchors(space, center, radius, seed=1)
    fixed = [_build_work(space, center, radius, rate, a, True) for a in anchors]
    assert fixed[0] == fixed[1] == fixed[2]
    assert fixed[0]["polar-nodes"] == sum((256 << k) + 1 for k in range(3))  # every level, whatever the anchor
    default = [_build_work(space, center, radius, rate, a, False) for a in anchors]
    assert default[0] != default[2]  # the control: the counters see the default path's channel


def test_truncated_laplace_polar_draws_do_the_same_work_for_every_footpoint(three_levels):
    """The truncated Laplace on H¹⁰⁰ (r = 3, σ = 1) draws by the polar proposal; under fixed work
    its build and its draws (directions and in-ball checks on every candidate) are counted equal
    for footpoints at the centre, halfway and on the boundary."""
    space = Hyperbolic(100)
    center = space.reference_point()
    work = []
    for anchor in _anchors(space, center, 3.0, seed=1):
        law = RiemannianLaplace(space, anchor, 1.0, center=center, radius=3.0)
        assert law.sampler.startswith("exact: polar coordinates at the footpoint")
        with counting() as counts, fixed_work_section(1e-10):
            law.sample(rng=1)
        work.append(dict(counts))
    assert work[0] == work[1] == work[2]
    assert work[0]["polar-directions"] == work[0]["proposals"] > 0


def _cap_cdf_by_quadrature(anchor, radius, rate, grid=1500):
    """CDF of ρ(anchor, x) for x ∝ e^{−rate·ρ(anchor, x)} on the cap B_radius(north) of S²,
    by the midpoint rule in spherical coordinates around the north pole (independent of the
    sampler)."""
    theta = (np.arange(grid) + 0.5) * radius / grid
    phi = (np.arange(2 * grid) + 0.5) * math.pi / grid
    T, P = np.meshgrid(theta, phi, indexing="ij")
    x = np.stack([np.sin(T) * np.cos(P), np.sin(T) * np.sin(P), np.cos(T)], axis=-1)
    rho = np.arccos(np.clip(x @ anchor, -1.0, 1.0)).ravel()
    weight = (np.sin(T) * np.exp(-rate * rho.reshape(T.shape))).ravel()
    order = np.argsort(rho)
    rho, cdf = rho[order], np.cumsum(weight[order])
    return lambda t: np.interp(t, rho, cdf / cdf[-1])


@pytest.mark.parametrize("where", [0.0, 1.0])
def test_the_fixed_work_polar_proposal_draws_the_exact_law(three_levels, where):
    """KS of ρ(anchor, x) over 20,000 kept draws against quadrature, at the centre and on the
    boundary; the ×1.5 mutant of the rate fails the same test."""
    space, radius, rate = Sphere(2), 0.7, 3.0
    anchor = space.exp(NORTH, where * radius * np.array([1.0, 0.0, 0.0])) if where else NORTH.copy()
    cdf = _cap_cdf_by_quadrature(anchor, radius, rate)

    def draws(r):
        with fixed_work_section(1e-10):
            proposal = exact_ball_proposal(space, anchor, NORTH, r, radius)
        x, _ = proposal.propose(30_000, np.random.default_rng(5))
        x = x[space.dist(NORTH, x) <= radius][:20_000]
        assert len(x) == 20_000
        return space.dist(anchor, x)

    assert stats.kstest(draws(rate), cdf).pvalue > 1e-3
    assert stats.kstest(draws(1.5 * rate), cdf).pvalue < 1e-6


def _spd_neighbours(n=12, seed=2):
    """Records near the identity with one of them at it vs far out: the default flow makes the
    same number of iterations on both (2), but the Newton steps' CG loops stop after 3 vs 4 steps."""
    space, eye = SPD(3), np.eye(3)
    still = space.exp(eye, 0.3 * space.random_unit_tangent(eye, size=n, rng=seed))
    moved = still.copy()
    still[0] = eye
    moved[0] = space.exp(eye, 1.5 * space.random_unit_tangent(eye, rng=seed + 10))
    return space, still, moved


def _cg_steps(space, X, fixed):
    with counting() as work:
        if fixed:
            with fixed_work_section(1e-10):
                frechet_mean(space, X, max_iter=4)
        else:
            frechet_mean(space, X, max_iter=4)
    return work["cg-steps"]


def test_newton_cg_runs_its_public_maximum_under_fixed_work():
    space, still, moved = _spd_neighbours()
    assert _cg_steps(space, still, False) < _cg_steps(space, moved, False)  # the control
    assert _cg_steps(space, still, True) == _cg_steps(space, moved, True) == 4 * 10


@pytest.mark.parametrize("which", ["still", "moved"])
def test_newton_direction_is_unchanged_by_fixed_work(which):
    space, still, moved = _spd_neighbours()
    X = still if which == "still" else moved
    x = space.exp(np.eye(3), 0.2 * space.random_unit_tangent(np.eye(3), rng=4))
    direction, grad_norm, _, _, state = _direction(space, InMemoryRecords(space, X), x)
    default = space._newton_direction(x, direction, state, grad_norm, 1e-10)
    with fixed_work_section(1e-10):
        fixed = space._newton_direction(x, direction, state, grad_norm, 1e-10)
    np.testing.assert_array_equal(fixed[0], default[0])
    assert fixed[1] == default[1] and default[1] > 0


def _kng_work(X, timing_safe, space, center, radius):
    model = PrivateFrechetMean(
        space, epsilon=1.0, center=center, radius=radius, mechanism="kng", timing_safe=timing_safe, random_state=0
    )
    with counting() as work:
        model.fit(X)
    return dict(work)


def test_kng_measures_the_gradient_on_every_proposal_under_fixed_work(three_levels):
    """KNG's cap route (S⁵⁰, n = 40): centred records vs boundary records, whose proposals pass
    the construction's steps in different numbers (the default measures ‖∇F_D‖ on 14 vs 15 of
    the first 16); the mode measures it once per proposal, plus once at the mean."""
    space, radius = Sphere(50), 0.5
    center = np.eye(51)[0]
    directions = space.random_unit_tangent(center, size=40, rng=2)
    centred = space.exp(center, 0.05 * radius * directions)
    boundary = space.exp(center, radius * directions)
    # the first fit of each pair warms the public caches (the route's bounds)
    default = [_kng_work(X, False, space, center, radius) for X in (centred, centred, boundary)]
    assert default[1]["gradient-norms"] != default[2]["gradient-norms"]  # the control
    fixed = [_kng_work(X, DEADLINE, space, center, radius) for X in (centred, centred, boundary)]
    assert fixed[1] == fixed[2]
    assert fixed[1]["gradient-norms"] == fixed[1]["proposals"] + 1
    assert fixed[1]["polar-directions"] == fixed[1]["proposals"]
