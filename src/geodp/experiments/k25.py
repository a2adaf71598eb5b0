"""Reproductions of K25 (Kulkarni & Soto, 2024/25) for ``geodp reproduce``: the sphere experiment
and the Euclidean case.

K25 releases the geodesic-regression footpoint and velocity in two KNG stages with its Thm 3.4
bounds; the footpoint bound ``2τ cos(1)/n`` is too small (a record at ``x = 0`` moves the
gradient by ``2τ/n``) and each stage conditions on the non-private other parameter
(docs/math.md §9–10). geodp's sound default is a joint KNG on ``(p, v)`` with ``σ = 2Δ/ε``
(:class:`~geodp.models.PrivateGeodesicRegression`); K25's release runs behind
``as_published=True`` (a :class:`~geodp.errors.PrivacyLeakWarning`, caught here on purpose).
Both are drawn side by side. Parameters are compared at the centre of the covariate range.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from geodp.errors import ApproximateSamplerWarning, PrivacyLeakWarning
from geodp.experiments.published import published
from geodp.experiments.reproduce import Reproduction, Result, Row
from geodp.manifolds import Euclidean, Sphere
from geodp.models import PrivateGeodesicRegression
from geodp.models.geodesic_regression import _mcmc_draws
from geodp.regression import _regression_gradient, geodesic_regression
from geodp.sensitivity import geodesic_regression_sensitivity, k25_published_sensitivity
from geodp.validation import as_generator

__all__ = ["REPRODUCTIONS", "k25_sphere_data"]

N_SPHERE = 20
EPSILON = 2.0  # K25: ε = 1 per stage, 2 in total
RADIUS = 0.7
TAU = 0.1
ZETA = 0.8


def k25_sphere_data(n: int = N_SPHERE, *, rng=None):
    """K25 §4.1's data on the unit sphere S²: points on a geodesic plus N(0, 0.001 I₃), normalised.

    ``q0`` uniform on S², ``ζ`` a uniform tangent direction of length 0.8 (K25 does not give
    it), ``t_i`` uniform on [0, 1], ``y_i = normalise(Exp(q0, t_i ζ) + N(0, 0.001 I₃))``.

    Returns
    -------
    t : numpy.ndarray, shape (n,)
    Y : numpy.ndarray, shape (n, 3)
    center : numpy.ndarray, shape (3,)
        The geodesic's midpoint ``Exp(q0, ζ/2)`` (a public design value: the data ball's centre).

    Examples
    --------
    >>> t, Y, c = k25_sphere_data(rng=0)
    >>> t.shape, Y.shape, bool(np.allclose(np.linalg.norm(Y, axis=1), 1.0))
    ((20,), (20, 3), True)
    """
    rng = as_generator(rng)
    space = Sphere(2)
    q0 = rng.standard_normal(3)
    q0 /= np.linalg.norm(q0)
    zeta = space.random_tangent(q0, rng=rng)
    zeta *= ZETA / np.linalg.norm(zeta)
    t = rng.uniform(0.0, 1.0, n)
    Y = space.exp(q0, t[:, None] * zeta) + rng.normal(0.0, math.sqrt(0.001), (n, 3))
    Y /= np.linalg.norm(Y, axis=1, keepdims=True)
    return t, Y, space.exp(q0, 0.5 * zeta)


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _signed_angle_deg(p, a, b):
    """Signed angle from tangent vector a to b at p on S², in degrees."""
    return float(np.degrees(np.arctan2(np.dot(p, np.cross(a, b)), np.dot(a, b))))


def _sphere_releases(repetitions, rng, progress):
    space = Sphere(2)
    t, Y, center = k25_sphere_data(rng=rng)
    xs = (t - 0.5)[:, None]
    p_hat, v_hat = geodesic_regression(space, xs, Y)
    v_hat = v_hat[0]
    velocity = 2.0 * RADIUS
    tau = TAU  # public residual clip (K25's data have residuals ≈ 0.04)
    sens = geodesic_regression_sensitivity(space, N_SPHERE, residual_bound=tau, x_bound=0.5,
                                           velocity_bound=velocity, radius=RADIUS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ApproximateSamplerWarning)
        result = _mcmc_draws(space, xs, Y, center, RADIUS, velocity, tau * (1 - 1e-12), 2.0 * sens.joint / EPSILON,
                             rng, n_chains=repetitions)
    releases = {"sound (joint KNG, σ = 2Δ/ε)": [(s[0], s[1]) for s in result.samples[0]]}
    published_fits = max(2, repetitions // 10)
    fitted = space.exp(np.broadcast_to(p_hat, Y.shape), xs * v_hat)
    tau_k25 = float(space.dist(fitted, Y).max())  # K25: τ = the largest residual (data-dependent, not DP)
    pub = []
    for _ in progress(range(published_fits), total=published_fits, desc="K25 as published"):
        model = PrivateGeodesicRegression(space, epsilon=EPSILON, center=center, radius=RADIUS, x_bounds=(0.0, 1.0),
                                          residual_bound=tau_k25, as_published=True, random_state=rng)
        with warnings.catch_warnings(record=True):  # the as-published release, deliberately
            warnings.simplefilter("always", PrivacyLeakWarning)
            warnings.simplefilter("always", ApproximateSamplerWarning)
            model.fit(t, Y)
        pub.append((model.intercept_, model.coef_))
    releases["K25 as published (two-stage, Thm 3.4)"] = pub

    def mae(p, v):
        return float(np.mean(space.dist(space.exp(np.broadcast_to(p, Y.shape), xs * v), Y)))

    data = []
    for label, pairs in releases.items():
        for rep, (p, v) in enumerate(pairs):
            moved = space.transport(p_hat, p, v_hat)
            data.append(dict(release=label, repetition=rep, footpoint_distance=float(space.dist(p_hat, p)),
                             angle_deg=_signed_angle_deg(p, moved, v), mae=mae(p, v)))
    return data, mae(p_hat, v_hat), (t, Y, p_hat, v_hat, releases)


def _stats(data, label, key):
    vals = np.array([d[key] for d in data if d["release"] == label])
    return float(vals.mean()), float(vals.std(ddof=1)) if vals.size > 1 else 0.0, vals.size


def _run_fig2(repetitions, rng, progress):
    data, mae_hat, _ = _sphere_releases(repetitions, rng, progress)
    labels = sorted({d["release"] for d in data}, reverse=True)
    plt = _pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for i, (key, xlabel) in enumerate((("footpoint_distance", "geodesic distance d(p̂, p̃) (rad)"),
                                       ("angle_deg", "angle between Γ v̂ and ṽ (degrees)"),
                                       ("mae", "MAE (1/n) Σ d(Exp(p̃, x ṽ), y) (rad)"))):
        for j, label in enumerate(labels):
            vals = [d[key] for d in data if d["release"] == label]
            axes[i].hist(vals, bins=20, alpha=0.55, color=f"C{j}", density=True, label=f"{label} ({len(vals)} releases)")
        axes[i].set_xlabel(xlabel)
        axes[i].set_ylabel("density")
        axes[i].grid(alpha=0.3)
    axes[2].axvline(mae_hat, color="k", ls=":", label=f"non-private MAE {mae_hat:.3f}")
    axes[0].set_title("Fig. 2 left: footpoint")
    axes[1].set_title("Fig. 2 right: shooting vector")
    axes[2].set_title("Fig. 3: energy (MAE)")
    axes[2].legend(fontsize=7)
    axes[0].legend(fontsize=7)
    fig.suptitle(f"K25 §4.1 on S²: n = {N_SPHERE}, ε = {EPSILON:g} in total; parameters at the centre of the covariate range")
    fig.tight_layout()
    rows = []
    for label in labels:
        d_m, d_s, _ = _stats(data, label, "footpoint_distance")
        a_m, a_s, _ = _stats(data, label, "angle_deg")
        m_m, m_s, cnt = _stats(data, label, "mae")
        rows.append(Row(f"Fig. 2 left, d(p̂, p̃) mean ± sd, {label}", f"{d_m:.3f} ± {d_s:.3f} ({cnt})", "0.01 ± 0.01",
                        "K25's footpoint at x = 0, ours at x = ½"))
        rows.append(Row(f"Fig. 2 right, angle mean ± sd, {label}", f"{a_m:.2f}° ± {a_s:.2f}°", "0.10° ± 5.47°", ""))
        rows.append(Row(f"Fig. 3, private MAE mean ± sd, {label}", f"{m_m:.3f} ± {m_s:.3f}", "0.11 ± 0.00",
                        "K25 averages over m velocities per footpoint"))
    rows.append(Row("Fig. 3, non-private MAE", f"{mae_hat:.3f}", f"{published('K25', 'fig3-mae-nonprivate').value}",
                    "depends on the noise draw of the data"))
    return Result(fig, data, rows)


def _run_fig5(repetitions, rng, progress):
    space = Sphere(2)
    data = []
    n = N_SPHERE
    for rep in progress(range(repetitions), total=repetitions, desc="K25 Fig. 5"):
        t, Y, _ = k25_sphere_data(rng=rng)
        t2, Y2, _ = k25_sphere_data(rng=rng)
        x = t[:, None]  # K25: covariates in [0, 1], footpoint at x = 0
        p, v = geodesic_regression(space, x, Y)
        j = int(rng.integers(n))
        x_adj, Y_adj = x.copy(), Y.copy()
        x_adj[j], Y_adj[j] = t2[j], Y2[j]
        gp, gv = _regression_gradient(space, p, v, x, Y)
        gp2, gv2 = _regression_gradient(space, p, v, x_adj, Y_adj)
        fitted = space.exp(np.broadcast_to(p, Y.shape), x * v)
        fitted2 = space.exp(np.broadcast_to(p, Y.shape), x_adj * v)
        tau = max(float(space.dist(fitted, Y).max()), float(space.dist(fitted2, Y_adj).max()))
        exp_p, exp_v = float(np.linalg.norm(gp - gp2)), float(np.linalg.norm(gv - gv2))
        k25 = k25_published_sensitivity(space, n, residual_bound=tau)
        sound = geodesic_regression_sensitivity(space, n, residual_bound=tau, x_bound=1.0)
        data.append(dict(pair=rep, kind="random", r_p_k25=k25.footpoint / exp_p, r_v_k25=k25.velocity / exp_v,
                         r_p_sound=sound.footpoint / exp_p, r_v_sound=sound.velocity / exp_v))
    # The adversarial pair of docs/math.md §10: one record at x = 0 with opposite residuals of norm τ.
    t, Y, _ = k25_sphere_data(rng=rng)
    x = t[:, None]
    p, v = geodesic_regression(space, x, Y)
    u = space.random_tangent(p, rng=rng)
    u /= np.linalg.norm(u)
    tau = 0.3
    x_a, x_b, Y_a, Y_b = x.copy(), x.copy(), Y.copy(), Y.copy()
    x_a[0] = x_b[0] = 0.0
    Y_a[0], Y_b[0] = space.exp(p, tau * u), space.exp(p, -tau * u)
    gp_a, gv_a = _regression_gradient(space, p, v, x_a, Y_a, residual_bound=tau)
    gp_b, gv_b = _regression_gradient(space, p, v, x_b, Y_b, residual_bound=tau)
    exp_p = float(np.linalg.norm(gp_a - gp_b))
    k25 = k25_published_sensitivity(space, n, residual_bound=tau)
    sound = geodesic_regression_sensitivity(space, n, residual_bound=tau, x_bound=1.0)
    data.append(dict(pair=repetitions, kind="adversarial (x = 0, opposite residuals)", r_p_k25=k25.footpoint / exp_p,
                     r_v_k25=float("nan"), r_p_sound=sound.footpoint / exp_p, r_v_sound=float("nan")))
    rand = [d for d in data if d["kind"] == "random"]
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, which, title in ((axes[0], "p", "footpoint: r_p = Δ_p(theory) / Δ_p(observed)"),
                             (axes[1], "v", "velocity: r_v = Δ_v(theory) / Δ_v(observed)")):
        for j, (tag, label) in enumerate((("k25", "K25 Thm 3.4 bound (as published)"), ("sound", "sound bound 2τ/n"))):
            vals = np.array([d[f"r_{which}_{tag}"] for d in rand])
            ax.hist(np.log10(vals), bins=20, alpha=0.55, color=f"C{j}", label=label)
        ax.axvline(0.0, color="k", ls=":", label="ratio 1 (bound = observed)")
        if which == "p":
            ax.axvline(np.log10(data[-1]["r_p_k25"]), color="C3", lw=2, label="K25 bound, adversarial pair")
        ax.set_xlabel("log10 of the ratio")
        ax.set_ylabel("number of adjacent pairs")
        ax.set_title(title)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"K25 Fig. 5: {len(rand)} random adjacent pairs, n = {n} on S², gradients at (p̂, v̂), τ = largest residual")
    fig.tight_layout()
    rows = []
    for which, key in (("p", "footpoint"), ("v", "velocity")):
        k25 = np.array([d[f"r_{which}_k25"] for d in rand])
        snd = np.array([d[f"r_{which}_sound"] for d in rand])
        rows.append(Row(f"Fig. 5, r_{which} mean (min) over random pairs",
                        f"K25 bound {np.mean(k25):.2f} ({k25.min():.2f}); sound {np.mean(snd):.2f} ({snd.min():.2f})",
                        f"{published('K25', f'fig5-ratio-{key}-mean').value} (all > 1)",
                        "random pairs rarely reach the supremum; the mean depends on the draw"))
    rows.append(Row("Fig. 5, r_p on the adversarial pair", f"K25 bound {data[-1]['r_p_k25']:.3f}; sound {data[-1]['r_p_sound']:.3f}",
                    "> 1 claimed", "K25's footpoint bound is violated (cos 1 = 0.540): only ≈ 1.85ε-DP"))
    return Result(fig, data, rows)


def _run_table1(repetitions, rng, progress):
    from sklearn.datasets import load_diabetes
    from sklearn.linear_model import LinearRegression

    bunch = load_diabetes()
    X_all, y_all = bunch.data[:100], bunch.target[:100]
    y_all = (y_all - y_all.mean()) / y_all.std()
    features = ("bmi", "bp", "s5", "s3")
    space = Euclidean(1)
    data = []
    for feat in progress(features, total=len(features), desc="K25 Table 1"):
        x = X_all[:, bunch.feature_names.index(feat)]
        lo, hi = float(x.min()), float(x.max())  # public bounds: the variable's range (a stand-in for a codebook)
        ols = LinearRegression().fit(x[:, None], y_all)
        data.append(dict(feature=feat, method="non-DP OLS", repetition=0,
                         mse=float(np.mean((ols.predict(x[:, None]) - y_all) ** 2))))
        for label, pub in (("DPGR sound (joint KNG)", False), ("DPGR as published (K25)", True)):
            reps = repetitions if not pub else max(2, repetitions // 10)
            for rep in range(reps):
                model = PrivateGeodesicRegression(space, epsilon=EPSILON, center=np.zeros(1), radius=3.5,
                                                  x_bounds=(lo, hi), as_published=pub, random_state=rng)
                with warnings.catch_warnings(record=True):  # as_published deliberately; MH notice
                    warnings.simplefilter("always", PrivacyLeakWarning)
                    warnings.simplefilter("always", ApproximateSamplerWarning)
                    model.fit(x, np.clip(y_all, -3.5, 3.5)[:, None])
                pred = model.predict(x)[:, 0]
                data.append(dict(feature=feat, method=label, repetition=rep, mse=float(np.mean((pred - y_all) ** 2))))
    methods = ("non-DP OLS", "DPGR sound (joint KNG)", "DPGR as published (K25)")
    med = {m: float(np.mean([np.median([d["mse"] for d in data if d["method"] == m and d["feature"] == f])
                             for f in features])) for m in methods}
    plt = _pyplot()
    fig, axes = plt.subplots(1, 4, figsize=(16, 3.8))
    for ax, feat in zip(axes, features):
        x = X_all[:, bunch.feature_names.index(feat)]
        ax.scatter(x, y_all, s=8, color="C0", alpha=0.6, label="data (first 100 rows)")
        ax.plot(np.sort(x), LinearRegression().fit(x[:, None], y_all).predict(np.sort(x)[:, None]), color="C3", label="non-DP OLS")
        ax.set_xlabel(f"{feat} (scaled, as in scikit-learn)")
        ax.set_ylabel("disease progression (standardised)")
        ax.set_title(feat)
        ax.grid(alpha=0.3)
        vals = [d["mse"] for d in data if d["feature"] == feat and d["method"] != "non-DP OLS"]
        ax.text(0.02, 0.02, f"median private MSE {np.median(vals):.2f}", transform=ax.transAxes, fontsize=7)
    axes[0].legend(fontsize=7)
    fig.suptitle("K25 Table 1 / Fig. 4 layout on a stand-in (scikit-learn diabetes, first 100 rows, 4 features, ε = 2); "
                 "Wine Quality, diffprivlib and Opacus are not run here")
    fig.tight_layout()
    rows = [Row("Table 1, non-DP LR, MSE (mean over 4 one-feature fits)", f"{med['non-DP OLS']:.3f}", "0.873",
                "stand-in data (diabetes, standardised y), not Wine Quality"),
            Row("Table 1, DPGR (ε = 2), median MSE", f"{med['DPGR sound (joint KNG)']:.3f} (sound); "
                f"{med['DPGR as published (K25)']:.3f} (as published)", "0.954", "stand-in data"),
            Row("Table 1, IBM diffprivlib (ε = 2)", "not run", "7.856",
                "needs scikit-learn < 1.9 and the Wine Quality data: see benchmarks/compare_linear_regression.py"),
            Row("Table 1, Opacus DP-SGD (ε = 2)", "not run", "0.982",
                "needs torch + opacus: see benchmarks/compare_linear_regression.py")]
    return Result(fig, data, rows)


REPRODUCTIONS = (
    Reproduction("k25-fig1", "K25", "Fig. 1: twenty points on S², non-private and private geodesics", "pending", (1, 1), None,
                 "an illustration; the same releases are drawn in k25-fig2 — its picture is not yet written"),
    Reproduction("k25-fig2", "K25", "Figs. 2–3: footpoint distance, velocity angle and MAE over private releases on S²",
                 "partial", (20, 200), _run_fig2,
                 "sound joint KNG (vectorised MH chains, one release each) beside K25's two-stage release (as published, "
                 "one tenth as many fits: each is a single two-stage MH run); |ζ| = 0.8, ball radius 0.7, public τ = 0.1 "
                 "chosen; K25's τ is the data's largest residual (not DP), kept in the as-published variant. Our errors are "
                 "20–80× K25's and the angle spread suggests the MH chains do not mix at n = 20: unresolved"),
    Reproduction("k25-fig3", "K25", "Fig. 3: histogram of the private MAE", "partial", (20, 200), _run_fig2,
                 "drawn in the third panel of the same run as k25-fig2"),
    Reproduction("k25-fig4", "K25", "Fig. 4: regression lines on Wine Quality (4 features)", "partial", (5, 50), _run_table1,
                 "Wine Quality is not offline: scikit-learn's diabetes data (first 100 rows, 4 features) stand in"),
    Reproduction("k25-fig5", "K25", "Fig. 5: theoretical / observed sensitivity ratios on adjacent pairs", "reproduced",
                 (30, 100), _run_fig5,
                 "adds the adversarial pair (x = 0, opposite residuals) that breaks K25's footpoint bound"),
    Reproduction("k25-fig6", "K25", "Fig. 6: mean MAE vs n (11 replicates)", "pending", (3, 11), None,
                 "not yet run: each n needs its own MH chains (minutes at n ≥ 100 under load)"),
    Reproduction("k25-fig7", "K25", "Fig. 7: parallel transport along two curves (diagram)", "not reproducible", (0, 0), None,
                 "a diagram of curvature, no data"),
    Reproduction("k25-table1", "K25", "Table 1: MSE of non-DP LR, DPGR, diffprivlib, Opacus (ε = 2)", "partial", (5, 50),
                 _run_table1,
                 "Wine Quality is not offline (diabetes stands in); diffprivlib and Opacus need their own environment: "
                 "benchmarks/compare_linear_regression.py runs them on other data"),
)
