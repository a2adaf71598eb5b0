"""The setting shared by the U23 figures: the grids of the paper, the two Laplace scales drawn side by
side, the tangent Gaussian, and the style of the error bands."""

from __future__ import annotations

import numpy as np

from geodp.mechanisms import LaplaceMechanism, TangentGaussianMechanism

__all__ = [
    "AXIS_PRECISION",
    "BURN_INS",
    "DELTAS_MIDDLE",
    "DELTAS_REAL",
    "DELTA_SYNTHETIC",
    "EPS_REAL",
    "EPS_SYNTHETIC",
    "KS",
    "LAP_OURS",
    "LAP_U23",
    "MCMC_COLOURS",
    "N_SYNTHETIC",
    "R_SYNTHETIC",
    "STYLE",
    "band",
    "band_top",
    "laplace_pair",
    "le_mean",
    "summary",
    "tangent_gaussian",
]

N_SYNTHETIC = 500
R_SYNTHETIC = 0.25
KS = (2, 5, 10, 15, 20, 25, 30)
EPS_SYNTHETIC = (0.1, 0.2, 0.3, 0.4)
DELTA_SYNTHETIC = 1e-6
DELTAS_MIDDLE = (1e-7, 1e-8, 1e-9)
EPS_REAL = (0.1, 0.3, 0.5, 0.7, 0.9)
DELTAS_REAL = (1e-5, 1e-7, 1e-9)
BURN_INS = (10_000, 30_000, 50_000)
LAP_OURS = "Rie-Laplace, σ = Δ/ε (ours, exact)"
LAP_U23 = "Rie-Laplace, σ = 2Δ/ε (as published, exact)"


def le_mean(space, X):
    """The log-Euclidean Fréchet mean of the records ``X`` and its chart coordinates ``vecd∘Log``."""
    coords = space.to_coordinates(X).mean(axis=0)
    return space.from_coordinates(coords), coords


def laplace_pair(space, epsilon, sensitivity):
    """Ours (σ = Δ/ε) and U23's as published (σ = 2Δ/ε, the same mechanism at ε/2), by label."""
    return {
        LAP_OURS: LaplaceMechanism(space, epsilon=epsilon, sensitivity=sensitivity),
        LAP_U23: LaplaceMechanism(space, epsilon=epsilon / 2.0, sensitivity=sensitivity),
    }


def tangent_gaussian(space, epsilon, delta, sensitivity, calibration="analytic"):
    """The tangent Gaussian (TanG) at (ε, δ), analytic or classical calibration."""
    return TangentGaussianMechanism(
        epsilon=epsilon, delta=delta, sensitivity=sensitivity, calibration=calibration, space=space
    )


AXIS_PRECISION = 0.15  # U23's axis readings (published.u23): the top tick, ±15%


def band_top(errors) -> float:
    """The top of U23's band, mean + 2 sd of one release's error: what an axis top reads.

    Examples
    --------
    >>> band_top([1.0, 2.0, 3.0])
    4.0
    """
    return float(np.mean(errors) + 2.0 * np.std(errors, ddof=1))


def summary(data, keys, value="error"):
    """Mean and sd of ``value`` grouped by the tuple of ``keys``."""
    groups: dict = {}
    for row in data:
        groups.setdefault(tuple(row[k] for k in keys), []).append(row[value])
    return {g: (float(np.mean(v)), float(np.std(v, ddof=1)) if len(v) > 1 else 0.0) for g, v in groups.items()}


def band(ax, xs, stats, label, **style):
    """Plot the means of ``stats`` (mean, sd) pairs over ``xs`` with a ± 2 sd band."""
    mean = np.array([s[0] for s in stats])
    sd = np.array([s[1] for s in stats])
    style = {"marker": "o", "ms": 3, **style}
    (line,) = ax.plot(xs, mean, label=label, **style)
    ax.fill_between(xs, mean - 2 * sd, mean + 2 * sd, color=line.get_color(), alpha=0.15, lw=0)


STYLE = {
    LAP_OURS: dict(color="C0"),
    LAP_U23: dict(color="C0", ls="--"),
    "TanG-Classical": dict(color="C1"),
    "TanG-Analytic": dict(color="C2"),
}
MCMC_COLOURS = ("C4", "C5", "C6")  # U23-style MCMC runs, apart from the exact samplers' colours
