"""diffprivlib and Opacus, run for real in their own virtualenv, and the data of the linear
regression comparisons (``benchmarks/compare_linear_regression.py`` and ``geodp reproduce
k25-table1``).

diffprivlib needs scikit-learn < 1.9 and Opacus a torch build, neither of which this project
installs: :func:`ensure_venv` creates a virtualenv on first use (pip, so it needs the network or a
local wheel cache), and :func:`start_worker` runs them there in one subprocess for a list of jobs
(:func:`run_worker` for one), on arrays saved to a temporary file. Data: scikit-learn's diabetes
data, and statsmodels' RAND health-insurance (``randhie``) and Fair affairs (``fair``) data (the
``compare`` extra). :func:`public_bounds` gives the bounds every method shares.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

__all__ = [
    "CACHE",
    "OPACUS_DELTA",
    "VENV",
    "ensure_venv",
    "load",
    "ols_mse",
    "opacus_task",
    "public_bounds",
    "run_worker",
    "split",
    "start_worker",
    "Worker",
]

CACHE = Path(os.environ.get("GEODP_BENCH_CACHE", Path.home() / ".cache" / "geodp-bench"))
VENV = CACHE / "venv"
OPACUS_DELTA = 1e-5

WORKER = r"""
import json, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")


def run(data, task):
    out = {}
    if task["kind"] == "diffprivlib":
        from diffprivlib.models import LinearRegression
        bX = (data["x_lo"], data["x_hi"]); by = (float(data["y_lo"]), float(data["y_hi"]))
        for eps in task["epsilons"]:
            mses = []
            for r in range(task["releases"]):
                m = LinearRegression(epsilon=eps, bounds_X=bX, bounds_y=by, random_state=task.get("seed", 1000) + r)
                m.fit(data["X_train"], data["y_train"])
                mses.append(float(np.mean((m.predict(data["X_test"]) - data["y_test"]) ** 2)))
            out[str(eps)] = mses
    elif task["kind"] == "diffprivlib-time":
        from diffprivlib.models import LinearRegression
        bX = (data["x_lo"], data["x_hi"]); by = (float(data["y_lo"]), float(data["y_hi"]))
        times = []
        for r in range(task["repeats"]):
            t = time.perf_counter()
            model = LinearRegression(epsilon=1.0, bounds_X=bX, bounds_y=by, random_state=r)
            model.fit(data["X_train"], data["y_train"])
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
                torch.manual_seed(task.get("seed", 1000) + r)
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
    return out


npz = np.load(sys.argv[1])
with open(sys.argv[2]) as f:
    tasks = json.load(f)
answers = []
for i, task in enumerate(tasks):  # one process for every job: torch and diffprivlib are imported once
    prefix = f"{i}__"
    answers.append(run({k[len(prefix):]: npz[k] for k in npz.files if k.startswith(prefix)}, task))
print(json.dumps(answers))
"""


def _imports(python: Path, modules: str) -> bool:
    """Whether ``python`` can find ``modules`` (comma-separated), without importing them: importing
    torch alone takes tens of seconds, and the worker imports it anyway."""
    names = [m.strip() for m in modules.split(",")]
    check = "import importlib.util as u, sys; sys.exit(any(u.find_spec(m) is None for m in sys.argv[1:]))"
    return subprocess.run([str(python), "-c", check, *names], capture_output=True).returncode == 0


def _pip_install(python: Path, packages: list, log: Path) -> bool:
    with open(log, "w") as f:
        done = subprocess.run([str(python), "-m", "pip", "install", *packages], stdout=f, stderr=subprocess.STDOUT)
    return done.returncode == 0


def ensure_venv(opacus: bool) -> tuple[Path | None, bool]:
    """The cached virtualenv with diffprivlib (and Opacus if it installs): ``(python, has_opacus)``,
    ``python`` None when diffprivlib could not be installed (no network, no wheel). Creates it
    on first use under ``$GEODP_BENCH_CACHE`` (default ``~/.cache/geodp-bench``) with pip (and
    tries again on the next call if pip failed), and says on stdout what it installs and what it
    had to skip.

    Examples
    --------
    >>> VENV.name
    'venv'
    """
    python = VENV / "bin" / "python"
    if not python.exists():
        print(f"creating a virtualenv for diffprivlib (scikit-learn < 1.9) in {VENV} (first use only) ...", flush=True)
        CACHE.mkdir(parents=True, exist_ok=True)
        if subprocess.run([sys.executable, "-m", "venv", str(VENV)]).returncode != 0:
            print("  could not create the virtualenv: diffprivlib and Opacus are skipped")
            return None, False
    if not _imports(python, "diffprivlib, statsmodels"):
        print("installing scikit-learn<1.9, diffprivlib and statsmodels in that virtualenv ...", flush=True)
        log = CACHE / "pip.log"
        if not _pip_install(python, ["scikit-learn<1.9", "diffprivlib", "statsmodels"], log):
            print(f"  pip could not install diffprivlib (no network? see {log}): diffprivlib and Opacus are skipped")
            return None, False
    has_opacus = _imports(python, "opacus, torch")
    if opacus and not has_opacus:
        print("installing torch==2.13.0 and opacus in that virtualenv (first use only) ...", flush=True)
        log = CACHE / "pip-opacus.log"
        has_opacus = _pip_install(python, ["torch==2.13.0", "opacus"], log)
        if not has_opacus:
            print(f"  pip could not install torch==2.13.0 + opacus (no network? see {log}): Opacus is skipped")
    print(f"diffprivlib{' and Opacus' if has_opacus and opacus else ''} run in {VENV} through a subprocess", flush=True)
    return python, has_opacus and opacus


class Worker:
    """One worker process running a list of jobs ``(arrays, task)`` in turn (started by
    :func:`start_worker`, so that it runs while the caller does other work): :meth:`result` waits
    for it and gives the answer of each job; leaving a ``with`` block before that stops it.

    Examples
    --------
    >>> Worker.result.__doc__.split(";")[0]
    'The JSON answer of each job, in order'
    """

    def __init__(self, python: Path, jobs: list):
        self.kinds = [task["kind"] for _, task in jobs]
        self._tmp = tempfile.TemporaryDirectory()
        tmp = Path(self._tmp.name)
        worker, npz, tasks = tmp / "worker.py", tmp / "data.npz", tmp / "tasks.json"
        worker.write_text(WORKER)
        np.savez(npz, **{f"{i}__{k}": v for i, (arrays, _) in enumerate(jobs) for k, v in arrays.items()})
        tasks.write_text(json.dumps([task for _, task in jobs]))
        # stdout and stderr go to files: a full pipe would stall the worker until result() reads it
        self._out, self._err = open(tmp / "stdout", "w+"), open(tmp / "stderr", "w+")
        self._proc = subprocess.Popen(
            [str(python), str(worker), str(npz), str(tasks)], stdout=self._out, stderr=self._err, text=True
        )

    def result(self) -> list:
        """The JSON answer of each job, in order; raises RuntimeError with the worker's stderr if it failed."""
        try:
            code = self._proc.wait()
            self._out.seek(0)
            self._err.seek(0)
            out, err = self._out.read(), self._err.read()
        finally:
            self.close()
        if code != 0:
            raise RuntimeError(f"{'/'.join(dict.fromkeys(self.kinds))} worker failed:\n{err[-2000:]}")
        return json.loads(out.strip().splitlines()[-1])

    def close(self):
        """Stop the worker if it still runs and remove its files."""
        if self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        self._out.close()
        self._err.close()
        self._tmp.cleanup()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def start_worker(python: Path, jobs: list) -> Worker:
    """Start one worker process, with the interpreter ``python``, on the jobs ``(arrays, task)``
    (``kind``: ``diffprivlib``, ``diffprivlib-time`` or ``opacus``; ``arrays`` saved as .npz) and
    return at once: :meth:`Worker.result` gives their answers. One process for many jobs imports
    torch (tens of seconds) and diffprivlib once.

    Examples
    --------
    >>> import json
    >>> sorted(json.loads('[{"2.0": [1.0]}]')[0])  # per job, str(ε) to the MSE of each release
    ['2.0']
    """
    return Worker(python, jobs)


def run_worker(python: Path, arrays: dict, task: dict) -> dict:
    """Run one task of the worker (``kind``: ``diffprivlib``, ``diffprivlib-time`` or ``opacus``) with
    the interpreter ``python`` on ``arrays`` (saved as .npz); its JSON answer (raises RuntimeError
    with the worker's stderr if it failed).

    Examples
    --------
    >>> import json
    >>> sorted(json.loads('{"2.0": [1.0]}'))  # the answer maps str(ε) to the MSE of each release
    ['2.0']
    """
    with start_worker(python, [(arrays, task)]) as worker:
        return worker.result()[0]


def load(name: str):
    """``(X, y)`` of one dataset: ``diabetes`` (scikit-learn), ``randhie`` or ``fair`` (statsmodels).

    Examples
    --------
    >>> X, y = load("diabetes")
    >>> X.shape
    (442, 10)
    """
    if name == "diabetes":
        from sklearn.datasets import load_diabetes

        d = load_diabetes()
        return d.data.astype(float), d.target.astype(float)
    import statsmodels.api as sm

    ds = getattr(sm.datasets, name).load_pandas()
    return ds.exog.to_numpy(float), ds.endog.to_numpy(float)


def split(X, y, seed=0):
    """The 80/20 split of the protocol: ``(X_train, y_train, X_test, y_test)``.

    Examples
    --------
    >>> [a.shape for a in split(np.zeros((10, 2)), np.zeros(10))]
    [(8, 2), (8,), (2, 2), (2,)]
    """
    idx = np.random.default_rng(seed).permutation(len(X))
    k = int(0.8 * len(X))
    return X[idx[:k]], y[idx[:k]], X[idx[k:]], y[idx[k:]]


def ols_mse(X_train, y_train, X_test, y_test) -> float:
    """Test MSE of scikit-learn's OLS fitted on the (unclipped) training data.

    Examples
    --------
    >>> X = np.arange(10.0)[:, None]
    >>> ols_mse(X, 2 * X[:, 0], X, 2 * X[:, 0]) < 1e-20
    True
    """
    from sklearn.linear_model import LinearRegression

    model = LinearRegression().fit(X_train, y_train)
    return float(np.mean((model.predict(X_test) - y_test) ** 2))


def public_bounds(X, y):
    """The bounds every method shares: each covariate's min and max and, for the response, its
    min and 99.5th percentile, all over the **full** data (a stand-in for a codebook: they are not
    computed from the training split alone, and every method gets the same).

    Examples
    --------
    >>> bX, by = public_bounds(np.array([[0.0], [2.0]]), np.array([1.0, 3.0]))
    >>> bX[0].tolist(), bX[1].tolist(), by[0]
    ([0.0], [2.0], 1.0)
    """
    return (X.min(axis=0), X.max(axis=0)), (float(y.min()), float(np.quantile(y, 0.995)))


def opacus_task(epsilons, releases: int, *, epochs: int = 10, seed: int = 1000) -> dict:
    """The worker task of the fixed DP-SGD setting: a linear layer on inputs mapped to [−½, ½] by
    the public bounds, lr 0.5, batch 256 (Poisson), clipping norm 1, RDP accounting, δ = 1e-5.

    Examples
    --------
    >>> opacus_task([2.0], 5)["delta"]
    1e-05
    """
    return dict(
        kind="opacus",
        epsilons=list(epsilons),
        releases=releases,
        delta=OPACUS_DELTA,
        epochs=epochs,
        batch=256,
        lr=0.5,
        clip=1.0,
        seed=seed,
    )
