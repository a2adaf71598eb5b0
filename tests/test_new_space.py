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

Optional hooks (declared in ``Manifold`` with a default; ``space.provides(name)`` says whether a
space overrides one) unlock more, and the contract checks each one a space declares:

* ``radial_log_jacobian`` with ``cut_radius`` and ``volume_growth_rate`` (isotropic spaces: the
  polar volume about any point): exact Laplace and KNG samplers instead of MCMC;
* ``_adjoint_exp_derivatives`` (curved spaces; flat ones have it by default): geodesic regression;
* ``to_tangent`` (embedded spaces): removes rounding-level normal parts of tangent vectors;
* ``reference_point``: the default centre of audits (a fixed random point otherwise);
* ``_isometry_to_reference``, ``_extrinsic_radius``, ``_mean_log_norms``, ``_distances_from``,
  ``_prepared_records``, ``_tangent_from_coordinates``: precision and speed;
* ``closed_forms``: names of the closed forms of docs/math.md that hold on the space (none is
  assumed of a new space).
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


# ---------------------------------------------------------------- optional geometry (hooks)
class ToySphere(Manifold):
    """The unit circle S¹ ⊂ R², written from scratch with only the required methods: curved
    (κ = 1 as a 1-manifold has no sectional curvature; declared (1, 1) like geodp's Sphere), no
    optional hook."""

    point_shape = (2,)
    dim = 1
    curvature_bounds = (1.0, 1.0)
    injectivity_radius = np.pi
    is_homogeneous = True

    def __repr__(self):
        return "ToySphere()"

    def _exp(self, x, v):
        x, v = np.asarray(x, dtype=float), np.asarray(v, dtype=float)
        t = np.linalg.norm(v, axis=-1, keepdims=True)
        return np.cos(t) * x + np.where(t > 0, np.sin(t) * v / np.where(t > 0, t, 1.0), 0.0)

    def _log(self, x, y):
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        angle = np.arctan2(x[..., 0] * y[..., 1] - x[..., 1] * y[..., 0], np.sum(x * y, axis=-1))
        turned = np.stack([-x[..., 1], x[..., 0]], axis=-1)
        return angle[..., None] * np.broadcast_to(turned, np.broadcast_shapes(x.shape, y.shape))

    def _inner(self, x, u, v):
        return np.sum(np.asarray(u) * np.asarray(v), axis=-1)

    def _transport(self, x, y, v):
        turned_x = np.stack([-np.asarray(x)[..., 1], np.asarray(x)[..., 0]], axis=-1)
        turned_y = np.stack([-np.asarray(y)[..., 1], np.asarray(y)[..., 0]], axis=-1)
        return np.sum(np.asarray(v) * turned_x, axis=-1, keepdims=True) * turned_y

    def _belongs(self, x, rtol):
        return np.abs(np.linalg.norm(x, axis=-1) - 1.0) <= rtol

    def _random_tangent(self, x, size=None, rng=None):
        x = np.asarray(x, dtype=float)
        shape = np.broadcast_shapes(x.shape[:-1], () if size is None else tuple(np.atleast_1d(size)))
        z = np.random.default_rng(rng).standard_normal(shape)
        return z[..., None] * np.stack([-x[..., 1], x[..., 0]], axis=-1)

    def random_point(self, size=None, rng=None):
        shape = () if size is None else tuple(np.atleast_1d(size))
        angle = np.random.default_rng(rng).uniform(0, 2 * np.pi, shape)
        return np.stack([np.cos(angle), np.sin(angle)], axis=-1)


class TestToySphereContract(ManifoldContract):
    space = ToySphere()


def test_what_a_new_space_must_provide_and_what_is_optional():
    """The required geometry is abstract (a class missing one cannot be instantiated); every
    optional hook has a default in Manifold, and ``provides`` tells whether a space overrides it."""
    required = {"_exp", "_log", "_inner", "_transport", "_belongs", "_random_tangent", "random_point"}
    assert set(Manifold.__abstractmethods__) == required
    optional = ["_adjoint_exp_derivatives", "radial_log_jacobian", "_extrinsic_radius", "_isometry_to_reference"]
    assert not any(ToySphere().provides(hook) for hook in optional)
    from geodp.manifolds import Sphere

    assert all(Sphere(1).provides(hook) for hook in ["_adjoint_exp_derivatives", "radial_log_jacobian"])
    assert ToySphere().closed_forms == frozenset()  # no closed form is assumed of a new space


def test_a_curved_space_without_jacobi_fields_is_refused_before_the_charge():
    from geodp.accountant import BudgetAccountant
    from geodp.errors import InvalidTypeError
    from geodp.models import PrivateGeodesicRegression

    accountant = BudgetAccountant(epsilon=10.0)
    model = PrivateGeodesicRegression(
        ToySphere(), epsilon=1.0, center=[1.0, 0.0], radius=0.5, x_bounds=(0.0, 1.0), accountant=accountant
    )
    Y = ToySphere().exp([1.0, 0.0], np.linspace(-0.3, 0.3, 20)[:, None] * [0.0, 1.0])
    with pytest.raises(InvalidTypeError, match="_adjoint_exp_derivatives"):
        model.fit(np.linspace(0, 1, 20), Y)
    assert accountant.total_spent == (0.0, 0.0)


def test_the_toy_curved_space_releases_a_private_mean_by_the_generic_route():
    """No hook, no closed form: the Laplace release runs by the generic samplers, and is sound
    (the radius is checked against the declared curvature and injectivity radius)."""
    space = ToySphere()
    angles = np.random.default_rng(1).normal(0.2, 0.1, 200)
    X = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    model = PrivateFrechetMean(space, epsilon=2.0, center=[1.0, 0.0], radius=0.6, random_state=0)
    with pytest.warns(Warning):  # the generic route is MCMC: said before the charge
        model.fit(X)
    assert np.all(space.belongs(model.mean_[None]))
    assert float(space.dist(model.mean_, [np.cos(0.2), np.sin(0.2)])) < 0.3


def test_a_flat_space_gets_geodesic_regression_from_its_chart_and_the_default_jacobi_fields():
    """Flat spaces need no hook: the adjoint Jacobi fields default to the parallel transport and
    the chart velocities to straight lines in the chart; the fit matches the Euclidean one."""
    from geodp.manifolds import Euclidean
    from geodp.regression import geodesic_regression

    rng = np.random.default_rng(2)
    x = rng.uniform(0, 1, 30)
    Y = np.stack([0.3 + 0.5 * x, -0.2 * x], axis=1) + 0.01 * rng.standard_normal((30, 2))
    p, v = geodesic_regression(ScaledPlane(), x, Y)
    p_e, v_e = geodesic_regression(Euclidean(2), x, Y)
    np.testing.assert_allclose(p, p_e, atol=1e-12)
    np.testing.assert_allclose(v, v_e, atol=1e-12)
    dp, du = ScaledPlane().unchecked.adjoint_exp_derivatives(p, v, np.array([1.0, 2.0]))
    np.testing.assert_allclose(dp, [1.0, 2.0])
    np.testing.assert_allclose(du, [1.0, 2.0])


def test_a_subclass_that_changes_the_metric_cannot_inherit_its_parents_closed_forms():
    """An audit gave a subclass of affine-invariant SPD with half the distances its parent's exact
    eigenvalue sampler: half the noise. Closed forms and derived hooks are not inherited across
    a change of metric; restating them is the author's proof obligation."""
    from geodp.manifolds.spd import AffineInvariantSPD

    with pytest.raises(TypeError, match="closed_forms \\(from AffineInvariantSPD\\)"):

        class HalfSPD(AffineInvariantSPD):
            def _dist(self, x, y):
                return 0.5 * super()._dist(x, y)

    class HalfMetric:  # a metric mixin: the MRO, not the class body, decides
        def _dist(self, x, y):
            return 0.5 * super()._dist(x, y)

    with pytest.raises(TypeError, match="takes its metric from HalfMetric"):

        class MixedSPD(HalfMetric, AffineInvariantSPD):
            pass

    from geodp.manifolds import Euclidean

    with pytest.raises(TypeError, match="to_coordinates \\(from Euclidean\\)"):  # the chart is derived too

        class HalfPlane(Euclidean):
            radial_log_jacobian = Manifold.radial_log_jacobian
            _adjoint_exp_derivatives = Manifold._adjoint_exp_derivatives
            _tangent_from_coordinates = Manifold._tangent_from_coordinates

            def _dist(self, x, y):
                return 0.5 * super()._dist(x, y)

    class RestatedSPD(AffineInvariantSPD):  # same metric, faster distance: restated on purpose
        closed_forms = AffineInvariantSPD.closed_forms
        radial_log_jacobian = Manifold.radial_log_jacobian
        _adjoint_exp_derivatives = AffineInvariantSPD._adjoint_exp_derivatives
        _extrinsic_radius = AffineInvariantSPD._extrinsic_radius
        _isometry_to_reference = AffineInvariantSPD._isometry_to_reference
        _mean_log_norms = Manifold._mean_log_norms
        _distances_from = AffineInvariantSPD._distances_from
        _prepared_records = AffineInvariantSPD._prepared_records
        _tangent_from_coordinates = Manifold._tangent_from_coordinates
        max_representable_radius = AffineInvariantSPD.max_representable_radius
        curvature_bounds = AffineInvariantSPD.curvature_bounds
        injectivity_radius = AffineInvariantSPD.injectivity_radius
        is_homogeneous = AffineInvariantSPD.is_homogeneous

        def _dist(self, x, y):
            return super()._dist(x, y)

    assert "spd-eigenvalue-laplace" in RestatedSPD(2).closed_forms


def test_a_wrong_polar_volume_on_a_space_of_ones_own_is_refused_before_the_charge():
    """A user's space that declares radial_log_jacobian has it checked against its own exp before
    an exact sampler trusts it (an audit's toy plane declaring log J = 0 got half the noise)."""
    from geodp.accountant import BudgetAccountant
    from geodp.distributions.radial import is_isotropic
    from geodp.errors import AssumptionError
    from geodp.manifolds import Sphere

    class ClaimedSphere(Sphere):
        def radial_log_jacobian(self, t):
            return 2.0 * super().radial_log_jacobian(t)

        def __repr__(self):
            return f"ClaimedSphere({self.dim})"

    class HonestSphere(Sphere):
        def __repr__(self):
            return f"HonestSphere({self.dim})"

    assert is_isotropic(HonestSphere(3))
    with pytest.raises(AssumptionError, match="does not match its own geometry"):
        is_isotropic(ClaimedSphere(3))
    accountant = BudgetAccountant(epsilon=5.0)
    model = PrivateFrechetMean(ClaimedSphere(2), epsilon=1.0, center=[0.0, 0.0, 1.0], radius=0.5, accountant=accountant)
    with pytest.raises(AssumptionError, match="radial_log_jacobian"):
        model.fit(Sphere(2).random_point(50, rng=0))
    assert accountant.total_spent == (0.0, 0.0)


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(volume_growth_rate=0.0), "exceeds"),  # a re-audit: 4x too little noise on H^3
        (dict(cut_radius=1.0), "cut_radius"),  # a sphere's law cut off at t < 1
        (dict(beyond_one=True), "differs from its measure"),  # right up to t = 1 only
        (dict(is_homogeneous=False), "homogeneous"),
    ],
)
def test_every_declared_fact_of_the_polar_volume_is_checked(change, message):
    from geodp.distributions.radial import is_isotropic
    from geodp.errors import AssumptionError
    from geodp.manifolds import Hyperbolic

    class Declared(Hyperbolic):
        def __init__(self, dim):
            super().__init__(dim)
            for name, value in change.items():
                if name != "beyond_one":
                    setattr(self, name, value)

        def radial_log_jacobian(self, t):
            t = np.asarray(t, dtype=float)
            true = super().radial_log_jacobian(t)
            return np.where(t > 1.0, true + 0.5 * (t - 1.0), true) if "beyond_one" in change else true

        def __repr__(self):
            return f"Declared({self.dim}, {sorted(change)})"

    with pytest.raises(AssumptionError, match=message):
        is_isotropic(Declared(3))


def test_the_verification_rereads_the_declaration_of_an_equal_space():
    """Measurements are cached by (type, repr); the declaration is read again on every call, so
    an instance changed after an equal one was verified is still checked."""
    from geodp.distributions.radial import is_isotropic
    from geodp.errors import AssumptionError
    from geodp.manifolds import Sphere

    class Scaled(Sphere):
        factor = 1.0

        def radial_log_jacobian(self, t):
            return self.factor * super().radial_log_jacobian(t)

        def __repr__(self):
            return "Scaled(3)"

    assert is_isotropic(Scaled(3))
    changed = Scaled(3)
    changed.factor = 2.0
    with pytest.raises(AssumptionError):
        is_isotropic(changed)
