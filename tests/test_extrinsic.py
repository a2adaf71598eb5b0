import numpy as np
import pytest
from scipy import stats

from geodp import PrivacyLeakWarning
from geodp.errors import InvalidDataError, InvalidParameterError
from geodp.frechet import frechet_mean
from geodp.manifolds import SPD, Sphere
from geodp.mechanisms import ExtrinsicMeanMechanism
from geodp.sensitivity import extrinsic_radius


def sphere_data(n=50, seed=0):
    space, north = Sphere(2), np.array([0.0, 0.0, 1.0])
    return space, north, space.exp(north, space.random_tangent(north, size=n, rng=seed) * 0.4)


def test_sphere_extrinsic_noise_has_the_l2_laplace_law():
    space, north, X = sphere_data()
    mech = ExtrinsicMeanMechanism(space, epsilon=1.0, center=north, radius=0.5, n=50)
    assert mech.sensitivity == pytest.approx(2 * 2 * np.sin(0.25) / 50, rel=1e-14)
    out = mech.release(X, rng=1, size=20000)
    clipped, _ = space.clip_to_ball(X, north, 0.5)
    noise = np.linalg.norm(out.ambient - clipped.mean(axis=0), axis=-1)
    assert stats.kstest(noise, stats.gamma(3, scale=mech.scale).cdf).pvalue > 1e-3
    assert stats.kstest(noise, stats.gamma(3, scale=1.5 * mech.scale).cdf).pvalue < 1e-6
    np.testing.assert_allclose(np.linalg.norm(out.value, axis=-1), 1.0)
    assert out.off_manifold_share == 1.0


def test_sphere_chord_radius_is_the_largest_ambient_distance_in_the_ball():
    space, north = Sphere(3), np.array([0.0, 0.0, 0.0, 1.0])
    r = 0.9
    boundary = space.exp(north, r * space.random_unit_tangent(north, size=1000, rng=2))
    np.testing.assert_allclose(np.linalg.norm(boundary - north, axis=-1), extrinsic_radius(space, r), rtol=1e-12)


def test_spd_off_manifold_share_is_counted_independently():
    space = SPD(2)
    X = space.exp(np.eye(2), space.random_tangent(np.eye(2), size=20, rng=3) * 0.5)
    mech = ExtrinsicMeanMechanism(space, epsilon=0.5, center=np.eye(2), radius=1.0, n=20)
    out = mech.release(X, rng=4, size=4000)
    not_pd = np.linalg.eigvalsh(out.ambient)[:, 0] <= 0
    assert out.off_manifold_share == pytest.approx(not_pd.mean())
    assert 0.0 < out.off_manifold_share < 1.0
    assert np.all(space.belongs(out.value))
    # ambient noise is measured in the Frobenius norm
    noise = np.linalg.norm(out.ambient - space.clip_to_ball(X, np.eye(2), 1.0)[0].mean(axis=0), axis=(1, 2))
    assert stats.kstest(noise, stats.gamma(3, scale=mech.scale).cdf).pvalue > 1e-3


def test_as_published_variant_warns_and_noises_the_frechet_mean():
    space, north, X = sphere_data()
    with pytest.warns(PrivacyLeakWarning, match="reproductions"):
        mech = ExtrinsicMeanMechanism(space, epsilon=1.0, center=north, radius=0.5, n=50, as_published=True)
    np.testing.assert_allclose(mech.summary(X), frechet_mean(space, space.clip_to_ball(X, north, 0.5)[0]))
    assert "no DP proof" in str(mech.guarantee)


def test_extrinsic_bad_input():
    space, north, X = sphere_data()
    with pytest.raises(InvalidParameterError, match="identity"):
        ExtrinsicMeanMechanism(SPD(2), epsilon=1.0, center=2 * np.eye(2), radius=1.0, n=5)
    mech = ExtrinsicMeanMechanism(space, epsilon=1.0, center=north, radius=0.5, n=10)
    with pytest.raises(InvalidDataError, match="n=10"):
        mech.release(X)
