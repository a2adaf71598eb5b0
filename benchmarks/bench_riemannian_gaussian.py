"""Riemannian Gaussian releases (issue 23, item 2): target < 50 ms per release.

``PrivateFrechetMean(mechanism="riemannian-gaussian")`` with n = 40 records in the public ball of
radius r around the reference point, ε = 1, δ = 1e-5, on the spaces the mechanism supports. For
each space it prints σ (calibrated by the triangle bound; the flat-space analytic σ beside it),
the bound's δ at σ, and:

* **cold**: the first release, which calibrates σ (grid + bisection over the 1-D privacy
  integral) and builds the exact radial (or eigenvalue) sampler; both are cached per public
  (space, ε, δ, Δ) and (space, σ);
* **warm**: the median over interleaved rounds (one release per space per round) of the whole
  ``fit`` (validation, clipping, Karcher flow, sampling) and of the sampling alone
  (``mechanism_.randomise`` of the released mean);
* the load average while it ran (the machine is shared: read ratios, not absolute times).

Run: ``python benchmarks/bench_riemannian_gaussian.py [rounds]`` (default 9).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from geodp.calibration import gaussian_sigma
from geodp.distributions import riemannian_gaussian as law_module
from geodp.manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Sphere
from geodp.mechanisms import riemannian_gaussian_curve as curve_module
from geodp.models import PrivateFrechetMean

SPACES = [
    (Euclidean(3), 0.5),
    (Sphere(2), 0.5),
    (Sphere(20), 0.5),
    (Hyperbolic(3), 0.5),
    (Hyperbolic(10), 0.5),
    (KendallShape(6), 0.3),
    (SPD(3), 1.5),
    (SPD(6), 1.5),
]
N, EPSILON, DELTA = 40, 1.0, 1e-5


def dataset(space, radius):
    center = space.reference_point()
    v = space.random_tangent(center, size=N, rng=0)
    norms = np.asarray(space.norm(center, v)).reshape((N,) + (1,) * len(space.point_shape))
    return center, space.exp(center, 0.8 * radius * v / np.maximum(norms, 1.0))


def release(space, center, radius, X, seed):
    model = PrivateFrechetMean(
        space,
        epsilon=EPSILON,
        delta=DELTA,
        center=center,
        radius=radius,
        mechanism="riemannian-gaussian",
        random_state=seed,
    )
    return model.fit(X)


def timed(call):
    start = time.perf_counter()
    out = call()
    return time.perf_counter() - start, out


def main(rounds: int) -> None:
    load = os.getloadavg()[0]
    data = {space: (dataset(space, radius), radius) for space, radius in SPACES}
    cold, models = {}, {}
    for space, _ in SPACES:
        (center, X), radius = data[space]
        for name in ("_triangle_sigma", "_triangle_delta", "_integrals", "_spd_survival"):
            getattr(curve_module, name).cache_clear()
        law_module.gaussian_radial_law.cache_clear()
        law_module.gaussian_eigenvalue_law.cache_clear()
        cold[space], models[space] = timed(lambda: release(space, center, radius, X, seed=0))  # noqa: B023
    fits = {space: [] for space, _ in SPACES}
    draws = {space: [] for space, _ in SPACES}
    for r in range(rounds):
        for space, _ in SPACES:
            (center, X), radius = data[space]
            fits[space].append(timed(lambda: release(space, center, radius, X, seed=r + 1))[0])  # noqa: B023
            model = models[space]
            draws[space].append(timed(lambda: model.mechanism_.randomise(model.mean_, rng=r))[0])  # noqa: B023
    load = (load + os.getloadavg()[0]) / 2
    print(f"PrivateFrechetMean, Riemannian Gaussian, n = {N}, ε = {EPSILON}, δ = {DELTA}; medians of {rounds} rounds")
    print(f"{'space':<26}{'r':>5}{'σ':>9}{'flat σ':>9}{'δ(ε) at σ':>12}{'cold':>10}{'fit':>10}{'sampling':>10}")
    for space, radius in SPACES:
        mech = models[space].mechanism_
        print(
            f"{space!r:<26}{radius:>5}{mech.scale:>9.4f}{gaussian_sigma(EPSILON, DELTA, mech.sensitivity):>9.4f}"
            f"{mech.delta_for(EPSILON):>12.3e}{1e3 * cold[space]:>8.1f}ms{1e3 * np.median(fits[space]):>8.2f}ms"
            f"{1e3 * np.median(draws[space]):>8.2f}ms"
        )
    print(f"load average (1 min, mean of start and end): {load:.2f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rounds", nargs="?", type=int, default=9)
    main(parser.parse_args().rounds)
