"""DP-RiemOpt's two settings: their private GD with MH-sampled noise vs the same with geodp's exact noise.

The study itself (data, the four methods of each setting, the reimplemented MH sampler) is
:mod:`geodp.experiments.private_gd_study`; this script times it. Per setting and n it prints the
mean excess risk (± standard error over the repetitions), the median time per fit and the median
over repetitions of the per-repetition ratio time(MH) / time(exact noise) — the two run the same
algorithm with the same σ, so they target the same law and the same excess risk. Every repetition
runs every method on the same dataset (interleaved), so load drifts hit all of them alike.

Settings (module docstring of the study): SPD(2) mean (ε = 0.1, δ = 1e-3, T = n, step 0.01) and
PCA on S^49 (ε = 0.1, δ = 1e-3, their T and σ, step 0.2). A last line times single noise draws:
the lean MH of the study (the metric's Gram matrix hoisted out of the loop: a 3 × 3 quadratic
form per step), MH evaluating the metric norm at W in every step as their ``gpdf`` does
(``M.norm(W, vec2mat(xi))``: a solve and a trace per step), and the exact draw.

Run: ``PYTHONPATH=src python benchmarks/bench_private_gd.py [--quick] [--reps R]`` (default:
SPD n = 20, 50, 100, 200 and S^49 n = 100, 500, 1000, 2000 with 5 repetitions, about 4 minutes on
2 idle cores, nearly all of it in the MH baseline; quick: 2 sizes each, 2 repetitions). The speed
line alone: ``--spd-only 200 300`` (SPD(2), MH vs exact noise only, 3 repetitions by default).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time

import numpy as np

from geodp.experiments.private_gd_study import (
    BURN_IN,
    PCA_METHODS,
    SPD_METHODS,
    THIN,
    mh_tangent_coordinates,
    run_pca_study,
    run_spd_study,
)
from geodp.manifolds import SPD

MH, EXACT = "their (MH noise)", "their sigma, exact noise"


def summarise(rows, methods, label) -> None:
    print(f"\n{label}; load {os.getloadavg()[0]:.2f}")
    print("| n | method | excess risk (mean ± s.e.) | time per fit (median) | MH / exact per fit (median of ratios) |")
    print("|---|---|---|---|---|")
    for n in sorted({r["n"] for r in rows}):
        cell = [r for r in rows if r["n"] == n]
        by_rep = {}
        for r in cell:
            by_rep.setdefault(r["rep"], {})[r["method"]] = r["seconds"]
        ratios = [times[MH] / times[EXACT] for times in by_rep.values()]
        for method in methods:
            excess = [r["excess"] for r in cell if r["method"] == method]
            spread = statistics.stdev(excess) / math.sqrt(len(excess)) if len(excess) > 1 else float("nan")
            seconds = statistics.median(r["seconds"] for r in cell if r["method"] == method)
            ratio = f"{statistics.median(ratios):.0f}x (min {min(ratios):.0f}x)" if method == MH else ""
            print(f"| {n} | {method} | {statistics.fmean(excess):.3g} ± {spread:.2g} | {seconds:.4g} s | {ratio} |")


def _gpdf_style_mh(W, sigma, rng) -> np.ndarray:
    """MH as their ``gpdf`` evaluates it: the metric norm at W of vec2mat(xi) in every step."""
    steps, logu = rng.standard_normal((BURN_IN + THIN, 3)), np.log(rng.uniform(size=BURN_IN + THIN))
    v, energy = np.zeros(3), 0.0
    for s, lu in zip(steps, logu):
        w = v + s
        a = np.linalg.solve(W, np.array([[w[0], w[1]], [w[1], w[2]]]))
        e = float(np.trace(a @ a)) / (2 * sigma**2)
        if lu < energy - e:
            v, energy = w, e
    return v


def per_draw(draws: int = 10) -> str:
    """One tangent Gaussian draw at a point of SPD(2), interleaved: lean MH, gpdf-style MH, exact."""
    space, W, rng = SPD(2), np.array([[1.5, 0.3], [0.3, 0.8]]), np.random.default_rng(0)
    mats = [np.array([[1.0, 0.0], [0.0, 0.0]]), np.array([[0.0, 1.0], [1.0, 0.0]]), np.array([[0.0, 0.0], [0.0, 1.0]])]
    gram = np.array([[space.unchecked.inner(W, a, b) for b in mats] for a in mats])
    times: dict = {"lean MH": [], "gpdf-style MH": [], "exact": []}
    for _ in range(draws):
        for name, draw in (
            ("lean MH", lambda: mh_tangent_coordinates(gram, 2.0, rng)),
            ("gpdf-style MH", lambda: _gpdf_style_mh(W, 2.0, rng)),
            ("exact", lambda: space.unchecked.random_tangent(W, rng=rng)),
        ):
            start = time.perf_counter()
            draw()
            times[name].append(time.perf_counter() - start)
    med = {name: statistics.median(t) for name, t in times.items()}
    return (
        f"one noise draw on SPD(2): lean MH {med['lean MH'] * 1e3:.3g} ms, gpdf-style MH "
        f"{med['gpdf-style MH'] * 1e3:.3g} ms, exact {med['exact'] * 1e6:.3g} us "
        f"(gpdf-style / lean {med['gpdf-style MH'] / med['lean MH']:.1f}x)"
    )


def main(quick: bool = False, reps: int | None = None, spd_only=None) -> None:
    if spd_only:  # the speed line alone: their algorithm with MH noise vs exact noise at these n
        reps = reps or 3
        rows = run_spd_study(spd_only, reps, methods=(MH, EXACT))
        summarise(rows, (MH, EXACT), f"SPD(2) affine mean, MH vs exact noise only, {reps} reps")
        print(f"load after: {os.getloadavg()[0]:.2f}")
        return
    spd_sizes, pca_sizes = ((20, 50), (100, 500)) if quick else ((20, 50, 100, 200), (100, 500, 1000, 2000))
    reps = reps or (2 if quick else 5)
    start = time.perf_counter()
    summarise(
        run_spd_study(spd_sizes, reps), SPD_METHODS, f"SPD(2) affine mean, eps = 0.1, delta = 1e-3, T = n, {reps} reps"
    )
    summarise(run_pca_study(pca_sizes, reps), PCA_METHODS, f"PCA on S^49, eps = 0.1, delta = 1e-3, {reps} reps")
    print("\n" + per_draw())
    print(f"total {time.perf_counter() - start:.0f} s; load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--reps", type=int, default=None)
    parser.add_argument("--spd-only", type=int, nargs="+", metavar="N", help="only SPD(2) MH vs exact at these n")
    args = parser.parse_args()
    main(args.quick, args.reps, args.spd_only)
