import numpy as np
import pytest
from scipy import stats

from geodp import PrivacyLeakWarning
from geodp.datasets import contour_landmarks
from geodp.errors import InvalidDataError, InvalidTypeError
from geodp.manifolds import KendallShape, Sphere
from geodp.mechanisms import PointwiseShapeLaplace

SPACE = KendallShape(6)


def shape_data(n=40, seed=0, spread=0.15):
    center = SPACE.random_point(rng=seed)
    return center, SPACE.exp(center, spread * SPACE.random_tangent(center, size=n, rng=seed + 1) / np.sqrt(SPACE.dim))


def test_contour_landmarks_commute_with_similarity_transforms():
    rng = np.random.default_rng(0)
    t = np.sort(rng.uniform(0, 2 * np.pi, 300))
    contour = np.stack([(2 + np.cos(3 * t)) * np.cos(t), (2 + 0.5 * np.sin(2 * t)) * np.sin(t)], axis=1)
    a = 0.7
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    moved = 4.0 * contour @ rot.T + np.array([10.0, -3.0])
    L, M = contour_landmarks(contour, 8), contour_landmarks(moved, 8)
    np.testing.assert_allclose(M, 4.0 * L @ rot.T + np.array([10.0, -3.0]), atol=1e-9)
    # reversing the traversal direction does not change the landmarks (orientation is fixed)
    np.testing.assert_allclose(contour_landmarks(contour[::-1], 8), L, atol=1e-9)
    space = KendallShape(8)
    assert float(space.dist(space.project(L), space.project(M))) < 1e-9
    with pytest.raises(InvalidDataError, match="3 distinct"):
        contour_landmarks(np.ones((5, 2)), 4)


def test_cell_loader_returns_real_configurations():
    pytest.importorskip("geomstats")
    from geodp.datasets import load_cell_shapes

    cells = load_cell_shapes(8)
    assert cells.landmarks.shape == (650, 8, 2) and set(cells.cell_lines) == {"dlm8", "dunn"}
    assert np.all(KendallShape(8).belongs(KendallShape(8).check_points(cells.landmarks)))
    assert len(load_cell_shapes(8, cell_line="dunn", treatment="jasp").landmarks) == 95


def test_sound_pointwise_noise_has_the_stated_laplace_law():
    center, X = shape_data()
    mech = PointwiseShapeLaplace(SPACE, epsilon=1.0, center=center, radius=0.3)
    out = mech.release(X, rng=2, size=4000)
    aligned = SPACE.align(center, SPACE.clip_to_ball(X, center, 0.3)[0]).mean(axis=0)
    z = ((out.configuration - aligned) / mech.scale(40)).reshape(4000, -1)
    assert stats.kstest(z[:, 0], "laplace").pvalue > 1e-3
    assert stats.kstest(z.ravel()[:20000] / 1.5, "laplace").pvalue < 1e-6
    np.testing.assert_allclose(mech.scale(40), 2 * 2 * np.sin(0.15) / 40 * 12 / 1.0)


def test_sound_pointwise_sensitivity_against_adversarial_neighbours():
    # replacing one record moves each coordinate of the aligned, clipped mean by ≤ 2·range/n
    center, X = shape_data(n=10, seed=3)
    mech = PointwiseShapeLaplace(SPACE, epsilon=1.0, center=center, radius=0.3)

    def private_mean(data):
        clipped, _ = SPACE.clip_to_ball(data, center, 0.3)
        return np.clip(SPACE.align(center, clipped), center - mech.ranges, center + mech.ranges).mean(axis=0)

    worst = 0.0
    rng = np.random.default_rng(4)
    for _ in range(300):
        u = SPACE.random_unit_tangent(center, rng=rng)
        a, b = SPACE.exp(center, 0.3 * u), SPACE.exp(center, -0.3 * u)  # antipodal on the boundary
        D1, D2 = X.copy(), X.copy()
        D1[0], D2[0] = a, b
        gap = np.abs(private_mean(D1) - private_mean(D2)) / (2 * mech.ranges / 10)
        worst = max(worst, gap.max())
    assert worst <= 1.0 + 1e-12
    assert worst > 0.5  # the antipodal replacement gets close to the bound


def test_as_published_pointwise_warns_and_uses_data_ranges():
    center, X = shape_data()
    with pytest.warns(PrivacyLeakWarning, match="not differentially private"):
        mech = PointwiseShapeLaplace(SPACE, epsilon=1.0, center=center, radius=0.3, as_published=True)
    assert "not DP" in str(mech.guarantee(40))
    assert mech.release(X, rng=5).shape.shape == (6, 2)


def test_pointwise_bad_input():
    with pytest.raises(InvalidTypeError, match="KendallShape"):
        PointwiseShapeLaplace(Sphere(2), epsilon=1.0, center=[0.0, 0.0, 1.0], radius=0.3)
