"""K25 Fig. 4, the Euclidean case: one-feature regressions on a stand-in (scikit-learn's diabetes
data) by the sound and the as-published private geodesic regression (Table 1: :mod:`.table1`)."""

from __future__ import annotations

import warnings

import numpy as np

from geodp.errors import ApproximateSamplerWarning, PrivacyLeakWarning
from geodp.experiments.k25.setting import (
    EPSILON,
)
from geodp.experiments.plotting import agg_pyplot
from geodp.experiments.reproduce import Result, Row
from geodp.manifolds import Euclidean
from geodp.models import PrivateGeodesicRegression

__all__ = ["run_fig4"]

METHODS = ("non-DP OLS", "DPGR sound (joint KNG)", "DPGR as published (K25)")
FEATURES = ("bmi", "bp", "s5", "s3")


def _draws(repetitions, rng, progress):
    from sklearn.datasets import load_diabetes
    from sklearn.linear_model import LinearRegression

    bunch = load_diabetes()
    X_all, y_all = bunch.data[:100], bunch.target[:100]
    y_all = (y_all - y_all.mean()) / y_all.std()
    features = FEATURES
    space = Euclidean(1)
    data, lines = [], {}
    for feat in progress(features, total=len(features), desc="K25 Fig. 4"):
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
