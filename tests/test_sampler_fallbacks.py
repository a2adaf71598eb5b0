"""Edges of the samplers (issue 8, items 5, 6a, 8): MH fallbacks start at a public point, flat
KNG refuses records outside the ball, a fallback to MCMC warns with a public message, and no
message of a law or mechanism carries a number computed from private data."""

import re
import warnings

import numpy as np
import pytest
from scipy import stats

import geodp.distributions.kng as kng_module
import geodp.distributions.laplace as laplace_module
import geodp.distributions.spd_affine as spd_affine_module
from geodp.distributions import KNGDistribution, RiemannianLaplace
from geodp.distributions.mcmc import random_walk_metropolis
from geodp.errors import ApproximateSamplerWarning, InvalidDataError, NotOnManifoldError
from geodp.manifolds import SPD, Euclidean, KendallShape, Sphere
from geodp.manifolds.base import Manifold
from geodp.mechanisms import (
    ExtrinsicMeanMechanism,
    KNGMechanism,
    LaplaceMechanism,
    PointwiseShapeLaplace,
    TangentGaussianMechanism,
)


def spy_on_mh(monkeypatch, module, **overrides):
    """Record the ``initial`` argument of every MH run started from ``module`` (and optionally
    override settings such as the burn-in, to keep long default chains cheap in tests)."""
    starts = []

    def spy(space, log_density, initial, *args, **kwargs):
        starts.append(np.array(initial, copy=True))
        kwargs.update(overrides)
        return random_walk_metropolis(space, log_density, initial, *args, **kwargs)

    monkeypatch.setattr(module, "random_walk_metropolis", spy)
    return starts


def ball_data(space, center, radius, n, seed, spread=0.8):
    v = space.random_tangent(center, size=n, rng=seed)
    X, _ = space.clip_to_ball(space.exp(center, spread * radius * v / np.sqrt(space.dim)), center, radius)
    return X


def release_warnings(call):
    """Run ``call`` and return the texts of the ApproximateSamplerWarnings it emitted."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [str(w.message) for w in caught if issubclass(w.category, ApproximateSamplerWarning)]


# ---------------------------------------------------------------- item 5: public MH starts
def uniform_ball_then_laplace(space, center, eta, scale, radius, n, rng):
    """Independent exact oracle on the sphere: uniform draws on B_r(center) (radius density
    ∝ sin^(d−1) t by rejection from t^(d−1)), kept with probability exp(−ρ(η, x)/σ)."""
    rng = np.random.default_rng(rng)
    out = []
    while sum(len(o) for o in out) < n:
        t = radius * rng.random(20000) ** (1.0 / space.dim)
        t = t[rng.random(t.size) < (np.sin(t) / t) ** (space.dim - 1)]
        u = space.random_unit_tangent(center, size=t.size, rng=rng)
        x = space.exp(center, t[:, None] * u)
        out.append(x[rng.random(t.size) < np.exp(-space.dist(eta, x) / scale)])
    return np.concatenate(out)[:n]


def test_truncated_laplace_mh_starts_at_the_public_center_and_matches_the_exact_law(monkeypatch):
    # A sphere that hides its polar volume (no exact sampler, as for a user's space), r = σ = 0.3:
    # the law goes to MH on the ball; the footpoint is off-centre (private).
    space, center, radius, scale = OpaqueSphere(12), np.eye(13)[0], 0.3, 0.3
    eta = space.exp(center, 0.7 * radius * space.random_unit_tangent(center, rng=1))
    law = RiemannianLaplace(space, eta, scale, center=center, radius=radius, burn_in=600, thinning=1)
    assert not law.exact and "restricted to B_0.3(center)" in law.sampler
    starts = spy_on_mh(monkeypatch, laplace_module)
    with pytest.warns(ApproximateSamplerWarning):
        x = law.sample(3000, rng=2)
    assert len(starts) == 1 and np.all(starts[0] == center)  # the public centre, every chain
    assert not np.allclose(starts[0], eta)
    reference = uniform_ball_then_laplace(space, center, eta, scale, radius, 3000, rng=3)
    assert stats.ks_2samp(space.dist(eta, x), space.dist(eta, reference)).pvalue > 1e-3
    assert stats.ks_2samp(space.dist(center, x), space.dist(center, reference)).pvalue > 1e-3
    # the oracle has power: the uniform law on the ball (σ = ∞) is told apart
    uniform = uniform_ball_then_laplace(space, center, eta, 1e9, radius, 3000, rng=4)
    assert stats.ks_2samp(space.dist(eta, x), space.dist(eta, uniform)).pvalue < 1e-6


class OpaqueSphere(Sphere):
    """A sphere that hides its polar volume: no exact sampler applies, as for a user's space."""

    radial_log_jacobian = Manifold.radial_log_jacobian  # the default: not isotropic


def test_untruncated_laplace_mh_starts_at_a_public_point_of_the_space(monkeypatch):
    # No ball: the chains start at space.random_point(rng=0), a function of the space alone.
    space = OpaqueSphere(2)
    public = space.random_point(rng=0)
    eta = space.exp(public, 2.0 * space.random_unit_tangent(public, rng=4))  # far from the start
    law = RiemannianLaplace(space, eta, 0.3, burn_in=800, thinning=1)
    assert not law.exact
    starts = spy_on_mh(monkeypatch, laplace_module)
    with pytest.warns(ApproximateSamplerWarning, match="no exact sampler"):
        x = law.sample(3000, rng=5)
    np.testing.assert_allclose(starts[0], np.broadcast_to(public, starts[0].shape), atol=1e-15)
    exact = RiemannianLaplace(Sphere(2), eta, 0.3).sample(3000, rng=6)
    assert stats.ks_2samp(space.dist(eta, x), space.dist(eta, exact)).pvalue > 1e-3


def test_kng_mh_starts_at_the_public_center_and_matches_the_exact_law(monkeypatch):
    space, radius, scale = Sphere(2), 0.5, 0.08
    center = space.random_point(rng=7)
    X = ball_data(space, center, radius, 20, seed=8)
    law = KNGDistribution(space, X, scale, center=center, radius=radius, sampler="mcmc", burn_in=400, thinning=1)
    assert not law.exact
    starts = spy_on_mh(monkeypatch, kng_module)
    with pytest.warns(ApproximateSamplerWarning, match="requested"):
        x = law.sample(2000, rng=9)
    assert len(starts) == 1 and np.all(starts[0] == center)
    assert space.dist(center, law.frechet_mean) > 0.05  # the private mean is elsewhere
    exact = KNGDistribution(space, X, scale, center=center, radius=radius)
    assert exact.exact
    y = exact.sample(2000, rng=10)
    assert stats.ks_2samp(space.dist(law.frechet_mean, x), space.dist(law.frechet_mean, y)).pvalue > 1e-3


def test_spd_eigenvalue_mh_start_does_not_depend_on_the_footpoint(monkeypatch):
    # The eigenvalue chain lives in R^k, where the law does not depend on η: its start (r ≈ 0)
    # must be the same for every footpoint.
    starts = spy_on_mh(monkeypatch, spd_affine_module, burn_in=20)
    space = SPD(5)
    for seed in (11, 12):
        eta = space.random_point(rng=seed)
        with pytest.warns(ApproximateSamplerWarning):
            RiemannianLaplace(space, eta, 0.3, burn_in=20, thinning=1).sample(4, rng=13)
    assert len(starts) == 2 and np.array_equal(starts[0], starts[1])


# ------------------------------------------------- item 6a: flat KNG refuses records outside
@pytest.mark.parametrize("space", [Euclidean(3), SPD(2, metric="log-euclidean")], ids=repr)
def test_flat_kng_refuses_records_outside_the_ball_like_the_mechanism(space):
    center, radius = space.random_point(rng=14), 1.0
    X = ball_data(space, center, radius, 10, seed=15)
    KNGDistribution(space, X, 0.1, center=center, radius=radius)  # inside: accepted
    far = space.exp(center, 3.0 * radius * space.random_unit_tangent(center, rng=16))
    messages = []
    for k in (1, 3):  # one record outside, or three: same error, same text
        D = X.copy()
        D[:k] = far
        with pytest.raises(InvalidDataError, match="outside the public ball") as law_error:
            KNGDistribution(space, D, 0.1, center=center, radius=radius)
        mech = KNGMechanism(space, epsilon=1.0, sensitivity=0.1, center=center, radius=radius)
        with pytest.raises(InvalidDataError, match="outside the public ball") as mech_error:
            mech.randomise(D, rng=17)
        with pytest.raises(InvalidDataError, match="outside the public ball"):
            mech.randomise_coordinates(D, rng=17)
        messages += [str(law_error.value), str(mech_error.value)]
    assert len(set(messages)) == 1


# ---------------------------------------------------- item 8: fallbacks warn, publicly
def test_laplace_on_ai_spd8_warns_once_per_release_with_a_public_message(monkeypatch):
    # SPD(8) at ε = 1, Δ = 0.13: σ = 0.13 = 0.84 σ_max(8), where the eigenvalue rejection's proven
    # acceptance is 1e-5 < 1e-3, so every release runs MH. Neighbouring values give the same text.
    spy_on_mh(monkeypatch, spd_affine_module, burn_in=200, thinning=1)
    space = SPD(8)
    mech = LaplaceMechanism(space, epsilon=1.0, sensitivity=0.13)
    assert not mech.guarantee.exact
    eta, eta2 = space.random_point(rng=18), space.random_point(rng=19)
    first = release_warnings(lambda: mech.randomise(eta, rng=20))
    second = release_warnings(lambda: mech.randomise(eta2, rng=21))
    assert len(first) == 1 and first == second
    text = first[0]
    assert "MH on the k = 8 log-eigenvalues" in text and "< 0.001" in text and "only approximately" in text


def test_kng_run_by_mh_warns_the_same_text_for_neighbouring_datasets(monkeypatch):
    spy_on_mh(monkeypatch, kng_module, burn_in=100, thinning=1)
    # Every built-in curved space has an exact KNG route at every σ now (spheres, hyperbolic
    # spaces and Kendall shapes: the data's own envelope; affine SPD: the tangent route); MH runs
    # when asked for, and its warning must not depend on the data.
    space, radius = SPD(3), 3.0
    center = space.random_point(rng=22)
    D = ball_data(space, center, radius, 10, seed=23)
    D2 = D.copy()
    D2[0] = ball_data(space, center, radius, 1, seed=24)[0]  # replace one record
    mech = KNGMechanism(space, epsilon=1.0, sensitivity=5e-5, center=center, radius=radius, sampler="mcmc")
    assert not mech.guarantee.exact
    first = release_warnings(lambda: mech.randomise(D, rng=25))
    second = release_warnings(lambda: mech.randomise(D2, rng=26))
    assert len(first) == 1 and first == second
    text = first[0]
    assert "Metropolis–Hastings" in text and "requested" in text and "only approximately" in text
    # every number in the text is public: dimension, radius, MH settings
    assert set(re.findall(r"\d+(?:\.\d+)?(?:e[-+]\d+)?", text)) <= {"3", "3.0", "20000", "600"}


def test_kng_whose_laplace_proposal_would_be_mh_is_exact_with_no_warning(monkeypatch):
    # SPD(5) in a ball of radius 1 at Δ = 0.5: KNG's own bound (0.53) passes, but the σ/h Laplace
    # proposal's truncation to the ball has no public bound above the floor (it used to be drawn
    # by MH, once per rejection batch): the exact tangent route runs instead, silently.
    spy_on_mh(monkeypatch, laplace_module, burn_in=30, thinning=1)
    space, I = SPD(5), np.eye(5)
    mech = KNGMechanism(space, epsilon=1.0, sensitivity=0.5, center=I, radius=1.0)
    assert mech._route == "spd-tangent" and mech.guarantee.exact
    D = ball_data(space, I, 1.0, 10, seed=28, spread=0.3)
    D2 = D.copy()
    D2[-1] = I
    assert release_warnings(lambda: mech.randomise(D, rng=29, size=40)) == []
    assert release_warnings(lambda: mech.randomise(D2, rng=30, size=40)) == []


def test_truncated_laplace_below_the_floor_warns_and_exact_releases_do_not():
    # Sphere(1000), σ = 4e-4, in a ball that is not convex (r = 1.6 > π/2): no polar construction,
    # and rejection from a footpoint on the boundary would accept ~1e-25: MH, whatever η.
    space, center = Sphere(1000), np.eye(1001)[0]
    slow = LaplaceMechanism(space, epsilon=2500.0, sensitivity=1.0, center=center, radius=1.6, truncate=True)
    texts = [
        release_warnings(lambda eta=eta: slow.randomise(eta, rng=31))
        for eta in (center, space.exp(center, 1.5 * space.random_unit_tangent(center, rng=32)))
    ]
    assert len(texts[0]) == 1 and texts[0] == texts[1]
    assert "restricted to the ball" in texts[0][0] and "public lower bound" in texts[0][0]
    # exact cases: not a single ApproximateSamplerWarning
    north = np.array([0.0, 0.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", ApproximateSamplerWarning)
        LaplaceMechanism(Sphere(2), epsilon=1.0, sensitivity=0.1).randomise(north, rng=33)
        LaplaceMechanism(SPD(3), epsilon=1.0, sensitivity=0.1).randomise(np.eye(3), rng=34)
        kng = KNGMechanism(Sphere(2), epsilon=1.0, sensitivity=0.01, center=north, radius=0.5)
        assert kng.guarantee.exact
        kng.randomise(ball_data(Sphere(2), north, 0.5, 10, seed=35), rng=36)
        flat = KNGMechanism(Euclidean(2), epsilon=1.0, sensitivity=0.1, center=np.zeros(2), radius=1.0)
        flat.randomise_coordinates(ball_data(Euclidean(2), np.zeros(2), 1.0, 10, seed=37), rng=38)


# ------------------------------------------- messages carry no number computed from private data
def test_error_messages_do_not_depend_on_the_private_values():
    space, center, radius = Sphere(2), np.array([0.0, 0.0, 1.0]), 0.5
    texts = []
    for d in (0.6, 1.2):  # footpoints outside the ball, at different distances
        eta = space.exp(center, d * space.random_unit_tangent(center, rng=39))
        with pytest.raises(InvalidDataError) as error:
            RiemannianLaplace(space, eta, 0.1, center=center, radius=radius)
        texts.append(str(error.value))
    assert texts[0] == texts[1]
    X = ball_data(space, center, radius, 10, seed=40)
    texts = []
    for k in (1, 4):  # curved KNG: records outside the ball, or off the manifold
        D = X.copy()
        D[:k] = space.exp(center, 1.0 * space.random_unit_tangent(center, rng=41))
        with pytest.raises(InvalidDataError) as error:
            KNGDistribution(space, D, 0.1, center=center, radius=radius)
        texts.append(str(error.value))
    assert texts[0] == texts[1]
    texts = []
    for k in (1, 4):
        D = X.copy()
        D[-k:] *= 1.5
        with pytest.raises(NotOnManifoldError) as error:
            KNGDistribution(space, D, 0.1, center=center, radius=radius)
        texts.append(str(error.value))
    assert texts[0] == texts[1] and "index" not in texts[0]


def test_kng_stays_exact_and_silent_when_the_mean_is_not_converged(monkeypatch):
    # The Karcher flow's ConvergenceWarning reports numbers computed from the data: KNG does not
    # emit it, and its rejection stays exact with an inexact mean (offset ‖∇F(x̄')‖).
    space, center, radius = Sphere(2), np.array([0.0, 0.0, 1.0]), 0.5
    X = ball_data(space, center, radius, 20, seed=42, spread=1.5)
    real = kng_module.mean_of_records

    def one_step(space, records, start, **kwargs):
        return real(space, records, start, **{**kwargs, "max_iter": 1})

    monkeypatch.setattr(kng_module, "mean_of_records", one_step)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        law = KNGDistribution(space, X, 0.05, center=center, radius=radius)
    assert not law.mean_info.converged and law._mean_offset > 1e-6
    monkeypatch.undo()
    good = KNGDistribution(space, X, 0.05, center=center, radius=radius)
    x, y = law.sample(3000, rng=43), good.sample(3000, rng=44)
    assert stats.ks_2samp(space.dist(good.frechet_mean, x), space.dist(good.frechet_mean, y)).pvalue > 1e-3


def refusal_texts(call, variants, error=InvalidDataError):
    texts = []
    for value in variants:
        with pytest.raises(error) as caught:
            call(value)
        texts.append(str(caught.value))
    return texts


def spoil(X, k, how):
    """``X`` with ``k`` entries made NaN, or ``k`` records pushed off the manifold."""
    X = np.array(X, dtype=float, copy=True)
    if how == "nan":
        X.reshape(-1)[:k] = np.nan
    elif X.shape[-2:] == (5, 2):  # Kendall configurations: degenerate ones (all landmarks equal)
        X[:k] = 1.0
    else:
        X[:k] *= 1.5
    return X


@pytest.mark.parametrize("how, error", [("nan", InvalidDataError), ("off", NotOnManifoldError)])
def test_validation_messages_of_private_inputs_do_not_count_or_locate_bad_records(how, error):
    # The generic validation says how many entries are NaN and which record is off the manifold:
    # numbers computed from the data. Every mechanism and law gives a fixed text instead.
    sphere, north = Sphere(2), np.array([0.0, 0.0, 1.0])
    X = ball_data(sphere, north, 0.5, 10, seed=45)
    kng = KNGMechanism(sphere, epsilon=1.0, sensitivity=0.01, center=north, radius=0.5)
    extrinsic = ExtrinsicMeanMechanism(sphere, epsilon=1.0, center=north, radius=0.5, n=10)
    shapes = KendallShape(5)
    template = shapes.random_point(rng=46)
    S = ball_data(shapes, template, 0.3, 10, seed=47)
    pointwise = PointwiseShapeLaplace(shapes, epsilon=1.0, center=template, radius=0.3)
    laplace = LaplaceMechanism(sphere, epsilon=1.0, sensitivity=0.1)
    gaussian = TangentGaussianMechanism(epsilon=1.0, delta=1e-6, sensitivity=0.1)
    cases = [
        (lambda D: KNGDistribution(sphere, D, 0.1, center=north, radius=0.5), X),
        (lambda D: kng.randomise(D, rng=0), X),
        (lambda D: extrinsic.release(D, rng=0), X),
        (lambda D: pointwise.release(D, rng=0), S),
        (lambda v: laplace.randomise(v[0], rng=0), X),
        (lambda v: RiemannianLaplace(sphere, v[0], 0.1), X),
        (lambda v: gaussian.randomise(v, rng=0), None),  # a batch of 4 SPD(3) values
    ]
    for call, clean in cases:
        if clean is None and how == "off":  # k matrices that are not positive-definite
            variants = [np.stack([np.diag([1.0, 1.0, -1.0])] * k + [np.eye(3)] * (4 - k)) for k in (1, 3)]
        else:
            variants = [spoil(np.stack([np.eye(3)] * 4) if clean is None else clean, k, how) for k in (1, 2)]
        texts = refusal_texts(call, variants, error)
        assert texts[0] == texts[1], texts
        assert "index" not in texts[0] and "value(s)" not in texts[0]
