"""Cost of the fixed-work Newton step on affine-invariant SPD: the inexact Newton direction of
the Karcher flow (conjugate gradients on the exact Hessian) by the default path, which stops at
its residual target, against fixed work (timing-safe mode), which makes all 10 Hessian products.

Two points: the start of the flow (the default makes several CG steps) and the mean (past
convergence, where the fixed-work flow keeps iterating: the default stops after one step).
Interleaved in one process, medians over rounds; prints the load and the CG steps counted.
Run: ``python benchmarks/bench_newton_cg_fixed_work.py [--rounds R]``.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from geodp.frechet import _direction, frechet_mean
from geodp.manifolds import SPD
from geodp.records import InMemoryRecords
from geodp.work import counting, fixed_work_section

ROUNDS = 20
N = 100


def _call(space, x, state, fixed):
    direction, grad_norm, _, _, hessian = state
    with counting() as work:
        start = time.perf_counter()
        if fixed:
            with fixed_work_section(1e-10):
                space._newton_direction(x, direction, hessian, max(grad_norm, 1e-10), 1e-10)
        else:
            space._newton_direction(x, direction, hessian, max(grad_norm, 1e-10), 1e-10)
        elapsed = time.perf_counter() - start
    return elapsed, work["cg-steps"]


def main(rounds=ROUNDS):
    print(f"load average (1 min): {os.getloadavg()[0]:.2f}; n = {N}; medians of {rounds} interleaved rounds")
    header = ("point", "default µs", "CG steps", "fixed µs", "CG steps", "ratio")
    print("{:22s} {:>11s} {:>9s} {:>9s} {:>9s} {:>7s}".format(*header))
    for k in (3, 10):
        space = SPD(k)
        center = space.reference_point()
        X = space.exp(center, space.random_unit_tangent(center, size=N, rng=0))
        records = InMemoryRecords(space, X)
        mean = frechet_mean(space, X)
        for name, x in (("start (identity)", center), ("the mean", mean)):
            state = _direction(space, records, x)
            times, steps = {False: [], True: []}, {}
            for _ in range(rounds):
                for fixed in (False, True):
                    elapsed, steps[fixed] = _call(space, x, state, fixed)
                    times[fixed].append(elapsed)
            plain, safe = np.median(times[False]), np.median(times[True])
            row = (f"SPD({k}) {name}", 1e6 * plain, steps[False], 1e6 * safe, steps[True], safe / plain)
            print("{:22s} {:11.0f} {:9d} {:9.0f} {:9d} {:7.1f}".format(*row))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    main(parser.parse_args().rounds)
