"""Reproductions of S22 (Soto, Bharath, Reimherr, Slavković 2022, supplement)."""

from __future__ import annotations

from geodp.experiments.reproduce import Reproduction

__all__ = ["REPRODUCTIONS"]

REPRODUCTIONS = (
    Reproduction("s22-sims", "S22", "Simulations: KNG vs Laplace on SPD(2), S² and Kendall shapes", "pending",
                 (20, 1000), None, "being written"),
    Reproduction("s22-shapes", "S22", "Shapes: private mean corpus-callosum shapes, KNG vs point-wise Laplace",
                 "pending", (10, 100), None, "being written"),
)
