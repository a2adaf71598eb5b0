"""Cost of the polar proposal's fixed work (timing-safe mode): building the exact in-ball polar
proposal of a truncated Laplace / KNG for an anchor at the centre and on the boundary, by the
default path (work grows with the anchor's distance to the centre) and under fixed work (every
refinement level on the public grid ``[0, 2r]``: the same work for every anchor).

Interleaved in one process, medians over rounds; prints the load and the nodes each build
evaluated (counted, ``geodp.work.counting``). Run:
``python benchmarks/bench_polar_fixed_work.py [--rounds R] [--large]`` (``--large`` adds
H¹⁰⁰⁰ with r = 3 and KendallShape(8), seconds to tens of seconds per fixed-work build).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from geodp.distributions.ball_polar import exact_ball_proposal
from geodp.manifolds import Hyperbolic, KendallShape, Sphere
from geodp.work import counting, fixed_work_section

ROUNDS = 3


def cases(large):
    """``name → (space, radius, rate)``: the rate 1/σ of a Laplace at ε = 1, n ≈ 100."""
    out = {
        "Sphere(2) r=0.5": (Sphere(2), 0.5, 50.0),
        "Hyperbolic(2) r=2": (Hyperbolic(2), 2.0, 12.5),
        "Hyperbolic(100) r=3": (Hyperbolic(100), 3.0, 1.0),
    }
    if large:
        out["Hyperbolic(1000) r=3"] = (Hyperbolic(1000), 3.0, 1.0)
        out["KendallShape(8) r=0.3"] = (KendallShape(8), 0.3, 150.0)
    return out


def _build(space, center, anchor, rate, radius, fixed):
    with counting() as work:
        start = time.perf_counter()
        if fixed:
            with fixed_work_section(1e-10):
                exact_ball_proposal(space, anchor, center, rate, radius)
        else:
            exact_ball_proposal(space, anchor, center, rate, radius)
        elapsed = time.perf_counter() - start
    return elapsed, work["polar-nodes"]


def main(rounds=ROUNDS, large=False):
    print(f"load average (1 min): {os.getloadavg()[0]:.2f}; medians of {rounds} interleaved rounds")
    header = ("case", "anchor", "default ms", "nodes", "fixed ms", "nodes", "ratio")
    print("{:24s} {:>8s} {:>11s} {:>7s} {:>10s} {:>7s} {:>7s}".format(*header))
    for name, (space, radius, rate) in cases(large).items():
        center = space.reference_point()
        anchors = {
            "centre": center.copy(),
            "boundary": space.exp(center, radius * space.random_unit_tangent(center, rng=0)),
        }
        times = {(a, f): [] for a in anchors for f in (False, True)}
        nodes = {}
        for _ in range(rounds):
            for a, anchor in anchors.items():
                for fixed in (False, True):
                    elapsed, count = _build(space, center, anchor, rate, radius, fixed)
                    times[a, fixed].append(elapsed)
                    nodes[a, fixed] = count
        for a in anchors:
            plain, safe = np.median(times[a, False]), np.median(times[a, True])
            print(
                f"{name:24s} {a:>8s} {1e3 * plain:11.1f} {nodes[a, False]:7d} {1e3 * safe:10.1f} "
                f"{nodes[a, True]:7d} {safe / plain:7.1f}"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--large", action="store_true")
    args = parser.parse_args()
    main(args.rounds, args.large)
