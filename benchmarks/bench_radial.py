"""Laplace releases on spheres and hyperbolic spaces up to d = 1000 (issue 13, items 1–2).

The issue's setting: ``PrivateFrechetMean`` with the Laplace mechanism, n = 100 records in the
public ball of radius r = 0.5 around the pole/origin, ε = 1. For each space it prints the scale
σ, whether the law is truncated, the sampler (exact radial rejection with its envelope and
acceptance, or MH) and:

* **cold**: the first release (builds the radial law's secant hat and, when truncated, the public
  bound over footpoints; both are cached per (space, σ, r));
* **warm**: the median over interleaved rounds (one release per space per round, spaces in turn),
  whole ``fit`` (validation, clipping, Karcher flow, sampling) and the sampling alone
  (``mechanism_.randomise`` of the released mean).

Where no exact sampler applies (H^1000 here: the law is not normalisable at Δ/ε, so it is
truncated to the ball, and from a footpoint on the boundary rejection into the ball would accept
less than 1e−300) the release is MH with R21's burn-in of 10,000 steps; only the cold release is
timed there (minutes, not milliseconds).

Run: ``python benchmarks/bench_radial.py [rounds]`` (default 9).
"""

from __future__ import annotations

import argparse
import math
import time
import warnings

import numpy as np

import geodp.distributions.laplace as laplace_module
from geodp.errors import ApproximateSamplerWarning
from geodp.manifolds import Hyperbolic, Sphere
from geodp.models import PrivateFrechetMean

SPACES = [Sphere(d) for d in (2, 20, 50, 100, 200, 500, 1000)] + [Hyperbolic(d) for d in (2, 10, 100, 1000)]
N, EPSILON, RADIUS = 100, 1.0, 0.5


def dataset(space):
    center = np.eye(space.dim + 1)[0]  # the pole of the sphere, the origin of the hyperboloid
    v = space.random_tangent(center, size=N, rng=0)
    return center, space.exp(center, 0.6 * RADIUS * v / np.sqrt(space.dim))


def release(space, center, X, seed):
    model = PrivateFrechetMean(space, epsilon=EPSILON, center=center, radius=RADIUS, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ApproximateSamplerWarning)
        return model.fit(X)


def timed(call):
    start = time.perf_counter()
    out = call()
    return time.perf_counter() - start, out


def main(rounds: int) -> None:
    data = {space: dataset(space) for space in SPACES}
    cold, models = {}, {}
    for space in SPACES:
        laplace_module._radial_law.cache_clear()
        laplace_module.ball_acceptance_bound.cache_clear()
        cold[space], models[space] = timed(lambda space=space: release(space, *data[space], seed=0))
    exact = [space for space in SPACES if models[space].privacy_report_.to_dict()["exact"]]
    fits = {space: [math.nan] for space in SPACES}
    draws = {space: [math.nan] for space in SPACES}
    for space in exact:
        fits[space], draws[space] = [], []
    for r in range(rounds):  # interleaved: one release per space per round
        for space in exact:
            fits[space].append(timed(lambda space=space: release(space, *data[space], seed=r + 1))[0])  # noqa: B023
            model = models[space]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ApproximateSamplerWarning)
                draws[space].append(timed(lambda m=model, r=r: m.mechanism_.randomise(m.mean_, rng=r))[0])
    print(f"PrivateFrechetMean, Laplace, n = {N}, ε = {EPSILON}, r = {RADIUS}; medians of {rounds} interleaved rounds")
    print(f"{'space':<16}{'σ':>9} {'trunc':>5} {'sampler':<44}{'cold':>12}{'fit':>10}{'sampling':>10}")
    for space in SPACES:
        model = models[space]
        mech = model.mechanism_
        law = laplace_module._radial_law(space, mech.scale, 2 * RADIUS if mech.truncated else np.inf)
        if model.privacy_report_.to_dict()["exact"]:
            hat = f" ({len(law._hat.nodes) - 1} secants)" if law.envelope == "secant" else ""
            kind = f"exact, {law.envelope}{hat}, acc {law.acceptance_rate:.3f}"
            if mech.truncated:
                kind += f", ball ≥ {laplace_module.ball_acceptance_bound(space, mech.scale, RADIUS):.2g}"
        else:
            kind = f"MH (ball bound {laplace_module.ball_acceptance_bound(space, mech.scale, RADIUS):.1e})"
        print(
            f"{space!r:<16}{mech.scale:>9.4g} {str(mech.truncated):>5} {kind:<44}"
            f"{cold[space] * 1e3:>10.1f}ms{np.median(fits[space]) * 1e3:>8.2f}ms{np.median(draws[space]) * 1e3:>8.2f}ms"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rounds", nargs="?", type=int, default=9, help="interleaved rounds (default 9)")
    main(parser.parse_args().rounds)
