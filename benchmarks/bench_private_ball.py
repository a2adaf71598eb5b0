"""Benchmark: a data ball chosen privately against the coarse public ball (issue 22, item 1).

For each setting, each repetition r (seed r) releases the Fréchet mean (Laplace) two ways on the
same records and measures the geodesic distance of the release to the non-private mean of the
records:

* **coarse**: ``PrivateFrechetMean`` at the whole ε with the coarse public ball;
* **private ball**: :func:`geodp.domain.private_ball` at ``share·ε`` (its centre at
  ``center_share`` of that), then ``PrivateFrechetMean(ball=...)`` at ``(1 − share)·ε``.

Each row is the median over the repetitions; "ratio" is private-ball error / coarse error (the
issue's target: ≤ 1/3 at share 0.1). Settings:

* ``sphere-10x``: S², n = 2,000 records around a point 0.3 from the coarse centre (tangent
  Gaussian, σ = 0.025 per axis: 90% within 0.053, all within 0.098), coarse radius 0.7 (7× the
  largest distance, 13× the 90% one). On the unit sphere the Fréchet mean
  needs r < π/4 ≈ 0.785 (R21 Assumption 1), so "10× too large" means data 10× more concentrated
  than the largest admissible ball, not a ball of radius 3.
* ``sphere-10x-n10k``: the same with n = 10,000.
* ``sphere-0.3``: S², n = 2,000 records around that point (σ = 0.1: 90% within 0.21, all within
  0.39), coarse radius 0.75: only 2–3.5× in radius, but the curvature factor h(0.75) = 0.12 makes the coarse
  sensitivity 23× that of a ball of radius 0.35.
* ``spd4``: affine-invariant SPD(4), n = 10,000 records around a point 2 from I (σ = 0.1 per
  entry of the tangent matrix: 90% within 0.71, all within 1.25), coarse radius 5 around I (4× the
  largest distance, 7× the 90% one).
* ``connectomes``: the 86 fMRI connectomes (SPD(28), affine-invariant, shrinkage 0.5), coarse
  radius 14.15 around I (the provable public radius); the data lie within 2.9 of their mean.
  At ε = 1 (n = 86, dimension 406) the affine-invariant Laplace is not normalisable and
  MH-sampled: this row uses ε = 1,000.
* ``connectomes-le``: the same records on the log-Euclidean metric (an exact ℓ2 Laplace in the
  chart) at the issue's total ε = 1, with the radius-only ball (``center_share=0``: I is kept,
  the records lie 2.8–3.6 from it) at quantile levels the strength rule admits at n = 86
  (0.5 and 0.75). A private centre would be a Laplace release in 406 dimensions from 86
  records at ε ≤ 0.2, far noisier than the coarse radius.

Run: ``python benchmarks/bench_private_ball.py [--repeats 20] [--settings ...] [--save rows.json]
[--write]``; ``--write`` replaces the generated table in docs/guide.md ("Choosing the data ball");
``--load a.json b.json --write`` builds it from runs saved separately (settings run in parallel).
The connectomes need geomstats.
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
import warnings
from pathlib import Path

import numpy as np

from geodp import frechet_mean
from geodp.domain import private_ball
from geodp.experiments.generated_docs import END, generated_section
from geodp.manifolds import SPD, Sphere
from geodp.models import PrivateFrechetMean

SETTINGS = ("sphere-10x", "sphere-10x-n10k", "sphere-0.3", "spd4", "connectomes", "connectomes-le")
BEGIN = "<!-- BEGIN GENERATED: python benchmarks/bench_private_ball.py --write (do not edit by hand) -->"
SHARES = (0.05, 0.1, 0.2)
QUANTILES = (0.8, 0.9, 0.95)
CENTER_SHARES = (0.5, 0.7)
# Radius only, at levels whose strength (ε_ball·n·min(q, 1 − q)/2) is ≥ 0.5 at ε_ball = 0.05, n = 86.
RADIUS_ONLY = {"quantiles": (0.5, 0.75), "center_shares": (0.0,)}


def combos_of(name):
    """The (ball share, quantile level, centre share) triples measured on a setting."""
    grid = RADIUS_ONLY if name == "connectomes-le" else {"quantiles": QUANTILES, "center_shares": CENTER_SHARES}
    return list(itertools.product(SHARES, grid["quantiles"], grid["center_shares"]))


def _cluster(space, base, sigma, n, seed):
    rng = np.random.default_rng(seed)
    return space.exp(base, space.to_tangent(base, sigma * rng.normal(size=(n, *space.point_shape))))


def setting(name):
    """``(space, X, coarse_center, coarse_radius, epsilons)`` of a named setting."""
    if name.startswith("sphere"):
        space = Sphere(2)
        north = np.array([0.0, 0.0, 1.0])
        base = space.exp(north, np.array([0.3, 0.0, 0.0]))
        sigma, radius = (0.1, 0.75) if name == "sphere-0.3" else (0.025, 0.7)
        n = 10000 if name.endswith("n10k") else 2000
        return space, _cluster(space, base, sigma, n, 0), north, radius, (1.0,)
    if name == "spd4":
        space = SPD(4)
        base = space.exp(np.eye(4), np.diag([1.2, -1.0, 0.8, -1.0]) / np.linalg.norm([1.2, -1.0, 0.8, -1.0]) * 2.0)
        return space, _cluster(space, base, 0.1, 10000, 0), np.eye(4), 5.0, (1.0,)
    from geodp.datasets import load_connectomes

    data = load_connectomes(shrinkage=0.5)
    if name == "connectomes-le":
        return SPD(28, metric="log-euclidean"), data.matrices, np.eye(28), data.radius, (1.0,)
    return SPD(28), data.matrices, np.eye(28), data.radius, (1000.0,)


def _error(space, model, mean) -> float:
    """Distance of the release to ``mean``; in the chart on flat spaces (a release far outside
    the data, as at ε = 1 on the connectomes, need not be a float64 matrix)."""
    if space.is_flat:
        return float(np.linalg.norm(model.mean_coordinates_ - space.to_coordinates(mean)))
    return float(space.dist(model.mean_, mean))


def _errors(space, X, center, radius, epsilon, mean, seed, combos):
    coarse = PrivateFrechetMean(space, epsilon=epsilon, center=center, radius=radius, random_state=seed).fit(X)
    out = {"coarse": _error(space, coarse, mean)}
    for share, level, center_share in combos:
        ball = private_ball(
            space,
            X,
            epsilon=share * epsilon,
            center=center,
            radius=radius,
            quantile=level,
            center_share=center_share,
            random_state=seed,
        )
        model = PrivateFrechetMean(space, epsilon=(1.0 - share) * epsilon, ball=ball, random_state=seed + 10**6).fit(X)
        out[(share, level, center_share)] = (_error(space, model, mean), ball.radius)
    return out


def run(names, repeats):
    rows = []
    for name in names:
        combos = combos_of(name)
        space, X, center, radius, epsilons = setting(name)
        mean = frechet_mean(space, X)
        spread = np.quantile(np.asarray(space.dist(mean, X)), [0.9, 1.0])
        for epsilon in epsilons:
            start = time.perf_counter()
            runs = [_errors(space, X, center, radius, epsilon, mean, seed, combos) for seed in range(repeats)]
            coarse = float(np.median([r["coarse"] for r in runs]))
            for combo in combos:
                error = float(np.median([r[combo][0] for r in runs]))
                new_radius = float(np.median([r[combo][1] for r in runs]))
                rows.append(
                    dict(
                        setting=name,
                        n=len(X),
                        epsilon=epsilon,
                        coarse_radius=radius,
                        data_q90=float(spread[0]),
                        data_max=float(spread[1]),
                        share=combo[0],
                        quantile=combo[1],
                        center_share=combo[2],
                        coarse_error=coarse,
                        ball_error=error,
                        ball_radius=new_radius,
                        ratio=error / coarse,
                    )
                )
            print(f"{name} ε={epsilon}: {time.perf_counter() - start:.1f} s", flush=True)
    return rows


def table(rows, repeats) -> str:
    lines = [
        f"Median over {repeats} repetitions of the distance of the released mean to the non-private one; "
        "ratio = private ball / coarse (target ≤ 0.33 at share 0.1).",
        "",
        "| setting | n | ε | coarse r | data r (90% / max) | ball share | q | centre share | coarse error "
        "| ball error | ball r (median) | ratio |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['setting']} | {r['n']} | {r['epsilon']:g} | {r['coarse_radius']:.3g} | "
            f"{r['data_q90']:.3g} / {r['data_max']:.3g} | {r['share']:g} | {r['quantile']:g} | {r['center_share']:g} | "
            f"{r['coarse_error']:.3g} | {r['ball_error']:.3g} | {r['ball_radius']:.3g} | {r['ratio']:.3f} |"
        )
    return "\n".join(lines)


def main():
    """Run the settings, print the table, and with ``--write`` put it into docs/guide.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--settings", nargs="+", default=list(SETTINGS))
    parser.add_argument("--save", help="write the rows to this JSON file")
    parser.add_argument("--load", nargs="+", help="build the table from rows saved by --save (no run)")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    if args.load:
        saved = [json.loads(Path(path).read_text()) for path in args.load]
        rows, repeats = [row for s in saved for row in s["rows"]], min(s["repeats"] for s in saved)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rows, repeats = run(args.settings, args.repeats), args.repeats
    if args.save:
        Path(args.save).write_text(json.dumps({"repeats": repeats, "rows": rows}, indent=1) + "\n")
    text = table(rows, repeats)
    print(text)
    if args.write:
        page = Path(__file__).resolve().parents[1] / "docs" / "guide.md"
        doc = page.read_text()
        section = f"{BEGIN}\n{text}\n{END}"
        page.write_text(doc.replace(generated_section(doc, BEGIN), section))


if __name__ == "__main__":
    main()
