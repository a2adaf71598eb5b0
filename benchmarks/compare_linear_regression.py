"""Private linear regression on real data: geodp (KNG, AdaSSP) vs diffprivlib vs DP-SGD (Opacus), K25 Table 1's layout.

Data that install offline with the ``compare`` extra: statsmodels' RAND health-insurance data
(``randhie``: outpatient visits ``mdvis`` on 9 covariates, n = 20,190) and Fair's affairs data
(``fair``: ``affairs`` on 8 covariates, n = 6,366), and scikit-learn's diabetes data (10
covariates, n = 442).

Protocol: one 80/20 split per dataset (seed 0); OLS (scikit-learn) on the unclipped training
data; for each ε in {0.5, 1, 2, 5}, the median test MSE over ``--releases`` private fits (default
50). Every method gets the same bounds, taken once from the **full** data (training and test):
the covariates' min and max (for the coded variables these are the codebook ranges), and for the
response its min and its 99.5th percentile (a cap on a heavy-tailed count; it changes OLS's test
MSE by ≤ 0.3%). They are not computed from the training data alone, and a real release would
take them from a codebook; all methods share them, so the comparison is fair.

diffprivlib needs scikit-learn < 1.9, and this project runs on 1.9: the script creates a
virtualenv on first use under ``~/.cache/geodp-bench/`` (``scikit-learn<1.9 diffprivlib
statsmodels``, then ``torch==2.13.0 opacus`` if pip can install them) and runs diffprivlib and
Opacus there, each method in one subprocess for all datasets, running while geodp fits
(:mod:`geodp.experiments.external_baselines`). Opacus releases are (ε, δ)-DP with δ = 1e-5 and
geodp's AdaSSP with δ = 1e-6, weaker guarantees than the pure ε-DP of geodp's default (KNG) and
diffprivlib.

Also times one private fit on synthetic data with n = 20,000 and m = 10 (geodp interleaved with
scikit-learn's OLS in this process; diffprivlib in its own process).

Run: ``python benchmarks/compare_linear_regression.py [--releases 50] [--no-opacus]``
"""

from __future__ import annotations

import argparse
import contextlib
import time
import warnings

import numpy as np

from geodp.experiments.external_baselines import (
    ensure_venv,
    load,
    ols_mse,
    opacus_task,
    public_bounds,
    run_worker,
    split,
    start_worker,
)
from geodp.models.linear_regression import DOMAIN_FACTOR, PrivateLinearRegression

EPSILONS = (0.5, 1.0, 2.0, 5.0)
ADASSP_DELTA = 1e-6


def geodp_mses(X_train, y_train, X_test, y_test, bounds_X, bounds_y, epsilon, releases, **mechanism):
    """Test MSEs of ``releases`` private fits (``mechanism``: e.g. ``mechanism="adassp", delta=1e-6``)
    and the median acceptance of the exact KNG sampler (None for AdaSSP)."""
    mses, acceptance = [], []
    for r in range(releases):
        model = PrivateLinearRegression(
            epsilon=epsilon, bounds_X=bounds_X, bounds_y=bounds_y, random_state=1000 + r, **mechanism
        )
        model.fit(X_train, y_train)
        mses.append(float(np.mean((model.predict(X_test) - y_test) ** 2)))
        acceptance.append(model.curator_diagnostics_.sampler_acceptance)
    return mses, (float(np.median(acceptance)) if acceptance[0] is not None else None)


def timing(python, repeats=41):
    rng = np.random.default_rng(7)
    n, m = 20_000, 10
    X = rng.uniform(0, 1, size=(n, m))
    y = X @ rng.normal(size=m) * 0.3 + rng.normal(scale=0.5, size=n)
    bounds_X, bounds_y = (np.zeros(m), np.ones(m)), (-4.0, 4.0)
    from sklearn.linear_model import LinearRegression

    geodp_t, ols_t = [], []
    for r in range(repeats):  # interleaved
        t = time.perf_counter()
        PrivateLinearRegression(epsilon=1.0, bounds_X=bounds_X, bounds_y=bounds_y, random_state=r).fit(X, y)
        geodp_t.append(time.perf_counter() - t)
        t = time.perf_counter()
        LinearRegression().fit(X, y)
        ols_t.append(time.perf_counter() - t)
    line = (
        f"one fit, n = 20,000, m = 10 (median of {repeats}): geodp {np.median(geodp_t) * 1e3:.2f} ms, "
        f"scikit-learn OLS {np.median(ols_t) * 1e3:.2f} ms"
    )
    if python is not None:
        out = run_worker(
            python,
            dict(X_train=X, y_train=y, x_lo=bounds_X[0], x_hi=bounds_X[1], y_lo=bounds_y[0], y_hi=bounds_y[1]),
            dict(kind="diffprivlib-time", repeats=repeats),
        )
        line += f", diffprivlib {np.median(out['times']) * 1e3:.2f} ms (own process)"
    print(line)


def _ratio_text(ratio: float, best: bool) -> str:
    text = f"{ratio:.3f}" if ratio < 100 else f"{ratio:.2g}"
    return f"**{text}**" if best else text


def markdown_table(results) -> str:
    """``results[(dataset, ε)] = (OLS, KNG, AdaSSP, diffprivlib, Opacus)`` test MSEs as the README's
    table: ratios to OLS (MSE in brackets), the best private ratio of each row in bold."""
    names = {"randhie": "RAND", "fair": "Fair", "diabetes": "diabetes"}
    lines = [
        "| dataset | ε | OLS MSE | geodp KNG | geodp AdaSSP (δ = 1e-6) | diffprivlib | Opacus (δ = 1e-5) |",
        "|---|---|---|---|---|---|---|",
    ]
    for (name, eps), (base, *cells) in results.items():
        best = min(c for c in cells if c is not None)
        text = ["—" if c is None else f"{_ratio_text(c / base, c == best)} ({c:.4g})" for c in cells]
        lines.append(f"| {names.get(name, name)} | {eps:g} | {base:.4g} | " + " | ".join(text) + " |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--releases", type=int, default=50)
    parser.add_argument("--datasets", default="randhie,fair,diabetes")
    parser.add_argument("--no-opacus", action="store_true")
    parser.add_argument("--no-diffprivlib", action="store_true")
    parser.add_argument("--opacus-epochs", type=int, default=10)
    args = parser.parse_args()
    python, has_opacus = (None, False) if args.no_diffprivlib else ensure_venv(not args.no_opacus)
    print(
        f"geodp domain factor {DOMAIN_FACTOR}; AdaSSP δ = {ADASSP_DELTA:g}; {args.releases} releases per cell; "
        "median test MSE (ratio to OLS)"
    )
    header = (
        f"{'dataset':9} | {'eps':>4} | {'OLS':>9} | {'geodp KNG':>17} | {'geodp AdaSSP':>17} | "
        f"{'diffprivlib':>21} | {'opacus (δ=1e-5)':>17} | KNG acc."
    )
    results = {}
    prepared = []
    for name in args.datasets.split(","):
        X, y = load(name)
        bounds_X, bounds_y = public_bounds(X, y)
        X_train, y_train, X_test, y_test = split(X, y)
        base = ols_mse(X_train, y_train, X_test, y_test)
        arrays = dict(
            X_train=X_train,
            y_train=y_train,
            X_test=X_test,
            y_test=y_test,
            x_lo=bounds_X[0],
            x_hi=bounds_X[1],
            y_lo=bounds_y[0],
            y_hi=bounds_y[1],
        )
        prepared.append((name, arrays, bounds_X, bounds_y, base))
    # one worker process per external method for every dataset, running beside geodp's fits
    workers = {}
    if python:
        task = dict(kind="diffprivlib", epsilons=EPSILONS, releases=args.releases)
        workers["diffprivlib"] = start_worker(python, [(arrays, task) for _, arrays, *_ in prepared])
    if has_opacus:
        task = opacus_task(EPSILONS, args.releases, epochs=args.opacus_epochs)
        workers["opacus"] = start_worker(python, [(arrays, task) for _, arrays, *_ in prepared])
    with contextlib.ExitStack() as stack:
        for worker in workers.values():
            stack.callback(worker.close)
        ours = {}
        for name, arrays, bounds_X, bounds_y, _ in prepared:
            data = tuple(arrays[k] for k in ("X_train", "y_train", "X_test", "y_test"))
            for eps in EPSILONS:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    split_data = (*data, bounds_X, bounds_y, eps, args.releases)
                    mses, acc = geodp_mses(*split_data)
                    ada, _ = geodp_mses(*split_data, mechanism="adassp", delta=ADASSP_DELTA)
                ours[(name, eps)] = (float(np.median(mses)), float(np.median(ada)), acc)
        answers = {method: worker.result() for method, worker in workers.items()}
    print(header)
    print("-" * len(header))
    for i, (name, *_, base) in enumerate(prepared):
        dpl, opa = (answers[method][i] if method in answers else {} for method in ("diffprivlib", "opacus"))
        for eps in EPSILONS:
            kng, ada, acc = ours[(name, eps)]
            cells = [kng, ada]
            cells.append(float(np.median(dpl[str(eps)])) if str(eps) in dpl else None)
            cells.append(float(np.median(opa[str(eps)])) if str(eps) in opa else None)
            results[(name, eps)] = (base, *cells)
            fmt = [f"{c / base:6.3f} ({c:9.4g})" if c is not None else f"{'-':>17}" for c in cells]
            print(
                f"{name:9} | {eps:4} | {base:9.4g} | {fmt[0]:>17} | {fmt[1]:>17} | {fmt[2]:>21} | {fmt[3]:>17} | "
                f"{acc:.2g}",
                flush=True,
            )
    print("\nas a markdown table (benchmarks/README.md):\n")
    print(markdown_table(results))
    print()
    timing(python)
    print("\ntargets (the two large sets):")
    for name in ("randhie", "fair"):
        if (name, 0.5) not in results:
            continue
        below = all(results[(name, e)][3] is None or results[(name, e)][1] < results[(name, e)][3] for e in EPSILONS)
        r05 = results[(name, 0.5)][1] / results[(name, 0.5)][0]
        r5 = results[(name, 5.0)][1] / results[(name, 5.0)][0]
        print(
            f"  {name}: below diffprivlib at every ε: {below}; ε = 0.5: {r05:.3f}× OLS (target ≤ 1.5); ε = 5: "
            f"{r5:.3f}× OLS (target ≤ 1.05)"
        )


if __name__ == "__main__":
    main()
