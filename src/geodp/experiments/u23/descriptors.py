"""U23 Figs. 2 and 3: private Fréchet means of covariance descriptors of images against ε, on
stand-in data (scikit-learn's digits and its two bundled photos instead of MedMNIST and friends)."""

from __future__ import annotations

import numpy as np

from geodp.datasets.descriptors import covariance_descriptors, descriptor_radius, load_digit_descriptors
from geodp.experiments.plotting import agg_pyplot
from geodp.experiments.published import published
from geodp.experiments.published.u23 import FIG2_PANELS, FIG3_PANELS
from geodp.experiments.reproduce import Result, Row, bootstrap_interval, compare_text
from geodp.experiments.u23.setting import (
    AXIS_PRECISION,
    DELTAS_REAL,
    EPS_REAL,
    LAP_OURS,
    LAP_U23,
    STYLE,
    band,
    band_top,
    laplace_pair,
    le_mean,
    summary,
    tangent_gaussian,
)
from geodp.manifolds import SPD

__all__ = ["digit_sets", "photo_sets", "run_fig2", "run_fig3"]


def photo_sets(patch: int, grey: bool, split: str) -> dict:
    """Descriptor sets of scikit-learn's two sample photos: ``{label: (descriptors, scale)}`` for
    ``patch``-pixel patches, colour or ``grey``, the photo cut by ``split`` ("none", "halves",
    "quadrants"), as U23 §6 builds them."""
    from sklearn.datasets import load_sample_images

    sets = {}
    for fname, img in zip(("china", "flower"), load_sample_images().images):
        img = img.astype(float) / 255.0
        if grey:
            img = img.mean(axis=-1)
        h, w = (img.shape[0] // patch) * patch, (img.shape[1] // patch) * patch
        halves = {"": (slice(0, h), slice(0, w))}
        if split == "halves":
            halves = {" left": (slice(0, h), slice(0, w // 2)), " right": (slice(0, h), slice(w // 2, w))}
        elif split == "quadrants":
            hh, hw = (h // (2 * patch)) * patch, (w // (2 * patch)) * patch
            halves = {
                " top-left": (slice(0, hh), slice(0, hw)),
                " top-right": (slice(0, hh), slice(hw, 2 * hw)),
                " bottom-left": (slice(hh, 2 * hh), slice(0, hw)),
                " bottom-right": (slice(hh, 2 * hh), slice(hw, 2 * hw)),
            }
        for suffix, (rs, cs) in halves.items():
            part = img[rs, cs]
            ph, pw = part.shape[0] // patch, part.shape[1] // patch
            tiles = part[: ph * patch, : pw * patch].reshape(ph, patch, pw, patch, *part.shape[2:])
            tiles = np.moveaxis(tiles, 2, 1).reshape(ph * pw, patch, patch, *part.shape[2:])
            sets[f"{fname}{suffix} ({patch}×{patch} {'grey' if grey else 'RGB'} patches)"] = (
                covariance_descriptors(tiles),
                1 if grey else 3,
            )
    return sets


def digit_sets(classes) -> dict:
    """Descriptor sets of the handwritten digits of ``classes``: ``{label: (descriptors, 1)}``.

    Examples
    --------
    >>> sorted(digit_sets((0,)))
    ['digit 0 (8×8 grey)']
    """
    data = load_digit_descriptors()
    return {f"digit {c} (8×8 grey)": (data.descriptors[data.target == c], 1) for c in classes}


def _stand_in_rows(panels, rng, figure):
    """Our mechanisms' error at each published panel's N (the noise law is data-independent), the
    top of U23's band (mean + 2 sd, 2Δ/ε) with its 95% bootstrap interval against the axis reading."""
    rows, tops = [], []
    key = figure.lower().replace(". ", "").replace(" ", "")  # "Fig. 2" -> "fig2"
    for i, (name, n, channels, _) in enumerate(panels):
        pub = published("U23", f"{key}-panel{i + 1}-axis-top").value
        k = 9 if channels == 1 else 11
        space = SPD(k, metric="log-euclidean")
        sens = 2.0 * descriptor_radius(channels) / n
        errs = {}
        for label, mech in laplace_pair(space, 0.1, sens).items():
            draws = mech.randomise_coordinates(np.eye(k), rng=rng, size=400)
            errs[label] = np.linalg.norm(draws - space.to_coordinates(np.eye(k)), axis=-1)
        top, half = bootstrap_interval(errs[LAP_U23], band_top)
        text, note = compare_text(top, half, pub, digits=1, precision=AXIS_PRECISION)
        tops.append((f"{name}\nN = {n}", top, half, pub))
        rows.append(
            Row(
                f"{figure} panel {i + 1}: {name}, N = {n}, ε = 0.1, at the paper's N (band top, ± 95%)",
                f"{text} (2Δ/ε); {band_top(errs[LAP_OURS]):.1f} (Δ/ε)",
                f"≈ {pub:g} (axis top)",
                f"2Δ/ε band top (mean + 2 sd of one release's error) vs axis reading: {note}",
            )
        )
    return rows, tops


def _draw_tops(ax, tops, figure):
    xs = np.arange(len(tops))
    ours = np.array([t[1] for t in tops])
    ax.errorbar(
        xs - 0.1,
        ours,
        yerr=[t[2] for t in tops],
        fmt="o",
        color="C0",
        capsize=3,
        label="ours, 2Δ/ε at the paper's N: band top (mean + 2 sd) ± 95%",
    )
    pub = np.array([t[3] for t in tops])
    ax.errorbar(
        xs + 0.1,
        pub,
        yerr=AXIS_PRECISION * pub,
        fmt="s",
        color="C1",
        capsize=3,
        label=f"published: top tick of U23's axis (±{AXIS_PRECISION:.0%})",
    )
    ax.set_xticks(xs, [t[0] for t in tops], fontsize=7)
    ax.set_ylabel("ρ_LE at ε = 0.1")
    ax.set_title(f"{figure}: the paper's panels (ours at each panel's N beside U23's axis reading)", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)


def _run_real(figure, layout, panels, repetitions, rng, progress):
    data = []
    names = [name for row in layout for name in row]
    sets = {}
    for row in layout:
        sets.update(row)
    for name in progress(names, total=len(names), desc=f"U23 {figure}: sets"):
        X, channels = sets[name]
        k = X.shape[-1]
        space = SPD(k, metric="log-euclidean")
        n = X.shape[0]
        sens = 2.0 * descriptor_radius(channels) / n  # U23 Thm 3 with the Thm-5 radius
        M, c = le_mean(space, X)
        for eps in EPS_REAL:
            mechs = dict(laplace_pair(space, eps, sens))
            for delta in DELTAS_REAL:
                mechs[f"TanG-Analytic (δ = {delta:g})"] = tangent_gaussian(space, eps, delta, sens)
            for label, mech in mechs.items():
                errs = np.linalg.norm(mech.randomise_coordinates(M, rng=rng, size=repetitions) - c, axis=-1)
                for rep, err in enumerate(errs):
                    data.append(
                        dict(set=name, n=n, k=k, epsilon=eps, mechanism=label, repetition=rep, error=float(err))
                    )
    stats = summary(data, ("set", "mechanism", "epsilon"))
    plt = agg_pyplot()
    nrows, ncols = len(layout), max(len(r) for r in layout)
    fig, axes = plt.subplots(nrows + 1, ncols, figsize=(4 * ncols, 3.3 * (nrows + 1)), squeeze=False)
    grid = axes[-1, 0].get_gridspec()
    for ax in axes[-1]:
        ax.remove()
    rows, tops = _stand_in_rows(panels, rng, figure)
    _draw_tops(fig.add_subplot(grid[-1, :]), tops, figure)
    for i, row in enumerate(layout):
        for j, name in enumerate(row):
            ax = axes[i, j]
            labels = [LAP_OURS, LAP_U23] + [f"TanG-Analytic (δ = {d:g})" for d in DELTAS_REAL]
            for li, label in enumerate(labels):
                style = STYLE.get(label, dict(color=f"C{li + 1}"))
                band(ax, EPS_REAL, [stats[(name, label, e)] for e in EPS_REAL], label, **style)
            n = sets[name][0].shape[0]
            ax.set_title(f"{name}\nN = {n}", fontsize=9)
            ax.set_xlabel("privacy budget ε")
            ax.set_ylabel("ρ_LE(f(D), A(D))")
            ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=7)
    fig.suptitle(
        f"U23 {figure} on stand-in data (scikit-learn digits and photos): private Fréchet means of "
        f"covariance descriptors (η = 1e-6), mean ± 2 sd over {repetitions} repetitions"
    )
    fig.tight_layout()
    first = names[0]
    rows.append(
        Row(
            f"{figure} stand-in '{first}', ε = 0.1",
            f"{stats[(first, LAP_OURS, 0.1)][0]:.1f} (Δ/ε); {stats[(first, LAP_U23, 0.1)][0]:.1f} (2Δ/ε); "
            f"TanG δ=1e-5 {stats[(first, 'TanG-Analytic (δ = 1e-05)', 0.1)][0]:.1f}",
            "—",
            f"stand-in N = {sets[first][0].shape[0]}; the paper's panels have N = "
            f"{min(p[1] for p in panels)}–{max(p[1] for p in panels)} (the error scales as 1/N)",
        )
    )
    return Result(fig, data, rows)


def run_fig2(repetitions, rng, progress):
    """U23 Fig. 2, private means of covariance descriptors of real images and digits. ``repetitions`` releases per
    setting are drawn from ``rng``; ``progress`` wraps the loop (a tqdm-like callable). Returns the rows the item's
    table and figure are made of; run it through ``geodp reproduce u23-fig2``."""
    layout = [photo_sets(16, False, "halves"), digit_sets((0, 1, 2, 3))]
    return _run_real("Fig. 2", layout, FIG2_PANELS, repetitions, rng, progress)


def run_fig3(repetitions, rng, progress):
    """U23 Fig. 3, the same on grey and smaller patches. ``repetitions`` releases per setting are drawn from ``rng``;
    ``progress`` wraps the loop (a tqdm-like callable). Returns the rows the item's table and figure are made of;
    run it through ``geodp reproduce u23-fig3``."""
    grey = digit_sets((8, 9))
    grey.update(photo_sets(16, True, "none"))
    layout = [digit_sets((4, 5, 6, 7)), grey, photo_sets(8, False, "quadrants")]
    china = {k: v for k, v in layout[2].items() if k.startswith("china")}
    flower = {k: v for k, v in layout[2].items() if k.startswith("flower")}
    return _run_real("Fig. 3", [layout[0], layout[1], china, flower], FIG3_PANELS, repetitions, rng, progress)
