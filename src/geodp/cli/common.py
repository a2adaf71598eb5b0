"""What every ``geodp`` subcommand shares: the one-line user error, argparse types that check a
value before any work is done, output checks and atomic writes."""

from __future__ import annotations

import argparse
import importlib
import math
import os
import stat
import tempfile
from pathlib import Path

from geodp.errors import missing_extra

__all__ = [
    "CommandError",
    "HelpFormatter",
    "OneLineErrorParser",
    "atomic_write",
    "check_new_file",
    "deadline_seconds",
    "integer_at_least",
    "positive_float",
    "prepare_output_dir",
    "probability",
    "require_geomstats",
]


class CommandError(Exception):
    """A problem the user can fix (missing extra, unusable output folder, unreadable input file):
    ``geodp`` prints it as one line, ``geodp: error: <message>``, and exits with code 2.

    Examples
    --------
    >>> str(CommandError("--output-dir 'x' is not a folder"))
    "--output-dir 'x' is not a folder"
    """


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Help text keeps the line breaks of the descriptions and epilogues."""


class OneLineErrorParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, without the usage block:
    ``geodp <cmd>: error: <message>; see geodp <cmd> --help`` on stderr, exit code 2.

    Subcommands added with ``add_subparsers().add_parser`` get this class too (argparse makes
    subparsers of the parent's class), so every ``geodp`` subcommand answers the same way.

    Examples
    --------
    >>> import contextlib, io
    >>> parser = OneLineErrorParser(prog="geodp demo")
    >>> _ = parser.add_argument("--repeats", type=int)
    >>> err = io.StringIO()
    >>> with contextlib.redirect_stderr(err):
    ...     try:
    ...         parser.parse_args(["--repeats", "x"])
    ...     except SystemExit as stop:
    ...         print(stop.code)
    2
    >>> print(err.getvalue(), end="")
    geodp demo: error: argument --repeats: invalid int value: 'x'; see geodp demo --help
    """

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}; see {self.prog} --help\n")


def integer_at_least(minimum: int, why: str = ""):
    """An argparse type: an integer >= ``minimum``; ``why`` explains the minimum.

    Examples
    --------
    >>> integer_at_least(2)("3")
    3
    >>> integer_at_least(2, " (a standard error needs two)")("1")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be an integer >= 2 (a standard error needs two), got '1'
    """

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be an integer >= {minimum}{why}, got {text!r}")
        return value

    return parse


def positive_float(text: str) -> float:
    """An argparse type: a finite number > 0.

    Examples
    --------
    >>> positive_float("0.5")
    0.5
    >>> positive_float("inf")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a finite number > 0, got 'inf'
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}")
    return value


def deadline_seconds(text: str) -> float:
    """An argparse type: the deadline of ``--timing-safe SECONDS``, a finite number of seconds > 0
    (the Python API's ``timing_safe=2.5``; the bare flag is ``timing_safe=True``, a calibrated one).

    Examples
    --------
    >>> deadline_seconds("2.5")
    2.5
    >>> deadline_seconds("covs.npy")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a deadline in seconds (a number > 0), got 'covs.npy'; without a number, ...
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a deadline in seconds (a number > 0), got {text!r}; without a number, put the bare "
            "--timing-safe after INPUT (a calibrated deadline)"
        ) from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"the deadline must be a finite number of seconds > 0, got {text!r}")
    return value


def probability(text: str) -> float:
    """An argparse type: a number in [0, 1) (a δ).

    Examples
    --------
    >>> probability("1e-6")
    1e-06
    >>> probability("1")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a number in [0, 1), got '1'
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1), got {text!r}") from None
    if not 0.0 <= value < 1.0:  # also refuses NaN
        raise argparse.ArgumentTypeError(f"must be a number in [0, 1), got {text!r}")
    return value


def _check_writable(folder: Path, what: str, hint: str) -> None:
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as err:
        raise CommandError(f"{what} is not writable ({err.strerror or err}); {hint}") from None


def prepare_output_dir(path) -> Path:
    """Create ``path`` (and parents) now and check that a file can be written in it.

    Raises
    ------
    CommandError
        ``path`` is a file, cannot be created or is not writable.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     prepare_output_dir(pathlib.Path(tmp) / "plots").is_dir()
    True
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise CommandError(f"--output-dir {str(path)!r} exists and is not a folder; choose another --output-dir")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise CommandError(
            f"--output-dir {str(path)!r} cannot be created ({err.strerror or err}); choose another --output-dir"
        ) from None
    _check_writable(path, f"--output-dir {str(path)!r}", "choose another --output-dir")
    return path


def check_new_file(path, option: str, *, suffix: str, overwrite: bool) -> Path:
    """Check, before any work, that ``path`` can become a new output file.

    Its name must end with ``suffix``, its folder must exist and be writable, and it must not
    exist yet unless ``overwrite``.

    Raises
    ------
    CommandError
        One of the conditions fails; the message names ``option``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     check_new_file(pathlib.Path(tmp) / "mean.npy", "--output", suffix=".npy", overwrite=False).name
    'mean.npy'
    >>> check_new_file("mean.txt", "--output", suffix=".npy", overwrite=False)
    Traceback (most recent call last):
    ...
    geodp.cli.common.CommandError: --output 'mean.txt' must end with .npy
    """
    path = Path(path)
    if path.suffix.lower() != suffix:
        raise CommandError(f"{option} {str(path)!r} must end with {suffix}")
    if path.is_dir():
        raise CommandError(f"{option} {str(path)!r} is a folder; give a file name ending with {suffix}")
    if path.exists() and not overwrite:
        raise CommandError(f"{option} {str(path)!r} exists; choose another name or pass --overwrite")
    folder = path.parent
    if not folder.is_dir():
        raise CommandError(f"{option} {str(path)!r}: the folder {str(folder)!r} does not exist; create it first")
    _check_writable(folder, f"{option} {str(path)!r}: the folder {str(folder)!r}", "choose another folder")
    return path


def _file_mode(path: Path) -> int:
    """The permissions ``path`` has, or those a new file gets (0o666 less the umask)."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def atomic_write(path, write) -> None:
    """Write a file all at once: ``write(file)`` fills a temporary file in the target folder,
    which then replaces ``path`` (``os.replace``); on any error the temporary file is removed
    and ``path`` is untouched. Readers never see a partial file. The file keeps the permissions
    of the one it replaces (a new one gets the usual 0o666 less the umask).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     target = pathlib.Path(tmp) / "note.txt"
    ...     atomic_write(target, lambda f: f.write(b"done"))
    ...     target.read_bytes()
    b'done'
    """
    path = Path(path)
    mode = _file_mode(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            os.chmod(tmp, mode)  # mkstemp made it private (0o600)
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def require_geomstats(what: str) -> None:
    """Raise :class:`CommandError` with an install hint unless geomstats' data sets import.

    Examples
    --------
    >>> require_geomstats("the shapes command")  # geomstats is installed with the test extra
    """
    try:
        importlib.import_module("geomstats.datasets.utils")
    except ImportError:
        raise CommandError(f"{what} needs the optional dependency geomstats: " + missing_extra("geomstats")) from None
    except Exception as err:  # an installed geomstats that does not import (e.g. numpy >= 2.4)
        raise CommandError(
            f"geomstats is installed but does not import ({type(err).__name__}: {err}); the [geomstats] "
            f"extra pins geomstats==2.8.0 with numpy<2.4: {missing_extra('geomstats')}"
        ) from None
