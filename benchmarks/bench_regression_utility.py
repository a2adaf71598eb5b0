"""Benchmark: private geodesic regression's utility on K25's sphere setting (issue 22, item 3).

S², data from :func:`geodp.experiments.k25.setting.k25_sphere_data` (a geodesic of length 0.8 plus
noise), public ball of radius 0.7 around the geodesic's midpoint, covariate bounds [0, 1], residual
bound 0.1. For each (n, ε) column and each of ``--datasets`` data sets (seeds 0, 1, …; the tangent
release's constants were tuned on seeds 1000+), the error is the distance of the released fit at
x = 0 (``predict([0])``) to the non-private least-squares fit at x = 0. A row's entry is the median
over the data sets of each data set's median error (one release per data set for the MH rows unless
``--kng-releases`` says more). Rows:

- ``public centre``: the centre with zero velocity (releasing nothing about the data);
- ``tangent``: ``mechanism="tangent"`` (the default on curved spaces with one covariate), and the
  same forced to one, two and three passes (the public rule picks one below n·ε = 100, three where
  the two-pass clip's margin for the pilot exceeds a quarter of L·τ, two above; the constants of
  the three-pass rule were tuned on seeds 1000–1014);
- ``kng (MH)``: ``mechanism="kng"``, the joint KNG sampled by Metropolis–Hastings (the previous
  default).

Fit times are medians of ``fit`` (validation, clipping and the release) over the releases, cases
interleaved by data set. ``--write-docs`` replaces the generated table in docs/regression.md.

Run: ``python benchmarks/bench_regression_utility.py [--datasets 5] [--releases 20] [--kng-releases 1]
[--skip-kng] [--write-docs]``.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import time
import warnings

import numpy as np

import geodp.models.geodesic_tangent as tangent_module
from geodp.experiments.k25.setting import k25_sphere_data
from geodp.manifolds import Sphere
from geodp.models import PrivateGeodesicRegression
from geodp.regression import geodesic_regression

COLUMNS = ((20, 2.0), (100, 0.5), (100, 2.0), (1000, 0.5), (1000, 2.0))
TARGETS = (0.35, 0.25, 0.03, 0.02, 0.005)
RADIUS, TAU = 0.7, 0.1
SPACE = Sphere(2)
DOCS = pathlib.Path(__file__).resolve().parents[1] / "docs" / "regression.md"
START, END = "<!-- regression-utility:start -->", "<!-- regression-utility:end -->"


def _release(mechanism, rules, t, Y, center, epsilon, seed):
    """One fit with the pass rules ``rules`` (module constants); returns the model and the seconds
    (the caller computes the error at x = 0 from the model)."""
    saved = {name: getattr(tangent_module, name) for name in rules}
    for name, value in rules.items():
        setattr(tangent_module, name, value)
    try:
        model = PrivateGeodesicRegression(
            SPACE,
            epsilon=epsilon,
            center=center,
            radius=RADIUS,
            x_bounds=(0.0, 1.0),
            residual_bound=TAU,
            mechanism=mechanism,
            random_state=seed,
        )
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the MH rows' ApproximateSamplerWarning, said once here
            model.fit(t, Y)
        return model, time.perf_counter() - start
    finally:
        for name, value in saved.items():
            setattr(tangent_module, name, value)


def run(datasets, releases, kng_releases):
    inf = float("inf")
    rows = {
        "tangent (default)": ("tangent", {}, releases),
        "tangent, one pass only": ("tangent", {"TWO_PASS_MIN_N_EPSILON": inf}, releases),
        "tangent, two passes always": ("tangent", {"TWO_PASS_MIN_N_EPSILON": 0.0, "THREE_PASS_MARGIN": inf}, releases),
        "tangent, three passes always": (
            "tangent",
            {"TWO_PASS_MIN_N_EPSILON": 0.0, "THREE_PASS_MARGIN": 0.0},
            releases,
        ),
    }
    if kng_releases:
        rows["kng (MH, previous default)"] = ("kng", {}, kng_releases)
    errors = {name: [] for name in ["public centre", *rows]}
    times = {name: [] for name in rows}
    for n, epsilon in COLUMNS:
        column = {name: [] for name in errors}
        column_times = {name: [] for name in rows}
        for k in range(datasets):
            t, Y, center = k25_sphere_data(n, rng=k)
            p_hat, _ = geodesic_regression(SPACE, t[:, None], Y)
            column["public centre"].append(float(SPACE.dist(center, p_hat)))
            per = {name: [] for name in rows}
            for j in range(max(spec[2] for spec in rows.values())):
                for name, (mechanism, rules, count) in rows.items():
                    if j < count:
                        model, seconds = _release(mechanism, rules, t, Y, center, epsilon, 10_000 * k + j)
                        per[name].append(float(SPACE.dist(model.predict([0.0])[0], p_hat)))
                        column_times[name].append(seconds)
            for name in rows:
                column[name].append(float(np.median(per[name])))
        for name in errors:
            errors[name].append(float(np.median(column[name])))
        for name in rows:
            times[name].append(float(np.median(column_times[name])))
        print(f"n = {n}, ε = {epsilon}: " + ", ".join(f"{k} {v[-1]:.4g}" for k, v in errors.items()), flush=True)
    return errors, times


def table(errors, times, datasets, releases, kng_releases):
    head = "| n, ε | " + " | ".join(f"{n}, {e:g}" for n, e in COLUMNS) + " |"
    lines = [head, "|---" * (len(COLUMNS) + 1) + "|"]
    lines.append("| target (issue 22) | " + " | ".join(f"≤ {t:g}" for t in TARGETS) + " |")
    for name, values in errors.items():
        lines.append(f"| {name} | " + " | ".join(f"{v:.3g}" for v in values) + " |")
    for name, values in times.items():
        lines.append(f"| fit time, {name} (s) | " + " | ".join(f"{v:.3g}" for v in values) + " |")
    load = os.getloadavg()[0]
    note = (
        f"Median over {datasets} data sets (seeds 0–{datasets - 1}) of each data set's median error over "
        f"{releases} tangent releases" + (f" and {kng_releases} MH release(s)" if kng_releases else "") + "; "
        f"load average {load:.1f} on the machine when measured."
    )
    return "\n".join(lines) + "\n\n" + note


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=5)
    parser.add_argument("--releases", type=int, default=20)
    parser.add_argument("--kng-releases", type=int, default=1)
    parser.add_argument("--skip-kng", action="store_true")
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    kng = 0 if args.skip_kng else args.kng_releases
    errors, times = run(args.datasets, args.releases, kng)
    text = table(errors, times, args.datasets, args.releases, kng)
    print(text)
    if args.write_docs:
        page = DOCS.read_text()
        before, rest = page.split(START)
        after = rest.split(END)[1]
        generated = f"{START}\n<!-- generated by benchmarks/bench_regression_utility.py; do not edit -->\n{text}\n"
        DOCS.write_text(before + generated + END + after)
        print(f"wrote {DOCS.name}")


if __name__ == "__main__":
    main()
