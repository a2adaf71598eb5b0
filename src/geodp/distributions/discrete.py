"""Exact discrete Laplace and discrete Gaussian samplers (Canonne, Kamath & Steinke 2020).

Integer and rational arithmetic only: every random choice is a uniform integer drawn with
``rng.integers`` (exact: numpy's bounded integers are unbiased) or, past 63 bits, from
``rng.bytes`` by rejection. No floating-point number touches the noise, which is what makes the
releases of :mod:`geodp.mechanisms.grid` floating-point safe (Mironov 2012; docs/secure.md).
Scales are :class:`fractions.Fraction` (any positive rational).

The running time depends on the noise drawn (rejection loops), never on the value the noise is
added to. Under :func:`geodp.work.fixed_work` (timing-safe mode) both samplers run
:mod:`geodp.distributions.discrete_fixed` instead: a fixed public number of iterations of every
loop, the same law except with probability below a share of δ_t.
"""

from __future__ import annotations

import math
from fractions import Fraction
from math import isqrt

import numpy as np

from geodp.distributions.discrete_fixed import fixed_discrete_gaussian, fixed_discrete_laplace
from geodp.errors import InvalidParameterError
from geodp.work import fixed_work

__all__ = ["bernoulli_exp", "discrete_gaussian", "discrete_laplace"]

_INT64_BOUND = 2**63 - 1


def _uniform_below(m: int, rng) -> int:
    """Uniform integer in {0, …, m − 1}, exactly."""
    if m <= _INT64_BOUND:
        return int(rng.integers(0, m))
    n_bits = m.bit_length()
    n_bytes = (n_bits + 7) // 8
    while True:
        u = int.from_bytes(rng.bytes(n_bytes), "little") >> (8 * n_bytes - n_bits)
        if u < m:
            return u


def _bernoulli(num: int, den: int, rng) -> bool:
    """Bernoulli(num/den), 0 ≤ num ≤ den."""
    return _uniform_below(den, rng) < num


def _bernoulli_exp_unit(num: int, den: int, rng) -> bool:
    """Bernoulli(exp(−γ)) for γ = num/den ∈ [0, 1] (CKS20 Alg. 1: K odd, K ~ Poisson-type)."""
    k = 1
    while _bernoulli(num, den * k, rng):
        k += 1
    return k % 2 == 1


def _bernoulli_exp(num: int, den: int, rng) -> bool:
    """Bernoulli(exp(−num/den)) for integers num ≥ 0, den > 0."""
    while num > den:  # exp(−γ) = exp(−1)^⌊γ⌋ · exp(−(γ − ⌊γ⌋)): one coin per unit
        if not _bernoulli_exp_unit(1, 1, rng):
            return False
        num -= den
    return _bernoulli_exp_unit(num, den, rng)


def _geometric_exp(num: int, den: int, rng) -> int:
    """Geometric(1 − exp(−x)) on {0, 1, …} for x = num/den > 0 (CKS20 Alg. 2, inner part)."""
    while True:
        u = _uniform_below(den, rng)
        if _bernoulli_exp(u, den, rng):
            break
    v = 0
    while _bernoulli_exp_unit(1, 1, rng):
        v += 1
    return (v * den + u) // num


def _as_positive_fraction(value, name: str) -> Fraction:
    if isinstance(value, float) and not np.isfinite(value):
        raise InvalidParameterError(f"{name} must be a positive rational, got {value!r}.")
    q = Fraction(value)
    if q <= 0:
        raise InvalidParameterError(f"{name} must be a positive rational, got {value!r}.")
    return q


def _shape(size) -> tuple:
    return () if size is None else ((int(size),) if np.isscalar(size) else tuple(int(s) for s in size))


def _draws(one, size) -> np.ndarray:
    """``size`` independent draws of ``one()`` as an object array of Python ints."""
    shape = _shape(size)
    out = np.empty(shape, dtype=object)
    for index in np.ndindex(shape):
        out[index] = one()
    return out


def _fixed_draws(fixed, parameter: Fraction, rng, size, epsilon) -> np.ndarray:
    """``size`` draws by a fixed-work sampler (one δ_t share for the whole call)."""
    shape = _shape(size)
    n = math.prod(shape)
    out = np.empty(shape, dtype=object)
    if n:
        out.reshape(-1)[:] = fixed(parameter, n, rng, epsilon)
    return out


def bernoulli_exp(gamma, rng, size=None):
    """Exact Bernoulli(exp(−γ)) draws for a rational γ ≥ 0 (CKS20 Alg. 1).

    Parameters
    ----------
    gamma : int, Fraction or float
        Read exactly as a rational (a float is its exact binary value).
    rng : numpy.random.Generator
    size : int or tuple, optional

    Returns
    -------
    bool or numpy.ndarray of bool

    Examples
    --------
    >>> import numpy as np
    >>> from fractions import Fraction
    >>> draws = bernoulli_exp(Fraction(1, 2), np.random.default_rng(0), size=4000)
    >>> bool(abs(draws.mean() - np.exp(-0.5)) < 0.03)
    True
    """
    g = Fraction(gamma)
    if g < 0:
        raise InvalidParameterError(f"gamma must be >= 0, got {gamma!r}.")
    draws = _draws(lambda: _bernoulli_exp(g.numerator, g.denominator, rng), size)
    return bool(draws[()]) if size is None else draws.astype(bool)


def _discrete_laplace_one(scale: Fraction, rng) -> int:
    while True:
        negative = _bernoulli(1, 2, rng)
        magnitude = _geometric_exp(scale.denominator, scale.numerator, rng)  # x = 1/scale
        if not (negative and magnitude == 0):
            return -magnitude if negative else magnitude


def discrete_laplace(scale, rng, size=None, *, epsilon=0.0):
    """Exact discrete Laplace on the integers: ``P(x) ∝ exp(−|x|/scale)`` (CKS20 Alg. 2).

    Parameters
    ----------
    scale : int, Fraction or float
        Positive; read exactly as a rational.
    rng : numpy.random.Generator
    size : int or tuple, optional
    epsilon : float, optional
        Under :func:`geodp.work.fixed_work` only: the ε of the release this noise serves. The
        fixed-work sampler fails (:class:`~geodp.work.NoAcceptance`) with probability at most
        e^−ε times its δ_t share, since a truncated tail costs e^ε times its probability
        (docs/math.md §15); 0 leaves the share as it is.

    Returns
    -------
    int or numpy.ndarray of Python ints (dtype object: exact, unbounded)

    Examples
    --------
    >>> import numpy as np
    >>> x = discrete_laplace(3, np.random.default_rng(0), size=3000).astype(float)
    >>> bool(abs(x.var() - 2 * np.exp(1/3) / (np.exp(1/3) - 1) ** 2) < 2.0)
    True
    """
    s = _as_positive_fraction(scale, "scale")
    if fixed_work() is not None:
        draws = _fixed_draws(fixed_discrete_laplace, s, rng, size, epsilon)
    else:
        draws = _draws(lambda: _discrete_laplace_one(s, rng), size)
    return draws[()] if size is None else draws


def _discrete_gaussian_one(sigma2: Fraction, rng) -> int:
    a, b = sigma2.numerator, sigma2.denominator
    t = isqrt(a // b) + 1  # ⌊σ⌋ + 1
    while True:
        y = _discrete_laplace_one(Fraction(t), rng)
        # accept with exp(−(|y| − σ²/t)²/(2σ²)) = exp(−(|y|·b·t − a)² / (2·a·b·t²))
        if _bernoulli_exp((abs(y) * b * t - a) ** 2, 2 * a * b * t * t, rng):
            return y


def discrete_gaussian(sigma2, rng, size=None, *, epsilon=0.0):
    """Exact discrete Gaussian on the integers: ``P(x) ∝ exp(−x²/(2σ²))`` (CKS20 Alg. 3).

    Parameters
    ----------
    sigma2 : int, Fraction or float
        The parameter σ² (positive, read exactly as a rational; the variance is slightly below).
    rng : numpy.random.Generator
    size : int or tuple, optional
    epsilon : float, optional
        Under :func:`geodp.work.fixed_work` only: the ε of the release this noise serves. The
        fixed-work sampler fails (:class:`~geodp.work.NoAcceptance`) with probability at most
        e^−ε times its δ_t share, since a truncated tail costs e^ε times its probability
        (docs/math.md §15); 0 leaves the share as it is.

    Returns
    -------
    int or numpy.ndarray of Python ints (dtype object)

    Examples
    --------
    >>> import numpy as np
    >>> x = discrete_gaussian(16, np.random.default_rng(0), size=3000).astype(float)
    >>> bool(abs(x.std() - 4.0) < 0.3)
    True
    """
    s2 = _as_positive_fraction(sigma2, "sigma2")
    if fixed_work() is not None:
        draws = _fixed_draws(fixed_discrete_gaussian, s2, rng, size, epsilon)
    else:
        draws = _draws(lambda: _discrete_gaussian_one(s2, rng), size)
    return draws[()] if size is None else draws
