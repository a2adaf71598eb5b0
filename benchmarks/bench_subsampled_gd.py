"""Benchmark: Poisson-subsampled private Riemannian gradient descent against full batch.

``geodp.optim.private_riemannian_gd`` on affine-invariant SPD(3), the Fréchet loss ½ρ² (gradient
−Log), n = 20,000 records within 1 of I, public ball of radius 1.5 around I, clip 3, ε = 1,
δ = 1e-5, T = 50 steps of size 0.5: full batch against ``batch = 200`` (q = 0.01). Runs are
interleaved (full, subsampled, full, …); the speed-up is the median of the per-pair time ratios.
Each fit's error is its distance to the non-private Fréchet mean. The σ calibration of the
subsampled run (dp-accounting's PLD, cached after the first call) is timed apart.

Run: ``python benchmarks/bench_subsampled_gd.py [--pairs 5]`` (prints the load average).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from geodp.frechet import frechet_mean
from geodp.manifolds import SPD
from geodp.optim import private_riemannian_gd, subsampled_noise_multiplier

N, BATCH, T, STEP, RADIUS = 20_000, 200, 50, 0.5, 1.5


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    space, center = SPD(3), np.eye(3)
    X = space.exp(
        center, space.random_unit_tangent(center, size=N, rng=0) * np.random.default_rng(1).uniform(size=(N, 1, 1))
    )
    truth = frechet_mean(space, X)
    start = time.perf_counter()
    subsampled_noise_multiplier(1.0, 1e-5, T, BATCH / N)
    print(f"σ calibration of the subsampled run (PLD bisection, first call): {time.perf_counter() - start:.2f} s")

    def fit(batch, seed):
        t0 = time.perf_counter()
        result = private_riemannian_gd(space, lambda x, D: -space.unchecked.log(x, D), X, epsilon=1.0, delta=1e-5,
                                       iterations=T, step=STEP, clip=2 * RADIUS, center=center, radius=RADIUS,
                                       batch=batch, random_state=seed)  # fmt: skip
        return time.perf_counter() - t0, float(space.dist(result.point, truth)), result.guarantee.scale

    ratios, rows = [], {None: [], BATCH: []}
    for seed in range(args.pairs):
        full = fit(None, seed)
        sub = fit(BATCH, seed)
        rows[None].append(full)
        rows[BATCH].append(sub)
        ratios.append(full[0] / sub[0])
    for batch, label in ((None, "full batch"), (BATCH, f"batch = {BATCH} (q = {BATCH / N})")):
        times, errors, scales = zip(*rows[batch], strict=True)
        summed = N if batch is None else batch
        print(f"{label:28s} time per fit {np.median(times):.3f} s, median error {np.median(errors):.4f}, "
              f"noise std σ·clip = {scales[0]:.3f} (per step, on a sum of {summed} records on average)")  # fmt: skip
    print(f"speed-up (median of {args.pairs} interleaved ratios): {np.median(ratios):.1f}x")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
