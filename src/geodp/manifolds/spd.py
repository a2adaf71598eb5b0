"""Symmetric positive-definite matrices SPD(k) (docs/math.md §1).

Three metrics: affine-invariant (curved, κ ∈ [−½, 0], R21 §5.1), log-Euclidean (flat through
the global isometric chart ``vecd ∘ Log``, U23 §3) and log-Cholesky (flat, Lin 2019; in
:mod:`geodp.manifolds.spd_log_cholesky`). Matrix functions use batched ``eigh``.
"""

from __future__ import annotations

import math

import numpy as np

from geodp.errors import AssumptionError, InvalidDataError, InvalidParameterError, NotOnManifoldError
from geodp.manifolds import matrix_functions as mf
from geodp.manifolds.base import RTOL, Manifold
from geodp.manifolds.jacobi import sinhc
from geodp.manifolds.spd_accurate import accurate_spd_eigh, whitened_eigensystems, whitening_is_accurate
from geodp.manifolds.spd_numerics import (
    CLEAR_FACTOR,
    determined_pd,
    raised_to_rounding_level,
    scaled_symmetry,
    weighted_eig_sum,
)
from geodp.validation import as_generator, check_positive_integer, check_size
from geodp.work import count, fixed_work

__all__ = ["SPD", "AffineInvariantSPD", "LogEuclideanSPD"]

_METRICS = ("affine", "log-euclidean", "log-cholesky")
# pyRiemann's names of the same metrics (its ``metric="riemann"`` is the affine-invariant one).
_METRIC_ALIASES = {"riemann": "affine", "logeuclid": "log-euclidean"}
_METRIC_CLASSES: dict[str, type] = {}  # filled by SPD.__init_subclass__


_EPS = float(np.finfo(float).eps)


# Bounds of the short path on Σλ², the squared norm of the triangle eigh reads: with every record
# symmetric to the rounding level, the squared norm of the record is within a relative 1e-6 of it
# (rounding moves it by far less), so these put it in [1e-250, 1e250], where the general path
# scales nothing.
_LOW_NORM2 = 1e-250 * (1.0 + 1e-6)
_HIGH_NORM2 = 1e250 * (1.0 - 1e-6)


def _common_eigen_records(X):
    """:meth:`SPD._eigen_records` of a block in its common case, from the eigenvalues the ``eigh``
    returns and one asymmetry pass (no norm pass): every record symmetric to the rounding level
    (``‖x − xᵀ‖²_F ≤ 16 eps² Σλ²``, ``Σλ² ≤ ‖x‖²_F`` to rounding: decomposed as given), with
    ``Σλ²`` within [:data:`_LOW_NORM2`, :data:`_HIGH_NORM2`] (squared norm in [1e-250, 1e250]:
    no scaling) and clearly positive definite (``λ_min > 0`` and ``λ_min ≥ CLEAR_FACTOR·k·eps·λ_max``
    with a relative margin of 1e-6). Then every record is valid and no eigenvalue is raised, so
    the general path would return the same arrays bit for bit (``log max(w, floor) + 0.0 =
    log w``). None otherwise (the general path decides), NaN and inf included."""
    k = X.shape[-1]
    if not len(X):  # the reductions below have no identity
        return None
    with np.errstate(all="ignore"):
        asym = X - np.swapaxes(X, -1, -2)
        asym2 = np.einsum("nij,nij->n", asym, asym)  # NaN or inf in either triangle: NaN
        try:
            w, u = np.linalg.eigh(X)  # reads one triangle
        except np.linalg.LinAlgError:  # NaN or inf in the triangle it reads
            return None
        low, top = w[:, 0], w[:, -1]
        norm2 = np.einsum("ni,ni->n", w, w)
        # λ_min > 0 makes max(|λ_min|, |λ_max|) = λ_max: the general path's floor, term by term
        # (and λ_min ≥ that floor ≥ CLEAR_FACTOR·k·eps·1e-125/√k, far above the smallest normal).
        # (ufunc reductions: ndarray.min's wrapper costs as much as the reduction at n = 100.)
        if not (
            np.minimum.reduce(norm2) >= _LOW_NORM2  # NaN fails too
            and np.maximum.reduce(norm2) <= _HIGH_NORM2
            and np.minimum.reduce(low) > 0.0
            and np.minimum.reduce(low / top) >= CLEAR_FACTOR * k * _EPS * (1.0 + 1e-6)
            and np.maximum.reduce(asym2 / norm2) <= 16.0 * _EPS**2 * (1.0 - 1e-6)
        ):
            return None
        return w, u, np.log(w), np.ones(len(w), dtype=bool), True


class SPD(Manifold):
    """Manifold of ``k × k`` symmetric positive-definite matrices.

    ``SPD(k, metric=...)`` returns an :class:`AffineInvariantSPD` (``"affine"``, the default), a
    :class:`LogEuclideanSPD` (``"log-euclidean"``) or a
    :class:`~geodp.manifolds.spd_log_cholesky.LogCholeskySPD` (``"log-cholesky"``, Lin 2019); all
    are instances of ``SPD``.

    Parameters
    ----------
    k : int
        Matrix size, at least 1.
    metric : {"affine", "log-euclidean", "log-cholesky"}
        pyRiemann's names are accepted as aliases: ``"riemann"`` (affine-invariant) and
        ``"logeuclid"`` (log-Euclidean).

    Notes
    -----
    **Precision.** ``eigh`` is backward stable: an eigenvalue is computed with an absolute error
    of about ``eps·max|λ|``, so a log-eigenvalue carries an error of about ``eps·κ`` (``κ`` the
    condition number of the matrix whose eigenvalues are taken). Distances between matrices of
    moderate condition are accurate to ~2e-15 relative however far apart they are (checked
    against 60-digit arithmetic up to distance 30√k); with ``κ = e^20`` expect ~1e-9, and an
    eigenvalue below the rounding level ``k·eps·max λ`` (log-eigenvalue spread beyond ~36) is
    not held by a float64 matrix at all: such a matrix is **singular up to rounding** and is not
    a point of the space. :meth:`belongs`, :meth:`invalid_records`, :meth:`check_points` and
    every estimator (in memory, on Dask arrays, in the command line) refuse a matrix whose
    computed smallest eigenvalue is not positive or is below ``k·u·max λ`` (``u`` the rounding
    unit of its dtype), a rank-deficient covariance (average-referenced EEG) included; under
    ``on_invalid="center"`` it is replaced by the centre. Map such data with :meth:`regularise`
    (shrinkage towards a public matrix or a ridge ``λI``, a per-record map that keeps the
    guarantee) before fitting.

    Examples
    --------
    >>> import numpy as np
    >>> space = SPD(2, metric="log-euclidean")
    >>> float(space.dist(np.eye(2), np.diag([np.e, 1.0])))
    1.0
    >>> isinstance(space, SPD), space.dim
    (True, 3)
    """

    metric: str
    max_representable_radius = 200.0  # eigenvalues up to e^200; their products stay finite
    _membership_hint = (
        "SPD points must be symmetric with a smallest eigenvalue of at least k·eps·(largest), "
        "entries within [1e-150, 1e150]; regularise singular covariance estimates with "
        "space.regularise(X, ridge=...) or space.regularise(X, shrinkage=...)."
    )

    def __new__(cls, k: int, metric: str = "affine"):
        if cls is SPD:
            name = _METRIC_ALIASES.get(metric, metric) if isinstance(metric, str) else metric
            if name not in _METRICS:
                raise InvalidParameterError(
                    f"metric must be one of {_METRICS} (or pyRiemann's aliases 'riemann', 'logeuclid'), got {metric!r}."
                )
            cls = _METRIC_CLASSES[name]
        return super().__new__(cls)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # Each metric's class registers itself (the log-Cholesky one lives in its own module).
        if "metric" in cls.__dict__:
            _METRIC_CLASSES[cls.metric] = cls

    def __init__(self, k: int, metric: str = "affine"):
        k = check_positive_integer(k, "k")
        self.k = int(k)
        self.point_shape = (self.k, self.k)
        self.dim = self.k * (self.k + 1) // 2

    def __repr__(self) -> str:
        return f"SPD({self.k}, metric={self.metric!r})"

    def __getnewargs__(self):
        return (self.k, self.metric)

    def _belongs(self, x, rtol):
        """Symmetric within ``rtol`` (relative, Frobenius), entries within [1e-150, 1e150], and
        positive definite beyond rounding: the smallest eigenvalue of the symmetric part (scaled
        by a power of two) is positive and at least ``k·u·max λ``, ``u = max(rtol², eps)`` (the
        rounding unit of the input's dtype for the default ``rtol``). A smaller eigenvalue is
        not determined by the matrix: it is singular up to rounding (see the class notes).
        """
        x, representable, symmetric = scaled_symmetry(x, rtol)
        w = np.linalg.eigvalsh(mf.sym(x))
        unit = max(rtol * rtol, np.finfo(np.float64).eps)
        return representable & symmetric & determined_pd(w, self.k, unit)

    def regularise(self, X, *, shrinkage: float = 0.0, target=None, ridge: float = 0.0):
        """Regularise covariance estimates into points of the space: a public per-record map.

        Each matrix becomes ``(1 − shrinkage)·sym(x) + shrinkage·target + ridge·I``. The map looks
        at one record at a time with public parameters only, so replacing one record changes one
        output: applied before ``fit`` it keeps the estimator's guarantee (choose ``shrinkage``,
        ``target`` and ``ridge`` without looking at the private data, e.g. from the sensor's noise
        floor). Use it for rank-deficient covariances (average-referenced EEG, fewer samples
        than channels), which :meth:`belongs` and the estimators refuse as singular.

        The output is a point of the space when the added amount clears the rounding level of the
        largest eigenvalue: ``ridge`` (or ``shrinkage`` times the target's smallest eigenvalue)
        at least about ``4·k·eps·λ_max`` of the records, and more than any negative eigenvalue
        of ``sym(x)``. Smaller amounts leave such records invalid (refused or replaced by the
        centre, record by record, like any invalid record).

        Parameters
        ----------
        X : array_like, shape (..., k, k)
            Symmetric positive semi-definite matrices (NaN/inf pass through and stay invalid).
        shrinkage : float in [0, 1], default 0
            Weight of ``target`` (linear shrinkage, as in Ledoit–Wolf with a public coefficient).
        target : array_like, shape (k, k), optional
            A public SPD matrix; default the identity. Needed only with ``shrinkage > 0``.
        ridge : float >= 0, default 0
            Added to the diagonal.

        Returns
        -------
        numpy.ndarray, shape (..., k, k)

        Raises
        ------
        InvalidParameterError
            ``shrinkage`` outside [0, 1], a negative or non-finite ``ridge``, both zero, or a
            ``target`` that is not a point of the space.

        Examples
        --------
        >>> import numpy as np
        >>> space = SPD(3, metric="log-euclidean")
        >>> singular = np.tile(np.diag([1.0, 1.0, 0.0]), (2, 1, 1))
        >>> space.invalid_records(singular).tolist()
        [True, True]
        >>> space.invalid_records(space.regularise(singular, ridge=1e-3)).tolist()
        [False, False]
        >>> space.regularise(singular, shrinkage=0.1)[0].diagonal().round(3).tolist()
        [1.0, 1.0, 0.1]
        """
        shrinkage = float(shrinkage) if isinstance(shrinkage, (int, float, np.floating, np.integer)) else shrinkage
        ridge = float(ridge) if isinstance(ridge, (int, float, np.floating, np.integer)) else ridge
        if not isinstance(shrinkage, float) or not 0.0 <= shrinkage <= 1.0:
            raise InvalidParameterError(f"shrinkage must be a number in [0, 1], got {shrinkage!r}.")
        if not isinstance(ridge, float) or not (math.isfinite(ridge) and ridge >= 0.0):
            raise InvalidParameterError(f"ridge must be a finite number >= 0, got {ridge!r}.")
        if shrinkage == 0.0 and ridge == 0.0:
            raise InvalidParameterError("regularise needs shrinkage > 0 or ridge > 0 (both are 0).")
        if target is None:
            target = np.eye(self.k)
        else:
            try:
                target = self.check_points(target, "target", batch_ndim=0)
            except InvalidDataError as err:
                raise InvalidParameterError(f"target must be a public SPD({self.k}) matrix: {err}") from None
        x = np.asarray(X, dtype=np.float64)
        if x.ndim < 2 or x.shape[-2:] != self.point_shape:
            raise InvalidDataError(f"X must have trailing shape {self.point_shape} for {self!r}, got shape {x.shape}.")
        with np.errstate(all="ignore"):
            return (1.0 - shrinkage) * mf.sym(x) + shrinkage * target + ridge * np.eye(self.k)

    def to_tangent(self, x, v):
        """Tangent vectors are symmetric matrices: the symmetric part."""
        return mf.sym(np.asarray(v, dtype=float))

    def reference_point(self):
        """The identity."""
        return np.eye(self.k)

    @property
    def embedding_dim(self) -> int:
        return self.dim

    def _to_embedding(self, x):
        """``vecd``: the symmetric matrices isometrically as vectors (Frobenius norm)."""
        return mf.vecd(np.asarray(x, dtype=float))

    def _from_embedding(self, y):
        return mf.invvecd(np.asarray(y, dtype=float), self.k)

    def _extrinsic_radius(self, center, radius):
        """``‖x − I‖_F ≤ e^r − 1`` on the ball of radius r about the identity (either metric:
        both measure ``‖log x‖_F`` from the identity); other centres have no such bound."""
        if not np.allclose(center, np.eye(self.k), atol=1e-12):
            raise InvalidParameterError("the extrinsic SPD bound r_E = e^r − 1 needs the ball centred at the identity.")
        return math.expm1(radius)

    def project(self, x):
        """The closest numerically PD matrix: the symmetric part, with the eigenvalues below the
        rounding level ``k·eps·max|λ|`` raised to 4 rounding levels (more if ``eigh`` of the
        rebuilt matrix needs it), so that the result is a point of the space for finite input whose
        entries lie in float64's working range [1e-150, 1e150] (others stay outside it).

        Eigenvalues below that level are not determined by a float64 matrix in a general basis
        (``eigh`` is backward stable: its absolute error is about ``eps·max|λ|``), so they may come
        out with either sign; every eigenvalue above it is left unchanged (``e^{-15}`` next to
        ``e^{15}``, say), and matrices with none below it are only symmetrised. A singular matrix
        comes out at the edge of float64's range, an extreme point whose log-eigenvalue is set by
        rounding: :meth:`belongs` refuses singular records rather than projecting them, and
        :meth:`regularise` is the public map that makes covariances of deficient rank usable.
        """
        return self._numerically_pd(mf.sym(np.asarray(x, dtype=float)))

    def _numerically_pd(self, x, w=None):
        """``x`` with each matrix whose smallest eigenvalue is below the rounding level rebuilt
        from eigenvalues raised to it; the other matrices are returned bit for bit. ``w``:
        ``eigvalsh(x)`` if already computed."""
        if w is None:
            w = np.linalg.eigvalsh(x)  # eigenvectors only for the (rare) matrices to rebuild
        need = w[..., 0] < mf.rounding_level(w)[..., 0]
        if not np.any(need):
            return x
        x = np.array(x, dtype=float)
        w, u = mf.eigh(x[need])
        x[need] = raised_to_rounding_level(w, u)
        return x

    def _canonical(self, x):
        return self.project(x)

    def check_points(self, X, name: str = "X", *, batch_ndim: int | None = None) -> np.ndarray:
        """As :meth:`Manifold.check_points`; finite matrices with an entry beyond float64's
        working range (largest absolute entry outside [1e-150, 1e150], where products of the
        matrix functions overflow or underflow) are refused as such, not as non-PD."""
        try:
            return super().check_points(X, name, batch_ndim=batch_ndim)
        except NotOnManifoldError:
            far = self.beyond_range(X)
            if np.any(far):
                raise NotOnManifoldError(
                    f"{int(np.count_nonzero(far))} point(s) of {name} have entries beyond float64's working range "
                    "for SPD matrix functions (largest absolute entry outside [1e-150, 1e150]): rescale the "
                    "data by a public constant (e.g. change units) before using them."
                ) from None
            raise

    def beyond_range(self, X) -> np.ndarray:
        """Which finite matrices have their largest absolute entry outside [1e-150, 1e150]
        (beyond float64's working range for SPD matrix functions; such records are invalid).

        Examples
        --------
        >>> import numpy as np
        >>> SPD(2).beyond_range(np.stack([np.eye(2), 1e300 * np.eye(2)])).tolist()
        [False, True]
        """
        x = np.asarray(X, dtype=np.float64)
        with np.errstate(all="ignore"):
            peak = np.max(np.abs(x), axis=(-2, -1))
            return np.isfinite(peak) & ~((peak >= 1e-150) & (peak <= 1e150))

    def _checked_points(self, x, name):
        # An accepted point may have a rounding-level eigenvalue ≤ 0: the implementations get its
        # numerically PD version (every other point passes through bit for bit).
        return self._numerically_pd(super()._checked_points(x, name))

    def _eigen_records(self, X):
        """One batched ``eigh`` of a block of records: ``(w, u, log w, valid, as_is)``.

        ``valid`` is the criterion of :meth:`_belongs`; ``log w`` has the eigenvalues raised to
        the rounding level (as :meth:`project` raises them; anything for invalid records);
        ``as_is`` says that every record is valid and has no eigenvalue to raise, so that
        :meth:`check_points` would return the block's symmetric part (the block itself when it
        is exactly symmetric, as ``w`` and ``u`` are then of the block).

        **Each record's result depends on that record alone**, bit for bit, never on the other
        records of the block (nor on how a Dask array is chunked): a record is scaled by a power
        of two only if its own entries leave [1e-150, 1e150], and decomposed as given (``eigh``
        reads one triangle) if its own asymmetry is at the rounding level, else through its
        symmetric part. This is what makes the records' chart coordinates a per-record map, so
        that replacing one record moves the mean of the clipped coordinates by at most ``2r/n``
        however (in)accurate that map is for a badly conditioned record.
        """
        X = original = np.asarray(X, dtype=np.float64)
        common = _common_eigen_records(X)
        if common is not None:
            return common
        k = self.k
        eps = np.finfo(float).eps
        with np.errstate(all="ignore"):
            norm2 = np.einsum("nij,nij->n", X, X)  # NaN/inf propagate
            shift = 0.0
            # ‖x‖_F/k ≤ max|x_ij| ≤ ‖x‖_F: every peak is in range when every norm is in the
            # narrower range; otherwise (rare) measure the peaks and scale, by powers of two,
            # only the records whose own norm is outside that range.
            # (Scaled below 1e-250 too, not only outside the working range: the asymmetry test
            # squares differences, which underflow for entries near 1e-150 — an audit's record
            # with a 1e-14 asymmetry passed it unscaled and was kept while belongs refused it.)
            in_range = (norm2 >= 1e-250) & (norm2 <= 1e250)
            if not in_range.all():
                peak = np.max(np.abs(X), axis=(-2, -1))
                scaled = ~in_range
                in_range = in_range | ((peak <= 1e150) & (peak >= 1e-150))
                exponent = np.where(scaled, np.frexp(np.where(np.isfinite(peak) & (peak > 0), peak, 1.0))[1], 0)
                X = np.ldexp(np.where((np.isfinite(peak) | ~scaled)[:, None, None], X, 0.0), -exponent[:, None, None])
                shift = exponent[:, None] * np.log(2.0)
                norm2 = np.einsum("nij,nij->n", X, X)
            Xt = np.swapaxes(X, -1, -2)
            # Exactly symmetric blocks (products X Xᵀ) skip the asymmetry pass; the first record
            # decides whether the whole block is worth comparing. Either way each record gets
            # the same result (an exactly symmetric record has no asymmetry).
            if np.array_equal(X[:1], Xt[:1]) and np.array_equal(X, Xt):
                symmetric = True
            else:
                asym = X - Xt
                asym2 = np.einsum("nij,nij->n", asym, asym)
                del asym
                symmetric = asym2 <= RTOL**2 * norm2
                # A rounding-level asymmetry (matrix products) is below eigh's own backward
                # error: decompose the triangle eigh reads as given; only the other records
                # (invalid, or asymmetric beyond rounding) through their symmetric part.
                rounding = asym2 <= (4.0 * eps) ** 2 * norm2
                if not rounding.all():
                    X = X.copy()
                    X[~rounding] = mf.sym(X[~rounding])
            w, u = np.linalg.eigh(X)  # reads one triangle
            top = np.maximum(np.abs(w[:, 0]), np.abs(w[:, -1]))
            floor = np.maximum(k * eps * top, np.finfo(float).tiny)[:, None]  # mf.rounding_level(w)
            clear = w[:, 0] >= CLEAR_FACTOR * floor[:, 0]
            valid = in_range & symmetric & clear
            # Every record this decomposition does not clearly accept (singular, indefinite or at
            # the edge of the criterion, or at the edge of the symmetry test) is decided by
            # belongs on that record alone, so that every path agrees with invalid_records.
            doubt = ~clear | ~in_range | ~np.asarray(symmetric)
            if not isinstance(symmetric, bool):
                doubt |= (asym2 >= 0.25 * RTOL**2 * norm2) & (asym2 <= 4.0 * RTOL**2 * norm2)
            if doubt.any():
                valid[doubt] = self.belongs(original[doubt])
            logw = np.log(np.maximum(w, floor))  # only valid records matter; they are not raised
            logw += shift
        as_is = bool(valid.all()) and not bool(doubt.any())
        return w, u, logw, valid, as_is

    def random_point(self, size=None, rng=None):
        """``Exp(S)`` with ``vecd(S)`` standard Gaussian (log-normal around the identity)."""
        rng = as_generator(rng)
        shape = check_size(size) or ()
        return mf.expm(mf.invvecd(rng.standard_normal(shape + (self.dim,)), self.k))


class AffineInvariantSPD(SPD):
    """SPD(k) with the affine-invariant metric ``⟨u, v⟩_p = tr(p⁻¹ u p⁻¹ v)``.

    Curvature in ``[−½, 0]``, complete (injectivity radius ∞), homogeneous but not isotropic.

    Examples
    --------
    >>> import numpy as np
    >>> space = SPD(2)
    >>> p = np.diag([1.0, 4.0])
    >>> np.allclose(space.exp(p, space.log(p, np.eye(2))), np.eye(2))
    True
    """

    metric = "affine"
    closed_forms = frozenset({"spd-eigenvalue-laplace", "spd-congruence-whitening"})
    _extrinsic_radius = SPD._extrinsic_radius  # distances to I are ‖log x‖_F under both metrics
    max_representable_radius = SPD.max_representable_radius  # eigenvalues within e^±200 either way
    curvature_bounds = (-0.5, 0.0)
    injectivity_radius = np.inf
    is_homogeneous = True

    def _exp(self, x, v):
        """``p^½ Exp(p^-½ v p^-½) p^½``."""
        root, inv_root = mf.sqrtm_and_invsqrtm(np.asarray(x, dtype=float))
        return mf.sym(mf.congruence(root, mf.expm(mf.congruence(inv_root, np.asarray(v, dtype=float)))))

    def _log(self, x, y):
        """``p^½ Log(p^-½ q p^-½) p^½``."""
        root, inv_root = mf.sqrtm_and_invsqrtm(np.asarray(x, dtype=float))
        return mf.sym(mf.congruence(root, mf.logm(mf.congruence(inv_root, np.asarray(y, dtype=float)))))

    def _inner(self, x, u, v):
        """``tr(p⁻¹ u p⁻¹ v)``, computed as a Frobenius product of whitened matrices."""
        _, inv_root = mf.sqrtm_and_invsqrtm(np.asarray(x, dtype=float))
        wu = mf.congruence(inv_root, np.asarray(u, dtype=float))
        wv = mf.congruence(inv_root, np.asarray(v, dtype=float))
        return np.sum(wu * wv, axis=(-2, -1))

    def _dist(self, x, y):
        """``sqrt(Σ log² λ_i)``, ``λ`` the eigenvalues of ``p^-½ q p^-½``."""
        _, inv_root = mf.sqrtm_and_invsqrtm(np.asarray(x, dtype=float))
        w = np.linalg.eigvalsh(mf.sym(mf.congruence(inv_root, np.asarray(y, dtype=float))))
        return np.sqrt(np.sum(np.log(mf.positive_eigenvalues(w)) ** 2, axis=-1))

    # ------------------------------------------------------------ Fréchet mean
    _karcher_newton = True
    #: Balls (radius plus the centre's log-condition over √2) beyond which private fits whiten on
    #: the accurate path (:mod:`geodp.manifolds.spd_accurate`): with one dense ``eigh`` per
    #: whitened record the computed gradient was off by up to 90× its tolerance at radius 10
    #: (SPD(2), near-commuting records far apart), and never at radius 8 in 140 such datasets.
    ACCURATE_RADIUS = 6.0

    def effective_radius(self, center, radius) -> float:
        """``radius + (log λ_max(center) − log λ_min(center))/√2``: the radius around I with the same
        worst condition number as the ball ``B_radius(center)`` (public: the ball only).

        Examples
        --------
        >>> import numpy as np
        >>> SPD(2).effective_radius(np.eye(2), 3.0)
        3.0
        """
        logs = np.log(np.linalg.eigvalsh(np.asarray(center, dtype=float)))
        return float(radius) + float(logs[-1] - logs[0]) / math.sqrt(2.0)

    def needs_accurate_whitening(self, center, radius) -> bool:
        """Whether a private fit in the ball ``B_radius(center)`` takes the accurate whitening path
        (public: the ball only; see :data:`ACCURATE_RADIUS`).

        Examples
        --------
        >>> import numpy as np
        >>> SPD(2).needs_accurate_whitening(np.eye(2), 3.0), SPD(2).needs_accurate_whitening(np.eye(2), 14.0)
        (False, True)
        """
        return self.effective_radius(center, radius) > self.ACCURATE_RADIUS

    def flow_resolution(self, center, radius) -> float:
        """How close to the exact mean a float64 matrix can be placed in the ball (public): the
        dense iterate's entries resolve its small eigenvalues only to about ``eps·cond(p)``, and
        ``cond(p) ≤ cond(center)·e^{√2·radius}``; the flow's tolerance is at least ``2k`` times
        that (stalls seen at 0.04–0.3 times it on SPD(2), radii 14–20).

        Examples
        --------
        >>> import numpy as np
        >>> SPD(2).flow_resolution(np.eye(2), 1.0) < 1e-14
        True
        """
        return 2.0 * self.k * _EPS * math.exp(math.sqrt(2.0) * self.effective_radius(center, radius))

    def _validated_start(self, X, weights):
        """Validation and the log-Euclidean start from one batched ``eigh`` (the eigenvalues
        decide membership as :meth:`_belongs` does); anything unusual goes through
        :meth:`check_points`, which raises the usual error or returns the projected records."""
        w, u, logw, valid, as_is = self._eigen_records(X)
        if not as_is:
            X = self.check_points(X, "X", batch_ndim=1)
            return X, self._start_statistic(X, weights)
        if not np.array_equal(X, np.swapaxes(X, -1, -2)):
            X = mf.sym(X)  # what check_points returns (w, u are of this matrix)
        return X, weighted_eig_sum(weights, logw, u)

    def _prepared_records(self, block, center, radius):
        """What :class:`~geodp.models.PrivateFrechetMean` makes of a block of records, ``(records,
        invalid, was_clipped)``: the records :meth:`invalid_records` finds invalid replaced by
        ``center``, the others as :meth:`_canonical_records` returns them, all clipped by
        :meth:`_clip_to_ball`; from one ``eigvalsh`` of the records' symmetric parts (membership
        and canonical form) and the clipping's pass (the distances to the centre). None if a
        decomposition fails; the caller then takes the three steps one by one.

        A record whose smallest eigenvalue is at least twice the rounding level passes the
        eigenvalue test of :meth:`_belongs` (on the record scaled by a power of two; the two
        backward-stable decompositions differ by far less than the margin of ``6·k·eps·max|λ|``,
        and bit for bit within ``2^±300`` in practice): its symmetry and range decide. Every other
        record goes through :meth:`belongs` itself.
        """
        X = self._dataset_array(block, "X")
        try:
            with np.errstate(all="ignore"):
                finite = np.all(np.isfinite(X), axis=(-2, -1))
                _, representable, symmetric = scaled_symmetry(np.where(finite[:, None, None], X, 0.0), RTOL)
                usable = finite & representable
                S = mf.sym(np.where(usable[:, None, None], X, 0.0))
                w = np.linalg.eigvalsh(S)
                clear = usable & (w[:, 0] >= CLEAR_FACTOR * mf.rounding_level(w)[:, 0])
                valid = clear & symmetric
                if not np.all(clear):
                    valid[~clear] = self.belongs(X[~clear])
                if not np.all(valid):  # replaced by the centre, as the records are one by one
                    S[~valid] = mf.sym(center)
                    w[~valid] = np.linalg.eigvalsh(S[~valid][:1])
                canonical = self._numerically_pd(S, w)
            clipped, was_clipped = self._clip_to_ball(canonical, center, radius)
        except np.linalg.LinAlgError:
            return None
        return clipped, ~valid, was_clipped

    def _start_statistic(self, X, weights):
        # Σ w_i Log x_i: the log-Euclidean mean, a far better start than the arithmetic mean
        # (gradient 9e-3 against 2.0 for SPD(10) records with log-spread 0.5).
        w, u = np.linalg.eigh(X)
        return weighted_eig_sum(weights, np.log(mf.positive_eigenvalues(w)), u)

    def _karcher_start(self, weighted_sum):
        return mf.expm(weighted_sum)

    def _karcher_direction(self, x, X, weights, hessian=False):
        """Whitened by ``p^-½``: the logs ``U_i diag(l_i) U_iᵀ`` of ``p^-½ x_i p^-½`` from one
        batched ``eigh``, the gradient norm a Frobenius norm, the distances ``‖l_i‖``; only the
        averaged direction is mapped back. With ``hessian`` also the state for
        :meth:`_newton_direction`: ``U_i`` and ``w_i h(l_ij − l_ik)``, ``h(t) = (t/2)coth(t/2)``,
        the Hessian of ``½ρ²(·, x_i)`` in the eigenbasis of the whitened record. Inside
        :func:`~geodp.manifolds.spd_accurate.accurate_whitening` the whitened records' eigensystems
        come from :mod:`geodp.manifolds.spd_accurate` (relative accuracy however far apart)."""
        if whitening_is_accurate():  # far-apart records: p and the whitened records never formed densely
            values, vectors = accurate_spd_eigh(x)
            root = (vectors * np.sqrt(values)) @ vectors.T
            logs, u = whitened_eigensystems(values, vectors, X)
        else:
            root, inv_root = mf.sqrtm_and_invsqrtm(x)
            w, u = np.linalg.eigh(mf.congruence(inv_root, X))  # reads one triangle
            logs = np.log(mf.positive_eigenvalues(w))
        dists2 = np.einsum("ni,ni->n", logs, logs)
        whitened = weighted_eig_sum(weights, logs, u)
        out = (mf.sym(mf.congruence(root, whitened)), 0.5 * float(weights @ dists2), float(np.sqrt(np.max(dists2))))
        return out + ((u, logs, weights),) if hessian else out

    def _newton_direction(self, x, direction, states, grad_norm, tol):
        """Inexact Newton direction ``H⁻¹(−∇F)`` by conjugate gradients on the exact Hessian
        ``V ↦ Σ w_i U_i (h_i ∘ (U_iᵀ V U_i)) U_iᵀ``, ``h_i = h(l_ij − l_ik)`` with ``h(t) =
        (t/2)coth(t/2)`` (the Hessian of ``½ρ²(·, x_i)`` in the eigenbasis of the whitened
        record; whitened coordinates; ``H ⪰ I``, so CG converges in a few
        steps; each costs ~1/5 of a pass and reads no record), to a relative residual
        ``min(0.1, max(tol/(4‖∇F‖), 1e-6))`` (the residual's share of the next gradient stays
        below ``tol/4``), at most 10 steps. Returns the direction and ``⟨−∇F, direction⟩`` (the
        decrease the Armijo test asks a share of). Under fixed work (a timing-safe release) all
        10 steps make their Hessian product; those after the stop drop it (same result)."""
        root, inv_root = mf.sqrtm_and_invsqrtm(x)
        g = mf.sym(mf.congruence(inv_root, direction))

        blocks = []
        for u, logs, weights in states:
            gap = 0.5 * (logs[:, :, None] - logs[:, None, :])
            small = np.abs(gap) < 1e-4
            with np.errstate(all="ignore"):
                h = np.where(small, 1.0 + gap**2 / 3.0, gap / np.tanh(np.where(small, 1.0, gap)))
            blocks.append((u, weights[:, None, None] * h))

        def hess(v):
            total = 0.0
            for u, h in blocks:
                ut = np.swapaxes(u, -1, -2)
                total = total + np.sum((u @ ((ut @ v @ u) * h)) @ ut, axis=0)
            return mf.sym(total)

        v, r = np.zeros_like(g), g.copy()
        p, rr = r.copy(), float(np.sum(r * r))
        target = (min(0.1, max(0.25 * tol / grad_norm, 1e-6)) * grad_norm) ** 2
        fixed = fixed_work() is not None  # all 10 steps; once stopped, a step's product is made and dropped
        done = False
        for _ in range(10):
            count("cg-steps")
            hp = hess(p)
            if done:
                continue
            curvature = float(np.sum(p * hp))
            if not curvature > 0:
                done = True
            else:
                alpha = rr / curvature
                v, r = v + alpha * p, r - alpha * hp
                rr, previous = float(np.sum(r * r)), rr
                done = rr <= target
                if not done:
                    p = r + (rr / previous) * p
            if done and not fixed:
                break
        return mf.sym(mf.congruence(root, v)), float(np.sum(g * v))

    def _transport(self, x, y, v):
        """``E v Eᵀ`` with ``E = (q p⁻¹)^½ = p^½ (p^-½ q p^-½)^½ p^-½``."""
        root, inv_root = mf.sqrtm_and_invsqrtm(np.asarray(x, dtype=float))
        middle, _ = mf.sqrtm_and_invsqrtm(mf.congruence(inv_root, np.asarray(y, dtype=float)))
        e = root @ middle @ inv_root
        return mf.sym(mf.congruence(e, np.asarray(v, dtype=float)))

    def _isometry_to_reference(self, center):
        """The congruence by ``c^(-1/2)``, which maps ``center`` to the identity (and back);
        refused beyond a condition number of ``e^(2·RECENTRING_LIMIT)`` (re-audit: eigenvalues 1e-8
        and 1e8 moved the centre 0.1 from I)."""
        center = np.asarray(center, dtype=float)
        logs = np.log(np.linalg.eigvalsh(center))
        if float(logs[-1] - logs[0]) > 2.0 * self.RECENTRING_LIMIT:
            raise AssumptionError(
                f"the center's condition number e^{float(logs[-1] - logs[0]):.3g} exceeds "
                f"e^{2 * self.RECENTRING_LIMIT:g}: float64 cannot move the data to it accurately. Rescale the "
                "data (a congruence applied to data and centre) or use metric='log-euclidean'."
            )
        root, inverse_root = mf.sqrtm_and_invsqrtm(center)
        return (
            lambda Y: mf.sym(mf.congruence(inverse_root, Y)),
            lambda p, v: (mf.sym(mf.congruence(root, p)), mf.sym(mf.congruence(root, v))),
        )

    def _distances_from(self, start):
        """One ``eigvalsh`` per point: the start's inverse square root is computed once."""
        inv_root = mf.sqrtm_and_invsqrtm(np.asarray(start, dtype=float))[1]

        def distance(x):
            w = np.linalg.eigvalsh(mf.congruence(inv_root, np.asarray(x, dtype=float)))
            return np.sqrt(np.sum(np.log(mf.positive_eigenvalues(w)) ** 2, axis=-1))

        return distance

    def _adjoint_exp_derivatives(self, p, u, w, y=None):
        """Congruence by ``p^-½`` moves ``p`` to ``I``; with ``p^-½ u p^-½ = U diag(μ) Uᵀ`` the
        parallel frame is ``U E_ij Uᵀ`` transported by ``e^{tu/2} · e^{tu/2}``, with curvature
        eigenvalue ``−(μ_i − μ_j)²/(4L²)``: the Jacobi factors are ``cosh δ_ij`` and
        ``sinh δ_ij/δ_ij``, ``δ_ij = (μ_i − μ_j)/2`` (docs/math.md §9)."""
        root, inv_root = mf.sqrtm_and_invsqrtm(np.asarray(p, dtype=float))
        mu, frame = mf.eigh(mf.congruence(inv_root, np.asarray(u, dtype=float)))
        frame_t = np.swapaxes(frame, -1, -2)
        coeffs = frame_t @ mf.congruence(inv_root, np.asarray(w, dtype=float)) @ frame  # w in the eigenframe
        half = np.exp(-0.5 * mu)
        coeffs = coeffs * half[..., :, None] * half[..., None, :]  # transported back to I
        delta = 0.5 * (mu[..., :, None] - mu[..., None, :])
        dp = mf.congruence(root, frame @ (coeffs * np.cosh(delta)) @ frame_t)
        du = mf.congruence(root, frame @ (coeffs * sinhc(delta)) @ frame_t)
        return mf.sym(dp), mf.sym(du)

    def _random_tangent(self, x, size=None, rng=None):
        """``p^½ S p^½`` with ``vecd(S)`` standard Gaussian (orthonormal in the metric)."""
        x = np.asarray(x, dtype=float)
        z = as_generator(rng).standard_normal(self._batch_size(x, size) + (self.dim,))
        root, _ = mf.sqrtm_and_invsqrtm(x)
        return mf.sym(mf.congruence(root, mf.invvecd(z, self.k)))


class LogEuclideanSPD(SPD):
    """SPD(k) with the log-Euclidean metric: ``Log`` is an isometry onto symmetric matrices.

    The chart ``φ = vecd ∘ Log`` maps it isometrically onto ``R^{k(k+1)/2}`` (flat, κ = 0).
    Tangent vectors at ``x`` are symmetric matrices; ``d Log_x`` uses the Daleckii–Krein formula.

    Examples
    --------
    >>> import numpy as np
    >>> space = SPD(3, metric="log-euclidean")
    >>> x = np.diag([1.0, 2.0, 3.0])
    >>> np.allclose(space.from_coordinates(space.to_coordinates(x)), x)
    True
    """

    metric = "log-euclidean"
    _extrinsic_radius = SPD._extrinsic_radius  # distances to I are ‖log x‖_F under both metrics
    max_representable_radius = SPD.max_representable_radius  # eigenvalues within e^±200 either way
    curvature_bounds = (0.0, 0.0)
    injectivity_radius = np.inf
    is_homogeneous = True
    is_flat = True

    def to_coordinates(self, x):
        """``vecd(Log x)``, shape ``(..., k(k+1)/2)``."""
        return mf.vecd(mf.logm(np.asarray(x, dtype=float)))

    def _record_coordinates(self, X):
        """``(vecd(Log x_i), invalid_i)`` from one batched ``eigh``, whose eigenvalues also decide
        membership (the criterion of :meth:`_belongs`) and are raised to the rounding level where
        :meth:`project` would raise them. Invalid records get NaN coordinates."""
        w, u, logw, valid, _ = self._eigen_records(X)
        coords = mf.vecd(mf.from_eig(logw, u))
        coords[~valid] = np.nan
        return coords, ~valid

    def _coordinate_sum(self, X, weights):
        """``(Σ w_i Log x_i over the valid records, number of invalid)``: one ``eigh``. The sum
        stays a ``k × k`` matrix (the chart in matrix form: ``vecd`` is an isometry), which
        :meth:`_closed_form_mean` takes as it is."""
        w, u, logw, valid, as_is = self._eigen_records(X)
        if as_is:  # every record valid: nothing to mask or count
            return weighted_eig_sum(weights, logw, u), 0
        return weighted_eig_sum(np.where(valid, weights, 0.0), logw, u), int(np.count_nonzero(~valid))

    def _closed_form_mean(self, total):
        """``(Exp S, ‖Log(Exp S) − S‖_F, ‖S‖_F)`` for the summed logarithm ``S``: one ``eigh`` of
        ``S`` builds the mean, one of the returned mean measures its logarithm afresh (the
        certificate of :meth:`Manifold._closed_form_mean`, on the matrix as returned). Both read
        the lower triangle, as the records' decomposition does; no coordinate vectors."""
        mu, frame = mf.eigh_one(total)
        mean = (frame * np.exp(mu)) @ frame.T
        w, u = mf.eigh_one(mean)
        residual = (u * np.log(w if w[0] > 0 else mf.positive_eigenvalues(w))) @ u.T - total
        return mean, math.sqrt(np.vdot(residual, residual)), math.sqrt(np.vdot(total, total))

    def from_coordinates(self, y):
        """``Exp(invvecd(y))``."""
        return mf.expm(mf.invvecd(np.asarray(y, dtype=float), self.k))

    def _exp(self, x, v):
        """``Exp(Log x + d Log_x v)``."""
        w, u = mf.eigh(np.asarray(x, dtype=float))
        w = mf.positive_eigenvalues(w)
        return mf.expm(mf.from_eig(np.log(w), u) + mf.differential_log(w, u, np.asarray(v, dtype=float)))

    def _log(self, x, y):
        """``(d Log_x)⁻¹ (Log y − Log x)``."""
        w, u = mf.eigh(np.asarray(x, dtype=float))
        w = mf.positive_eigenvalues(w)
        s = mf.logm(np.asarray(y, dtype=float)) - mf.from_eig(np.log(w), u)
        return mf.differential_log_inverse(w, u, s)

    def _inner(self, x, u, v):
        """``⟨d Log_x u, d Log_x v⟩_F``."""
        w, e = mf.eigh(np.asarray(x, dtype=float))
        w = mf.positive_eigenvalues(w)
        du = mf.differential_log(w, e, np.asarray(u, dtype=float))
        dv = mf.differential_log(w, e, np.asarray(v, dtype=float))
        return np.sum(du * dv, axis=(-2, -1))

    def _dist(self, x, y):
        """``‖Log x − Log y‖_F``."""
        d = mf.logm(np.asarray(x, dtype=float)) - mf.logm(np.asarray(y, dtype=float))
        return np.linalg.norm(d, axis=(-2, -1))

    def _transport(self, x, y, v):
        """Flat transport: ``(d Log_y)⁻¹ d Log_x v``."""
        wx, ux = mf.eigh(np.asarray(x, dtype=float))
        wy, uy = mf.eigh(np.asarray(y, dtype=float))
        s = mf.differential_log(mf.positive_eigenvalues(wx), ux, np.asarray(v, dtype=float))
        return mf.differential_log_inverse(mf.positive_eigenvalues(wy), uy, s)

    def _tangent_from_coordinates(self, p, c):
        """``d Log_p v = invvecd(c)``: ``Exp(p, v) = Exp(Log p + invvecd(c))``."""
        w, frame = mf.eigh(np.asarray(p, dtype=float))
        return mf.differential_log_inverse(mf.positive_eigenvalues(w), frame, mf.invvecd(c, self.k))

    def _random_tangent(self, x, size=None, rng=None):
        """``(d Log_x)⁻¹ invvecd(z)``, ``z`` standard Gaussian."""
        x = np.asarray(x, dtype=float)
        z = as_generator(rng).standard_normal(self._batch_size(x, size) + (self.dim,))
        w, u = mf.eigh(x)
        return mf.differential_log_inverse(mf.positive_eigenvalues(w), u, mf.invvecd(z, self.k))
