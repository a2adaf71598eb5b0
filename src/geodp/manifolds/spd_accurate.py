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

The cost is one ``k × k`` double-double product per pass, and one small ``dgejsv`` per record
whose whitened matrix is ill-conditioned (every record under fixed work); the path is taken only
where the public ball is large enough to need it (:func:`accurate_whitening`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np
from scipy.linalg.lapack import dgejsv

from geodp.work import fixed_work

__all__ = ["accurate_whitening", "accurate_spd_eigh", "dd_congruence", "whitened_eigensystems", "whitening_is_accurate"]

_ACCURATE: ContextVar[bool] = ContextVar("geodp_accurate_whitening", default=False)
_SPLIT = 134217729.0  # 2^27 + 1, Dekker's splitter for float64
#: Whitened records better conditioned than this keep the batched ``eigh``'s decomposition.
DENSE_CONDITION = 1e3


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
    >>> from fractions import Fraction
    >>> q = np.array([[np.cos(0.3), -np.sin(0.3)], [np.sin(0.3), np.cos(0.3)]])
    >>> p = q @ np.diag([1e6, 1e-6]) @ q.T
    >>> p = (p + p.T) / 2
    >>> exact = float(sum(Fraction(q[a, 1]) * Fraction(p[a, b]) * Fraction(q[b, 1]) for a in (0, 1) for b in (0, 1)))
    >>> bool(abs(dd_congruence(q, p)[1, 1] - exact) <= 1e-15 * exact)
    True
    >>> bool(abs((q.T @ p @ q)[1, 1] - exact) <= 1e-9 * exact)  # plain float64: off by 5e-7 relative
    False
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
    >>> p = q @ np.diag([1e6, 1e-6]) @ q.T
    >>> w, _ = accurate_spd_eigh((p + p.T) / 2)
    >>> bool(abs(w[0] / np.linalg.eigvalsh((p + p.T) / 2)[0] - 1) < 1e-3)
    True

    A matrix that float64 does not hold as positive definite keeps ``eigh``'s answer.
    """
    w, q = np.linalg.eigh(p)
    a = dd_congruence(q, p)  # nearly diagonal, its small entries relatively accurate
    diagonal = np.diag(a)
    if not np.all(diagonal > 0):
        return w, q
    d = np.sqrt(diagonal)
    try:
        chol = np.linalg.cholesky(a / d[:, None] / d[None, :]) * d[:, None]  # accurate for D·(well conditioned)·D
        sigma, u = _jacobi_svd(chol)
    except np.linalg.LinAlgError:
        return w, q
    return sigma[::-1] ** 2, q @ u[:, ::-1]


def whitened_eigensystems(frame_values, frame_vectors, X):
    """Log-eigenvalues and eigenvectors of ``p^-½ x_i p^-½`` for records ``X`` (n, k, k), with
    ``p = frame_vectors diag(frame_values) frame_vectorsᵀ`` from :func:`accurate_spd_eigh`; the
    eigenvectors are those of ``p^-½ x_i p^-½`` itself (``p^-½`` the symmetric root).

    The whitened records are formed from the factors ``C_i`` (module notes) and decomposed by one
    batched ``eigh``, whose log-eigenvalues are then off by about ``k·eps·cond``; records whose
    condition number passes :data:`DENSE_CONDITION` (``k·eps·cond`` above a few 1e-13) get the Jacobi SVD
    of ``C_i`` instead. Under fixed work (:func:`geodp.work.fixed_work`) every record does.

    Examples
    --------
    >>> import numpy as np
    >>> logs, u = whitened_eigensystems(np.array([1.0, 4.0]), np.eye(2), np.diag([4.0, 4.0])[None])
    >>> np.round(np.sort(logs[0]), 12).tolist() == [0.0, round(float(np.log(4.0)), 12)]
    True
    """
    s, v = np.linalg.eigh(X)
    with np.errstate(all="ignore"):  # a frame float64 does not hold as positive definite: NaN logs
        half = np.log(np.maximum(s, np.finfo(float).tiny)) / 2.0
        factors = (frame_vectors.T @ v) * np.exp(half)[:, None, :]  # Qᵀ V_i diag(e^{s_i/2})
        factors *= frame_values[None, :, None] ** -0.5
        w, vectors = np.linalg.eigh(factors @ np.swapaxes(factors, -1, -2))
        logs = np.log(w)
        far = ~(w[:, 0] * DENSE_CONDITION >= w[:, -1])
    if fixed_work() is not None:
        far[:] = True
    far &= np.all(np.isfinite(factors), axis=(-2, -1))  # LAPACK would print to stdout on NaN
    for i in np.flatnonzero(far):
        try:
            sigma, u = _jacobi_svd(factors[i])
        except np.linalg.LinAlgError:  # no convergence (not seen): the batched eigh's answer, nothing raised
            continue
        logs[i] = 2.0 * np.log(sigma[::-1])
        vectors[i] = u[:, ::-1]
    return logs, frame_vectors @ vectors
