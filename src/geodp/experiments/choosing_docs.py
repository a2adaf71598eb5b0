"""The measured part of docs/choosing.md, "Choosing a mechanism": error vs ε of every mechanism
of :class:`~geodp.models.PrivateFrechetMean` in one setting, and the ε of k composed releases
under sequential and PLD composition. ``python -m geodp.experiments.choosing_docs [--quick]``
prints the numbers; ``--docs`` also writes docs/choosing.json, docs/images/choosing.png and the
generated section of docs/choosing.md."""

from __future__ import annotations

import argparse
import math
import time
import warnings
from pathlib import Path

import dp_accounting
import numpy as np
from scipy.optimize import brentq

from geodp.composition import EpsilonDeltaDpEvent, composed_epsilon
from geodp.errors import ApproximateSamplerWarning
from geodp.experiments.generated_docs import END, begin_marker, run_record, short_exp, write_generated
from geodp.frechet import frechet_mean
from geodp.manifolds import Hyperbolic
from geodp.models import PrivateFrechetMean

__all__ = ["BEGIN", "DELTA", "MECHANISMS", "composition_rows", "error_rows", "render", "main"]

MECHANISMS = ("laplace", "kng", "wrapped-laplace", "wrapped-gaussian", "riemannian-gaussian")
DELTA = 1e-5
DIM, N, RADIUS, SPREAD = 10, 100, 1.0, 0.3
EPSILONS, QUICK_EPSILONS = (0.3, 1.0, 3.0, 10.0), (1.0,)
KS = (1, 2, 5, 10, 20, 50, 100)
TOTAL = 10.0  # the total ε of the "100 releases" comparison
BEGIN = begin_marker("geodp.experiments.choosing_docs --docs")
RESULTS, PAGE, IMAGE = "docs/choosing.json", "docs/choosing.md", "docs/images/choosing.png"


def _setting(rng):
    space = Hyperbolic(DIM)
    center = space.reference_point()
    X = space.clip_to_ball(space.exp(center, SPREAD * space.random_tangent(center, N, rng=rng)), center, RADIUS)[0]
    return space, center, X, frechet_mean(space, X, tol=1e-12, max_iter=500, init=center)


def error_rows(*, epsilons=EPSILONS, reps=20, mechanisms=MECHANISMS, seed=0) -> list[dict]:
    """Mean geodesic error of ``reps`` releases of the Fréchet mean per (mechanism, ε) on H^10,
    n = 100 records in the public ball of radius 1 (δ = 1e-5 for the Gaussian mechanisms).

    Examples
    --------
    >>> rows = error_rows(epsilons=[1.0], reps=2, mechanisms=["laplace"])
    >>> [(r["mechanism"], r["epsilon"], r["exact"]) for r in rows]
    [('laplace', 1.0, True)]
    """
    rng = np.random.default_rng(seed)
    space, center, X, truth = _setting(rng)
    rows = []
    for mechanism in mechanisms:
        delta = DELTA if mechanism.endswith("gaussian") else 0.0
        for epsilon in epsilons:
            errors, exact, started = [], True, time.perf_counter()
            for _ in range(reps):
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    model = PrivateFrechetMean(space, epsilon=epsilon, delta=delta, center=center, radius=RADIUS,
                                               mechanism=mechanism, random_state=rng).fit(X)  # fmt: skip
                exact &= not any(issubclass(w.category, ApproximateSamplerWarning) for w in caught)
                errors.append(float(space.dist(truth, model.mean_)))
            rows.append(dict(mechanism=mechanism, epsilon=epsilon, delta=delta, reps=reps,
                             error=float(np.mean(errors)), error_se=float(np.std(errors, ddof=1) / math.sqrt(reps))
                             if reps > 1 else math.nan, exact=exact,
                             ms_per_fit=1e3 * (time.perf_counter() - started) / reps))  # fmt: skip
    return rows


def _gaussian_mu(epsilon: float, delta: float) -> float:
    """μ of the Gaussian release calibrated to (ε, δ) by the analytic rule: the μ whose GDP profile
    passes through (ε, δ)."""
    from geodp.calibration import analytic_gaussian_delta

    return float(brentq(lambda mu: analytic_gaussian_delta(1.0 / mu, epsilon, 1.0) - delta, 1e-6, 100.0))


def composition_rows(ks=KS, *, epsilon=1.0, delta=DELTA) -> list[dict]:
    """ε at δ of k releases, each pure ε-DP (Laplace, KNG) or a Gaussian calibrated to (ε, δ),
    composed sequentially (k·ε; the Gaussian at k·δ) or by PLD (dp-accounting).

    Examples
    --------
    >>> [round(r["laplace_pld"], 2) for r in composition_rows([1, 100])][0]
    1.0
    """
    mu = _gaussian_mu(epsilon, delta)
    rows = []
    for k in ks:
        gaussian = [dp_accounting.GaussianDpEvent(noise_multiplier=1.0 / mu)] * k
        rows.append(dict(k=k, sequential=k * epsilon,
                         laplace_pld=composed_epsilon([EpsilonDeltaDpEvent(epsilon, 0.0)] * k, delta, "pld"),
                         gaussian_pld=composed_epsilon(gaussian, delta, "pld")))  # fmt: skip
    return rows


def budget_split(k: int = 100, total: float = TOTAL, delta: float = DELTA) -> dict:
    """Per-release budget of k releases that together spend (``total``, δ), and the expected noise
    norm of one release in units of Δ on a flat d = 10 space (ℓ2 Laplace: d/ε; Gaussian: √d/μ).

    Examples
    --------
    >>> split = budget_split(k=1, total=1.0)
    >>> split["laplace_sequential_eps"], round(split["laplace_pld_eps"], 3)
    (1.0, 1.0)
    """

    def laplace_total(eps0):
        return composed_epsilon([EpsilonDeltaDpEvent(eps0, 0.0)] * k, delta, "pld") - total

    pld_eps = total if k == 1 else float(brentq(laplace_total, total / k, total))
    mu0 = _gaussian_mu(total, delta) / math.sqrt(k)  # μ-GDP composes as √(Σμ²)
    return dict(k=k, total=total, laplace_sequential_eps=total / k, laplace_pld_eps=pld_eps, gaussian_mu=mu0,
                noise_laplace_sequential=DIM * k / total, noise_laplace_pld=DIM / pld_eps,
                noise_gaussian=math.sqrt(DIM) / mu0)  # fmt: skip


def render(results: dict) -> str:
    """The generated section of docs/choosing.md from a run record.

    Examples
    --------
    >>> rec = dict(code="x", seconds=1, quick=True, reps=1, seed=0, errors=[dict(mechanism="kng", epsilon=1.0,
    ...            error=0.5, exact=True, ms_per_fit=3.0)], composition=composition_rows([1]), split=budget_split())
    >>> render(rec).startswith(BEGIN)
    True
    """
    eps = list(dict.fromkeys(r["epsilon"] for r in results["errors"]))
    mechs = list(dict.fromkeys(r["mechanism"] for r in results["errors"]))
    find = {(r["mechanism"], r["epsilon"]): r for r in results["errors"]}
    split = results["split"]
    lines = [
        BEGIN,
        "",
        f"Run: `python -m geodp.experiments.choosing_docs --docs{' --quick' if results['quick'] else ''}` "
        f"({results['seconds']} s on this machine, seed {results['seed']}; code digest `{results['code']}`). "
        f"Setting: the Fréchet mean of n = {N} records on H^{DIM} in the public ball of radius {RADIUS:g} "
        f"(Gaussian tangent vectors of scale {SPREAD:g}, clipped), δ = {short_exp(DELTA)} for the Gaussian "
        f"mechanisms; error = geodesic distance to the non-private mean, averaged over {results['reps']} releases.",
        "",
        "![error vs ε and composed ε](images/choosing.png)",
        "",
        "| mechanism | " + " | ".join(f"ε = {e:g}" for e in eps) + " | ms per fit |",
        "|---|" + "---:|" * (len(eps) + 1),
    ]
    for m in mechs:
        cells = [find[(m, e)] for e in eps]
        flag = "" if all(c["exact"] for c in cells) else " (MCMC)"
        lines.append(f"| {m}{flag} | " + " | ".join(f"{c['error']:.3g}" for c in cells)
                     + f" | {np.median([c['ms_per_fit'] for c in cells]):.0f} |")  # fmt: skip
    lines += ["", f"ε at δ = {short_exp(DELTA)} of k releases, each ε = 1 (the Gaussian calibrated to (1, δ)):", "",
              "| k | sequential (k·ε) | Laplace/KNG, PLD | Gaussian, PLD |", "|---:|---:|---:|---:|"]  # fmt: skip
    lines += [f"| {r['k']} | {r['sequential']:.3g} | {r['laplace_pld']:.3g} | {r['gaussian_pld']:.3g} |"
              for r in results["composition"]]  # fmt: skip
    lines += [
        "",
        f"**{split['k']} releases that together spend (ε = {split['total']:g}, δ = {short_exp(DELTA)})**: "
        f"sequentially each Laplace release gets ε = {split['laplace_sequential_eps']:.3g}; by PLD "
        f"ε = {split['laplace_pld_eps']:.3g}; each Gaussian release gets μ = {split['gaussian_mu']:.3g}. The "
        f"expected noise norm of one release on a flat d = {DIM} space, in units of Δ: "
        f"{split['noise_laplace_sequential']:.3g} (Laplace, sequential), {split['noise_laplace_pld']:.3g} "
        f"(Laplace, PLD), {split['noise_gaussian']:.3g} (Gaussian, PLD).",
        "",
        END,
    ]
    return "\n".join(lines)


def _plot(results: dict, path: Path) -> None:
    from geodp.experiments.plotting import agg_pyplot

    plt = agg_pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    for i, m in enumerate(dict.fromkeys(r["mechanism"] for r in results["errors"])):
        cell = [r for r in results["errors"] if r["mechanism"] == m]
        left.plot([r["epsilon"] for r in cell], [r["error"] for r in cell], marker="o", ms=3, color=f"C{i}", label=m)
    left.set(xscale="log", yscale="log", xlabel="ε (δ = 1e-5 for the Gaussians)", ylabel="mean error",
             title=f"Fréchet mean on H^{DIM}, n = {N}, r = {RADIUS:g}")  # fmt: skip
    ks = [r["k"] for r in results["composition"]]
    for key, label in (("sequential", "sequential (k·ε)"), ("laplace_pld", "Laplace, PLD"),
                       ("gaussian_pld", "Gaussian, PLD")):  # fmt: skip
        right.plot(ks, [r[key] for r in results["composition"]], marker="o", ms=3, label=label)
    right.set(xscale="log", yscale="log", xlabel="k releases (each ε = 1)", ylabel="total ε at δ = 1e-5",
              title="composing k releases")  # fmt: skip
    for ax in (left, right):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    """``python -m geodp.experiments.choosing_docs [--quick] [--reps R] [--docs] [--repo DIR]``."""
    parser = argparse.ArgumentParser(prog="python -m geodp.experiments.choosing_docs",
                                     description=__doc__.splitlines()[0])  # fmt: skip
    parser.add_argument("--quick", action="store_true", help="ε = 1 only, 3 releases per mechanism")
    parser.add_argument("--reps", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--docs", action="store_true")
    parser.add_argument("--repo", default=".")
    args = parser.parse_args(argv)
    reps = (3 if args.quick else 50) if args.reps is None else args.reps
    started = time.perf_counter()
    errors = error_rows(epsilons=QUICK_EPSILONS if args.quick else EPSILONS, reps=reps, seed=args.seed)
    results = run_record(errors, seconds=round(time.perf_counter() - started), quick=args.quick, reps=reps,
                         seed=args.seed)  # fmt: skip
    results["errors"] = results.pop("rows")
    results.update(composition=run_record(composition_rows())["rows"], split=run_record([budget_split()])["rows"][0])
    text = render(results)
    print(text)
    if args.docs:
        repo = Path(args.repo)
        _plot(results, repo / IMAGE)
        write_generated(repo, RESULTS, PAGE, results, text, BEGIN)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
