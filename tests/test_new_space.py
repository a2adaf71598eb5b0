"""What a new space must provide: a toy written here passes the manifold contract and releases a
private mean, with nothing else of geodp edited.

A flat space (``is_flat = True``) implements the seven geometry hooks the base class declares
abstract — ``_exp``, ``_log``, ``_inner``, ``_transport``, ``_belongs``, ``_random_tangent``,
``random_point`` — sets ``point_shape``, ``dim``, ``curvature_bounds``, ``injectivity_radius``,
``is_homogeneous``, ``is_flat``, and gives its global isometric chart ``to_coordinates`` /
``from_coordinates`` (the exact flat-space samplers work in it; a flat class without them is
refused when it is written). A curved space needs no chart; its releases use the generic MCMC
samplers, and its admissible radius is ``½·min(inj, π/(2√κ_max))``. Everything else
(validation, clipping, the Fréchet mean, the mechanisms' calibration and the report) comes from
the base class and the estimators.
"""

import numpy as np
import pytest
from tests.manifold_contract import ManifoldContract

from geodp.manifolds.base import Manifold
from geodp.models import PrivateFrechetMean


class ScaledPlane(Manifold):
    """R² with the metric 4⟨u, v⟩: flat, every distance twice the Euclidean one."""

    point_shape = (2,)
    dim = 2
    curvature_bounds = (0.0, 0.0)
    injectivity_radius = np.inf
    is_homogeneous = True
    is_flat = True

    def __repr__(self):
        return "ScaledPlane()"

    def _exp(self, x, v):
        return np.asarray(x) + v

    def _log(self, x, y):
        return np.asarray(y) - x

    def _inner(self, x, u, v):
        return 4.0 * np.sum(np.asarray(u) * v, axis=-1)

    def _transport(self, x, y, v):
        return np.broadcast_to(v, np.broadcast_shapes(np.shape(v), np.shape(y))).copy()

    def _belongs(self, x, rtol):
        return np.all(np.isfinite(x), axis=-1)

    def _random_tangent(self, x, size=None, rng=None):
        # standard Gaussian in an orthonormal basis of the metric: N(0, I/4) in coordinates
        shape = () if size is None else tuple(np.atleast_1d(size))
        batch = np.broadcast_shapes(np.shape(x)[:-1], shape)
        return 0.5 * np.random.default_rng(rng).standard_normal((*batch, 2))

    def random_point(self, size=None, rng=None):
        shape = () if size is None else tuple(np.atleast_1d(size))
        return np.random.default_rng(rng).standard_normal((*shape, 2))

    def to_coordinates(self, x):
        return 2.0 * np.asarray(x, dtype=float)

    def from_coordinates(self, c):
        return np.asarray(c, dtype=float) / 2.0


class TestScaledPlaneContract(ManifoldContract):
    space = ScaledPlane()  # every finite point is on it: the contract skips the off-manifold check


def test_the_toy_space_releases_a_private_mean_through_the_sound_path():
    space = ScaledPlane()
    X = space.random_point(400, rng=0) * 0.2 + np.array([0.1, -0.1])
    model = PrivateFrechetMean(space, epsilon=1.0, center=np.zeros(2), radius=1.0, random_state=0).fit(X)
    report = model.privacy_report_.to_dict()
    assert report["exact"] is True
    # Δ = 2r/n in the space's own distance (r = 1 there), so σ = Δ/ε = 2/400
    assert report["sensitivity"] == pytest.approx(2.0 / 400)
    assert float(space.dist(model.mean_, X.mean(axis=0))) < 0.1


class FlatCylinder(ScaledPlane):
    """The same geometry declared with closed geodesics of length 2π (a flat cylinder, as a
    circle's angle): curvature 0, injectivity radius π."""

    injectivity_radius = np.pi

    def __repr__(self):
        return "FlatCylinder()"


def test_a_flat_space_with_a_finite_injectivity_radius_has_a_finite_admissible_radius():
    """r* = ½·inj when κ_max ≤ 0 (was ∞: a cold trial wrapped S¹ with κ = 0, inj = π, released at
    r = 3, and one replaced record moved the mean 50× the claimed Δ)."""
    from geodp.errors import AssumptionError
    from geodp.sensitivity import check_radius, max_radius

    assert max_radius(FlatCylinder()) == pytest.approx(np.pi / 2)
    assert max_radius(ScaledPlane()) == np.inf
    with pytest.raises(AssumptionError, match="r\\*"):
        check_radius(FlatCylinder(), 3.0)
    with pytest.raises(AssumptionError):
        PrivateFrechetMean(FlatCylinder(), epsilon=1.0, center=np.zeros(2), radius=3.0).plan(10)


def test_a_flat_space_without_its_chart_is_refused_when_written():
    with pytest.raises(TypeError, match="to_coordinates and from_coordinates"):

        class ChartlessPlane(Manifold):
            point_shape, dim, curvature_bounds = (2,), 2, (0.0, 0.0)
            injectivity_radius, is_homogeneous, is_flat = np.inf, True, True
            _exp, _log, _inner = ScaledPlane._exp, ScaledPlane._log, ScaledPlane._inner
            _transport, _belongs = ScaledPlane._transport, ScaledPlane._belongs
            _random_tangent, random_point = ScaledPlane._random_tangent, ScaledPlane.random_point
