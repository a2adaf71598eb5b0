"""Exact Riemannian Laplace release vs R21's MCMC (burn-in 10,000, thinning 100) on S² and SPD(2).

R21 sample the Laplace mechanism by random-walk MH. Per release that is either a fresh chain
(10,000 burn-in steps + 100 steps) or, amortised along one long chain, 100 steps (thinning). Both
are timed with geodp's own vectorised MH (one chain, the same geometry code), so the ratio
measures the sampling method, not the implementation language. The exact release is timed
through the public mechanism (``LaplaceMechanism.randomise``: validation included).

Run: ``python benchmarks/bench_laplace_curved.py``
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from geodp.distributions.mcmc import random_walk_metropolis
from geodp.manifolds import SPD, Sphere
from geodp.mechanisms import LaplaceMechanism
from geodp.sensitivity import frechet_mean_sensitivity


def per_call(fn, repeats):
    fn()  # warm caches (radial law quadrature, imports)
    t = time.perf_counter()
    for _ in range(repeats):
        fn()
    return (time.perf_counter() - t) / repeats


def bench(space, eta, radius, n, epsilon):
    delta = frechet_mean_sensitivity(space, radius, n)
    mech = LaplaceMechanism(space, epsilon=epsilon, sensitivity=delta)
    rng = np.random.default_rng(0)
    exact = per_call(lambda: mech.randomise(eta, rng=rng), 2000)
    batch = per_call(lambda: mech.randomise(eta, rng=rng, size=10_000), 5) / 10_000
    law = mech.distribution(eta)

    def mh(steps):
        return random_walk_metropolis(
            space, law.log_density, eta[None], burn_in=steps, thinning=100, step_size=mech.scale, rng=rng
        )

    t = time.perf_counter()
    result = mh(10_000)
    fresh = time.perf_counter() - t
    thin = fresh * 100 / 10_100
    print(f"\n{space!r}: r = {radius}, n = {n}, ε = {epsilon}, σ = {mech.scale:.4g}; sampler: {law.sampler}")
    print(f"  MH diagnostics: {result.diagnostics}")
    print(f"  {'method':<48}{'time per release':>18}{'vs exact':>10}")
    for name, value in [
        ("geodp exact, one release (mechanism.randomise)", exact),
        ("geodp exact, batch of 10,000 (per release)", batch),
        ("R21 MH, fresh chain: 10,000 burn-in + 100", fresh),
        ("R21 MH, amortised along one chain: 100 steps", thin),
    ]:
        print(f"  {name:<48}{value * 1e3:>15.4f} ms{value / exact:>10.3g}")


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()  # --help
    bench(Sphere(2), np.array([0.0, 0.0, 1.0]), radius=0.5, n=100, epsilon=1.0)
    bench(SPD(2), np.diag([2.0, 0.5]), radius=1.0, n=100, epsilon=1.0)
