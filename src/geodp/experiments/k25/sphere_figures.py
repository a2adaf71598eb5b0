"""K25 Figs. 1–3 and 6 on the sphere: the private geodesics, the histograms of footpoint distance,
velocity angle and MAE over releases, and the MAE against n."""

from __future__ import annotations

import numpy as np

from geodp.experiments.k25.releases import (
    release_stats,
    sphere_releases,
)
from geodp.experiments.k25.setting import (
    AS_PUBLISHED,
    EPSILON,
    N_GRID,
    N_SPHERE,
    RADIUS,
    SOUND,
)
from geodp.experiments.k25.streams import shared_stream
from geodp.experiments.plotting import agg_pyplot
from geodp.experiments.published import published
from geodp.experiments.reproduce import Result, Row
from geodp.manifolds import Sphere

__all__ = ["run_fig1", "run_fig2", "run_fig6"]


def run_fig1(repetitions, rng, progress):
    space = Sphere(2)
    data, mae_hat, (t, Y, p_hat, v_hat, sound, pub) = sphere_releases(N_SPHERE, repetitions, rng)
    centre = space.exp(p_hat, 0.5 * v_hat)
    e1 = v_hat - np.dot(v_hat, centre) * centre
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(centre, e1)

    def chart(points):  # Log at the fit's midpoint, in the basis (along v̂, across), radians
        logs = space.log(np.broadcast_to(centre, np.shape(points)), points)
        return logs @ e1, logs @ e2

    plt = agg_pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 6.2))
    angle = np.linspace(0, 2 * np.pi, 200)
    ax.plot(
        RADIUS * np.cos(angle),
        RADIUS * np.sin(angle),
        color="0.6",
        lw=0.8,
        label=f"public ball of the sound release (radius {RADIUS} rad; ball centre ≈ fit's midpoint)",
    )
    s = np.linspace(0.0, 1.0, 60)[:, None]
    for (p, v), color, ls, label in ((sound, "C0", "-", SOUND), (pub, "C1", "--", AS_PUBLISHED)):
        for i in range(len(p)):
            ax.plot(
                *chart(space.exp(np.broadcast_to(p[i], (60, 3)), s * v[i])),
                color=color,
                ls=ls,
                lw=1.3,
                alpha=0.85,
                label=f"{label}: {len(p)} releases" if i == 0 else None,
            )
    ax.plot(
        *chart(space.exp(np.broadcast_to(p_hat, (60, 3)), s * v_hat)),
        color="green",
        lw=2.5,
        label="non-private geodesic (p̂, v̂)",
    )
    ax.scatter(*chart(Y), color="green", s=16, zorder=3, label=f"data (n = {N_SPHERE})")
    ax.set_aspect("equal")
    ax.set_xlabel("Log coordinate along v̂ at the fit's midpoint (rad)")
    ax.set_ylabel("Log coordinate across v̂ (rad)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=1)
    ax.set_title(
        f"K25 Fig. 1: geodesic regression on the unit sphere S², ε = {EPSILON:g}, x ∈ [0, 1]\n"
        "(azimuthal chart; the sound releases spread over the public ball at n = 20, see k25-fig2)",
        fontsize=9,
    )
    fig.tight_layout()
    rows = [
        Row(
            f"Fig. 1, MAE of the drawn releases, {label}",
            f"{release_stats(data, label, 'mae')[0]:.3f}",
            "blue curve close to green (picture)",
            "",
        )
        for label in (SOUND, AS_PUBLISHED)
    ]
    rows.append(Row("Fig. 1, non-private MAE", f"{mae_hat:.3f}", "0.043 (Fig. 3 text)", "one draw of the data"))
    return Result(fig, data, rows)


@shared_stream
def run_fig2(repetitions, rng, progress):
    data, mae_hat, _ = sphere_releases(N_SPHERE, repetitions, rng)
    labels = (SOUND, AS_PUBLISHED)
    plt = agg_pyplot()
    from matplotlib.ticker import NullFormatter

    fig, axes = plt.subplots(1, 3, figsize=(16, 4.6))
    panels = (
        ("footpoint_distance", "geodesic distance d(p̂, p̃) at x = 0 (rad, log scale)"),
        ("angle_deg", "signed angle from Γ v̂ to ṽ (degrees)"),
        ("mae", "MAE (1/n) Σ d(Exp(p̃, x ṽ), y) (rad, log scale)"),
    )
    for i, (key, xlabel) in enumerate(panels):
        every = np.array([d[key] for d in data])
        if key == "angle_deg":
            bins = np.linspace(-180, 180, 37)
        else:
            bins = np.geomspace(max(every.min(), 1e-4) * 0.9, every.max() * 1.1, 30)
            axes[i].set_xscale("log")
            axes[i].xaxis.set_minor_formatter(NullFormatter())
        for j, label in enumerate(labels):
            vals = [d[key] for d in data if d["release"] == label]
            axes[i].hist(vals, bins=bins, alpha=0.55, color=f"C{j}", label=f"{label} ({len(vals)} releases)")
        axes[i].set_xlabel(xlabel)
        axes[i].set_ylabel("number of releases")
        axes[i].grid(alpha=0.3)
        axes[i].set_ylim(top=axes[i].get_ylim()[1] * 1.35)  # room for the legend
    pub = published("K25", "fig2-footpoint-distance-mean").value
    axes[0].axvline(pub, color="k", ls="--", label=f"K25's mean {pub:g}")
    axes[1].axvspan(
        -published("K25", "fig2-angle-sd-deg").value,
        published("K25", "fig2-angle-sd-deg").value,
        color="k",
        alpha=0.12,
        label="K25's ± 1 sd (5.47°)",
    )
    axes[2].axvline(mae_hat, color="k", ls=":", label=f"non-private MAE {mae_hat:.3f}")
    axes[2].axvline(
        published("K25", "fig3-mae-private-mean").value, color="k", ls="--", label="K25's private mean 0.11"
    )
    axes[0].set_title("Fig. 2 left: footpoint")
    axes[1].set_title("Fig. 2 right: shooting vector")
    axes[2].set_title("Fig. 3: energy (MAE)")
    for ax in axes:
        ax.legend(fontsize=7)
    fig.suptitle(
        f"K25 §4.1 on S²: n = {N_SPHERE}, ε = {EPSILON:g} in total, one data set; footpoint at x = 0 as in K25"
    )
    fig.tight_layout()
    rows = []
    for label in labels:
        d_m, d_s, cnt = release_stats(data, label, "footpoint_distance")
        a_m, a_s, _ = release_stats(data, label, "angle_deg")
        m_m, m_s, _ = release_stats(data, label, "mae")
        c_m = release_stats(data, label, "clipped_share")[0]
        rows.append(
            Row(f"Fig. 2 left, d(p̂, p̃) mean ± sd, {label}", f"{d_m:.3f} ± {d_s:.3f} ({cnt})", "0.01 ± 0.01", "")
        )
        rows.append(Row(f"Fig. 2 right, angle mean ± sd, {label}", f"{a_m:.2f}° ± {a_s:.2f}°", "0.10° ± 5.47°", ""))
        rows.append(
            Row(
                f"Fig. 3, private MAE mean ± sd, {label}",
                f"{m_m:.3f} ± {m_s:.3f}",
                "0.11 ± 0.00",
                f"share of residuals beyond τ: {c_m:.2f}",
            )
        )
    rows.append(
        Row(
            "Fig. 3, non-private MAE",
            f"{mae_hat:.3f}",
            f"{published('K25', 'fig3-mae-nonprivate').value}",
            "depends on the noise draw of the data",
        )
    )
    sig_s, sig_k = data[0]["sigma"], next(d["sigma"] for d in data if d["release"] == AS_PUBLISHED)
    rows.append(
        Row(
            "KNG scale σ: sound (joint, τ = 0.1) / K25 stage 1 (τ = largest residual)",
            f"{sig_s:.4f} / {sig_k:.4f} = {sig_s / sig_k:.1f}",
            "-",
            "the rest: the sound law's mass far from the fit (docs/reproduction.md)",
        )
    )
    return Result(fig, data, rows)


def run_fig6(repetitions, rng, progress):
    data, hats = [], {}
    for n in progress(N_GRID, total=len(N_GRID), desc="K25 Fig. 6"):
        more, hats[n], _ = sphere_releases(n, repetitions, rng)
        data += more
    plt = agg_pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.4))
    for j, label in enumerate((SOUND, AS_PUBLISHED)):
        for ax, key in zip(axes, ("mae", "footpoint_distance")):
            means = [np.mean([d[key] for d in data if d["n"] == n and d["release"] == label]) for n in N_GRID]
            sds = [np.std([d[key] for d in data if d["n"] == n and d["release"] == label], ddof=1) for n in N_GRID]
            ax.errorbar(
                N_GRID,
                means,
                yerr=sds,
                marker="o",
                capsize=3,
                color=f"C{j}",
                ecolor="C3" if j else "C0",
                label=f"{label} (mean ± sd, {repetitions} releases)",
            )
            every = [(d["n"] * (1.04 if j else 0.96), d[key]) for d in data if d["release"] == label]
            ax.scatter(*zip(*every), s=7, color=f"C{j}", alpha=0.35, label=f"{label}: each release")
    axes[0].plot(N_GRID, [hats[n] for n in N_GRID], "k:", marker="x", label="non-private MAE (p̂, v̂)")
    axes[0].set_ylabel("mean MAE (1/n) Σ d(Exp(p̃, x ṽ), y) (rad)")
    axes[1].set_ylabel("d(p̂, p̃) at x = 0 (rad)")
    for ax in axes:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("number of points n on S² (log scale)")
        ax.grid(alpha=0.3, which="both")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc="lower center", ncol=3)
    axes[0].set_title("Fig. 6: mean private MAE vs n")
    axes[1].set_title("footpoint error vs n (not in K25)")
    fig.suptitle(f"K25 Fig. 6 on S², ε = {EPSILON:g} in total, one data set per n (error bars: ± 1 sd)")
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    rows = []
    for n in N_GRID:
        cells = []
        for label in (SOUND, AS_PUBLISHED):
            m, s_, _ = release_stats([d for d in data if d["n"] == n], label, "mae")
            cells.append(f"{m:.3f} ± {s_:.3f}")
        rows.append(
            Row(
                f"Fig. 6, n = {n}: MAE sound; K25 as published",
                "; ".join(cells),
                "decreasing towards the non-private MAE (picture)",
                f"non-private {hats[n]:.3f}",
            )
        )
    return Result(fig, data, rows)
