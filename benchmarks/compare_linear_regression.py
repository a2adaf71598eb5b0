"""Private linear regression on real data: geodp vs diffprivlib vs DP-SGD (Opacus), K25 Table 1's layout.

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
Opacus there through a subprocess. Opacus releases are (ε, δ)-DP with δ = 1e-5, a weaker
guarantee than the pure ε-DP of geodp and diffprivlib.

Also times one private fit on synthetic data with n = 20,000 and m = 10 (geodp interleaved with
scikit-learn's OLS in this process; diffprivlib in its own process).

Run: ``python benchmarks/compare_linear_regression.py [--releases 50] [--no-opacus]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from geodp.models.linear_regression import DOMAIN_FACTOR, PrivateLinearRegression

EPSILONS = (0.5, 1.0, 2.0, 5.0)
CACHE = Path(os.environ.get("GEODP_BENCH_CACHE", Path.home() / ".cache" / "geodp-bench"))
VENV = CACHE / "venv"
OPACUS_DELTA = 1e-5

WORKER = r"""
import json, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
data = np.load(sys.argv[1])
task = json.loads(sys.argv[2])
out = {}
if task["kind"] == "diffprivlib":
    from diffprivlib.models import LinearRegression
    bX = (data["x_lo"], data["x_hi"]); by = (float(data["y_lo"]), float(data["y_hi"]))
    for eps in task["epsilons"]:
        mses = []
        for r in range(task["releases"]):
            m = LinearRegression(epsilon=eps, bounds_X=bX, bounds_y=by, random_state=1000 + r)
            m.fit(data["X_train"], data["y_train"])
            mses.append(float(np.mean((m.predict(data["X_test"]) - data["y_test"]) ** 2)))
        out[str(eps)] = mses
elif task["kind"] == "diffprivlib-time":
    from diffprivlib.models import LinearRegression
    bX = (data["x_lo"], data["x_hi"]); by = (float(data["y_lo"]), float(data["y_hi"]))
    times = []
    for r in range(task["repeats"]):
        t = time.perf_counter()
        LinearRegression(epsilon=1.0, bounds_X=bX, bounds_y=by, random_state=r).fit(data["X_train"], data["y_train"])
        times.append(time.perf_counter() - t)
    out["times"] = times
elif task["kind"] == "opacus":
    import torch
    from opacus import PrivacyEngine
    torch.set_num_threads(1)
    lo, hi, y_lo, y_hi = data["x_lo"], data["x_hi"], float(data["y_lo"]), float(data["y_hi"])
    # the public bounds map covariates and response to [-1/2, 1/2] (as geodp does), y clipped
    def scale_x(X):
        return (np.clip(X, lo, hi) - (lo + hi) / 2) / (hi - lo)
    Xtr = torch.tensor(scale_x(data["X_train"]), dtype=torch.float32)
    y_scaled = (np.clip(data["y_train"], y_lo, y_hi) - (y_lo + y_hi) / 2) / (y_hi - y_lo)
    ytr = torch.tensor(y_scaled, dtype=torch.float32)[:, None]
    Xte = scale_x(data["X_test"])
    from opacus.accountants.utils import get_noise_multiplier
    for eps in task["epsilons"]:
        mses = []
        # what make_private_with_epsilon computes, once per ε (its search takes seconds)
        batches = -(-len(Xtr) // task["batch"])
        noise = get_noise_multiplier(target_epsilon=eps, target_delta=task["delta"], sample_rate=1 / batches,
                                     epochs=task["epochs"], accountant="rdp")
        for r in range(task["releases"]):
            torch.manual_seed(1000 + r)
            model = torch.nn.Linear(Xtr.shape[1], 1)
            opt = torch.optim.SGD(model.parameters(), lr=task["lr"])
            loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(Xtr, ytr), batch_size=task["batch"])
            engine = PrivacyEngine(accountant="rdp")
            model, opt, loader = engine.make_private(
                module=model, optimizer=opt, data_loader=loader, noise_multiplier=noise, max_grad_norm=task["clip"],
                poisson_sampling=True)
            for _ in range(task["epochs"]):
                for xb, yb in loader:
                    if len(xb) == 0:
                        continue
                    opt.zero_grad()
                    torch.nn.functional.mse_loss(model(xb), yb).backward()
                    opt.step()
            with torch.no_grad():
                w = model._module.weight.numpy()[0].astype(float); b = float(model._module.bias.numpy()[0])
            pred = (y_lo + y_hi) / 2 + (y_hi - y_lo) * (Xte @ w + b)
            mses.append(float(np.mean((pred - data["y_test"]) ** 2)))
        out[str(eps)] = mses
print(json.dumps(out))
"""


def ensure_venv(opacus: bool) -> tuple[Path | None, bool]:
    """The cached virtualenv with diffprivlib (and Opacus if it installs); ``(python, has_opacus)``."""
    python = VENV / "bin" / "python"
    if not python.exists():
        print(f"creating a virtualenv for diffprivlib (scikit-learn < 1.9) in {VENV} (first use only) ...", flush=True)
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        log = CACHE / "pip.log"
        with open(log, "w") as f:
            done = subprocess.run(
                [str(python), "-m", "pip", "install", "scikit-learn<1.9", "diffprivlib", "statsmodels"],
                stdout=f,
                stderr=subprocess.STDOUT,
            )
        if done.returncode != 0:
            print(f"  pip could not install diffprivlib (see {log}); its column is skipped")
            return None, False
    has_opacus = subprocess.run([str(python), "-c", "import opacus, torch"], capture_output=True).returncode == 0
    if opacus and not has_opacus:
        print("installing torch==2.13.0 and opacus in that virtualenv (first use only) ...", flush=True)
        with open(CACHE / "pip-opacus.log", "w") as f:
            done = subprocess.run(
                [str(python), "-m", "pip", "install", "torch==2.13.0", "opacus"], stdout=f, stderr=subprocess.STDOUT
            )
        has_opacus = done.returncode == 0
        if not has_opacus:
            print(f"  pip could not install torch==2.13.0 + opacus (see {CACHE / 'pip-opacus.log'}); Opacus is skipped")
    print(f"diffprivlib{' and Opacus' if has_opacus and opacus else ''} run in {VENV} through a subprocess", flush=True)
    return python, has_opacus and opacus


def run_worker(python: Path, arrays: dict, task: dict) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        worker, npz = Path(tmp) / "worker.py", Path(tmp) / "data.npz"
        worker.write_text(WORKER)
        np.savez(npz, **arrays)
        done = subprocess.run([str(python), str(worker), str(npz), json.dumps(task)], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{task['kind']} worker failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def load(name: str):
    if name == "diabetes":
        from sklearn.datasets import load_diabetes

        d = load_diabetes()
        return d.data.astype(float), d.target.astype(float)
    import statsmodels.api as sm

    ds = getattr(sm.datasets, name).load_pandas()
    return ds.exog.to_numpy(float), ds.endog.to_numpy(float)


def split(X, y, seed=0):
    idx = np.random.default_rng(seed).permutation(len(X))
    k = int(0.8 * len(X))
    return X[idx[:k]], y[idx[:k]], X[idx[k:]], y[idx[k:]]


def ols_mse(X_train, y_train, X_test, y_test) -> float:
    from sklearn.linear_model import LinearRegression

    model = LinearRegression().fit(X_train, y_train)
    return float(np.mean((model.predict(X_test) - y_test) ** 2))


def geodp_mses(X_train, y_train, X_test, y_test, bounds_X, bounds_y, epsilon, releases):
    mses, acceptance = [], []
    for r in range(releases):
        model = PrivateLinearRegression(epsilon=epsilon, bounds_X=bounds_X, bounds_y=bounds_y, random_state=1000 + r)
        model.fit(X_train, y_train)
        mses.append(float(np.mean((model.predict(X_test) - y_test) ** 2)))
        acceptance.append(model.curator_diagnostics_.sampler_acceptance)
    return mses, float(np.median(acceptance))


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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--releases", type=int, default=50)
    parser.add_argument("--datasets", default="randhie,fair,diabetes")
    parser.add_argument("--no-opacus", action="store_true")
    parser.add_argument("--no-diffprivlib", action="store_true")
    parser.add_argument("--opacus-epochs", type=int, default=10)
    args = parser.parse_args()
    python, has_opacus = (None, False) if args.no_diffprivlib else ensure_venv(not args.no_opacus)
    print(f"geodp domain factor {DOMAIN_FACTOR}; {args.releases} releases per cell; median test MSE (ratio to OLS)")
    header = (
        f"{'dataset':9} | {'eps':>4} | {'OLS':>9} | {'geodp':>17} | {'diffprivlib':>21} | "
        f"{'opacus (δ=1e-5)':>17} | geodp acc."
    )
    print(header)
    print("-" * len(header))
    results = {}
    for name in args.datasets.split(","):
        X, y = load(name)
        bounds_X = (X.min(axis=0), X.max(axis=0))
        bounds_y = (float(y.min()), float(np.quantile(y, 0.995)))
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
        dpl = (
            run_worker(python, arrays, dict(kind="diffprivlib", epsilons=EPSILONS, releases=args.releases))
            if python
            else {}
        )
        opa = (
            run_worker(
                python,
                arrays,
                dict(
                    kind="opacus",
                    epsilons=EPSILONS,
                    releases=args.releases,
                    delta=OPACUS_DELTA,
                    epochs=args.opacus_epochs,
                    batch=256,
                    lr=0.5,
                    clip=1.0,
                ),
            )
            if has_opacus
            else {}
        )
        for eps in EPSILONS:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                mses, acc = geodp_mses(X_train, y_train, X_test, y_test, bounds_X, bounds_y, eps, args.releases)
            cells = [float(np.median(mses))]
            cells.append(float(np.median(dpl[str(eps)])) if str(eps) in dpl else None)
            cells.append(float(np.median(opa[str(eps)])) if str(eps) in opa else None)
            results[(name, eps)] = (base, *cells)
            fmt = [f"{c / base:6.3f} ({c:9.4g})" if c is not None else f"{'-':>17}" for c in cells]
            print(
                f"{name:9} | {eps:4} | {base:9.4g} | {fmt[0]:>17} | {fmt[1]:>21} | {fmt[2]:>17} | {acc:.2g}", flush=True
            )
    print()
    timing(python)
    print("\ntargets (the two large sets):")
    for name in ("randhie", "fair"):
        if (name, 0.5) not in results:
            continue
        below = all(results[(name, e)][2] is None or results[(name, e)][1] < results[(name, e)][2] for e in EPSILONS)
        r05 = results[(name, 0.5)][1] / results[(name, 0.5)][0]
        r5 = results[(name, 5.0)][1] / results[(name, 5.0)][0]
        print(
            f"  {name}: below diffprivlib at every ε: {below}; ε = 0.5: {r05:.3f}× OLS (target ≤ 1.5); ε = 5: "
            f"{r5:.3f}× OLS (target ≤ 1.05)"
        )


if __name__ == "__main__":
    main()
