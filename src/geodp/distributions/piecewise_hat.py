"""Piecewise-exponential hats: the proposal of every exact 1-D rejection sampler in geodp.

A hat is ``exp`` of a function that is linear on each piece ``[lo, hi]`` of a partition of the
support (the last piece may be unbounded when its line falls). Drawing from the normalised hat is
exact: pick a piece by its mass, then invert the truncated exponential CDF inside it. Where the
lines come from is the caller's business (secants of a concave log-density in
:mod:`geodp.distributions.radial`, tangent-plus-chord bounds in
:mod:`geodp.distributions.spd_affine`); values are kept in log space so no ``exp`` overflows.
"""

from __future__ import annotations

import numpy as np

__all__ = ["PiecewiseExponentialHat"]

_GAUSS_LEGENDRE = {  # nodes and weights on [0, 1]
    n: ((x + 1.0) / 2.0, w / 2.0) for n, (x, w) in ((n, np.polynomial.legendre.leggauss(n)) for n in (8, 32))
}


class PiecewiseExponentialHat:
    """``exp`` of a piecewise-linear function on the pieces ``[lo_j, hi_j]``.

    Parameters
    ----------
    lo, hi : array_like, shape (n,)
        Piece ends (``hi`` may be ``inf`` for a piece whose line falls).
    slope : array_like, shape (n,)
        Slope of the log-hat on each piece.
    through, value : array_like, shape (n,)
        The log-hat of piece ``j`` passes through ``(through_j, value_j)``.

    Each piece keeps the end where its log-hat is largest as its ``anchor`` (``lo`` when the line
    falls, ``hi`` when it rises) and the log-hat there as ``top``; the log-hat falls at ``rate ≥ 0``
    away from it.

    Examples
    --------
    >>> import numpy as np
    >>> hat = PiecewiseExponentialHat([0.0, 1.0], [1.0, np.inf], [0.0, -1.0], [0.0, 1.0], [0.0, 0.0])
    >>> [round(float(m), 12) for m in hat.mass]  # ∫_0^1 1 + ∫_1^∞ e^(1−x)
    [1.0, 1.0]
    >>> x, log_hat = hat.propose(4, np.random.default_rng(0))
    >>> bool(np.all(log_hat <= 0.0) and np.all(x >= 0.0))
    True
    """

    def __init__(self, lo, hi, slope, through, value):
        self.lo, self.hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
        slope = np.asarray(slope, dtype=float)
        rising = slope > 0
        self.sign = np.where(rising, -1.0, 1.0)
        self.anchor = np.where(rising, self.hi, self.lo)
        self.rate = np.abs(slope)
        self.width = self.hi - self.lo
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            self.top = np.asarray(value, dtype=float) + slope * (self.anchor - np.asarray(through, dtype=float))
            z = self.rate * self.width
            log_phi = np.where(z > 0, np.log(-np.expm1(-z) / z), 0.0)  # log of (1 − e^−z)/z
            log_mass = np.where(
                np.isinf(self.width), self.top - np.log(self.rate), self.top + np.log(self.width) + log_phi
            )
        self.log_mass = np.where(self.width > 0, log_mass, -np.inf)
        with np.errstate(over="ignore"):
            self.mass = np.exp(self.log_mass)  # inf only for a non-integrable hat, refused by callers
        self._cumulative = np.cumsum(self.mass)

    def distance(self, j, y):
        """Distance from the anchor of piece ``j`` at its hat-quantile ``y ∈ [0, 1)``."""
        rate, width = self.rate[j], self.width[j]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            z = rate * width
            finite = np.where(z > 0, width * (-np.log1p(y * np.expm1(-z)) / z), y * width)
            return np.where(np.isinf(width), -np.log1p(-y) / rate, finite)

    def locate(self, j, y):
        """Point at hat-quantile ``y`` of piece ``j`` and the log-hat there."""
        distance = self.distance(j, y)
        return self.anchor[j] + self.sign[j] * distance, self.top[j] - self.rate[j] * distance

    def propose(self, m, rng):
        """``m`` exact draws from the normalised hat and the log-hat at each."""
        j = np.searchsorted(self._cumulative, rng.random(m) * self._cumulative[-1], side="right")
        return self.locate(np.minimum(j, len(self.mass) - 1), rng.random(m))

    def integral(self, g, j, near, far, points=32):
        """``∫ exp(g)`` over the points of piece ``j`` at distances ``[near, far]`` from its anchor
        (Gauss–Legendre in the distance: ``exp(g)`` is smooth there, and it varies by at most
        e^60 when the span is at most 60 hat e-folds)."""
        x, w = _GAUSS_LEGENDRE[points]
        near, far = np.asarray(near, dtype=float), np.asarray(far, dtype=float)
        distance = near[..., None] + (far - near)[..., None] * x
        t = self.anchor[j][..., None] + self.sign[j][..., None] * distance
        with np.errstate(under="ignore", over="ignore", invalid="ignore"):
            values = np.nan_to_num(np.exp(g(t)), nan=0.0, posinf=0.0)
        return (far - near) * (values @ w)

    def piece_integrals(self, g):
        """``∫ exp(g)`` over every piece, up to 60 hat e-folds from its anchor (a hat that
        dominates ``exp(g)`` leaves less than e^−60 of the piece's mass beyond)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            reach = np.where(self.rate > 0, np.minimum(self.width, 60.0 / self.rate), self.width)
        j = np.arange(len(self.mass))
        return self.integral(g, j, np.zeros(len(j)), np.where(self.width > 0, reach, 0.0))
