import numpy as np
import pytest

from geodp.errors import InvalidDataError, InvalidParameterError, NotOnManifoldError
from geodp.manifolds import SPD, AffineInvariantSPD, Euclidean, Hyperbolic, KendallShape, LogEuclideanSPD, Sphere
from geodp.manifolds import matrix_functions as mf
from manifold_contract import ManifoldContract


class TestEuclidean(ManifoldContract):
    space = Euclidean(4)
    tangent_scale = 3.0


class TestAffineSPD(ManifoldContract):
    space = SPD(4)
    tangent_scale = 2.0

    def off_manifold_point(self):
        return np.diag([1.0, 1.0, 1.0, -1e-3])


class TestLogEuclideanSPD(ManifoldContract):
    space = SPD(4, metric="log-euclidean")
    tangent_scale = 2.0

    def off_manifold_point(self):
        a = np.eye(4)
        a[0, 1] = 0.5  # not symmetric
        return a


def test_spd_factory_returns_subclasses_and_rejects_unknown_metric():
    assert isinstance(SPD(3), AffineInvariantSPD) and isinstance(SPD(3), SPD)
    assert isinstance(SPD(3, metric="log-euclidean"), LogEuclideanSPD)
    with pytest.raises(InvalidParameterError, match="metric"):
        SPD(3, metric="bures")
    with pytest.raises(InvalidParameterError, match="k must be a positive integer"):
        SPD(0)


def test_vecd_is_an_isometry():
    s = mf.sym(np.random.default_rng(0).standard_normal((10, 5, 5)))
    np.testing.assert_allclose(np.linalg.norm(mf.vecd(s), axis=-1), np.linalg.norm(s, axis=(-2, -1)), rtol=1e-13)
    np.testing.assert_allclose(mf.invvecd(mf.vecd(s), 5), s, atol=1e-15)


def test_log_euclidean_differential_matches_finite_differences():
    rng = np.random.default_rng(1)
    x = SPD(4).random_point(rng=rng)
    v = mf.sym(rng.standard_normal((4, 4)))
    w, u = mf.eigh(x)
    h = 1e-6
    fd = (mf.logm(x + h * v) - mf.logm(x - h * v)) / (2 * h)
    np.testing.assert_allclose(mf.differential_log(w, u, v), fd, atol=1e-8)


def test_log_divided_difference_handles_equal_and_close_eigenvalues():
    w = np.array([2.0, 2.0, 2.0 * (1 + 1e-13), 5.0])
    g = mf.log_divided_difference(w)
    assert np.all(np.isfinite(g))
    np.testing.assert_allclose(g[0, 1], 0.5, rtol=1e-12)
    np.testing.assert_allclose(g[0, 2], 0.5, rtol=1e-9)
    np.testing.assert_allclose(g[0, 3], (np.log(2.0) - np.log(5.0)) / (2.0 - 5.0), rtol=1e-12)


def test_affine_distance_is_congruence_invariant():
    space = SPD(5)
    rng = np.random.default_rng(2)
    x, y = space.random_point(20, rng=rng), space.random_point(20, rng=rng)
    a = rng.standard_normal((5, 5))
    np.testing.assert_allclose(space.dist(mf.congruence(a, x), mf.congruence(a, y)), space.dist(x, y), rtol=1e-8)


def test_spd_belongs_is_dtype_aware():
    space = SPD(3)
    x = np.eye(3)
    x[0, 1] += 1e-10  # float64 rounding-level asymmetry is accepted
    assert space.belongs(x)
    x32 = np.eye(3, dtype=np.float32)
    x32[0, 1] += 1e-5  # a float32 rounding-level asymmetry is accepted for float32 input
    assert space.belongs(x32)
    assert not space.belongs(x.astype(np.float64) + np.diag([0, 0, -2.0]))


def test_check_points_reports_count_and_hint():
    space = SPD(2)
    # diag(1, -1e-6) is negative beyond rounding (diag(1, 0) is now accepted: rounding level)
    X = np.stack([np.eye(2), -np.eye(2), np.eye(2), np.diag([1.0, -1e-6])])
    with pytest.raises(NotOnManifoldError, match=r"2 point\(s\) of X .*first at batch index \(1,\).*ridge"):
        space.check_points(X)


# --------------------------------------------------------------------------- independent oracles
def test_affine_and_log_euclidean_distances_match_pyriemann():
    pytest.importorskip("pyriemann")
    from pyriemann.geometry.distance import distance_logeuclid, distance_riemann

    rng = np.random.default_rng(3)
    X, Y = SPD(6).random_point(50, rng=rng), SPD(6).random_point(50, rng=rng)
    np.testing.assert_allclose(SPD(6).dist(X, Y), distance_riemann(X, Y), rtol=1e-10)
    np.testing.assert_allclose(SPD(6, metric="log-euclidean").dist(X, Y), distance_logeuclid(X, Y), rtol=1e-10)


def test_affine_exp_log_transport_match_pyriemann():
    pytest.importorskip("pyriemann")
    from pyriemann.geometry.geodesic import geodesic_riemann
    from pyriemann.geometry.tangentspace import exp_map_riemann, log_map_riemann

    rng = np.random.default_rng(4)
    space = SPD(5)
    p, Y = space.random_point(rng=rng), space.random_point(30, rng=rng)
    # With C12/Cm12=True pyRiemann's maps take and return full tangent vectors at p.
    v = space.log(p, Y)
    np.testing.assert_allclose(v, log_map_riemann(Y, p, C12=True), atol=1e-10)
    np.testing.assert_allclose(space.exp(p, v), exp_map_riemann(v, p, Cm12=True), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(space.exp(p, 0.3 * v), geodesic_riemann(p, Y, 0.3), rtol=1e-8, atol=1e-10)


def _geomstats_spd(k, metric):
    geomstats_spd = pytest.importorskip("geomstats.geometry.spd_matrices")
    space = geomstats_spd.SPDMatrices(k, equip=False)
    space.equip_with_metric(
        geomstats_spd.SPDAffineMetric if metric == "affine" else geomstats_spd.SPDLogEuclideanMetric
    )
    return space


@pytest.mark.parametrize("metric", ["affine", "log-euclidean"])
def test_spd_geometry_matches_geomstats(metric):
    rng = np.random.default_rng(5)
    ours = SPD(4, metric=metric)
    theirs = _geomstats_spd(4, metric).metric
    X, Y = ours.random_point(20, rng=rng), ours.random_point(20, rng=rng)
    v = ours.log(X, Y)
    np.testing.assert_allclose(ours.dist(X, Y), theirs.dist(X, Y), rtol=1e-8)
    np.testing.assert_allclose(v, theirs.log(Y, X), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(ours.exp(X, 0.5 * v), theirs.exp(0.5 * v, X), rtol=1e-7, atol=1e-9)
    u = ours.random_tangent(X, rng=6)
    np.testing.assert_allclose(ours.inner(X, u, v), theirs.inner_product(u, v, X), rtol=1e-7, atol=1e-9)


class TestSphere(ManifoldContract):
    space = Sphere(3)
    tangent_scale = 2.5

    def off_manifold_point(self):
        return np.array([1.0, 0.0, 0.0, 0.1])  # beyond record_rtol (a norm of 1 + 5e-7 is a rounded record)


class TestSphereCurved(ManifoldContract):
    space = Sphere(2, curvature=4.0)
    tangent_scale = 1.2

    def off_manifold_point(self):
        return np.array([1.0, 0.0, 0.0])


class TestHyperbolic(ManifoldContract):
    space = Hyperbolic(3)
    tangent_scale = 4.0

    def off_manifold_point(self):
        return np.array([1.0, 0.5, 0.0, 0.0])


class TestHyperbolicCurved(ManifoldContract):
    space = Hyperbolic(2, curvature=-0.25)
    tangent_scale = 6.0

    def off_manifold_point(self):
        return np.array([-2.0, 0.0, 0.0])  # lower sheet


class TestKendall(ManifoldContract):
    space = KendallShape(6)
    tangent_scale = 1.4

    def assert_same_points(self, a, b, atol):
        np.testing.assert_allclose(self.space.dist(a, b), 0.0, atol=atol)

    def off_manifold_point(self):
        return np.ones((6, 2))  # degenerate: all landmarks equal


class TestKendallTriangles(TestKendall):
    space = KendallShape(3)

    def off_manifold_point(self):
        return np.zeros((3, 2))


def test_sphere_geometry_matches_geomstats():
    hypersphere = pytest.importorskip("geomstats.geometry.hypersphere")
    theirs = hypersphere.Hypersphere(3).metric
    ours = Sphere(3)
    X, Y = ours.random_point(40, rng=30), ours.random_point(40, rng=31)
    v = ours.log(X, Y)
    np.testing.assert_allclose(ours.dist(X, Y), theirs.dist(X, Y), rtol=1e-8)
    np.testing.assert_allclose(v, theirs.log(Y, X), rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(ours.exp(X, 0.7 * v), theirs.exp(0.7 * v, X), atol=1e-10)
    w = ours.random_tangent(X, rng=32)
    np.testing.assert_allclose(ours.transport(X, Y, w), theirs.parallel_transport(w, X, end_point=Y), atol=1e-8)


def test_hyperbolic_geometry_matches_geomstats():
    hyperboloid = pytest.importorskip("geomstats.geometry.hyperboloid")
    theirs = hyperboloid.Hyperboloid(3).metric
    ours = Hyperbolic(3)
    X, Y = ours.random_point(40, rng=33), ours.random_point(40, rng=34)
    v = ours.log(X, Y)
    np.testing.assert_allclose(ours.dist(X, Y), theirs.dist(X, Y), rtol=1e-8)
    np.testing.assert_allclose(v, theirs.log(Y, X), rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(ours.exp(X, 0.7 * v), theirs.exp(0.7 * v, X), rtol=1e-9, atol=1e-9)
    w = ours.random_tangent(X, rng=35)
    np.testing.assert_allclose(ours.inner(X, v, w), theirs.inner_product(v, w, X), rtol=1e-8, atol=1e-9)


def _geomstats_kendall(k):
    pre_shape = pytest.importorskip("geomstats.geometry.pre_shape")
    space = pre_shape.PreShapeSpace(k, 2)
    space.equip_with_group_action("rotations")
    space.equip_with_quotient()
    return space


def test_kendall_geometry_matches_geomstats():
    ours = KendallShape(8)
    theirs = _geomstats_kendall(8)
    X, Y = ours.random_point(30, rng=36), ours.random_point(30, rng=37)
    np.testing.assert_allclose(np.sum(X, axis=1), 0.0, atol=1e-12)
    assert np.all(theirs.belongs(X))
    # pre-shape (sphere) metric on the stored preshapes, and the quotient (shape) metric
    np.testing.assert_allclose(
        np.arccos(np.clip(np.sum(X * Y, axis=(1, 2)), -1, 1)), theirs.metric.dist(X, Y), rtol=1e-8
    )
    np.testing.assert_allclose(ours.dist(X, Y), theirs.quotient.metric.dist(X, Y), rtol=1e-7, atol=1e-9)
    v = ours.log(X, Y)
    np.testing.assert_allclose(v, theirs.quotient.metric.log(Y, X), atol=1e-7)
    np.testing.assert_allclose(ours.exp(X, 0.5 * v), theirs.quotient.metric.exp(0.5 * v, X), atol=1e-9)
    # the horizontal projection agrees with geomstats' vertical/horizontal split
    g = np.random.default_rng(38).standard_normal(X.shape)
    g -= g.mean(axis=1, keepdims=True)
    np.testing.assert_allclose(
        ours.to_tangent(X, g), theirs.fiber_bundle.horizontal_projection(theirs.to_tangent(g, X), X), atol=1e-10
    )


def test_kendall_transport_matches_geomstats_integration():
    ours = KendallShape(5)
    theirs = _geomstats_kendall(5)
    x, y = ours.random_point(rng=39), ours.random_point(rng=40)
    y = ours.align(x, y)  # geomstats transports along the horizontal geodesic to the aligned y
    w = ours.random_tangent(x, rng=41)
    expected = theirs.fiber_bundle.horizontal_projection(
        theirs.quotient.metric.parallel_transport(w, x, end_point=y), y
    )
    np.testing.assert_allclose(ours.transport(x, y, w), expected, atol=1e-5)


def test_kendall_rejects_degenerate_and_wrong_landmark_count():
    space = KendallShape(4)
    with pytest.raises(NotOnManifoldError, match="degenerate"):
        space.check_points(np.full((2, 4, 2), 3.0))
    with pytest.raises(InvalidDataError, match="n_landmarks=4"):
        space.check_points(np.zeros((5, 2)) + np.arange(10).reshape(5, 2))
    with pytest.raises(InvalidDataError, match="n_landmarks=4"):
        space.check_points(np.zeros((4, 3)))
    with pytest.raises(InvalidParameterError, match="n_landmarks"):
        KendallShape(2)


def test_kendall_triangles_are_the_sphere_of_radius_one_half():
    # Σ^3_2 is isometric to S²(½): the largest distance is π/2 and the area is π.
    rng = np.random.default_rng(42)
    space = KendallShape(3)
    X, Y = space.random_point(200_000, rng=rng), space.random_point(200_000, rng=rng)
    d = space.dist(X, Y)
    # For uniform points on S²(½), 2ρ is the angle between uniform directions: cos(2ρ) ~ U(-1, 1).
    from scipy import stats

    assert stats.kstest(np.cos(2 * d), "uniform", args=(-1, 2)).pvalue > 1e-3


def test_hyperbolic_far_from_origin_stays_accurate():
    # Float64 hyperboloid coordinates lose ~e^(2D)·1e-16 at distance D from the origin; boosted
    # frames keep sampled directions unit and points at the requested distance up to that limit.
    space = Hyperbolic(2)
    far = space.exp(space.origin, [0.0, 10.0, 0.0])
    u = space.random_unit_tangent(far, size=2000, rng=43)
    np.testing.assert_allclose(space.inner(far, u, u), 1.0, atol=1e-6)
    y = space.polar_exp(far, u, 0.7)
    np.testing.assert_allclose(space.dist(far, y), 0.7, atol=1e-6)
    assert np.all(space.belongs(y))


@pytest.mark.parametrize("space", [Sphere(2), Sphere(5, curvature=3.0), KendallShape(5)], ids=repr)
def test_radial_jacobian_is_the_distance_law_of_uniform_points(space):
    # As σ → ∞ the radial Laplace law tends to the polar volume J(t) itself, i.e. the law of the
    # distance between a fixed point and a uniform one.
    from scipy import stats

    from geodp.distributions.radial import RadialLaw

    rng = np.random.default_rng(44)
    x = space.random_point(rng=rng)
    d = space.dist(x, space.random_point(100_000, rng=rng))
    cdf = RadialLaw(space, scale=1e12).cdf
    assert stats.kstest(d, cdf).pvalue > 1e-3
    assert stats.kstest(space.uniform_radius(100_000, rng=45), cdf).pvalue > 1e-3
    assert stats.kstest(0.9 * d, cdf).pvalue < 1e-6


def test_hyperbolic_radial_jacobian_expansion():
    # (R sinh(t/R))^(d-1) = t^(d-1) (1 + (d-1) t²/(6R²) + O(t⁴))
    space, t = Hyperbolic(4, curvature=-2.0), 1e-3
    expected = (space.dim - 1) * np.log(t) + (space.dim - 1) * t**2 / (6 * space.radius**2)
    np.testing.assert_allclose(space.radial_log_jacobian(t), expected, rtol=1e-9)
    np.testing.assert_allclose(
        space.radial_log_jacobian(800.0), 3 * (800 / space.radius + np.log(space.radius / 2)), rtol=1e-12
    )
