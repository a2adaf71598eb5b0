"""The exponential-wrapped study (EW paper's setting): error vs μ of the exact Riemannian
Laplace, the wrapped Laplace, the wrapped Gaussian and the Riemannian Gaussian on SPD(k)
(affine-invariant, log-Euclidean and log-Cholesky) and hyperbolic spaces, n = 40 records in a
public ball of radius 1.5, with the time of each release.

The wrapped Gaussian is μ-GDP with ``σ = Δ/μ``; the two ε-DP Laplace mechanisms run at
``ε(μ) = log(Φ(μ/2)/Φ(−μ/2))``, the largest ε for which ε-DP implies μ-GDP (the trade-off curve
of ε-DP is piecewise linear with its kink at ``α = 1/(1 + e^ε)``, where ``G_μ`` must lie below
it; convexity of ``G_μ`` does the rest). The Riemannian Gaussian has no μ-GDP curve on curved
spaces (only a sound (ε, δ) profile): it is calibrated at one point of the μ-GDP profile,
``(ε_μ(δ), δ)`` with δ = :data:`DELTA` (:func:`epsilon_at_delta`) — on flat spaces that gives
exactly ``σ = Δ/μ``, on curved ones a release that matches μ-GDP at that δ only. Run
``python -m geodp.experiments.ew_study [--quick]``; ``--docs`` rewrites docs/ew_study.md
(:mod:`geodp.experiments.ew_docs`).
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.optimize import brentq
from scipy.stats import norm

from geodp.calibration import analytic_gaussian_delta
from geodp.distributions.wrapped import WrappedLaw
from geodp.errors import AssumptionError, NumericalWarning
from geodp.experiments.plotting import agg_pyplot
from geodp.frechet import frechet_mean
from geodp.manifolds import SPD, Hyperbolic
from geodp.mechanisms import LaplaceMechanism, RiemannianGaussianMechanism, WrappedLaplaceMechanism
from geodp.sensitivity import frechet_mean_sensitivity

__all__ = ["DELTA", "MECHANISMS", "epsilon_at_delta", "epsilon_for_mu", "run_ew_study", "main"]

MECHANISMS = ("riemannian-laplace", "wrapped-laplace", "wrapped-gaussian", "riemannian-gaussian")
DELTA = 1e-5  # the point of the μ-GDP profile at which the Riemannian Gaussian is calibrated
MUS = (0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0)
SIZES = (3, 10, 15)
N_RECORDS, RADIUS = 40, 1.5
_FIELDS = ("family", "size", "space", "mechanism", "mu", "epsilon", "scale", "exact", "status", "reps", "not_finite",
           "error", "error_se", "ms_per_release")  # fmt: skip
# why a cell has no releases (decided from public quantities only)
MCMC_ONLY, NO_SIGMA, BEYOND_FLOAT64 = "mcmc-only", "no-sigma", "beyond-float64"


def epsilon_for_mu(mu: float) -> float:
    """The ε at which an ε-DP release is μ-GDP: ``log(Φ(μ/2)/Φ(−μ/2))``.

    Examples
    --------
    >>> round(epsilon_for_mu(1.0), 4)
    0.807
    """
    return float(norm.logcdf(mu / 2.0) - norm.logcdf(-mu / 2.0))


def epsilon_at_delta(mu: float, delta: float = DELTA) -> float:
    """The ε at which a μ-GDP release is (ε, δ)-DP: the root of
    ``Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) = δ`` (Dong, Roth & Su 2022, Cor. 2.13).

    Examples
    --------
    >>> round(epsilon_at_delta(1.0, 1e-5), 3)
    4.377
    """
    return float(brentq(lambda e: analytic_gaussian_delta(1.0 / mu, e, 1.0) - delta, 0.0, 50.0 + 10.0 * mu * mu))


def _spaces(sizes):
    for k in sizes:
        yield "spd-affine", k, SPD(k)
        yield "spd-log-euclidean", k, SPD(k, metric="log-euclidean")
        yield "spd-log-cholesky", k, SPD(k, metric="log-cholesky")
        yield "hyperbolic", k, Hyperbolic(k)


def _dataset(space, center, rng):
    """n records in the public ball: Gaussian tangent vectors of scale 0.5 at the centre, clipped."""
    X = space.exp(center, 0.5 * space.random_tangent(center, N_RECORDS, rng=rng))
    return space.clip_to_ball(X, center, RADIUS)[0]


def _release_laws(mechanism, space, center, mu, delta_geo):
    """``(law_of, ε, scale, status)`` at μ: ``law_of(mean)`` is the release law for a mean, status
    ``"exact"`` or why there is none; decided from public quantities only (the sampler route does
    not look at the mean)."""
    if mechanism == "wrapped-gaussian":  # L = 1 on these spaces (curvature <= 0): σ = Δ/μ
        sigma = delta_geo / mu
        return (lambda mean: WrappedLaw(space, center, mean, "gaussian", sigma)), math.nan, sigma, "exact"
    if mechanism == "riemannian-gaussian":
        epsilon = epsilon_at_delta(mu)
        try:
            mech = RiemannianGaussianMechanism(space, epsilon=epsilon, delta=DELTA, sensitivity=delta_geo)
        except AssumptionError:  # no σ meets (ε, δ) by the triangle bound
            return None, epsilon, math.nan, NO_SIGMA
        return mech.distribution, epsilon, mech.scale, "exact"
    epsilon = epsilon_for_mu(mu)
    kind = WrappedLaplaceMechanism if mechanism == "wrapped-laplace" else LaplaceMechanism
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mech = kind(space, epsilon=epsilon, sensitivity=delta_geo, center=center, radius=RADIUS)
    return mech.distribution, epsilon, mech.scale, "exact" if mech.guarantee.exact else MCMC_ONLY


def run_ew_study(output_dir="geodp-ew-study", *, quick=False, reps=None, seed=0, plot=True, out=None) -> list[dict]:
    """Error (geodesic distance to the non-private mean) vs μ of the three mechanisms.

    Parameters
    ----------
    output_dir : str or Path
        Where ``ew_study.csv`` and ``ew_study.png`` are written.
    quick : bool
        Sizes 3 and 10, four μ, 10 repetitions (under a minute); otherwise sizes 3, 10, 15, eight
        μ from 0.1 to 2 and 100 repetitions (the EW paper's setting).
    reps : int, optional
        Overrides the repetitions.
    seed : int
    plot : bool
        Write the plot (needs matplotlib).
    out : file-like, optional

    Returns
    -------
    list of dict
        One row per (space, mechanism, μ). Cells without an exact release are kept with
        ``exact = False``, no error and ``status`` saying why: ``"mcmc-only"`` (the Riemannian
        Laplace on affine-invariant SPD of size 10 and 15 at most μ would run MCMC) or
        ``"no-sigma"`` (no σ makes the Riemannian Gaussian (ε, δ)-DP by the triangle bound); cells
        where some release is not a valid float64 point have ``status = "beyond-float64"`` and no
        mean error (the count is in ``not_finite``).

    Examples
    --------
    >>> import io
    >>> rows = run_ew_study(quick=True, reps=1, plot=False, out=io.StringIO(), output_dir=None)
    >>> sorted({r["mechanism"] for r in rows}) == sorted(MECHANISMS)
    True
    """
    out = sys.stdout if out is None else out
    sizes, mus = ((3, 10), (0.1, 0.5, 1.0, 2.0)) if quick else (SIZES, MUS)
    reps = (10 if quick else 100) if reps is None else int(reps)
    rng = np.random.default_rng(seed)
    rows = []
    for family, size, space in _spaces(sizes):
        center = space.reference_point()
        delta_geo = frechet_mean_sensitivity(space, RADIUS, N_RECORDS)
        datasets = [_dataset(space, center, rng) for _ in range(reps)]
        means = [frechet_mean(space, X, tol=1e-12, max_iter=500, init=center) for X in datasets]
        for mechanism in MECHANISMS:
            for mu in mus:
                law_of, epsilon, scale, status = _release_laws(mechanism, space, center, mu, delta_geo)
                errors, seconds = [], 0.0
                for mean in means if status == "exact" else ():  # no MCMC here: the cell is left empty
                    started = time.perf_counter()
                    release = law_of(mean).sample(rng=rng)
                    seconds += time.perf_counter() - started
                    # a release far out (log-eigenvalues ±40 at small μ on SPD(10)) may not be a valid
                    # float64 point (an SPD matrix with negative computed eigenvalues): its distance would be
                    # garbage (up to 1e9 on LC-SPD(15)); it is counted, and the cell gets no mean (leaving
                    # out only those releases would bias the mean down: they are the farthest ones)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", NumericalWarning)
                        valid = bool(np.all(space.belongs(release)))
                        errors.append(float(space.unchecked.dist(mean, release)) if valid else math.nan)
                if status == "exact" and not np.all(np.isfinite(errors)):
                    status = BEYOND_FLOAT64
                rows.append(_row(family, size, space, mechanism, mu, epsilon, scale, status, errors, seconds))
            print(f"  {space!r:<36} {mechanism:<19} done", file=out)
    if output_dir is not None:
        _write(rows, Path(output_dir), plot, out)
    return rows


def _row(family, size, space, mechanism, mu, epsilon, scale, status, errors, seconds) -> dict:
    """One CSV row: the mean error with its standard error over the finite ones, and how many
    releases were not finite points (the noise carried them beyond float64)."""
    errors = np.asarray(errors, dtype=float)
    finite = errors[np.isfinite(errors)]
    mean_ok = status == "exact"  # not for a cell with releases beyond float64 (their mean would be biased)
    return dict(
        family=family,
        size=size,
        space=repr(space),
        mechanism=mechanism,
        mu=mu,
        epsilon=epsilon,
        scale=scale,
        exact=status in ("exact", BEYOND_FLOAT64),
        status=status,
        reps=int(errors.size),
        not_finite=int(errors.size - finite.size),
        error=float(finite.mean()) if finite.size and mean_ok else math.nan,
        error_se=float(finite.std(ddof=1) / math.sqrt(finite.size)) if finite.size > 1 and mean_ok else math.nan,
        ms_per_release=1e3 * seconds / errors.size if errors.size else math.nan,
    )


def _write(rows, folder: Path, plot: bool, out) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "ew_study.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=_FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {folder / 'ew_study.csv'}", file=out)
    if not plot:
        return
    try:
        plt = agg_pyplot()
    except ImportError:
        print("matplotlib is not installed: no plot (pip install 'geodp[experiments]')", file=out)
        return
    families = list(dict.fromkeys(r["family"] for r in rows))
    sizes = list(dict.fromkeys(r["size"] for r in rows))
    fig, axes = plt.subplots(len(families), len(sizes), figsize=(4 * len(sizes), 3 * len(families)), squeeze=False)
    for i, family in enumerate(families):
        for j, size in enumerate(sizes):
            ax = axes[i][j]
            for mechanism in MECHANISMS:
                cell = [r for r in rows if (r["family"], r["size"], r["mechanism"]) == (family, size, mechanism)]
                cell = [r for r in cell if r["exact"]]
                if cell:
                    ax.errorbar([r["mu"] for r in cell], [r["error"] for r in cell],
                                yerr=[r["error_se"] for r in cell], marker="o", ms=3, label=mechanism,
                                color=f"C{MECHANISMS.index(mechanism)}")  # fmt: skip
            ax.set(xscale="log", yscale="log", title=f"{family} ({size})", xlabel="μ (GDP)", ylabel="mean error")
            ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(folder / "ew_study.png", dpi=110)
    plt.close(fig)
    print(f"wrote {folder / 'ew_study.png'}", file=out)


def main(argv=None) -> int:
    """``python -m geodp.experiments.ew_study [--quick] [--reps R] [--seed S] [--output DIR]``."""
    parser = argparse.ArgumentParser(prog="python -m geodp.experiments.ew_study", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="sizes 3 and 10, four μ, 10 repetitions")
    parser.add_argument("--reps", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", default="geodp-ew-study")
    args = parser.parse_args(argv)
    run_ew_study(args.output, quick=args.quick, reps=args.reps, seed=args.seed)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
