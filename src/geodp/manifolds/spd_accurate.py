"""Affine-invariant logarithms of far-apart SPD matrices to high relative accuracy (docs/math.md §15,
"Whitening far from the iterate").

The Karcher flow's gradient at ``p`` is the mean of ``Log(p^-½ x_i p^-½)``. The whitened matrix
``p^-½ x p^-½`` of a record far from ``p`` has eigenvalues ``e^±d``, and ``eigh`` of it as a dense
float64 matrix fixes its small eigenvalues only to ``eps·e^d`` absolutely: on SPD(2) with records
at radius 10 from the centre the computed gradient read 5e-10 where the exact one was 9e-8, so the
flow stopped far outside its tolerance. Here neither ``p`` nor the whitened records are formed as
dense ill-conditioned matrices:

* ``p = Q diag(e^m) Qᵀ`` with high relative accuracy: ``eigh`` gives ``Q``, ``Qᵀ p Q`` is formed in
  double-double arithmetic (so its small diagonal entries keep their relative accuracy) and is then
  nearly diagonal, whose eigensystem the preconditioned Jacobi SVD of its Cholesky factor gives to
  relative accuracy (LAPACK ``dgejsv``, Demmel et al. 1999);
* each record ``x_i = V_i diag(e^s_i) V_iᵀ`` (its ``eigh``: the record's canonical form), and the
  whitened record is ``C_i C_iᵀ`` with ``C_i = diag(e^-m/2) (Qᵀ V_i) diag(e^s_i/2)``, a product of
  a diagonal, an orthogonal and a diagonal matrix, whose singular values ``dgejsv`` computes to
  relative accuracy ``O(eps)`` whatever the two diagonals' spread.

The cost is one small ``dgejsv`` per record per pass: the path is taken only where the public ball
is large enough to need it (:func:`accurate_whitening`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np
from scipy.linalg.lapack import dgejsv

__all__ = ["accurate_whitening", "accurate_spd_eigh", "dd_congruence", "whitened_eigensystems", "whitening_is_accurate"]

_ACCURATE: ContextVar[bool] = ContextVar("geodp_accurate_whitening", default=False)
_SPLIT = 134217729.0  # 2^27 + 1, Dekker's splitter for float64


@contextmanager
def accurate_whitening(active: bool = True) -> Iterator[None]:
    """Evaluate affine-invariant Karcher gradients on the accurate path in the body (when ``active``).

    Examples
    --------
    >>> with accurate_whitening():
    ...     whitening_is_accurate()
    True
    >>> whitening_is_accurate()
    False
    """
    token = _ACCURATE.set(bool(active))
    try:
        yield
    finally:
        _ACCURATE.reset(token)


def whitening_is_accurate() -> bool:
    """Whether an :func:`accurate_whitening` section is open."""
    return _ACCURATE.get()


def _two_product(a, b):
    """``a·b = p + e`` exactly (Dekker)."""
    p = a * b
    ca, cb = _SPLIT * a, _SPLIT * b
    ah, bh = ca - (ca - a), cb - (cb - b)
    al, bl = a - ah, b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _dd_sum(hi, lo, axis):
    """``Σ (hi + lo)`` along ``axis`` in double-double (two-sum cascade), rounded to float64."""
    hi, lo = np.moveaxis(hi, axis, 0), np.moveaxis(lo, axis, 0)
    s, err = hi[0].copy(), lo[0].copy()
    for term, small in zip(hi[1:], lo[1:], strict=True):
        t = s + term
        z = t - s
        err += (s - (t - z)) + (term - z) + small
        s = t
    return s + err, err - ((s + err) - s)


def dd_congruence(q, p):
    """``qᵀ p q`` of one ``k × k`` matrix, each entry to relative accuracy ``O(eps)`` plus
    ``O(eps²)·Σ|terms|`` (double-double products and sums), returned rounded to float64.

    Examples
    --------
    >>> import numpy as np
    >>> q = np.array([[np.cos(0.3), -np.sin(0.3)], [np.sin(0.3), np.cos(0.3)]])
    >>> p = q @ np.diag([1e12, 1e-12]) @ q.T
    >>> bool(abs(dd_congruence(q, p)[1, 1] / 1e-12 - 1) < 1e-3)
    True
    """
    hi, lo = _two_product(p[:, :, None], q[None, :, :])  # p_ab q_bl, summed over b
    pq_hi, pq_lo = _dd_sum(hi, lo, axis=1)
    hi, lo = _two_product(q[:, :, None], pq_hi[:, None, :])  # q_aj (pq)_al, summed over a
    lo = lo + q[:, :, None] * pq_lo[:, None, :]
    out, _ = _dd_sum(hi, lo, axis=0)
    return 0.5 * (out + out.T)


def _jacobi_svd(c):
    """Singular values (descending) and left singular vectors of ``c`` to high relative accuracy
    for ``c = D₁ B D₂`` with ``B`` well conditioned (``dgejsv``, JOBA='F')."""
    sva, u, _, work, _, info = dgejsv(c, joba=2, jobu=0, jobv=3)
    if info != 0 or not work[1] > 0:
        raise np.linalg.LinAlgError(f"dgejsv failed (info={info})")
    return sva * (work[0] / work[1]), u


def accurate_spd_eigh(p):
    """Eigenvalues (ascending) and eigenvectors of one SPD matrix ``p`` to high relative accuracy
    (module notes).

    Examples
    --------
    >>> import numpy as np
    >>> c, s = np.cos(0.3), np.sin(0.3)
    >>> q = np.array([[c, -s], [s, c]])
    >>> w, _ = accurate_spd_eigh(q @ np.diag([1e9, 1e-9]) @ q.T)
    >>> bool(abs(w[0] / 1e-9 - 1) < 1e-12)
    True
    """
    _, q = np.linalg.eigh(p)
    a = dd_congruence(q, p)  # nearly diagonal, its small entries relatively accurate
    d = np.sqrt(np.diag(a))
    chol = np.linalg.cholesky(a / d[:, None] / d[None, :]) * d[:, None]  # accurate for D·(well conditioned)·D
    sigma, u = _jacobi_svd(chol)
    return sigma[::-1] ** 2, q @ u[:, ::-1]


def whitened_eigensystems(frame_values, frame_vectors, X):
    """Log-eigenvalues and eigenvectors of ``p^-½ x_i p^-½`` for records ``X`` (n, k, k), with
    ``p = frame_vectors diag(frame_values) frame_vectorsᵀ`` from :func:`accurate_spd_eigh`; the
    eigenvectors are those of ``p^-½ x_i p^-½`` itself (``p^-½`` the symmetric root).

    Examples
    --------
    >>> import numpy as np
    >>> logs, u = whitened_eigensystems(np.array([1.0, 4.0]), np.eye(2), np.diag([4.0, 4.0])[None])
    >>> np.round(np.sort(logs[0]), 12).tolist() == [0.0, round(float(np.log(4.0)), 12)]
    True
    """
    s, v = np.linalg.eigh(X)
    half = np.log(np.maximum(s, np.finfo(float).tiny)) / 2.0
    factors = (frame_vectors.T @ v) * np.exp(half)[:, None, :]  # Qᵀ V_i diag(e^{s_i/2})
    factors *= frame_values[None, :, None] ** -0.5
    n, k = X.shape[:2]
    logs, vectors = np.empty((n, k)), np.empty((n, k, k))
    for i in range(n):
        sigma, u = _jacobi_svd(factors[i])
        logs[i] = 2.0 * np.log(sigma)
        vectors[i] = u
    return logs, frame_vectors @ vectors
