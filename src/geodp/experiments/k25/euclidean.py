"""K25 Table 1 and Fig. 4, the Euclidean case: one-feature regressions on a stand-in (scikit-learn's
diabetes data) by the sound and the as-published private geodesic regression."""

from __future__ import annotations

import warnings

import numpy as np

from geodp.errors import ApproximateSamplerWarning, PrivacyLeakWarning
from geodp.experiments.k25.setting import (
    EPSILON,
)
from geodp.experiments.k25.streams import shared_stream
from geodp.experiments.plotting import agg_pyplot
from geodp.experiments.published import published
from geodp.experiments.reproduce import Result, Row, bootstrap_interval, compare_text
from geodp.manifolds import Euclidean
from geodp.models import PrivateGeodesicRegression

__all__ = ["run_fig4", "run_table1"]

METHODS = ("non-DP OLS", "DPGR sound (joint KNG)", "DPGR as published (K25)")
FEATURES = ("bmi", "bp", "s5", "s3")


@shared_stream
def _draws(repetitions, rng, progress):
    from sklearn.datasets import load_diabetes
    from sklearn.linear_model import LinearRegression

    bunch = load_diabetes()
    X_all, y_all = bunch.data[:100], bunch.target[:100]
    y_all = (y_all - y_all.mean()) / y_all.std()
    features = FEATURES
    space = Euclidean(1)
    data, lines = [], {}
    for feat in progress(features, total=len(features), desc="K25 Table 1"):
        x = X_all[:, bunch.feature_names.index(feat)]
        lo, hi = float(x.min()), float(x.max())  # public bounds: the variable's range (a stand-in for a codebook)
        ols = LinearRegression().fit(x[:, None], y_all)
        data.append(
            dict(
                feature=feat,
                method="non-DP OLS",
                repetition=0,
                mse=float(np.mean((ols.predict(x[:, None]) - y_all) ** 2)),
            )
        )
        for label, pub in (("DPGR sound (joint KNG)", False), ("DPGR as published (K25)", True)):
            reps = repetitions if not pub else max(2, repetitions // 10)
            for rep in range(reps):
                model = PrivateGeodesicRegression(
                    space,
                    epsilon=EPSILON,
                    center=np.zeros(1),
                    radius=3.5,
                    x_bounds=(lo, hi),
                    as_published=pub,
                    random_state=rng,
                )
                with warnings.catch_warnings(record=True):  # as_published deliberately; MH notice
                    warnings.simplefilter("always", PrivacyLeakWarning)
                    warnings.simplefilter("always", ApproximateSamplerWarning)
                    model.fit(x, np.clip(y_all, -3.5, 3.5)[:, None])
                pred = model.predict(x)[:, 0]
                data.append(dict(feature=feat, method=label, repetition=rep, mse=float(np.mean((pred - y_all) ** 2))))
                if rep == 0:  # one release per method drawn as a line, as K25 Fig. 4
                    lines[(feat, label)] = (np.sort(x), model.predict(np.sort(x))[:, 0])
    return data, lines, X_all, y_all, bunch.feature_names


def _medians(data):
    return {
        m: float(
            np.mean([np.median([d["mse"] for d in data if d["method"] == m and d["feature"] == f]) for f in FEATURES])
        )
        for m in METHODS
    }


def _median_interval(data, method):
    """:func:`_medians` of one method and the half-width of its 95% bootstrap interval (releases
    resampled, the four features kept together)."""
    reps = sorted({d["repetition"] for d in data if d["method"] == method})
    mse = {(d["feature"], d["repetition"]): d["mse"] for d in data if d["method"] == method}
    table = np.array([[mse[(f, r)] for f in FEATURES] for r in reps])
    return bootstrap_interval(table, lambda a: np.mean(np.median(a, axis=0)))


def run_fig4(repetitions, rng, progress):
    """K25 Fig. 4: one sound and one as-published release per feature beside the OLS line."""
    from sklearn.linear_model import LinearRegression

    data, lines, X_all, y_all, names = _draws(repetitions, rng, progress)
    features = FEATURES
    plt = agg_pyplot()
    fig, axes = plt.subplots(1, 4, figsize=(17, 4.4))
    for ax, feat in zip(axes, features):
        x = X_all[:, names.index(feat)]
        ax.scatter(x, y_all, s=8, color="C0", alpha=0.5, label="data (first 100 rows)")
        ax.plot(
            np.sort(x),
            LinearRegression().fit(x[:, None], y_all).predict(np.sort(x)[:, None]),
            color="C3",
            label="non-DP OLS",
        )
        medians = []
        for label, color, ls in (("DPGR sound (joint KNG)", "C2", "-"), ("DPGR as published (K25)", "C1", "--")):
            ax.plot(*lines[(feat, label)], color=color, ls=ls, lw=1.5, label=f"{label}, one release")
            vals = [d["mse"] for d in data if d["feature"] == feat and d["method"] == label]
            medians.append(f"{np.median(vals):.2f} ({len(vals)})")
        ax.set_xlabel(f"{feat} (scaled, as in scikit-learn)")
        ax.set_ylabel("disease progression (standardised)")
        ax.set_title(f"{feat}: median MSE {medians[0]} sound, {medians[1]} as published", fontsize=9)
        ax.grid(alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc="lower center", ncol=4)
    fig.suptitle(
        "K25 Table 1 / Fig. 4 layout on a stand-in (scikit-learn diabetes, first 100 rows, 4 features, ε = 2); "
        "Wine Quality, diffprivlib and Opacus are not run here"
    )
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    rows = [
        Row(
            f"Fig. 4, {feat}: median MSE sound; as published",
            "; ".join(
                f"{np.median([d['mse'] for d in data if d['feature'] == feat and d['method'] == m]):.2f}"
                for m in METHODS[1:]
            ),
            "lines close to the OLS line (picture)",
            "stand-in data (diabetes), not Wine Quality",
        )
        for feat in FEATURES
    ]
    return Result(fig, data, rows)


_PUBLISHED_KEYS = {
    "non-DP OLS": "table1-mse-nonprivate",
    "DPGR sound (joint KNG)": "table1-mse-dpgr",
    "DPGR as published (K25)": "table1-mse-dpgr",
    "IBM diffprivlib": "table1-mse-diffprivlib",
    "Opacus DP-SGD": "table1-mse-opacus",
}


def run_table1(repetitions, rng, progress):
    """K25 Table 1: the MSE of each method, ours (stand-in data) beside K25's (Wine Quality)."""
    data, *_ = _draws(repetitions, rng, progress)
    med = _medians(data)
    pub = {m: published("K25", key).value for m, key in _PUBLISHED_KEYS.items()}
    plt = agg_pyplot()
    fig, ax = plt.subplots(figsize=(9, 4.6))
    names = list(_PUBLISHED_KEYS)
    xs = np.arange(len(names))
    ours = [med.get(m, np.nan) for m in names]
    ax.bar(xs - 0.2, ours, width=0.4, color="C0", label="ours: mean over 4 features of the median MSE (diabetes)")
    for i, m in enumerate(names):
        per_feature = (
            [np.median([d["mse"] for d in data if d["method"] == m and d["feature"] == f]) for f in FEATURES]
            if m in med
            else []
        )
        ax.scatter([xs[i] - 0.2] * len(per_feature), per_feature, color="k", s=10, zorder=3)
        if m not in med:
            ax.text(xs[i] - 0.2, 0.05, "not run", rotation=90, ha="center", va="bottom", fontsize=8)
    ax.bar(xs + 0.2, [pub[m] for m in names], width=0.4, color="C1", label="published (K25 Table 1, Wine Quality)")
    ax.set_xticks(xs, [m.replace(" (", "\n(") for m in names], fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("MSE (standardised y)")
    ax.scatter([], [], color="k", s=10, label="ours, one feature (median over releases)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, axis="y")
    ax.set_title(f"K25 Table 1 (ε = {EPSILON:g}): ours on a stand-in beside the published MSEs", fontsize=10)
    fig.tight_layout()

    def compared(method):
        return compare_text(*_median_interval(data, method), pub[method], digits=3, label="published (Wine Quality)")

    ols, ols_note = compared("non-DP OLS")
    sound, sound_note = compared("DPGR sound (joint KNG)")
    as_pub, as_pub_note = compared("DPGR as published (K25)")
    rows = [
        Row(
            "Table 1, non-DP LR, MSE (mean over 4 one-feature fits, ± 95%)",
            ols,
            f"{pub['non-DP OLS']}",
            f"stand-in data (diabetes, standardised y), not Wine Quality; {ols_note}",
        ),
        Row(
            "Table 1, DPGR (ε = 2), median MSE (± 95% bootstrap over releases)",
            f"{sound} (sound); {as_pub} (as published)",
            f"{pub['DPGR sound (joint KNG)']}",
            f"stand-in data; sound: {sound_note}; as published: {as_pub_note}",
        ),
        Row(
            "Table 1, IBM diffprivlib (ε = 2)",
            "not run",
            f"{pub['IBM diffprivlib']}",
            "needs scikit-learn < 1.9 and the Wine Quality data: see benchmarks/compare_linear_regression.py",
        ),
        Row(
            "Table 1, Opacus DP-SGD (ε = 2)",
            "not run",
            f"{pub['Opacus DP-SGD']}",
            "needs torch + opacus: see benchmarks/compare_linear_regression.py",
        ),
    ]
    return Result(fig, data, rows)
