"""MH per-step cost with and without the state cache (affine-invariant SPD), interleaved.

The chains of :func:`geodp.distributions.mcmc.random_walk_metropolis` keep each state's
log-density and, on affine-invariant SPD, a factor ``x = L Lᵀ`` (proposal ``L Exp(sS) Lᵀ``: one
``k × k`` eigendecomposition), and the laws' ``factored_log_density`` uses cached inverse roots of
the footpoint and centre. ``state_cache=False`` is the former step (square roots of the state
recomputed for the tangent draw, ``exp`` and ``project``; the laws' plain ``log_density``). Both
run the same number of steps on the same law; rounds alternate the two and the median per-step
time is reported, with the ratio and the curator diagnostics of the cached run.

Cases: truncated Laplace on SPD(5) and SPD(16) (1 and 16 chains), KNG on SPD(5) (n = 100).

Run: ``python benchmarks/bench_mh.py [--rounds 5] [--steps 2000]``
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from geodp.distributions import KNGDistribution
from geodp.distributions.laplace import RiemannianLaplace
from geodp.distributions.mcmc import random_walk_metropolis
from geodp.manifolds import SPD


def laplace_case(k, chains):
    space, c = SPD(k), np.eye(k)
    v = space.random_tangent(c, rng=1)
    eta = space.exp(c, 0.3 * v / space.norm(c, v))
    law = RiemannianLaplace(space, eta, 0.05, center=c, radius=0.5)
    support = lambda x: space._dist(c, x) <= 0.5  # noqa: E731

    def run(cache, steps, seed):
        return random_walk_metropolis(
            space,
            law.log_density,
            np.repeat(c[None], chains, axis=0),
            burn_in=steps // 2,
            thinning=steps // 2,
            step_size=0.05,
            in_support=support,
            rng=seed,
            state_cache=cache,
            factored_log_density=law._factored_log_density,
        )

    return f"Laplace SPD({k}), {chains} chain(s)", run


def kng_case(k, n):
    space, c = SPD(k), np.eye(k)
    X, _ = space.clip_to_ball(space.exp(c, 0.2 * space.random_tangent(c, size=n, rng=0) / np.sqrt(space.dim)), c, 1.0)
    law = KNGDistribution(space, X, 0.01, center=c, radius=1.0, sampler="mcmc")
    support = lambda x: space._dist(c, x) <= 1.0  # noqa: E731

    def run(cache, steps, seed):
        return random_walk_metropolis(
            space,
            law.log_density,
            c[None],
            burn_in=steps // 2,
            thinning=steps // 2,
            step_size=0.01,
            in_support=support,
            rng=seed,
            state_cache=cache,
            factored_log_density=law._factored_log_density,
        )

    return f"KNG SPD({k}), n = {n}, 1 chain", run


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=2000)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    cases = [laplace_case(5, 1), laplace_case(5, 16), laplace_case(16, 1), kng_case(5, 100)]
    print(f"{'case':34s} {'before µs/step':>15s} {'after µs/step':>14s} {'speedup':>8s}  diagnostics (after)")
    for name, run in cases:
        times = {True: [], False: []}
        for r in range(args.rounds):
            for cache in (True, False) if r % 2 else (False, True):
                t0 = time.perf_counter()
                result = run(cache, args.steps, r)
                times[cache].append((time.perf_counter() - t0) / args.steps)
                if cache:
                    diag = result.diagnostics
        before, after = np.median(times[False]) * 1e6, np.median(times[True]) * 1e6
        print(
            f"{name:34s} {before:15.0f} {after:14.0f} {before / after:7.2f}x  acceptance "
            f"{diag.acceptance_rate:.2f}, min ESS {diag.min_ess:.0f}, split-R̂ {diag.max_rhat:.3f}"
        )


if __name__ == "__main__":
    main()
