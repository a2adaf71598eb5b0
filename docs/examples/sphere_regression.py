"""Private geodesic regression on the sphere: the figure and the numbers of docs/regression.md.

Synthetic data: n = 200 records, each a direction on the unit sphere S² (think of one location
per person, the Earth as the unit sphere) and the day of the year it was recorded. The directions
scatter (0.06 rad per axis) around a great circle along which the mean direction travels 0.5 rad
over the year. The script fits the geodesic without privacy (``geodesic_regression``), releases it
privately several times at each ε with ``PrivateGeodesicRegression``, prints the median distances
to the non-private fit, and draws ``sphere_regression.png``.

Run from the repository root (about 40 s on 2 cores; the releases run in parallel)::

    python docs/examples/sphere_regression.py
    python docs/examples/sphere_regression.py --quick      # a smoke test, a few seconds

The public settings (centre, radius, covariate bounds, residual bound) are constants below: in a
real release they come from domain knowledge, never from the private records.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import math
import tempfile
import time
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import numpy as np

from geodp.errors import ApproximateSamplerWarning
from geodp.manifolds import Sphere
from geodp.models import PrivateGeodesicRegression
from geodp.regression import geodesic_predict, geodesic_regression

try:  # a progress bar if tqdm is installed
    from tqdm import tqdm
except ImportError:  # pragma: no cover - tqdm is optional
    tqdm = None

SPACE = Sphere(2)
# Public settings, chosen before seeing the data.
CENTER = np.array([0.0, 0.0, 1.0])  # the nominal direction
RADIUS = 0.6  # every record within 0.6 rad of it (< r* = π/4 on the unit sphere)
X_BOUNDS = (0.0, 365.0)  # the covariate is the day of the year: its range is the calendar's
RESIDUAL_BOUND = 0.3  # records rarely lie more than 0.3 rad from the trend (public knowledge)
EPSILONS = (0.5, 1.0, 2.0, 5.0)

N_RECORDS = 200
NOISE = 0.06  # rad, per tangent axis
TRUE_FOOTPOINT_STEP = np.array([0.06, 0.05, 0.0])  # the mid-year direction, 0.08 rad from CENTER
TRUE_DRIFT = np.array([0.4, -0.3, 0.0])  # tangent at the mid-year direction: 0.5 rad per year


def make_data(n: int, seed: int = 0):
    """Days ``t`` (shape (n,)), directions ``Y`` (shape (n, 3)) and the true (p, v), with ``v``
    in radians per year and ``p`` the direction at mid-year."""
    rng = np.random.default_rng(seed)
    p = SPACE.exp(CENTER, TRUE_FOOTPOINT_STEP)
    v = SPACE.transport(CENTER, p, TRUE_DRIFT)
    t = np.sort(rng.uniform(*X_BOUNDS, size=n))
    on_trend = geodesic_predict(SPACE, p, v, _years_from_mid(t))
    Y = SPACE.exp(on_trend, NOISE * SPACE.to_tangent(on_trend, rng.normal(size=(n, 3))))
    return t, Y, p, v


def _years_from_mid(t):
    """The covariate in the model's scaled units: ``(t − 182.5)/365`` ∈ [−½, ½]."""
    lower, upper = X_BOUNDS
    return (np.asarray(t, dtype=float) - 0.5 * (lower + upper)) / (upper - lower)


def release(epsilon: float, seed: int, t, Y):
    """One private release: (epsilon, footpoint, velocity per year, seconds, noise scale σ from
    the publishable report, texts of the warnings raised)."""
    model = PrivateGeodesicRegression(
        SPACE, epsilon=epsilon, center=CENTER, radius=RADIUS, x_bounds=X_BOUNDS,
        residual_bound=RESIDUAL_BOUND, mechanism="kng", random_state=seed,
    )
    start = time.perf_counter()
    # The model shows an MH progress bar when stderr is a terminal; main() shows one bar for all
    # releases instead, so the per-release bars are sent to a buffer.
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("always", ApproximateSamplerWarning)
        model.fit(t, Y)
    seconds = time.perf_counter() - start
    velocity = model.coef_ * (X_BOUNDS[1] - X_BOUNDS[0])  # per day → per year
    noise_scale = model.privacy_report_.to_dict()["scale"]
    notes = sorted({str(w.message) for w in caught})
    return epsilon, model.intercept_, velocity, seconds, noise_scale, notes


def _to_plane(points):
    """Azimuthal equidistant coordinates around CENTER (the north pole): the first two
    coordinates of Log_CENTER(y). Distances from the centre are true distances."""
    return SPACE.log(CENTER, np.atleast_2d(points))[:, :2]


def plot(path, t, Y, fit, releases, errors, epsilons):
    """One panel per ε: data coloured by day, the public ball, the non-private geodesic (black)
    and the private ones (red), arrows at the end of the year."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ncols = min(2, len(epsilons))
    nrows = math.ceil(len(epsilons) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.2 * ncols, 4.9 * nrows), sharex=True, sharey=True,
                             squeeze=False, constrained_layout=True)
    days = np.linspace(*X_BOUNDS, 60)
    data = _to_plane(Y)
    circle = np.linspace(0.0, 2.0 * np.pi, 200)
    p_hat, v_hat = fit
    np_curve = _to_plane(geodesic_predict(SPACE, p_hat, v_hat, _years_from_mid(days)))
    for k, (ax, eps) in enumerate(zip(axes.flat, epsilons)):
        ax.plot(RADIUS * np.cos(circle), RADIUS * np.sin(circle), ls="--", lw=1.0, color="0.45",
                label="public ball (radius 0.6)")
        dots = ax.scatter(data[:, 0], data[:, 1], c=t, cmap="viridis", s=9, alpha=0.75, lw=0)
        for j, (p, v) in enumerate(releases[eps]):
            curve = _to_plane(geodesic_predict(SPACE, p, v, _years_from_mid(days)))
            ax.plot(curve[:, 0], curve[:, 1], color="tab:red", lw=1.4, alpha=0.8,
                    label="private releases" if j == 0 else None)
            ax.annotate("", xy=curve[-1], xytext=curve[-4],
                        arrowprops={"arrowstyle": "-|>", "color": "tab:red", "lw": 1.2, "alpha": 0.8})
            foot = _to_plane(p)[0]
            ax.plot(foot[0], foot[1], "o", color="tab:red", ms=4)
        ax.plot(np_curve[:, 0], np_curve[:, 1], color="black", lw=2.4, label="non-private fit")
        foot = _to_plane(p_hat)[0]
        ax.plot(foot[0], foot[1], "o", color="black", ms=6, label="fitted point at mid-year\n(arrows: end of the year)")
        ax.annotate("", xy=np_curve[-1], xytext=np_curve[-8],
                    arrowprops={"arrowstyle": "-|>", "color": "black", "lw": 2.0})
        dp, dv = errors[eps]
        ax.set_title(f"ε = {eps:g}: median footpoint error {dp:.3f} rad,\n"
                     f"velocity error {dv:.2f} rad/yr ({len(releases[eps])} releases)", fontsize=10)
        ax.set_aspect("equal")
        ax.set_xlim(-0.68, 0.68)
        ax.set_ylim(-0.68, 0.68)
        ax.grid(alpha=0.25)
        if k % ncols == 0:
            ax.set_ylabel("Log_c(y), 2nd coordinate (rad)")
        if k // ncols == nrows - 1:
            ax.set_xlabel("Log_c(y), 1st coordinate (rad)")
        if k == 0:
            ax.legend(loc="lower left", fontsize=8, framealpha=0.9)
    for ax in list(axes.flat)[len(epsilons):]:
        ax.set_visible(False)
    fig.colorbar(dots, ax=axes, shrink=0.6, label="day of the year (the covariate)")
    fig.suptitle(f"Private geodesic regression on S² (n = {len(t)}, τ = {RESIDUAL_BOUND:g}): azimuthal "
                 "equidistant view around the public centre c", fontsize=11)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(out_dir=None, *, quick: bool = False, n_releases: int | None = None, workers: int | None = None,
         progress: bool = True, seed: int = 0) -> dict:
    """Fit, release, measure and plot; returns the numbers the docs quote.

    ``quick`` uses 60 records, ε ∈ {1, 5}, one release each and no worker processes.
    """
    start = time.perf_counter()
    if out_dir is None:  # the full run redraws the tracked figure; --quick writes to a temporary folder
        out_dir = Path(tempfile.mkdtemp(prefix="sphere_regression_")) if quick else Path(__file__).resolve().parent.parent / "images"
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    n = 60 if quick else N_RECORDS
    epsilons = (1.0, 5.0) if quick else EPSILONS
    n_releases = n_releases or (1 if quick else 3)
    workers = workers or (1 if quick else 2)

    t, Y, p_true, v_true = make_data(n, seed)
    p_hat, v_hat = geodesic_regression(SPACE, _years_from_mid(t), Y)  # v_hat: rad per year
    truth_error = (float(SPACE.dist(p_hat, p_true)), float(np.linalg.norm(SPACE.transport(p_true, p_hat, v_true) - v_hat)))
    n_outside = int(np.count_nonzero(SPACE.dist(CENTER, Y) > RADIUS))  # synthetic data: fine to look

    jobs = [(eps, 1000 * seed + 10 * k + j) for k, eps in enumerate(epsilons) for j in range(n_releases)]
    results = []
    bar = tqdm(total=len(jobs), desc="private releases", disable=not progress) if tqdm is not None else None
    if workers == 1:
        for eps, s in jobs:
            results.append(release(eps, s, t, Y))
            if bar is not None:
                bar.update()
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(release, eps, s, t, Y) for eps, s in jobs]
            for future in as_completed(futures):
                results.append(future.result())
                if bar is not None:
                    bar.update()
    if bar is not None:
        bar.close()

    releases = {eps: [] for eps in epsilons}
    distances = {eps: [] for eps in epsilons}
    scales, notes, fit_seconds = {}, set(), []
    for eps, p, v, seconds, scale, caught in sorted(results, key=lambda r: r[0]):
        releases[eps].append((p, v))
        # Footpoint: geodesic distance; velocity: compare at p_hat after parallel transport.
        distances[eps].append((float(SPACE.dist(p, p_hat)), float(np.linalg.norm(SPACE.transport(p, p_hat, v) - v_hat))))
        scales[eps] = scale
        notes.update(caught)
        fit_seconds.append(seconds)
    errors = {eps: tuple(float(x) for x in np.median(np.array(distances[eps]), axis=0)) for eps in epsilons}

    png = out_dir / "sphere_regression.png"
    plot(png, t, Y, (p_hat, v_hat), releases, errors, epsilons)
    return {
        "n": n,
        "n_releases": n_releases,
        "residual_bound": RESIDUAL_BOUND,
        "records_outside_ball": n_outside,
        "nonprivate_vs_truth": truth_error,
        "true_speed": float(np.linalg.norm(v_true)),
        "noise_scale": scales,
        "median_errors": errors,
        "all_errors": distances,
        "seconds_per_release": float(np.median(fit_seconds)),
        "seconds": time.perf_counter() - start,
        "warnings": sorted(notes),
        "png": png,
    }


def _print(result: dict) -> None:
    dp, dv = result["nonprivate_vs_truth"]
    print(f"n = {result['n']}, {result['n_releases']} releases per ε, τ = {result['residual_bound']}; "
          f"records outside the ball: {result['records_outside_ball']}")
    print(f"non-private fit vs truth: footpoint {dp:.4f} rad, velocity {dv:.4f} rad/yr "
          f"(true speed {result['true_speed']:.2f} rad/yr)")
    print("| ε | σ = 2Δ/ε | median footpoint distance (rad) | median velocity error (rad/yr) |")
    print("|---:|---:|---:|---:|")
    for eps, (fp, vel) in result["median_errors"].items():
        print(f"| {eps:g} | {result['noise_scale'][eps]:.4f} | {fp:.3f} | {vel:.2f} |")
    for note in result["warnings"]:
        print(f"(warned: {note})")
    print(f"{result['seconds_per_release']:.1f} s per release; total {result['seconds']:.0f} s; "
          f"figure: {result['png']}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="60 records, ε ∈ {1, 5}, one release each")
    parser.add_argument("--out", default=None, help="output directory (default: docs/images; with --quick a temporary folder)")
    parser.add_argument("--releases", type=int, default=None, help="private releases per ε (default 3)")
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default 2)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    _print(main(args.out, quick=args.quick, n_releases=args.releases, workers=args.workers, seed=args.seed))
