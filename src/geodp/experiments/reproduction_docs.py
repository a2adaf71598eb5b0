"""The generated part of docs/reproduction.md: every item's table from one ``geodp reproduce all
--quick`` run, so the docs say what the code computes.

``python -m geodp.experiments.reproduction_docs [REPO]`` runs every item with its quick
repetitions (seed 0) in a temporary folder, writes the run records to
``docs/reproduction-quick.json`` (the rows, run times and the :func:`~geodp.experiments.reproduce.code_digest`
of the code that produced them) and rewrites the part of ``docs/reproduction.md`` between
:data:`BEGIN` and :data:`END` with :func:`render` of those records. tests/test_reproduce.py checks
that the docs equal :func:`render` of the JSON and that the JSON's digest is the code's: after any
change to the code, rerun this module.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from geodp.experiments.generated_docs import END, begin_marker, write_generated
from geodp.experiments.generated_docs import generated_section as shared_section
from geodp.experiments.reproduce import code_digest, reproductions, run_reproduction

__all__ = ["BEGIN", "END", "RESULTS", "collect", "generated_section", "main", "render"]

BEGIN = begin_marker("geodp.experiments.reproduction_docs")
RESULTS = Path("docs") / "reproduction-quick.json"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def collect(outcomes) -> dict:
    """The records of one run (a list of :class:`~geodp.experiments.reproduce.Outcome`) as JSON data."""
    items = {}
    for o in outcomes:
        items[o.reproduction.name] = {
            "seconds": round(o.seconds, 1),
            "rows": [[r.setting, r.ours, r.published, r.note] for r in o.rows],
        }
    return {"code": code_digest(), "seed": 0, "quick": True, "items": items}


def render(results: dict) -> str:
    """The generated section (Markdown) from :func:`collect`'s data.

    Examples
    --------
    >>> text = render({"code": "x", "seed": 0, "quick": True, "items": {}})
    >>> text.splitlines()[0] == BEGIN
    True
    """
    lines = [
        BEGIN,
        "",
        f"Generated from one `geodp reproduce all --quick` run (seed {results['seed']}, code digest "
        f"`{results['code']}`); the full runs (`geodp reproduce NAME`) use the larger repetitions. "
        "Intervals are 95% Monte Carlo intervals of the mean; the notes are computed by the run.",
        "",
        "| item | paper, figure/table | status | repetitions quick / full | quick run time |",
        "|---|---|---|---|---|",
    ]
    items = results["items"]
    for item in reproductions():
        reps = f"{item.repetitions[0]} / {item.repetitions[1]}" if item.run else "—"
        record = items.get(item.name)
        seconds = f"{record['seconds']:.1f} s" if record else "—"
        lines.append(f"| `{item.name}` | {_cell(item.title)} | {item.status} | {reps} | {seconds} |")
    total = sum(record["seconds"] for record in items.values())
    lines += ["", f"Total run time of the quick run: {total:.0f} s.", ""]
    for item in reproductions():
        record = items.get(item.name)
        if record is None:
            lines += [f"### `{item.name}` ({item.status})", "", _cell(item.note), ""]
            continue
        lines += [f"### `{item.name}` ({item.status})", "", _cell(item.note), ""]
        lines += ["| setting | ours | published | note |", "|---|---|---|---|"]
        lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in record["rows"]]
        lines.append("")
    lines.append(END)
    return "\n".join(lines)


def generated_section(markdown: str) -> str:
    """The part of ``markdown`` this module generates (from :data:`BEGIN` to :data:`END`)."""
    return shared_section(markdown, BEGIN)


def main(repo=".") -> None:
    """Run every reproduction quickly and rewrite ``repo``'s docs/reproduction.md section and
    docs/reproduction-quick.json (``python -m geodp.experiments.reproduction_docs [REPO]``)."""
    repo = Path(repo)
    with tempfile.TemporaryDirectory() as folder:
        outcomes = run_reproduction("all", quick=True, output_dir=folder, seed=0, progress=False, out=sys.stderr)
    results = collect(outcomes)
    write_generated(repo, RESULTS, "docs/reproduction.md", results, render(results), BEGIN)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
