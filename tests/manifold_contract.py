"""Reusable contract tests every Manifold must pass.

Subclass :class:`ManifoldContract` in a ``Test…`` class and define ``space`` (a fixture or class
attribute) and optionally ``tangent_scale`` (how long the random tangent vectors are).
"""

import numpy as np
import pytest

from geodp.errors import InvalidDataError, NotOnManifoldError


class ManifoldContract:
    space = None
    tangent_scale = 0.5
    n = 64

    def points(self, seed, size=None):
        return self.space.random_point(self.n if size is None else size, rng=seed)

    def tangents(self, x, seed):
        v = self.space.random_unit_tangent(x, rng=seed)
        lengths = np.random.default_rng(seed + 1).uniform(
            0.05, 1.0, size=v.shape[: v.ndim - len(self.space.point_shape)]
        )
        return v * (self.tangent_scale * lengths).reshape(lengths.shape + (1,) * len(self.space.point_shape))

    def test_random_points_belong(self):
        assert np.all(self.space.belongs(self.points(0)))

    def assert_same_points(self, a, b, atol):
        """Points equal as elements of the manifold (quotient spaces override: compare by distance)."""
        np.testing.assert_allclose(a, b, atol=atol, rtol=atol)

    def test_exp_of_log_is_identity(self):
        x, y = self.points(1), self.points(2)
        self.assert_same_points(self.space.exp(x, self.space.log(x, y)), y, atol=1e-8)

    def test_log_of_exp_is_identity(self):
        x = self.points(3)
        v = self.tangents(x, 4)
        np.testing.assert_allclose(self.space.log(x, self.space.exp(x, v)), v, atol=1e-9, rtol=1e-8)

    def test_exp_stays_on_manifold(self):
        x = self.points(5)
        assert np.all(self.space.belongs(self.space.exp(x, self.tangents(x, 6))))

    def test_dist_of_exp_is_tangent_norm(self):
        x = self.points(7)
        v = self.tangents(x, 8)
        np.testing.assert_allclose(
            self.space.dist(x, self.space.exp(x, v)), self.space.norm(x, v), rtol=1e-9, atol=1e-12
        )

    def test_dist_is_symmetric_and_zero_on_diagonal(self):
        x, y = self.points(9), self.points(10)
        np.testing.assert_allclose(self.space.dist(x, y), self.space.dist(y, x), rtol=1e-9)
        np.testing.assert_allclose(self.space.dist(x, x), 0.0, atol=1e-7)

    def test_triangle_inequality(self):
        x, y, z = self.points(11), self.points(12), self.points(13)
        d = self.space.dist
        assert np.all(d(x, z) <= d(x, y) + d(y, z) + 1e-9)

    def test_transport_is_an_isometry(self):
        x, y = self.points(14), self.points(15)
        u, v = self.space.random_tangent(x, rng=16), self.space.random_tangent(x, rng=17)
        tu, tv = self.space.transport(x, y, u), self.space.transport(x, y, v)
        np.testing.assert_allclose(self.space.inner(y, tu, tv), self.space.inner(x, u, v), rtol=1e-7, atol=1e-9)

    def test_transport_maps_log_to_minus_log(self):
        x, y = self.points(18), self.points(19)
        moved = self.space.transport(x, y, self.space.log(x, y))
        np.testing.assert_allclose(moved, -self.space.log(y, x), atol=1e-7, rtol=1e-7)

    def test_random_unit_tangent_has_unit_norm(self):
        x = self.points(20)
        np.testing.assert_allclose(self.space.norm(x, self.space.random_unit_tangent(x, rng=21)), 1.0, rtol=1e-10)

    def test_random_tangent_is_standard_gaussian(self):
        x = self.points(22, size=1)[0]
        v = self.space.random_tangent(x, size=20000, rng=23)
        sq = self.space.inner(x, v, v)
        # E|v|² = dim and Var|v|² = 2 dim for a chi-square; 6 standard errors.
        assert abs(sq.mean() - self.space.dim) < 6 * np.sqrt(2 * self.space.dim / 20000)

    def test_single_point_broadcasts_against_batch(self):
        x = self.points(24, size=1)[0]
        ys = self.points(25)
        batched = self.space.log(x, ys)
        looped = np.stack([self.space.log(x, y) for y in ys])
        np.testing.assert_allclose(batched, looped, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(self.space.dist(x, ys), [self.space.dist(x, y) for y in ys], rtol=1e-12)

    def test_check_points_rejects_nan_and_bad_shape(self):
        x = self.points(26)
        bad = x.copy()
        bad[0, ...] = np.nan
        with pytest.raises(InvalidDataError, match="NaN"):
            self.space.check_points(bad)
        with pytest.raises(InvalidDataError, match="trailing shape"):
            self.space.check_points(np.zeros((3,) + tuple(s + 1 for s in self.space.point_shape)))

    def test_check_points_rejects_off_manifold(self):
        off = self.off_manifold_point()
        if off is None:
            pytest.skip("every finite array of the right shape is on this manifold")
        with pytest.raises(NotOnManifoldError):
            self.space.check_points(off[None])

    def off_manifold_point(self):
        return None

    def test_clip_to_ball_is_sound(self):
        x = self.points(27)
        center = self.points(28, size=1)[0]
        d = self.space.dist(center, x)
        radius = float(np.median(d))
        clipped, mask = self.space.clip_to_ball(x, center, radius)
        new_d = self.space.dist(center, clipped)
        assert np.all(new_d <= radius)
        np.testing.assert_allclose(new_d[mask], radius, rtol=1e-9)
        np.testing.assert_array_equal(clipped[~mask], x[~mask])
        # clipping moves along the geodesic: the direction from the center is unchanged
        u_old = self.space.log(center, x[mask]) / d[mask].reshape((-1,) + (1,) * len(self.space.point_shape))
        u_new = self.space.log(center, clipped[mask]) / new_d[mask].reshape((-1,) + (1,) * len(self.space.point_shape))
        np.testing.assert_allclose(u_new, u_old, atol=1e-8)

    def test_check_points_enforces_the_number_of_batch_axes(self):
        x = self.points(29, size=3)
        assert self.space.check_points(x, batch_ndim=1).shape == x.shape
        assert self.space.check_points(x[0], batch_ndim=0).shape == self.space.point_shape
        with pytest.raises(InvalidDataError, match="one point"):
            self.space.check_points(x, "center", batch_ndim=0)
        with pytest.raises(InvalidDataError, match=r"shape \(n, "):
            self.space.check_points(x[None], "X", batch_ndim=1)

    # ------------------------------------------------- optional hooks, checked when declared
    def _orthonormal_tangents(self, x, u, count, seed):
        """``count`` tangent vectors at ``x``, orthonormal in the metric and orthogonal to ``u``."""
        space, basis = self.space, [u]
        for v in space.random_tangent(x, size=count + 4, rng=seed):
            for b in basis:
                v = v - space.inner(x, v, b) * b
            norm = float(space.norm(x, v))
            if norm > 1e-6:
                basis.append(v / norm)
            if len(basis) == count + 1:
                return basis[1:]
        raise AssertionError("no orthonormal tangent basis found")

    def _log_polar_volume(self, x, u, basis, t, h=1e-5):
        """``log J(t)`` from the geometry: the Gram determinant of ``d/dθ_i Exp(x, t(u + θ_i e_i))``."""
        space = self.space
        y = space.exp(x, t * u)
        columns = []
        for e in basis:
            diff = (space.exp(x, t * (u + h * e)) - space.exp(x, t * (u - h * e))) / (2 * h)
            columns.append(space.to_tangent(y, diff))
        gram = np.array([[float(space.inner(y, a, b)) for b in columns] for a in columns])
        return 0.5 * np.linalg.slogdet(gram)[1]

    def test_declared_polar_volume_matches_the_geometry(self):
        """A space that declares ``radial_log_jacobian`` (isotropic: the exact radial samplers
        trust it) must give the volume its own ``exp`` has, up to a constant."""
        space = self.space
        if not space.provides("radial_log_jacobian") or space.dim < 2:
            pytest.skip("no polar volume declared")
        x = self.points(31, size=1)[0]
        u = space.random_unit_tangent(x, rng=32)
        basis = self._orthonormal_tangents(x, u, space.dim - 1, 33)
        reach = min(1.0, 0.8 * float(space.cut_radius))
        ts = np.array([0.2, 0.5, 0.9]) * reach
        measured = np.array([self._log_polar_volume(x, u, basis, t) for t in ts])
        declared = np.asarray(space.radial_log_jacobian(ts), dtype=float)
        np.testing.assert_allclose(np.diff(measured), np.diff(declared), atol=1e-6)

    def test_declared_adjoint_jacobi_fields_match_finite_differences(self, h=1e-6):
        """``⟨d_uExp(p, u)[a], w⟩ = ⟨a, du⟩`` and the same for ``d_pExp`` (``u`` transported
        along the variation of ``p``): what geodesic regression's gradient trusts."""
        space = self.space
        if not space.provides("_adjoint_exp_derivatives"):
            pytest.skip("no adjoint Jacobi fields declared")
        p = self.points(34, size=1)[0]
        u = self.tangents(p[None], 35)[0]
        y = space.exp(p, u)
        w = space.random_tangent(y, rng=36)
        a = space.random_tangent(p, rng=37)
        dp, du = space.unchecked.adjoint_exp_derivatives(p, u, w)
        along_u = space.to_tangent(y, (space.exp(p, u + h * a) - space.exp(p, u - h * a)) / (2 * h))
        np.testing.assert_allclose(float(space.inner(y, along_u, w)), float(space.inner(p, a, du)), atol=1e-6)

        def moved(s):
            q = space.exp(p, s * a)
            return space.exp(q, space.transport(p, q, u))

        along_p = space.to_tangent(y, (moved(h) - moved(-h)) / (2 * h))
        np.testing.assert_allclose(float(space.inner(y, along_p, w)), float(space.inner(p, a, dp)), atol=1e-6)
