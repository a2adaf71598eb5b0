"""Releases that must end within public work: the audit's flat-regression pair and the diabetes
case, fit after fit, with the charge and the fallback counted.

D0 holds 10⁶ records, half at (x = 0.5 − 1.5e-4, y = −1) and half at (0.5 + 1.5e-4, +1); D1 replaces
one by (1, −1). Before the termination rule the capped exact sampler gave up (after charging) on
D0 in about half the fits and on D1 in none. Each fit must release; the table shows how often
the fixed-length MH chain finished the draw (curator-only), the median and largest fit time, and
how many distinct reports were published (must be 1). Run:
``python benchmarks/bench_termination.py [--fits 40]``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from geodp.accountant import BudgetAccountant
from geodp.errors import ApproximateSamplerWarning
from geodp.manifolds import Euclidean
from geodp.models import PrivateGeodesicRegression, PrivateLinearRegression


def audit_pair(n: int = 1_000_000):
    x = np.r_[np.full(n // 2, 0.5 - 1.5e-4), np.full(n - n // 2, 0.5 + 1.5e-4)]
    y = np.r_[-np.ones(n // 2), np.ones(n - n // 2)][:, None]
    x1, y1 = x.copy(), y.copy()
    x1[0], y1[0] = 1.0, -1.0
    return {"D0": (x, y), "D1": (x1, y1)}


def run(make, datasets, fits: int) -> list[str]:
    rows = []
    for name, (X, y) in datasets.items():
        released = fell_back = 0
        times, reports = [], set()
        for seed in range(fits):
            accountant = BudgetAccountant(epsilon=1e6)
            start = time.perf_counter()
            model = make(seed, accountant).fit(X, y)
            times.append(time.perf_counter() - start)
            released += accountant.total_spent[0] > 0
            fell_back += bool(model.curator_diagnostics_.sampler_fell_back)
            reports.add(str(model.privacy_report_))
        rows.append(
            f"| {name} | {released}/{fits} | {fell_back} | {np.median(times):.2f} s | {max(times):.2f} s "
            f"| {len(reports)} |"
        )
    return rows


def main(fits: int) -> None:
    warnings.simplefilter("ignore", ApproximateSamplerWarning)
    print("| dataset | released | MH finished the draw | median time | largest | reports |")
    print("|---|---|---|---|---|---|")

    def regression(seed, accountant):
        return PrivateGeodesicRegression(
            Euclidean(1),
            epsilon=1.0,
            center=[0.0],
            radius=1.0,
            x_bounds=(0, 1),
            accountant=accountant,
            random_state=seed,
        )

    for row in run(regression, audit_pair(), fits):
        print(row)
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    for epsilon in (30.0, 100.0):

        def linear(seed, accountant, epsilon=epsilon):
            return PrivateLinearRegression(
                epsilon=epsilon,
                bounds_X=(X.min(0), X.max(0)),
                bounds_y=(y.min(), y.max()),
                accountant=accountant,
                random_state=seed,
            )

        for row in run(linear, {f"diabetes, ε = {epsilon:g}": (X, y)}, max(1, fits // 8)):
            print(row)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fits", type=int, default=40, help="fits per dataset (diabetes: fits/8)")
    main(parser.parse_args().fits)
