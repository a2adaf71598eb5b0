"""Sections of the docs generated from runs: between a BEGIN marker naming the generator and
:data:`END`, rewritten from a JSON record of the run (which carries the code's digest), so that a
test can compare the page, the record and the code (tests/test_reproduce.py)."""

from __future__ import annotations

import json
import math
from pathlib import Path

__all__ = ["END", "begin_marker", "generated_section", "run_record", "short_exp", "write_generated"]

END = "<!-- END GENERATED -->"


def begin_marker(module: str) -> str:
    """The line that opens the section a module generates.

    Examples
    --------
    >>> begin_marker("geodp.experiments.mdm_docs")
    '<!-- BEGIN GENERATED: python -m geodp.experiments.mdm_docs (do not edit by hand) -->'
    """
    return f"<!-- BEGIN GENERATED: python -m {module} (do not edit by hand) -->"


def run_record(rows: list, **settings) -> dict:
    """A JSON-ready record of a run: the code digest, ``settings`` and ``rows`` with floats rounded
    to 4 significant digits and non-finite ones as None.

    Examples
    --------
    >>> record = run_record([{"error": 1.23456, "se": float("nan")}], quick=True)
    >>> record["rows"], record["quick"]
    ([{'error': 1.235, 'se': None}], True)
    """
    from geodp.experiments.reproduce import code_digest

    def clean(value):
        if isinstance(value, float):
            return float(f"{value:.4g}") if math.isfinite(value) else None
        return value

    return dict(code=code_digest(), **settings, rows=[{k: clean(v) for k, v in row.items()} for row in rows])


def short_exp(value: float) -> str:
    """A power of ten as docs write it.

    Examples
    --------
    >>> short_exp(1e-5), short_exp(0.01)
    ('1e-5', '1e-2')
    """
    mantissa, exponent = f"{value:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def generated_section(markdown: str, begin: str) -> str:
    """The part of ``markdown`` from ``begin`` to the next :data:`END` (both included).

    Examples
    --------
    >>> generated_section("a\\nB\\nx\\n" + END + "\\nz", "B") == "B\\nx\\n" + END
    True
    """
    start = markdown.index(begin)
    return markdown[start : markdown.index(END, start) + len(END)]


def write_generated(repo, results_path, page, results: dict, section: str, begin: str) -> None:
    """Write the run record ``results`` to ``repo/results_path`` and replace the generated
    section of ``repo/page`` by ``section``."""
    repo = Path(repo)
    (repo / results_path).write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    doc = repo / page
    text = doc.read_text()
    doc.write_text(text.replace(generated_section(text, begin), section))
