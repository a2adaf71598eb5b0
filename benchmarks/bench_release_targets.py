"""Benchmark: issue 13's end-to-end release targets, timed as a user runs them.

``PrivateFrechetMean(...).fit`` (validation, clipping, the mean and the release) for

1. the default affine-invariant ``SPD(16)`` Laplace release of 200 covariances within radius 2 of
   the identity (target: ``exact: True`` in < 50 ms);
2. the exact Laplace on ``Sphere(200)``, n = 100 records in a cap of radius 0.5 (target < 50 ms).

Rounds alternate the order of the cases; each line is the median over the rounds.

Run: ``python benchmarks/bench_release_targets.py [--rounds 15]``.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

from geodp.datasets.synthetic import polar_cap
from geodp.manifolds import SPD, Sphere
from geodp.models import PrivateFrechetMean


def spd_records(n, k, max_radius, seed=0):
    """``n`` SPD(k) matrices exp(V), V symmetric with Frobenius norm uniform in [0, max_radius)."""
    rng = np.random.default_rng(seed)
    V = rng.standard_normal((n, k, k))
    V = (V + np.swapaxes(V, 1, 2)) / 2
    V *= (rng.uniform(0, max_radius, n) / np.linalg.norm(V, axis=(1, 2)))[:, None, None]
    w, U = np.linalg.eigh(V)
    return (U * np.exp(w)[:, None, :]) @ np.swapaxes(U, 1, 2)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    X16 = spd_records(200, 16, 1.9)
    XS = polar_cap(100, radius=0.5, dim=200, rng=1)
    north = np.zeros(201)
    north[-1] = 1.0
    cases = {
        "SPD(16) affine Laplace, n = 200, r = 2": lambda: PrivateFrechetMean(
            SPD(16), epsilon=1.0, center=np.eye(16), radius=2.0
        ).fit(X16),
        "Sphere(200) Laplace, n = 100, r = 0.5": lambda: PrivateFrechetMean(
            Sphere(200), epsilon=1.0, center=north, radius=0.5
        ).fit(XS),
    }
    exact = {name: fit().privacy_report_.to_dict()["exact"] for name, fit in cases.items()}
    times = {name: [] for name in cases}
    for r in range(args.rounds):
        order = list(cases.items())
        for name, fit in order if r % 2 == 0 else order[::-1]:
            start = time.perf_counter()
            fit()
            times[name].append(time.perf_counter() - start)
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; {args.rounds} rounds\n")
    print("| release | exact | median | min |\n|---|---|---|---|")
    for name, ts in times.items():
        print(f"| {name} | {exact[name]} | {1e3 * np.median(ts):.1f} ms | {1e3 * min(ts):.1f} ms |")


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        main()
