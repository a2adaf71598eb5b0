"""Cost of timing-safe mode: the wall time of PrivateFrechetMean.fit (or, with ``--estimator pga``,
PrivatePrincipalGeodesics.fit: footpoint and covariance, one component) with timing_safe=True (fixed
public work — the Karcher flow's whole iteration budget, fixed proposal counts — the deadline
calibrated on public stand-ins once per setting, then the padded release) against the default,
per space.

Interleaved in one process, medians of per-round ratios; prints the load. Run:
``python benchmarks/bench_timing_safe.py [--rounds R] [--estimator {mean,pga}] [--spaces NAME ...]``.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from geodp.manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Sphere
from geodp.models import PrivateFrechetMean, PrivatePrincipalGeodesics

ROUNDS = 7
N = 100


def cases():
    """``name → (space, centre, radius)`` at the guide's default settings."""
    spaces = {
        "Euclidean(3)": (Euclidean(3), 1.0),
        "Sphere(2)": (Sphere(2), 0.5),
        "Hyperbolic(2)": (Hyperbolic(2), 2.0),
        "SPD(3) affine": (SPD(3), 2.0),
        "SPD(3) affine, r = 10": (SPD(3), 10.0),  # beyond the accurate whitening's switch
        "SPD(3) log-Euclidean": (SPD(3, metric="log-euclidean"), 2.0),
        "KendallShape(8)": (KendallShape(8), 0.3),
    }
    out = {}
    for name, (space, radius) in spaces.items():
        center = space.reference_point()
        X = space.exp(center, 0.5 * radius * space.random_unit_tangent(center, size=N, rng=0))
        out[name] = (space, center, radius, X)
    return out


ESTIMATORS = {
    "mean": lambda space, center, radius, timing_safe: PrivateFrechetMean(
        space, epsilon=1.0, center=center, radius=radius, timing_safe=timing_safe
    ),
    "pga": lambda space, center, radius, timing_safe: PrivatePrincipalGeodesics(
        space, 1, epsilon=1.0, delta=1e-5, center=center, radius=radius, timing_safe=timing_safe
    ),
}


def _fit_time(estimator, space, center, radius, X, timing_safe):
    start = time.perf_counter()
    ESTIMATORS[estimator](space, center, radius, timing_safe).fit(X)
    return time.perf_counter() - start


def main(rounds=ROUNDS, estimator="mean", spaces=None):
    """Print the table (every space of :func:`cases`, or those named in ``spaces``)."""
    print(
        f"load average (1 min): {os.getloadavg()[0]:.2f}; {estimator}, n = {N}, epsilon = 1, "
        "default random_state (secure)"
    )
    print(f"{'space':24s} {'default (ms)':>13s} {'timing-safe (ms)':>17s} {'ratio (median)':>15s}")
    for name, (space, center, radius, X) in cases().items():
        if spaces and name not in spaces:
            continue
        _fit_time(estimator, space, center, radius, X, False)  # warm up
        plain, safe = [], []
        for _ in range(rounds):
            plain.append(_fit_time(estimator, space, center, radius, X, False))
            safe.append(_fit_time(estimator, space, center, radius, X, True))
        ratio = np.median(np.array(safe) / np.array(plain))
        print(f"{name:24s} {1e3 * np.median(plain):13.2f} {1e3 * np.median(safe):17.2f} {ratio:15.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="interleaved rounds (default: %(default)s)")
    parser.add_argument("--estimator", choices=tuple(ESTIMATORS), default="mean")
    parser.add_argument("--spaces", nargs="*", help="names of cases() to run (default: all)")
    args = parser.parse_args()
    main(args.rounds, args.estimator, args.spaces)
