"""Secure mode: random_state="secure" (docs/secure.md).

Oracles: closed-form pmfs of the discrete Laplace and discrete Gaussian (normaliser summed
independently), exp(−γ) for the Bernoulli coins, the exact radial law of the sphere Laplace
(geodp.distributions.radial, itself tested against MH elsewhere), exact rational arithmetic
(Fraction) for grid membership, and a direct sum of the 1-D discrete Gaussian's privacy-loss
distribution for the (ε, δ) calibration.
"""

import copy
import json
import math
import sys
import warnings
from fractions import Fraction

import jsonschema
import numpy as np
import pytest
from scipy import stats

from geodp.cli import guarantee_schema, main
from geodp.distributions.discrete import bernoulli_exp, discrete_gaussian, discrete_laplace
from geodp.distributions.radial import RadialLaw
from geodp.errors import ApproximateSamplerWarning, InvalidParameterError, MissingDependencyError
from geodp.manifolds import SPD, Euclidean, KendallShape, Sphere
from geodp.mechanisms import (
    ExtrinsicMeanMechanism,
    KNGMechanism,
    LaplaceMechanism,
    PointwiseShapeLaplace,
    TangentGaussianMechanism,
)
from geodp.mechanisms.grid import GridGaussian, GridLaplace, _chart_integers, zcdp_delta
from geodp.models import PrivateFrechetMean, PrivateGeodesicRegression, PrivateLinearRegression, PrivateMDM
from geodp.secure import SecureGenerator
from geodp.validation import as_generator

NORTH = np.array([0.0, 0.0, 1.0])
LE = SPD(3, metric="log-euclidean")


def _on_grid(values, grid):
    """Every value an exact integer multiple of grid (rational arithmetic)."""
    return all((Fraction(float(v)) / Fraction(grid)).denominator == 1 for v in np.ravel(values))


# --- the switch ------------------------------------------------------------------------------


def test_secure_generator_is_fresh_and_cannot_be_seeded_or_replayed():
    a, b = as_generator("secure"), as_generator("secure")
    assert isinstance(a, SecureGenerator) and isinstance(a, np.random.Generator)
    assert not np.array_equal(a.integers(0, 2**62, 4), b.integers(0, 2**62, 4))
    twin = copy.deepcopy(a)  # a copy is a new key, not the same stream
    assert not np.array_equal(a.integers(0, 2**62, 4), twin.integers(0, 2**62, 4))
    with pytest.raises(InvalidParameterError, match="cannot be seeded"):
        a.bit_generator.seed(0)
    with pytest.raises(InvalidParameterError, match="cannot be seeded"):
        a.bit_generator.state = b.bit_generator.state
    assert all(isinstance(c, SecureGenerator) for c in a.spawn(2))


def test_missing_randomgen_raises_a_typed_error_naming_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "randomgen", None)  # import randomgen now fails
    with pytest.raises(MissingDependencyError, match=r'pip install "geodp\[secure\]"'):
        as_generator("secure")
    with pytest.raises(MissingDependencyError):
        PrivateFrechetMean(Sphere(2), epsilon=1.0, center=NORTH, radius=0.5, random_state="secure").fit(
            np.tile(NORTH, (5, 1))
        )


def _records(space, center, radius, n, seed):
    rng = np.random.default_rng(seed)
    t = radius * rng.uniform(0.1, 0.9, size=n)
    return space.exp(
        center, t.reshape((n,) + (1,) * len(space.point_shape)) * space.random_unit_tangent(center, size=n, rng=rng)
    )


@pytest.mark.parametrize(
    "space, center, radius, mechanism",
    [
        (Sphere(2), NORTH, 0.5, "laplace"),
        (Euclidean(3), np.zeros(3), 1.0, "laplace"),
        (LE, np.eye(3), 1.0, "tangent-gaussian"),
        (LE, np.eye(3), 1.0, "kng"),
    ],
    ids=str,
)
def test_every_estimator_accepts_secure_and_two_releases_differ(space, center, radius, mechanism):
    X = _records(space, center, radius, 30, seed=1)
    fits = [
        PrivateFrechetMean(
            space, epsilon=1.0, delta=1e-6, center=center, radius=radius, mechanism=mechanism, random_state="secure"
        ).fit(X)
        for _ in range(2)
    ]
    assert not np.array_equal(fits[0].mean_, fits[1].mean_)
    report = fits[0].privacy_report_.to_dict()
    assert report["floating_point_safe"] is space.is_flat
    assert (report["grid"] is not None) is space.is_flat
    if space.is_flat:
        assert _on_grid(fits[0].mean_coordinates_, report["grid"])
    labels = np.repeat([0, 1], 15)
    mdm = PrivateMDM(
        space, epsilon=1.0, delta=1e-6, center=center, radius=radius, mechanism=mechanism, random_state="secure"
    ).fit(X, labels)
    assert mdm.privacy_report_.to_dict()["floating_point_safe"] is space.is_flat
    assert not np.array_equal(mdm.covmeans_[0], fits[0].mean_)


def test_regressions_accept_secure_and_say_they_are_not_floating_point_safe():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 10, size=(200, 1))
    y = 1.0 + 0.5 * X[:, 0] + rng.normal(scale=0.5, size=200)
    bounds = dict(bounds_X=(0.0, 10.0), bounds_y=(-4.0, 8.0))
    a, b = (PrivateLinearRegression(epsilon=2.0, random_state="secure", **bounds).fit(X, y) for _ in range(2))
    assert not np.array_equal(a.coef_, b.coef_)
    report = a.privacy_report_.to_dict()
    assert report["floating_point_safe"] is False and "secure generator" in report["construction"]
    t = np.linspace(0.0, 1.0, 40)
    Y = np.column_stack([t - 0.5, 0.2 * t])
    model = PrivateGeodesicRegression(
        Euclidean(2), epsilon=1.0, center=np.zeros(2), radius=1.0, x_bounds=(0.0, 1.0), random_state="secure"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ApproximateSamplerWarning)
        model.fit(t, Y)
    assert model.privacy_report_.to_dict()["floating_point_safe"] is False


def test_every_mechanism_randomise_accepts_secure():
    sphere = LaplaceMechanism(Sphere(2), epsilon=1.0, sensitivity=0.1)
    assert np.allclose(np.linalg.norm(sphere.randomise(NORTH, rng="secure")), 1.0)
    gauss = TangentGaussianMechanism(epsilon=1.0, delta=1e-6, sensitivity=0.2)
    y = gauss.randomise_coordinates(np.eye(3), rng="secure", size=3)
    assert y.shape == (3, 6) and _on_grid(y, gauss.guarantee_for("secure", value=np.eye(3)).grid)
    X = _records(LE, np.eye(3), 1.0, 20, seed=2)
    kng = KNGMechanism(LE, epsilon=1.0, sensitivity=0.1, center=np.eye(3), radius=1.0)
    assert _on_grid(kng.randomise_coordinates(X, rng="secure"), kng.guarantee_for("secure").grid)
    ext = ExtrinsicMeanMechanism(Sphere(2), epsilon=1.0, n=30, center=NORTH, radius=0.5)
    out = ext.release(_records(Sphere(2), NORTH, 0.5, 30, seed=3), rng="secure")
    assert _on_grid(out.ambient, ext.guarantee_for("secure").grid)
    space = KendallShape(5)
    center = space.random_point(rng=0)
    shapes = space.exp(center, 0.1 * space.random_tangent(center, size=50, rng=1))
    pointwise = PointwiseShapeLaplace(space, epsilon=1.0, center=center, radius=0.3)
    released = pointwise.release(shapes, rng="secure", size=2).configuration
    g = pointwise.guarantee(50, rng="secure")
    assert g.floating_point_safe and _on_grid(released, g.grid)
    assert pointwise.guarantee(50).floating_point_safe  # the default (rng=None) is secure mode
    assert not pointwise.guarantee(50, rng=0).floating_point_safe


def _impossible_under_zero_mean(released, scale):
    """Mironov's test (2012), as the audit ran it: under D0 (mean exactly 0) the float path
    releases ``fl(scale·E)`` up to sign, so a value no double ``e`` maps to by ``fl(scale·e)`` can
    only come from D1. Checks the doubles around ``|y|/scale`` (the preimage, if any, is there)."""
    a = np.abs(np.asarray(released, dtype=float).ravel())
    e = a / scale
    hit = np.zeros(a.shape, dtype=bool)
    for _ in range(4):  # e0 and its neighbours up to 3 ulps either side
        e = np.nextafter(e, -np.inf)
    for _ in range(7):
        hit |= (scale * e) == a
        e = np.nextafter(e, np.inf)
    return ~hit & (a > 0)


def test_mironov_attack_certifies_nothing_against_the_default_release():
    """The audit's attack on the Laplace release of a mean: D0's mean is exactly 0, D1's is 0.1
    (one record moved). On the seeded float path many D1 releases are values D0 can never
    produce (ε is broken from the low bits); the default (random_state=None) releases on the
    public grid, which D0's discrete noise covers entirely, so none is."""
    mech = LaplaceMechanism(Euclidean(1), epsilon=1.0, sensitivity=0.2)
    scale = mech.scale
    d0_float = mech.randomise_coordinates(np.zeros(1), rng=0, size=100_000)
    d1_float = mech.randomise_coordinates(np.array([0.1]), rng=1, size=100_000)
    assert not _impossible_under_zero_mean(d0_float, scale).any()  # the test never flags D0 itself
    assert _impossible_under_zero_mean(d1_float, scale).mean() > 0.02  # it breaks the float path
    default = mech.randomise_coordinates(np.array([0.1]), rng=None, size=100_000)
    grid = mech.guarantee_for(None).grid
    assert mech.guarantee_for(None).floating_point_safe and grid is not None
    # D0's default release has the whole grid as its support: a D1 value outside it is impossible.
    assert np.all(np.round(default / grid) * grid == default)
    fitted = PrivateFrechetMean(Euclidean(1), epsilon=1.0, center=np.zeros(1), radius=1.0).fit(np.zeros((10, 1)))
    report = fitted.privacy_report_.to_dict()
    assert report["floating_point_safe"] and _on_grid(fitted.mean_coordinates_, report["grid"])


# --- same laws on curved spaces --------------------------------------------------------------


def test_secure_sphere_laplace_has_the_exact_radial_law_and_a_wider_scale_is_rejected():
    mech = LaplaceMechanism(Sphere(2), epsilon=1.0, sensitivity=0.4)
    rho = Sphere(2).dist(NORTH, mech.randomise(NORTH, rng="secure", size=3000))
    assert stats.kstest(rho, RadialLaw(Sphere(2), mech.scale).cdf).pvalue > 1e-3
    assert stats.kstest(rho, RadialLaw(Sphere(2), 1.5 * mech.scale).cdf).pvalue < 1e-6
    assert "not floating-point safe" in mech.guarantee_for("secure").construction


# --- exact discrete samplers -----------------------------------------------------------------


def _chi_square_pvalue(draws, pmf, cut):
    """χ² of integer draws against pmf on {−cut..cut}, tails merged (pmf summed to 1 here)."""
    support = np.arange(-cut, cut + 1)
    expected = pmf(support)
    tail = 1.0 - expected.sum()
    counts = np.array([np.count_nonzero(draws == k) for k in support] + [np.count_nonzero(np.abs(draws) > cut)])
    return stats.chisquare(counts, len(draws) * np.append(expected, tail)).pvalue


def test_discrete_laplace_matches_its_closed_form_pmf_and_rejects_scale_times_1_5():
    scale = Fraction(5, 2)
    draws = discrete_laplace(scale, np.random.default_rng(3), size=12000).astype(np.int64)

    def pmf(s):
        return lambda k: np.tanh(1.0 / (2.0 * s)) * np.exp(-np.abs(k) / s)  # (e^{1/s} − 1)/(e^{1/s} + 1)

    assert _chi_square_pvalue(draws, pmf(2.5), 10) > 1e-3
    assert _chi_square_pvalue(draws, pmf(3.75), 10) < 1e-6


def test_discrete_gaussian_matches_its_closed_form_pmf_and_rejects_scale_times_1_5():
    draws = discrete_gaussian(Fraction(9, 1), np.random.default_rng(4), size=8000).astype(np.int64)

    def pmf(sigma2):
        ks = np.arange(-200, 201)
        norm = np.exp(-(ks**2) / (2.0 * sigma2)).sum()
        return lambda k: np.exp(-(np.asarray(k) ** 2) / (2.0 * sigma2)) / norm

    assert _chi_square_pvalue(draws, pmf(9.0), 8) > 1e-3
    assert _chi_square_pvalue(draws, pmf(9.0 * 1.5**2), 8) < 1e-6


@pytest.mark.parametrize("gamma", [Fraction(0), Fraction(1, 3), Fraction(1), Fraction(7, 3), Fraction(9, 2)])
def test_bernoulli_exp_has_frequency_exp_minus_gamma(gamma):
    n = 6000
    hits = int(bernoulli_exp(gamma, np.random.default_rng(5), size=n).sum())
    assert stats.binomtest(hits, n, math.exp(-gamma)).pvalue > 1e-3


def test_samplers_take_uniform_integers_beyond_64_bits():
    huge = Fraction(1, 2**70 + 1)  # denominators past int64: bytes-based uniform integers
    hits = int(bernoulli_exp(huge * (2**70 + 1) / 2, np.random.default_rng(6), size=3000).sum())  # γ = 1/2
    assert stats.binomtest(hits, 3000, math.exp(-0.5)).pvalue > 1e-3


# --- grid releases ---------------------------------------------------------------------------


@pytest.mark.parametrize("far", [0.0, 1e15, 1e300])
def test_grid_release_is_exact_far_from_the_origin(far):
    value = np.array([far, -far, 1.0 / 3.0])
    for mech in (
        LaplaceMechanism(Euclidean(3), epsilon=1.0, sensitivity=0.01),
        TangentGaussianMechanism(epsilon=1.0, delta=1e-6, sensitivity=0.01, space=Euclidean(3)),
    ):
        grid = mech.guarantee_for("secure").grid
        y = mech.randomise_coordinates(value, rng="secure", size=20)
        assert np.all(np.isfinite(y)) and _on_grid(y, grid)
        # the statistic survives: noise of scale ~ the mechanism's, or the float spacing far out
        assert np.all(np.abs(y - value) <= 40 * mech.guarantee_for("secure").scale + 2 * np.spacing(np.abs(value)))


def test_grid_release_noise_has_the_stated_scale():
    mech = LaplaceMechanism(Euclidean(2), epsilon=1.0, sensitivity=0.5)
    g = mech.guarantee_for("secure")
    y = mech.randomise_coordinates(np.zeros(2), rng="secure", size=3000)
    # per-coordinate discrete Laplace with scale t = g.scale: variance ≈ 2t² (grid ≪ t)
    var = y.var(axis=0)
    assert np.all(np.abs(var / (2 * g.scale**2) - 1) < 0.15)
    # coordinate-wise ℓ1 calibration: t = (⌊√d·Δ/g⌋ + d)·g/ε, checked by hand for d = 2
    assert g.scale == (math.floor(math.sqrt(2) * 0.5 / g.grid) + 2) * g.grid


# --- calibration -----------------------------------------------------------------------------


def _exact_delta_1d(sigma2, shift, epsilon):
    """δ(ε) of N_Z(0, σ²) vs N_Z(shift, σ²): Σ_z max(0, P(z) − e^ε Q(z)), summed directly."""
    half = int(60 * math.sqrt(sigma2)) + shift
    z = np.arange(-half, half + 1, dtype=float)
    log_p = -(z**2) / (2 * sigma2)
    log_q = -((z - shift) ** 2) / (2 * sigma2)
    log_norm = np.logaddexp.reduce(log_p)
    return float(np.sum(np.maximum(0.0, np.exp(log_p - log_norm) - np.exp(epsilon + log_q - log_norm))))


@pytest.mark.parametrize("sigma2, shift, epsilon", [(4, 1, 1.0), (25, 3, 0.5), (100, 4, 2.0)])
def test_zcdp_conversion_bounds_the_exact_discrete_gaussian_loss(sigma2, shift, epsilon):
    exact = _exact_delta_1d(sigma2, shift, epsilon)
    bound = zcdp_delta(shift**2 / (2 * sigma2), epsilon)
    assert exact <= bound <= 10 * exact  # sound; the zCDP route is loose by a factor < 10 in δ here


def test_grid_gaussian_meets_the_requested_delta_by_direct_summation():
    noise = GridGaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0, dim=1, nominal_scale=4.0)
    assert noise.achieved_delta <= 1e-5
    worst_shift = math.floor(noise.l2_units)  # |m − m'| ≤ Δ/g + 1 in grid units
    g, rng = noise.grid, np.random.default_rng(12)
    for c in (rng.integers(-(10**6), 10**6, 500) + 0.5 + rng.uniform(-1e-3, 1e-3, 500)) * g:
        assert (
            abs(int(_chart_integers(np.array([c + 1.0]), g)[0] - _chart_integers(np.array([c]), g)[0])) <= worst_shift
        )
    assert _exact_delta_1d(noise.sigma2_units, worst_shift, 1.0) <= noise.achieved_delta
    guarantee = TangentGaussianMechanism(epsilon=1.0, delta=1e-5, sensitivity=1.0, space=Euclidean(1)).guarantee_for(
        "secure"
    )
    assert guarantee.delta <= 1e-5 and guarantee.epsilon == 1.0


def test_grid_laplace_privacy_loss_is_at_most_epsilon_exactly():
    noise = GridLaplace(epsilon=0.7, sensitivity=0.3, dim=5)
    # the worst integer shift in ℓ1 is D₁; the loss D₁/t must be ≤ ε in exact arithmetic
    assert Fraction(noise.l1_units) / noise.scale_units <= Fraction(0.7)
    # D₁ must cover the real rounding: statistics Δ apart in ℓ2 along (1, …, 1)/√d (the ℓ1-widest
    # direction), from half-grid offsets where rounding moves each coordinate the most
    rng, g = np.random.default_rng(11), noise.grid
    direction = np.ones(5) / math.sqrt(5)
    for _ in range(2000):
        c = (rng.integers(-(10**6), 10**6, 5) + 0.5 + rng.uniform(-1e-3, 1e-3, 5)) * g
        shift = _chart_integers(c + 0.3 * direction, g) - _chart_integers(c, g)
        assert sum(abs(int(v)) for v in shift) <= noise.l1_units
    x = Fraction(0.3) / Fraction(noise.grid)
    assert noise.l1_units >= math.sqrt(5) * x + 5 - 1  # covers √d·Δ/g + d up to the integer floor


# --- guarantee and schema --------------------------------------------------------------------


def test_secure_release_cli_writes_a_schema_valid_floating_point_safe_guarantee(tmp_path):
    data = tmp_path / "x.npy"
    np.save(data, _records(Euclidean(3), np.zeros(3), 1.0, 20, seed=8))
    args = [
        "release",
        str(data),
        "--space",
        "euclidean:3",
        "--center",
        "origin",
        "--radius",
        "1.0",
        "--epsilon",
        "1.0",
        "--output",
        str(tmp_path / "m.npy"),
        "--guarantee",
        str(tmp_path / "m.json"),
    ]
    assert main(args + ["--secure"]) == 0
    record = json.loads((tmp_path / "m.json").read_text(encoding="utf-8"))
    jsonschema.validate(record, guarantee_schema(), cls=jsonschema.Draft202012Validator)
    assert record["report"]["floating_point_safe"] is True
    assert _on_grid(np.load(tmp_path / "m.npy"), record["report"]["grid"])
    assert "fp-safe     : yes" in record["report_text"]
    assert (
        main(
            args[:-4]
            + ["--seed", "1", "--output", str(tmp_path / "n.npy"), "--guarantee", str(tmp_path / "n.json"), "--secure"]
        )
        != 0
    )


def test_bit_generator_spawn_keys_children_from_fresh_os_entropy():
    # randomgen's own spawn would key the children from the visible seed_seq.
    from geodp.secure import SecureGenerator

    bits = SecureGenerator().bit_generator
    children = bits.spawn(2)
    keys = [tuple(np.ravel(c.state["state"]["keysetup"]).tolist()) for c in children]
    parent = tuple(np.ravel(bits.state["state"]["keysetup"]).tolist())
    assert type(children[0]) is type(bits) and keys[0] != keys[1] and parent not in keys
    with pytest.raises(InvalidParameterError):
        children[0].state = bits.state


def test_as_published_extrinsic_is_never_floating_point_safe():
    import warnings

    from geodp.manifolds import Sphere
    from geodp.mechanisms.extrinsic import ExtrinsicMeanMechanism

    north = np.array([0.0, 0.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        published = ExtrinsicMeanMechanism(Sphere(2), epsilon=1.0, center=north, radius=0.5, n=10, as_published=True)
    sound = ExtrinsicMeanMechanism(Sphere(2), epsilon=1.0, center=north, radius=0.5, n=10)
    assert sound.guarantee_for("secure").floating_point_safe
    assert not published.guarantee_for("secure").floating_point_safe


def test_projection_after_the_grid_step_is_reported():
    from geodp.manifolds import SPD
    from geodp.models import PrivateFrechetMean

    space = SPD(2, metric="log-euclidean")
    model = PrivateFrechetMean(
        space, epsilon=1.0, center=np.eye(2), radius=1.0, project_to_ball=True, random_state="secure"
    ).fit(space.random_point(20, rng=0))
    assert any("off the grid" in a for a in model.privacy_report_.to_dict()["assumptions"])
