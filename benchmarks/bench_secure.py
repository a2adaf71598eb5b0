"""Cost per release of the default, secure mode (random_state=None) against the seeded float path.

Interleaved in one process; the table shows the median time per release of each mode and the
median of the per-round ratios default/seeded. Run: ``python benchmarks/bench_secure.py``.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from geodp.manifolds import SPD, Euclidean, Hyperbolic, Sphere
from geodp.mechanisms import LaplaceMechanism, TangentGaussianMechanism
from geodp.models import PrivateFrechetMean

ROUNDS = 15


def _sphere_data():
    space, north = Sphere(2), np.array([0.0, 0.0, 1.0])
    return space, north, space.exp(north, 0.3 * space.random_tangent(north, size=100, rng=0))


def cases():
    space, north, X = _sphere_data()
    sphere = LaplaceMechanism(space, epsilon=1.0, sensitivity=0.01)
    le = SPD(8, metric="log-euclidean")
    gauss = TangentGaussianMechanism(epsilon=1.0, delta=1e-6, sensitivity=0.05, space=le)
    laplace = LaplaceMechanism(le, epsilon=1.0, sensitivity=0.05)
    M = np.eye(8)
    lc = SPD(8, metric="log-cholesky")
    lc_laplace = LaplaceMechanism(lc, epsilon=1.0, sensitivity=0.05)
    line = LaplaceMechanism(Euclidean(1), epsilon=1.0, sensitivity=0.2)
    h2 = LaplaceMechanism(Hyperbolic(2), epsilon=1.0, sensitivity=0.05)
    origin = Hyperbolic(2).reference_point()
    return {
        "Laplace on Euclidean(1)": lambda rng: line.randomise(np.zeros(1), rng=rng),
        "Laplace on Hyperbolic(2)": lambda rng: h2.randomise(origin, rng=rng),
        "Laplace, SPD(8) log-Cholesky": lambda rng: lc_laplace.randomise(M, rng=rng),
        "Laplace on Sphere(2)": lambda rng: sphere.randomise(north, rng=rng),
        "tangent Gaussian, SPD(8) LE": lambda rng: gauss.randomise(M, rng=rng),
        "Laplace, SPD(8) LE": lambda rng: laplace.randomise(M, rng=rng),
        "PrivateFrechetMean, Sphere(2), n=100": lambda rng: PrivateFrechetMean(
            space, epsilon=1.0, center=north, radius=0.5, random_state=rng
        ).fit(X),
    }


def _time(fn, rng):
    start = time.perf_counter()
    fn(rng)
    return time.perf_counter() - start


def main():
    print(f"load average (1 min): {os.getloadavg()[0]:.2f}")
    print(f"{'case':40s} {'seeded (ms)':>12s} {'default (ms)':>13s} {'ratio (median)':>15s}")
    for name, fn in cases().items():
        fn(0), fn(None)  # warm up
        seeded, default = [], []
        for i in range(ROUNDS):
            seeded.append(_time(fn, i))
            default.append(_time(fn, None))
        ratios = np.array(default) / np.array(seeded)
        print(f"{name:40s} {1e3 * np.median(seeded):12.3f} {1e3 * np.median(default):13.3f} {np.median(ratios):15.2f}")


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()  # --help
    main()
