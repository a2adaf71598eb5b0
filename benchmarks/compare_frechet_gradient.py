"""PrivateFrechetMean(mechanism="gradient") against output perturbation: the median distance of the
release to the non-private Fréchet mean, over 30 releases per cell.

Spaces: S² (public ball of radius 0.5 around the north pole) and affine-invariant SPD(2) (radius 1
around I); data: n points at geodesic distance ≤ 0.4·r of a point 0.4·r from the centre (seed 0).
Mechanisms: "laplace", "wrapped-gaussian", "riemannian-gaussian" and "gradient" (DP-RGD on ½ρ²,
T = GRADIENT_ITERATIONS, step GRADIENT_STEP, clip 2r); δ = 1e-5 for the Gaussian ones.

Run: ``python benchmarks/compare_frechet_gradient.py`` (about a minute; prints the load).
"""

import os
import warnings

import numpy as np

from geodp.frechet import frechet_mean
from geodp.manifolds import SPD, Sphere
from geodp.models import PrivateFrechetMean

MECHANISMS = ("laplace", "wrapped-gaussian", "riemannian-gaussian", "gradient")
CELLS = ((100, 0.5), (100, 2.0), (1000, 0.5), (1000, 2.0))
REPEATS = 30


def data(space, center, radius, n):
    offset = space.exp(center, 0.4 * radius * space.random_unit_tangent(center, size=1, rng=1)[0])
    spread = 0.4 * radius * np.random.default_rng(2).uniform(size=(n,) + (1,) * len(space.point_shape))
    return space.exp(offset, spread * space.random_unit_tangent(offset, size=n, rng=3))


def main():
    print(f"load average: {os.getloadavg()}")
    cases = (
        ("S^2, r = 0.5", Sphere(2), np.array([0.0, 0.0, 1.0]), 0.5),
        ("SPD(2) affine, r = 1", SPD(2), np.eye(2), 1.0),
    )
    for label, space, center, radius in cases:
        print(f"\n{label}: median distance to the non-private mean over {REPEATS} releases")
        print("| n, ε | " + " | ".join(MECHANISMS) + " |")
        print("|---" * (len(MECHANISMS) + 1) + "|")
        for n, epsilon in CELLS:
            X = data(space, center, radius, n)
            truth = frechet_mean(space, X)
            row = []
            for mechanism in MECHANISMS:
                delta = 0.0 if mechanism == "laplace" else 1e-5
                errors = []
                for seed in range(REPEATS):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        model = PrivateFrechetMean(
                            space,
                            epsilon=epsilon,
                            delta=delta,
                            center=center,
                            radius=radius,
                            mechanism=mechanism,
                            random_state=seed,
                        ).fit(X)
                    errors.append(float(space.dist(model.mean_, truth)))
                row.append(f"{np.median(errors):.4f}")
            print(f"| {n}, {epsilon} | " + " | ".join(row) + " |", flush=True)
    print(f"\nload average: {os.getloadavg()}")


if __name__ == "__main__":
    main()
