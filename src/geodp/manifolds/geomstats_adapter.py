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
# A projection may only remove rounding: it moves no coordinate by more than this, relative.
_PROJECTION_RTOL = 1e-8
# Lengths (in units of ℓ) at which log∘exp is checked when the declared radius is infinite,
# besides twice the radius of the checked region (its diameter).
_INFINITE_RADIUS_PROBES = (1.0, 3.0)
# Short steps: log(exp(p, v)) must return v to 1e-6·|v| + 1e-12·ℓ (rounding of the point's
# coordinates) at these lengths (units of ℓ). geomstats' PoincareBall.exp fails below 1e-8: it
# replaces the norm of shorter vectors by 1e-6. Where exp fails, vectors shorter than
# _SHORT_STEP·ℓ are exponentiated along a geodesic of length _LONG_STEP·ℓ instead.
_SHORT_PROBES = (1e-6, 1e-9)
_SHORT_STEP = 1e-3
_LONG_STEP = 0.1
# Gram eigenvalues below this share of the largest are a null direction of the tangent frame.
_RANK_RTOL = 1e-8
# Every coordinate plane is probed up to this dimension (66 planes at dim 12); above it, this
# many seeded coordinate planes plus up to half as many planes of a second, random basis.
_ALL_PLANES_MAX_DIM = 12
_MAX_COORDINATE_PLANES = 66
# Plane search: from the lowest and the highest estimated plane at each check point, this many
# rounds of seeded random perturbation in the Grassmannian of 2-planes (step _SEARCH_STEPS[r]
# in the coefficients of an orthonormal frame), with this many candidate planes per extreme and
# round, keeping improvements: a fixed public budget of 2·rounds·candidates planes per point.
_SEARCH_STEPS = tuple(float(s) for s in np.geomspace(0.5, 0.03, 16))
_SEARCH_CANDIDATES = 8
# Default radius of the checked region, in units of ℓ, when half the injectivity radius is larger.
_CHECK_RADIUS_LENGTHS = 3.0


def _real(value, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise InvalidTypeError(f"{name} must be a real number, got {type(value).__name__}.")
    return float(value)


def _curvature_bounds(bounds) -> tuple[float, float]:
    try:
        kappa_min, kappa_max = bounds
    except (TypeError, ValueError):
        raise InvalidTypeError(f"curvature_bounds must be a pair (kappa_min, kappa_max), got {bounds!r}.") from None
    kappa_min, kappa_max = _real(kappa_min, "kappa_min"), _real(kappa_max, "kappa_max")
    if not (math.isfinite(kappa_min) and math.isfinite(kappa_max)):
        raise InvalidParameterError(
            f"curvature_bounds must be finite, got {bounds!r}: declare a finite range that holds "
            "over the region of your data."
        )
    if kappa_min > kappa_max:
        raise InvalidParameterError(f"curvature_bounds must satisfy kappa_min <= kappa_max, got {bounds!r}: swap them.")
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


def _check_radius(value, injectivity_radius: float, length: float) -> float:
    """The radius of the checked region: ``min(inj/2, 4ℓ)`` by default; a declared one must be
    finite, > 0 and below the injectivity radius (the check points are ``exp`` of vectors of at
    most that length, which must be minimising)."""
    if value is None:
        return min(0.5 * injectivity_radius, _CHECK_RADIUS_LENGTHS * length)
    radius = _real(value, "check_radius")
    if not (math.isfinite(radius) and radius > 0):
        raise InvalidParameterError(f"check_radius must be finite and > 0, got {value!r}.")
    limit = (1.0 - _INJECTIVITY_MARGIN) * injectivity_radius
    if radius > limit:
        raise InvalidParameterError(
            f"check_radius={value!r} must be at most (1 - {_INJECTIVITY_MARGIN:g})·injectivity_radius "
            f"= {limit!r}: beyond it, exp of the base point no longer reaches points at that distance."
        )
    return radius


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
        Public point around which :meth:`random_point` draws; centre of the checked region.
    check_radius : float
        Radius of the checked region ``B(base_point, check_radius)``: the checks sampled points
        up to this geodesic distance from ``base_point`` and nothing beyond it.
    checks : dict
        What the plausibility checks measured and where (public: a function of the space and
        the declarations only). They are evidence, not proof: a wrong declaration that they miss
        silently voids the privacy guarantee.

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

    def __init__(
        self, space, *, curvature_bounds, injectivity_radius, base_point=None, n_checks: int = 32, check_radius=None
    ):
        try:
            from geomstats.geometry.manifold import Manifold as GeomstatsManifold
        except ImportError as err:  # pragma: no cover - exercised only without geomstats
            raise ImportError("from_geomstats needs geomstats: pip install 'geodp[geomstats]'.") from err
        if not isinstance(space, GeomstatsManifold):
            raise InvalidTypeError(
                f"space must be a geomstats Manifold, got {type(space).__name__}; geodp spaces need no wrapping."
            )
        metric = getattr(space, "metric", None)
        if metric is None:
            raise InvalidParameterError(
                f"the geomstats space {type(space).__name__} has no metric: create it with "
                "equip=True or call space.equip_with_metric(...) first."
            )
        if isinstance(n_checks, bool) or not isinstance(n_checks, (int, np.integer)) or n_checks < 2:
            raise InvalidParameterError(
                f"n_checks must be an integer >= 2 (the base point and the edge of the checked "
                f"region), got {n_checks!r}."
            )
        self.geomstats_space = space
        self._metric = metric
        self.dim = int(space.dim)
        self.point_shape = tuple(int(s) for s in space.shape)
        self.curvature_bounds = _curvature_bounds(curvature_bounds)
        self.injectivity_radius = _injectivity_radius(injectivity_radius, self.curvature_bounds[0])
        self._length = self._length_scale()
        self.check_radius = _check_radius(check_radius, self.injectivity_radius, self._length)
        self._description = f"{type(space).__name__.lstrip('_')}(dim={self.dim}) with {type(metric).__name__}"
        self.base_point = np.array(
            self.check_points(
                self._default_base_point() if base_point is None else base_point, "base_point", batch_ndim=0
            )
        )
        self.base_point.flags.writeable = False
        self._projection = self._probe_projection()
        # Scale of random points: E|v|² = min(1, inj/8)² for the tangent v that is exponentiated.
        self._spread = min(1.0, self.injectivity_radius / 8.0) / math.sqrt(self.dim)
        self._detour_short_steps = False  # set by the short-step check
        self._check_frame()
        self._no_transport = self._probe_transport()
        self._check_product_structure()
        self.checks = self._plausibility(int(n_checks))

    def __repr__(self) -> str:
        kappa_min, kappa_max = self.curvature_bounds
        return (
            f"GeomstatsSpace({self._description}; user-declared curvature_bounds=({kappa_min!r}, "
            f"{kappa_max!r}), injectivity_radius={self.injectivity_radius!r}; checked by sampling "
            f"only within geodesic distance {self.check_radius:.6g} of its base_point)"
        )

    def checks_cover(self, center, radius) -> bool:
        """Whether the ball ``B(center, radius)`` lies inside the region the checks sampled,
        ``B(base_point, check_radius)`` (by the triangle inequality: ``d(base_point, center) +
        radius <= check_radius``). A release on a ball that is not covered rests on the
        declarations alone.

        Examples
        --------
        >>> import numpy as np
        >>> from geomstats.geometry.hypersphere import Hypersphere
        >>> space = from_geomstats(Hypersphere(2), curvature_bounds=(1.0, 1.0),
        ...                        injectivity_radius=np.pi, base_point=[0.0, 0.0, 1.0])
        >>> space.check_radius == np.pi / 2
        True
        >>> space.checks_cover([0.0, 0.0, 1.0], 0.7), space.checks_cover([1.0, 0.0, 0.0], 0.7)
        (True, False)
        """
        center = self.check_points(center, "center", batch_ndim=0)
        radius = _real(radius, "radius")
        return bool(float(self._dist(self.base_point, center)) + radius <= self.check_radius)

    def __eq__(self, other) -> bool:
        """The same geomstats object with the same declarations and base point (geomstats
        spaces have no value equality, so a pickled or deep-copied space compares unequal)."""
        return (
            type(other) is type(self) and other.geomstats_space is self.geomstats_space and other._key() == self._key()
        )

    def __hash__(self) -> int:
        return hash((id(self.geomstats_space), self._key()))

    def _key(self):
        return (self.curvature_bounds, self.injectivity_radius, self.check_radius, self.base_point.tobytes())

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
        return self._call(
            "inner_product", lambda x, u, v: self._metric.inner_product(u, v, x), x, u, v, point_output=False
        )

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
        return self._call(
            "parallel_transport", lambda x, y, v: self._metric.parallel_transport(v, x, end_point=y), x, y, v
        )

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
        otherwise), kept only where it moves a point by rounding: some geomstats projections are
        wrong far out (``Hyperboloid.projection`` maps a point whose coordinates are ~100, and so
        fail its absolute membership tolerance, close to the origin)."""
        x = np.asarray(x, dtype=np.float64)
        if self._projection is None:
            return x
        projected = np.asarray(self._call("projection", self._projection, x), dtype=np.float64)
        axes = tuple(range(-len(self.point_shape), 0))
        moved = np.max(np.abs(projected - x), axis=axes)
        small = moved <= _PROJECTION_RTOL * np.maximum(1.0, np.max(np.abs(x), axis=axes))
        return np.where(small.reshape(small.shape + (1,) * len(self.point_shape)), projected, x)

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
        spanning = self._call(
            "to_tangent", lambda v, x: to_tangent(v, x), units, x.reshape(batch + (1,) + self.point_shape)
        )
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
        coefficients = (
            u[..., -self.dim :] / np.sqrt(np.maximum(w[..., -self.dim :], np.finfo(float).tiny))[..., None, :]
        )
        frame = np.einsum("...kj,...ka->...ja", coefficients, spanning.reshape(gram.shape))
        return frame.reshape(batch + (self.dim,) + self.point_shape)

    def _coordinate_frame(self, x) -> np.ndarray:
        """Orthonormal basis of ``T_x M`` aligned with the ambient coordinates, shape
        ``(n, dim) + point_shape`` for points ``x`` of shape ``(n,) + point_shape``: Gram–Schmidt
        in the metric on the projected ambient unit vectors of :meth:`_spanning_gram`, taking
        at each step the one with the largest residual (pivoted Cholesky of their Gram matrix).
        A vector that ``to_tangent`` keeps inside one factor of a product stays there, so the
        planes of pairs of this basis include the planes inside each factor.

        Raises
        ------
        InvalidParameterError
            ``to_tangent`` spans fewer than ``dim`` dimensions at a point.
        """
        spanning, gram = self._spanning_gram(x)
        n, ambient = gram.shape[0], gram.shape[-1]
        rows = np.arange(n)
        residual = np.array(np.diagonal(gram, axis1=-2, axis2=-1), copy=True)
        floor = _RANK_RTOL * np.max(residual, axis=-1)
        factor = np.zeros((n, ambient, self.dim))
        pivots = np.zeros((n, self.dim), dtype=int)
        for k in range(self.dim):
            pivot = np.argmax(residual, axis=-1)
            size = residual[rows, pivot]
            if not np.all(size > floor):
                raise InvalidParameterError(
                    f"to_tangent of {self._description} spans fewer than dim = {self.dim} "
                    "dimensions at a check point: this space cannot be wrapped."
                )
            column = gram[rows, :, pivot] - np.einsum("nak,nk->na", factor[:, :, :k], factor[rows, pivot, :k])
            factor[:, :, k] = column / np.sqrt(size)[:, None]
            residual -= factor[:, :, k] ** 2
            residual[rows, pivot] = -np.inf
            pivots[:, k] = pivot
        # basis = L_P⁻¹ s_P, with L_P the pivot rows of the Cholesky factor (lower triangular)
        coefficients = np.linalg.inv(factor[rows[:, None], pivots, :])
        chosen = spanning.reshape((n, ambient, -1))[rows[:, None], pivots]
        return np.einsum("nkj,nja->nka", coefficients, chosen).reshape((n, self.dim) + self.point_shape)

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
        """The group identity when the space has one, else geomstats' ``projection`` of the first
        of a few fixed ambient points (the identity matrix, zeros, ones, the first basis vector)
        that lands on the space: a public point, chosen without randomness (geomstats'
        ``random_point`` draws from numpy's global state)."""
        identity = getattr(self.geomstats_space, "identity", None)
        if identity is not None:
            return np.asarray(identity, dtype=np.float64)
        shape = self.point_shape
        candidates = [np.zeros(shape), np.ones(shape), np.eye(math.prod(shape))[0].reshape(shape)]
        if len(shape) == 2 and shape[0] == shape[1]:
            candidates.insert(0, np.eye(shape[0]))
        projection = getattr(self.geomstats_space, "projection", None)
        for candidate in candidates:
            try:
                with np.errstate(all="ignore"):  # zeros projected onto a sphere: 0/0, skipped
                    point = candidate if projection is None else np.asarray(projection(candidate), dtype=np.float64)
                    if (
                        point.shape == shape
                        and np.all(np.isfinite(point))
                        and bool(np.all(self.geomstats_space.belongs(point)))
                    ):
                        return point
            except Exception:  # a projection that does not apply to this candidate
                continue
        raise InvalidParameterError(
            f"no default base point found for {self._description}: pass base_point, a public point of the space."
        )

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
        if not abs(after - before) <= _ROUND_TRIP_RTOL * before:
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
            failure = (
                None
                if error() <= 1.0
                else f"exp and log of {self._description} disagree, even along a longer geodesic."
            )
        except AssumptionError as err:  # geomstats raised at a short distance
            failure = str(err)
        if failure is not None:
            raise AssumptionError(
                f"For points {min(_SHORT_PROBES) * self._length:.3g} to {max(_SHORT_PROBES) * self._length:.3g} "
                f"apart: {failure} The Karcher flow and the MH sampler take such steps, so a release "
                "could fail or be inaccurate depending on the data: this space cannot be used."
            )
        return {
            "short_steps": f"along a geodesic of length {_LONG_STEP * self._length:.3g} below "
            "{_SHORT_STEP * self._length:.3g}"
        }

    def _sectional_estimates(self, points, u, v) -> np.ndarray:
        """Estimated sectional curvature of the planes of orthonormal ``u, v`` (shape
        ``(n, P) + point_shape``) at ``points`` (shape ``(n,) + point_shape``), shape ``(n, P)``."""
        k = len(self.point_shape)
        step = _CURVATURE_STEP * self._length
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
        if self.dim <= _ALL_PLANES_MAX_DIM:
            return np.broadcast_to(np.stack([first, second], axis=-1), (n, first.size, 2)), 0
        chosen = np.sort(np.argsort(rng.random((n, first.size)), axis=-1)[:, :_MAX_COORDINATE_PLANES], axis=-1)
        return np.stack([first[chosen], second[chosen]], axis=-1), min(self.dim // 2, _MAX_COORDINATE_PLANES // 2)

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
        tolerance = _CURVATURE_RTOL * max(abs(kappa_min), abs(kappa_max), 1.0 / self._length**2)
        finite = np.where(np.isfinite(estimates), estimates, np.nan)
        low, high = float(np.nanmin(finite, initial=np.inf)), float(np.nanmax(finite, initial=-np.inf))
        step = _CURVATURE_STEP * self._length
        planes = (
            f"{u.shape[1]} planes at each of {n} points (one random plane, {pairs.shape[1]} coordinate "
            f"planes{f', {n_random} planes of a second random basis' if n_random else ''}; then a search "
            f"of {len(_SEARCH_STEPS)} rounds of {_SEARCH_CANDIDATES} perturbed planes from the lowest and "
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
        lowest and the highest estimated plane, ``len(_SEARCH_STEPS)`` rounds that perturb the
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
        c = _SEARCH_CANDIDATES
        for step in _SEARCH_STEPS:
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
            lengths = [(1.0 - _INJECTIVITY_MARGIN) * self.injectivity_radius]
        else:
            lengths = sorted({c * self._length for c in _INFINITE_RADIUS_PROBES} | {2.0 * self.check_radius})
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
                    f"points sampled within geodesic distance {self.check_radius:.6g} of base_point on "
                    f"{self._description}: geodesics of that length stop being minimising (or "
                    "geomstats loses accuracy there), so the declared "
                    f"injectivity_radius={self.injectivity_radius!r} is too large. Declare a smaller one "
                    "(a smaller radius is safe: it only shrinks the admissible data balls)"
                    + (" or a smaller check_radius." if not math.isfinite(self.injectivity_radius) else ".")
                )
        return {"round_trip_lengths": tuple(lengths), "round_trip_error": worst}


def from_geomstats(
    space, *, curvature_bounds, injectivity_radius, base_point=None, n_checks: int = 32, check_radius=None
) -> GeomstatsSpace:
    """Wrap a geomstats space (with its metric) as a geodp space.

    ``exp``, ``log``, ``dist``, ``inner`` and parallel transport go through the geomstats metric,
    vectorised over batches. geomstats cannot say what a privacy guarantee needs — bounds on the
    sectional curvature and the injectivity radius (the sensitivity of the Fréchet mean and the
    largest admissible data ball depend on them) — so you declare them, and they are checked
    for plausibility by sampling.

    **A wrong declaration silently voids the privacy guarantee**: an understated κ_max gives a
    too small sensitivity (on a product of two unit spheres, declaring κ_max = 0.8 instead of 1
    would about halve it at r = 0.7) and a too large admissible radius r* (0.878 instead of π/4).
    The checks below are evidence, not proof: they can miss a plane or a region where the
    declaration fails, and a release whose
    ball reaches beyond the checked region rests on your declaration alone.

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
        Public point at the centre of the checked region, around which
        :meth:`~GeomstatsSpace.random_point` draws: pass the public centre of your data.
        Default: the group identity when the space has one, else geomstats' ``projection`` of
        the first fixed ambient point (identity matrix, zeros, ones, first basis vector) that lands
        on the space; no randomness.
    n_checks : int, default 32
        Number of check points (at least 2: the base point and the edge of the region).
    check_radius : float, optional
        Radius of the checked region ``B(base_point, check_radius)``: the check points lie at
        geodesic distances ``0`` to ``check_radius`` from ``base_point``. Default
        ``min(inj/2, 3ℓ)``: half the injectivity radius covers every admissible data ball
        centred at ``base_point`` (r* ≤ inj/2), and ``3ℓ`` caps it where r* is infinite. At most
        ``(1 − 1e-3)·inj``. Pass at least ``d(base_point, center) + radius`` for your public ball
        (:meth:`GeomstatsSpace.checks_cover` tells).

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
    **Checked region.** The checks run at ``n_checks`` points ``exp_b(r_j ξ_j)`` of the base
    point ``b``, with ``r_j = check_radius · j/(n_checks − 1)`` and seeded random unit
    directions ``ξ_j``: the base point, points along radii, and points at the edge of
    ``B(b, check_radius)``. ``space.checks["check_radius"]`` and ``["checked_region"]`` say what
    was checked, and the ``repr`` — hence every privacy report made on the space — says
    "checked by sampling only within geodesic distance R of its base_point". A release on a
    ball that reaches beyond that region is **not refused** (the release code does not consult
    the adapter; :meth:`GeomstatsSpace.checks_cover` answers the question): it rests on your
    declaration alone, and its report shows the checked radius beside the ball's.

    **Checks** (deterministic: seed 0), with the length scale ℓ = the smaller of ``inj/π`` and
    ``1/√max|κ|`` (1 when both are infinite):

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
      ``[κ_min − tol, κ_max + tol]`` with ``tol = 1e-3 · max(|κ_min|, |κ_max|, 1/ℓ²)``, at every
      check point on one random plane and on every *coordinate plane*: the planes of pairs of
      an orthonormal basis obtained by Gram–Schmidt in the metric from the ambient unit vectors
      projected by ``to_tangent``. On a product such a basis has each vector inside one factor,
      so the planes inside each factor are probed (random planes rarely come near them: on
      S²×S², whose κ_max = 1, they range over [0.02, 0.76]). Above dimension 12, 66 seeded
      coordinate planes and up to 33 disjoint planes of a second, random basis are probed.
      The most extreme planes need not be any of these (on ``SPDMatrices(3)`` with its
      affine-invariant metric, whose curvature ranges over [−1/2, 0], they reach only −0.26),
      so at every check point a seeded local search follows: from the lowest and the highest
      plane, 16 rounds of 8 random perturbations of the plane's orthonormal pair (steps 0.5 down
      to 0.03 in frame coefficients), keeping improvements. The searched extremes
      (``space.checks["curvature_searched"]``) must lie within the same bounds. The search is
      local and its budget fixed: it found −0.499 on ``SPDMatrices(3)`` but only −0.45 on
      ``SPDMatrices(5)`` (true −1/2), so it narrows the gap without closing it;
    * *products*: on a geomstats ``ProductManifold`` with its ``ProductRiemannianMetric``, each
      factor whose metric is recognised (``Hypersphere``: 1; ``PoincareBall``, ``Hyperboloid``,
      ``PoincareHalfSpace``: −1; ``Euclidean``: 0) has that curvature on its planes when its
      dimension is at least 2, and planes across two factors have curvature 0: the declared
      bounds must contain these values exactly, and the error names the factor;
    * *injectivity radius*: ``log_p(exp_p(v))`` must return ``v`` to a relative ``1e-6`` for
      ``|v| = (1 − 1e-3)·inj`` (at ``|v| = ℓ, 3ℓ`` and ``2·check_radius`` when ``inj = ∞``).

    These are evidence, not a proof: they sample finitely many points and planes of the
    checked region, so an understated κ_max or an overstated injectivity radius can go unseen
    where no probe looks (a plane that neither the fixed planes nor the local search reach, a point
    between the samples, anything outside the region), and an infinite injectivity radius
    cannot be certified. The ``repr`` says that the bounds are user-declared and were checked
    by sampling, and over which region.

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
        check_radius=check_radius,
    )
