import numpy as np
import pytest

from geodp.errors import InvalidParameterError, NotOnManifoldError
from geodp.manifolds import SPD, AffineInvariantSPD, Euclidean, LogEuclideanSPD
from geodp.manifolds import _matrix as mf
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
    X = np.stack([np.eye(2), -np.eye(2), np.eye(2), np.diag([1.0, 0.0])])
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
    from pyriemann.geometry.tangentspace import exp_map_riemann, log_map_riemann
    from pyriemann.geometry.geodesic import geodesic_riemann

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
    space.equip_with_metric(geomstats_spd.SPDAffineMetric if metric == "affine" else geomstats_spd.SPDLogEuclideanMetric)
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
