"""SPD(k) with the log-Cholesky metric (Lin 2019; docs/math.md §1, log-Cholesky).

Write ``P = L Lᵀ`` with ``L`` lower triangular with a positive diagonal (the Cholesky factor).
The chart ``φ(P) = ⌊L⌋ + log D(L)`` (strictly lower part, plus the logarithm of the diagonal)
maps SPD(k) one-to-one onto the lower-triangular matrices, and the log-Cholesky metric is the one
that makes ``φ`` an isometry onto them with the Frobenius norm (Lin 2019, Prop. 8 and Thm 2):

    d(P, Q)² = ‖⌊L⌋ − ⌊K⌋‖²_F + ‖log D(L) − log D(K)‖²_F,    Q = K Kᵀ.

The space is flat and complete (κ = 0), its Fréchet mean has a closed form (the mean of the chart
coordinates), and every flat-space mechanism of geodp applies through the chart. Unlike the
log-Euclidean chart, ``φ`` needs one Cholesky factorisation, no eigendecomposition.
"""

from __future__ import annotations

import numpy as np

from geodp.manifolds import matrix_functions as mf
from geodp.manifolds.base import Manifold
from geodp.manifolds.spd import SPD
from geodp.validation import as_generator

__all__ = ["LogCholeskySPD"]


def _tril(k: int):
    """Row and column indices of the lower triangle, diagonal included (the chart's order)."""
    return np.tril_indices(k)


def _halve_lower(s):
    """``⌊S⌋ + ½ D(S)``: the lower-triangular ``T`` with ``T + Tᵀ = S`` for symmetric ``S``."""
    return np.tril(s, -1) + 0.5 * (np.eye(s.shape[-1]) * s)


class LogCholeskySPD(SPD):
    """SPD(k) with the log-Cholesky metric: ``φ(P) = ⌊L⌋ + log D(L)`` is an isometry onto the
    lower-triangular matrices (Frobenius norm), ``P = L Lᵀ`` (Lin 2019).

    Chart coordinates are the lower triangle of ``φ(P)`` read row by row
    (``numpy.tril_indices``), ``k(k+1)/2`` of them. Tangent vectors at ``P`` are symmetric
    matrices ``X``; the chart's differential is ``dφ_P(X) = ⌊W⌋ + D(L)⁻¹ D(W)`` with
    ``W = L (L⁻¹ X L⁻ᵀ)_½`` and ``(S)_½ = ⌊S⌋ + ½ D(S)`` (Lin 2019, Prop. 4).

    Examples
    --------
    >>> import numpy as np
    >>> space = SPD(2, metric="log-cholesky")
    >>> p = np.array([[4.0, 2.0], [2.0, 5.0]])  # L = [[2, 0], [1, 2]]
    >>> np.round(space.to_coordinates(p), 6).tolist()  # log 2, 1, log 2
    [0.693147, 1.0, 0.693147]
    >>> bool(abs(float(space.dist(np.eye(2), p)) ** 2 - (2 * np.log(2) ** 2 + 1)) < 1e-12)
    True
    >>> bool(np.allclose(space.from_coordinates(space.to_coordinates(p)), p))
    True
    """

    metric = "log-cholesky"
    # At distance r from I, ‖log D(L)‖ ≤ r and |L_ij| ≤ r off the diagonal, so the entries of
    # P = L Lᵀ stay within [e^{−2r}, k r² + e^{2r}]: inside float64's working range [1e-150, 1e150]
    # for r ≤ 150 (e^{300} ≈ 2e130).
    max_representable_radius = 150.0
    # The extrinsic bound ‖x − I‖_F ≤ e^r − 1 of the other two metrics is not proven for this one.
    _extrinsic_radius = Manifold._extrinsic_radius
    curvature_bounds = (0.0, 0.0)
    injectivity_radius = np.inf
    is_homogeneous = True
    is_flat = True

    # -- the chart -------------------------------------------------------------------------------
    def _cholesky(self, x):
        """The Cholesky factor of each matrix, from one ``eigh`` and one QR per matrix: for
        ``P = U W Uᵀ``, ``W^½ Uᵀ = Q R`` gives ``P = Rᵀ R``, so ``L = Rᵀ`` with its columns'
        signs made positive. Never fails on a point of the space (its eigenvalues are raised to
        the rounding level as :meth:`project` raises them), and each matrix's factor depends on
        that matrix alone."""
        w, u = mf.eigh(np.asarray(x, dtype=float))
        return self._cholesky_from_eig(mf.positive_eigenvalues(w), u)

    @staticmethod
    def _cholesky_from_eig(w, u):
        r = np.linalg.qr(np.sqrt(w)[..., :, None] * np.swapaxes(u, -1, -2), mode="r")
        signs = np.sign(np.diagonal(r, axis1=-2, axis2=-1))
        signs = np.where(signs == 0, 1.0, signs)
        return np.swapaxes(signs[..., :, None] * r, -1, -2)

    def _chart_matrix(self, chol):
        """``⌊L⌋ + log D(L)``."""
        diag = np.diagonal(chol, axis1=-2, axis2=-1)
        return np.tril(chol, -1) + np.log(diag)[..., None] * np.eye(self.k)

    def _coordinates_of(self, chol):
        rows, cols = _tril(self.k)
        return self._chart_matrix(chol)[..., rows, cols]

    def _lower(self, c):
        """The lower-triangular matrix whose lower triangle is ``c``."""
        c = np.asarray(c, dtype=float)
        out = np.zeros(c.shape[:-1] + (self.k, self.k))
        rows, cols = _tril(self.k)
        out[..., rows, cols] = c
        return out

    def to_coordinates(self, x):
        """The lower triangle of ``⌊L⌋ + log D(L)``, shape ``(..., k(k+1)/2)``."""
        return self._coordinates_of(self._cholesky(x))

    def from_coordinates(self, y):
        """``L Lᵀ`` with ``L = ⌊T⌋ + exp D(T)``, ``T`` the lower-triangular matrix of ``y``."""
        t = self._lower(y)
        chol = np.tril(t, -1) + np.exp(np.diagonal(t, axis1=-2, axis2=-1))[..., None] * np.eye(self.k)
        return chol @ np.swapaxes(chol, -1, -2)

    def _record_coordinates(self, X):
        """``(φ(x_i) coordinates, invalid_i)`` from one batched ``eigh`` (which also decides
        membership, as for the other metrics) and one QR per record; NaN for invalid records."""
        w, u, logw, valid, _ = self._eigen_records(X)
        # logw holds the eigenvalues raised to the rounding level (and undone power-of-two scaling).
        coords = self._coordinates_of(self._cholesky_from_eig(np.exp(np.where(valid[:, None], logw, 0.0)), u))
        coords[~valid] = np.nan
        return coords, ~valid

    # -- the chart's differential ----------------------------------------------------------------
    def _to_chart_tangent(self, chol, v):
        """``dφ_P(v)`` as a lower-triangular matrix, ``P = L Lᵀ``."""
        inv = np.linalg.inv(chol)
        w = chol @ _halve_lower(inv @ mf.sym(np.asarray(v, dtype=float)) @ np.swapaxes(inv, -1, -2))
        diag = np.diagonal(chol, axis1=-2, axis2=-1)
        return np.tril(w, -1) + (np.diagonal(w, axis1=-2, axis2=-1) / diag)[..., None] * np.eye(self.k)

    def _from_chart_tangent(self, chol, t):
        """``(dφ_P)⁻¹ t``: ``dL = ⌊t⌋ + D(L) D(t)``, ``v = dL Lᵀ + L dLᵀ``."""
        diag = np.diagonal(chol, axis1=-2, axis2=-1)
        dl = np.tril(t, -1) + (diag * np.diagonal(t, axis1=-2, axis2=-1))[..., None] * np.eye(self.k)
        v = dl @ np.swapaxes(chol, -1, -2)
        return v + np.swapaxes(v, -1, -2)

    def _exp(self, x, v):
        """``φ⁻¹(φ(x) + dφ_x v)`` (Lin 2019, Prop. 8)."""
        chol = self._cholesky(x)
        return self.from_coordinates(self._coordinates_of(chol) + self._tril_of(self._to_chart_tangent(chol, v)))

    def _log(self, x, y):
        """``(dφ_x)⁻¹ (φ(y) − φ(x))``."""
        chol = self._cholesky(x)
        return self._from_chart_tangent(chol, self._lower(self.to_coordinates(y) - self._coordinates_of(chol)))

    def _inner(self, x, u, v):
        """``⟨dφ_x u, dφ_x v⟩_F``."""
        chol = self._cholesky(x)
        return np.sum(self._to_chart_tangent(chol, u) * self._to_chart_tangent(chol, v), axis=(-2, -1))

    def _dist(self, x, y):
        """``‖φ(x) − φ(y)‖_F``."""
        return np.linalg.norm(self.to_coordinates(x) - self.to_coordinates(y), axis=-1)

    def _transport(self, x, y, v):
        """Flat transport: ``(dφ_y)⁻¹ dφ_x v``."""
        return self._from_chart_tangent(self._cholesky(y), self._to_chart_tangent(self._cholesky(x), v))

    def _tril_of(self, t):
        rows, cols = _tril(self.k)
        return t[..., rows, cols]

    def _tangent_from_coordinates(self, p, c):
        """``(dφ_p)⁻¹`` of the lower-triangular matrix with lower triangle ``c``."""
        return self._from_chart_tangent(self._cholesky(p), self._lower(c))

    def _random_tangent(self, x, size=None, rng=None):
        """``(dφ_x)⁻¹ T`` with the lower triangle of ``T`` standard Gaussian (orthonormal in the
        metric, as ``φ`` is an isometry)."""
        x = np.asarray(x, dtype=float)
        z = as_generator(rng).standard_normal(self._batch_size(x, size) + (self.dim,))
        return self._from_chart_tangent(self._cholesky(x), self._lower(z))
