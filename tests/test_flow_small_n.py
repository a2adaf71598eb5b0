"""The Karcher flow's per-call shortcuts at n = 100 (issue 24): the closed-form geodesic velocity
that replaces parallel transport in the Barzilai–Borwein step and single-point geometry in Python
floats, each against an independent computation."""

import warnings

import mpmath
import numpy as np
import pytest

from geodp import frechet_mean
from geodp.manifolds import SPD, Hyperbolic, KendallShape, Sphere
from geodp.manifolds.hyperbolic import _lift, _pow2_scale, _sq

mpmath.mp.dps = 40

SPACES = [Sphere(2), Sphere(50, curvature=4.0), Hyperbolic(2), Hyperbolic(30, curvature=-0.25)]


def _point_and_vector(space, distance, length, seed):
    """A base point ``distance`` from the reference point and a tangent vector of ``length``."""
    rng = np.random.default_rng(seed)
    o = space.reference_point()
    x = space.exp(o, distance * space.random_unit_tangent(o, rng=rng)) if distance else o
    return x, length * space.random_unit_tangent(x, rng=rng)


@pytest.mark.parametrize("space", SPACES, ids=repr)
@pytest.mark.parametrize(("distance", "length"), [(0.0, 0.7), (1.0, 1e-9), (2.0, 1.3), (5.0, 3.0), (0.3, 0.0)])
def test_velocity_is_the_transported_step(space, distance, length):
    """``_exp_with_velocity`` returns ``exp_x(v)`` (as ``exp`` then ``project`` give it) and the
    parallel transport of ``v`` there (the space's own ``transport``, from ``log``)."""
    if isinstance(space, Sphere):
        distance, length = min(distance, 1.0), min(length, 1.0) * space.radius
    x, v = _point_and_vector(space, distance, length, seed=int(10 * distance + length))
    end, velocity = space._exp_with_velocity(x, v)
    expected_end = space.project(space.exp(x, v))
    scale = max(1.0, float(np.max(np.abs(x))))
    np.testing.assert_allclose(end, expected_end, rtol=0, atol=1e-14 * scale)
    assert space.belongs(end)
    np.testing.assert_allclose(velocity, space.transport(x, end, v), rtol=0, atol=1e-12 * scale * max(length, 1e-300))
    assert float(space.norm(end, velocity)) == pytest.approx(length, rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("space", SPACES, ids=repr)
def test_velocity_mutants_are_caught(space):
    """A sign or a factor wrong in the velocity is far from the transport (the check above bites)."""
    x, v = _point_and_vector(space, 0.5, 0.8, seed=3)
    end, velocity = space._exp_with_velocity(x, v)
    truth = space.transport(x, end, v)
    for mutant in (-velocity, 1.5 * velocity, velocity + 0.1 * space.to_tangent(end, x + 0.3)):
        assert np.max(np.abs(mutant - truth)) > 1e-3


@pytest.mark.parametrize("space", [SPD(3), KendallShape(5)], ids=repr)
def test_other_spaces_give_no_velocity(space):
    """The default: the projected ``exp`` and no velocity (the flow then transports)."""
    rng = np.random.default_rng(0)
    x = space.random_point(rng=rng) if isinstance(space, SPD) else space.project(rng.normal(size=(5, 2)))
    v = 0.1 * space.random_tangent(x, rng=rng)
    end, velocity = space._exp_with_velocity(x, v)
    assert velocity is None
    np.testing.assert_allclose(end, space.project(space.exp(x, v)), rtol=0, atol=1e-14)


def _mp_tangent_sq(x, u):
    """``⟨u, u⟩_L`` at ``x`` in 40 digits, ``u_0`` and ``x_0`` from the spatial parts (as the space does)."""
    xs = [mpmath.mpf(float(t)) for t in x[1:]]
    us = [mpmath.mpf(float(t)) for t in u[1:]]
    x0 = mpmath.sqrt(1 + sum(t * t for t in xs))
    u0 = sum(a * b for a, b in zip(xs, us)) / x0
    return float(sum(t * t for t in us) - u0 * u0)


@pytest.mark.parametrize("distance", [0.0, 1e-8, 1.0, 15.0, 30.0, 36.0])
def test_single_point_norm_on_the_hyperboloid_matches_40_digits(distance):
    """The single-point frame (Python floats) agrees with the batched one at every distance (far
    out, a tangent vector is resolved only to eps·e^D, docs of :class:`Hyperbolic`), and with
    40-digit arithmetic near the origin."""
    space = Hyperbolic(3)
    x, v = _point_and_vector(space, distance, 0.37, seed=5)
    single = float(space._tangent_sq(x, v, v))
    if distance <= 1.0:
        assert single == pytest.approx(_mp_tangent_sq(x, v), rel=1e-14)
    batched = space._tangent_sq(np.stack([x, x]), np.stack([v, v]), np.stack([v, v]))
    np.testing.assert_allclose(batched, single, rtol=8 * np.finfo(float).eps * np.exp(distance))
    assert single > 0


@pytest.mark.parametrize("scale", [1e-200, 1e-3, 1.0, 1e100, 1e149, 1e151, 1e200])
def test_lift_without_scaling_agrees_with_the_scaled_lift(scale):
    """``√(R² + |x_s|²)``: the unscaled form (no square over- or underflows) and the form scaled
    by a power of two agree to the last bit or so, and huge coordinates stay finite."""
    rng = np.random.default_rng(1)
    spatial = scale * rng.normal(size=(6, 4))
    m = _pow2_scale(spatial)
    scaled = m * np.sqrt((1.0 / m) ** 2 + _sq(spatial / m[..., None]))
    lifted = _lift(spatial, 1.0)
    assert np.all(np.isfinite(lifted))
    np.testing.assert_allclose(lifted, scaled, rtol=4e-16)


@pytest.mark.parametrize("distance", [1.0, 15.0, 30.0])
def test_single_point_geometry_raises_no_floating_point_warning(distance):
    """A floating-point warning depends on the data (it is observable): the single-point paths
    stay silent wherever the batched ones are, including the frame and lift of a point with
    coordinates near 1e304 (scaled, never squared)."""
    space = Hyperbolic(3)
    x, v = _point_and_vector(space, distance, 1.0, seed=2)
    huge = np.concatenate([[0.0], np.full(3, 1e304)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        space._tangent_sq(x, v, v)
        space._exp_with_velocity(x, 1e-3 * v)
        _lift(x[1:], 1.0)
        assert np.isfinite(space._tangent_sq(space.project(huge), 1e-300 * huge, 1e-300 * huge))
        assert np.isfinite(_lift(huge[1:], 1.0))


@pytest.mark.parametrize("space", SPACES, ids=repr)
def test_flow_with_velocity_matches_flow_with_transport(space, monkeypatch):
    """The Barzilai–Borwein step from the closed-form velocity and from parallel transport give
    the same mean, at the same final gradient norm, in the same number of passes or fewer."""
    rng = np.random.default_rng(11)
    o = space.reference_point()
    X = space.exp(o, 0.6 * space.radius * space.random_tangent(o, size=100, rng=rng) / np.sqrt(space.dim))
    fast, info = frechet_mean(space, X, tol=1e-10, return_info=True)
    cls = type(space)
    monkeypatch.setattr(cls, "_exp_with_velocity", lambda self, x, v: (self.project(self._exp(x, v)), None))
    slow, info_slow = frechet_mean(space, X, tol=1e-10, return_info=True)
    assert info.converged and info_slow.converged
    assert float(space.dist(fast, slow)) < 1e-9 * space.radius
    assert info.n_passes <= info_slow.n_passes + 1


@pytest.mark.parametrize("space", [Sphere(2), Hyperbolic(2)], ids=repr)
def test_an_infinite_step_gives_nan_not_an_exception(space):
    """A Barzilai–Borwein step may overflow to inf: the step's point is then NaN (the flow's
    Armijo test refuses it and takes the safe step), never an exception from ``math``."""
    x, v = _point_and_vector(space, 0.5, 1.0, seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        end, _ = space._exp_with_velocity(x, np.inf * v)
    assert not np.all(np.isfinite(end))
