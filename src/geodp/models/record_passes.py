"""Passes over the records of a regression, in memory or in Dask chunks, and their exactly
summed moments.

A least-squares release reads its records only through sums of per-record terms (the Gram
matrix of the design, its cross products with the responses, counts of clipped or invalid
records). :func:`record_pass` maps a per-block function over aligned row blocks of one or more
arrays (covariates and responses): row slices of in-memory arrays, or the chunks of Dask arrays
(one ``dask.delayed`` task per chunk, never materialised, each chunk processed in sub-blocks of
at most ``rows`` records so that temporaries depend on neither n nor the chunk size).
:func:`moment_parts` and :func:`combine_moments` sum the moments exactly
(integer sums of the terms' mantissas), so the statistic does not depend on how the records were split: in memory
and in any chunking of a Dask array the release is the same. The exact sum also keeps one
record's influence on it within the sensitivity bound at every n (a float sum of n terms carries
a rounding error that grows like ``n·eps``). dask is imported only inside a pass over Dask input.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from geodp.errors import InvalidDataError, InvalidParameterError
from geodp.records import BLOCK_VALUES, is_dask
from geodp.validation import as_real_array, check_real_dtype
from geodp.work import count

__all__ = [
    "check_covariate_bounds",
    "check_dask_records",
    "combine_moments",
    "covariate_records",
    "exact_column_sums",
    "moment_parts",
    "record_pass",
    "rows_per_block",
]


def check_dask_records(X, name: str, trailing_shape=None, *, ndims=None) -> None:
    """Refuse, from its public metadata, a Dask array of records whose shape, number of records
    or dtype does not fit (raised before any charge, as in memory).

    Parameters
    ----------
    X : dask.array.Array
    name : str
    trailing_shape : tuple, optional
        The shape of one record; or ``ndims``, the accepted numbers of dimensions.
    """
    shape_fits = trailing_shape is None or (X.ndim == len(trailing_shape) + 1 and X.shape[1:] == tuple(trailing_shape))
    if not shape_fits:
        shape = ", ".join(map(str, trailing_shape))
        raise InvalidDataError(f"{name} must have shape (n, {shape}), got {X.shape}.")
    if ndims is not None and X.ndim not in ndims:
        raise InvalidDataError(f"{name} must have {' or '.join(map(str, ndims))} dimension(s), got shape {X.shape}.")
    if not (isinstance(X.shape[0], numbers.Integral) and X.shape[0] >= 1):
        raise InvalidDataError(
            f"{name} must hold n >= 1 records of known number, got {X.shape[0]} (call {name}.compute_chunk_sizes())."
        )
    if any(not all(isinstance(c, numbers.Integral) for c in axis) for axis in X.chunks):
        raise InvalidDataError(f"{name} has chunks of unknown size; call {name}.compute_chunk_sizes() first.")
    check_real_dtype(X.dtype, name)


def rows_per_block(values_per_record: int) -> int:
    """Records per sub-block: about 8 MB of float64 temporaries (:data:`geodp.records.BLOCK_VALUES`)."""
    return max(1, BLOCK_VALUES // max(1, int(values_per_record)))


def _sub_blocks(part, args, rows, *blocks):
    """``[part(*args, *sub_blocks)]`` over the sub-blocks of ``rows`` records of aligned blocks
    (float64; an empty block gives no part)."""
    blocks = [np.asarray(b, dtype=np.float64) for b in blocks]
    n = blocks[0].shape[0]
    return [part(*args, *(b[start : start + rows] for b in blocks)) for start in range(0, n, rows)]


def record_pass(part, arrays, args=(), *, rows: int) -> list:
    """One pass over the records: ``part(*args, *blocks)`` on aligned row blocks of ``arrays``.

    Parameters
    ----------
    part : callable
        Applied to each sub-block (float64 arrays of at most ``rows`` records, the same rows of
        every array); it must return something small (sums, counts).
    arrays : sequence of numpy.ndarray or dask.array.Array
        Records along the first axis, the same number in each. If any is a Dask array, the pass
        runs over its chunks (the others are aligned to them), one task per chunk.
    args : tuple
        Public arguments passed first to ``part``.
    rows : int
        Largest sub-block (see :func:`rows_per_block`).

    Returns
    -------
    list
        The parts, in record order.

    Examples
    --------
    >>> import dask.array as da
    >>> import numpy as np
    >>> x = np.arange(10.0)
    >>> record_pass(np.sum, [x], rows=4)
    [np.float64(6.0), np.float64(22.0), np.float64(17.0)]
    >>> record_pass(np.sum, [da.from_array(x, chunks=5)], rows=4)
    [np.float64(6.0), np.float64(4.0), np.float64(26.0), np.float64(9.0)]
    """
    count("records", arrays[0].shape[0])
    if not any(is_dask(a) for a in arrays):
        return _sub_blocks(part, args, rows, *arrays)
    import dask
    import dask.array as da

    lead = next(a for a in arrays if is_dask(a))
    chunks = lead.chunks[0]
    aligned = []
    for a in arrays:
        a = a if is_dask(a) else da.from_array(a, chunks=(chunks,) + tuple(a.shape[1:]))
        aligned.append(a.rechunk({0: chunks, **{axis: -1 for axis in range(1, a.ndim)}}))
    per_array = [a.to_delayed().reshape(len(chunks), -1)[:, 0].tolist() for a in aligned]
    task = dask.delayed(_sub_blocks)
    results = dask.compute(*[task(part, args, rows, *blocks) for blocks in zip(*per_array)])
    return [p for chunk in results for p in chunk]


def moment_parts(design: np.ndarray, response: np.ndarray) -> list:
    """The exact sums of the per-record moments of a block: the upper triangle of
    ``Σ_i x_i x_iᵀ`` then ``Σ_i x_i y_iᵀ`` (row-major), for a design of shape ``(b, q)`` and
    responses of shape ``(b, d)``, each an exact integer multiple of ``2**-1126`` (see
    :func:`exact_column_sums`). :func:`combine_moments` adds the parts of several blocks."""
    q = design.shape[1]
    upper = np.triu_indices(q)
    cross = (design[:, :, None] * response[:, None, :]).reshape(len(design), -1)
    return exact_column_sums(np.concatenate([design[:, upper[0]] * design[:, upper[1]], cross], axis=1))


_EXPONENT = 1126  # every float64 is an integer multiple of 2**-1126 (2**-1074 = 2**-1126 · 2**52)
_HALF = 26  # mantissas are summed in two halves of at most 27 bits: int64 sums cannot overflow


def exact_column_sums(terms: np.ndarray) -> list:
    """The exact sum of each column of ``terms`` (shape ``(b, k)``), as a Python int ``S`` with
    sum ``S · 2**-1126``: the mantissas of the terms are summed in int64 per binary exponent
    (vectorised; no rounding), then shifted into one integer. Sums of blocks add exactly, so the
    total does not depend on the blocks. A column holding NaN or ±inf gives its float sum.

    Examples
    --------
    >>> parts = exact_column_sums(np.array([[1e16, 0.1], [1.0, 0.2], [-1e16, -0.3]]))
    >>> [p / (1 << 1126) for p in parts]
    [1.0, 2.7755575615628914e-17]
    """
    terms = np.asarray(terms, dtype=np.float64)
    sums = []
    for column in terms.T:
        if not np.all(np.isfinite(column)):
            sums.append(float(np.sum(column)))
            continue
        mantissa, exponent = np.frexp(column)  # column = mantissa · 2**exponent
        whole = np.ldexp(mantissa, 53).astype(np.int64)  # exact: 53 significant bits
        exponent = exponent.astype(np.int16)  # in [-1073, 1024]: a 16-bit key sorts by radix
        order = np.argsort(exponent, kind="stable")
        exponent, whole = exponent[order], whole[order]
        starts = np.flatnonzero(np.r_[True, exponent[1:] != exponent[:-1]]) if len(column) else []
        total = 0
        if len(starts):
            high = np.add.reduceat(whole >> _HALF, starts).tolist()
            low = np.add.reduceat(whole & ((1 << _HALF) - 1), starts).tolist()
            for e, h, lo in zip(exponent[starts].tolist(), high, low):
                total += ((h << _HALF) + lo) << (e - 53 + _EXPONENT)
        sums.append(total)
    return sums


def _exact_value(total) -> float:
    """The correctly rounded float of an exact sum (Python's int division rounds correctly);
    ±inf beyond float64's range, as a float sum would give."""
    if isinstance(total, float):
        return total
    try:
        return total / (1 << _EXPONENT)
    except OverflowError:
        return math.inf if total > 0 else -math.inf


def combine_moments(parts, n: int, q: int, d: int):
    """``(gram, target)``: ``(1/n) Σ_i x_i x_iᵀ`` (shape ``(q, q)``) and ``(1/n) Σ_i x_i y_iᵀ``
    (shape ``(q, d)``) from the :func:`moment_parts` of all blocks: each entry the correctly
    rounded exact sum divided by n, independent of the blocks."""
    sums = np.array([_exact_value(sum(column)) for column in zip(*parts)])
    k = q * (q + 1) // 2
    gram = np.zeros((q, q))
    gram[np.triu_indices(q)] = sums[:k]
    gram = gram + np.triu(gram, 1).T
    return gram / n, sums[k:].reshape(q, d) / n


def covariate_records(x, m, name="X"):
    """``(array, vector)``: ``x`` as a float array of shape ``(n, m)``, and whether it came as a
    vector of shape ``(n,)``; entries that are not finite real numbers (None,
    pd.NA, text, complex, nested lists) become NaN through the one coercion
    (:func:`~geodp.validation.as_real_array`), so they invalidate only their record."""
    if is_dask(x):  # lazy: only its public metadata are checked here
        check_dask_records(x, name, ndims=(1, 2))
        arr = x
    else:
        arr = as_real_array(x, name)
    vector = arr.ndim == 1  # one covariate given as shape (n,) (after the coercion: entries do not decide)
    if vector:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[1] != m:
        raise InvalidDataError(f"{name} must have shape (n,) or (n, {m}) to match x_bounds, got {arr.shape}.")
    return arr, vector


def check_covariate_bounds(x_bounds):
    """``(lower, upper)`` of the public covariate box, as float arrays (finite, lower < upper)."""
    try:
        lower, upper = x_bounds
    except (TypeError, ValueError):
        raise InvalidParameterError("x_bounds must be a pair (lower, upper) of scalars or arrays.") from None
    try:
        lower = np.atleast_1d(np.asarray(lower, dtype=float)).ravel()
        upper = np.atleast_1d(np.asarray(upper, dtype=float)).ravel()
    except (TypeError, ValueError):
        raise InvalidParameterError("x_bounds must hold real numbers.") from None
    if lower.shape != upper.shape:
        lower, upper = np.broadcast_arrays(lower, upper)
    if not (np.all(np.isfinite(lower)) and np.all(np.isfinite(upper)) and np.all(lower < upper)):
        raise InvalidParameterError("x_bounds must be finite with lower < upper for every covariate.")
    return lower.astype(float), upper.astype(float)
