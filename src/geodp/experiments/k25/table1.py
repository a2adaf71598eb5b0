"""K25 Table 1 with all four methods (and AdaSSP): non-private least squares, geodp's KNG release
(DPGR in the Euclidean case), IBM diffprivlib and Opacus DP-SGD, run for real on the RAND, Fair and
diabetes data at K25's ε = 2 (Wine Quality, K25's data, is not offline).

diffprivlib and Opacus run in their own virtualenv
(:mod:`geodp.experiments.external_baselines`); when it cannot be made (no network), the table says
so in their rows and the other methods still run. Protocol of ``benchmarks/compare_linear_regression.py``:
one 80/20 split per dataset, bounds shared by every method, test MSE, median over releases.
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np

from geodp.experiments import external_baselines
from geodp.experiments.k25.setting import EPSILON
from geodp.experiments.plotting import agg_pyplot
from geodp.experiments.published import published
from geodp.experiments.reproduce import Result, Row
from geodp.models import PrivateLinearRegression

__all__ = ["DATASETS", "METHODS", "run_table1", "table1_rows"]

DATASETS = ("randhie", "fair", "diabetes")
LABELS = {"randhie": "RAND", "fair": "Fair", "diabetes": "diabetes"}
ADASSP_DELTA = 1e-6
OLS, KNG, DIFFPRIVLIB, OPACUS, ADASSP = (
    "non-DP OLS",
    "geodp KNG (DPGR, Euclidean)",
    "IBM diffprivlib",
    "Opacus DP-SGD (δ = 1e-5)",
    "geodp AdaSSP (δ = 1e-6)",
)
METHODS = (OLS, KNG, DIFFPRIVLIB, OPACUS, ADASSP)
_PUBLISHED_KEYS = {
    OLS: "table1-mse-nonprivate",
    KNG: "table1-mse-dpgr",
    DIFFPRIVLIB: "table1-mse-diffprivlib",
    OPACUS: "table1-mse-opacus",
}


def _start_external(prepared: list, repetitions: int, python, has_opacus: bool) -> dict:
    """``{method: Worker}``: one worker process per external method (those that can run) for every
    dataset, started at once so that it runs beside geodp's fits (torch's import alone takes tens of
    seconds)."""
    workers = {}
    if python is None or not prepared:
        return workers
    tasks = {DIFFPRIVLIB: lambda seed: dict(kind="diffprivlib", epsilons=[EPSILON], releases=repetitions, seed=seed)}
    if has_opacus:
        tasks[OPACUS] = lambda seed: external_baselines.opacus_task([EPSILON], repetitions, seed=seed)
    for method, task in tasks.items():
        jobs = [(d["arrays"], task(d["seed"])) for d in prepared]
        workers[method] = external_baselines.start_worker(python, jobs)
    return workers


def _prepare(rng) -> list:
    """Per dataset that loads: its split, shared bounds, OLS's test MSE and the seed of its releases."""
    prepared = []
    for name in DATASETS:
        try:
            X, y = external_baselines.load(name)
        except ImportError:
            print(f"  {LABELS[name]}: not run: its data need statsmodels (pip install 'geodp[compare]')")
            continue
        bounds_X, bounds_y = external_baselines.public_bounds(X, y)
        X_train, y_train, X_test, y_test = external_baselines.split(X, y)
        arrays = dict(X_train=X_train, y_train=y_train, X_test=X_test, y_test=y_test)
        arrays |= dict(x_lo=bounds_X[0], x_hi=bounds_X[1], y_lo=bounds_y[0], y_hi=bounds_y[1])
        ols = external_baselines.ols_mse(X_train, y_train, X_test, y_test)
        seed = int(rng.integers(2**31))
        prepared.append(dict(name=name, arrays=arrays, bounds=(bounds_X, bounds_y), ols=ols, seed=seed))
    return prepared


def _geodp_rows(d: dict, repetitions: int) -> list:
    """The rows of geodp's KNG and AdaSSP releases on one prepared dataset."""
    a = d["arrays"]
    rows = []
    for rep in range(repetitions):
        for method, kwargs in ((KNG, {}), (ADASSP, dict(mechanism="adassp", delta=ADASSP_DELTA))):
            bounds_X, bounds_y = d["bounds"]
            model = PrivateLinearRegression(
                epsilon=EPSILON, bounds_X=bounds_X, bounds_y=bounds_y, random_state=d["seed"] + rep, **kwargs
            )
            with warnings.catch_warnings():  # the MH notice at large n·ε: the report says exact or not
                warnings.simplefilter("ignore")
                model.fit(a["X_train"], a["y_train"])
            mse = float(np.mean((model.predict(a["X_test"]) - a["y_test"]) ** 2))
            rows.append(dict(dataset=d["name"], method=method, repetition=rep, mse=mse))
    return rows


def _draws(repetitions, rng, progress):
    """The CSV rows ``(dataset, method, repetition, mse)`` and the reasons a method did not run."""
    print("K25 Table 1: diffprivlib and Opacus run in their own virtualenv (created with pip on first use)")
    python, has_opacus = external_baselines.ensure_venv(opacus=True)
    skipped = {}
    if python is None:
        skipped[DIFFPRIVLIB] = skipped[OPACUS] = "not run: its virtualenv could not be installed (no network?)"
    elif not has_opacus:
        skipped[OPACUS] = "not run: torch + opacus could not be installed (no network?)"
    for method, why in skipped.items():
        print(f"  {method}: {why}")
    prepared = _prepare(rng)
    with contextlib.ExitStack() as stack:
        workers = _start_external(prepared, repetitions, python, has_opacus)
        for worker in workers.values():
            stack.callback(worker.close)
        by_dataset = {
            d["name"]: _geodp_rows(d, repetitions) for d in progress(prepared, total=len(prepared), desc="K25 Table 1")
        }
        if workers:
            print(f"  waiting for {' and '.join(workers)} ...", flush=True)
        answers = {method: worker.result() for method, worker in workers.items()}
    data = []
    for i, d in enumerate(prepared):
        data.append(dict(dataset=d["name"], method=OLS, repetition=0, mse=d["ols"]))
        data += by_dataset[d["name"]]
        for method, answer in answers.items():
            mses = answer[i][str(EPSILON)]
            data += [dict(dataset=d["name"], method=method, repetition=r, mse=float(v)) for r, v in enumerate(mses)]
    return data, skipped


def _ratios(data):
    """``{(dataset, method): median MSE / OLS MSE}`` over the cells that ran."""
    ols = {d["dataset"]: d["mse"] for d in data if d["method"] == OLS}
    out = {}
    for name in ols:
        for method in METHODS:
            mses = [d["mse"] for d in data if d["dataset"] == name and d["method"] == method]
            if mses:
                out[(name, method)] = float(np.median(mses)) / ols[name]
    return out


def table1_rows(data, skipped: dict) -> list[Row]:
    """The printed table: per method, the median test MSE as a ratio to OLS on each dataset that
    ran, beside K25's published MSE and its ratio to K25's own OLS (Wine Quality).

    Parameters
    ----------
    data : list of dict
        Rows ``dataset, method, repetition, mse`` (OLS once per dataset).
    skipped : dict
        ``{method: reason}`` for the methods that could not run.

    Returns
    -------
    list of Row

    Examples
    --------
    >>> data = [dict(dataset="fair", method=OLS, repetition=0, mse=2.0),
    ...         dict(dataset="fair", method=KNG, repetition=0, mse=3.0)]
    >>> rows = table1_rows(data, {OPACUS: "not run: no network"})
    >>> rows[1].ours, rows[3].ours
    ('Fair 1.500× (3)', 'not run: no network')
    """
    pub = {m: published("K25", key).value for m, key in _PUBLISHED_KEYS.items()}
    ratios = _ratios(data)
    ols = {d["dataset"]: d["mse"] for d in data if d["method"] == OLS}
    rows = []
    for method in METHODS:
        cells = [
            f"{LABELS[name]} {ratios[(name, method)]:.3f}× ({ratios[(name, method)] * ols[name]:.4g})"
            for name in DATASETS
            if (name, method) in ratios
        ]
        if method == OLS:
            cells = [f"{LABELS[name]} {ols[name]:.4g}" for name in DATASETS if name in ols]
        reference = f"{pub[method]} ({pub[method] / pub[OLS]:.3f}× OLS)" if method in pub else "— (not in K25)"
        n_rel = len({d["repetition"] for d in data if d["method"] == method})
        note = (
            "test MSE of OLS on the unclipped training data; ours on RAND/Fair/diabetes, K25's on Wine Quality"
            if method == OLS
            else f"median over {n_rel} releases, as a ratio to OLS (MSE in brackets)"
            if n_rel
            else "only K25's published value"
        )
        rows.append(
            Row(
                f"Table 1, {method} (ε = {EPSILON:g})" if method != OLS else "Table 1, non-DP OLS, test MSE",
                "; ".join(cells) if cells else skipped.get(method, "not run"),
                reference,
                note,
            )
        )
    return rows


def run_table1(repetitions, rng, progress):
    """K25 Table 1: every method's test MSE as a ratio to OLS on three datasets, beside K25's."""
    data, skipped = _draws(repetitions, rng, progress)
    ratios = _ratios(data)
    pub = {m: published("K25", key).value for m, key in _PUBLISHED_KEYS.items()}
    plt = agg_pyplot()
    fig, ax = plt.subplots(figsize=(10, 4.6))
    private = METHODS[1:]
    groups = [name for name in DATASETS if (name, OLS) in ratios] + ["K25 (Wine Quality)"]
    width = 0.8 / len(private)
    for i, method in enumerate(private):
        values = [ratios.get((name, method), np.nan) for name in groups[:-1]]
        values.append(pub[method] / pub[OLS] if method in pub else np.nan)
        xs = np.arange(len(groups)) + (i - (len(private) - 1) / 2) * width
        ax.bar(xs, values, width=width, color=f"C{i}", label=method)
        for x, v, group in zip(xs, values, groups, strict=True):
            if not np.isfinite(v):
                text = "not in K25" if group == groups[-1] else "not run"
                ax.text(x, 1.0, text, rotation=90, ha="center", va="bottom", fontsize=7)
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xticks(np.arange(len(groups)), [LABELS.get(g, g) for g in groups])
    ax.set_yscale("log")
    ax.set_ylabel("test MSE / OLS test MSE (median over releases)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, axis="y")
    ax.set_title(f"K25 Table 1 (ε = {EPSILON:g}): four methods and AdaSSP, ours beside K25's ratios", fontsize=10)
    fig.tight_layout()
    return Result(fig, data, table1_rows(data, skipped))
