"""Reproductions of R21 (Reimherr, Bharath, Soto 2021): Fig. 1 and supplementary Fig. 2."""

from __future__ import annotations

from geodp.experiments.reproduce import Reproduction

__all__ = ["REPRODUCTIONS"]

REPRODUCTIONS = (
    Reproduction("r21-fig1", "R21", "Fig. 1: sensitivity and utility on SPD(2) and S², Riemannian Laplace vs "
                 "vech/extrinsic Laplace", "pending", (50, 1000), None, "being written"),
    Reproduction("r21-supp-fig2", "R21", "Supp. Fig. 2 (B.1): empirical sphere bound vs 2r and 2r(2 − h)",
                 "pending", (1, 1), None, "being written"),
)
