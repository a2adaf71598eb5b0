"""How the work of the exact discrete samplers follows the noise they draw (secure mode's grid noise).

``geodp.distributions.discrete`` draws the discrete Laplace and Gaussian (Canonne, Kamath & Steinke
2020) by loops whose length is random: it does not depend on the value the noise is added to, but
it does depend on the noise itself (the geometric part runs one coin per unit of |noise|/scale).
A clock that sees the work therefore sees roughly |noise|, and with the release, the statistic —
the channel of Jin et al. (IEEE S&P 2022). Timing-safe mode does not fix this work (the samplers do
not read ``geodp.work.fixed_work()``); only the padding to the deadline covers it.

This script counts the random draws each sample makes (a counting wrapper around a seeded numpy
generator) and prints their correlation with |noise| and their mean for small and large |noise|.
Run: ``PYTHONPATH=src python benchmarks/bench_discrete_work.py [--draws N]`` (a few seconds).
"""

from __future__ import annotations

import argparse
from fractions import Fraction

import numpy as np

from geodp.distributions.discrete import discrete_gaussian, discrete_laplace


class _CountingGenerator:
    """The calls ``discrete`` makes on a generator (``integers``, ``bytes``), counted."""

    def __init__(self, seed):
        self._rng, self.calls = np.random.default_rng(seed), 0

    def integers(self, *args, **kwargs):
        self.calls += 1
        return self._rng.integers(*args, **kwargs)

    def bytes(self, *args):
        self.calls += 1
        return self._rng.bytes(*args)


def _rows(draws):
    cases = {
        "discrete Laplace, scale 20": lambda rng: discrete_laplace(Fraction(20), rng),
        "discrete Gaussian, sigma^2 = 400": lambda rng: discrete_gaussian(Fraction(400), rng),
    }
    for name, sample in cases.items():
        magnitude, calls = np.empty(draws), np.empty(draws)
        for seed in range(draws):
            rng = _CountingGenerator(seed)
            magnitude[seed], calls[seed] = abs(int(sample(rng))), rng.calls
        small, large = calls[magnitude < 5].mean(), calls[magnitude > 40].mean()
        yield name, float(np.corrcoef(magnitude, calls)[0, 1]), small, large


def main(draws=3000):
    """Print one row per sampler."""
    print(f"{draws} samples each; random draws per sample against |noise|")
    print(f"{'sampler':34s} {'corr(|noise|, draws)':>21s} {'draws at |noise| < 5':>21s} {'at |noise| > 40':>16s}")
    for name, corr, small, large in _rows(draws):
        print(f"{name:34s} {corr:21.2f} {small:21.1f} {large:16.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=3000)
    main(parser.parse_args().draws)
