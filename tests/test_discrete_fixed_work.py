"""Secure mode's exact discrete samplers under fixed work (timing-safe mode): the random draws of a
sample are the same whatever the noise drawn (counted, not timed; the default's follow the noise),
the law is still the exact discrete Laplace / Gaussian (a 1.5× scale error fails the same test),
each loop's cap fails with its exact tail, and a timing-safe Fréchet mean on a flat space draws the
same on adversarial neighbours with δ_t in its report and charge."""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from geodp.accountant import BudgetAccountant
from geodp.distributions import discrete_fixed
from geodp.distributions.discrete import discrete_gaussian, discrete_laplace
from geodp.errors import InvalidParameterError
from geodp.manifolds import SPD, Euclidean
from geodp.models import PrivateFrechetMean, PrivateMDM
from geodp.release import TIMING_SAFE_DELTA
from geodp.secure import SecureGenerator
from geodp.work import NoAcceptance, fixed_work_section

DEADLINE = 1e-3


class _CountingGenerator:
    """A seeded generator whose calls and drawn values (``integers``, ``bytes``) are counted."""

    def __init__(self, seed):
        self._rng, self.calls, self.values = np.random.default_rng(seed), 0, 0

    def integers(self, *args, **kwargs):
        out = self._rng.integers(*args, **kwargs)
        self.calls, self.values = self.calls + 1, self.values + np.size(out)
        return out

    def bytes(self, length):
        self.calls, self.values = self.calls + 1, self.values + length
        return self._rng.bytes(length)


def _work_per_sample(sample, draws, fixed):
    """(|noise|, calls, values) of ``draws`` samples, each a release of its own (its own section)."""
    rows = []
    for seed in range(draws):
        rng = _CountingGenerator(seed)
        if fixed:
            with fixed_work_section(TIMING_SAFE_DELTA):
                x = sample(rng)
        else:
            x = sample(rng)
        rows.append((abs(int(x)), rng.calls, rng.values))
    return np.array(rows, dtype=float)


SAMPLERS = {
    "laplace": lambda rng: discrete_laplace(Fraction(20), rng, epsilon=1.0),
    "gaussian": lambda rng: discrete_gaussian(Fraction(400), rng, epsilon=1.0),
    # a float ε makes the scale's numerator pass 2^63: the byte path of the uniforms
    "laplace-big-modulus": lambda rng: discrete_laplace(Fraction(1450) / Fraction(0.3), rng, epsilon=0.3),
    "gaussian-big-modulus": lambda rng: discrete_gaussian(Fraction(400.1), rng, epsilon=1.0),
}


@pytest.mark.parametrize("name", SAMPLERS)
def test_fixed_work_draws_the_same_whatever_the_noise(name):
    draws = 600 if name == "laplace" else 300
    fixed = _work_per_sample(SAMPLERS[name], draws, fixed=True)
    assert np.ptp(fixed[:, 0]) > 0  # the noise did vary...
    assert np.ptp(fixed[:, 1]) == 0 and np.ptp(fixed[:, 2]) == 0  # ...and the draws did not


@pytest.mark.parametrize("name", ["laplace", "gaussian"])
def test_the_default_draws_follow_the_noise(name):
    """The control: the default loops' draws vary and grow with |noise| (the channel closed above)."""
    default = _work_per_sample(SAMPLERS[name], 2000, fixed=False)
    assert np.var(default[:, 1]) > 0
    assert stats.spearmanr(default[:, 0], default[:, 1]).statistic > 0.2


def _laplace_pmf(scale):
    def pmf(x):
        q = math.exp(-1.0 / scale)
        return (1 - q) / (1 + q) * np.exp(-np.abs(x) / scale)

    return pmf


def _gaussian_pmf(sigma2):
    z = sum(math.exp(-(y**2) / (2 * sigma2)) for y in range(-2000, 2001))

    def pmf(x):
        return np.exp(-(np.asarray(x, dtype=float) ** 2) / (2 * sigma2)) / z

    return pmf


def _chi_square_p(samples, pmf):
    """p-value of the chi-square test of ``samples`` against ``pmf``, bins of expected count ≥ 10
    (central integers one by one, the tails pooled)."""
    x = np.asarray(samples, dtype=float)
    support = np.arange(-400, 401)
    p = pmf(support)
    keep = p * len(x) >= 10
    low, high = support[keep][0], support[keep][-1]
    observed = [np.sum(x < low)] + [np.sum(x == k) for k in range(low, high + 1)] + [np.sum(x > high)]
    central = p[keep]
    expected = np.concatenate([[(1 - central.sum()) / 2], central, [(1 - central.sum()) / 2]]) * len(x)
    return stats.chisquare(observed, expected).pvalue


TINY = Fraction(1, 2**70)  # moves the moduli past 2^63 (the byte path), the law by ~1e-21
LAWS = [  # (name, sampler, parameter, pmf, draws): the byte path costs ~20 ms a sample, so fewer
    ("laplace", discrete_laplace, Fraction(3), _laplace_pmf(3.0), 1500),
    ("gaussian", discrete_gaussian, Fraction(16), _gaussian_pmf(16.0), 1500),
    ("laplace-big-modulus", discrete_laplace, 3 + TINY, _laplace_pmf(3.0), 400),
    ("gaussian-big-modulus", discrete_gaussian, 16 + TINY, _gaussian_pmf(16.0), 400),
]


@pytest.mark.parametrize(("name", "sampler", "parameter", "pmf", "draws"), LAWS, ids=[law[0] for law in LAWS])
def test_fixed_work_law_is_the_exact_pmf(name, sampler, parameter, pmf, draws):
    with fixed_work_section(1e-6):
        x = sampler(parameter, np.random.default_rng(1), size=draws)
    assert _chi_square_p(x, pmf) > 1e-3


@pytest.mark.parametrize(("name", "sampler", "parameter", "pmf", "draws"), LAWS, ids=[law[0] for law in LAWS])
def test_a_wrong_scale_fails_the_same_test(name, sampler, parameter, pmf, draws):
    """The mutant: the same number of draws at 1.5× the scale (2.25× the Gaussian's σ²)."""
    wrong = parameter * (Fraction(3, 2) if name.startswith("laplace") else Fraction(9, 4))
    x = sampler(wrong, np.random.default_rng(1), size=draws)
    assert _chi_square_p(x, pmf) < 1e-6


def test_the_bernoulli_exp_cap_fails_with_its_exact_tail():
    """With C coins, Bernoulli(exp(−γ)) needs more (K > C) with probability γ^C/C!: at γ = 1, C = 3
    that is 1/6, and at C = 2 it is 1/2 (so a cap one off shows)."""
    for coins, tail in [(2, 1 / 2), (3, 1 / 6)]:
        caps = discrete_fixed._Caps(coins=coins, run=5, trials=5, proposals=5, extra_bits=8, eta=0.1)
        _, failed = discrete_fixed._bernoulli_exp(None, 1, (60_000,), np.random.default_rng(2), caps)
        assert abs(failed.mean() - tail) < 4 * math.sqrt(tail * (1 - tail) / 60_000)


def test_the_unit_run_cap_fails_with_probability_exp_minus_u():
    caps = discrete_fixed._Caps(coins=12, run=2, trials=5, proposals=5, extra_bits=8, eta=0.1)
    _, _, failed = discrete_fixed._run((60_000,), np.random.default_rng(3), caps, np.full(60_000, 3))
    tail = math.exp(-2)
    assert abs(failed.mean() - tail) < 4 * math.sqrt(tail * (1 - tail) / 60_000)


def test_the_gaussian_acceptance_floor_is_below_the_exact_rate():
    """The floor against the exact rate ½(1 − e^−1/t)·e^−σ²/(2t²)·Σ e^−y²/(2σ²) (summed here) and
    against the rate seen in the default sampler's proposals."""
    for sigma2 in (1, 2, 16, 400):
        t = math.isqrt(sigma2) + 1
        exact = (
            0.5
            * (1 - math.exp(-1 / t))
            * math.exp(-sigma2 / (2 * t * t))
            * sum(math.exp(-(y**2) / (2 * sigma2)) for y in range(-5000, 5001))
        )
        floor = discrete_fixed.gaussian_acceptance_floor(Fraction(sigma2))
        assert exact * (1 - 1e-6) < floor <= exact


def test_a_failed_sampler_makes_the_frechet_mean_release_its_public_fallback(monkeypatch):
    """The callers' side of NoAcceptance: after the fixed work, the grid release fails and the
    timing-safe Fréchet mean (and MDM's class means) release the public centre, charged (ε, δ_t)."""
    original = discrete_fixed._first_accepted

    def failing(*args):
        original(*args)  # the whole fixed work first
        raise NoAcceptance

    monkeypatch.setattr(discrete_fixed, "_first_accepted", failing)
    accountant = BudgetAccountant(epsilon=5.0, delta=1e-6)
    model = PrivateFrechetMean(Euclidean(2), epsilon=1.0, center=np.ones(2), radius=1.0, accountant=accountant)
    model.set_params(timing_safe=DEADLINE).fit(np.full((10, 2), 1.5))
    np.testing.assert_array_equal(model.mean_, np.ones(2))
    assert accountant.total_spent == (1.0, TIMING_SAFE_DELTA)
    # PrivateMDM releases each class mean so: every class falls back to the centre
    mdm = PrivateMDM(Euclidean(2), epsilon=1.0, center=np.ones(2), radius=1.0, timing_safe=DEADLINE)
    mdm.fit(np.full((10, 2), 1.5), np.repeat([0, 1], 5))
    np.testing.assert_array_equal(np.asarray(mdm.covmeans_, dtype=float), np.ones((2, 2)))


def test_an_epsilon_past_600_is_refused_under_fixed_work():
    with fixed_work_section(TIMING_SAFE_DELTA), pytest.raises(InvalidParameterError, match="epsilon"):
        discrete_laplace(Fraction(1, 1000), np.random.default_rng(0), epsilon=1000.0)


def _records(space, center, radius, n, seed):
    """Neighbours: one record at the centre vs at the far edge of the ball (the rest shared)."""
    rng = np.random.default_rng(seed)
    near = space.exp(center, 0.3 * radius * space.random_unit_tangent(center, size=n, rng=rng))
    far = near.copy()
    near[0] = center
    far[0] = space.exp(center, radius * space.random_unit_tangent(center, rng=rng))
    return near, far


@pytest.mark.parametrize(
    ("space", "center", "radius", "mechanism", "delta"),
    [
        (Euclidean(2), np.zeros(2), 1.0, "laplace", 0.0),
        (SPD(2, metric="log-euclidean"), np.eye(2), 1.0, "tangent-gaussian", 1e-6),
    ],
    ids=["euclidean-laplace", "spd-log-euclidean-gaussian"],
)
def test_frechet_mean_draws_the_same_on_neighbours_with_the_secure_generator(
    monkeypatch, space, center, radius, mechanism, delta
):
    tally = {"calls": 0, "values": 0}

    def counted(method):
        def wrapper(self, *args, **kwargs):
            out = method(self, *args, **kwargs)
            tally["calls"] += 1
            tally["values"] += len(out) if isinstance(out, bytes) else np.size(out)
            return out

        return wrapper

    monkeypatch.setattr(SecureGenerator, "integers", counted(np.random.Generator.integers))
    monkeypatch.setattr(SecureGenerator, "bytes", counted(np.random.Generator.bytes))
    near, far = _records(space, center, radius, 30, seed=4)
    accountant = BudgetAccountant(epsilon=10.0, delta=1e-3)
    model = PrivateFrechetMean(
        space,
        epsilon=1.0,
        delta=delta,
        center=center,
        radius=radius,
        mechanism=mechanism,
        accountant=accountant,
        timing_safe=DEADLINE,
    )
    work = []
    for X in (near, far, near):
        tally.update(calls=0, values=0)
        model.fit(X)
        work.append(dict(tally))
        assert model.privacy_report_.to_dict()["floating_point_safe"] is True  # the grid ran
    assert work[0] == work[1] == work[2] and work[0]["values"] > 1000
    report = model.privacy_report_.to_dict()
    assert report["timing_delta"] == TIMING_SAFE_DELTA
    # the achieved δ (the zCDP conversion's, at most the requested one) plus δ_t; charged the requested
    assert TIMING_SAFE_DELTA + 0.99 * delta <= report["delta"] <= delta + TIMING_SAFE_DELTA
    assert accountant.total_spent == pytest.approx((3.0, 3 * (delta + TIMING_SAFE_DELTA)), rel=1e-12)
