"""Reproductions of the figures and tables of the four papers, ours beside the published numbers.

Each paper has one module (:mod:`geodp.experiments.r21`, ``u23``, ``s22``, ``k25``) holding a
tuple ``REPRODUCTIONS`` of :class:`Reproduction` entries; :func:`reproductions` collects them.
:func:`run_reproduction` runs one item (or ``"all"``), writes ``<name>.png`` (the panels as in the
paper) and ``<name>.csv`` (the numbers), prints the table ``setting | ours | published | note``
writes the published numbers the item compares with to ``<name>-published.csv`` (paper, key,
value, source) and records the run time in ``<name>.json``; a later call with the same settings
(name, repetitions, seed and a digest of the code, :func:`code_digest`) reads that record instead
of running again.

The published numbers live in :mod:`geodp.experiments.published`; docs/reproduction.md lists every
item with its status, our numbers beside the published ones and the run times.
"""

from __future__ import annotations

import csv
import importlib
import json
import sys
import time
import zlib
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from geodp.errors import InvalidParameterError

__all__ = [
    "PAPER_MODULES",
    "STATUSES",
    "Outcome",
    "Reproduction",
    "Result",
    "Row",
    "bootstrap_interval",
    "code_digest",
    "compare_text",
    "format_list",
    "format_table",
    "get_reproduction",
    "interval_text",
    "mean_interval",
    "make_progress",
    "reproductions",
    "run_reproduction",
]

PAPER_MODULES = {
    "R21": "geodp.experiments.r21",
    "U23": "geodp.experiments.u23",
    "S22": "geodp.experiments.s22",
    "K25": "geodp.experiments.k25",
}
STATUSES = ("reproduced", "stand-in data", "partial", "pending", "not reproducible")


@dataclass(frozen=True)
class Row:
    """One line of the printed comparison table: a setting, our number, the published one.

    Examples
    --------
    >>> Row("sphere, n = 20", "0.12", "0.14", "axis reading").ours
    '0.12'
    """

    setting: str
    ours: str
    published: str
    note: str = ""


@dataclass
class Result:
    """What a reproduction's ``run`` returns.

    Attributes
    ----------
    figure : matplotlib.figure.Figure
        The panels as in the paper.
    data : list of dict
        The CSV rows (the same keys in every dict).
    rows : list of Row
        Ours beside the published numbers.
    """

    figure: Any
    data: list
    rows: list


@dataclass(frozen=True)
class Reproduction:
    """One figure or table of a paper and how to redo it.

    Attributes
    ----------
    name : str
        ``"r21-fig1"``, ``"u23-fig1"``, ``"k25-table1"``, ...
    paper : str
        ``"R21"``, ``"U23"``, ``"S22"`` or ``"K25"``.
    title : str
        What the figure or table shows.
    status : str
        One of :data:`STATUSES`.
    repetitions : tuple of int
        ``(quick, full)``; full is the paper's.
    run : callable or None
        ``run(repetitions, rng, progress) -> Result``; None when pending or not reproducible.
    note : str
        Why pending, what stand-in, what we chose where the paper is silent.
    stream : str
        Name of the random stream (default: ``name``). Items drawn by one run share it (K25's
        Figs. 2 and 3), so they give the same numbers and a paper module may compute them once.

    Examples
    --------
    >>> Reproduction("x-fig1", "R21", "a figure", "pending", (1, 10), None, "later").status
    'pending'
    """

    name: str
    paper: str
    title: str
    status: str
    repetitions: tuple
    run: Callable | None
    note: str = ""
    stream: str = ""

    def __post_init__(self):
        if self.status not in STATUSES:
            raise InvalidParameterError(f"status must be one of {STATUSES}, got {self.status!r}")
        if self.paper not in PAPER_MODULES:
            raise InvalidParameterError(f"paper must be one of {tuple(PAPER_MODULES)}, got {self.paper!r}")
        if self.run is None and self.status not in ("pending", "not reproducible"):
            raise InvalidParameterError(f"{self.name}: an item with status {self.status!r} needs a run function")


@dataclass(frozen=True)
class Outcome:
    """What :func:`run_reproduction` did for one item.

    Attributes
    ----------
    reproduction : Reproduction
    rows : list of Row
    seconds : float
        The run time of the (possibly earlier, cached) run.
    cached : bool
        True when the item was read from an earlier run with the same settings.
    csv_path, png_path : pathlib.Path
    """

    reproduction: Reproduction
    rows: list
    seconds: float
    cached: bool
    csv_path: Path
    png_path: Path


def reproductions() -> tuple[Reproduction, ...]:
    """Every figure and table of R21, U23, S22 and K25, in paper order.

    A paper module that does not exist yet contributes nothing.

    Examples
    --------
    >>> names = [r.name for r in reproductions()]
    >>> "r21-fig1" in names and "s22-sims" in names
    True
    """
    items: list[Reproduction] = []
    for module_name in PAPER_MODULES.values():
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as err:
            if err.name != module_name:
                raise
            continue
        items.extend(getattr(module, "REPRODUCTIONS", ()))
    return tuple(items)


def get_reproduction(name: str) -> Reproduction:
    """The item called ``name``.

    Raises
    ------
    InvalidParameterError
        For an unknown name (the message lists the known ones).

    Examples
    --------
    >>> get_reproduction("r21-fig1").paper
    'R21'
    """
    for item in reproductions():
        if item.name == name:
            return item
    known = ", ".join(item.name for item in reproductions())
    raise InvalidParameterError(f"no reproduction called {name!r}; known: {known}, all")


Z95 = 1.959963984540054  # two-sided 95% normal quantile


def mean_interval(values) -> tuple[float, float]:
    """``(mean, half-width of its 95% normal interval)``: ``1.96 · sd / √m`` over ``m`` repetitions
    (half-width 0 for one value).

    Examples
    --------
    >>> m, h = mean_interval([1.0, 2.0, 3.0])
    >>> m, round(h, 3)
    (2.0, 1.132)
    """
    values = np.asarray(values, dtype=float)
    if values.size < 2:
        return float(values.mean()), 0.0
    return float(values.mean()), float(Z95 * values.std(ddof=1) / np.sqrt(values.size))


def compare_text(
    mean: float,
    half: float,
    reference=None,
    *,
    digits: int = 2,
    scale: float = 1.0,
    unit: str = "",
    label: str = "published",
    precision: float = 0.0,
):
    """Our estimate ``mean ± half`` (a 95% interval) as text, and a note generated from it: whether
    the interval holds ``reference`` (the published value), so the conclusion follows the run.

    Examples
    --------
    >>> compare_text(0.5, 0.1, 0.3)
    ('0.50 ± 0.10', 'published 0.3 outside our 95% interval [0.40, 0.60]: a significant difference')
    >>> compare_text(0.5, 0.1, 0.55)[1]
    'published 0.55 inside our 95% interval [0.40, 0.60]: no significant difference'

    ``label`` names the reference; ``precision`` is its own relative precision (an axis reading
    ±15%: 0.15), and the difference is significant only when the two ranges do not meet:

    >>> compare_text(10.0, 1.0, 12.5, digits=1, precision=0.15)[1]
    'published 12.5 (±15%: [10.625, 14.375]) meets our 95% interval [9.0, 11.0]: no significant difference'
    >>> compare_text(0.8, 0.1, 0.5, label="half (0.5)")[1]
    'half (0.5) 0.5 outside our 95% interval [0.70, 0.90]: a significant difference'
    """
    m, h = mean * scale, half * scale
    text = f"{m:.{digits}f}{unit} ± {h:.{digits}f}{unit}"
    if reference is None:
        return text, ""
    ref = float(reference) * scale
    low, high = ref * (1 - precision), ref * (1 + precision)
    inside = m - h <= high and low <= m + h
    verdict = "no significant difference" if inside else "a significant difference"
    if precision:
        where = "meets" if inside else "misses"
        given = f"{ref:g}{unit} (±{precision:.0%}: [{low:g}, {high:g}]) {where}"
    else:
        given = f"{ref:g}{unit} {'inside' if inside else 'outside'}"
    return text, f"{label} {given} our 95% interval [{m - h:.{digits}f}, {m + h:.{digits}f}]: {verdict}"


def bootstrap_interval(samples, statistic, *, resamples: int = 400, seed: int = 0) -> tuple[float, float]:
    """``(statistic(samples), half-width of its 95% interval)``: 1.96 times the sd of the statistic
    over ``resamples`` bootstrap resamples of the rows (first axis) of ``samples``, for statistics
    that are not a mean (a median, a mean + 2 sd). A fixed ``seed``: the item's own stream is untouched.

    Examples
    --------
    >>> m, h = bootstrap_interval(np.arange(100.0), np.median)
    >>> m, 5 < h < 12
    (49.5, True)
    """
    samples = np.asarray(samples, dtype=float)
    value = float(statistic(samples))
    if len(samples) < 2:
        return value, 0.0
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(samples), size=(resamples, len(samples)))
    replicates = [statistic(samples[p]) for p in picks]
    return value, float(Z95 * np.std(replicates, ddof=1))


def interval_text(values, reference=None, *, digits: int = 2, scale: float = 1.0, unit: str = "", **kwargs):
    """:func:`compare_text` of the mean of repeated measurements ``values`` (normal 95% interval).

    Examples
    --------
    >>> interval_text([1.0, 2.0, 3.0], 1.5)[0]
    '2.00 ± 1.13'
    """
    return compare_text(*mean_interval(values), reference, digits=digits, scale=scale, unit=unit, **kwargs)


def make_progress(enabled: bool = True) -> Callable:
    """A tqdm-like wrapper ``progress(iterable, total=None, desc="")``.

    With ``enabled`` and tqdm installed, a bar on stderr when stderr is a terminal; otherwise the
    iterable unchanged.

    Examples
    --------
    >>> list(make_progress(False)(range(3), desc="x"))
    [0, 1, 2]
    """

    def silent(iterable, total=None, desc=""):
        return iterable

    if not enabled:
        return silent
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return silent

    def bar(iterable, total=None, desc=""):
        return tqdm(iterable, total=total, desc=desc, disable=None, leave=False, file=sys.stderr)

    return bar


def format_table(rows) -> str:
    """The rows as an aligned text table ``setting | ours | published | note``.

    Examples
    --------
    >>> print(format_table([Row("n = 10", "0.5", "0.6", "axis reading")]))
    setting | ours | published | note
    ------- | ---- | --------- | ------------
    n = 10  | 0.5  | 0.6       | axis reading
    """
    header = ("setting", "ours", "published", "note")
    cells = [header] + [(r.setting, r.ours, r.published, r.note) for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(4)]
    lines = [" | ".join(c[i].ljust(widths[i]) for i in range(4)).rstrip() for c in cells]
    lines.insert(1, " | ".join("-" * w for w in widths))
    return "\n".join(lines)


def format_list() -> str:
    """One line per item: name, status, repetitions (quick/full), title.

    Examples
    --------
    >>> print(format_list().splitlines()[0])  # doctest: +NORMALIZE_WHITESPACE
    name status quick/full title
    >>> "r21-fig1" in format_list()
    True
    """
    items = reproductions()
    width = max(len(item.name) for item in items)
    swidth = max(len(item.status) for item in items)
    lines = [f"{'name'.ljust(width)}  {'status'.ljust(swidth)}  quick/full  title"]
    for item in items:
        reps = f"{item.repetitions[0]}/{item.repetitions[1]}" if item.run else "-"
        line = f"{item.name.ljust(width)}  {item.status.ljust(swidth)}  {reps.ljust(10)}  {item.title}"
        if item.run is None and item.note:
            line += f"  ({item.note})"
        lines.append(line)
    return "\n".join(lines)


def _item_rng(name: str, seed: int) -> np.random.Generator:
    # One stream per (item, seed): an item gives the same numbers alone and within "all".
    return np.random.default_rng([int(seed), zlib.crc32(name.encode())])


def code_digest() -> str:
    """SHA-256 (first 16 hex digits) of every ``.py`` file of the installed ``geodp`` package (paths
    and contents): the cache key's code part, so an edit anywhere in the code reruns an item, which a
    version string that stays put across edits did not.

    Examples
    --------
    >>> len(code_digest()), code_digest() == code_digest()
    (16, True)
    """
    import hashlib

    import geodp

    root = Path(geodp.__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def _settings(item: Reproduction, repetitions: int, seed: int) -> dict:
    return {"name": item.name, "repetitions": int(repetitions), "seed": int(seed), "code": code_digest()}


def _write_published(path: Path, values) -> None:
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["paper", "key", "value", "source"])
        for paper, value in values:
            writer.writerow([paper, value.key, value.value, value.source])


def _write_csv(path: Path, data: list) -> None:
    keys = list(data[0]) if data else []
    for row in data:
        if list(row) != keys:
            raise InvalidParameterError(f"{path.name}: every CSV row needs the keys {keys}, got {list(row)}")
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=keys)
        writer.writeheader()
        writer.writerows(data)


def _run_one(
    item: Reproduction, *, quick: bool, output_dir: Path, seed: int, out, progress: Callable, force: bool
) -> Outcome:
    repetitions = item.repetitions[0] if quick else item.repetitions[1]
    settings = _settings(item, repetitions, seed)
    csv_path, png_path, meta_path = (output_dir / f"{item.name}.{ext}" for ext in ("csv", "png", "json"))
    published_path = output_dir / f"{item.name}-published.csv"
    print(f"\n{item.name} ({item.paper}, {item.status}): {item.title}; {repetitions} repetitions", file=out)
    if not force and all(p.exists() for p in (meta_path, csv_path, png_path, published_path)):
        try:
            meta = json.loads(meta_path.read_text())
        except (OSError, ValueError):
            meta = {}
        if meta.get("settings") == settings:
            rows = [Row(**row) for row in meta["rows"]]
            print(format_table(rows), file=out)
            print(f"(cached: same settings as the run of {meta['seconds']:.1f} s in {meta_path.name})", file=out)
            return Outcome(item, rows, float(meta["seconds"]), True, csv_path, png_path)
    from geodp.experiments.published import recording

    start = time.perf_counter()
    with recording() as looked_up:
        result = item.run(repetitions, _item_rng(item.stream or item.name, seed), progress)
    seconds = time.perf_counter() - start
    _write_csv(csv_path, result.data)
    _write_published(output_dir / f"{item.name}-published.csv", looked_up)
    result.figure.savefig(png_path, dpi=120, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(result.figure)
    meta = {
        "settings": settings,
        "seconds": seconds,
        "status": item.status,
        "rows": [asdict(row) for row in result.rows],
    }
    meta_path.write_text(json.dumps(meta, indent=1, ensure_ascii=False))
    print(format_table(result.rows), file=out)
    if item.note:
        print(f"note: {item.note}", file=out)
    print(f"{seconds:.1f} s; wrote {png_path.name}, {csv_path.name}", file=out)
    return Outcome(item, list(result.rows), seconds, False, csv_path, png_path)


def run_reproduction(
    name: str, *, quick: bool, output_dir, seed: int = 0, out=None, progress: bool = True, force: bool = False
) -> list[Outcome]:
    """Run one reproduction (or ``"all"`` that are not pending); write its PNG, CSV and run record.

    Parameters
    ----------
    name : str
        An item name (see :func:`reproductions`) or ``"all"``.
    quick : bool
        Use the item's quick repetitions instead of the paper's.
    output_dir : str or path-like
        Folder for ``<name>.png``, ``<name>.csv`` and ``<name>.json`` (created if missing).
    seed : int
        Seed of the item's random stream (each item derives its own stream from it).
    out : file-like, optional
        Where the tables go (default: stdout).
    progress : bool
        Progress bars on a terminal.
    force : bool
        Run even when a record with the same settings exists.

    Returns
    -------
    list of Outcome

    Raises
    ------
    InvalidParameterError
        For an unknown name, or a pending item asked for by name.

    Examples
    --------
    >>> import io, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     run_reproduction("r21-fig1", quick=True, output_dir=folder, out=io.StringIO())  # doctest: +SKIP
    """
    out = sys.stdout if out is None else out
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    if name == "all":
        items = [item for item in reproductions() if item.run is not None]
    else:
        item = get_reproduction(name)
        if item.run is None:
            raise InvalidParameterError(f"{name} is {item.status}: {item.note}")
        items = [item]
    bar = make_progress(progress)
    outcomes = [
        _run_one(item, quick=quick, output_dir=output_dir, seed=seed, out=out, progress=bar, force=force)
        for item in items
    ]
    if len(outcomes) > 1:
        total = sum(o.seconds for o in outcomes)
        print(f"\n{len(outcomes)} items, {total:.1f} s of run time", file=out)
    return outcomes
