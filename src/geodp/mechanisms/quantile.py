"""The exponential-mechanism quantile (Smith 2011) on a public grid, sampled exactly.

The public interval ``[lower, upper]`` carries a public grid of ``cells`` points, the cell
midpoints ``g_j = lower + (j + ½)·h``, ``h = (upper − lower)/cells``. A grid point's utility is
``−|#{values below g_j} − q·n|``; replacing one value changes it by at most 1 at every grid point
(the count is ``#{i : k_i ≤ j}`` for the per-record cell index ``k_i = #{j : g_j ≤ z_i}``). The
release is the grid point ``g_j`` with probability

    P(j) ∝ exp(−ε·|#{values below g_j} − q·n| / 2),

the exponential mechanism of McSherry & Talwar (2007) over a finite public set, with utility
sensitivity 1, hence ε-DP. It is sampled exactly: grid points sharing one count ``i`` form the run
``[k_(i), k_(i+1))`` (the sorted cell indices), chosen with probability ∝ ``m_i·exp(−ε|i − qn|/2)``
(Gumbel-max over the ``n + 1`` log-weights), then a uniform grid point of the run (integers).

**Why a grid.** Drawing a uniform point between two sorted *values* (Smith's continuous version)
releases ``z_i + U·(z_{i+1} − z_i)``: its low-order bits tell which data value the draw started
from (Mironov 2012) — an audit certified ε ≥ 3.26 at a claimed ε = 1 from them. A grid point is a
function of its public index only, so the output carries no such bits. (The run is still chosen
with floating-point probabilities, whose relative error is about 1e-15.)
"""

from __future__ import annotations

import math

import numpy as np

from geodp.errors import InvalidDataError, InvalidParameterError
from geodp.mechanisms.base import Guarantee, sampler_construction
from geodp.validation import as_generator, as_real_array, check_epsilon

__all__ = ["CELLS", "private_quantile", "quantile_guarantee", "quantile_interval_law"]

#: Default number of public grid points over ``[lower, upper]`` (2^20: a resolution of about 1e-6
#: of the interval, far below the noise of the quantile at any ε).
CELLS = 2**20


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


def _check_cells(cells) -> int:
    if isinstance(cells, bool) or not isinstance(cells, int | np.integer) or not 1 <= cells <= 2**40:
        raise InvalidParameterError(f"cells must be an integer in [1, 2^40], got {cells!r}.")
    return int(cells)


def quantile_interval_law(values, *, epsilon, quantile, lower, upper, cells=CELLS):
    """The exact law of :func:`private_quantile`: the runs of grid points that share a count, as
    intervals of the line, and their log-probabilities.

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
    cells : int, default :data:`CELLS`
        Number of public grid points.

    Returns
    -------
    edges : numpy.ndarray, shape (n + 2,)
        ``lower + k·h`` for ``k = [0, sorted cell indices, cells]``: run ``i`` holds the grid
        points (cell midpoints) in ``[edges[i], edges[i+1])``, each equally likely.
    log_probabilities : numpy.ndarray, shape (n + 1,)
        Natural logarithm of each run's probability (``-inf`` for an empty run).

    Examples
    --------
    >>> edges, logp = quantile_interval_law([1.0, 3.0], epsilon=1.0, quantile=0.5, lower=0.0, upper=4.0, cells=4)
    >>> edges.tolist()                      # grid points 0.5, 1.5, 2.5, 3.5
    [0.0, 1.0, 3.0, 4.0]
    >>> np.exp(logp).round(4).tolist()      # weights 1·e^-0.5, 2·e^0, 1·e^-0.5
    [0.1888, 0.6225, 0.1888]
    """
    return _law(values, epsilon=epsilon, quantile=quantile, lower=lower, upper=upper, cells=cells)[:2]


def _law(values, *, epsilon, quantile, lower, upper, cells):
    """``(edges, log_probabilities, index, h)`` of :func:`quantile_interval_law`, with the runs'
    integer boundaries ``index`` and the grid step ``h``."""
    lower, upper, counts = _runs(values, epsilon=epsilon, quantile=quantile, lower=lower, upper=upper, cells=cells)
    n, level, cells, epsilon = counts["n"], counts["level"], counts["cells"], counts["epsilon"]
    index = counts["index"]
    runs = np.diff(index).astype(float)
    with np.errstate(divide="ignore"):
        log_weights = np.log(runs) - 0.5 * epsilon * np.abs(np.arange(n + 1) - level * n)
    top = np.max(log_weights)
    log_norm = top + math.log(math.fsum(np.exp(log_weights - top)))
    h = (upper - lower) / cells
    return lower + index * h, log_weights - log_norm, index, h


def _runs(values, *, epsilon, quantile, lower, upper, cells):
    """The checked inputs and the runs' integer boundaries ``[0, sorted k_i, cells]``."""
    epsilon = check_epsilon(epsilon)
    level = _check_level(quantile)
    lower, upper = _check_interval(lower, upper)
    cells = _check_cells(cells)
    z = as_real_array(values, "values")
    if z.ndim != 1 or z.size == 0:
        raise InvalidDataError(f"values must be a non-empty 1-D array, got shape {z.shape}.")
    if not np.all(np.isfinite(z)):  # says neither which nor how many (whether it raises is observable)
        raise InvalidDataError("values must be finite: drop or replace NaN/inf before the release.")
    # k_i = #{j : lower + (j + ½)h ≤ z_i}, a per-record integer (its rounding cannot matter: the
    # mechanism is defined by these integers, and each depends on its own record only).
    k = np.clip(np.floor((np.clip(z, lower, upper) - lower) / ((upper - lower) / cells) - 0.5) + 1, 0, cells)
    index = np.concatenate(([0], np.sort(k.astype(np.int64)), [cells]))
    return lower, upper, dict(n=z.size, level=level, cells=cells, epsilon=epsilon, index=index)


def private_quantile(values, *, epsilon, quantile, lower, upper, random_state=None, cells=CELLS) -> float:
    """An ε-DP ``quantile``-level quantile of ``values``: a point of the public grid on ``[lower, upper]``.

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
    cells : int, default :data:`CELLS`
        Number of public grid points (cell midpoints) the release is one of.

    Returns
    -------
    float
        A grid point ``lower + (j + ½)·(upper − lower)/cells``.

    Notes
    -----
    **Privacy.** Replace-one adjacency with n public; ε-DP: the exponential mechanism over the
    public grid with utility sensitivity 1 (McSherry & Talwar 2007; Smith 2011;
    docs/references.md). The sampler is exact (not MCMC) and runs in ``O(n log n)``; the release
    is a public grid point, so its low-order bits carry nothing about the data. See
    :func:`quantile_guarantee` for the record.

    Examples
    --------
    >>> values = np.linspace(0.0, 1.0, 1001)
    >>> t = private_quantile(values, epsilon=1.0, quantile=0.9, lower=0.0, upper=2.0, random_state=0)
    >>> 0.85 < t < 0.95, (t / 2.0 * 2**20 - 0.5).is_integer()
    (True, True)
    """
    edges, log_probabilities, index, h = _law(
        values, epsilon=epsilon, quantile=quantile, lower=lower, upper=upper, cells=cells
    )
    rng = as_generator(random_state)
    run = int(np.argmax(log_probabilities + rng.gumbel(size=log_probabilities.size)))
    j = int(rng.integers(index[run], index[run + 1]))  # the run is never empty: its probability is 0 then
    return float(float(lower) + (j + 0.5) * h)


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
        sampler=(
            "exact: the exponential mechanism over a public grid of 2^20 points on the interval (a run of grid "
            "points sharing one rank by Gumbel-max on its log-weight, then a uniform grid point of it)"
        ),
        exact=True,
        support=f"[{lower!r}, {upper!r}]; values outside are clipped into it",
        assumptions=("n public (replace-one adjacency)", "the interval is public (not computed from the data)"),
        **sampler_construction(
            random_state,
            "the release is a public grid point (no low-order bits of a data value), but the run is chosen with "
            "floating-point probabilities",
        ),
    )
