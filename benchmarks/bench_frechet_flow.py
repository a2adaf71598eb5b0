"""Benchmark: geodp's monotone Karcher flow against pyRiemann and geomstats, in one run.

The flow takes a Barzilai–Borwein trial step and keeps it only when it passes the Armijo test
(otherwise the safe step 1/L from the Hessian bound), so it converges on every dataset of the
public ball; this measures what that safety costs against the anchors. Runs are interleaved
(geodp, anchor, geodp, anchor, …) and we report the median of the per-round time ratios.

1. Affine-invariant SPD(10), n = 2,000, gradient norm ≤ 1e-8: pyRiemann ``mean_riemann``.
2. Sphere S², n = 10,000, records within 0.7 of the north pole: geomstats ``FrechetMean``.
3. Hyperbolic H², n = 500, records in the ball of radius 10 (the audit's divergent setting):
   geomstats ``FrechetMean`` (its default gradient descent).

Run: ``python benchmarks/bench_frechet_flow.py [rounds]`` (pyRiemann and geomstats come with the
test extras).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from geodp import frechet_mean
from geodp.manifolds import SPD, Hyperbolic, Sphere
from geodp.manifolds import matrix_functions as mf


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def interleaved(ours, anchor, rounds):
    """Median of per-round ratios ours/anchor, and the medians of each time."""
    pairs = [(timed(ours)[0], timed(anchor)[0]) for _ in range(rounds)]
    mine, theirs = np.array(pairs).T
    return float(np.median(mine / theirs)), float(np.median(mine)), float(np.median(theirs))


def ball(space, center, radius, n, rng):
    u = space.random_unit_tangent(center, size=n, rng=rng)
    return space._polar_exp(center, u, radius * np.sqrt(rng.uniform(size=n)))


def main(rounds: int = 7) -> None:
    from geomstats.geometry.hyperboloid import Hyperboloid
    from geomstats.geometry.hypersphere import Hypersphere
    from geomstats.learning.frechet_mean import FrechetMean
    from pyriemann.utils.mean import mean_riemann

    rng = np.random.default_rng(0)
    rows = []

    spd = SPD(10)
    X = mf.expm(mf.invvecd(rng.standard_normal((2000, spd.dim)), 10))
    rows.append(
        (
            "SPD(10) affine, n=2000",
            "pyRiemann mean_riemann",
            interleaved(lambda: frechet_mean(spd, X, tol=1e-8), lambda: mean_riemann(X, tol=1e-8, maxiter=200), rounds),
        )
    )

    sphere = Sphere(2)
    north = np.array([0.0, 0.0, 1.0])
    S = ball(sphere, north, 0.7, 10_000, rng)
    gs_sphere = FrechetMean(Hypersphere(2))
    gs_sphere.set(max_iter=500, epsilon=1e-8)
    rows.append(
        (
            "Sphere(2), n=10000, r=0.7",
            "geomstats FrechetMean",
            interleaved(lambda: frechet_mean(sphere, S, tol=1e-8, init=north), lambda: gs_sphere.fit(S), rounds),
        )
    )

    hyper = Hyperbolic(2)
    H = ball(hyper, hyper.origin, 10.0, 500, rng)
    gs_hyper = FrechetMean(Hyperboloid(2))
    gs_hyper.set(max_iter=500, epsilon=1e-8)
    rows.append(
        (
            "Hyperbolic(2), n=500, r=10",
            "geomstats FrechetMean",
            interleaved(lambda: frechet_mean(hyper, H, tol=1e-8, init=hyper.origin), lambda: gs_hyper.fit(H), rounds),
        )
    )

    _, (_, info) = timed(lambda: frechet_mean(hyper, H, tol=1e-8, init=hyper.origin, return_info=True))
    gs_mean = gs_hyper.fit(H).estimate_
    gs_grad = float(hyper.norm(gs_mean, np.mean(hyper.log(gs_mean, H), axis=0)))

    print(f"{'setting':28} | {'anchor':24} | geodp/anchor (median of ratios) | geodp s | anchor s")
    for setting, anchor, (ratio, mine, theirs) in rows:
        print(f"{setting:28} | {anchor:24} | {ratio:31.2f} | {mine:7.4f} | {theirs:8.4f}")
    print(
        f"H² r=10: geodp gradient norm {info.grad_norm:.1e} after {info.n_iter} iterations; "
        f"geomstats' estimate has gradient norm {gs_grad:.1e}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rounds", nargs="?", type=int, default=7, help="interleaved rounds (default 7)")
    args = parser.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        main(args.rounds)
