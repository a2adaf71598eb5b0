"""U23 Fig. 1 on synthetic SPD(k): the Laplace against the tangent Gaussian (top), the effect of δ
(middle) and the extrinsic Gaussian baseline (bottom), over the matrix size k."""

from __future__ import annotations

import math
import warnings

import numpy as np

from geodp.datasets.synthetic import eigenvalue_design
from geodp.errors import PrivacyLeakWarning
from geodp.experiments.plotting import agg_pyplot
from geodp.experiments.published import published
from geodp.experiments.reproduce import Z95, Result, Row, bootstrap_interval, compare_text
from geodp.experiments.u23.baselines import extrinsic_gaussian_release
from geodp.experiments.u23.setting import (
    AXIS_PRECISION,
    DELTA_SYNTHETIC,
    DELTAS_MIDDLE,
    EPS_SYNTHETIC,
    KS,
    LAP_OURS,
    LAP_U23,
    N_SYNTHETIC,
    R_SYNTHETIC,
    STYLE,
    band,
    band_top,
    laplace_pair,
    le_mean,
    summary,
    tangent_gaussian,
)
from geodp.manifolds import SPD

__all__ = ["run_fig1"]

EXTG_PRECISION = {0.1: 0.20, 0.2: 0.25, 0.3: 0.12, 0.4: 0.12}  # published.u23: fig1-extg-k30-eps*


def run_fig1(repetitions, rng, progress):
    """U23 Fig. 1, Laplace against tangent Gaussian on synthetic SPD(k) data. ``repetitions`` releases per setting are
    drawn from ``rng``; ``progress`` wraps the loop (a tqdm-like callable). Returns the rows the item's table and
    figure are made of; run it through ``geodp reproduce u23-fig1``."""
    data = []
    for k in progress(KS, total=len(KS), desc="U23 Fig. 1: k"):
        space = SPD(k, metric="log-euclidean")
        radius = math.sqrt(k) * R_SYNTHETIC
        sens = 2.0 * radius / N_SYNTHETIC  # U23 Thm 3: √k/1000
        mechs = {}
        for eps in EPS_SYNTHETIC:
            m = {("top", DELTA_SYNTHETIC, name): mech for name, mech in laplace_pair(space, eps, sens).items()}
            for delta in (DELTA_SYNTHETIC,) + DELTAS_MIDDLE:
                panel = "top" if delta == DELTA_SYNTHETIC else "middle"
                m[(panel, delta, "TanG-Classical")] = tangent_gaussian(space, eps, delta, sens, "classical")
                m[(panel, delta, "TanG-Analytic")] = tangent_gaussian(space, eps, delta, sens)
            mechs[eps] = m
        for rep in range(repetitions):
            X = eigenvalue_design(N_SYNTHETIC, k, r=R_SYNTHETIC, rng=rng)
            M, c = le_mean(space, X)
            for eps in EPS_SYNTHETIC:
                for (panel, delta, name), mech in mechs[eps].items():
                    err = float(np.linalg.norm(mech.randomise_coordinates(M, rng=rng) - c))
                    data.append(
                        dict(
                            panel=panel,
                            k=k,
                            epsilon=eps,
                            delta=delta,
                            mechanism=name,
                            metric="log-Euclidean",
                            repetition=rep,
                            error=err,
                        )
                    )
                # bottom: Euclidean (Frobenius) distance to the LE Fréchet mean, as U23 measures it
                ext = extrinsic_gaussian_release(X, epsilon=eps, delta=DELTA_SYNTHETIC, radius=radius, rng=rng)
                with warnings.catch_warnings(record=True):  # the as-published variant, deliberately
                    warnings.simplefilter("always", PrivacyLeakWarning)
                    ext_pub = extrinsic_gaussian_release(
                        X, epsilon=eps, delta=DELTA_SYNTHETIC, radius=radius, as_published=True, rng=rng
                    )
                tang = mechs[eps][("top", DELTA_SYNTHETIC, "TanG-Analytic")].randomise(M, rng=rng)
                for name, out in (
                    ("ExtG-Analytic (ambient mean, sound)", ext),
                    ("ExtG-Analytic (on the Fréchet mean, as published)", ext_pub),
                    ("TanG-Analytic", tang),
                ):
                    data.append(
                        dict(
                            panel="bottom",
                            k=k,
                            epsilon=eps,
                            delta=DELTA_SYNTHETIC,
                            mechanism=name,
                            metric="Euclidean",
                            repetition=rep,
                            error=float(np.linalg.norm(out - M)),
                        )
                    )
    stats = summary(data, ("panel", "epsilon", "delta", "mechanism", "k"))
    plt = agg_pyplot()
    fig, axes = plt.subplots(3, 4, figsize=(16, 11))
    for j, eps in enumerate(EPS_SYNTHETIC):
        ax = axes[0, j]
        for name in (LAP_OURS, LAP_U23, "TanG-Classical", "TanG-Analytic"):
            band(ax, KS, [stats[("top", eps, DELTA_SYNTHETIC, name, k)] for k in KS], name, **STYLE.get(name, {}))
        ax.set_title(f"ε = {eps}, δ = 1e-6")
        ax = axes[1, j]
        for i, delta in enumerate(DELTAS_MIDDLE):
            for cal, ls in (("Classical", "-"), ("Analytic", "--")):
                band(
                    ax,
                    KS,
                    [stats[("middle", eps, delta, f"TanG-{cal}", k)] for k in KS],
                    f"TanG-{cal[:3]} (δ = {delta:g})",
                    color=f"C{i + 2}",
                    ls=ls,
                )
        ax.set_title(f"ε = {eps}")
        ax = axes[2, j]
        for i, name in enumerate(
            (
                "ExtG-Analytic (ambient mean, sound)",
                "ExtG-Analytic (on the Fréchet mean, as published)",
                "TanG-Analytic",
            )
        ):
            band(
                ax,
                KS,
                [stats[("bottom", eps, DELTA_SYNTHETIC, name, k)] for k in KS],
                name,
                color=f"C{5 + i}",
                ls="--" if "published" in name else "-",
            )
        ax.set_title(f"ε = {eps}, δ = 1e-6")
    for j, eps in enumerate(EPS_SYNTHETIC):  # the published readings at k = 30, with their precision
        top = published("U23", f"fig1-rie-laplace-k30-eps{eps}").value
        axes[0, j].errorbar(
            [30], [top], yerr=[AXIS_PRECISION * top], fmt="s", color="C1", capsize=3, label="U23's axis top (±15%)"
        )
        ext = published("U23", f"fig1-extg-k30-eps{eps}").value
        axes[2, j].errorbar(
            [30], [ext], yerr=[EXTG_PRECISION[eps] * ext], fmt="s", color="C1", capsize=3, label="U23's axis top"
        )
    for ax in axes.flat:
        ax.set_xlabel("matrix size k")
        ax.grid(alpha=0.3)
    for i, label in enumerate(("ρ_LE(f(D), A(D))", "ρ_LE(f(D), A(D))", "ρ_E(f(D), A(D)) (Frobenius)")):
        axes[i, 0].set_ylabel(label)
        axes[i, 0].legend(fontsize=7)
    fig.suptitle(
        f"U23 Fig. 1: synthetic SPD(k), n = {N_SYNTHETIC}, r = 1/4 (ball radius √k/4); mean ± 2 sd over "
        f"{repetitions} repetitions\ntop: Laplace vs tangent Gaussian; middle: δ; bottom: extrinsic Gaussian"
    )
    fig.tight_layout()

    rows = []
    for eps in EPS_SYNTHETIC:
        ours, ours_sd = stats[("top", eps, DELTA_SYNTHETIC, LAP_OURS, 30)]
        u23, u23_sd = stats[("top", eps, DELTA_SYNTHETIC, LAP_U23, 30)]
        pub = published("U23", f"fig1-rie-laplace-k30-eps{eps}").value
        text, note = compare_text(u23, Z95 * u23_sd / np.sqrt(repetitions), pub, digits=1)
        rows.append(
            Row(
                f"Fig. 1 top, Rie-Laplace, k = 30, ε = {eps} (± 95%)",
                f"{ours:.1f} ± {Z95 * ours_sd / np.sqrt(repetitions):.1f} (Δ/ε); {text} (2Δ/ε)",
                f"≈ {pub:g} (axis top)",
                f"2Δ/ε vs axis reading: {note}; published / ours (Δ/ε) = {pub / ours:.2f}",
            )
        )
    for eps in (0.1, 0.4):
        tang = stats[("top", eps, DELTA_SYNTHETIC, "TanG-Analytic", 30)][0]
        ours = stats[("top", eps, DELTA_SYNTHETIC, LAP_OURS, 30)][0] / tang
        u23 = stats[("top", eps, DELTA_SYNTHETIC, LAP_U23, 30)][0] / tang
        rows.append(
            Row(
                f"Fig. 1 top, Rie-Laplace / TanG-Analytic, k = 30, ε = {eps}",
                f"{ours:.1f} (Δ/ε); {u23:.1f} (2Δ/ε)",
                "≈ 10 ('almost ×10')",
                f"gain ×{u23:.1f} with U23's 2Δ/ε, ×{ours:.1f} with the sound Δ/ε",
            )
        )
    for eps in EPS_SYNTHETIC:
        ext = [
            d["error"]
            for d in data
            if (d["panel"], d["epsilon"], d["k"]) == ("bottom", eps, 30)
            and d["mechanism"] == "ExtG-Analytic (on the Fréchet mean, as published)"
        ]
        snd = stats[("bottom", eps, DELTA_SYNTHETIC, "ExtG-Analytic (ambient mean, sound)", 30)][0]
        tang = stats[("bottom", eps, DELTA_SYNTHETIC, "TanG-Analytic", 30)][0]
        pub = published("U23", f"fig1-extg-k30-eps{eps}").value
        text, note = compare_text(*bootstrap_interval(ext, band_top), pub, precision=EXTG_PRECISION[eps])
        rows.append(
            Row(
                f"Fig. 1 bottom, ExtG-Analytic, k = 30, ε = {eps} (band top, ± 95%)",
                f"{text} (as published), mean {np.mean(ext):.2f}; mean {snd:.2f} (sound); TanG {tang:.2f}",
                f"≈ {pub:g} (axis top)",
                f"as-published band top (mean + 2 sd) vs axis reading: {note}",
            )
        )
    return Result(fig, data, rows)
