"""The affine-invariant Karcher gradient in high precision: the oracle that checks the flow's
output against the tolerance its sensitivity margin assumes (docs/math.md §3, "Whitening far from
the iterate"; ``benchmarks/check_affine_flow_accuracy.py``). Needs mpmath (the ``test`` extra)."""

from __future__ import annotations

import numpy as np

__all__ = ["exact_gradient_norm"]


def exact_gradient_norm(p, records, weights, digits: int = 50) -> float:
    """``‖Σ w_i Log(p^-½ x_i p^-½)‖_F`` at the point ``p`` of AI-SPD(k), in ``digits`` significant
    digits, each record taken as its ``eigh`` factors ``V diag(s) Vᵀ`` (the canonical form the
    private fit's accurate path works on).

    Examples
    --------
    >>> import numpy as np
    >>> records = np.stack([np.diag([1.0, 4.0]), np.diag([4.0, 1.0])])
    >>> exact_gradient_norm(np.diag([2.0, 2.0]), records, np.array([0.5, 0.5])) < 1e-40
    True
    """
    import mpmath as mp

    with mp.workdps(digits):
        k = p.shape[0]
        values, vectors = mp.eigsy(mp.matrix(np.asarray(p, dtype=float).tolist()))
        inv_root = vectors * mp.diag([1 / mp.sqrt(v) for v in values]) * vectors.T
        total = mp.zeros(k, k)
        for x, w in zip(records, weights, strict=True):
            s, v = np.linalg.eigh(x)
            factors = mp.matrix(v.tolist())
            whitened = inv_root * (factors * mp.diag([mp.mpf(float(e)) for e in s]) * factors.T) * inv_root
            e, q = mp.eigsy((whitened + whitened.T) / 2)
            total += mp.mpf(float(w)) * (q * mp.diag([mp.log(t) for t in e]) * q.T)
        return float(mp.sqrt(sum(total[i, j] ** 2 for i in range(k) for j in range(k))))
