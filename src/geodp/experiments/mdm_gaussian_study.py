"""Private MDM on the fMRI connectomes with the Gaussian mechanisms at δ = 1e-5, and what each
part contributes: the data ball (the provable coarse ball, a private radius around the public
centre, or :func:`geodp.domain.private_ball`) and the noise (Laplace vs Gaussian).

Every arm spends the same total (ε, δ): a private ball takes :data:`BALL_SHARE`·ε of it (pure
ε-DP), the class means the rest, both charged to one
:class:`~geodp.accountant.BudgetAccountant` (sequential composition). Arms:

* ``coarse``: the provable public ball around I (radius 14.15, ``load_connectomes``);
* ``private-radius``: the public centre I and a private quantile (level :data:`QUANTILE`) of the
  records' distances to it (:func:`~geodp.mechanisms.quantile.private_quantile` on their
  logarithms, as in ``private_ball``'s second step; I is a good public centre here, so only the
  radius is bought);
* ``private-ball``: :func:`geodp.domain.private_ball` (a private centre, then the radius), on the
  log-Euclidean metric only (its centre is a Riemannian Laplace release, MCMC on AI-SPD(28)).

Each released class mean is projected onto its data ball (post-processing: at small ε an affine
release can otherwise leave float64). Noise: ``laplace`` (log-Euclidean) or ``wrapped-laplace``
(affine-invariant) against ``tangent-gaussian`` (log-Euclidean) or ``wrapped-gaussian``
(affine-invariant), all exact. Run ``python -m geodp.experiments.mdm_gaussian_study [--quick]``;
``--docs`` rewrites the generated section of docs/mdm_gaussian.md from the run (and docs/mdm_gaussian.json).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

from geodp.accountant import BudgetAccountant
from geodp.domain import LOG_FLOOR, private_ball
from geodp.experiments.generated_docs import END, begin_marker, run_record, short_exp, write_generated
from geodp.experiments.mdm_study import _oracle_accuracy, load_study_data
from geodp.manifolds import SPD
from geodp.mechanisms.quantile import private_quantile, quantile_guarantee
from geodp.models import PrivateMDM
from geodp.validation import as_generator

__all__ = ["ARMS", "BALL_SHARE", "DELTA", "QUANTILE", "BEGIN", "render", "run_mdm_gaussian_study", "main"]

DELTA = 1e-5
BALL_SHARE = 0.2  # of ε, for a private ball
QUANTILE = 0.75  # the data are packed in a thin shell (distances 2.5-3.6 to I): clipping the top quarter costs little
# (metric, ball, mechanism)
_NOISES = {"log-euclidean": ("laplace", "tangent-gaussian"), "affine": ("wrapped-laplace", "wrapped-gaussian")}
ARMS = tuple(
    (metric, ball, mech)
    for metric, mechs in _NOISES.items()
    for ball in ("coarse", "private-radius", "private-ball")
    for mech in mechs
    if not (ball == "private-ball" and metric == "affine")
)  # fmt: skip
EPSILONS, QUICK_EPSILONS = (3.0, 10.0, 30.0, 100.0), (10.0,)
BEGIN = begin_marker("geodp.experiments.mdm_gaussian_study --docs")
RESULTS, PAGE, IMAGE = "docs/mdm_gaussian.json", "docs/mdm_gaussian.md", "docs/images/mdm_gaussian.png"


def _private_radius(space, X, center, coarse_radius, epsilon, budget, rng) -> float:
    """ε-DP ``QUANTILE`` of the records' distances to the public ``center`` (clipped to the coarse
    radius), on a log scale floored at ``coarse_radius·LOG_FLOOR``; charged to ``budget`` first."""
    lower, upper = math.log(coarse_radius * LOG_FLOOR), math.log(coarse_radius)
    budget.spend(quantile_guarantee(epsilon=epsilon, quantile=QUANTILE, lower=lower, upper=upper, random_state=rng))
    distances = np.clip(space.dist(center, X), coarse_radius * LOG_FLOOR, coarse_radius)
    drawn = private_quantile(np.log(distances), epsilon=epsilon, quantile=QUANTILE, lower=lower, upper=upper,
                             random_state=rng)  # fmt: skip
    return min(math.exp(drawn), coarse_radius)


def _fit(data, metric, ball, mechanism, epsilon, rng):
    """One private fit of the arm at total (ε, δ); returns (accuracy, radius used)."""
    space = SPD(data.k, metric=metric)
    center = np.eye(data.k)
    delta = DELTA if mechanism.endswith("gaussian") else 0.0
    budget = BudgetAccountant(epsilon=epsilon, delta=DELTA)
    rest = epsilon if ball == "coarse" else (1.0 - BALL_SHARE) * epsilon
    where = dict(center=center, radius=data.radius)
    if ball == "private-radius":
        radius = _private_radius(space, data.X_train, center, data.radius, BALL_SHARE * epsilon, budget, rng)
        where = dict(center=center, radius=radius)
    elif ball == "private-ball":
        found = private_ball(space, data.X_train, epsilon=BALL_SHARE * epsilon, center=center, radius=data.radius,
                             accountant=budget, random_state=rng)  # fmt: skip
        where = dict(ball=found)
    model = PrivateMDM(space, epsilon=rest, delta=delta, mechanism=mechanism, accountant=budget, random_state=rng,
                       project_to_ball=True, **where)  # fmt: skip
    model.fit(data.X_train, data.y_train)
    radius = where["ball"].radius if "ball" in where else where["radius"]
    return float(model.score(data.X_test, data.y_test)), float(radius)


def run_mdm_gaussian_study(*, quick=False, repeats=None, epsilons=None, arms=ARMS, seed=0, out=None) -> list[dict]:
    """Test accuracy of private MDM on the connectomes for every arm and ε.

    Parameters
    ----------
    quick : bool
        ε = 10 only and 5 repeats; otherwise ε ∈ {3, 10, 30, 100} and 20 repeats.
    repeats : int, optional
        Releases per (arm, ε); overrides the default.
    epsilons : sequence of float, optional
        Total ε of each fit (the ball's share included); overrides the default.
    arms : sequence of (metric, ball, mechanism)
        A subset of :data:`ARMS`.
    seed : int
    out : file-like, optional

    Returns
    -------
    list of dict
        One row per (arm, ε): mean accuracy and its standard error, the mean radius used, the
        non-private (pyRiemann) accuracy and chance.

    Examples
    --------
    >>> import io
    >>> rows = run_mdm_gaussian_study(quick=True, repeats=1, arms=[("log-euclidean", "coarse", "laplace")],
    ...                               out=io.StringIO())
    >>> [(r["ball"], r["mechanism"], r["epsilon"]) for r in rows]
    [('coarse', 'laplace', 10.0)]
    """
    out = sys.stdout if out is None else out
    repeats = (5 if quick else 20) if repeats is None else int(repeats)
    epsilons = (QUICK_EPSILONS if quick else EPSILONS) if epsilons is None else tuple(epsilons)
    rng = as_generator(seed)
    data = load_study_data("connectomes")
    chance = float(np.max(np.unique(data.y_test, return_counts=True)[1]) / len(data.y_test))
    oracle = {metric: _oracle_accuracy(data, metric) for metric in {a[0] for a in arms}}
    rows = []
    for metric, ball, mechanism in arms:
        for epsilon in epsilons:
            started = time.perf_counter()
            fits = [_fit(data, metric, ball, mechanism, epsilon, rng) for _ in range(repeats)]
            accuracy = np.array([f[0] for f in fits])
            rows.append(dict(metric=metric, ball=ball, mechanism=mechanism, epsilon=epsilon, delta=DELTA,
                             repeats=repeats, accuracy=float(accuracy.mean()),
                             accuracy_se=float(accuracy.std(ddof=1) / math.sqrt(repeats)) if repeats > 1 else math.nan,
                             radius=float(np.mean([f[1] for f in fits])), non_private=oracle[metric], chance=chance,
                             seconds_per_fit=(time.perf_counter() - started) / repeats))  # fmt: skip
            r = rows[-1]
            print(f"{metric:>13} {ball:>14} {mechanism:>16} ε={epsilon:<6g} accuracy {r['accuracy']:.3f} "
                  f"radius {r['radius']:.3g}", file=out)  # fmt: skip
    return rows


def _find(rows, **key):
    return next(r for r in rows if all(r[k] == v for k, v in key.items()))


def _findings(rows) -> list[str]:
    chance = rows[0]["chance"]
    target = 10.0 if any(r["epsilon"] == 10.0 for r in rows) else rows[0]["epsilon"]
    at = [r for r in rows if r["epsilon"] == target]
    best = max(at, key=lambda r: r["accuracy"])
    met = best["accuracy"] >= chance + 0.1
    lines = [
        f"- **Done-when (accuracy ≥ chance + 0.1 = {chance + 0.1:.3f} at ε = {target:g}):** "
        + ("met" if met else "**not met**")
        + f". Best arm: {best['metric']}, {best['ball']}, {best['mechanism']}: {best['accuracy']:.3f} "
        f"(non-private {best['non_private']:.3f}, chance {chance:.3f}).",
    ]
    reach = []
    for arm in dict.fromkeys((r["metric"], r["ball"], r["mechanism"]) for r in rows):
        ok = [r["epsilon"] for r in rows if (r["metric"], r["ball"], r["mechanism"]) == arm
              and r["accuracy"] >= chance + 0.1]  # fmt: skip
        reach.append(f"{', '.join(arm)}: {'ε = ' + format(min(ok), 'g') if ok else 'not in the grid'}")
    lines.append("- **Smallest ε of the grid with accuracy ≥ chance + 0.1:** " + "; ".join(reach) + ".")
    for metric in dict.fromkeys(r["metric"] for r in at):
        laplace, gaussian = _NOISES[metric]
        have = {(r["ball"], r["mechanism"]) for r in at if r["metric"] == metric}
        if not {(b, m) for b in ("coarse", "private-radius") for m in (laplace, gaussian)} <= have:
            continue  # the ablation needs both balls and both noises
        coarse_l = _find(at, metric=metric, ball="coarse", mechanism=laplace)["accuracy"]
        coarse_g = _find(at, metric=metric, ball="coarse", mechanism=gaussian)["accuracy"]
        radius_g = _find(at, metric=metric, ball="private-radius", mechanism=gaussian)
        radius_l = _find(at, metric=metric, ball="private-radius", mechanism=laplace)["accuracy"]
        lines.append(
            f"- **{metric}, ε = {target:g}:** {laplace} on the coarse ball {coarse_l:.3f}; the Gaussian "
            f"alone ({gaussian}, coarse ball) {coarse_g - coarse_l:+.3f}; the private radius alone ({laplace}) "
            f"{radius_l - coarse_l:+.3f}; both {radius_g['accuracy'] - coarse_l:+.3f} "
            f"(mean private radius {radius_g['radius']:.3g} against the coarse "
            f"{_find(at, ball='coarse')['radius']:.4g})."
        )
    return lines


def render(results: dict) -> str:
    """The generated section of docs/mdm_gaussian.md from a run record.

    Examples
    --------
    >>> row = dict(metric="affine", ball="coarse", mechanism="wrapped-gaussian", epsilon=10.0, accuracy=0.6,
    ...            accuracy_se=None, radius=14.15, non_private=0.72, chance=0.55, seconds_per_fit=0.1)
    >>> text = render(dict(code="x", seconds=1, quick=True, repeats=1, seed=0, rows=[row]))
    >>> text.startswith(BEGIN) and text.endswith(END), "not met" in text
    (True, True)
    """
    rows = results["rows"]
    eps = list(dict.fromkeys(r["epsilon"] for r in rows))
    arms = list(dict.fromkeys((r["metric"], r["ball"], r["mechanism"]) for r in rows))

    def cell(r):
        se = f" ± {1.96 * r['accuracy_se']:.2f}" if r["accuracy_se"] is not None else ""
        return f"{r['accuracy']:.3f}{se}"

    lines = [
        BEGIN,
        "",
        f"Run: `python -m geodp.experiments.mdm_gaussian_study --docs{' --quick' if results['quick'] else ''} "
        f"--repeats {results['repeats']}` ({results['seconds']} s on this machine, seed {results['seed']}; "
        f"code digest `{results['code']}`). δ = {short_exp(DELTA)} for the Gaussian arms, ball share "
        f"{BALL_SHARE:g}·ε, quantile level {QUANTILE:g}; test accuracy, mean ± 1.96 s.e. over "
        f"{results['repeats']} fits; non-private (pyRiemann) accuracy {rows[0]['non_private']:.3f}, chance "
        f"{rows[0]['chance']:.3f}.",
        "",
        "![accuracy vs ε](images/mdm_gaussian.png)" if len(eps) > 1 else "",
        "",
        "| metric | ball | mechanism | mean radius | " + " | ".join(f"ε = {e:g}" for e in eps) + " |",
        "|---|---|---|---:|" + "---:|" * len(eps),
    ]
    for metric, ball, mech in arms:
        cells = [_find(rows, metric=metric, ball=ball, mechanism=mech, epsilon=e) for e in eps]
        radius = np.mean([c["radius"] for c in cells])
        lines.append(f"| {metric} | {ball} | {mech} | {radius:.3g} | " + " | ".join(cell(c) for c in cells) + " |")
    lines += ["", "**Findings**", "", *_findings(rows), "", END]
    return "\n".join(lines)


def _plot(rows, path: Path) -> None:
    from geodp.experiments.plotting import agg_pyplot

    plt = agg_pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    for i, arm in enumerate(dict.fromkeys((r["metric"], r["ball"], r["mechanism"]) for r in rows)):
        cell = [r for r in rows if (r["metric"], r["ball"], r["mechanism"]) == arm]
        style = "-" if arm[2].endswith("gaussian") else "--"
        ax.plot([r["epsilon"] for r in cell], [r["accuracy"] for r in cell], style, marker="o", ms=3,
                color=f"C{i // 2}", label=", ".join(arm))  # fmt: skip
    ax.axhline(rows[0]["chance"], color="grey", lw=0.8, label="chance")
    ax.axhline(rows[0]["chance"] + 0.1, color="grey", lw=0.8, ls=":", label="chance + 0.1")
    ax.set(xscale="log", xlabel="total ε (δ = 1e-5 for the Gaussian arms)", ylabel="test accuracy")
    ax.legend(fontsize=6, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    """``python -m geodp.experiments.mdm_gaussian_study [--quick] [--repeats N] [--seed S] [--docs] [--repo DIR]``."""
    parser = argparse.ArgumentParser(prog="python -m geodp.experiments.mdm_gaussian_study",
                                     description=__doc__.splitlines()[0])  # fmt: skip
    parser.add_argument("--quick", action="store_true", help="ε = 10 only, 5 repeats")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--docs", action="store_true", help="rewrite docs/mdm_gaussian.md and its JSON and plot")
    parser.add_argument("--repo", default=".")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    rows = run_mdm_gaussian_study(quick=args.quick, repeats=args.repeats, seed=args.seed)
    if args.docs:
        repo = Path(args.repo)
        results = run_record(rows, seconds=round(time.perf_counter() - started), quick=args.quick,
                             repeats=rows[0]["repeats"], seed=args.seed)  # fmt: skip
        if len({r["epsilon"] for r in rows}) > 1:
            _plot(rows, repo / IMAGE)
        write_generated(repo, RESULTS, PAGE, results, render(results), BEGIN)
        print(f"wrote {repo / PAGE} and {repo / RESULTS}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
