"""Cost per release of secure mode (random_state="secure") against the default generator.

Interleaved in one process; the table shows the median time per release of each mode and the
median of the per-round ratios secure/default. Run: ``python benchmarks/bench_secure.py``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from geodp.manifolds import SPD, Sphere
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
    return {
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
    print(f"{'case':40s} {'default (ms)':>13s} {'secure (ms)':>12s} {'ratio (median)':>15s}")
    for name, fn in cases().items():
        fn(None), fn("secure")  # warm up
        default, secure = [], []
        for _ in range(ROUNDS):
            default.append(_time(fn, None))
            secure.append(_time(fn, "secure"))
        ratios = np.array(secure) / np.array(default)
        print(f"{name:40s} {1e3 * np.median(default):13.3f} {1e3 * np.median(secure):12.3f} {np.median(ratios):15.2f}")


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()  # --help
    main()
