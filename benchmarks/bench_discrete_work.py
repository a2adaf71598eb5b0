"""How the work of the exact discrete samplers follows the noise they draw, and what fixing it costs.

``geodp.distributions.discrete`` draws the discrete Laplace and Gaussian (Canonne, Kamath & Steinke
2020) by loops whose length is random: it does not depend on the value the noise is added to, but
it does depend on the noise itself (the geometric part runs one coin per unit of |noise|/scale).
A clock that sees the work therefore sees roughly |noise|, and with the release, the statistic —
the channel of Jin et al. (IEEE S&P 2022). Under ``geodp.work.fixed_work()`` (timing-safe mode)
the samplers run every loop a fixed public number of times (``geodp.distributions.discrete_fixed``).

This script counts the random draws each sample makes (a counting wrapper around a generator:
calls and values drawn) and prints, per sampler, their correlation with |noise| and their mean
for small and large |noise| (below its 20th, above its 80th percentile) by default, then the
same counts under fixed work (each sample its own fixed-work section with δ_t = 10⁻¹⁰, as a
release), and the cost: time per sample, fixed over default, interleaved in rounds (median ratio
of the rounds), with the secure (ChaCha20) generator.
Run: ``PYTHONPATH=src python benchmarks/bench_discrete_work.py [--draws N] [--rounds R]`` (about a
minute at the defaults).
"""

from __future__ import annotations

import argparse
import os
import time
from fractions import Fraction

import numpy as np

from geodp.distributions.discrete import discrete_gaussian, discrete_laplace
from geodp.mechanisms.grid import GridLaplace
from geodp.release import TIMING_SAFE_DELTA
from geodp.secure import secure_generator
from geodp.work import fixed_work_section


class _CountingGenerator:
    """The calls ``discrete`` makes on a generator (``integers``, ``bytes``) and the values drawn."""

    def __init__(self, rng):
        self._rng, self.calls, self.values = rng, 0, 0

    def integers(self, *args, **kwargs):
        out = self._rng.integers(*args, **kwargs)
        self.calls, self.values = self.calls + 1, self.values + np.size(out)
        return out

    def bytes(self, length):
        self.calls, self.values = self.calls + 1, self.values + length
        return self._rng.bytes(length)


_GRID = GridLaplace(epsilon=0.3, sensitivity=0.5, dim=2)
CASES = {
    "discrete Laplace, scale 20": lambda rng: discrete_laplace(Fraction(20), rng, epsilon=1.0),
    "discrete Gaussian, sigma^2 = 400": lambda rng: discrete_gaussian(Fraction(400), rng, epsilon=1.0),
    # ε = 0.3 is not dyadic: the grid's scale D1/ε has a 64-bit numerator, past 2^63 (the byte path)
    "grid Laplace, eps = 0.3, d = 2": lambda rng: discrete_laplace(_GRID.scale_units, rng, epsilon=0.3),
}


def _one(sample, rng, fixed):
    if not fixed:
        return sample(rng)
    with fixed_work_section(TIMING_SAFE_DELTA):
        return sample(rng)


def _counts(sample, draws, fixed):
    magnitude, calls, values = np.empty(draws), np.empty(draws), np.empty(draws)
    for seed in range(draws):
        rng = _CountingGenerator(np.random.default_rng(seed))
        magnitude[seed] = abs(int(_one(sample, rng, fixed)))
        calls[seed], values[seed] = rng.calls, rng.values
    return magnitude, calls, values


def _seconds_per_sample(sample, rng, fixed, n):
    start = time.perf_counter()
    for _ in range(n):
        _one(sample, rng, fixed)
    return (time.perf_counter() - start) / n


def main(draws=3000, rounds=5):
    """Print the counts, then the cost ratio."""
    print(f"{draws} samples each; random draws per sample against |noise| (default path)")
    print(f"{'sampler':34s} {'corr(|noise|, values)':>22s} {'values, |noise| <= q20':>22s} {'>= q80':>16s}")
    for name, sample in CASES.items():
        magnitude, _, values = _counts(sample, draws, fixed=False)
        low, high = np.quantile(magnitude, [0.2, 0.8])
        small, large = values[magnitude <= low].mean(), values[magnitude >= high].mean()
        print(f"{name:34s} {np.corrcoef(magnitude, values)[0, 1]:22.2f} {small:22.1f} {large:16.1f}")
    fixed_draws = max(draws // 10, 50)
    print(f"\nfixed work (timing-safe), {fixed_draws} samples each, one fixed-work section per sample")
    print(f"{'sampler':34s} {'calls (min-max)':>16s} {'values drawn (min-max)':>24s} {'|noise| range':>14s}")
    for name, sample in CASES.items():
        magnitude, calls, values = _counts(sample, fixed_draws, fixed=True)
        print(
            f"{name:34s} {f'{calls.min():.0f}-{calls.max():.0f}':>16s} "
            f"{f'{values.min():.0f}-{values.max():.0f}':>24s} {f'{magnitude.min():.0f}-{magnitude.max():.0f}':>14s}"
        )
    print(f"\ncost, secure generator, {rounds} interleaved rounds (load {os.getloadavg()[0]:.1f})")
    print(f"{'sampler':34s} {'default us/sample':>18s} {'fixed us/sample':>16s} {'ratio (median)':>15s}")
    rng = secure_generator()
    for name, sample in CASES.items():
        default, fixed = [], []
        for _ in range(rounds):
            default.append(_seconds_per_sample(sample, rng, False, 400))
            fixed.append(_seconds_per_sample(sample, rng, True, 40))
        ratio = np.median(np.array(fixed) / np.array(default))
        print(f"{name:34s} {1e6 * np.median(default):18.1f} {1e6 * np.median(fixed):16.1f} {ratio:15.0f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    main(args.draws, args.rounds)
