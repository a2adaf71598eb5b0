"""Log-Euclidean SPD far out: the Fréchet-mean statistic stays in the chart from the records to
the noise, so neighbouring datasets give statistics at most Δ = 2r/n apart however large the
public radius (the old path mapped the chart mean to a matrix and back, which destroys the
small eigenvalues once the log-eigenvalues spread beyond ~36: 138·Δ at r = 30 on SPD(3))."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest

import geodp.mechanisms.grid as grid
from geodp.distributions.gaussian import TangentGaussian
from geodp.distributions.laplace import RiemannianLaplace
from geodp.errors import NotOnManifoldError
from geodp.manifolds import SPD
from geodp.mechanisms import KNGMechanism, LaplaceMechanism
from geodp.models import PrivateFrechetMean

# An adversarial replace-one pair found by an independent audit (SPD(3), chart coordinates):
# n − 1 records at Exp(a), the replaced record at the ball's edge in direction −u, its
# replacement at +u. The mean's log-eigenvalues spread far beyond 36 at r = 30.
_A = np.array(
    [
        5.308264623534492,
        -0.05028049604390842,
        8.468749834050945,
        26.621850795629143,
        5.697891282287078,
        0.3965897790576937,
    ]
)
_U = np.array(
    [
        -0.6307273742689082,
        -0.07639168482378049,
        0.5590604098052566,
        0.5145830288491711,
        -0.08737151179199606,
        0.10662679482008972,
    ]
)


def _pair(space, radius, n, a=_A, u=_U):
    u = u / np.linalg.norm(u)
    common = np.repeat(space.from_coordinates(a)[None], n - 1, axis=0)
    d0 = np.concatenate([common, space.from_coordinates(-radius * u * (1 - 1e-9))[None]])
    d1 = d0.copy()
    d1[-1] = space.from_coordinates(radius * u * (1 - 1e-9))
    return d0, d1


@pytest.fixture
def fed(monkeypatch):
    """Spy on the statistic handed to the noise, whatever path the model takes: the footpoint's
    chart coordinates of the continuous laws (on the space they were built on) and the
    coordinates the secure grid rounds."""
    seen = []

    def spy(method, statistic):
        def wrapped(self, *args, **kwargs):
            seen.append(np.array(statistic(self, *args), dtype=float))
            return method(self, *args, **kwargs)

        return wrapped

    monkeypatch.setattr(
        RiemannianLaplace,
        "sample_coordinates",
        spy(RiemannianLaplace.sample_coordinates, lambda self, *a: self.space.to_coordinates(self.footpoint)),
    )
    monkeypatch.setattr(
        TangentGaussian,
        "sample_coordinates",
        spy(TangentGaussian.sample_coordinates, lambda self, *a: self.footpoint_coordinates),
    )
    monkeypatch.setattr(grid._GridNoise, "release", spy(grid._GridNoise.release, lambda self, c, *a: c))
    return seen


@pytest.mark.filterwarnings("ignore::geodp.errors.NumericalWarning")
@pytest.mark.parametrize("mechanism", ["laplace", "tangent-gaussian", "kng"])
@pytest.mark.parametrize("random_state", [0, "secure"])
def test_adversarial_pair_at_r30_is_refused_or_collapses_to_the_centre(fed, mechanism, random_state):
    """The audit's pair has log-eigenvalues spread beyond what float64 determines in a rotated
    basis (condition number above 1/(k·eps)): such records are singular up to rounding, so they
    are invalid (issue 21). Refused after the charge with the fixed text, or replaced by the
    public centre, in which case both datasets give the same statistic."""
    space, radius, n = SPD(3, metric="log-euclidean"), 30.0, 10_000
    d0, d1 = _pair(space, radius, n)
    assert space.invalid_records(d0)[[0, -1]].all() and space.invalid_records(d1)[-1]
    kwargs = dict(
        epsilon=1.0,
        delta=1e-6 if mechanism == "tangent-gaussian" else 0.0,
        center=np.eye(3),
        radius=radius,
        mechanism=mechanism,
        random_state=random_state,
    )
    with pytest.raises(NotOnManifoldError, match="singular"):
        PrivateFrechetMean(space, **kwargs).fit(d0)
    for data in (d0, d1):
        model = PrivateFrechetMean(space, on_invalid="center", **kwargs).fit(data)
    assert len(fed) == 2
    assert model.sensitivity_ == pytest.approx(2 * radius / n, rel=1e-15)
    assert np.array_equal(fed[0], fed[1])
    np.testing.assert_allclose(fed[1], np.zeros(space.dim), atol=1e-12)  # every record at the centre


def test_largest_accepted_radius(fed):
    # r = 200 (SPD's max_representable_radius) is accepted; records at e^±200 are beyond what float64
    # determines and are replaced by the centre, so the release stays in the ball.
    space, radius, n = SPD(2, metric="log-euclidean"), 200.0, 1000
    a, u = np.array([60.0, -80.0, 50.0]), np.array([0.6, -0.8, 0.0])
    for random_state in (1, "secure"):
        fed.clear()
        for data in _pair(space, radius, n, a, u):
            with warnings.catch_warnings():  # the release's matrix may overflow: it says so
                warnings.simplefilter("ignore")
                model = PrivateFrechetMean(
                    space,
                    epsilon=1.0,
                    center=np.eye(2),
                    radius=radius,
                    random_state=random_state,
                    project_to_ball=True,
                    on_invalid="center",
                ).fit(data)
        assert np.linalg.norm(fed[0] - fed[1]) <= model.sensitivity_ * (1 + 1e-9)
        assert np.linalg.norm(model.mean_coordinates_) <= radius * (1 + 1e-12)


def test_record_coordinates_do_not_depend_on_the_other_records():
    # A record's chart coordinates are a function of that record alone (bit for bit): with an
    # asymmetric companion (symmetric part taken for it, not for the others) or a companion
    # outside [1e-150, 1e150] (scaled by a power of two, not the others).
    space = SPD(3, metric="log-euclidean")
    rng = np.random.default_rng(3)
    base = space.from_coordinates(rng.standard_normal((4, space.dim)) * 5.0)
    assert not space.invalid_records(base).any()
    base[1, 0, 1] *= 1 + 2e-16  # rounding-level asymmetry: decomposed as given
    alone = np.concatenate([space._record_coordinates(base[i : i + 1])[0] for i in range(4)])
    asym = space.from_coordinates(rng.standard_normal(space.dim))
    asym[0, 2] += 1e-10
    huge = np.eye(3) * 1e200
    for companion in (asym, huge):
        batch = np.concatenate([base, companion[None]])
        together = space._record_coordinates(batch)[0][:4]
        assert np.array_equal(together, alone)


def test_randomise_chart_is_the_law_in_the_chart():
    # Laplace in R^d (d = 3): the distance to the statistic is Gamma(3, σ); mean 3σ, far out.
    space = SPD(2, metric="log-euclidean")
    mech = LaplaceMechanism(space, epsilon=2.0, sensitivity=0.5)
    far = np.array([40.0, -40.0, 10.0])
    draws = mech.randomise_chart(far, rng=0, size=20_000)
    dist = np.linalg.norm(draws - far, axis=1)
    sigma = 0.25
    assert abs(dist.mean() - 3 * sigma) < 4 * math.sqrt(3) * sigma / math.sqrt(20_000)
    secure = mech.randomise_chart(far, rng="secure", size=3)
    g = mech.guarantee_for("secure").grid
    assert np.array_equal(secure / g, np.round(secure / g))


def test_kng_mean_is_taken_in_the_chart():
    space = SPD(2, metric="log-euclidean")
    c = np.array([[10.0, -10.0, 0.0], [-10.0, 15.0, 3.0]])
    mech = KNGMechanism(space, epsilon=1.0, sensitivity=0.1, center=np.eye(2), radius=30.0)
    coords = space._record_coordinates(space.from_coordinates(c))[0]
    expected = [float((Fraction(coords[0, j]) + Fraction(coords[1, j])) / 2) for j in range(3)]
    assert np.array_equal(mech.mean_coordinates(space.from_coordinates(c)), expected)
