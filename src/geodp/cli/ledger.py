"""A privacy budget kept in a JSON file, shared by successive ``geodp`` commands.

A ledger starts as ``{"epsilon": E, "delta": D}`` (``delta`` may be left out: 0) written by the
data curator; each release adds its spend to the list ``"spends"``, and a release that would
overspend is refused before anything is released. The optional key ``"composition"``
(``"sequential"``, the default, ``"rdp"`` or ``"pld"``) says how the spends compose, as in
:class:`geodp.accountant.BudgetAccountant`: sequentially the ε's and the δ's add; by RDP or PLD
their events compose at the ledger's δ. Each spend records the release's event: its ``epsilon``,
``delta``, ``gdp_mu`` (μ of a μ-GDP release, else null) and ``zcdp_rho`` (ρ of a ρ-zCDP release:
secure mode's discrete Gaussian, else null); a spend without them, as written before they
existed, is an (ε, δ) release. :func:`geodp.composition.dp_event` rebuilds the event from them.

Concurrent commands cannot overspend: a command holds an exclusive lock (``fcntl.flock`` on the
sidecar file ``LEDGER.lock``, e.g. ``budget.json.lock``, next to the file the ledger's name
resolves to) from before it reads the ledger until its release is written, and removes the sidecar
before it lets the lock go, whether it released or was refused; a lock file removed
meanwhile is noticed (the lock is taken again on the file that has the name). Each spend reads the
ledger again and checks it, holding a lock on the ledger file itself, and rewrites it atomically (a
temporary file, then ``os.replace``), so no spend is ever lost even if the sidecar was removed. A
symbolic link to a ledger is followed (the ledger is the file it names, and the link stays); a
ledger with several names (hard links) is refused, since a rewrite through one name would split it
into two budgets. Platforms without ``fcntl`` (Windows) are refused.
"""

from __future__ import annotations

import json
import math
import os
import stat
import sys
from contextlib import contextmanager, suppress
from datetime import datetime, timezone
from pathlib import Path

from geodp.accountant import BudgetAccountant, Charge
from geodp.cli.common import CommandError, atomic_write
from geodp.composition import COMPOSITIONS, EpsilonDeltaDpEvent, guarantee_fields
from geodp.errors import BudgetExceededError, InvalidParameterError

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None

__all__ = ["LedgerAccountant", "open_ledger"]

_FORM = '{"epsilon": E, "delta": D, "spends": [...]}'
_NO_FCNTL = (
    "--budget-file needs file locking (fcntl), which this platform lacks: run releases against a ledger "
    "on Linux or macOS, or without --budget-file"
)


def _refuse(path: Path, problem: str) -> CommandError:
    return CommandError(f"--budget-file {str(path)!r} is not a budget ledger ({problem}); a ledger is {_FORM}")


_LARGEST = 1e300


def _number(value) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        # Far beyond any meaningful budget, and small enough that sums of spends cannot overflow.
        return math.isfinite(value) and abs(value) <= _LARGEST
    except OverflowError:  # an integer beyond float's range
        return False


def _no_constant(name: str):
    raise ValueError(f"{name} is not a number JSON allows")


class _DuplicateKey(ValueError):
    pass


def _no_duplicates(pairs: list) -> dict:
    data = {}
    for key, value in pairs:
        if key in data:
            raise _DuplicateKey(key)
        data[key] = value
    return data


def _parse(text: str, path: Path) -> dict:
    """The ledger's content, checked (``path``, as the user gave it, names it in messages)."""
    try:
        data = json.loads(text, parse_constant=_no_constant, object_pairs_hook=_no_duplicates)
    except _DuplicateKey as err:
        raise _refuse(
            path, f"the key {_show(err.args[0])} appears twice in one object, so which one counts is ambiguous"
        ) from None
    except ValueError as err:
        raise _refuse(path, f"not JSON: {err}") from None
    if not isinstance(data, dict):
        raise _refuse(path, f"a JSON {type(data).__name__}, not an object")
    epsilon, delta = data.get("epsilon"), data.get("delta", 0.0)
    if not (_number(epsilon) and epsilon > 0):
        raise _refuse(path, f'"epsilon" must be a number > 0, got {_show(epsilon)} (and at most 1e300)')
    if not (_number(delta) and 0 <= delta < 1):
        raise _refuse(path, f'"delta" must be a number in [0, 1), got {_show(delta)}')
    composition = data.get("composition", "sequential")
    if composition not in COMPOSITIONS:
        raise _refuse(
            path, f'"composition" must be one of {", ".join(map(repr, COMPOSITIONS))}, got {_show(composition)}'
        )
    spends = data.get("spends", [])
    if not isinstance(spends, list):
        raise _refuse(path, '"spends" must be a list')
    for i, spend in enumerate(spends):
        if not (isinstance(spend, dict) and all(_number(spend.get(k)) and spend[k] >= 0 for k in ("epsilon", "delta"))):
            raise _refuse(path, f'spend {i} must be an object with numbers "epsilon" and "delta" in [0, 1e300]')
        for key in ("gdp_mu", "zcdp_rho"):
            value = spend.get(key)
            if value is not None and not (_number(value) and value > 0):
                raise _refuse(path, f'spend {i}: "{key}" must be null or a number > 0, got {_show(value)}')
    return data | {"epsilon": float(epsilon), "delta": float(delta), "composition": composition, "spends": spends}


def _show(value) -> str:
    """``repr`` of a ledger value for a message, short."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}...{text[-10:]} ({len(text)} characters)"


def _resolve(path: Path) -> Path:
    """The file a ledger name stands for: symbolic links followed, so that every name of a ledger
    locks and rewrites the same file (and a link is never replaced by a copy)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError) as err:  # a loop of links
        raise CommandError(
            f"--budget-file {str(path)!r} cannot be resolved ({getattr(err, 'strerror', None) or err})"
        ) from None


def _names(path: Path, fd: int) -> bool:
    """Does ``path`` name the file open as ``fd`` (same device and inode)?"""
    try:
        named = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)


def _lock(path: Path, flags: int, waiting: str = "") -> int:
    """Open ``path`` with ``flags``, lock it exclusively (``flock``) and return the descriptor, once
    the lock is held on the file ``path`` names *now*: a file removed or replaced while this
    waited (its lock is worth nothing) is let go and the one that has the name is locked instead.
    ``waiting`` is said on stderr (once) if the lock is taken. OSError if ``path`` cannot be opened."""
    if fcntl is None:
        raise CommandError(_NO_FCNTL)
    said = False
    while True:
        fd = os.open(path, flags, 0o666)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if waiting and not said:
                    print(waiting, file=sys.stderr)
                    said = True
                fcntl.flock(fd, fcntl.LOCK_EX)
            if _names(path, fd):
                return fd
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)


@contextmanager
def _locked_content(real: Path, path: Path):
    """Lock the ledger file ``real`` itself and yield its checked content; the lock is held until
    the ``with`` block ends (a rewrite inside it replaces the file, and a command waiting for the
    old one then reads the new one)."""
    try:
        fd = _lock(real, os.O_RDONLY)
    except FileNotFoundError:
        raise CommandError(
            f'--budget-file {str(path)!r} does not exist; start a budget by writing {{"epsilon": E, "delta": D}} to it'
        ) from None
    except OSError as err:
        raise CommandError(f"--budget-file {str(path)!r} cannot be read ({err.strerror or err})") from None
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            what = "a directory" if stat.S_ISDIR(status.st_mode) else "not a regular file"
            raise CommandError(
                f'--budget-file {str(path)!r} is {what}; a ledger is a JSON file, e.g. {{"epsilon": E, "delta": D}}'
            )
        links = status.st_nlink
        if links > 1:
            raise CommandError(
                f"--budget-file {str(path)!r} has {links} names (hard links); a ledger must have one, "
                "or a release through one name would split it into two budgets: remove the other links"
            )
        try:
            with open(fd, "rb", closefd=False) as f:
                text = f.read().decode("utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise CommandError(
                f"--budget-file {str(path)!r} cannot be read ({getattr(err, 'strerror', None) or err})"
            ) from None
        yield _parse(text, path)
    finally:
        os.close(fd)


class LedgerAccountant(BudgetAccountant):
    """A :class:`~geodp.accountant.BudgetAccountant` over a ledger file: each spend is written to
    the file (atomically) before it counts, with the facts in ``entry`` and the UTC time.

    Each spend reads the ledger again, under a lock on the ledger file, checks it and the spend
    against it, and rewrites it before the lock is let go: a spend written meanwhile by another
    command is counted, never overwritten. A symbolic link is followed (the file it names is
    rewritten, the link stays); a ledger with several hard links is refused.

    Use it through :func:`open_ledger`, which holds the ledger's lock for the whole release.

    Parameters
    ----------
    path : Path
        The ledger file.
    data : dict
        Its checked content when the release began (the spends so far, for :meth:`check`).
    entry : dict
        What each spend records besides ε, δ and the time (e.g. the output file).

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "budget.json"
    ...     _ = path.write_text('{"epsilon": 1.0}')
    ...     acc = LedgerAccountant(path, {"epsilon": 1.0, "delta": 0.0, "spends": []}, {"output": "a.npy"})
    ...     acc.spend(0.4)
    ...     [(s["epsilon"], s["output"]) for s in json.loads(path.read_text())["spends"]]
    [(0.4, 'a.npy')]
    """

    def __init__(self, path, data: dict, entry: dict):
        super().__init__(
            epsilon=data["epsilon"], delta=data["delta"], composition=data.get("composition", "sequential")
        )
        self.path = Path(path)
        self._real = _resolve(self.path)
        self._load(data)
        self._entry = dict(entry)

    def _load(self, data: dict) -> None:
        self.epsilon, self.delta = data["epsilon"], data["delta"]
        self.composition = data.get("composition", "sequential")
        self.charges = [self.charge_of(_event_fields(s)) for s in data["spends"]]
        self._data = data

    def check_charge(self, charge: Charge) -> None:
        """Like :meth:`BudgetAccountant.check_charge`, the message naming the ledger."""
        try:
            super().check_charge(charge)
        except BudgetExceededError as err:
            raise BudgetExceededError(f"--budget-file {str(self.path)!r}: {err} Nothing was released.") from None

    def spend(self, release, delta: float | None = None) -> None:
        """Read the ledger again, check the spend against it, write it to the ledger (its ε, δ,
        ``gdp_mu`` and ``zcdp_rho``), then count it."""
        charge = self.charge_of(release, delta)
        if not math.isfinite(charge.epsilon):
            raise InvalidParameterError(
                "a ledger records each release's epsilon, delta, gdp_mu and zcdp_rho: charge the release's "
                "guarantee, not a bare GaussianDpEvent or ZCDpEvent."
            )
        fields = {"gdp_mu": None, "zcdp_rho": None}
        if not isinstance(charge.event, EpsilonDeltaDpEvent):
            fields = {key: guarantee_fields(release)[key] for key in fields}
        with _locked_content(self._real, self.path) as data:
            self._load(data)
            self.check_charge(charge)
            time = datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
            spend = {"epsilon": charge.epsilon, "delta": charge.delta, **fields, "time": time, **self._entry}
            data = data | {"spends": [*data["spends"], spend]}
            text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
            try:
                atomic_write(self._real, lambda f: f.write(text.encode("utf-8")))
            except OSError as err:
                raise CommandError(
                    f"--budget-file {str(self.path)!r} cannot be written ({err.strerror or err}); "
                    "nothing was charged or released"
                ) from None
            self._data = data
            self.charges.append(charge)


def _event_fields(spend: dict) -> dict:
    """The guarantee fields of a spend (a ledger written before ``gdp_mu`` or ``zcdp_rho`` existed
    has none: an (ε, δ) release)."""
    return {
        "epsilon": spend["epsilon"],
        "delta": spend["delta"],
        "gdp_mu": spend.get("gdp_mu"),
        "zcdp_rho": spend.get("zcdp_rho"),
    }


@contextmanager
def open_ledger(path, entry: dict):
    """Lock the ledger at ``path`` and yield a :class:`LedgerAccountant` over it.

    The exclusive lock (on the sidecar ``LEDGER.lock`` next to the file ``path`` resolves to) is
    held until the ``with`` block ends: put the whole release inside it, so that no other command
    reads the ledger between this one's check and its release. A command that finds the lock taken
    says so on stderr and waits. However the block ends (a release, a refusal, an error), the
    sidecar file is removed before the lock is let go: no ``.lock`` file is left next to the ledger.

    Raises
    ------
    CommandError
        The platform has no ``fcntl`` (Windows); the ledger or its lock cannot be read or
        created; the ledger has several names (hard links); it is not valid JSON of the form
        ``{"epsilon": E, "delta": D, "spends": [...]}`` (with each key once).

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "budget.json"
    ...     _ = path.write_text('{"epsilon": 1.0}')
    ...     with open_ledger(path, {"output": "a.npy"}) as accountant:
    ...         accountant.spend(0.25)
    ...     accountant.remaining, len(json.loads(path.read_text())["spends"])
    ((0.75, 0.0), 1)
    """
    path = Path(path)
    if fcntl is None:
        raise CommandError(_NO_FCNTL)
    real = _resolve(path)
    lock = real.with_name(real.name + ".lock")
    try:
        # O_NOFOLLOW: a lock file that is a symlink (to the ledger itself, say: the command then
        # waited forever on its own lock) is refused.
        fd = _lock(
            lock,
            os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0),
            f"geodp: waiting for another command that holds the lock on {str(path)!r}",
        )
    except OSError as err:
        raise CommandError(
            f"--budget-file {str(path)!r}: its lock file {str(lock)!r} cannot be opened ({err.strerror or err})"
        ) from None
    try:
        if _names(real, fd):
            raise CommandError(
                f"--budget-file {str(path)!r}: its lock file {str(lock)!r} is the ledger itself; remove the lock file"
            )
        with _locked_content(real, path) as data:
            pass
        yield LedgerAccountant(path, data, entry)
    finally:
        _remove_lock_file(lock, fd, real)
        os.close(fd)  # releases the lock


def _remove_lock_file(lock: Path, fd: int, real: Path) -> None:
    """Remove the sidecar lock file while its lock is still held (on every exit: release, refusal,
    error), so that no ``.lock`` file is left behind. Safe for the other commands: one waiting on
    it gets the lock on a file that no longer has the name, notices it (:func:`_lock`) and takes
    the lock on a new one. A file that is no longer the one locked is someone else's, and a lock
    file that is the ledger itself (a hard link) is the ledger: both are kept."""
    if _names(lock, fd) and not _names(real, fd):
        with suppress(FileNotFoundError):
            os.unlink(lock)
