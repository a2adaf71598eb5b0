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
from geodp.manifolds.geomstats_checks import INJECTIVITY_MARGIN, LONG_STEP, RANK_RTOL, SHORT_STEP, DeclarationChecks
from geodp.validation import as_generator

__all__ = ["GeomstatsSpace", "from_geomstats"]

# A projection may only remove rounding: it moves no coordinate by more than this, relative.
_PROJECTION_RTOL = 1e-8
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
    limit = (1.0 - INJECTIVITY_MARGIN) * injectivity_radius
    if radius > limit:
        raise InvalidParameterError(
            f"check_radius={value!r} must be at most (1 - {INJECTIVITY_MARGIN:g})·injectivity_radius "
            f"= {limit!r}: beyond it, exp of the base point no longer reaches points at that distance."
        )
    return radius


class GeomstatsSpace(DeclarationChecks, Manifold):
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
        short = (norm > 0) & (norm < SHORT_STEP * self._length)
        if np.any(short):
            k = len(self.point_shape)
            length = LONG_STEP * self._length
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
        floor = RANK_RTOL * np.max(residual, axis=-1)
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
