"""Private Riemannian GD on SPD(2): DP-RiemOpt's MH-sampled tangent noise vs geodp's exact noise.

DP-RiemOpt's published setting (Han, Mishra, Jawanpuria, Gao 2024; issue 26): the affine-invariant
mean of Wishart(I/2, 2) samples kept within distance 1 of I, ε = 0.1, δ = 1e-3, T = n iterations,
step 0.01, L0 = 1, their noise σ² = T·log(1/δ)·L0²/(n²ε²) on the mean gradient, drawn by
Metropolis–Hastings with 10,000 burn-in steps per iteration. Four fits per repetition, interleaved:

* ``their (MH)``: their algorithm, their σ, MH noise (a random walk in the symmetric coordinates
  with the target exp(−‖v‖²_W/2σ²) of the metric at the iterate);
* ``their σ, exact``: the same algorithm with the exact tangent Gaussian (``random_tangent``) —
  isolates the sampler;
* ``geodp optim``: ``geodp.optim.private_riemannian_gd`` (clip 1, our calibration: sound under
  replace-one, docs/math.md §13), same T and step;
* ``geodp Laplace``: ``PrivateFrechetMean`` output perturbation (exact Riemannian Laplace, ε-DP).

Per-record gradient: −Log_W(x_i) clipped to norm 1 (L0 = 1) in every GD variant. Excess risk is
F(W) − F* with F the mean squared distance and F* at the non-private Fréchet mean. Prints the mean
excess risk and the median time per fit, the MH/exact time ratio, and the machine load.

Run: ``PYTHONPATH=src python benchmarks/bench_private_gd.py [--quick]`` (quick: n = 20, 50 and
3 repetitions, about a minute on 2 shared cores; default n = 20, 50, 100, 200 and 10 repetitions,
about 6 minutes, nearly all of it in the MH baseline).
"""

from __future__ import annotations

import argparse
import functools
import math
import os
import statistics
import time

import numpy as np
from scipy import stats

from geodp.frechet import frechet_mean
from geodp.manifolds import SPD
from geodp.models import PrivateFrechetMean
from geodp.optim import clipped_gradient_sum, private_riemannian_gd

EPSILON, DELTA, STEP, L0, BURN_IN = 0.1, 1e-3, 0.01, 1.0, 10_000
SPACE, IDENTITY = SPD(2), np.eye(2)


def wishart_within_one(n, rng):
    """n Wishart(I/2, 2) samples at affine distance ≤ 1 from I (rejection)."""
    law = stats.wishart(df=2, scale=IDENTITY / 2)
    out = []
    while len(out) < n:
        w = law.rvs(random_state=rng)
        if np.all(np.linalg.eigvalsh(w) > 0) and SPACE.dist(IDENTITY, w) <= 1.0:
            out.append(w)
    return np.array(out)


def risk(W, X):
    return float(np.mean(SPACE.unchecked.dist(W, X) ** 2))


def _symmetric(w):
    return np.array([[w[0], w[1]], [w[1], w[2]]])


def mh_tangent_gaussian(W, sigma, rng):
    """DP-RiemOpt's sampler: random-walk MH on the 3 symmetric coordinates, target
    exp(−‖v‖²_W / 2σ²), BURN_IN steps, the last state returned."""
    basis = [_symmetric(e) for e in np.eye(3)]
    gram = np.array([[SPACE.unchecked.inner(W, a, b) for b in basis] for a in basis])
    proposal = 2.4 / math.sqrt(3) * sigma * np.linalg.cholesky(np.linalg.inv(gram))
    steps = rng.standard_normal((BURN_IN, 3)) @ proposal.T
    logu = np.log(rng.uniform(size=BURN_IN))
    v, energy = np.zeros(3), 0.0
    for s, lu in zip(steps, logu):
        w = v + s
        e = float(w @ gram @ w) / (2 * sigma**2)
        if lu < energy - e:
            v, energy = w, e
    return _symmetric(v)


def their_gd(X, rng, *, sigma, noise="mh"):
    n, W = X.shape[0], IDENTITY
    for _ in range(n):  # T = n
        g = clipped_gradient_sum(SPACE, W, -SPACE.unchecked.log(W, X), L0) / n
        z = mh_tangent_gaussian(W, sigma, rng) if noise == "mh" else sigma * SPACE.unchecked.random_tangent(W, rng=rng)
        W = SPACE.unchecked.exp(W, -STEP * (g + z))
    return W


def ours(X, rng):
    n = X.shape[0]
    return private_riemannian_gd(
        SPACE,
        lambda W, R: -SPACE.unchecked.log(W, R),
        X,
        epsilon=EPSILON,
        delta=DELTA,
        iterations=n,
        step=STEP,
        clip=L0,
        center=IDENTITY,
        radius=1.0,
        random_state=rng,
    ).point


def laplace(X, rng):
    return PrivateFrechetMean(SPACE, epsilon=EPSILON, center=IDENTITY, radius=1.0, random_state=rng).fit(X).mean_


def main(quick: bool = False) -> None:
    sizes, reps = ((20, 50), 3) if quick else ((20, 50, 100, 200), 10)
    print(f"SPD(2) affine mean, eps = {EPSILON}, delta = {DELTA}, T = n, step = {STEP}; load {os.getloadavg()[0]:.2f}")
    print("| n | method | excess risk (mean ± s.e.) | time per fit (median) |")
    print("|---|---|---|---|")
    for n in sizes:
        sigma = math.sqrt(n * math.log(1 / DELTA)) * L0 / (n * EPSILON)
        methods = {
            "their (MH noise)": functools.partial(their_gd, sigma=sigma, noise="mh"),
            "their sigma, exact noise": functools.partial(their_gd, sigma=sigma, noise="exact"),
            "geodp optim (sound sigma)": ours,
            "geodp Laplace (output pert.)": laplace,
        }
        excess, seconds = {m: [] for m in methods}, {m: [] for m in methods}
        for rep in range(reps):
            rng = np.random.default_rng(1000 * n + rep)
            X = wishart_within_one(n, rng)
            best = risk(frechet_mean(SPACE, X), X)
            for name, fit in methods.items():  # interleaved: each repetition runs every method
                start = time.perf_counter()
                W = fit(X, np.random.default_rng(rep))
                seconds[name].append(time.perf_counter() - start)
                excess[name].append(abs(risk(W, X) - best))
        for name in methods:
            spread = statistics.stdev(excess[name]) / math.sqrt(reps)
            mean = statistics.fmean(excess[name])
            print(f"| {n} | {name} | {mean:.3g} ± {spread:.2g} | {statistics.median(seconds[name]):.4g} s |")
        ratio = statistics.median(seconds["their (MH noise)"]) / statistics.median(seconds["their sigma, exact noise"])
        print(f"| {n} | MH / exact time per fit | | {ratio:.0f}x |")
    print(per_draw_ratio())
    print(f"load after: {os.getloadavg()[0]:.2f}")


def per_draw_ratio(draws: int = 20) -> str:
    """One tangent Gaussian draw at a point of SPD(2): MH (BURN_IN steps) vs exact, interleaved."""
    W, rng = np.array([[1.5, 0.3], [0.3, 0.8]]), np.random.default_rng(0)
    mh, exact = [], []
    for _ in range(draws):
        start = time.perf_counter()
        mh_tangent_gaussian(W, 1.0, rng)
        mh.append(time.perf_counter() - start)
        start = time.perf_counter()
        SPACE.unchecked.random_tangent(W, rng=rng)
        exact.append(time.perf_counter() - start)
    mh_s, exact_s = statistics.median(mh), statistics.median(exact)
    return f"one noise draw: MH {mh_s * 1e3:.3g} ms, exact {exact_s * 1e6:.3g} us: {mh_s / exact_s:.0f}x"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    main(parser.parse_args().quick)
