"""The :class:`Manifold` protocol every space implements.

Geometry only — no privacy here. All methods are vectorised over leading batch axes: a point
array has shape ``batch + point_shape`` and a single point broadcasts against a batch.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from geodp.errors import InvalidDataError, InvalidParameterError, InvalidTypeError, NotOnManifoldError
from geodp.manifolds.frechet_hooks import FrechetFlowHooks
from geodp.manifolds.inheritance import check_inherited_declarations
from geodp.manifolds.unchecked import UncheckedGeometry
from geodp.validation import as_real_array, check_finite_array, check_positive, check_size
from geodp.work import count, fixed_work

__all__ = ["TANGENT_RTOL", "Manifold", "check_space"]


RTOL = float(np.sqrt(np.finfo(np.float64).eps))
# Largest relative normal part (Euclidean, ambient) of a vector the public geometry accepts as
# tangent: ‖v − to_tangent(x, v)‖ ≤ TANGENT_RTOL·‖v‖ (docs/guide.md).
TANGENT_RTOL = 1e-6


class Manifold(FrechetFlowHooks, ABC):
    """Abstract Riemannian manifold with vectorised geometry.

    Subclasses set ``point_shape``, ``dim``, ``curvature_bounds``, ``injectivity_radius``,
    ``is_homogeneous`` and ``is_flat``, and implement :meth:`_exp`, :meth:`_log`, :meth:`_inner`,
    :meth:`_transport`, :meth:`_random_tangent`, :meth:`random_point` and :meth:`_belongs`.
    Flat spaces (``is_flat``) also provide a global isometric chart
    :meth:`to_coordinates`/:meth:`from_coordinates` onto ``R^dim``.

    Examples
    --------
    >>> from geodp.manifolds import Euclidean
    >>> space = Euclidean(2)
    >>> float(space.dist([0.0, 0.0], [3.0, 4.0]))
    5.0
    """

    point_shape: tuple[int, ...]
    dim: int
    curvature_bounds: tuple[float, float]
    injectivity_radius: float
    is_homogeneous: bool
    is_flat: bool = False
    # Closed-form results of docs/math.md that hold on this space, by name; samplers use a closed
    # form only where the space declares it (never by testing its class):
    # "spd-eigenvalue-laplace": Hajri et al.'s decomposition of the Riemannian Laplace law about a
    #   point (eigenvalue density, Haar eigenvectors) and its normalisability σ < σ_max(k) (§5);
    # "spd-congruence-whitening": points are ``L Lᵀ`` and congruence by ``L⁻¹`` is an isometry
    #   taking them to the identity (the state cache of the MCMC samplers);
    # "kendall-shape-directions": the exact in-ball directions of Kendall's shape space (§5).
    closed_forms: frozenset[str] = frozenset()
    # Largest ball radius whose points float64 still represents (coordinates grow like e^r on
    # SPD and hyperbolic space); check_radius refuses larger public balls.
    max_representable_radius: float = float("inf")
    # Relative tolerance of membership for records and public points given as data
    # (check_points, invalid_records, the estimators and the command line): None means the
    # dtype-aware default of belongs. Spaces whose points are normalised (sphere, hyperboloid)
    # accept rounded records within it and normalise them (a per-record map); the geometry
    # methods (exp, log, ...) keep the strict default.
    record_rtol: float | None = None
    # Largest distance from reference_point() (curvature radii; for affine-invariant SPD, half
    # the spread of the log-eigenvalues) that _isometry_to_reference keeps accurate.
    RECENTRING_LIMIT = 12.0

    def __init_subclass__(cls, **kwargs):
        """A space that declares itself flat must give its chart: checked when the class is
        written, not inside ``fit`` after the budget is charged (a cold trial's flat space without
        a chart failed there)."""
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("is_flat", False) is True and any(
            getattr(cls, name) is getattr(Manifold, name) for name in ("to_coordinates", "from_coordinates")
        ):
            raise TypeError(
                f"{cls.__name__} declares is_flat = True, so it must implement to_coordinates and "
                "from_coordinates (its global isometric chart onto R^dim): the flat-space samplers work in it."
            )
        check_inherited_declarations(cls, Manifold)

    def to_coordinates(self, x):
        """Flat spaces: the global isometric chart onto ``R^dim``."""
        raise NotImplementedError(f"{self!r} is not flat: it has no global isometric chart.")

    def from_coordinates(self, c):
        """Flat spaces: the inverse of :meth:`to_coordinates`."""
        raise NotImplementedError(f"{self!r} is not flat: it has no global isometric chart.")

    def __eq__(self, other) -> bool:
        """Spaces are equal when they are the same kind with the same parameters (their repr)."""
        return type(other) is type(self) and repr(other) == repr(self)

    def __hash__(self) -> int:
        return hash((type(self), repr(self)))

    # ------------------------------------------------- geometry (public, validated)
    # The public methods check their arguments (trailing shape, finite values, points on the
    # manifold) and then call the implementation methods ``_exp``, ``_log``, ``_dist``, ``_inner``,
    # ``_norm``, ``_transport`` and ``_polar_exp``. Those are the documented fast path: they skip
    # validation and are what the library calls internally on data it has already validated.
    def exp(self, x, v):
        """Riemannian exponential ``exp_x(v)``.

        Parameters
        ----------
        x : array_like, shape (..., *point_shape)
            Base point(s) on the manifold.
        v : array_like, shape (..., *point_shape)
            Tangent vector(s) at ``x``; batch axes broadcast against those of ``x``.

        Returns
        -------
        numpy.ndarray, shape (..., *point_shape)

        Raises
        ------
        InvalidDataError
            Wrong trailing shape, NaN or inf, or ``v`` not tangent at ``x``: its normal part
            (``v − space.to_tangent(x, v)``) above ``TANGENT_RTOL = 1e-6`` of its norm. Every
            public method that takes tangent vectors (``inner``, ``norm``, ``transport``,
            ``polar_exp``) checks them so; ``space.unchecked`` does not.
        NotOnManifoldError
            ``x`` is not a point of the space.

        Examples
        --------
        >>> from geodp.manifolds import Euclidean
        >>> Euclidean(2).exp([1.0, 1.0], [0.5, 0.0]).tolist()
        [1.5, 1.0]
        """
        x = self._checked_points(x, "x")
        return self._exp(x, self._checked_tangent(x, v, "v"))

    def log(self, x, y):
        """Riemannian logarithm ``log_x(y)``, a tangent vector at ``x`` (validated like :meth:`exp`).

        Examples
        --------
        >>> from geodp.manifolds import Euclidean
        >>> Euclidean(2).log([1.0, 1.0], [2.0, 3.0]).tolist()
        [1.0, 2.0]
        """
        return self._log(self._checked_points(x, "x"), self._checked_points(y, "y"))

    def dist(self, x, y):
        """Geodesic distance ``ρ(x, y)`` (validated like :meth:`exp`); shape: the broadcast batch.

        Examples
        --------
        >>> from geodp.manifolds import Sphere
        >>> round(float(Sphere(2).dist([1.0, 0.0, 0.0], [0.0, 1.0, 0.0])), 12)
        1.570796326795
        """
        return self._dist(self._checked_points(x, "x"), self._checked_points(y, "y"))

    def inner(self, x, u, v):
        """Riemannian inner product ``⟨u, v⟩_x``; shape: the broadcast batch shape.

        Examples
        --------
        >>> from geodp.manifolds import Euclidean
        >>> float(Euclidean(2).inner([0.0, 0.0], [1.0, 2.0], [3.0, 4.0]))
        11.0
        """
        x = self._checked_points(x, "x")
        return self._inner(x, self._checked_tangent(x, u, "u"), self._checked_tangent(x, v, "v"))

    def norm(self, x, v):
        """Riemannian norm ``|v|_x``.

        Examples
        --------
        >>> from geodp.manifolds import Euclidean
        >>> float(Euclidean(2).norm([0.0, 0.0], [3.0, 4.0]))
        5.0
        """
        x = self._checked_points(x, "x")
        return self._norm(x, self._checked_tangent(x, v, "v"))

    def transport(self, x, y, v):
        """Parallel transport of ``v`` from ``x`` to ``y`` along the minimising geodesic.

        Examples
        --------
        >>> from geodp.manifolds import Euclidean
        >>> Euclidean(2).transport([0.0, 0.0], [1.0, 1.0], [1.0, 0.0]).tolist()
        [1.0, 0.0]
        """
        x, y = self._checked_points(x, "x"), self._checked_points(y, "y")
        return self._transport(x, y, self._checked_tangent(x, v, "v"))

    def polar_exp(self, x, direction, t):
        """The point at distance ``t`` from ``x`` along the unit tangent ``direction``.

        Examples
        --------
        >>> from geodp.manifolds import Euclidean
        >>> Euclidean(2).polar_exp([0.0, 0.0], [0.6, 0.8], 5.0).tolist()
        [3.0, 4.0]
        """
        x = self._checked_points(x, "x")
        t = check_finite_array(t, "t")
        return self._polar_exp(x, self._checked_tangent(x, direction, "direction"), t)

    @property
    def unchecked(self) -> UncheckedGeometry:
        """The unvalidated fast path: the geometry without argument checks.

        For code that has already validated its points and vectors (estimators, samplers):
        ``space.unchecked.exp(x, v)`` is ``space.exp(x, v)`` without the checks of shapes,
        finiteness and membership. A wrong input gives a wrong answer, not an error.

        Examples
        --------
        >>> from geodp.manifolds import Euclidean
        >>> Euclidean(2).unchecked.exp([1.0, 1.0], [0.5, 0.0]).tolist()
        [1.5, 1.0]
        """
        return UncheckedGeometry(self)

    def check_vectors(self, v, name: str = "v") -> np.ndarray:
        """``v`` as a finite float64 array with the trailing shape of a tangent vector.

        Raises
        ------
        InvalidDataError
            Wrong trailing shape, NaN or inf.

        Examples
        --------
        >>> from geodp.manifolds import Sphere
        >>> Sphere(2).check_vectors([[0.0, 1.0, 0.0]]).shape
        (1, 3)
        """
        return self._checked_vectors(v, name)

    def _checked_vectors(self, v, name: str) -> np.ndarray:
        """Finite float64 array with the trailing shape of a tangent vector."""
        arr = check_finite_array(v, name, min_ndim=len(self.point_shape))
        if arr.shape[arr.ndim - len(self.point_shape) :] != self.point_shape:
            raise InvalidDataError(
                f"{name} must have trailing shape {self.point_shape} for {self!r}, got shape {arr.shape}."
            )
        return arr

    def _checked_tangent(self, x, v, name: str, where: str = "x") -> np.ndarray:
        """``v`` validated like :meth:`_checked_vectors` and tangent at the (validated) points
        ``x``: its normal part ``v − to_tangent(x, v)`` at most ``TANGENT_RTOL·|v| + 64·eps·|x|``
        (Euclidean, ambient norms; the second term is the rounding level of the point); returned
        projected (the rounding-level normal part removed)."""
        v = self._checked_vectors(v, name)
        axes = tuple(range(-len(self.point_shape), 0))
        with np.errstate(all="ignore"):
            projected = np.asarray(self.to_tangent(x, v), dtype=float)
            defect = np.sqrt(np.sum((v - projected) ** 2, axis=axes))
            size = np.sqrt(np.sum(v**2, axis=axes))
            # plus the rounding level of the point: a vector computed as a sum that cancels
            # (a gradient at the optimum) carries a normal part of that size whatever its length
            floor = 64.0 * np.finfo(float).eps * np.sqrt(np.sum(np.asarray(x, dtype=float) ** 2, axis=axes))
        bad = ~(defect <= TANGENT_RTOL * size + floor)
        if np.any(bad):
            raise InvalidDataError(
                f"{int(np.count_nonzero(bad))} vector(s) of {name} are not tangent to {self!r} at {where} "
                f"(relative normal part above {TANGENT_RTOL:g}); compute them with space.log, or project "
                f"them onto the tangent space with space.to_tangent({where}, {name})."
            )
        return projected

    def _checked_points(self, x, name: str) -> np.ndarray:
        """Like :meth:`_checked_vectors`, and every point must belong to the space."""
        arr = self._checked_vectors(x, name)
        ok = np.asarray(self.belongs(arr))
        if not np.all(ok):
            raise NotOnManifoldError(
                f"{int(np.count_nonzero(~ok))} point(s) of {name} are not on {self!r}. {self._membership_hint}"
            )
        return arr

    # ----------------------------------------------- geometry (implementations)
    @abstractmethod
    def _exp(self, x, v):
        """Riemannian exponential, unvalidated."""

    @abstractmethod
    def _log(self, x, y):
        """Riemannian logarithm, unvalidated."""

    @abstractmethod
    def _inner(self, x, u, v):
        """Riemannian inner product, unvalidated."""

    @abstractmethod
    def _transport(self, x, y, v):
        """Parallel transport along the minimising geodesic, unvalidated."""

    def _polar_exp(self, x, direction, t):
        """``exp_x(t u)`` for unit ``u`` (isotropic spaces override it to avoid re-measuring ``|u|``)."""
        t = np.asarray(t, dtype=float)
        return self._exp(x, t.reshape(t.shape + (1,) * len(self.point_shape)) * np.asarray(direction, dtype=float))

    def _exp_with_velocity(self, x, v):
        """``(project(exp_x(v)), velocity)``: the velocity at ``exp_x(v)`` of the geodesic
        ``t ↦ exp_x(t v)`` (``v`` parallel transported there) where the space has it in closed
        form, else None (spaces of constant curvature override it; the Karcher flow then needs no
        transport)."""
        return self.project(self._exp(x, v)), None

    def _most_curved_partner(self, x, v):
        """A unit tangent at ``x``, orthogonal to the unit tangent ``v``, spanning with it a plane
        of the largest sectional curvature, or None when no plane through ``v`` stands out
        (constant curvature: any orthogonal tangent will do). The ε audit's wrapped pair lies in
        that plane, where ``Log`` stretches distances by nearly its Lipschitz bound."""
        return None

    def _norm(self, x, v):
        return np.sqrt(np.maximum(self._inner(x, v, v), 0.0))

    def _dist(self, x, y):
        return self._norm(x, self._log(x, y))

    # ------------------------------------------- optional geometry (declared here)
    # Hooks that only some releases need. A space that lacks one says so with the default
    # (NotImplementedError, or a generic fallback); ``provides(name)`` tells whether a class
    # overrides it, so an estimator refuses an unsupported space before any charge.
    def provides(self, hook: str) -> bool:
        """Whether this space implements the optional hook ``hook`` (overrides the default).

        Examples
        --------
        >>> from geodp.manifolds import Sphere
        >>> Sphere(2).provides("_adjoint_exp_derivatives")
        True
        """
        return getattr(type(self), hook) is not getattr(Manifold, hook)

    def to_tangent(self, x, v):
        """Remove the normal part of ambient vectors ``v`` at ``x`` (unvalidated). The default,
        the identity, is right for spaces whose tangent spaces are the whole ambient space;
        embedded spaces (sphere, hyperboloid, Kendall's pre-shapes, symmetric matrices) override it.

        Examples
        --------
        >>> from geodp.manifolds import Euclidean
        >>> Euclidean(2).to_tangent([0.0, 0.0], [1.0, 2.0]).tolist()
        [1.0, 2.0]
        """
        return np.asarray(v, dtype=float)

    def reference_point(self) -> np.ndarray:
        """A canonical public point of the space (the north pole, the identity, the origin): the
        default centre of audits and examples. The default is a fixed :meth:`random_point`, drawn
        from a stream of its own (a spawned seed sequence, so no integer seed a caller passes to
        the samplers replays it); a new space should override it with a named point.

        Examples
        --------
        >>> from geodp.manifolds import SPD
        >>> SPD(2).reference_point().tolist()
        [[1.0, 0.0], [0.0, 1.0]]
        """
        stream = np.random.default_rng(np.random.SeedSequence(0, spawn_key=(0x2EF,)))
        return np.asarray(self.random_point(rng=stream), dtype=float)

    @property
    def embedding_dim(self) -> int:
        """Dimension of the isometric ambient embedding the extrinsic baselines add noise in.

        Examples
        --------
        >>> from geodp.manifolds import SPD, Sphere
        >>> Sphere(2).embedding_dim, SPD(3).embedding_dim
        (3, 6)
        """
        return int(np.prod(self.point_shape))

    def _to_embedding(self, x):
        """Points (batch axes first) as vectors of the ambient embedding, ``(..., embedding_dim)``."""
        x = np.asarray(x, dtype=float)
        return x.reshape(x.shape[: x.ndim - len(self.point_shape)] + (-1,))

    def _from_embedding(self, y):
        """Inverse of :meth:`_to_embedding` (on its image)."""
        y = np.asarray(y, dtype=float)
        return y.reshape(y.shape[:-1] + self.point_shape)

    def _extrinsic_radius(self, center, radius: float) -> float:
        """A bound on the ambient distance ``|x − center|`` over the geodesic ball ``B_r(center)``
        (the sensitivity of the extrinsic baselines); spaces with a closed form override it."""
        raise NotImplementedError(f"no extrinsic radius is known for {self!r}.")

    def radial_log_jacobian(self, t):
        """Isotropic spaces: ``log J(t)``, the polar volume density about any point, concave on
        ``(0, cut_radius)`` with ``log J(t) ≤ (dim − 1) log t + volume_growth_rate·t``; such spaces
        also set ``cut_radius`` and ``volume_growth_rate`` (docs/math.md §5)."""
        raise NotImplementedError(f"{self!r} is not isotropic: it has no polar volume density.")

    def _mean_log_norms(self, xs, data):
        """``‖(1/n) Σ_i log_x(y_i)‖_x`` for each point of the batch ``xs`` (the gradient norm of
        the Fréchet objective), unvalidated; spaces override it with a faster closed form."""
        expand = (slice(None), None) + (slice(None),) * len(self.point_shape)
        grad = -np.mean(self._log(xs[expand], data[None]), axis=1)
        return self._norm(xs, grad)

    def _distances_from(self, start):
        """``x ↦ ρ(start, x)`` for batches ``x`` (spaces cache what depends on ``start`` only)."""
        return lambda x: self._dist(start, x)

    def _isometry_to_reference(self, center):
        """``(to_reference, from_reference)``: a public isometry that moves ``center`` to
        :meth:`reference_point`, applied to records (``to_reference(Y)``), and its inverse on a
        point with tangent vectors (``from_reference(p, v) -> (p', v')``); or None (the default)
        when the data may stay where they are. Spaces whose float64 arithmetic loses precision
        far from their reference point (hyperboloid, affine-invariant SPD) provide it, and raise
        :class:`~geodp.errors.AssumptionError` for a centre too far out to move accurately."""
        return None

    def _prepared_records(self, block, center, radius):
        """``(records, invalid, was_clipped)`` of a block for a private mean in one pass (invalid
        records replaced by ``center``, all clipped into the ball), or None: the default, which
        lets the caller do the three steps one by one. Spaces fold them into fewer
        decompositions (affine-invariant SPD)."""
        return None

    def _adjoint_exp_derivatives(self, p, u, w, y=None):
        """``(d_pExp(p, u)^† w, d_uExp(p, u)^† w)`` unvalidated, batch axes broadcast; ``y =
        Exp(p, u)`` may be passed when the caller has it. Geodesic regression needs it (adjoint
        Jacobi fields, docs/math.md §9). On a flat space Jacobi fields are parallel, so both
        adjoints are the parallel transport back to ``p`` (the default); a curved space without a
        closed form keeps the default's ``NotImplementedError``."""
        if not self.is_flat:
            raise NotImplementedError(f"{self!r} has no closed-form adjoint Jacobi fields.")
        y = self._exp(p, u) if y is None else y
        back = self._transport(y, p, w)
        return back, back.copy()

    def _tangent_from_coordinates(self, p, c):
        """Flat spaces: the tangent vectors at ``p`` whose chart differential is ``c`` (shape
        ``(..., dim)``), so that ``to_coordinates(Exp(p, v)) = to_coordinates(p) + c``. The
        default follows the straight line of the chart; spaces override it for precision."""
        base = self.to_coordinates(p)
        return self._log(p, self.from_coordinates(base + np.asarray(c, dtype=float)))

    # --------------------------------------------------------------- membership
    @abstractmethod
    def _belongs(self, x: np.ndarray, rtol: float) -> np.ndarray:
        """Boolean array over the batch: does each point lie on the manifold?"""

    def belongs(self, x, rtol: float | None = None):
        """Test membership with a dtype-aware relative tolerance.

        Parameters
        ----------
        x : array_like, shape (..., *point_shape)
        rtol : float, optional
            Relative tolerance; default ``sqrt(machine epsilon)`` of ``x``'s dtype.

        Returns
        -------
        numpy.ndarray of bool, shape (...)
        """
        x = np.asarray(x)
        if rtol is None:
            dtype = x.dtype if np.issubdtype(x.dtype, np.floating) else np.float64
            rtol = float(np.sqrt(np.finfo(dtype).eps))
        if x.shape[x.ndim - len(self.point_shape) :] != self.point_shape:
            return np.zeros(x.shape[: max(x.ndim - len(self.point_shape), 0)], dtype=bool)
        x = x.astype(np.float64)
        finite = np.all(np.isfinite(x), axis=tuple(range(-len(self.point_shape), 0)))
        x = np.where(finite.reshape(finite.shape + (1,) * len(self.point_shape)), x, 0.0)
        with np.errstate(all="ignore"):
            try:
                return finite & self._belongs(x, rtol)
            except np.linalg.LinAlgError:
                # One record a decomposition cannot handle must not make the whole test raise
                # (whether a release happens would then depend on it): test record by record.
                batch = x.reshape((-1,) + self.point_shape)
                return finite & np.array([self._belongs_or_false(point, rtol) for point in batch], dtype=bool).reshape(
                    finite.shape
                )

    def _belongs_or_false(self, point: np.ndarray, rtol: float) -> bool:
        try:
            return bool(self._belongs(point[None], rtol)[0])
        except np.linalg.LinAlgError:
            return False

    def project(self, x):
        """Map an ambient array to the closest point of the manifold (identity by default)."""
        return np.asarray(x, dtype=np.float64)

    def check_points(self, X, name: str = "X", *, batch_ndim: int | None = None) -> np.ndarray:
        """Validate points at a public entry point; return them as float64, projected.

        ``batch_ndim`` fixes the number of leading batch axes: 0 for one point, 1 for a dataset
        of shape ``(n, *point_shape)``; ``None`` accepts any.

        Raises
        ------
        InvalidDataError
            Wrong trailing shape or number of batch axes, empty, NaN or inf.
        NotOnManifoldError
            Some point is off the manifold beyond the dtype-aware tolerance.
        """
        arr = check_finite_array(X, name, min_ndim=len(self.point_shape))
        trailing = arr.shape[arr.ndim - len(self.point_shape) :]
        if trailing != self.point_shape:
            raise InvalidDataError(
                f"{name} must have trailing shape {self.point_shape} for {self!r}, got shape {arr.shape}."
                f"{self._shape_hint(arr.shape)}"
            )
        ok = np.asarray(self._records_belong(np.asarray(X)))
        if not np.all(ok):
            bad = np.argwhere(~ok)
            where = f" (first at batch index {tuple(int(i) for i in bad[0])})" if ok.ndim else ""
            raise NotOnManifoldError(
                f"{int(np.count_nonzero(~ok))} point(s) of {name} are not on {self!r}{where}. {self._membership_hint}"
            )
        return self._check_batch_ndim(self._canonical(arr), name, batch_ndim)

    def _check_batch_ndim(self, x: np.ndarray, name: str, batch_ndim: int | None) -> np.ndarray:
        if batch_ndim is None or x.ndim == len(self.point_shape) + batch_ndim:
            return x
        shape = ", ".join(map(str, self.point_shape))
        want = f"be one point of shape ({shape})" if batch_ndim == 0 else f"have shape (n, {shape})"
        raise InvalidDataError(f"{name} must {want}, got shape {x.shape}.")

    _membership_hint = ""

    def _shape_hint(self, shape: tuple) -> str:
        """Appended to the error about points of the wrong ``shape`` (a space whose points are
        often given in another model says how to convert them; "" by default)."""
        return ""

    def invalid_records(self, X) -> np.ndarray:
        """Which records of a dataset are not points of the space (per-record, no exception).

        A record is invalid when it holds NaN or inf or is off the manifold beyond the
        records' tolerance (``record_rtol`` where the space sets one, e.g. 1e-4 on the sphere and
        the hyperboloid, else the dtype-aware default). Models use this for their
        ``on_invalid="center"`` policy.

        Parameters
        ----------
        X : array_like, shape (n, *point_shape)

        Returns
        -------
        numpy.ndarray of bool, shape (n,)

        Raises
        ------
        InvalidDataError
            ``X`` is not numeric or does not have shape ``(n, *point_shape)``: a property of the
            whole dataset, not of one record.

        Examples
        --------
        >>> import numpy as np
        >>> from geodp.manifolds import Sphere
        >>> Sphere(1).invalid_records([[1.0, 0.0], [np.nan, 0.0], [2.0, 0.0]]).tolist()
        [False, True, True]
        """
        arr = self._dataset_array(X, "X")
        return ~np.asarray(self._records_belong(arr))

    def _records_belong(self, X) -> np.ndarray:
        """:meth:`belongs` with the records' tolerance: ``record_rtol`` when the space sets one
        (at least the dtype-aware default), else the default."""
        if self.record_rtol is None:
            return self.belongs(X)
        x = np.asarray(X)
        dtype = x.dtype if np.issubdtype(x.dtype, np.floating) else np.float64
        return self.belongs(x, rtol=max(float(self.record_rtol), float(np.sqrt(np.finfo(dtype).eps))))

    def _dataset_array(self, X, name: str) -> np.ndarray:
        """``X`` as a float64 array of shape ``(n, *point_shape)``; NaN/inf allowed. Entries that
        are not finite real numbers become NaN (:func:`geodp.validation.as_real_array`), so they
        make only their own record invalid, and no message ever quotes a private value."""
        arr = as_real_array(X, name)
        if arr.ndim != len(self.point_shape) + 1 or arr.shape[1:] != self.point_shape or arr.shape[0] == 0:
            shape = ", ".join(map(str, self.point_shape))
            raise InvalidDataError(
                f"{name} must have shape (n, {shape}) with n >= 1 for {self!r}, got {arr.shape}."
                f"{self._shape_hint(arr.shape)}"
            )
        return arr

    def _canonical(self, x: np.ndarray) -> np.ndarray:
        """Remove rounding-level deviations from points already known to belong (identity)."""
        return x

    # --------------------------------------------------------------- randomness
    def random_tangent(self, x, size=None, rng=None):
        """Standard Gaussian tangent vectors at ``x``: coefficients ~ N(0, I_dim) in an
        orthonormal basis of the tangent space.

        ``size`` prepends batch axes; ``x`` broadcasts against them. ``x`` is validated like
        the base points of :meth:`exp`; :meth:`_random_tangent` is the unvalidated fast path.

        Examples
        --------
        >>> from geodp.manifolds import Sphere
        >>> Sphere(2).random_tangent([0.0, 0.0, 1.0], size=4, rng=0).shape
        (4, 3)
        """
        return self._random_tangent(self._checked_points(x, "x"), size=size, rng=rng)

    def random_unit_tangent(self, x, size=None, rng=None):
        """Uniformly distributed unit tangent vectors at ``x`` (validated like :meth:`random_tangent`).

        Examples
        --------
        >>> import numpy as np
        >>> from geodp.manifolds import Sphere
        >>> u = Sphere(2).random_unit_tangent([0.0, 0.0, 1.0], size=3, rng=0)
        >>> np.allclose(np.linalg.norm(u, axis=-1), 1.0)
        True
        """
        return self._random_unit_tangent(self._checked_points(x, "x"), size=size, rng=rng)

    @abstractmethod
    def _random_tangent(self, x, size=None, rng=None):
        """:meth:`random_tangent`, unvalidated."""

    def _random_unit_tangent(self, x, size=None, rng=None):
        """:meth:`random_unit_tangent`, unvalidated: a Gaussian tangent vector normalised."""
        v = self._random_tangent(x, size=size, rng=rng)
        n = self._norm(x, v)
        return v / n.reshape(n.shape + (1,) * len(self.point_shape))

    @abstractmethod
    def random_point(self, size=None, rng=None):
        """Random points (a convenience law for tests and examples; no privacy meaning)."""

    # ----------------------------------------------------------------- helpers
    def clip_to_ball(self, X, center, radius):
        """Geodesic clipping into the public ball ``B_r(center)`` (docs/math.md §0).

        A record at distance ``d > r`` from the centre moves along the geodesic from the centre
        to distance ``r``; records inside are untouched. The map is per-record and does not look
        at the rest of the data, so replace-one adjacency is preserved.

        Parameters
        ----------
        X : array_like, shape (n, *point_shape)
            Points on the manifold (already validated).
        center : array_like, shape point_shape
        radius : float

        Returns
        -------
        clipped : numpy.ndarray, shape (n, *point_shape)
        was_clipped : numpy.ndarray of bool, shape (n,)

        Examples
        --------
        >>> from geodp.manifolds import Euclidean
        >>> clipped, mask = Euclidean(1).clip_to_ball([[3.0], [0.5]], [0.0], 1.0)
        >>> clipped.round(6).ravel().tolist(), mask.tolist()
        ([1.0, 0.5], [True, False])
        """
        radius = check_positive(radius, "radius")
        return self._clip_to_ball(self._checked_points(X, "X"), self._checked_points(center, "center"), radius)

    def _clip_to_ball(self, X, center, radius, *, last_resort: str = "center"):
        """:meth:`clip_to_ball` without validation (the fast path for validated data).

        ``last_resort`` says what happens to a point that rounding keeps outside the ball even
        after pulling it in by a relative 1e-6 (a point a hair from the centre's cut locus, or
        a centre so far out that float64 measures distances around it only roughly):
        ``"center"`` replaces it by the centre, a per-record map that ignores the other records
        (right for records: adjacency is preserved); ``"keep"`` keeps the last, innermost
        candidate (right for a statistic, which must not jump).

        Under fixed work (:func:`geodp.work.fixed_work`: a timing-safe release) every record goes
        through every step, inside the ball or not, and only the records outside take the result:
        the work does not depend on how many are outside (counted as ``"clip"``: the rows computed).
        """
        X = np.array(X, dtype=np.float64)
        d = np.asarray(self._dist(center, X))
        was_clipped = ~(d <= radius)  # a distance that is not a number counts as outside
        fixed = fixed_work() is not None
        rows = np.ones_like(was_clipped) if fixed else was_clipped
        count("clip", np.count_nonzero(rows))
        if not np.any(rows):
            return X, was_clipped
        v = self._log(center, X[rows])
        # Scale the tangent vector that is exponentiated to length r, measured on that very
        # vector: for records at the edge of float64 (badly conditioned SPD) ρ from _dist and
        # |log| come from different rounding and can differ by several per cent.
        length = np.asarray(self._norm(center, v), dtype=float)
        ok = np.isfinite(length) & (length > 0)
        expand = length.shape + (1,) * len(self.point_shape)
        v = np.where(ok.reshape(expand), v, 0.0)  # no direction (cut locus, overflow): the centre
        unit = v / np.where(ok, length, 1.0).reshape(expand)
        moved = np.broadcast_to(np.asarray(center, dtype=float), v.shape).copy()
        pending = ok.copy()
        # Shrink by a hair, and by more only where rounding still leaves the point outside.
        for shrink in (1e-12, 1e-9, 1e-6):
            if not (fixed or np.any(pending)):
                break
            index = np.arange(len(pending)) if fixed else np.flatnonzero(pending)
            trial = self._exp(center, unit[index] * (radius * (1.0 - shrink)))
            finite = np.all(np.isfinite(trial), axis=tuple(range(-len(self.point_shape), 0)))
            safe = np.where(finite.reshape(finite.shape + (1,) * len(self.point_shape)), trial, center)
            inside = finite & self._belongs(safe, RTOL) & (np.asarray(self._dist(center, safe)) <= radius)
            if last_resort == "keep":
                inside = inside | (shrink == 1e-6)
            inside = inside & pending[index]  # a point placed by an earlier shrink keeps its place
            moved[index[inside]] = trial[inside]
            pending[index[inside]] = False
        X[was_clipped] = moved[was_clipped[rows]]  # points still pending stay at the centre
        return X, was_clipped

    def _batch_size(self, x: np.ndarray, size) -> tuple[int, ...]:
        """Batch shape of a random draw: ``size`` broadcast with the batch of ``x``."""
        base = x.shape[: x.ndim - len(self.point_shape)]
        size = check_size(size)
        if size is None:
            return base
        try:
            return np.broadcast_shapes(size, base)
        except ValueError:
            raise InvalidParameterError(
                f"size {size} does not broadcast with the batch shape {base} of the base points."
            ) from None


def check_space(space) -> Manifold:
    """Refuse anything that is not a geodp :class:`Manifold` (``InvalidTypeError``); return it.

    Examples
    --------
    >>> from geodp.manifolds import Sphere
    >>> check_space(Sphere(2))
    Sphere(2)
    """
    if not isinstance(space, Manifold):
        raise InvalidTypeError(f"space must be a geodp Manifold, got {type(space).__name__}.")
    return space
