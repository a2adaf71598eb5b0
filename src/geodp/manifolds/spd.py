"""Symmetric positive-definite matrices SPD(k) (docs/math.md §1).

Two metrics: affine-invariant (curved, κ ∈ [−½, 0], R21 §5.1) and log-Euclidean (flat through
the global isometric chart ``vecd ∘ Log``, U23 §3). Matrix functions use batched ``eigh``.
"""

from __future__ import annotations

import numpy as np

from geodp.errors import InvalidParameterError
from geodp.manifolds import _matrix as mf
from geodp.manifolds.base import Manifold
from geodp.validation import as_generator

__all__ = ["SPD", "AffineInvariantSPD", "LogEuclideanSPD"]

_METRICS = ("affine", "log-euclidean")


class SPD(Manifold):
    """Manifold of ``k × k`` symmetric positive-definite matrices.

    ``SPD(k, metric=...)`` returns an :class:`AffineInvariantSPD` (``"affine"``, the default) or a
    :class:`LogEuclideanSPD` (``"log-euclidean"``); both are instances of ``SPD``.

    Parameters
    ----------
    k : int
        Matrix size, at least 1.
    metric : {"affine", "log-euclidean"}

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
    _membership_hint = (
        "SPD points must be symmetric with strictly positive eigenvalues; add a small ridge "
        "(e.g. X + 1e-6 * I) to singular covariance estimates."
    )

    def __new__(cls, k: int, metric: str = "affine"):
        if cls is SPD:
            if metric not in _METRICS:
                raise InvalidParameterError(f"metric must be one of {_METRICS}, got {metric!r}.")
            cls = AffineInvariantSPD if metric == "affine" else LogEuclideanSPD
        return super().__new__(cls)

    def __init__(self, k: int, metric: str = "affine"):
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise InvalidParameterError(f"k must be a positive integer, got {k!r}.")
        self.k = int(k)
        self.point_shape = (self.k, self.k)
        self.dim = self.k * (self.k + 1) // 2

    def __repr__(self) -> str:
        return f"SPD({self.k}, metric={self.metric!r})"

    def __getnewargs__(self):
        return (self.k, self.metric)

    def _belongs(self, x, rtol):
        scale = np.linalg.norm(x, axis=(-2, -1))
        symmetric = np.linalg.norm(x - np.swapaxes(x, -1, -2), axis=(-2, -1)) <= rtol * scale
        w = np.linalg.eigvalsh(mf.sym(x))
        return symmetric & (w[..., 0] > 0)

    def project(self, x):
        """Symmetrise; eigenvalues below ``1e-10 · max|λ|`` are raised to it (numerically PD)."""
        w, u = mf.eigh(np.asarray(x, dtype=float))
        if np.all(w > 0):
            return mf.sym(np.asarray(x, dtype=float))
        floor = np.maximum(1e-10 * np.max(np.abs(w), axis=-1, keepdims=True), np.finfo(float).tiny)
        return mf.from_eig(np.maximum(w, floor), u)

    def _canonical(self, x):
        return mf.sym(x)

    def _karcher_init(self, X, weights):
        # The weighted arithmetic mean lies in the SPD cone and is close to the Fréchet mean.
        return mf.sym(np.tensordot(weights, X, axes=1))

    def random_point(self, size=None, rng=None):
        """``Exp(S)`` with ``vecd(S)`` standard Gaussian (log-normal around the identity)."""
        rng = as_generator(rng)
        shape = () if size is None else ((size,) if np.isscalar(size) else tuple(size))
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

    def _karcher_direction(self, x, X, weights):
        # Work in whitened coordinates p^-½ · p^-½: the gradient norm is a Frobenius norm there,
        # and only the averaged direction is mapped back (two batched products fewer).
        root, inv_root = mf.sqrtm_and_invsqrtm(x)
        logs = mf.logm(mf.congruence(inv_root, X))
        whitened = np.tensordot(weights, logs, axes=1)
        dists = np.linalg.norm(logs, axis=(-2, -1))
        return mf.sym(mf.congruence(root, whitened)), float(np.linalg.norm(whitened)), dists

    def _transport(self, x, y, v):
        """``E v Eᵀ`` with ``E = (q p⁻¹)^½ = p^½ (p^-½ q p^-½)^½ p^-½``."""
        root, inv_root = mf.sqrtm_and_invsqrtm(np.asarray(x, dtype=float))
        middle, _ = mf.sqrtm_and_invsqrtm(mf.congruence(inv_root, np.asarray(y, dtype=float)))
        e = root @ middle @ inv_root
        return mf.sym(mf.congruence(e, np.asarray(v, dtype=float)))

    def random_tangent(self, x, size=None, rng=None):
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
    curvature_bounds = (0.0, 0.0)
    injectivity_radius = np.inf
    is_homogeneous = True
    is_flat = True

    def to_coordinates(self, x):
        """``vecd(Log x)``, shape ``(..., k(k+1)/2)``."""
        return mf.vecd(mf.logm(np.asarray(x, dtype=float)))

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

    def random_tangent(self, x, size=None, rng=None):
        """``(d Log_x)⁻¹ invvecd(z)``, ``z`` standard Gaussian."""
        x = np.asarray(x, dtype=float)
        z = as_generator(rng).standard_normal(self._batch_size(x, size) + (self.dim,))
        w, u = mf.eigh(x)
        return mf.differential_log_inverse(mf.positive_eigenvalues(w), u, mf.invvecd(z, self.k))
