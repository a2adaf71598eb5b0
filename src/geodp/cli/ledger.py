"""A privacy budget kept in a JSON file, shared by successive ``geodp`` commands.

A ledger starts as ``{"epsilon": E, "delta": D}`` (``delta`` may be left out: 0) written by the
data curator; each release adds its spend to the list ``"spends"``, and a release that would
overspend is refused before anything is released. Basic sequential composition: the ε's and the
δ's add (:class:`geodp.accountant.BudgetAccountant`).

Concurrent commands cannot overspend: a command holds an exclusive lock (``fcntl.flock`` on the
sidecar file ``LEDGER.lock``, e.g. ``budget.json.lock``) from before it reads the ledger until its
release is written, and the ledger is rewritten atomically (a temporary file, then
``os.replace``). Platforms without ``fcntl`` (Windows) are refused.
"""

from __future__ import annotations

import json
import math
import os
import sys
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

from geodp.accountant import BudgetAccountant
from geodp.cli.common import CommandError, atomic_write
from geodp.errors import BudgetExceededError

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None

__all__ = ["LedgerAccountant", "open_ledger"]

_FORM = '{"epsilon": E, "delta": D, "spends": [...]}'


def _refuse(path: Path, problem: str) -> CommandError:
    return CommandError(f"--budget-file {str(path)!r} is not a budget ledger ({problem}); a ledger is {_FORM}")


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _no_constant(name: str):
    raise ValueError(f"{name} is not a number JSON allows")


def _read(path: Path) -> dict:
    """The ledger's content, checked."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CommandError(f"--budget-file {str(path)!r} does not exist; start a budget by writing "
                           '{"epsilon": E, "delta": D} to it') from None
    except (OSError, UnicodeDecodeError) as err:
        raise CommandError(f"--budget-file {str(path)!r} cannot be read ({getattr(err, 'strerror', None) or err})") from None
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except ValueError as err:
        raise _refuse(path, f"not JSON: {err}") from None
    if not isinstance(data, dict):
        raise _refuse(path, f"a JSON {type(data).__name__}, not an object")
    epsilon, delta = data.get("epsilon"), data.get("delta", 0.0)
    if not (_number(epsilon) and epsilon > 0):
        raise _refuse(path, f'"epsilon" must be a number > 0, got {epsilon!r}')
    if not (_number(delta) and 0 <= delta < 1):
        raise _refuse(path, f'"delta" must be a number in [0, 1), got {delta!r}')
    spends = data.get("spends", [])
    if not isinstance(spends, list):
        raise _refuse(path, '"spends" must be a list')
    for i, spend in enumerate(spends):
        if not (isinstance(spend, dict) and all(_number(spend.get(k)) and spend[k] >= 0 for k in ("epsilon", "delta"))):
            raise _refuse(path, f'spend {i} must be an object with numbers "epsilon" >= 0 and "delta" >= 0')
    return data | {"epsilon": float(epsilon), "delta": float(delta), "spends": spends}


class LedgerAccountant(BudgetAccountant):
    """A :class:`~geodp.accountant.BudgetAccountant` over a ledger file: each spend is written to
    the file (atomically) before it counts, with the facts in ``entry`` and the UTC time.

    Use it through :func:`open_ledger`, which holds the ledger's lock.

    Parameters
    ----------
    path : Path
        The ledger file.
    data : dict
        Its checked content.
    entry : dict
        What each spend records besides ε, δ and the time (e.g. the output file).

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "budget.json"
    ...     acc = LedgerAccountant(path, {"epsilon": 1.0, "delta": 0.0, "spends": []}, {"output": "a.npy"})
    ...     acc.spend(0.4)
    ...     [(s["epsilon"], s["output"]) for s in json.loads(path.read_text())["spends"]]
    [(0.4, 'a.npy')]
    """

    def __init__(self, path, data: dict, entry: dict):
        super().__init__(epsilon=data["epsilon"], delta=data["delta"])
        self.path = Path(path)
        self.spent = [(float(s["epsilon"]), float(s["delta"])) for s in data["spends"]]
        self._data = data
        self._entry = dict(entry)

    def check(self, epsilon: float, delta: float = 0.0) -> None:
        """Like :meth:`BudgetAccountant.check`, the message naming the ledger."""
        try:
            super().check(epsilon, delta)
        except BudgetExceededError as err:
            raise BudgetExceededError(f"--budget-file {str(self.path)!r}: {err} Nothing was released.") from None

    def spend(self, epsilon: float, delta: float = 0.0) -> None:
        """Check the spend, write it to the ledger, then count it."""
        self.check(epsilon, delta)
        time = datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
        spend = {"epsilon": float(epsilon), "delta": float(delta), "time": time, **self._entry}
        data = self._data | {"spends": [*self._data["spends"], spend]}
        text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        try:
            atomic_write(self.path, lambda f: f.write(text.encode("utf-8")))
        except OSError as err:
            raise CommandError(f"--budget-file {str(self.path)!r} cannot be written ({err.strerror or err}); "
                               "nothing was charged or released") from None
        self._data = data
        super().spend(epsilon, delta)


@contextmanager
def open_ledger(path, entry: dict):
    """Lock the ledger at ``path`` and yield a :class:`LedgerAccountant` over it.

    The exclusive lock (on the sidecar ``path + ".lock"``) is held until the ``with`` block ends:
    put the whole release inside it, so that no other command reads the ledger between this
    one's check and its release. A command that finds the lock taken says so on stderr and waits.

    Raises
    ------
    CommandError
        The platform has no ``fcntl`` (Windows); the ledger or its lock cannot be read or
        created; the ledger is not valid JSON of the form ``{"epsilon": E, "delta": D, "spends": [...]}``.

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
        raise CommandError("--budget-file needs file locking (fcntl), which this platform lacks: run releases "
                           "against a ledger on Linux or macOS, or without --budget-file")
    lock = path.with_name(path.name + ".lock")
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as err:
        raise CommandError(f"--budget-file {str(path)!r}: its lock file {str(lock)!r} cannot be opened "
                           f"({err.strerror or err})") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"geodp: waiting for another command that holds the lock on {str(path)!r}", file=sys.stderr)
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield LedgerAccountant(path, _read(path), entry)
    finally:
        os.close(fd)  # releases the lock
