"""The exponential-mechanism quantile over intervals (Smith 2011), sampled exactly.

The values are clipped into the public interval ``[lower, upper]`` and sorted,
``lower = z_0 ≤ z_1 ≤ … ≤ z_n ≤ z_{n+1} = upper``. A point ``t`` of the open interval
``(z_i, z_{i+1})`` has ``i`` values below it; its utility is ``−|i − q·n|``, which changes by at
most 1 when one value is replaced. The release has density

    f(t) ∝ exp(−ε·|#{z_j < t} − q·n| / 2)   on [lower, upper],

the exponential mechanism of McSherry & Talwar (2007) with utility sensitivity 1, hence ε-DP.
It is sampled exactly: the interval ``i`` with probability ∝ ``(z_{i+1} − z_i)·exp(−ε|i − qn|/2)``
(Gumbel-max over the ``n + 1`` log-weights, no normalisation), then a uniform point in it.
"""

from __future__ import annotations

import math

import numpy as np

from geodp.errors import InvalidDataError, InvalidParameterError
from geodp.mechanisms.base import Guarantee, sampler_construction
from geodp.validation import as_generator, as_real_array, check_epsilon

__all__ = ["private_quantile", "quantile_guarantee", "quantile_interval_law"]


def _check_level(quantile) -> float:
    try:
        level = float(quantile)
    except (TypeError, ValueError):
        raise InvalidParameterError(f"quantile must be a number in (0, 1), got {quantile!r}.") from None
    if not 0.0 < level < 1.0:
        raise InvalidParameterError(f"quantile must be in (0, 1), got {quantile!r}.")
    return level


def _check_interval(lower, upper) -> tuple[float, float]:
    lower, upper = float(lower), float(upper)
    if not (math.isfinite(lower) and math.isfinite(upper) and lower < upper):
        raise InvalidParameterError(
            f"the public interval must be finite with lower < upper, got [{lower!r}, {upper!r}]."
        )
    return lower, upper


def quantile_interval_law(values, *, epsilon, quantile, lower, upper):
    """The exact law of :func:`private_quantile`: its ``n + 1`` intervals and their log-probabilities.

    **Private**: a function of the values, for tests and audits only; never publish it.

    Parameters
    ----------
    values : array_like, shape (n,)
        Finite reals; clipped into ``[lower, upper]``.
    epsilon : float
        > 0.
    quantile : float
        Level q in (0, 1).
    lower, upper : float
        The public interval, ``lower < upper``.

    Returns
    -------
    edges : numpy.ndarray, shape (n + 2,)
        ``[lower, sorted clipped values, upper]``; interval ``i`` is ``[edges[i], edges[i+1]]``.
    log_probabilities : numpy.ndarray, shape (n + 1,)
        Natural logarithm of each interval's probability (``-inf`` for an empty interval).

    Examples
    --------
    >>> edges, logp = quantile_interval_law([1.0, 3.0], epsilon=1.0, quantile=0.5, lower=0.0, upper=4.0)
    >>> edges.tolist()
    [0.0, 1.0, 3.0, 4.0]
    >>> np.exp(logp).round(4).tolist()      # weights 1·e^-0.5, 2·e^0, 1·e^-0.5
    [0.1888, 0.6225, 0.1888]
    """
    epsilon = check_epsilon(epsilon)
    level = _check_level(quantile)
    lower, upper = _check_interval(lower, upper)
    z = as_real_array(values, "values")
    if z.ndim != 1 or z.size == 0:
        raise InvalidDataError(f"values must be a non-empty 1-D array, got shape {z.shape}.")
    if not np.all(np.isfinite(z)):  # says neither which nor how many (whether it raises is observable)
        raise InvalidDataError("values must be finite: drop or replace NaN/inf before the release.")
    edges = np.concatenate(([lower], np.sort(np.clip(z, lower, upper)), [upper]))
    lengths = np.diff(edges)
    below = np.arange(z.size + 1)
    with np.errstate(divide="ignore"):
        log_weights = np.log(lengths) - 0.5 * epsilon * np.abs(below - level * z.size)
    top = np.max(log_weights)
    log_norm = top + math.log(math.fsum(np.exp(log_weights - top)))
    return edges, log_weights - log_norm


def private_quantile(values, *, epsilon, quantile, lower, upper, random_state=None) -> float:
    """An ε-DP ``quantile``-level quantile of ``values`` in the public interval ``[lower, upper]``.

    Parameters
    ----------
    values : array_like, shape (n,)
        The private values (finite); those outside the interval are clipped into it.
    epsilon : float
        Privacy budget, > 0.
    quantile : float
        Level q in (0, 1): the target rank is ``q·n``.
    lower, upper : float
        The public interval, ``lower < upper``.
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    float
        A point of ``[lower, upper]``.

    Notes
    -----
    **Privacy.** Replace-one adjacency with n public; ε-DP: the density ratio on neighbouring
    data is at most ``e^{ε/2}`` pointwise and ``e^{ε/2}`` through the normaliser (Smith 2011,
    McSherry & Talwar 2007; docs/references.md). The sampler is exact (not MCMC) and runs in
    ``O(n log n)``; it is floating-point, like every non-grid sampler of the library. See
    :func:`quantile_guarantee` for the record.

    Examples
    --------
    >>> values = np.linspace(0.0, 1.0, 1001)
    >>> t = private_quantile(values, epsilon=1.0, quantile=0.9, lower=0.0, upper=2.0, random_state=0)
    >>> 0.85 < t < 0.95
    True
    """
    edges, log_probabilities = quantile_interval_law(
        values, epsilon=epsilon, quantile=quantile, lower=lower, upper=upper
    )
    rng = as_generator(random_state)
    index = int(np.argmax(log_probabilities + rng.gumbel(size=log_probabilities.size)))
    return float(edges[index] + rng.random() * (edges[index + 1] - edges[index]))


def quantile_guarantee(*, epsilon, quantile, lower, upper, random_state=None) -> Guarantee:
    """The publishable :class:`~geodp.mechanisms.base.Guarantee` of :func:`private_quantile`.

    Examples
    --------
    >>> g = quantile_guarantee(epsilon=0.05, quantile=0.9, lower=0.0, upper=1.5)
    >>> g.epsilon, g.delta, g.sensitivity, g.exact
    (0.05, 0.0, 1.0, True)
    """
    epsilon = check_epsilon(epsilon)
    level = _check_level(quantile)
    lower, upper = _check_interval(lower, upper)
    return Guarantee(
        mechanism=f"exponential-mechanism quantile at level {level!r} (Smith 2011)",
        epsilon=epsilon,
        delta=0.0,
        sensitivity=1.0,
        metric="rank utility −|#{values below t} − q·n|",
        scale=2.0 / epsilon,
        scale_rule="density ∝ exp(−ε·|rank − q·n|/2): utility sensitivity 1, so ε-DP (McSherry & Talwar 2007)",
        space=f"the interval [{lower!r}, {upper!r}]",
        sampler="exact: an interval between sorted values by Gumbel-max on its log-weight, then uniform in it",
        exact=True,
        support=f"[{lower!r}, {upper!r}]; values outside are clipped into it",
        assumptions=("n public (replace-one adjacency)", "the interval is public (not computed from the data)"),
        **sampler_construction(random_state, "the quantile's interval and its uniform point are floating-point"),
    )
