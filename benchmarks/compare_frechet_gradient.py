"""PrivateFrechetMean(mechanism="gradient") against output perturbation: the median distance of the
release to the non-private Fréchet mean, over 30 releases per cell.

Spaces: S² (public ball of radius 0.5 around the north pole) and affine-invariant SPD(2) (radius 1
around I); data: n points at geodesic distance ≤ 0.4·r of a point 0.4·r from the centre (seed 0).
Mechanisms: "laplace", "wrapped-gaussian", "riemannian-gaussian" and "gradient" (DP-RGD on ½ρ²,
T = GRADIENT_ITERATIONS, step GRADIENT_STEP, clip 2r); δ = 1e-5 for the Gaussian ones.

Run: ``python benchmarks/compare_frechet_gradient.py`` (about a minute; prints the load).
``--tune`` instead measures the defaults: the median error (20 seeds) of
:func:`geodp.optim.private_riemannian_gd` on ½ρ² (clip 2r) for T ∈ {1, 2, 3, 5, 10} and step ∈ {0.5, 1},
on the data above (n = 100, ε = 1 and n = 1000, ε = 0.5) and on data near the ball's edge (n = 2000,
ε = 1; S² with r = 1, SPD(2) with r = 1.5).
"""

import itertools
import os
import sys
import warnings

import numpy as np

from geodp.frechet import frechet_mean
from geodp.manifolds import SPD, Sphere
from geodp.models import PrivateFrechetMean
from geodp.optim import private_riemannian_gd

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


def _frechet_gradients(space):
    """Per-record gradients −Log_x(x_i) of ½ρ²(x, x_i)."""
    return lambda x, records: -space.log(x, records)


def tune():
    print(f"load average: {os.getloadavg()}")
    north = np.array([0.0, 0.0, 1.0])
    settings = [
        ("S^2", Sphere(2), north, 0.5, [(100, 1.0), (1000, 0.5)], False),
        ("SPD(2)", SPD(2), np.eye(2), 1.0, [(100, 1.0), (1000, 0.5)], False),
        ("S^2 edge", Sphere(2), north, 1.0, [(2000, 1.0)], True),
        ("SPD(2) edge", SPD(2), np.eye(2), 1.5, [(2000, 1.0)], True),
    ]
    print(
        "| case | n, ε | "
        + " | ".join(f"T={t}, η={s}" for t, s in itertools.product((1, 2, 3, 5, 10), (0.5, 1.0)))
        + " |"
    )
    for label, space, center, radius, cells, edge in settings:
        for n, epsilon in cells:
            if edge:  # records near the boundary, on one side: the descent's bias matters most
                u = space.random_unit_tangent(center, size=1, rng=2)[0]
                X = space.exp(
                    center, 0.75 * radius * u + 0.2 * radius * space.random_unit_tangent(center, size=n, rng=1)
                )
            else:
                X = data(space, center, radius, n)
            truth = frechet_mean(space, X)
            row = []
            for iterations, step in itertools.product((1, 2, 3, 5, 10), (0.5, 1.0)):
                errors = [
                    float(space.dist(truth, private_riemannian_gd(
                        space, _frechet_gradients(space), X, epsilon=epsilon, delta=1e-5, iterations=iterations,
                        step=step, clip=2 * radius, center=center, radius=radius, random_state=seed).point))
                    for seed in range(20)
                ]  # fmt: skip
                row.append(f"{np.median(errors):.4f}")
            print(f"| {label} | {n}, {epsilon} | " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    tune() if "--tune" in sys.argv[1:] else main()
