"""Reading records and public points from files, for the ``geodp`` commands.

Formats, told apart by the file name's ending (any case):

- ``.npy``: one array.
- ``.npz``: one array, or the one named by ``key``.
- ``.csv``, ``.txt``: one record per line, its values flattened row by row (C order), separated
  by commas (or, on a line without a comma, by spaces or tabs). ``nan`` and ``inf`` are read as
  numbers. Records are read by a strict, public grammar (:func:`read_records`), so that no single
  record decides how many records the file holds: lines end at ``\\n`` only (a trailing ``\\r`` is
  stripped, so CRLF files work; a ``\\r`` elsewhere stays inside its line); **every line is a
  record**, blank, whitespace-only and ``#`` lines included (there are no comment lines), except
  the empty string after the file's final ``\\n``; and the first line is a header, skipped
  whatever it holds, only if the caller says so (``header=True``, ``--header``): a header is never
  guessed. A line that cannot be a record (a field that is not a number or is empty, the wrong
  number of values, blank, ``#``, a ``\\r`` inside, not UTF-8) becomes a record of NaN, so that
  it makes only its own record invalid (:func:`invalid_records_detail` names it and says why,
  for the curator only). A public
  point's file (:func:`read_point`) is read leniently: lines also end at ``\\r``, blank and ``#``
  lines are skipped, and a first line of distinct column names is taken as a header.
- ``.mat``: a MATLAB file (``scipy.io.loadmat``, MATLAB formats up to v7; v7.3 is HDF5 and is not
  read): its one variable, or the one named by ``key``.

Records go along the first axis: an array of shape ``(n, *point_shape)``, or ``(n, size)`` with
each record flattened row by row (``size`` = the number of values of a point).

The refusal of records that are not points of the space (:func:`check_records`) is one fixed
text that neither counts nor locates them, since a command's messages can be seen by others
(SECURITY.md); which record is bad, on which line, why, and how many are, is curator-only
(:func:`invalid_records_detail`; ``geodp release`` writes it to its ``--diagnostics`` file). The
errors about the file as a whole (its format, shape and type) name the file only.
"""

from __future__ import annotations

import math
import re
import zipfile
from pathlib import Path

import numpy as np

from geodp.cli.common import CommandError
from geodp.cli.specs import NAMED_POINTS, named_point, space_spec
from geodp.dask_support import npy_header
from geodp.errors import GeodpError, InvalidDataError
from geodp.manifolds import SPD, Hyperbolic, KendallShape, Manifold, Sphere
from geodp.validation import as_real_array

__all__ = ["FORMATS", "check_records", "invalid_records_detail", "read_point", "read_records"]

FORMATS = (".npy", ".npz", ".csv", ".txt", ".mat")


def _number(field: str) -> float | None:
    try:
        return float(field)
    except ValueError:
        return None


# Spreadsheets' error values: a line starting with one is a record, not a "#" comment.
_SPREADSHEET_ERRORS = frozenset(
    {
        "#n/a",
        "#na",
        "#value!",
        "#div/0!",
        "#ref!",
        "#name?",
        "#num!",
        "#null!",
        "#spill!",
        "#calc!",
        "#field!",
        "#getting_data",
        "#blocked!",
        "#connect!",
        "#busy!",
        "#unknown!",
    }
)
# Fields that stand for a missing value, never for a column name (compared in lower case).
_MISSING = (
    frozenset({"na", "n/a", "n.a.", "<na>", "nan", "null", "none", "nil", "missing", "nat"}) | _SPREADSHEET_ERRORS
)


def _is_header(fields: list[str]) -> bool:
    """Whether the first line of a public point's file is a header: every field a distinct column
    name (not a number, not a missing-value marker, holding a letter), e.g. ``x1,x2,x3``. Only for
    :func:`read_point`: the records' header is a public choice (``--header``), never guessed.

    >>> _is_header(["x1", "x2", "x3"]), _is_header(["NA", "NA", "NA"]), _is_header(["a", "", "c"])
    (True, False, False)
    >>> _is_header(["x", "x"]), _is_header(["x1", "2", "x3"]), _is_header(["?", "-", "."])
    (False, False, False)
    """
    names = [f for f in fields if _number(f) is None and f.lower() not in _MISSING and any(c.isalpha() for c in f)]
    return len(names) == len(fields) and len(set(names)) == len(names)


class _TextLines(list):
    """The line of each record read from a text table (a list of int), with the rows that could
    not be read as records: ``problems`` maps a record's index to what is wrong with its row (it
    was read as NaN), ``widths`` the index of a row of the wrong length to its number of values."""

    def __init__(self, lines, problems, widths):
        super().__init__(lines)
        self.problems = problems
        self.widths = widths


def _record_lines(text: str, header: bool):
    """The ``(line number, line)`` of each record of a record file's text: the strict, public
    grammar of :func:`read_records`. Lines end at ``\\n`` only, and a trailing ``\\r`` is
    stripped (CRLF files); every line is a record, blank and ``#`` lines included, except the empty
    string after the final ``\\n``; the first line is skipped only when ``header`` (a public choice).

    >>> _record_lines("1,2\\r\\n\\n# c\\n3\\r4\\n", header=False)
    [(1, '1,2'), (2, ''), (3, '# c'), (4, '3\\r4')]
    >>> _record_lines("x,y\\n1,2", header=True), _record_lines("", header=False)
    ([(2, '1,2')], [])
    """
    lines = text.split("\n") if text else []
    if lines and lines[-1] == "":  # the file's terminating newline
        lines.pop()
    numbered = [(lineno, line[:-1] if line.endswith("\r") else line) for lineno, line in enumerate(lines, start=1)]
    return numbered[1:] if header else numbered


def _read_text(path: Path, label: str, width: int | None = None, space_text: str = "", header: bool = False):
    """A text table as ``(array of shape (n, m), line number of each row)``.

    Without ``width`` (a public point's file), a file that is not UTF-8, or a row with a field
    that is not a number or with another length than the first, is refused; lines end at ``\\n``,
    ``\\r\\n`` or ``\\r``, blank and ``#`` lines are skipped and a first line of column names is a
    header (the point is public: this leniency decides nothing about private data).

    With ``width`` (records), the grammar is strict and public (:func:`_record_lines`): every line
    is a record, and a line that cannot be one (a field that is not a number, the wrong number of
    values, blank, a ``#`` line, a ``\\r`` inside it, not UTF-8) becomes a row of NaN (an invalid
    record; the reasons are kept in the returned lines, a :class:`_TextLines`), so that no single
    record decides whether the file is read or how many records it holds. The first line is a
    header, and skipped whatever it holds, only if ``header``; never guessed.
    """
    try:
        text = path.read_bytes().decode("utf-8-sig", errors="strict" if width is None else "surrogateescape")
    except UnicodeDecodeError:
        raise CommandError(f"{label}: cannot read it as a text table (it is not UTF-8 text)") from None
    if width is None:
        numbered, first = [], True
        for lineno, line in enumerate(re.split(r"\r\n|\r|\n", text), start=1):
            line = line.strip()
            fields = [f.strip() for f in line.split(",")] if "," in line else line.split()
            if not line or (line.startswith("#") and fields[0].lower() not in _SPREADSHEET_ERRORS):
                continue
            if first:
                first = False
                if _is_header(fields):
                    continue
            numbered.append((lineno, line))
    else:
        numbered = _record_lines(text, header)
    rows, lines, problems, widths = [], [], {}, {}
    for lineno, raw in numbered:
        line = raw.strip()
        fields = [f.strip() for f in line.split(",")] if "," in line else line.split()
        record = f"record {len(rows)} (line {lineno})"
        values = [_number(f) for f in fields]
        bad = next((j for j, v in enumerate(values) if v is None), None)
        expected = width if width is not None else len(rows[0]) if rows else len(values)
        if any("\udc80" <= c <= "\udcff" for c in line):  # bytes that are not UTF-8 (surrogateescape)
            problem = " is not UTF-8 text"
        elif "\r" in raw:
            problem = " holds a carriage return (\\r) inside it (lines end at \\n)"
        elif not line:
            problem = " is blank (in a record file every line is a record)"
        elif (
            line.startswith("#")
            and fields[0].lower() not in _SPREADSHEET_ERRORS
            and width is not None
            and (bad is not None or len(values) != expected)
        ):
            problem = " starts with '#' (a record file has no comment lines: every line is a record)"
        elif bad is not None:
            problem = f": field {bad + 1} is {'empty' if fields[bad] == '' else 'not a number'}"
        elif len(values) != expected:
            problem = f" has {len(values)} values, but " + (
                space_text if width is not None else f"record 0 has {expected}"
            )
            widths[len(rows)] = len(values)
        else:
            problem = None
        if problem is not None:
            if width is None:
                raise InvalidDataError(f"{label}: {record}{problem}")
            if lineno == 1 and len(rows) not in widths:  # not for a row of numbers of the wrong length
                problem += " (a header line? pass --header)"
            problems[len(rows)] = problem
            values = [math.nan] * width
        rows.append(values)
        lines.append(lineno)
    arr = np.array(rows, dtype=np.float64) if rows else np.empty((0, 0))
    return arr, (_TextLines(lines, problems, widths) if width is not None else lines)


def _one_array(arrays: dict, key, label: str, what: str) -> np.ndarray:
    if not arrays:
        raise InvalidDataError(f"{label}: holds no records (no {what} at all)")
    names = ", ".join(sorted(arrays))
    if key is not None:
        if key not in arrays:
            raise CommandError(f"{label}: no {what} named {key!r} (--key); its {what}s: {names}")
        return arrays[key]
    if len(arrays) != 1:
        raise CommandError(f"{label} holds {len(arrays)} {what}s ({names}): name one with --key NAME")
    return next(iter(arrays.values()))


def _read_array(path, key=None, width=None, space_text="", header=False):
    """The array in a file, and the line number of each row for text files (else None); ``width``,
    ``space_text`` and ``header``: see :func:`_read_text`."""
    path = Path(path)
    label = str(path)
    suffix = path.suffix.lower()
    if path.is_dir():
        raise CommandError(f"{label}: is a folder, not a file")
    if suffix not in FORMATS:
        raise CommandError(
            f"{label}: unsupported format {path.suffix or '(no ending)'!r}; use one of {', '.join(FORMATS)}"
        )
    if key is not None and suffix not in (".npz", ".mat"):
        raise CommandError(f"{label}: --key names an array in a .npz or .mat file; this is a {suffix} file")
    if header and suffix not in (".csv", ".txt"):
        raise CommandError(f"{label}: --header is for a .csv or .txt file; this is a {suffix} file")
    if not path.is_file():
        raise CommandError(f"{label}: no such file")
    try:
        if suffix in (".csv", ".txt"):
            return _read_text(path, label, width, space_text, header)
        if suffix == ".npy":
            npy_header(path)  # a typed, accurate refusal of a file that is not a numeric .npy array
            return np.load(path, allow_pickle=False), None
        if suffix == ".npz":
            with np.load(path, allow_pickle=False) as archive:
                arrays = {name: archive[name] for name in archive.files}
            return _one_array(arrays, key, label, "array"), None
        from scipy.io import loadmat
        from scipy.io.matlab import MatReadError

        try:
            variables = loadmat(path)
        except NotImplementedError:  # scipy's answer to v7.3 (HDF5) files
            raise CommandError(
                f"{label}: MATLAB v7.3 (HDF5) files cannot be read; in MATLAB, save it with save(FILE, NAME, '-v7')"
            ) from None
        except MatReadError as err:
            raise CommandError(f"{label}: cannot read it as a .mat file ({err})") from None
        arrays = {name: value for name, value in variables.items() if not name.startswith("__")}
        return _one_array(arrays, key, label, "variable"), None
    except InvalidDataError:  # a text table's own message (a ValueError)
        raise
    except OSError as err:
        raise CommandError(f"{label}: cannot read it ({err.strerror or err})") from None
    except (ValueError, EOFError, zipfile.BadZipFile) as err:
        raise CommandError(f"{label}: cannot read it as a {suffix} file ({err})") from None


def _numeric(arr, label: str) -> np.ndarray:
    arr = np.asarray(arr)
    if np.iscomplexobj(arr):
        raise InvalidDataError(f"{label}: holds complex numbers; records must be real")
    if not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating) or arr.dtype == object):
        raise InvalidDataError(f"{label}: holds {arr.dtype} values, not numbers")
    return as_real_array(arr, label)  # the estimators' coercion: a bad entry invalidates its record only


def _point_size(space: Manifold) -> int:
    return math.prod(space.point_shape)


def _shape_text(space: Manifold) -> str:
    size = _point_size(space)
    flat = "" if len(space.point_shape) == 1 else f", or rows of {size} values (row by row)"
    return f"a point of {space_spec(space)} has shape {space.point_shape}{flat}"


def _why_invalid(space: Manifold, record: np.ndarray) -> str:
    """What is wrong with one record that is not a point of ``space``."""
    if not np.all(np.isfinite(record)):
        return "holds NaN or inf"
    if isinstance(space, SPD):
        if bool(space.beyond_range(record)):
            return (
                "has entries beyond float64's working range (largest absolute entry outside "
                "[1e-150, 1e150]): rescale the data by a public constant"
            )
        if bool(space.belongs((record + record.T) / 2)):
            return "is not symmetric"
        with np.errstate(all="ignore"):
            w = np.linalg.eigvalsh((record + record.T) / 2)
        if w[-1] > 0 and w[0] > -space.k * np.finfo(float).eps * w[-1]:
            return (
                "is singular (its smallest eigenvalue is below the rounding level k·eps·max λ, so float64 "
                "does not determine it): regularise the records first, with a public shrinkage or ridge "
                "(space.regularise(X, ridge=...) in Python)"
            )
        return "is not positive definite"
    if isinstance(space, Sphere):
        norm = "1" if space.curvature == 1.0 else f"1/sqrt(K) = {space.radius!r}"
        return (
            f"does not have Euclidean norm {norm} (up to a relative record_rtol = {space.record_rtol:g}, "
            "within which records are normalised: write them with more decimals or normalise each record)"
        )
    if isinstance(space, Hyperbolic):
        return (
            "is not on the upper sheet of the hyperboloid (-x0² + |x_rest|² = -1/|K|, x0 > 0, up to a "
            f"relative record_rtol = {space.record_rtol:g})"
        )
    if isinstance(space, KendallShape):
        return "has all its landmarks equal, so it has no shape"
    return f"is not a point of {space!r}"


def invalid_records_detail(X, space: Manifold, label: str, lines=None) -> str | None:
    """What is wrong with the records that are not points of ``space`` — the first one (and its
    line), why, and how many there are — or None if every record is a point. **Curator-only**: it
    locates and counts private records, so it must never reach anyone else (:func:`check_records`
    refuses the records with a fixed text instead).

    Parameters
    ----------
    X : numpy.ndarray, shape (n, *space.point_shape)
    space : Manifold
    label : str
        The file the records come from.
    lines : list of int, optional
        The line of each record in a text file, as :func:`read_records` returns it (with the rows
        it could not read as records: the detail says why, e.g. a field that is not a number).

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import SPD
    >>> X = np.stack([np.eye(2), [[1.0, 2.0], [2.0, 1.0]]])
    >>> invalid_records_detail(X, SPD(2), "covs.npy")
    'covs.npy: record 1 is not positive definite (1 of the 2 records is not a point of spd:2)'
    >>> invalid_records_detail(X[:1], SPD(2), "covs.npy") is None
    True
    """
    invalid = space.invalid_records(X)
    if not np.any(invalid):
        return None
    problems, widths = getattr(lines, "problems", {}), getattr(lines, "widths", {})
    if len(widths) == len(X) and len(set(widths.values())) == 1:  # every row: a table for another space
        got = (
            f"record 0 (line {lines[0]}) has {widths[0]} values"
            if len(X) == 1
            else f"all {len(X)} records have {widths[0]} values"
        )
        return f"{label}: wrong shape: {_shape_text(space)}, but {got}"
    first = int(np.flatnonzero(invalid)[0])
    where = f"record {first}" + (f" (line {lines[first]})" if lines else "")
    why = problems.get(first) or f" {_why_invalid(space, X[first])}"
    count = int(np.count_nonzero(invalid))
    are = "is not a point" if count == 1 else "are not points"
    return f"{label}: {where}{why} ({count} of the {len(X)} records {are} of {space_spec(space)})"


def check_records(X, space: Manifold, label: str, lines=None, hint: str = "", *, curator=None) -> None:
    """Refuse records that are not points of ``space`` with one fixed text, which neither counts
    nor locates them (the refusal can be seen by others: SECURITY.md); the detail
    (:func:`invalid_records_detail`) goes to ``curator`` only.

    Parameters
    ----------
    X : numpy.ndarray, shape (n, *space.point_shape)
    space : Manifold
    label : str
        The file the records come from (for the message).
    lines : list of int, optional
        As :func:`read_records` returns them.
    hint : str
        Appended to the message (what the user can do about it).
    curator : callable, optional
        Called with the curator-only detail before the refusal (``geodp release`` writes it to
        its ``--diagnostics`` file); the message then says it was written there, else how to get it.

    Raises
    ------
    InvalidDataError
        Some record holds NaN or inf, is off the manifold, or is a line that cannot be a record.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import SPD
    >>> X = np.stack([np.eye(2), [[1.0, 2.0], [2.0, 1.0]]])
    >>> check_records(X, SPD(2), "covs.npy")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    geodp.errors.InvalidDataError: covs.npy: holds records that are not points of spd:2 (a point of spd:2 has ...
    >>> details = []
    >>> check_records(X, SPD(2), "covs.npy", curator=details.append)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    geodp.errors.InvalidDataError: covs.npy: ... written to the --diagnostics file
    >>> details
    ['covs.npy: record 1 is not positive definite (1 of the 2 records is not a point of spd:2)']
    """
    detail = invalid_records_detail(X, space, label, lines)
    if detail is None:
        return
    if curator is None:
        said = "pass --diagnostics CURATOR.json to have them written there"
    else:
        curator(detail)
        said = "written to the --diagnostics file"
    raise InvalidDataError(
        f"{label}: holds records that are not points of {space_spec(space)} ({_shape_text(space)}). Which "
        f"records, why and how many are curator-only, since this message may be seen by others: {said}{hint}"
    )


def read_records(path, space: Manifold, *, key=None, header: bool = False):
    """The records of a file as an array of shape ``(n, *space.point_shape)``.

    The file's format follows from its name (see this module's docstring). The records are not
    checked for membership here: :func:`check_records` does that.

    Parameters
    ----------
    path : str or Path
    space : Manifold
    key : str, optional
        The array of a ``.npz`` file or the variable of a ``.mat`` file that holds the records;
        needed when the file holds several.
    header : bool
        A text table's first line is a header, and skipped whatever it holds (``--header``). It
        is a public choice, never guessed from the first line; only for ``.csv`` and ``.txt``.

    A text table is read by a public grammar in which every line is a record (see this module's
    docstring): lines end at ``\\n`` (a trailing ``\\r`` is stripped), and blank, whitespace-only
    and ``#`` lines are records too, only the empty string after the final ``\\n`` is not. A line
    that cannot be a record (a field that is not a number or is empty, too few or too many values,
    blank, ``#``, a ``\\r`` inside it) is read as a record of NaN, an invalid record like any
    other: it makes only its own record invalid, never the whole file, so that with
    ``--on-invalid center`` no single record decides whether a release happens (or its n).
    :func:`check_records` names it.

    Returns
    -------
    X : numpy.ndarray of float64, shape (n, *space.point_shape)
    lines : list of int or None
        The line of each record in a text file (with the rows read as NaN and why, for
        :func:`check_records`); None for other formats.

    Raises
    ------
    CommandError
        The file cannot be read (missing, unsupported format, corrupt, no such ``key``, ``header``
        for a file that is not a text table).
    InvalidDataError
        It holds no records, or an array of non-numbers or of the wrong shape.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from geodp.manifolds import SPD
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "covs.csv"
    ...     _ = path.write_text("a,b,c,d\\n2,0,0,2\\n\\n1,0.5,0.5,1\\n")
    ...     X, lines = read_records(path, SPD(2), header=True)
    >>> X.shape, lines, np.isnan(X).any(axis=(1, 2)).tolist()  # the blank line is an invalid record
    ((3, 2, 2), [2, 3, 4], [False, True, False])
    """
    label = str(path)
    arr, lines = _read_array(path, key, width=_point_size(space), space_text=_shape_text(space), header=header)
    arr = _numeric(arr, label)
    if arr.ndim == 0:
        raise InvalidDataError(f"{label}: holds a single number, not records; {_shape_text(space)}")
    if arr.shape[0] == 0 or arr.size == 0:
        raise InvalidDataError(f"{label}: holds no records (an array of shape {arr.shape})")
    n, rest = arr.shape[0], arr.shape[1:]
    flat = len(rest) <= 1 and math.prod(rest) == _point_size(space)
    if rest != space.point_shape and not flat:
        got = (
            f"record 0 (line {lines[0]}) has {arr.shape[1]} values"
            if lines
            else f"it holds an array of shape {arr.shape} (records go along the first axis)"
        )
        hint = space._shape_hint(arr.shape)  # e.g. Poincaré-ball points for a hyperboloid
        raise InvalidDataError(f"{label}: wrong shape: {_shape_text(space)}, but {got}{'.' + hint if hint else ''}")
    return arr.reshape((n, *space.point_shape)), lines


def read_point(value: str, space: Manifold, option: str = "--center") -> np.ndarray:
    """A public point given by name (``identity``, ``north``, ``origin``) or as a file holding one point.

    A file holds an array of shape ``space.point_shape``, a flat one with the same number of
    values, or one record (one line of a text file). A Kendall configuration becomes its preshape.
    A name takes precedence over a file of that name (write ``./north`` for the file).

    Raises
    ------
    InvalidParameterError
        The name does not exist in the space.
    CommandError, InvalidDataError, NotOnManifoldError
        The file cannot be read, does not hold one point, or the point is not in the space.

    Examples
    --------
    >>> from geodp.manifolds import Hyperbolic
    >>> read_point("origin", Hyperbolic(2)).tolist()
    [1.0, 0.0, 0.0]
    """
    if value in NAMED_POINTS:
        point = named_point(space, value)
    else:
        path = Path(value)
        if not path.exists():
            raise CommandError(
                f"{option} {value!r} is neither a named point ({', '.join(NAMED_POINTS)}) nor an existing file"
            )
        arr, _ = _read_array(path)
        arr = _numeric(arr, f"{option} {value}")
        if arr.shape not in (
            space.point_shape,
            (_point_size(space),),
            (1, *space.point_shape),
            (1, _point_size(space)),
        ):
            raise InvalidDataError(
                f"{option} {value}: holds an array of shape {arr.shape}, not one point; {_shape_text(space)}"
            )
        point = arr.reshape(space.point_shape)
    try:
        return space.check_points(point, option, batch_ndim=0)
    except GeodpError as err:
        raise type(err)(f"{option} {value}: {err}") from None
