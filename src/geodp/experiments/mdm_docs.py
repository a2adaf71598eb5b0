"""The generated part of docs/mdm.md: the accuracy tables of the ``geodp mdm`` study and what they
say, from one run, so the page states what the code computes.

``python -m geodp.experiments.mdm_docs [REPO]`` runs :func:`~geodp.experiments.mdm_study.run_mdm_study`
with the settings of ``geodp mdm --quick`` (:data:`~geodp.experiments.mdm_study.QUICK_EPSILONS`,
:data:`~geodp.experiments.mdm_study.QUICK_REPEATS` release per cell, seed 0), writes the rows, the
run time and the :func:`~geodp.experiments.reproduce.code_digest` of the code to
``docs/mdm-quick.json``, the plot to ``docs/images/mdm_study.png``, and rewrites the part of
``docs/mdm.md`` between :data:`BEGIN` and :data:`END` with :func:`render` of the JSON.
tests/test_reproduce.py checks that the page equals :func:`render` of the JSON and that the JSON's
digest is the code's: after a change to the code, rerun this module.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

from geodp.experiments.generated_docs import END, begin_marker, write_generated
from geodp.experiments.generated_docs import generated_section as shared_section
from geodp.experiments.mdm_study import DATASETS, QUICK_EPSILONS, QUICK_REPEATS
from geodp.experiments.reproduce import Z95, code_digest

__all__ = ["BEGIN", "END", "RESULTS", "collect", "generated_section", "main", "render"]

BEGIN = begin_marker("geodp.experiments.mdm_docs")
RESULTS = Path("docs") / "mdm-quick.json"
PLOT = Path("docs") / "images" / "mdm_study.png"
_TITLES = {"emg": "EMG hand signs", "connectomes": "Connectomes"}
_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def collect(rows: list, *, seconds: float, quick: bool, repeats: int, seed: int, test_sizes: dict) -> dict:
    """The records of one study run (the rows of :func:`~geodp.experiments.mdm_study.run_mdm_study`) as
    JSON data: the code digest, the settings, the test-set sizes and the rows (floats rounded)."""
    keep = []
    for row in rows:
        row = dict(row)
        for key in ("accuracy", "non_private", "chance"):
            row[key] = round(float(row[key]), 6)
        se = float(row["accuracy_se"])
        row["accuracy_se"] = None if se != se else round(se, 6)  # None for one release (nan is not JSON)
        row["seconds_per_fit"] = round(float(row["seconds_per_fit"]), 3)
        row["exact"] = bool(row["exact"])
        keep.append(row)
    return {
        "code": code_digest(),
        "seed": int(seed),
        "quick": bool(quick),
        "repeats": int(repeats),
        "seconds": round(float(seconds), 1),
        "test_sizes": {k: int(v) for k, v in test_sizes.items()},
        "rows": keep,
    }


def _eps(value: float) -> str:
    """``ε`` as printed: ``0.3``, ``30``, ``1000``, ``10⁴``.

    Examples
    --------
    >>> _eps(0.3), _eps(30.0), _eps(1e3), _eps(1e4)
    ('0.3', '30', '1000', '10⁴')
    """
    if value >= 1e4:
        exponent = f"{value:.0e}".split("e")
        if exponent[0] == "1":
            return "10" + str(int(exponent[1])).translate(_SUPERSCRIPT)
    return f"{value:g}"


def _half(row: dict) -> float:
    # 95% normal interval of the mean accuracy over the releases (nan with one release)
    return Z95 * row["accuracy_se"] if row["repeats"] > 1 else float("nan")


def _cell(row: dict) -> str:
    text = f"{row['accuracy']:.2f}"
    if row["repeats"] > 1:
        text += f" ± {_half(row):.2f}"
    return text + ("" if row["exact"] else "†")


def _seconds(values) -> str:
    values = list(values)
    low, high = min(values), max(values)
    text = f"{low:.2g}" if f"{low:.2g}" == f"{high:.2g}" else f"{low:.2g}–{high:.2g}"
    return text


def _signed(value: float) -> str:
    """``+0.07``, ``−0.03``, ``0.00`` (no sign on a zero after rounding).

    Examples
    --------
    >>> _signed(0.071), _signed(-0.0004), _signed(-0.031)
    ('+0.07', '0.00', '−0.03')
    """
    text = f"{value:+.2f}"
    return "0.00" if float(text) == 0 else text.replace("-", "−")


def _pairs(rows):
    return list(dict.fromkeys((r["metric"], r["mechanism"]) for r in rows))


def _findings(name: str, rows: list, results: dict) -> list[str]:
    """Bullets computed from the rows of one data set."""
    epsilons = list(dict.fromkeys(r["epsilon"] for r in rows))
    repeats = results["repeats"]
    test_n = results["test_sizes"][name]
    lines = []
    gaps = []
    for eps in epsilons:
        at = [r for r in rows if r["epsilon"] == eps]
        worst = max(r["non_private"] - r["accuracy"] for r in at)
        best = min(r["non_private"] - r["accuracy"] for r in at)
        text = f"ε = {_eps(eps)}: {_signed(best)} to {_signed(worst)}"
        if repeats > 1:
            covered = sum(abs(r["non_private"] - r["accuracy"]) <= _half(r) for r in at)
            text += f" ({covered} of {len(at)} intervals hold the non-private accuracy: no significant loss there)"
        gaps.append(text)
    lines.append(
        "Loss of accuracy against the non-private MDM of the same metric (non-private minus private; "
        "best to worst metric–mechanism pair): " + "; ".join(gaps) + "."
    )
    smallest = [r for r in rows if r["epsilon"] == epsilons[0]]
    top = max(smallest, key=lambda r: r["accuracy"])
    ties = [r for r in smallest if r["accuracy"] == top["accuracy"]]
    names = ", ".join(f"{r['metric']} {r['mechanism']}" for r in ties)
    chance = rows[0]["chance"]
    lines.append(
        f"Most accurate at the smallest ε ({_eps(epsilons[0])}): {names} ({top['accuracy']:.2f}; chance "
        f"{chance:.2f}). "
        + (
            f"With one release per cell this ranking has no interval: one test record moves an accuracy by "
            f"{1 / test_n:.3f}, and the spread between releases is not measured; `--repeats` gives intervals."
            if repeats == 1
            else "Rankings whose intervals overlap are not significant."
        )
    )
    mcmc = [r for r in rows if not r["exact"]]
    if mcmc:
        listed = "; ".join(
            f"{r['metric']} {r['mechanism']} at ε = {_eps(r['epsilon'])} ({r['seconds_per_fit']:.2g} s per fit)"
            for r in mcmc
        )
        lines.append(f"Sampled by MCMC (†, DP only approximately): {listed}. Every other release was exact.")
    else:
        lines.append("Every release was exact (no MCMC).")
    return lines


def render(results: dict) -> str:
    """The generated section (Markdown) from :func:`collect`'s data.

    Examples
    --------
    >>> row = dict(dataset="emg", metric="affine", mechanism="laplace", epsilon=1.0, repeats=1,
    ...            accuracy=0.5, accuracy_se=float("nan"), non_private=0.78, chance=0.25, exact=False,
    ...            seconds_per_fit=12.0)
    >>> text = render({"code": "x", "seed": 0, "quick": True, "repeats": 1, "seconds": 12.0,
    ...                "test_sizes": {"emg": 768}, "rows": [row]})
    >>> text.splitlines()[0] == BEGIN, "| affine | laplace | 0.50† | 0.78 | 12 |" in text
    (True, True)
    """
    rows, repeats = results["rows"], results["repeats"]
    command = "geodp mdm --quick" if results["quick"] else "geodp mdm"
    releases = "one release" if repeats == 1 else f"{repeats} releases"
    lines = [
        BEGIN,
        "",
        f"Generated from one `{command}` run (seed {results['seed']}, {releases} of the class means per cell, "
        f"{results['seconds']:.0f} s on this machine; code digest `{results['code']}`). "
        + (
            "Each cell is one release's test accuracy: no interval."
            if repeats == 1
            else "Each cell is the mean test accuracy ± the half-width of its 95% normal interval over the releases."
        )
        + " † marks releases sampled by MCMC (`exact: False`); all others are exact.",
        "",
    ]
    for name in [d for d in DATASETS if any(r["dataset"] == d for r in rows)]:
        sub = [r for r in rows if r["dataset"] == name]
        epsilons = list(dict.fromkeys(r["epsilon"] for r in sub))
        lines += [
            f"**{_TITLES[name]}** (test n = {results['test_sizes'][name]}, chance {sub[0]['chance']:.2f}, the majority "
            "class):",
            "",
            "| metric | mechanism | " + " | ".join(f"ε = {_eps(e)}" for e in epsilons) + " | non-private | s per fit |",
            "|---|---|" + "---|" * (len(epsilons) + 2),
        ]
        for metric, mechanism in _pairs(sub):
            cells = {r["epsilon"]: r for r in sub if (r["metric"], r["mechanism"]) == (metric, mechanism)}
            row = [metric, mechanism] + [_cell(cells[e]) if e in cells else "—" for e in epsilons]
            oracle = next(iter(cells.values()))["non_private"]
            row += [f"{oracle:.2f}", _seconds(r["seconds_per_fit"] for r in cells.values())]
            lines.append("| " + " | ".join(row) + " |")
        lines += [""] + [f"- {text}" for text in _findings(name, sub, results)] + [""]
    lines.append(END)
    return "\n".join(lines)


def generated_section(markdown: str) -> str:
    """The part of ``markdown`` this module generates (from :data:`BEGIN` to :data:`END`)."""
    return shared_section(markdown, BEGIN)


def main(repo=".") -> None:
    """Run the quick MDM study and rewrite ``repo``'s docs/mdm.md section and docs/mdm-quick.json
    (``python -m geodp.experiments.mdm_docs [REPO]``; about 10 s on 2 cores)."""
    from geodp.experiments.mdm_study import load_study_data, run_mdm_study

    repo = Path(repo)
    epsilons, repeats = QUICK_EPSILONS, QUICK_REPEATS
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        rows = run_mdm_study(
            DATASETS, epsilons=epsilons, repeats=repeats, seed=0, output_dir=folder, out=sys.stderr, progress=False
        )
        seconds = time.perf_counter() - start
        plot = Path(folder) / "mdm_study.png"
        if plot.exists():
            shutil.copyfile(plot, repo / PLOT)
    sizes = {name: len(load_study_data(name).y_test) for name in DATASETS}
    results = collect(rows, seconds=seconds, quick=True, repeats=repeats, seed=0, test_sizes=sizes)
    write_generated(repo, RESULTS, "docs/mdm.md", results, render(results), BEGIN)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
