"""The checks :func:`~geodp.manifolds.from_geomstats` runs on a wrapped geomstats space: the
tangent frame, parallel transport, short steps, the declared curvature bounds (sectional
curvature estimated on coordinate and searched 2-planes) and the declared injectivity radius.
Evidence, not proof; every setting below is public.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from geodp.errors import AssumptionError, InvalidParameterError

__all__ = ["DeclarationChecks"]

# Step of the curvature estimate, relative to the space's length scale ℓ, and its Richardson
# partner t/2: the estimate is accurate to about 3e-5·|K| there even when geomstats measures
# distances through arccos (1e-2·ℓ already shows rounding, 2e-1·ℓ truncation).
CURVATURE_STEP = 0.1
# Curvature estimates may exceed the declared bounds by this share of S = max(|κ|, 1/ℓ²).
CURVATURE_RTOL = 1e-3
# The injectivity radius is checked at this share below its declared value...
INJECTIVITY_MARGIN = 1e-3
# ...where log(exp(p, v)) must give back v to this relative accuracy.
ROUND_TRIP_RTOL = 1e-6
# Lengths (in units of ℓ) at which log∘exp is checked when the declared radius is infinite,
# besides twice the radius of the checked region (its diameter).
INFINITE_RADIUS_PROBES = (1.0, 3.0)
# Short steps: log(exp(p, v)) must return v to 1e-6·|v| + 1e-12·ℓ (rounding of the point's
# coordinates) at these lengths (units of ℓ). geomstats' PoincareBall.exp fails below 1e-8: it
# replaces the norm of shorter vectors by 1e-6. Where exp fails, vectors shorter than
# SHORT_STEP·ℓ are exponentiated along a geodesic of length LONG_STEP·ℓ instead.
SHORT_PROBES = (1e-6, 1e-9)
SHORT_STEP = 1e-3
LONG_STEP = 0.1
# Gram eigenvalues below this share of the largest are a null direction of the tangent frame.
RANK_RTOL = 1e-8
# Every coordinate plane is probed up to this dimension (66 planes at dim 12); above it, this
# many seeded coordinate planes plus up to half as many planes of a second, random basis.
ALL_PLANES_MAX_DIM = 12
MAX_COORDINATE_PLANES = 66
# Plane search: from the lowest and the highest estimated plane at each check point, this many
# rounds of seeded random perturbation in the Grassmannian of 2-planes (step SEARCH_STEPS[r]
# in the coefficients of an orthonormal frame), with this many candidate planes per extreme and
# round, keeping improvements: a fixed public budget of 2·rounds·candidates planes per point.
SEARCH_STEPS = tuple(float(s) for s in np.geomspace(0.5, 0.03, 16))
SEARCH_CANDIDATES = 8


# Sectional curvature of the metrics of geomstats' constant-curvature spaces (exact classes only:
# a subclass or a rescaled metric is not recognised).
_CONSTANT_CURVATURE_METRICS = {
    ("geomstats.geometry.hypersphere", "HypersphereMetric"): 1.0,
    ("geomstats.geometry.poincare_ball", "PoincareBallMetric"): -1.0,
    ("geomstats.geometry.hyperboloid", "HyperboloidMetric"): -1.0,
    ("geomstats.geometry.poincare_half_space", "PoincareHalfSpaceMetric"): -1.0,
    ("geomstats.geometry.euclidean", "EuclideanMetric"): 0.0,
}


def _product_curvatures(metric) -> list[tuple[float, str]] | None:
    """Sectional curvatures that a geomstats Riemannian product certainly attains, each with
    the planes that attain it, or None when ``metric`` is not a ``ProductRiemannianMetric``.

    On a Riemannian product, a plane inside a factor has that factor's curvature, and a plane
    spanned by vectors of two different factors has curvature 0. Factors whose metric is not
    recognised contribute only the mixed planes.
    """
    from geomstats.geometry.product_manifold import ProductRiemannianMetric

    if type(metric) is not ProductRiemannianMetric:
        return None
    factors = list(getattr(metric, "factors", None) or [])
    attained = []
    for factor in factors:
        kappa = _CONSTANT_CURVATURE_METRICS.get((type(factor).__module__, type(factor).__name__))
        space = getattr(factor, "_space", None)
        dim = getattr(space, "dim", None)
        if kappa is not None and isinstance(dim, numbers.Integral) and dim >= 2:
            name = f"{type(space).__name__.lstrip('_')}(dim={dim}) with {type(factor).__name__}"
            attained.append((kappa, f"the planes inside its factor {name}"))
    dims = [getattr(getattr(factor, "_space", None), "dim", 1) for factor in factors]
    if sum(1 for dim in dims if not isinstance(dim, numbers.Integral) or dim >= 1) >= 2:
        attained.append((0.0, "the planes spanned by vectors of two different factors"))
    return attained


class DeclarationChecks:
    """Mixin of :class:`~geodp.manifolds.geomstats_adapter.GeomstatsSpace`: its construction
    checks (they use the space's geometry: ``_exp``, ``_log``, ``_frame``, ``base_point``, …)."""

    def _check_frame(self) -> None:
        """``to_tangent`` must span a space of dimension ``dim`` at the base point."""
        w = np.linalg.eigvalsh(self._spanning_gram(self.base_point)[1])
        rank = int(np.sum(w > RANK_RTOL * max(float(w[-1]), 0.0)))
        if rank != self.dim:
            raise InvalidParameterError(
                f"to_tangent of {self._description} spans {rank} dimensions at the base point, but "
                f"the space declares dim = {self.dim}: this space cannot be wrapped."
            )

    def _probe_transport(self) -> str | None:
        """Why geomstats' parallel transport is unusable here (None when it is usable): it must
        run and preserve the norm along one seeded geodesic from the base point."""
        rng = np.random.default_rng(0)
        u, w = self._random_tangent(self.base_point, size=2, rng=rng)
        end = self._exp(
            self.base_point, 0.5 * min(1.0, self.injectivity_radius / 4.0) * w / self._norm(self.base_point, w)
        )
        try:
            moved = np.asarray(self._metric.parallel_transport(u, self.base_point, end_point=end), dtype=np.float64)
        except NotImplementedError:
            return "geomstats implements no parallel transport for this metric"
        except Exception as err:  # a geomstats method that exists but fails on this space
            return f"geomstats' parallel_transport fails on this space ({type(err).__name__}: {err})"
        before, after = float(self._norm(self.base_point, u)), float(self._norm(end, moved.reshape(self.point_shape)))
        if not abs(after - before) <= ROUND_TRIP_RTOL * before:
            return f"geomstats' parallel_transport changed a norm from {before:.6g} to {after:.6g}"
        return None

    def _length_scale(self) -> float:
        """ℓ: the smaller of ``inj/π`` and ``1/√max|κ|`` where finite, else 1."""
        kappa = max(abs(self.curvature_bounds[0]), abs(self.curvature_bounds[1]))
        candidates = [self.injectivity_radius / math.pi, 1.0 / math.sqrt(kappa) if kappa > 0 else math.inf]
        scale = min(candidates)
        return scale if math.isfinite(scale) else 1.0

    def _check_points(self, n_checks: int, rng) -> np.ndarray:
        """``exp`` at the base point of vectors in seeded random directions with lengths
        ``check_radius · j/(n_checks − 1)``, ``j = 0, …, n_checks − 1``: the base point itself,
        points spread along radii, and points at the edge of the checked region."""
        radii = self.check_radius * np.linspace(0.0, 1.0, n_checks)
        directions = self._random_unit_tangent(
            np.broadcast_to(self.base_point, (n_checks,) + self.point_shape), rng=rng
        )
        k = len(self.point_shape)
        return self.project(self._exp(self.base_point, radii.reshape((-1,) + (1,) * k) * directions))

    def _plausibility(self, n_checks: int) -> dict:
        rng = np.random.default_rng(0)
        points = self._check_points(n_checks, rng)
        checks = {
            "n_points": n_checks,
            "length_scale": self._length,
            "check_radius": self.check_radius,
            "checked_region": (
                f"geodesic ball of radius {self.check_radius:.6g} around base_point: {n_checks} points "
                f"at distances 0 to {self.check_radius:.6g} in seeded random directions"
            ),
        }
        checks.update(self._check_short_steps(points, rng))
        checks.update(self._check_curvature(points, rng))
        checks.update(self._check_injectivity(points, rng))
        return checks

    def _check_product_structure(self) -> None:
        """On a geomstats Riemannian product, the curvatures that recognised factors attain
        (their constant curvature on planes inside them, 0 on mixed planes) must lie within the
        declared bounds: a proof, not a sample."""
        attained = _product_curvatures(self._metric)
        kappa_min, kappa_max = self.curvature_bounds
        for kappa, planes in attained or ():
            if not kappa_min <= kappa <= kappa_max:
                raise AssumptionError(
                    f"the sectional curvature of {self._description} is {kappa:g} on {planes} "
                    f"(a Riemannian product), outside the declared curvature_bounds "
                    f"{self.curvature_bounds!r}. Declare bounds that contain "
                    f"[{min(k for k, _ in attained):g}, {max(k for k, _ in attained):g}]."
                )

    def _check_short_steps(self, points, rng) -> dict:
        """``log_p(exp_p(v)) = v`` for very short ``v`` (the last steps of the Karcher flow):
        geomstats' exp as is, else the long-geodesic construction of :meth:`_exp`."""
        directions = self._random_unit_tangent(points, rng=rng)

        def error() -> float:
            worst = 0.0
            for length in SHORT_PROBES:
                v = length * self._length * directions
                miss = np.asarray(self._norm(points, self._log(points, self._exp(points, v)) - v))
                allowed = 1e-6 * length * self._length + 1e-12 * self._length
                worst = max(worst, float(np.max(np.where(np.isfinite(miss), miss, np.inf))) / allowed)
            return worst

        try:
            if error() <= 1.0:
                return {"short_steps": "geomstats' exp"}
            self._detour_short_steps = True
            failure = (
                None
                if error() <= 1.0
                else f"exp and log of {self._description} disagree, even along a longer geodesic."
            )
        except AssumptionError as err:  # geomstats raised at a short distance
            failure = str(err)
        if failure is not None:
            raise AssumptionError(
                f"For points {min(SHORT_PROBES) * self._length:.3g} to {max(SHORT_PROBES) * self._length:.3g} "
                f"apart: {failure} The Karcher flow and the MH sampler take such steps, so a release "
                "could fail or be inaccurate depending on the data: this space cannot be used."
            )
        return {
            "short_steps": f"along a geodesic of length {LONG_STEP * self._length:.3g} below "
            "{SHORT_STEP * self._length:.3g}"
        }

    def _sectional_estimates(self, points, u, v) -> np.ndarray:
        """Estimated sectional curvature of the planes of orthonormal ``u, v`` (shape
        ``(n, P) + point_shape``) at ``points`` (shape ``(n,) + point_shape``), shape ``(n, P)``."""
        k = len(self.point_shape)
        step = CURVATURE_STEP * self._length
        t = step * np.array([1.0, -1.0, 0.5, -0.5]).reshape((4, 1, 1) + (1,) * k)
        base = points[None, :, None]
        sq = self._dist(self._exp(base, t * u[None]), self._exp(base, t * v[None])) ** 2  # (4, n, P)
        estimate_t = 3.0 * (2.0 * step**2 - 0.5 * (sq[0] + sq[1])) / step**4
        half = 0.5 * step
        estimate_half = 3.0 * (2.0 * half**2 - 0.5 * (sq[2] + sq[3])) / half**4
        return (4.0 * estimate_half - estimate_t) / 3.0

    def _plane_pairs(self, n: int, rng) -> tuple[np.ndarray, int]:
        """Index pairs of the coordinate planes probed at each of ``n`` points, shape
        ``(n, P, 2)``: all of them when ``dim <= 12``, else 66 seeded ones drawn afresh at every
        point (so that together the points see most coordinate planes); and the number of
        planes of a second, random basis (0 when ``dim <= 12``, else ``min(dim // 2, 33)``)."""
        first, second = np.triu_indices(self.dim, k=1)
        if self.dim <= ALL_PLANES_MAX_DIM:
            return np.broadcast_to(np.stack([first, second], axis=-1), (n, first.size, 2)), 0
        chosen = np.sort(np.argsort(rng.random((n, first.size)), axis=-1)[:, :MAX_COORDINATE_PLANES], axis=-1)
        return np.stack([first[chosen], second[chosen]], axis=-1), min(self.dim // 2, MAX_COORDINATE_PLANES // 2)

    def _check_curvature(self, points, rng) -> dict:
        """Sectional curvature from small geodesic triangles, compared with the declared bounds,
        on three families of planes at every check point: one random plane, the coordinate
        planes (pairs of :meth:`_coordinate_frame`; a seeded subset above dim 12), and above dim
        12 disjoint planes of a second, random orthonormal basis; then a local search
        (:meth:`_search_planes`) from the lowest and the highest of these planes at every point.

        For orthonormal ``u, v`` at ``p``, ``ρ²(exp_p(tu), exp_p(tv)) = 2t² − (K/3)t⁴ + O(t⁵)``.
        Averaging ``±t`` removes the odd orders, so ``K(t) = 3(2t² − ρ̄²)/t⁴ = K + a t² + O(t⁴)``,
        and the Richardson combination ``(4K(t/2) − K(t))/3`` is accurate to ``O(t⁴)``.
        """
        if self.dim < 2:
            return {"curvature_estimates": None}
        n = points.shape[0]
        frame = self._frame(points)  # (n, dim, *shape)
        z = rng.standard_normal((n, 2, self.dim))
        z[:, 0] /= np.linalg.norm(z[:, 0], axis=-1, keepdims=True)
        z[:, 1] -= np.sum(z[:, 1] * z[:, 0], axis=-1, keepdims=True) * z[:, 0]
        z[:, 1] /= np.linalg.norm(z[:, 1], axis=-1, keepdims=True)
        u, v = [self._combine(z[:, i], frame)[:, None] for i in (0, 1)]
        coordinates = self._coordinate_frame(points)
        pairs, n_random = self._plane_pairs(n, rng)
        rows = np.arange(n)[:, None]
        u = np.concatenate([u, coordinates[rows, pairs[..., 0]]], axis=1)
        v = np.concatenate([v, coordinates[rows, pairs[..., 1]]], axis=1)
        if n_random:
            q = np.linalg.qr(rng.standard_normal((self.dim, 2 * n_random)))[0]  # orthonormal columns
            k = len(self.point_shape)
            second = np.sum(q.T.reshape((1, 2 * n_random, self.dim) + (1,) * k) * coordinates[:, None], axis=2)
            u = np.concatenate([u, second[:, 0::2]], axis=1)
            v = np.concatenate([v, second[:, 1::2]], axis=1)
        estimates = self._sectional_estimates(points, u, v)  # (n, planes)
        estimates, searched = self._search_planes(points, coordinates, u, v, estimates, rng)
        kappa_min, kappa_max = self.curvature_bounds
        tolerance = CURVATURE_RTOL * max(abs(kappa_min), abs(kappa_max), 1.0 / self._length**2)
        finite = np.where(np.isfinite(estimates), estimates, np.nan)
        low, high = float(np.nanmin(finite, initial=np.inf)), float(np.nanmax(finite, initial=-np.inf))
        step = CURVATURE_STEP * self._length
        planes = (
            f"{u.shape[1]} planes at each of {n} points (one random plane, {pairs.shape[1]} coordinate "
            f"planes{f', {n_random} planes of a second random basis' if n_random else ''}; then a search "
            f"of {len(SEARCH_STEPS)} rounds of {SEARCH_CANDIDATES} perturbed planes from the lowest and "
            "from the highest plane at each point)"
        )
        if not (np.all(np.isfinite(estimates)) and low >= kappa_min - tolerance and high <= kappa_max + tolerance):
            outside = (
                ~np.isfinite(estimates) | (estimates < kappa_min - tolerance) | (estimates > kappa_max + tolerance)
            )
            point, plane = np.unravel_index(np.argmax(outside), outside.shape)
            distance = self.check_radius * (point / (n - 1))
            kind = (
                "a random plane"
                if plane == 0
                else "a coordinate plane"
                if plane <= pairs.shape[1]
                else "a plane of the random basis"
                if plane <= pairs.shape[1] + n_random
                else "a searched plane"
            )
            raise AssumptionError(
                f"the sectional curvature of {self._description}, estimated from geodesic "
                f"triangles of side {step:.3g} on {planes} within geodesic distance "
                f"{self.check_radius:.6g} of base_point, ranges over [{low:.6g}, {high:.6g}], outside "
                f"the declared curvature_bounds {self.curvature_bounds!r} (tolerance {tolerance:.3g}; "
                f"first on {kind} at distance {distance:.3g} from base_point). Declare bounds that "
                "contain the curvature of the space over the region of your data (wider bounds are "
                "safe: they enlarge the sensitivity); if geomstats computes distances only "
                "approximately (an iterative log), this space cannot be checked."
            )
        return {
            "curvature_estimates": (low, high),
            "curvature_tolerance": tolerance,
            "triangle_side": step,
            "curvature_planes": planes,
            "curvature_searched": searched,
        }

    def _search_planes(self, points, coordinates, u, v, estimates, rng):
        """Local search for the extreme sectional curvatures at each check point: from the
        lowest and the highest estimated plane, ``len(SEARCH_STEPS)`` rounds that perturb the
        plane's two orthonormal vectors (coefficients in the orthonormal basis ``coordinates``)
        by seeded Gaussian steps, re-orthonormalise them and keep the candidate that improves
        the estimate. Returns ``estimates`` with the final planes' estimates appended (two
        columns: searched minimum and maximum) and the searched extremes ``(low, high)``."""
        n, dim = points.shape[0], self.dim
        rows = np.arange(n)
        flat = coordinates.reshape((n, dim, -1))
        # Coefficients of the starting planes in the orthonormal basis (rows: u and v).
        starts = np.stack(
            [
                np.nanargmin(np.where(np.isfinite(estimates), estimates, np.inf), axis=1),
                np.nanargmax(np.where(np.isfinite(estimates), estimates, -np.inf), axis=1),
            ],
            axis=1,
        )
        best = np.empty((n, 2, 2, dim))  # (point, min/max, u/v, dim)
        for i, w in enumerate((u, v)):
            chosen = w[rows[:, None], starts].reshape((n, 2, 1, -1))
            best[:, :, i] = self._inner(
                points.reshape((n, 1, 1) + self.point_shape),
                chosen.reshape((n, 2, 1) + self.point_shape),
                coordinates[:, None],
            )
        best_value = estimates[rows[:, None], starts]  # (n, 2)
        sign = np.array([-1.0, 1.0])  # minimise, then maximise (argmax of sign·value)
        c = SEARCH_CANDIDATES
        for step in SEARCH_STEPS:
            a = best[:, :, None, 0] + step * rng.standard_normal((n, 2, c, dim))
            b = best[:, :, None, 1] + step * rng.standard_normal((n, 2, c, dim))
            a /= np.linalg.norm(a, axis=-1, keepdims=True)
            b -= np.sum(a * b, axis=-1, keepdims=True) * a
            b /= np.linalg.norm(b, axis=-1, keepdims=True)
            cu = np.einsum("nscd,nda->nsca", a, flat).reshape((n, 2 * c) + self.point_shape)
            cv = np.einsum("nscd,nda->nsca", b, flat).reshape((n, 2 * c) + self.point_shape)
            values = self._sectional_estimates(points, cu, cv).reshape((n, 2, c))
            score = np.where(np.isfinite(values), sign[None, :, None] * values, -np.inf)
            pick = np.argmax(score, axis=-1)  # (n, 2)
            value = values[rows[:, None], np.arange(2)[None], pick]
            better = (sign * value > sign * best_value) | ~np.isfinite(value)
            best_value = np.where(better, value, best_value)
            best[better] = np.stack([a, b], axis=3)[rows[:, None], np.arange(2)[None], pick][better]
        finite = best_value[np.isfinite(best_value)]
        searched = (float(np.min(finite, initial=np.inf)), float(np.max(finite, initial=-np.inf)))
        return np.concatenate([estimates, best_value], axis=1), searched

    def _check_injectivity(self, points, rng) -> dict:
        """``log_p(exp_p(v)) = v`` for ``|v|`` just below the declared injectivity radius (or at
        ``ℓ``, ``3ℓ`` and the diameter ``2·check_radius`` of the checked region when it is
        infinite)."""
        if math.isfinite(self.injectivity_radius):
            lengths = [(1.0 - INJECTIVITY_MARGIN) * self.injectivity_radius]
        else:
            lengths = sorted({c * self._length for c in INFINITE_RADIUS_PROBES} | {2.0 * self.check_radius})
        directions = self._random_unit_tangent(points, rng=rng)
        worst = 0.0
        for length in lengths:
            v = length * directions
            back = self._log(points, self.project(self._exp(points, v)))
            error = np.asarray(self._norm(points, back - v)) / length
            worst = max(worst, float(np.max(np.where(np.isfinite(error), error, np.inf))))
            if not worst <= ROUND_TRIP_RTOL:
                raise AssumptionError(
                    f"log(exp(p, v)) differs from v by a relative {worst:.3g} for |v| = {length:.6g} at "
                    f"points sampled within geodesic distance {self.check_radius:.6g} of base_point on "
                    f"{self._description}: geodesics of that length stop being minimising (or "
                    "geomstats loses accuracy there), so the declared "
                    f"injectivity_radius={self.injectivity_radius!r} is too large. Declare a smaller one "
                    "(a smaller radius is safe: it only shrinks the admissible data balls)"
                    + (" or a smaller check_radius." if not math.isfinite(self.injectivity_radius) else ".")
                )
        return {"round_trip_lengths": tuple(lengths), "round_trip_error": worst}
