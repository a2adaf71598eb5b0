"""Any geomstats space as a geodp space (docs/guide.md, "Any geomstats space").

geomstats stays an optional dependency: this module never imports it at import time; only
:class:`GeomstatsSpace` imports it, when a space is wrapped.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from geodp.errors import AssumptionError, InvalidParameterError, InvalidTypeError
from geodp.manifolds.base import Manifold
from geodp.validation import as_generator

__all__ = ["GeomstatsSpace", "from_geomstats"]

# Step of the curvature estimate, relative to the space's length scale ℓ, and its Richardson
# partner t/2: the estimate is accurate to about 3e-5·|K| there even when geomstats measures
# distances through arccos (1e-2·ℓ already shows rounding, 2e-1·ℓ truncation).
_CURVATURE_STEP = 0.1
# Curvature estimates may exceed the declared bounds by this share of S = max(|κ|, 1/ℓ²).
_CURVATURE_RTOL = 1e-3
# The injectivity radius is checked at this share below its declared value...
_INJECTIVITY_MARGIN = 1e-3
# ...where log(exp(p, v)) must give back v to this relative accuracy.
_ROUND_TRIP_RTOL = 1e-6
# Lengths (in units of ℓ) at which log∘exp is checked when the declared radius is infinite.
_INFINITE_RADIUS_PROBES = (1.0, 3.0, 10.0)
# Short steps: log(exp(p, v)) must return v to 1e-6·|v| + 1e-12·ℓ (rounding of the point's
# coordinates) at these lengths (units of ℓ). geomstats' PoincareBall.exp fails below 1e-8: it
# replaces the norm of shorter vectors by 1e-6. Where exp fails, vectors shorter than
# _SHORT_STEP·ℓ are exponentiated along a geodesic of length _LONG_STEP·ℓ instead.
_SHORT_PROBES = (1e-6, 1e-9)
_SHORT_STEP = 1e-3
_LONG_STEP = 0.1
# Gram eigenvalues below this share of the largest are a null direction of the tangent frame.
_RANK_RTOL = 1e-8


def _real(value, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise InvalidTypeError(f"{name} must be a real number, got {type(value).__name__}.")
    return float(value)


def _curvature_bounds(bounds) -> tuple[float, float]:
    try:
        kappa_min, kappa_max = bounds
    except (TypeError, ValueError):
        raise InvalidTypeError(
            f"curvature_bounds must be a pair (kappa_min, kappa_max), got {bounds!r}."
        ) from None
    kappa_min, kappa_max = _real(kappa_min, "kappa_min"), _real(kappa_max, "kappa_max")
    if not (math.isfinite(kappa_min) and math.isfinite(kappa_max)):
        raise InvalidParameterError(
            f"curvature_bounds must be finite, got {bounds!r}: declare a finite range that holds "
            "over the region of your data."
        )
    if kappa_min > kappa_max:
        raise InvalidParameterError(
            f"curvature_bounds must satisfy kappa_min <= kappa_max, got {bounds!r}: swap them."
        )
    return kappa_min, kappa_max


def _injectivity_radius(value, kappa_min: float) -> float:
    radius = _real(value, "injectivity_radius")
    if not radius > 0:  # NaN fails too
        raise InvalidParameterError(
            f"injectivity_radius must be > 0 (math.inf when exp is a diffeomorphism), got {value!r}."
        )
    if kappa_min > 0:
        # Bonnet–Myers: the diameter is at most π/√κ_min, and the farthest point from p is a cut
        # point of p, so inj <= diam.
        limit = math.pi / math.sqrt(kappa_min)
        if radius > limit * (1.0 + 1e-12):
            raise InvalidParameterError(
                f"injectivity_radius={value!r} exceeds pi/sqrt(kappa_min) = {limit!r}, the largest "
                "diameter of a space whose curvature is at least kappa_min > 0 (Bonnet-Myers). "
                "Lower injectivity_radius or kappa_min."
            )
    return radius


class GeomstatsSpace(Manifold):
    """A geomstats space with its metric, seen as a geodp :class:`~geodp.manifolds.Manifold`.

    Build it with :func:`from_geomstats`, which documents the parameters and the checks.
    ``exp``, ``log``, ``dist``, ``inner`` and ``transport`` call the geomstats metric;
    ``belongs`` and ``project`` call the geomstats space. Random tangent vectors and points come
    from the caller's generator, never from numpy's global state. The space is declared neither
    flat nor homogeneous, so the Laplace mechanism truncates to the public ball with
    ``σ = 2Δ/ε`` and samples by Metropolis–Hastings (``exact: False``).

    Attributes
    ----------
    geomstats_space : geomstats Manifold
        The wrapped space (its ``metric`` does the geometry).
    base_point : numpy.ndarray, shape point_shape
        Public point around which :meth:`random_point` draws and the checks sample.
    checks : dict
        What the plausibility checks measured (public: a function of the space and the
        declarations only).

    Examples
    --------
    >>> import numpy as np
    >>> from geomstats.geometry.hypersphere import Hypersphere
    >>> space = from_geomstats(Hypersphere(2), curvature_bounds=(1.0, 1.0),
    ...                        injectivity_radius=np.pi)
    >>> north, east = np.array([0.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0])
    >>> round(float(space.dist(north, east)), 12) == round(np.pi / 2, 12)
    True
    >>> space.is_homogeneous, space.is_flat
    (False, False)
    """

    is_homogeneous = False
    is_flat = False

    def __init__(self, space, *, curvature_bounds, injectivity_radius, base_point=None, n_checks: int = 32):
        try:
            from geomstats.geometry.manifold import Manifold as GeomstatsManifold
        except ImportError as err:  # pragma: no cover - exercised only without geomstats
            raise ImportError(
                "from_geomstats needs geomstats: pip install 'geodp[geomstats]'."
            ) from err
        if not isinstance(space, GeomstatsManifold):
            raise InvalidTypeError(
                f"space must be a geomstats Manifold, got {type(space).__name__}; geodp spaces "
                "need no wrapping."
            )
        metric = getattr(space, "metric", None)
        if metric is None:
            raise InvalidParameterError(
                f"the geomstats space {type(space).__name__} has no metric: create it with "
                "equip=True or call space.equip_with_metric(...) first."
            )
        if isinstance(n_checks, bool) or not isinstance(n_checks, (int, np.integer)) or n_checks < 1:
            raise InvalidParameterError(f"n_checks must be a positive integer, got {n_checks!r}.")
        self.geomstats_space = space
        self._metric = metric
        self.dim = int(space.dim)
        self.point_shape = tuple(int(s) for s in space.shape)
        self.curvature_bounds = _curvature_bounds(curvature_bounds)
        self.injectivity_radius = _injectivity_radius(injectivity_radius, self.curvature_bounds[0])
        self._description = f"{type(space).__name__.lstrip('_')}(dim={self.dim}) with {type(metric).__name__}"
        self.base_point = np.array(self.check_points(
            self._default_base_point() if base_point is None else base_point, "base_point", batch_ndim=0))
        self.base_point.flags.writeable = False
        self._projection = self._probe_projection()
        # Scale of random points: E|v|² = min(1, inj/8)² for the tangent v that is exponentiated.
        self._spread = min(1.0, self.injectivity_radius / 8.0) / math.sqrt(self.dim)
        self._length = self._length_scale()
        self._detour_short_steps = False  # set by the short-step check
        self._check_frame()
        self._no_transport = self._probe_transport()
        self.checks = self._plausibility(int(n_checks))

    def __repr__(self) -> str:
        kappa_min, kappa_max = self.curvature_bounds
        return (
            f"GeomstatsSpace({self._description}; user-declared curvature_bounds=({kappa_min!r}, "
            f"{kappa_max!r}), injectivity_radius={self.injectivity_radius!r}; checked by sampling)"
        )

    def __eq__(self, other) -> bool:
        """The same geomstats object with the same declarations and base point (geomstats
        spaces have no value equality, so a pickled or deep-copied space compares unequal)."""
        return type(other) is type(self) and other.geomstats_space is self.geomstats_space and other._key() == self._key()

    def __hash__(self) -> int:
        return hash((id(self.geomstats_space), self._key()))

    def _key(self):
        return (self.curvature_bounds, self.injectivity_radius, self.base_point.tobytes())

    # ----------------------------------------------------------- geomstats calls
    def _call(self, name: str, function, *arrays, point_output: bool = True) -> np.ndarray:
        """Call the geomstats method ``name`` (as ``function``) on arrays whose batch axes
        broadcast: flattened to one batch axis (what geomstats vectorises over), reshaped back
        afterwards.

        Raises
        ------
        AssumptionError
            geomstats raised. Its message is withheld (geomstats quotes the points, which may be
            private records); only the method and the exception type are named.
        """
        k = len(self.point_shape)
        arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
        shape = arrays[0].shape
        if any(a.shape != shape for a in arrays):
            shape = np.broadcast_shapes(*(a.shape[: a.ndim - k] for a in arrays)) + self.point_shape
            arrays = [np.broadcast_to(a, shape) for a in arrays]
        batch = shape[: len(shape) - k]
        size = math.prod(batch)
        tail = self.point_shape if point_output else ()
        if size == 0:
            return np.zeros(batch + tail)
        if len(batch) != 1:
            arrays = [a.reshape((size,) + self.point_shape) for a in arrays]
        try:
            out = function(*arrays)
        except Exception as err:
            raise AssumptionError(
                f"geomstats raised {type(err).__name__} in {name} on {self._description} (message "
                "withheld: it can quote the points)."
            ) from None
        return np.asarray(out, dtype=np.float64).reshape(batch + tail)

    def _exp(self, x, v):
        """geomstats' exp; where it failed the short-step check at construction, a vector
        ``v`` shorter than ``1e-3·ℓ`` goes instead along a longer geodesic through ``x``:
        with ``y = exp_x(L v/|v|)``, ``exp_x(v) = exp_y((1 − |v|/L) log_y x)``."""
        out = self._call("exp", lambda x, v: self._metric.exp(v, x), x, v)
        if not self._detour_short_steps:
            return out
        x, v = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(v, dtype=np.float64))
        norm = np.asarray(self._norm(x, v))
        short = (norm > 0) & (norm < _SHORT_STEP * self._length)
        if np.any(short):
            k = len(self.point_shape)
            length = _LONG_STEP * self._length
            base, ratio = x[short], (length / norm[short]).reshape((-1,) + (1,) * k)
            far = self._call("exp", lambda x, v: self._metric.exp(v, x), base, ratio * v[short])
            back = self._log(far, base)
            out = np.array(out, copy=True)
            out[short] = self._call("exp", lambda x, v: self._metric.exp(v, x), far, (1.0 - 1.0 / ratio) * back)
        return out

    def _log(self, x, y):
        return self._call("log", lambda x, y: self._metric.log(y, x), x, y)

    def _dist(self, x, y):
        return self._call("dist", self._metric.dist, x, y, point_output=False)

    def _inner(self, x, u, v):
        return self._call("inner_product", lambda x, u, v: self._metric.inner_product(u, v, x), x, u, v, point_output=False)

    def _transport(self, x, y, v):
        """geomstats' parallel transport along the geodesic from ``x`` to ``y``.

        Raises
        ------
        NotImplementedError
            geomstats has no parallel transport for this metric, or it failed the probe at
            construction (it must run and preserve a norm). ``frechet_mean`` then takes its safe
            step instead of the Barzilai–Borwein one.
        """
        if self._no_transport is not None:
            raise NotImplementedError(
                f"no parallel transport on {self._description}: {self._no_transport}. geodp "
                "functions that need one (geodesic regression, the tangent-bundle samplers) cannot "
                "run on this space."
            )
        return self._call("parallel_transport", lambda x, y, v: self._metric.parallel_transport(v, x, end_point=y), x, y, v)

    def _belongs(self, x, rtol):
        """geomstats' ``belongs`` with absolute tolerance ``rtol`` (points of geomstats' spaces
        have coordinates of order 1)."""
        space = self.geomstats_space
        return self._call("belongs", lambda x: space.belongs(x, atol=rtol), x, point_output=False).astype(bool)

    @property
    def _membership_hint(self) -> str:
        return f"Points must pass {type(self.geomstats_space).__name__}.belongs; use space.project(x)."

    def project(self, x):
        """geomstats' ``projection`` onto the space, where it has a working one (identity
        otherwise)."""
        x = np.asarray(x, dtype=np.float64)
        return x if self._projection is None else self._call("projection", self._projection, x)

    def _probe_projection(self):
        """geomstats' ``projection`` if it runs and keeps the base point in place, else None."""
        projection = getattr(self.geomstats_space, "projection", None)
        if projection is None:
            return None
        try:
            moved = np.asarray(projection(self.base_point), dtype=np.float64)
        except Exception:  # missing (NotImplementedError) or broken on this space
            return None
        scale = max(1.0, float(np.max(np.abs(self.base_point))))
        if moved.shape != self.point_shape or not np.max(np.abs(moved - self.base_point)) <= 1e-10 * scale:
            return None
        return projection

    # --------------------------------------------------------------- randomness
    def _spanning_gram(self, x):
        """The ambient unit vectors projected by ``to_tangent`` at ``x`` (they span ``T_x M``),
        shape ``batch + (A,) + point_shape`` with ``A = prod(point_shape)``, and their Gram
        matrix in the metric, shape ``batch + (A, A)``."""
        x = np.asarray(x, dtype=np.float64)
        batch = x.shape[: x.ndim - len(self.point_shape)]
        ambient = math.prod(self.point_shape)
        units = np.eye(ambient).reshape((ambient,) + self.point_shape)
        to_tangent = self.geomstats_space.to_tangent
        spanning = self._call("to_tangent", lambda v, x: to_tangent(v, x), units, x.reshape(batch + (1,) + self.point_shape))
        gram = self._inner(
            x.reshape(batch + (1, 1) + self.point_shape),
            spanning.reshape(batch + (ambient, 1) + self.point_shape),
            spanning.reshape(batch + (1, ambient) + self.point_shape),
        )
        return spanning, 0.5 * (gram + np.swapaxes(gram, -1, -2))

    def _frame(self, x) -> np.ndarray:
        """Orthonormal basis of ``T_x M`` in the metric, shape ``batch + (dim,) + point_shape``:
        the eigenvectors of the Gram matrix of :meth:`_spanning_gram` with the ``dim`` largest
        eigenvalues, scaled by their inverse square roots, combine the spanning vectors."""
        spanning, gram = self._spanning_gram(x)
        batch = gram.shape[:-2]
        w, u = np.linalg.eigh(gram)
        coefficients = u[..., -self.dim:] / np.sqrt(np.maximum(w[..., -self.dim:], np.finfo(float).tiny))[..., None, :]
        frame = np.einsum("...kj,...ka->...ja", coefficients, spanning.reshape(gram.shape))
        return frame.reshape(batch + (self.dim,) + self.point_shape)

    def _combine(self, z, frame):
        """``Σ_j z_j e_j`` for coefficients ``z`` (batch, dim) and a frame (batch, dim, *shape)."""
        k = len(self.point_shape)
        return np.sum(z.reshape(z.shape + (1,) * k) * frame, axis=-k - 1)

    def _random_tangent(self, x, size=None, rng=None):
        """Standard Gaussian in an orthonormal basis of ``T_x M`` (:meth:`_frame`), drawn from
        the caller's generator."""
        x = np.asarray(x, dtype=np.float64)
        z = as_generator(rng).standard_normal(self._batch_size(x, size) + (self.dim,))
        return self._combine(z, self._frame(x))

    def random_point(self, size=None, rng=None):
        """``exp`` at :attr:`base_point` of a Gaussian tangent vector with
        ``E|v|² = min(1, inj/8)²`` (a law for tests and examples; no privacy meaning).

        Examples
        --------
        >>> import numpy as np
        >>> from geomstats.geometry.hypersphere import Hypersphere
        >>> space = from_geomstats(Hypersphere(2), curvature_bounds=(1.0, 1.0),
        ...                        injectivity_radius=np.pi)
        >>> bool(np.all(space.belongs(space.random_point(5, rng=0))))
        True
        """
        v = self._spread * self._random_tangent(self.base_point, size=size, rng=rng)
        return self.project(self._exp(self.base_point, v))

    # ------------------------------------------------------- construction checks
    def _default_base_point(self):
        """The group identity when the space has one, else geomstats' first ``random_point``
        under seed 0, with numpy's global random state saved and restored around the call."""
        identity = getattr(self.geomstats_space, "identity", None)
        if identity is not None:
            return np.asarray(identity, dtype=np.float64)
        state = np.random.get_state()
        try:
            np.random.seed(0)
            return np.asarray(self.geomstats_space.random_point(), dtype=np.float64)
        finally:
            np.random.set_state(state)

    def _check_frame(self) -> None:
        """``to_tangent`` must span a space of dimension ``dim`` at the base point."""
        w = np.linalg.eigvalsh(self._spanning_gram(self.base_point)[1])
        rank = int(np.sum(w > _RANK_RTOL * max(float(w[-1]), 0.0)))
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
        end = self._exp(self.base_point, 0.5 * min(1.0, self.injectivity_radius / 4.0) * w / self._norm(self.base_point, w))
        try:
            moved = np.asarray(self._metric.parallel_transport(u, self.base_point, end_point=end), dtype=np.float64)
        except NotImplementedError:
            return "geomstats implements no parallel transport for this metric"
        except Exception as err:  # a geomstats method that exists but fails on this space
            return f"geomstats' parallel_transport fails on this space ({type(err).__name__}: {err})"
        before, after = float(self._norm(self.base_point, u)), float(self._norm(end, moved.reshape(self.point_shape)))
        if not abs(after - before) <= _ROUND_TRIP_RTOL * before:
            return f"geomstats' parallel_transport changed a norm from {before:.6g} to {after:.6g}"
        return None

    def _length_scale(self) -> float:
        """ℓ: the smaller of ``inj/π`` and ``1/√max|κ|`` where finite, else 1."""
        kappa = max(abs(self.curvature_bounds[0]), abs(self.curvature_bounds[1]))
        candidates = [self.injectivity_radius / math.pi, 1.0 / math.sqrt(kappa) if kappa > 0 else math.inf]
        scale = min(candidates)
        return scale if math.isfinite(scale) else 1.0

    def _plausibility(self, n_checks: int) -> dict:
        rng = np.random.default_rng(0)
        points = self.random_point(n_checks, rng=rng)
        checks = {"n_points": n_checks, "length_scale": self._length}
        checks.update(self._check_short_steps(points, rng))
        checks.update(self._check_curvature(points, rng))
        checks.update(self._check_injectivity(points, rng))
        return checks

    def _check_short_steps(self, points, rng) -> dict:
        """``log_p(exp_p(v)) = v`` for very short ``v`` (the last steps of the Karcher flow):
        geomstats' exp as is, else the long-geodesic construction of :meth:`_exp`."""
        directions = self._random_unit_tangent(points, rng=rng)

        def error() -> float:
            worst = 0.0
            for length in _SHORT_PROBES:
                v = length * self._length * directions
                miss = np.asarray(self._norm(points, self._log(points, self._exp(points, v)) - v))
                allowed = 1e-6 * length * self._length + 1e-12 * self._length
                worst = max(worst, float(np.max(np.where(np.isfinite(miss), miss, np.inf))) / allowed)
            return worst

        try:
            if error() <= 1.0:
                return {"short_steps": "geomstats' exp"}
            self._detour_short_steps = True
            failure = None if error() <= 1.0 else f"exp and log of {self._description} disagree, even along a longer geodesic."
        except AssumptionError as err:  # geomstats raised at a short distance
            failure = str(err)
        if failure is not None:
            raise AssumptionError(
                f"For points {min(_SHORT_PROBES) * self._length:.3g} to {max(_SHORT_PROBES) * self._length:.3g} "
                f"apart: {failure} The Karcher flow and the MH sampler take such steps, so a release "
                "could fail or be inaccurate depending on the data: this space cannot be used."
            )
        return {"short_steps": f"along a geodesic of length {_LONG_STEP * self._length:.3g} below {_SHORT_STEP * self._length:.3g}"}

    def _check_curvature(self, points, rng) -> dict:
        """Sectional curvature from small geodesic triangles, compared with the declared bounds.

        For orthonormal ``u, v`` at ``p``, ``ρ²(exp_p(tu), exp_p(tv)) = 2t² − (K/3)t⁴ + O(t⁵)``.
        Averaging ``±t`` removes the odd orders, so ``K(t) = 3(2t² − ρ̄²)/t⁴ = K + a t² + O(t⁴)``,
        and the Richardson combination ``(4K(t/2) − K(t))/3`` is accurate to ``O(t⁴)``.
        """
        if self.dim < 2:
            return {"curvature_estimates": None}
        frame = self._frame(points)  # (n, dim, *shape)
        z = rng.standard_normal((points.shape[0], 2, self.dim))
        z[:, 0] /= np.linalg.norm(z[:, 0], axis=-1, keepdims=True)
        z[:, 1] -= np.sum(z[:, 1] * z[:, 0], axis=-1, keepdims=True) * z[:, 0]
        z[:, 1] /= np.linalg.norm(z[:, 1], axis=-1, keepdims=True)
        u, v = self._combine(z[:, 0], frame), self._combine(z[:, 1], frame)
        step = _CURVATURE_STEP * self._length
        t = step * np.array([1.0, -1.0, 0.5, -0.5]).reshape((4, 1) + (1,) * len(self.point_shape))
        sq = self._dist(self._exp(points[None], t * u[None]), self._exp(points[None], t * v[None])) ** 2  # (4, n)
        estimate_t = 3.0 * (2.0 * step**2 - 0.5 * (sq[0] + sq[1])) / step**4
        half = 0.5 * step
        estimate_half = 3.0 * (2.0 * half**2 - 0.5 * (sq[2] + sq[3])) / half**4
        estimates = (4.0 * estimate_half - estimate_t) / 3.0
        kappa_min, kappa_max = self.curvature_bounds
        tolerance = _CURVATURE_RTOL * max(abs(kappa_min), abs(kappa_max), 1.0 / self._length**2)
        low, high = float(np.min(estimates)), float(np.max(estimates))
        if not (np.all(np.isfinite(estimates)) and low >= kappa_min - tolerance and high <= kappa_max + tolerance):
            raise AssumptionError(
                f"the sectional curvature of {self._description}, estimated from geodesic "
                f"triangles of side {step:.3g} at {points.shape[0]} sampled points and planes, ranges "
                f"over [{low:.6g}, {high:.6g}], outside the declared curvature_bounds "
                f"{self.curvature_bounds!r} (tolerance {tolerance:.3g}). Declare bounds that contain "
                "the curvature of the space (wider bounds are safe: they enlarge the sensitivity); "
                "if geomstats computes distances only approximately (an iterative log), this "
                "space cannot be checked."
            )
        return {"curvature_estimates": (low, high), "curvature_tolerance": tolerance, "triangle_side": step}

    def _check_injectivity(self, points, rng) -> dict:
        """``log_p(exp_p(v)) = v`` for ``|v|`` just below the declared injectivity radius (or at
        a few lengths of order ℓ when it is infinite)."""
        if math.isfinite(self.injectivity_radius):
            lengths = [(1.0 - _INJECTIVITY_MARGIN) * self.injectivity_radius]
        else:
            lengths = [c * self._length for c in _INFINITE_RADIUS_PROBES]
        directions = self._random_unit_tangent(points, rng=rng)
        worst = 0.0
        for length in lengths:
            v = length * directions
            back = self._log(points, self.project(self._exp(points, v)))
            error = np.asarray(self._norm(points, back - v)) / length
            worst = max(worst, float(np.max(np.where(np.isfinite(error), error, np.inf))))
            if not worst <= _ROUND_TRIP_RTOL:
                raise AssumptionError(
                    f"log(exp(p, v)) differs from v by a relative {worst:.3g} for |v| = {length:.6g} at "
                    f"points sampled on {self._description}: geodesics of that length stop being "
                    f"minimising, so the declared injectivity_radius={self.injectivity_radius!r} is too "
                    "large. Declare a smaller one (a smaller radius is safe: it only shrinks the "
                    "admissible data balls)."
                )
        return {"round_trip_lengths": tuple(lengths), "round_trip_error": worst}


def from_geomstats(space, *, curvature_bounds, injectivity_radius, base_point=None, n_checks: int = 32) -> GeomstatsSpace:
    """Wrap a geomstats space (with its metric) as a geodp space.

    ``exp``, ``log``, ``dist``, ``inner`` and parallel transport go through the geomstats metric,
    vectorised over batches. geomstats cannot say what a privacy guarantee needs — bounds on the
    sectional curvature and the injectivity radius (the sensitivity of the Fréchet mean and the
    largest admissible data ball depend on them) — so you declare them, and they are checked
    for plausibility by sampling.

    Parameters
    ----------
    space : geomstats.geometry.manifold.Manifold
        A geomstats space equipped with a metric (``space.metric``), numpy backend.
    curvature_bounds : tuple of float
        ``(κ_min, κ_max)``: bounds on every sectional curvature, over the whole region where your
        data and releases live. Wider is safe (a larger κ_max gives a larger sensitivity).
    injectivity_radius : float
        A lower bound on the injectivity radius (``math.inf`` when ``exp`` is a diffeomorphism at
        every point, e.g. simply connected spaces of non-positive curvature). Smaller is safe.
    base_point : array_like, shape space.shape, optional
        Public point around which :meth:`~GeomstatsSpace.random_point` draws and the checks
        sample: pass the public centre of your data. Default: the group identity when the space
        has one, else geomstats' ``random_point()`` under seed 0 (numpy's global random state is
        saved and restored around that call).
    n_checks : int, default 32
        Number of sampled points (each with one random tangent plane and one direction) of the
        plausibility checks.

    Returns
    -------
    GeomstatsSpace
        ``is_flat`` and ``is_homogeneous`` are False: the Laplace mechanism truncates to the
        public ball (``σ = 2Δ/ε``, sound whether or not the space is homogeneous) and samples by
        random-walk Metropolis–Hastings, so releases say ``exact: False`` and warn with
        :class:`~geodp.errors.ApproximateSamplerWarning`.

    Raises
    ------
    InvalidTypeError
        ``space`` is not a geomstats space; a bound is not a real number.
    InvalidParameterError
        ``κ_min > κ_max`` or a bound is not finite; ``injectivity_radius ≤ 0``, or above
        ``π/√κ_min`` when κ_min > 0 (Bonnet–Myers); the space has no metric; ``to_tangent``
        does not span ``dim`` dimensions.
    NotOnManifoldError
        ``base_point`` is not a point of the space.
    AssumptionError
        A sampled check fails (below).

    Notes
    -----
    **Checks** (deterministic: seed 0, at ``n_checks`` points drawn by ``random_point``), with
    the length scale ℓ = the smaller of ``inj/π`` and ``1/√max|κ|`` (1 when both are infinite):

    * *short steps*: ``log_p(exp_p(v))`` must return ``v`` to ``1e-6·|v| + 1e-12·ℓ`` for
      ``|v| = 1e-6·ℓ`` and ``1e-9·ℓ`` (the last steps of the Karcher flow, and MH steps at large
      ε). Where geomstats' exp fails this (its ``PoincareBall`` replaces norms below 1e-8 by
      1e-6), vectors shorter than ``1e-3·ℓ`` are exponentiated along a geodesic of length
      ``0.1·ℓ`` instead, and the check is repeated. A space on which geomstats raises at such
      distances is refused (geomstats 2.8's ``SpecialOrthogonal(3)`` takes rotations 1e-7 to
      1e-6 apart for antipodal ones): a release on it could fail depending on the data;
    * *curvature*: for orthonormal ``u, v`` at ``p``,
      ``ρ²(exp_p(tu), exp_p(tv)) = 2t² − (K/3)t⁴ + O(t⁵)``; the estimate at ``t = 0.1ℓ`` and
      ``0.05ℓ``, averaged over ``±t`` and Richardson-extrapolated, must lie in
      ``[κ_min − tol, κ_max + tol]`` with ``tol = 1e-3 · max(|κ_min|, |κ_max|, 1/ℓ²)``;
    * *injectivity radius*: ``log_p(exp_p(v))`` must return ``v`` to a relative ``1e-6`` for
      ``|v| = (1 − 1e-3)·inj`` (at ``|v| = ℓ, 3ℓ, 10ℓ`` when ``inj = ∞``).

    These are samples, not a proof: they see the space only near ``base_point`` (within a
    geodesic distance of about ``3·min(1, inj/8)``), catch an understated κ_max or an overstated
    injectivity radius only where the sampled planes and directions show it, and cannot certify
    an infinite injectivity radius. Every privacy report made on the space names it by its
    ``repr``, which says that the bounds are user-declared and were checked by sampling.

    When geomstats raises during a computation, the adapter raises
    :class:`~geodp.errors.AssumptionError` naming the method and the exception type only:
    geomstats' messages quote the points, which may be private records.

    The random-walk proposal ``exp_x(sξ)`` of the MH sampler is symmetric with respect to the
    Riemannian volume on any Riemannian manifold for steps inside the injectivity radius (the
    volume density of geodesic polar coordinates is symmetric in its two points), so the
    sampler needs nothing more from the space.

    Examples
    --------
    >>> import math
    >>> import numpy as np
    >>> from geomstats.geometry.poincare_ball import PoincareBall
    >>> ball = from_geomstats(PoincareBall(2), curvature_bounds=(-1.0, -1.0),
    ...                       injectivity_radius=math.inf)
    >>> x = np.array([0.5, 0.0])
    >>> round(float(ball.dist(np.zeros(2), x)), 12) == round(2 * math.atanh(0.5), 12)
    True
    >>> from_geomstats(PoincareBall(2), curvature_bounds=(-0.5, 0.0), injectivity_radius=math.inf)
    Traceback (most recent call last):
    ...
    geodp.errors.AssumptionError: the sectional curvature of ...
    """
    return GeomstatsSpace(
        space,
        curvature_bounds=curvature_bounds,
        injectivity_radius=injectivity_radius,
        base_point=base_point,
        n_checks=n_checks,
    )
