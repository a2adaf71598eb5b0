"""K25 Figs. 1–3 and 6 on the sphere: the private geodesics, the histograms of footpoint distance,
velocity angle and MAE over releases, and the MAE against n."""

from __future__ import annotations

import numpy as np

from geodp.experiments.k25.releases import (
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
from geodp.experiments.reproduce import Result, Row, compare_text, interval_text, mean_interval
from geodp.manifolds import Sphere

__all__ = ["run_fig1", "run_fig2", "run_fig3", "run_fig6"]


def run_fig1(repetitions, rng, progress):
    """K25 Fig. 1, the sound and the as-published releases of a geodesic regression on S². ``repetitions`` releases per
    setting are drawn from ``rng``; ``progress`` wraps the loop (a tqdm-like callable). Returns the rows the item's
    table and figure are made of; run it through ``geodp reproduce k25-fig1``."""
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
    rows = []
    for label in (SOUND, AS_PUBLISHED):
        maes = [d["mae"] for d in data if d["release"] == label]
        text, note = interval_text(maes, round(mae_hat, 4), digits=3, label="non-private MAE")
        rows.append(
            Row(
                f"Fig. 1, MAE of the drawn releases (± 95%), {label}",
                text,
                "blue curve close to green (picture)",
                f"{len(maes)} releases: {note}",
            )
        )
    nonprivate = published("K25", "fig3-mae-nonprivate").value
    rows.append(
        Row("Fig. 1, non-private MAE", f"{mae_hat:.3f}", f"{nonprivate:g} (Fig. 3 text)", "one draw of the data")
    )
    return Result(fig, data, rows)


@shared_stream
def _fig23_draws(repetitions, rng, progress):
    data, mae_hat, _ = sphere_releases(N_SPHERE, repetitions, rng)
    return data, mae_hat


def _histogram(ax, data, key, xlabel):
    from matplotlib.ticker import NullFormatter

    every = np.array([d[key] for d in data])
    if key == "angle_deg":
        bins = np.linspace(-180, 180, 37)
    else:
        bins = np.geomspace(max(every.min(), 1e-4) * 0.9, every.max() * 1.1, 30)
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
    for j, label in enumerate((SOUND, AS_PUBLISHED)):
        vals = [d[key] for d in data if d["release"] == label]
        ax.hist(vals, bins=bins, alpha=0.55, color=f"C{j}", label=f"{label} ({len(vals)} releases)")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("number of releases")
    ax.grid(alpha=0.3)
    ax.set_ylim(top=ax.get_ylim()[1] * 1.35)  # room for the legend


def _stat_row(data, label, key, setting, pub_mean, pub_sd, digits, unit=""):
    """Mean ± sd over releases (K25's summary) and the 95% interval of the mean against K25's mean."""
    vals = np.array([d[key] for d in data if d["release"] == label])
    m, s_ = float(vals.mean()), float(vals.std(ddof=1)) if vals.size > 1 else 0.0
    _, note = interval_text(vals, pub_mean, digits=digits)
    return Row(
        f"{setting} mean ± sd ({vals.size} releases), {label}",
        f"{m:.{digits}f}{unit} ± {s_:.{digits}f}{unit}",
        f"{pub_mean:g}{unit} ± {pub_sd:g}{unit}",
        f"mean: {note}",
    )


def run_fig2(repetitions, rng, progress):
    """K25 Fig. 2: footpoint distance and velocity angle over private releases."""
    data, mae_hat = _fig23_draws(repetitions, rng, progress)
    plt = agg_pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11.5, 4.6))
    _histogram(axes[0], data, "footpoint_distance", "geodesic distance d(p̂, p̃) at x = 0 (rad, log scale)")
    _histogram(axes[1], data, "angle_deg", "signed angle from Γ v̂ to ṽ (degrees)")
    pub = published("K25", "fig2-footpoint-distance-mean").value
    axes[0].axvline(pub, color="k", ls="--", label=f"published: K25's mean {pub:g}")
    sd = published("K25", "fig2-angle-sd-deg").value
    axes[1].axvspan(-sd, sd, color="k", alpha=0.12, label=f"published: K25's ± 1 sd ({sd:g}°)")
    axes[0].set_title("Fig. 2 left: footpoint")
    axes[1].set_title("Fig. 2 right: shooting vector")
    for ax in axes:
        ax.legend(fontsize=7)
    fig.suptitle(f"K25 Fig. 2 on S²: n = {N_SPHERE}, ε = {EPSILON:g} in total, one data set; footpoint at x = 0")
    fig.tight_layout()
    rows = []
    for label in (SOUND, AS_PUBLISHED):
        rows.append(
            _stat_row(
                data,
                label,
                "footpoint_distance",
                "Fig. 2 left, d(p̂, p̃)",
                pub,
                published("K25", "fig2-footpoint-distance-sd").value,
                3,
            )
        )
        rows.append(
            _stat_row(
                data,
                label,
                "angle_deg",
                "Fig. 2 right, angle",
                published("K25", "fig2-angle-mean-deg").value,
                sd,
                2,
                "°",
            )
        )
    d_s = np.mean([d["footpoint_distance"] for d in data if d["release"] == SOUND])
    d_k = np.mean([d["footpoint_distance"] for d in data if d["release"] == AS_PUBLISHED])
    rows.append(
        Row(
            "Fig. 2 left, mean d(p̂, p̃): sound / K25 as published; sound / K25's published mean",
            f"{d_s / d_k:.0f}×; {d_s / pub:.0f}×",
            "-",
            "the cost of the sound release at n = 20 (docs/reproduction.md, K25 on the sphere)",
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


def run_fig3(repetitions, rng, progress):
    """K25 Fig. 3: histogram of the private MAE (the releases of Fig. 2)."""
    data, mae_hat = _fig23_draws(repetitions, rng, progress)
    plt = agg_pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.6))
    _histogram(ax, data, "mae", "MAE (1/n) Σ d(Exp(p̃, x ṽ), y) (rad, log scale)")
    pub = published("K25", "fig3-mae-private-mean").value
    ax.axvline(mae_hat, color="k", ls=":", label=f"non-private MAE {mae_hat:.3f} (ours)")
    nonprivate = published("K25", "fig3-mae-nonprivate").value
    ax.axvline(nonprivate, color="0.4", ls="-.", label=f"published: K25's non-private MAE {nonprivate:g}")
    ax.axvline(pub, color="k", ls="--", label=f"published: K25's private mean {pub:g}")
    ax.legend(fontsize=7)
    ax.set_title(f"K25 Fig. 3 on S²: MAE of the private geodesics, n = {N_SPHERE}, ε = {EPSILON:g}", fontsize=10)
    fig.tight_layout()
    rows = [
        _stat_row(data, label, "mae", "Fig. 3, private MAE", pub, published("K25", "fig3-mae-private-sd").value, 3)
        for label in (SOUND, AS_PUBLISHED)
    ]
    for row, label in zip(rows, (SOUND, AS_PUBLISHED)):
        share = np.mean([d["clipped_share"] for d in data if d["release"] == label])
        rows[rows.index(row)] = Row(
            row.setting, row.ours, row.published, f"{row.note}; residuals beyond τ: {share:.2f}"
        )
    rows.append(
        Row(
            "Fig. 3, non-private MAE",
            f"{mae_hat:.3f}",
            f"{nonprivate}",
            "one draw of the data (its noise sets it)",
        )
    )
    return Result(fig, data, rows)


def run_fig6(repetitions, rng, progress):
    """K25 Fig. 6, the MAE of the releases against n on S². ``repetitions`` releases per setting are drawn from
    ``rng``; ``progress`` wraps the loop (a tqdm-like callable). Returns the rows the item's table and figure are
    made of; run it through ``geodp reproduce k25-fig6``."""
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

    def maes(n, label):
        return [d["mae"] for d in data if d["n"] == n and d["release"] == label]

    for n in N_GRID:
        cells, notes = [], []
        for label in (SOUND, AS_PUBLISHED):
            text, note = interval_text(maes(n, label), round(hats[n], 4), digits=3, label="non-private")
            cells.append(text)
            notes.append(f"{label}: {note}")
        rows.append(
            Row(
                f"Fig. 6, n = {n}: MAE sound; K25 as published (± 95%)",
                "; ".join(cells),
                "decreasing towards the non-private MAE (picture)",
                "; ".join(notes),
            )
        )
    for label in (SOUND, AS_PUBLISHED):
        (first, h1), (last, h2) = mean_interval(maes(N_GRID[0], label)), mean_interval(maes(N_GRID[-1], label))
        half = float(np.hypot(h1, h2))
        text, note = compare_text(last - first, half, 0.0, digits=3, label="no change")
        decreasing = "a decrease" if last - first + half < 0 else "no significant decrease"
        rows.append(
            Row(
                f"Fig. 6, MAE at n = {N_GRID[-1]} minus n = {N_GRID[0]} (± 95%), {label}",
                text,
                "decreasing (picture)",
                f"{note}; {decreasing}",
            )
        )
    return Result(fig, data, rows)
