"""Sections of the docs generated from runs: between a BEGIN marker naming the generator and
:data:`END`, rewritten from a JSON record of the run (which carries the code's digest), so that a
test can compare the page, the record and the code (tests/test_reproduce.py)."""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["END", "begin_marker", "generated_section", "write_generated"]

END = "<!-- END GENERATED -->"


def begin_marker(module: str) -> str:
    """The line that opens the section a module generates.

    Examples
    --------
    >>> begin_marker("geodp.experiments.mdm_docs")
    '<!-- BEGIN GENERATED: python -m geodp.experiments.mdm_docs (do not edit by hand) -->'
    """
    return f"<!-- BEGIN GENERATED: python -m {module} (do not edit by hand) -->"


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
