"""Reproductions of S22 (Soto, Bharath, Reimherr, Slavković, *Shape and Structure Preserving
Differential Privacy*, NeurIPS 2022): the simulations and the shape study of its supplement.

Only the supplement is available offline, so there are no published error values to set beside
ours; the designs (generators, radii, ε, scales, baselines) come from the supplement's §2.

**s22-sims** (supplement §2.3–2.4). SPD(2) with the affine-invariant metric (Wishart in
``B_1.5(I)``) and S² (polar cap of radius π/8), ``ε = 1``. For each n, ``repetitions`` data sets;
the geodesic distance between the Fréchet mean ``x̄`` and its release by

* KNG, sound: ``σ = 2Δ/ε`` with the gradient sensitivity ``Δ = 2r(2 − h)/n`` (S22 uses this on SPD:
  "σ = 2Δ/ε = 4r/n");
* KNG as published on S² (§2.4.2: "σ = Δ/ε"): the normaliser of KNG depends on the data, so this is
  not ε-DP; behind :func:`s22_sphere_kng` ``(as_published=True)``;
* the Riemannian Laplace of R21 with Theorem 2's sensitivity (the comparison of S22's figures).

The supplement gives no n grid and no number of repetitions: we use n = 10, 20, 40, 60, 80, 100
and 100 repetitions (20 with ``--quick``). Exact samplers replace S22's Metropolis–Hastings chains.

**s22-shapes** (supplement §2.5). The corpus callosa of S22 cannot be had offline; geomstats' cell
contours (8 landmarks, :func:`geodp.datasets.load_cell_shapes`) stand in, with the study of
:func:`geodp.experiments.run_cell_shapes` (KNG, Laplace and the point-wise Laplace with a public
centre and radius 0.25). Beside them, the as-published choices: the point-wise Laplace with ranges
taken from the data (``PointwiseShapeLaplace(as_published=True)``), and KNG with the radius
``r = max_i ρ(x̄, x_i)`` taken from the data — which on these cells exceeds ``r* = π/8`` for
κ_max = 4, so Theorem 2's ``h`` is negative and no sensitivity exists: it is reported, not run.
"""

from __future__ import annotations

import io
import warnings

import numpy as np

from geodp.datasets.synthetic import polar_cap, wishart_in_ball
from geodp.errors import PrivacyLeakWarning, as_published_only
from geodp.experiments.published import published
from geodp.experiments.r21 import batched_frechet_means, laplace_at, mean_se
from geodp.experiments.reproduce import Z95, Reproduction, Result, Row, compare_text
from geodp.manifolds import SPD, Sphere
from geodp.mechanisms import KNGMechanism, LaplaceMechanism
from geodp.sensitivity import frechet_mean_sensitivity, max_radius

__all__ = ["EPSILON", "N_GRID", "REPRODUCTIONS", "SHAPE_EPSILONS", "run_shapes", "run_sims", "s22_sphere_kng"]

EPSILON = 1.0
N_GRID = (10, 20, 40, 60, 80, 100)
SHAPE_EPSILONS = (0.5, 1.0, 2.0, 4.0)
_NORTH = np.array([0.0, 0.0, 1.0])


def s22_sphere_kng(space, *, epsilon, sensitivity, center, radius, as_published: bool = False) -> KNGMechanism:
    """KNG on the sphere with S22 §2.4.2's scale ``σ = Δ/ε`` (as published) instead of ``2Δ/ε``.

    The KNG normaliser depends on the data, so ``Δ/ε`` does not give ε-DP (docs/math.md, errata);
    this returns the sound :class:`~geodp.mechanisms.KNGMechanism` run at budget ``2ε``, whose
    scale is ``2Δ/(2ε) = Δ/ε``. Needs ``as_published=True`` and warns
    (:class:`~geodp.PrivacyLeakWarning`).

    Raises
    ------
    InvalidParameterError
        Without ``as_published=True``.

    Examples
    --------
    >>> import warnings
    >>> from geodp.errors import PrivacyLeakWarning
    >>> space, north = Sphere(2), np.array([0.0, 0.0, 1.0])
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", PrivacyLeakWarning)
    ...     mech = s22_sphere_kng(space, epsilon=1.0, sensitivity=0.1, center=north, radius=0.3, as_published=True)
    >>> round(mech.scale, 12)  # Δ/ε
    0.1
    """
    as_published_only(
        as_published,
        "σ = Δ/ε for KNG on the sphere is S22's unsound choice: pass as_published=True "
        "for a reproduction, or use geodp.mechanisms.KNGMechanism (σ = 2Δ/ε)",
        "S22 §2.4.2's KNG scale σ = Δ/ε ignores the data-dependent normaliser: it is only 2ε-DP; "
        "use for reproductions only",
    )
    return KNGMechanism(space, epsilon=2.0 * epsilon, sensitivity=sensitivity, center=center, radius=radius)


_SIM_KEYS = ("kng", "kng-published", "laplace")
_SIM_LABELS = {
    "kng": "KNG, σ = 2Δ/ε (sound)",
    "kng-published": "KNG, σ = Δ/ε (as published, S² only)",
    "laplace": "Riemannian Laplace (R21, Thm 2)",
}
_SIM_STYLE = {"kng": ("tab:green", "-"), "kng-published": ("tab:olive", "--"), "laplace": ("tab:blue", "-")}


def _ratio_interval(row: dict, top: str, bottom: str) -> tuple[float, float]:
    """The ratio of two mean errors of a simulation row and the half-width of its 95% interval
    (delta method; independent releases)."""
    a, b = row[f"{top}_error"], row[f"{bottom}_error"]
    relative = np.hypot(row[f"{top}_se"] / a, row[f"{bottom}_se"] / b)
    return float(a / b), float(Z95 * (a / b) * relative)


def run_sims(repetitions: int, rng, progress) -> Result:
    """S22 supplement §2.3–2.4: KNG vs the Riemannian Laplace on SPD(2) and S², error vs n.

    Examples
    --------
    >>> from geodp.experiments.reproduce import make_progress
    >>> result = run_sims(2, np.random.default_rng(0), make_progress(False))
    >>> len(result.data), sorted(result.data[0])[:3]
    (12, ['epsilon', 'exact', 'kng-published_error'])
    """
    repetitions = int(repetitions)
    data = []
    tasks = [(name, n) for name in ("spd", "sphere") for n in N_GRID]
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always", PrivacyLeakWarning)
        for name, n in progress(tasks, total=len(tasks), desc="s22-sims"):
            if name == "spd":
                space, center, radius = SPD(2), np.eye(2), 1.5
                X = wishart_in_ball(repetitions * n, 2, radius=radius, df=2, rng=rng).reshape(repetitions, n, 2, 2)
            else:
                space, center, radius = Sphere(2), _NORTH, np.pi / 8
                X = polar_cap(repetitions * n, radius=radius, rng=rng).reshape(repetitions, n, 3)
            xbar = batched_frechet_means(space, X)
            delta_k = frechet_mean_sensitivity(space, radius, n, "kng")
            mechs = {"kng": KNGMechanism(space, epsilon=EPSILON, sensitivity=delta_k, center=center, radius=radius)}
            if name == "sphere":
                mechs["kng-published"] = s22_sphere_kng(
                    space, epsilon=EPSILON, sensitivity=delta_k, center=center, radius=radius, as_published=True
                )
            errors = {
                key: np.array([float(space.dist(xbar[b], mech.randomise(X[b], rng=rng))) for b in range(repetitions)])
                for key, mech in mechs.items()
            }
            laplace = LaplaceMechanism(space, epsilon=EPSILON, sensitivity=frechet_mean_sensitivity(space, radius, n))
            errors["laplace"] = np.asarray(space.dist(xbar, laplace_at(laplace, space, center, xbar, rng)))
            row = {
                "space": name,
                "n": n,
                "epsilon": EPSILON,
                "repetitions": repetitions,
                "radius": radius,
                "kng_scale": mechs["kng"].scale,
                "laplace_scale": laplace.scale,
                "exact": all(m.exact for m in mechs.values()),
            }
            for key in _SIM_KEYS:
                mean, se = mean_se(errors[key]) if key in errors else (float("nan"), float("nan"))
                row[f"{key}_error"], row[f"{key}_se"] = mean, se
            data.append({key: row[key] for key in sorted(row)})
    from matplotlib.figure import Figure

    fig = Figure(figsize=(12.5, 4.8))
    axes = fig.subplots(1, 2)
    for ax, (name, label) in zip(axes, (("spd", "SPD(2), affine-invariant, r = 1.5"), ("sphere", "S², r = π/8"))):
        rows = [r for r in data if r["space"] == name]
        n = np.array([r["n"] for r in rows])
        for key in _SIM_KEYS:
            mean = np.array([r[f"{key}_error"] for r in rows])
            if np.all(np.isnan(mean)):
                continue
            se = np.array([r[f"{key}_se"] for r in rows])
            color, style = _SIM_STYLE[key]
            ax.plot(n, mean, style, marker="o", ms=3, color=color, label=_SIM_LABELS[key])
            ax.fill_between(n, mean - 2 * se, mean + 2 * se, color=color, alpha=0.2)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(N_GRID, [str(v) for v in N_GRID])
        ax.minorticks_off()
        ax.set_xlabel("sample size n")
        ax.set_ylabel("mean geodesic distance ρ(x̄, release)")
        ax.set_title(f"{label}, ε = {EPSILON:g}")
        ax.legend(fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
    fig.suptitle(f"S22 simulations (supplement §2.3–2.4): {repetitions} data sets per n (shaded: ± 2 SE)")
    fig.tight_layout()
    no_number = "not in the offline supplement"
    rows = []
    for r in data:
        text, note = compare_text(*_ratio_interval(r, "kng", "laplace"), 1.0, label="equal errors (1)")
        rows.append(Row(f"{r['space']}, n = {r['n']}: KNG / Laplace error (± 95%)", text, no_number, note))
    sph = [r for r in data if r["space"] == "sphere"]
    ratios = [_ratio_interval(r, "kng-published", "kng") for r in sph]
    ratio = float(np.mean([m for m, _ in ratios]))
    half = float(np.sqrt(np.sum([h**2 for _, h in ratios])) / len(ratios))
    text, note = compare_text(ratio, half, 0.5, label="half (σ halved)")
    rows.append(
        Row(
            "S²: KNG error, σ = Δ/ε (as published) / σ = 2Δ/ε (sound), mean over n (± 95%)",
            text,
            no_number,
            f"{note}; the published scale spends twice the stated ε",
        )
    )
    scale = published("S22", "spd-kng-scale")
    r = [d for d in data if d["space"] == "spd"][0]
    rows.append(
        Row(
            f"SPD: KNG scale at n = {r['n']}",
            f"{r['kng_scale']:.3f}",
            f"4r/n = {4 * 1.5 / r['n']:.3f}",
            scale.source[:40],
        )
    )
    return Result(fig, data, rows)


def run_shapes(repetitions: int, rng, progress) -> Result:
    """S22 supplement §2.5 on stand-in data: private mean shapes of geomstats' cell contours.

    Examples
    --------
    >>> from geodp.experiments.reproduce import make_progress
    >>> result = run_shapes(2, np.random.default_rng(0), make_progress(False))  # doctest: +SKIP
    """
    from geodp.datasets.shapes import load_cell_shapes
    from geodp.experiments.cell_shapes import run_cell_shapes
    from geodp.frechet import frechet_mean
    from geodp.manifolds.kendall import KendallShape
    from geodp.mechanisms import PointwiseShapeLaplace

    k, radius = 8, 0.25
    space = KendallShape(k)
    data = []
    for eps in progress(SHAPE_EPSILONS, total=len(SHAPE_EPSILONS), desc="s22-shapes"):
        for row in run_cell_shapes(k, radius, epsilons=(eps,), releases=int(repetitions), seed=rng, out=io.StringIO()):
            data.append(
                {
                    "epsilon": eps,
                    "mechanism": row["mechanism"],
                    "error": row["error"],
                    "stderr": row["stderr"],
                    "exact": bool(row["exact"]),
                }
            )
    public = space.check_points(load_cell_shapes(k, cell_line="dlm8").landmarks)
    private = space.check_points(load_cell_shapes(k, cell_line="dunn", treatment="control").landmarks)
    center, target = frechet_mean(space, public), frechet_mean(space, private)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always", PrivacyLeakWarning)
        for eps in SHAPE_EPSILONS:
            mech = PointwiseShapeLaplace(space, epsilon=eps, center=center, radius=radius, as_published=True)
            shapes = mech.release(private, rng=rng, size=int(repetitions)).shape
            d = np.asarray(space.dist(target, shapes))
            data.append(
                {
                    "epsilon": eps,
                    "mechanism": "pointwise-published",
                    "error": float(d.mean()),
                    "stderr": float(d.std(ddof=1) / np.sqrt(len(d))),
                    "exact": True,
                }
            )
    data_radius = float(np.max(space.dist(target, private)))
    r_star = max_radius(space)
    h = 4.0 * data_radius / np.tan(4.0 * data_radius)  # R21 Thm 2's h(r, κ = 4), negative beyond r*
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.2, 4.8))
    ax = fig.subplots()
    labels = {
        "kng": "KNG, public radius 0.25 (sound)",
        "laplace": "Riemannian Laplace, public radius 0.25 (sound)",
        "pointwise": "point-wise Laplace, public ranges (sound)",
        "pointwise-published": "point-wise Laplace, ranges from the data (as published)",
    }
    styles = {
        "kng": ("tab:green", "-"),
        "laplace": ("tab:blue", "-"),
        "pointwise": ("tab:red", "-"),
        "pointwise-published": ("tab:red", "--"),
    }
    for key, label in labels.items():
        sel = [d for d in data if d["mechanism"] == key]
        color, style = styles[key]
        ax.errorbar(
            [d["epsilon"] for d in sel],
            [d["error"] for d in sel],
            yerr=[2 * d["stderr"] for d in sel],
            fmt=style,
            marker="o",
            ms=3,
            capsize=3,
            color=color,
            label=label,
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(SHAPE_EPSILONS, [f"{e:g}" for e in SHAPE_EPSILONS])
    ax.xaxis.set_minor_formatter("")
    ax.set_xlabel("privacy budget ε")
    ax.set_ylabel("shape distance to the non-private mean (radians)")
    ax.set_title(
        f"S22 shapes on stand-in data: {len(private)} cell contours, {k} landmarks\n"
        f"(KNG with the data radius {data_radius:.2f} ≥ r* = π/8 as published: no sensitivity, not run)",
        fontsize=10,
    )
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    no_number = "not in the offline supplement"
    rows = []
    for eps in SHAPE_EPSILONS:
        err = {
            d["mechanism"]: compare_text(d["error"], Z95 * d["stderr"], digits=3)[0]
            for d in data
            if d["epsilon"] == eps
        }
        rows.append(
            Row(
                f"ε = {eps:g}: KNG / Laplace / point-wise (sound) error (± 95%)",
                f"{err['kng']} / {err['laplace']} / {err['pointwise']}",
                no_number,
                "stand-in data",
            )
        )
        rows.append(
            Row(
                f"ε = {eps:g}: point-wise error, data ranges (as published) (± 95%)",
                f"{err['pointwise-published']}",
                no_number,
                "not DP",
            )
        )
    rows.append(
        Row(
            "KNG radius r = max ρ(x̄, x_i) (as published) vs r* = π/8",
            f"{data_radius:.3f} vs {r_star:.3f}; h(r, 4) = {h:.2f}",
            str(published("S22", "kendall-radius").value),
            "Assumption 1 fails: not run",
        )
    )
    return Result(fig, data, rows)


REPRODUCTIONS = (
    Reproduction(
        "s22-sims",
        "S22",
        "Simulations (supp. §2.3–2.4): KNG vs Riemannian Laplace on SPD(2) and S², error vs n",
        "partial",
        (20, 100),
        run_sims,
        "designs from the supplement; its figures (main text) are not available offline, so no published "
        "values; n grid and repetitions ours (n = 10…100; 100 data sets per n in the full run); "
        "KNG σ = Δ/ε on S² as published beside 2Δ/ε",
    ),
    Reproduction(
        "s22-shapes",
        "S22",
        "Shapes (supp. §2.5): private mean shapes, KNG vs Laplace vs point-wise Laplace",
        "stand-in data",
        (10, 100),
        run_shapes,
        "geomstats cell contours stand in for the corpus callosa (not available offline); point-wise ranges "
        "from the data as published beside public ranges; needs geomstats",
    ),
)
