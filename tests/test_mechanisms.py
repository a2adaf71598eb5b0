import numpy as np
import pytest
from scipy import stats

from geodp.calibration import gaussian_sigma
from geodp.errors import AssumptionError, InvalidDataError, InvalidParameterError, InvalidTypeError, NotOnManifoldError
from geodp.manifolds import SPD, Euclidean
from geodp.mechanisms import LaplaceMechanism, TangentGaussianMechanism

LE = SPD(3, metric="log-euclidean")


def test_laplace_scale_guarantee_and_output_law():
    mech = LaplaceMechanism(LE, epsilon=0.5, sensitivity=0.1)
    assert mech.scale == pytest.approx(0.2)
    g = mech.guarantee
    assert (g.epsilon, g.delta, g.sensitivity, g.scale, g.exact) == (0.5, 0.0, 0.1, mech.scale, True)
    assert any("homogeneous" in a for a in g.assumptions)
    eta = LE.random_point(rng=0)
    out = mech.randomise(eta, rng=1, size=20000)
    assert stats.kstest(LE.dist(eta, out), stats.gamma(a=LE.dim, scale=0.2).cdf).pvalue > 1e-3


def test_laplace_privacy_loss_is_bounded_by_epsilon_for_neighbours_at_distance_delta():
    # log p(x|η) − log p(x|η') = (ρ(η',x) − ρ(η,x))/σ ≤ ρ(η,η')/σ = ε when ρ(η,η') = Δ;
    # normalisers are equal (homogeneous space). Check over adversarial x on the geodesic too.
    mech = LaplaceMechanism(LE, epsilon=0.7, sensitivity=0.3)
    eta = LE.random_point(rng=2)
    v = LE.random_unit_tangent(eta, rng=3)
    eta2 = LE.exp(eta, 0.3 * v)
    xs = np.concatenate([LE.random_point(2000, rng=4), LE.exp(eta, np.linspace(-3, 3, 61)[:, None, None] * v)])
    loss = mech.distribution(eta).log_density(xs) - mech.distribution(eta2).log_density(xs)
    assert loss.max() <= 0.7 + 1e-9 and loss.max() > 0.7 - 1e-6


def test_laplace_refuses_improper_laws_and_off_manifold_values():
    with pytest.raises(AssumptionError, match="sigma_max|σ_max"):
        LaplaceMechanism(SPD(3), epsilon=1.0, sensitivity=1.0)  # not normalisable, no ball given
    with pytest.raises(InvalidTypeError):
        LaplaceMechanism("R^2", epsilon=1.0, sensitivity=1.0)
    mech = LaplaceMechanism(LE, epsilon=1.0, sensitivity=1.0)
    with pytest.raises(NotOnManifoldError):
        mech.randomise(-np.eye(3))
    with pytest.raises(InvalidParameterError, match="epsilon"):
        LaplaceMechanism(LE, epsilon=0, sensitivity=1.0)


def test_tangent_gaussian_scale_law_and_space_inference():
    mech = TangentGaussianMechanism(epsilon=0.8, delta=1e-6, sensitivity=0.2)
    assert mech.scale == gaussian_sigma(0.8, 1e-6, 0.2)
    assert mech.guarantee.delta == 1e-6 and "Balle" in mech.guarantee.scale_rule
    m = SPD(4).random_point(rng=5)
    out = mech.randomise(np.repeat(m[None], 20000, axis=0), rng=6)
    le = SPD(4, metric="log-euclidean")
    assert stats.kstest(le.dist(m, out) ** 2 / mech.scale**2, stats.chi2(df=10).cdf).pvalue > 1e-3
    euclid = TangentGaussianMechanism(epsilon=0.8, delta=1e-6, sensitivity=0.2, space=Euclidean(2))
    assert euclid.randomise(np.zeros(2), rng=7).shape == (2,)


@pytest.mark.parametrize(
    "kwargs,error",
    [
        (dict(epsilon=1.0, delta=0.0, sensitivity=1.0), InvalidParameterError),
        (dict(epsilon=1.0, delta=1e-6, sensitivity=1.0, calibration="classical"), InvalidParameterError),
        (dict(epsilon=1.0, delta=1e-6, sensitivity=1.0, calibration="moments"), InvalidParameterError),
        (dict(epsilon=1.0, delta=1e-6, sensitivity=1.0, space=SPD(2)), InvalidParameterError),
    ],
)
def test_tangent_gaussian_bad_parameters(kwargs, error):
    with pytest.raises(error):
        TangentGaussianMechanism(**kwargs)


def test_tangent_gaussian_bad_values():
    mech = TangentGaussianMechanism(epsilon=0.5, delta=1e-6, sensitivity=1.0)
    with pytest.raises(InvalidDataError, match="k×k"):
        mech.randomise(np.ones((2, 3)))
    with pytest.raises(NotOnManifoldError):
        mech.randomise(np.array([[1.0, 2.0], [0.0, 1.0]]))
