"""Write docs/ew_study.md from a run of the EW study: ``python -m geodp.experiments.ew_docs
[--quick] [--reps R]`` runs :func:`~geodp.experiments.ew_study.run_ew_study`, stores its rows
in docs/ew_study.json, the plot in docs/images/ew_study.png and rewrites the generated section
of the page from the JSON (so a test can re-render the page from the JSON and compare)."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from geodp.experiments.ew_study import DELTA, MECHANISMS, N_RECORDS, RADIUS, run_ew_study
from geodp.experiments.generated_docs import END, begin_marker, run_record, short_exp, write_generated

__all__ = ["BEGIN", "RESULTS", "PAGE", "render", "main"]

BEGIN = begin_marker("geodp.experiments.ew_docs")
RESULTS, PAGE, IMAGE = "docs/ew_study.json", "docs/ew_study.md", "docs/images/ew_study.png"
_LABEL = {"spd-affine": "AI-SPD", "spd-log-euclidean": "LE-SPD", "spd-log-cholesky": "LC-SPD", "hyperbolic": "H"}
_WHY = {"mcmc-only": "— (MCMC only)", "no-sigma": "— (no σ)", "beyond-float64": "— (beyond float64)"}
_GAUSSIANS = ("wrapped-gaussian", "riemannian-gaussian")


def _cells(rows):
    """``{(family, size, mu): {mechanism: row}}`` in run order."""
    cells: dict = {}
    for r in rows:
        cells.setdefault((r["family"], r["size"], r["mu"]), {})[r["mechanism"]] = r
    return cells


def _value(row) -> str:
    return _WHY.get(row["status"], "—") if row["error"] is None else f"{row['error']:.3g}"


def _findings(rows) -> list[str]:
    cells = _cells(rows)
    full = {key: c for key, c in cells.items() if all(c[m]["error"] is not None for m in MECHANISMS)}
    best = {key: min(MECHANISMS, key=lambda m: c[m]["error"]) for key, c in full.items()}
    gaussian_best = sum(best[k] in _GAUSSIANS for k in best)
    versus = [(k, c) for k, c in cells.items() if c["riemannian-laplace"]["error"] is not None]
    lost = [(k, c) for k, c in versus if c["wrapped-gaussian"]["error"] >= c["riemannian-laplace"]["error"]]
    ratios = [c["riemannian-laplace"]["error"] / c["wrapped-gaussian"]["error"] for _, c in versus]
    ai3 = [(k, c) for k, c in versus if k[0] == "spd-affine" and k[1] == 3 and k[2] >= 0.7]
    rg = [(k, c["riemannian-gaussian"]["error"] / c["wrapped-gaussian"]["error"]) for k, c in cells.items()
          if c["riemannian-gaussian"]["error"] is not None]  # fmt: skip
    curved = [ratio for (family, _, _), ratio in rg if family in ("spd-affine", "hyperbolic")]
    flat = [ratio for (family, _, _), ratio in rg if family not in ("spd-affine", "hyperbolic")]
    no_sigma = sorted({f"{_LABEL[k[0]]}({k[1]}) at μ = {k[2]:g}" for k, c in cells.items()
                       if c["riemannian-gaussian"]["status"] == "no-sigma"})  # fmt: skip
    lines = [
        f"- **Wrapped Gaussian against the Riemannian Laplace** (the paper's comparison): lower error in "
        f"{len(versus) - len(lost)} of the {len(versus)} cells where the Riemannian Laplace has an exact "
        f"sampler, by a factor (Laplace error / wrapped-Gaussian error) from {min(ratios):.2g} to {max(ratios):.2g}"
        + (
            "."
            if not lost
            else "; the exceptions: " + ", ".join(f"{_LABEL[k[0]]}({k[1]}) at μ = {k[2]:g}" for k, _ in lost) + "."
        ),  # fmt: skip
        "- **Beside the paper.** The EW paper finds the EW Gaussian better everywhere except AI-SPD(3) at "
        "μ ∈ [0.7, 2]. Here, on AI-SPD(3) at μ ≥ 0.7: "
        + ", ".join(
            f"μ = {k[2]:g}: {c['wrapped-gaussian']['error']:.3g} (wrapped Gaussian) against "
            f"{c['riemannian-laplace']['error']:.3g} (Riemannian Laplace)"
            for k, c in ai3
        )  # fmt: skip
        + (
            ". The wrapped Gaussian wins in all of these cells: **ours differs from the paper here**; a likely "
            "cause is the matching of the Laplace to μ (the paper's is not reproduced; ours is the largest ε "
            "that implies μ-GDP)."
            if ai3 and all(c["wrapped-gaussian"]["error"] < c["riemannian-laplace"]["error"] for _, c in ai3)
            else ". In these cells the Riemannian Laplace wins at least once, as in the paper."
        ),  # fmt: skip
        f"- **Best of the four:** a Gaussian mechanism has the lowest error in {gaussian_best} of the "
        f"{len(full)} cells where all four ran.",
    ]
    if rg:
        lines.append(
            "- **Riemannian Gaussian against the wrapped Gaussian** (error ratio): "
            + (
                f"{min(flat):.2g}–{max(flat):.2g} on the flat spaces (LE-, LC-SPD: the same σ = Δ/μ, "
                "the same law up to the chart)"
                if flat
                else ""
            )  # fmt: skip
            + (
                f"; {min(curved):.2g}–{max(curved):.2g} on the curved ones (AI-SPD, H), where it is calibrated "
                f"at one point (ε_μ(δ), δ = {short_exp(DELTA)}) of the μ-GDP profile by the sound triangle "
                "bound, which costs a larger σ"
                if curved
                else ""
            )  # fmt: skip
            + "."
        )
    if no_sigma:
        lines.append("- **No σ** makes the Riemannian Gaussian (ε_μ(δ), δ)-DP by the triangle bound on: "
                     + ", ".join(no_sigma) + " (cells left empty).")  # fmt: skip
    return lines


def _timing(rows) -> list[str]:
    lines = ["| mechanism | releases | median ms / release | slowest cell, ms / release |", "|---|---:|---:|---:|"]
    for mechanism in MECHANISMS:
        ms = [r["ms_per_release"] for r in rows if r["mechanism"] == mechanism and r["ms_per_release"] is not None]
        count = sum(r["reps"] for r in rows if r["mechanism"] == mechanism)
        lines.append(
            f"| {mechanism} | {count} | {np.median(ms):.2g} | {max(ms):.2g} |" if ms else f"| {mechanism} | 0 | — | — |"
        )
    return lines


def render(results: dict) -> str:
    """The generated section of docs/ew_study.md from a run record
    (:func:`~geodp.experiments.generated_docs.run_record`).

    Examples
    --------
    >>> row = dict(family="hyperbolic", size=3, mu=1.0, status="exact", error=0.5, ms_per_release=1.0, reps=2,
    ...            not_finite=0)
    >>> rows = [dict(row, mechanism=m) for m in MECHANISMS]
    >>> text = render(dict(code="x", seconds=1, quick=True, reps=2, seed=0, rows=rows))
    >>> text.startswith(BEGIN) and text.endswith(END)
    True
    """
    rows = results["rows"]
    sizes = sorted({r["size"] for r in rows})
    mus = sorted({r["mu"] for r in rows})
    head = [
        BEGIN,
        "",
        f"Run: `python -m geodp.experiments.ew_docs{' --quick' if results['quick'] else ''} --reps "
        f"{results['reps']}` ({results['seconds']} s on this machine, seed {results['seed']}; code digest "
        f"`{results['code']}`). n = {N_RECORDS}, r = {RADIUS}, Δ = 2r/n = {2 * RADIUS / N_RECORDS:g}, sizes "
        f"{', '.join(map(str, sizes))}, μ ∈ {{{', '.join(f'{m:g}' for m in mus)}}}, {results['reps']} datasets "
        "per cell (one release each); the mean error (geodesic distance to the non-private mean) is in "
        "the table, the standard errors in docs/ew_study.json.",
        "",
        "![error vs μ](images/ew_study.png)",
        "",
        "| space | μ | " + " | ".join(MECHANISMS) + " |",
        "|---|---|" + "---|" * len(MECHANISMS),
    ]
    table = [f"| {_LABEL[f]}({s}) | {mu:g} | " + " | ".join(_value(c[m]) for m in MECHANISMS) + " |"
             for (f, s, mu), c in _cells(rows).items()]  # fmt: skip
    not_finite = sum(r["not_finite"] for r in rows)
    beyond = sum(r["status"] == "beyond-float64" for r in rows)
    tail = ["", "**Release times** (drawing one release from its exact law; the calibration of σ, once per cell, is "
            "not included; the issue asks < 50 ms each):", "", *_timing(rows), "",
            f"Releases that are not valid float64 points: {not_finite}, in {beyond} cells, which get no mean "
            "(\"beyond float64\": leaving out only those releases would bias the mean down).", "", "**Findings**", "",
            *_findings(rows), "", END]  # fmt: skip
    return "\n".join(head + table + tail)


def main(argv=None) -> int:
    """``python -m geodp.experiments.ew_docs [--quick] [--reps R] [--seed S] [--repo DIR]``."""
    parser = argparse.ArgumentParser(prog="python -m geodp.experiments.ew_docs", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repo", default=".")
    parser.add_argument("--from-json", action="store_true", help="re-render the page from docs/ew_study.json only")
    args = parser.parse_args(argv)
    repo = Path(args.repo)
    if args.from_json:
        results = json.loads((repo / RESULTS).read_text())
        write_generated(repo, RESULTS, PAGE, results, render(results), BEGIN)
        return 0
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        rows = run_ew_study(folder, quick=args.quick, reps=args.reps, seed=args.seed, out=sys.stderr)
        shutil.copy(Path(folder) / "ew_study.png", repo / IMAGE)
    seconds = round(time.perf_counter() - started)
    results = run_record(rows, seconds=seconds, quick=args.quick, reps=args.reps, seed=args.seed)
    write_generated(repo, RESULTS, PAGE, results, render(results), BEGIN)
    print(f"wrote {repo / PAGE}, {repo / RESULTS} and {repo / IMAGE}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
