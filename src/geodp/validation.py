"""Checks of user input shared by every public entry point.

Each check raises a typed :mod:`geodp.errors` error whose message names the parameter, its
value and what to change.
"""

from __future__ import annotations

import decimal
import math
import numbers
import warnings

import numpy as np

from geodp.errors import InvalidDataError, InvalidParameterError, InvalidTypeError

__all__ = [
    "as_generator",
    "as_real_array",
    "finite_real_or_nan",
    "check_epsilon",
    "check_delta",
    "check_positive",
    "check_positive_integer",
    "check_finite_array",
    "check_real_dtype",
    "check_sample_size",
    "check_size",
    "CHECK_SLACK",
    "CLIP_MARGIN",
]

# Named rounding margins (relative). A radius (or residual bound) shrunk by CLIP_MARGIN keeps
# rounding from carrying a clipped point, or a residual, past the bound the sensitivity assumes;
# a computed quantity within CHECK_SLACK of a bound counts as within it (the check's own rounding).
CLIP_MARGIN = 1.0 - 1e-12
CHECK_SLACK = 1.0 + 1e-9


def as_generator(rng=None) -> np.random.Generator:
    """Turn ``rng`` into a :class:`numpy.random.Generator`.

    Parameters
    ----------
    rng : None, int, "secure" or numpy.random.Generator
        ``None`` (the default) and ``"secure"`` give a new cryptographically secure
        :class:`geodp.secure.SecureGenerator` (ChaCha20 keyed from the OS; never seeded), which
        also makes releases on flat spaces floating-point safe (docs/secure.md); an int seeds a
        new (fast, non-secure) generator for tests and reproductions; a Generator is returned
        as is.

    Returns
    -------
    numpy.random.Generator

    Raises
    ------
    MissingDependencyError
        ``"secure"`` without the optional package ``randomgen``.

    Examples
    --------
    >>> g = as_generator(0)
    >>> as_generator(g) is g
    True
    >>> type(as_generator("secure")).__name__, type(as_generator(None)).__name__
    ('SecureGenerator', 'SecureGenerator')
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or (isinstance(rng, str) and rng == "secure"):
        from geodp.secure import secure_generator

        return secure_generator()
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool):
        if rng < 0:
            raise InvalidParameterError(f"rng seed must be a non-negative integer, got {rng!r}.")
        return np.random.default_rng(int(rng))
    raise InvalidTypeError(
        'rng must be None, a non-negative int seed, "secure" or a numpy.random.Generator, '
        f"got {type(rng).__name__}. The legacy numpy.random.RandomState is not accepted."
    )


def _as_real(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidTypeError(f"{name} must be a real number, got {type(value).__name__}.")
    value = float(value)
    if not math.isfinite(value):
        raise InvalidParameterError(f"{name} must be finite, got {value!r}.")
    return value


def check_size(size) -> tuple[int, ...] | None:
    """A batch ``size`` of random draws (None, a non-negative int, or a tuple of them) as a tuple.

    Raises
    ------
    InvalidTypeError
        ``size`` is not None, an int or a sequence of ints.
    InvalidParameterError
        A negative entry.

    Examples
    --------
    >>> check_size(3), check_size((2, 0)), check_size(None)
    ((3,), (2, 0), None)
    >>> check_size(-1)
    Traceback (most recent call last):
    ...
    geodp.errors.InvalidParameterError: size must be a non-negative int or a tuple of them, got -1.
    """
    if size is None:
        return None
    entries = (size,) if isinstance(size, numbers.Number) or np.ndim(size) == 0 else tuple(size)
    for entry in entries:
        if isinstance(entry, bool) or not isinstance(entry, numbers.Integral):
            raise InvalidTypeError(f"size must be None, an int or a tuple of ints, got {size!r}.")
        if entry < 0:
            raise InvalidParameterError(f"size must be a non-negative int or a tuple of them, got {size!r}.")
    return tuple(int(entry) for entry in entries)


def check_epsilon(epsilon) -> float:
    """Validate a privacy parameter ε and return it as a float.

    Examples
    --------
    >>> check_epsilon(0.5)
    0.5
    >>> check_epsilon(0)
    Traceback (most recent call last):
    ...
    geodp.errors.InvalidParameterError: epsilon must be > 0, got 0.0. Choose a positive privacy budget.
    """
    epsilon = _as_real(epsilon, "epsilon")
    if epsilon <= 0:
        raise InvalidParameterError(f"epsilon must be > 0, got {epsilon!r}. Choose a positive privacy budget.")
    return epsilon


def check_delta(delta, *, allow_zero: bool) -> float:
    """Validate δ: in [0, 1) when ``allow_zero`` else in (0, 1).

    Examples
    --------
    >>> check_delta(1e-6, allow_zero=False)
    1e-06
    """
    delta = _as_real(delta, "delta")
    low_ok = delta >= 0 if allow_zero else delta > 0
    if not (low_ok and delta < 1):
        interval = "[0, 1)" if allow_zero else "(0, 1)"
        raise InvalidParameterError(
            f"delta must lie in {interval}, got {delta!r}."
            + ("" if allow_zero else " A Gaussian mechanism needs delta > 0 (e.g. 1e-6).")
        )
    return delta


def check_positive(value, name: str) -> float:
    """Validate a finite, strictly positive real parameter (radius, scale, sensitivity, …).

    Examples
    --------
    >>> check_positive(2, "radius")
    2.0
    """
    value = _as_real(value, name)
    if value <= 0:
        raise InvalidParameterError(f"{name} must be > 0, got {value!r}.")
    return value


def check_positive_integer(value, name: str) -> int:
    """A positive integer parameter (a bool is refused) as an int, or ``InvalidParameterError``.

    Examples
    --------
    >>> check_positive_integer(3, "max_iter")
    3
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < 1:
        raise InvalidParameterError(f"{name} must be a positive integer, got {value!r}.")
    return int(value)


def check_sample_size(n) -> int:
    """Validate a public dataset size ``n`` (a positive integer).

    Examples
    --------
    >>> check_sample_size(10)
    10
    """
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise InvalidTypeError(f"n must be an integer, got {type(n).__name__}.")
    if n < 1:
        raise InvalidParameterError(f"n must be >= 1, got {n!r}.")
    return int(n)


def finite_real_or_nan(value) -> float:
    """One entry of an object array as a float: a finite real number (int of any size, float,
    numpy scalar, longdouble, Fraction, Decimal) as itself, anything else (bool, str, None,
    pd.NA, an overflowing or non-finite value, any other object) as NaN. Never raises or warns:
    one record's entry must not decide whether, or how, a release happens.

    Examples
    --------
    >>> from fractions import Fraction
    >>> [finite_real_or_nan(v) for v in (3, Fraction(1, 4), 2 ** 2000, "7", None)]
    [3.0, 0.25, nan, nan, nan]
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, decimal.Decimal)):
        return math.nan
    try:
        out = float(value)
    except (ArithmeticError, ValueError, TypeError):  # a huge int or Fraction, a signalling NaN
        return math.nan
    return out if math.isfinite(out) else math.nan


def as_real_array(X, name: str) -> np.ndarray:
    """Private records as a float64 array: the one coercion every estimator and the CLI share.

    An object array (a pandas object or nullable column, lists holding None, huge ints, …) is
    mapped entry by entry with :func:`finite_real_or_nan`, so a bad entry makes only its own
    record invalid; other real dtypes are cast with numpy's floating-point warnings silenced
    (a longdouble beyond float64 becomes inf: invalid too). A list or other non-array container
    whose entries numpy cannot hold as real numbers (one text, complex or nested entry) is read
    entry by entry the same way. Errors concern the whole container only (sparse input, records of
    different lengths, an array whose own dtype is complex or not numeric), and quote no value.

    Raises
    ------
    InvalidTypeError
        Sparse input, or a dtype that is neither real numeric nor boolean.
    InvalidDataError
        Ragged records, or complex numbers.

    Examples
    --------
    >>> as_real_array(np.array([[1, 2 ** 1100], [0.5, None]], dtype=object), "X").tolist()
    [[1.0, nan], [0.5, nan]]
    """
    if hasattr(X, "toarray") or hasattr(X, "tocsr"):
        raise InvalidTypeError(f"{name}: sparse input is not supported; pass a dense array.")
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            arr = np.asarray(X)
        except (TypeError, ValueError, ArithmeticError):  # a list with one odd entry (a nested list)
            arr = None
        if not isinstance(X, np.ndarray) and (arr is None or not _real_numeric(arr.dtype)):
            # numpy chose the container's dtype from the entries (one "x", 1j or [0.5] in a list makes
            # the whole list text, complex or ragged): take the entries one by one instead
            try:
                arr = np.asarray(X, dtype=object)
            except (TypeError, ValueError, ArithmeticError):  # a nested entry among scalars
                arr = _object_vector(X, name)
        if arr.dtype == object:
            arr = np.vectorize(finite_real_or_nan, otypes=[np.float64])(arr) if arr.size else arr.astype(np.float64)
        if np.iscomplexobj(arr):
            raise InvalidDataError(f"{name}: Complex data not supported; records must be real.")
        if not (np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.bool_)):
            raise InvalidTypeError(f"{name} must be a real numeric array, got dtype {arr.dtype}.")
        return arr.astype(np.float64)


def _object_vector(X, name: str) -> np.ndarray:
    """The top-level entries of a container as a 1-D object array (each record one entry: a
    record that is itself a sequence is then not a finite real, so it becomes NaN)."""
    try:
        entries = list(X)
    except TypeError:
        raise InvalidDataError(f"{name} could not be converted to an array of records.") from None
    out = np.empty(len(entries), dtype=object)
    for i, entry in enumerate(entries):
        out[i] = entry
    return out


def _real_numeric(dtype) -> bool:
    return (np.issubdtype(dtype, np.number) or np.issubdtype(dtype, np.bool_)) and not np.issubdtype(
        dtype, np.complexfloating
    )


def check_real_dtype(dtype, name: str) -> None:
    """Refuse a dtype that is not real numeric or boolean (``InvalidTypeError``), for in-memory
    and Dask arrays alike.

    Examples
    --------
    >>> check_real_dtype(np.dtype(bool), "X")  # booleans are accepted, as 0.0 and 1.0
    >>> check_real_dtype(np.dtype(complex), "X")
    Traceback (most recent call last):
    ...
    geodp.errors.InvalidTypeError: X must be real, got complex dtype complex128.
    """
    if np.dtype(dtype) == np.dtype(object) or not (np.issubdtype(dtype, np.number) or np.issubdtype(dtype, np.bool_)):
        raise InvalidTypeError(f"{name} must be numeric, got dtype {dtype}.")
    if np.issubdtype(dtype, np.complexfloating):
        raise InvalidTypeError(f"{name} must be real, got complex dtype {dtype}.")


def check_finite_array(X, name: str, *, min_ndim: int = 0) -> np.ndarray:
    """Convert ``X`` to a float64 array and refuse NaN/inf, non-numeric data and too few axes.

    Examples
    --------
    >>> check_finite_array([1, 2], "X").dtype
    dtype('float64')
    """
    try:
        arr = np.asarray(X)
    except Exception as exc:  # ragged lists and the like
        raise InvalidDataError(f"{name} could not be converted to an array: {exc}") from exc
    check_real_dtype(arr.dtype, name)
    arr = arr.astype(np.float64, copy=False)
    if arr.ndim < min_ndim:
        raise InvalidDataError(f"{name} must have at least {min_ndim} axes, got shape {arr.shape}.")
    if arr.size == 0:
        raise InvalidDataError(f"{name} is empty (shape {arr.shape}); provide at least one record.")
    if not np.all(np.isfinite(arr)):
        bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
        raise InvalidDataError(f"{name} holds {bad} NaN or infinite value(s); remove or impute them.")
    return arr
