"""``geodp reproduce k25-table1``: the table assembly with diffprivlib and Opacus mocked at the
subprocess boundary (CI never installs torch), and the run that says clearly what it skipped."""

import numpy as np
import pytest

from geodp.experiments import external_baselines
from geodp.experiments.k25 import table1
from geodp.experiments.reproduce import get_reproduction

pytest.importorskip("matplotlib")


def _small_data(name):
    rng = np.random.default_rng(len(name))
    X = rng.uniform(0, 1, size=(200, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + rng.normal(scale=0.1, size=200)
    return X, y


@pytest.fixture
def offline(monkeypatch):
    """The virtualenv could not be installed; the datasets are small synthetic stand-ins."""
    monkeypatch.setattr(external_baselines, "ensure_venv", lambda opacus: (None, False))
    monkeypatch.setattr(external_baselines, "load", _small_data)
    monkeypatch.setattr(external_baselines, "start_worker", lambda *a: pytest.fail("no worker without a venv"))


def test_without_the_virtualenv_the_table_says_not_run_and_runs_the_rest(offline, capsys):
    result = table1.run_table1(3, np.random.default_rng(0), lambda it, **kw: it)
    said = capsys.readouterr().out
    assert "IBM diffprivlib: not run" in said and "Opacus" in said
    rows = {row.setting: row for row in result.rows}
    assert rows["Table 1, IBM diffprivlib (ε = 2)"].ours.startswith("not run: its virtualenv could not be installed")
    assert rows["Table 1, Opacus DP-SGD (δ = 1e-5) (ε = 2)"].ours.startswith("not run")
    assert rows["Table 1, IBM diffprivlib (ε = 2)"].note == "only K25's published value"
    kng = rows["Table 1, geodp KNG (DPGR, Euclidean) (ε = 2)"]
    assert kng.ours.count("×") == 3 and kng.published == "0.954 (1.093× OLS)"
    assert rows["Table 1, geodp AdaSSP (δ = 1e-6) (ε = 2)"].published == "— (not in K25)"
    methods = {d["method"] for d in result.data}
    assert methods == {table1.OLS, table1.KNG, table1.ADASSP}
    assert len([d for d in result.data if d["method"] == table1.ADASSP]) == 3 * 3  # 3 datasets × 3 releases
    labels = [t.get_text() for t in result.figure.axes[0].texts]
    assert labels.count("not run") == 2 * 3  # diffprivlib and Opacus on each of the three datasets


class _FakeWorker:
    """What ``start_worker`` returns: an answer per job, 4 per release for diffprivlib, 2 for Opacus."""

    def __init__(self, jobs):
        self.jobs, self.closed = jobs, False

    def result(self):
        value = 4.0 if self.jobs[0][1]["kind"] == "diffprivlib" else 2.0
        return [{str(task["epsilons"][0]): [value] * task["releases"]} for _, task in self.jobs]

    def close(self):
        self.closed = True


def test_worker_answers_become_their_rows(monkeypatch):
    monkeypatch.setattr(external_baselines, "ensure_venv", lambda opacus: ("python", True))
    monkeypatch.setattr(external_baselines, "load", _small_data)
    workers = []

    def start(python, jobs):
        for arrays, _ in jobs:
            assert set(arrays) >= {"X_train", "y_train", "X_test", "y_test", "x_lo", "x_hi", "y_lo", "y_hi"}
        workers.append(_FakeWorker(jobs))
        return workers[-1]

    monkeypatch.setattr(external_baselines, "start_worker", start)
    result = table1.run_table1(2, np.random.default_rng(0), lambda it, **kw: it)
    # one worker per method, each with a job per dataset (torch is imported once, not per dataset)
    assert [[t["kind"] for _, t in w.jobs] for w in workers] == [["diffprivlib"] * 3, ["opacus"] * 3]
    tasks = [t for w in workers for _, t in w.jobs]
    assert all(t["epsilons"] == [2.0] and t["releases"] == 2 for t in tasks)
    assert workers[1].jobs[0][1]["delta"] == 1e-5
    assert [t["seed"] for _, t in workers[0].jobs] == [t["seed"] for _, t in workers[1].jobs]
    assert len({t["seed"] for _, t in workers[0].jobs}) == 3  # a seed per dataset
    assert all(w.closed for w in workers)
    ols = {d["dataset"]: d["mse"] for d in result.data if d["method"] == table1.OLS}
    rows = {row.setting: row for row in result.rows}
    want = "; ".join(f"{table1.LABELS[n]} {4.0 / ols[n]:.3f}× (4)" for n in table1.DATASETS)
    assert rows["Table 1, IBM diffprivlib (ε = 2)"].ours == want
    assert [(d["dataset"], d["method"]) for d in result.data][:8] == [("randhie", table1.OLS)] + [
        ("randhie", m) for m in (table1.KNG, table1.ADASSP) * 2 + (table1.DIFFPRIVLIB,) * 2 + (table1.OPACUS,)
    ]


def test_a_failing_worker_stops_the_other(monkeypatch):
    monkeypatch.setattr(external_baselines, "ensure_venv", lambda opacus: ("python", True))
    monkeypatch.setattr(external_baselines, "load", _small_data)
    workers = []

    class Failing(_FakeWorker):
        def result(self):
            raise RuntimeError("diffprivlib worker failed")

    def start(python, jobs):
        workers.append((Failing if not workers else _FakeWorker)(jobs))
        return workers[-1]

    monkeypatch.setattr(external_baselines, "start_worker", start)
    with pytest.raises(RuntimeError, match="worker failed"):
        table1.run_table1(1, np.random.default_rng(0), lambda it, **kw: it)
    assert len(workers) == 2 and workers[1].closed


def test_table_rows_use_medians_and_k25s_ratios():
    data = [dict(dataset="randhie", method=table1.OLS, repetition=0, mse=10.0)]
    data += [dict(dataset="randhie", method=table1.ADASSP, repetition=r, mse=v) for r, v in enumerate([11, 12, 100])]
    rows = {row.setting: row for row in table1.table1_rows(data, {})}
    assert rows["Table 1, geodp AdaSSP (δ = 1e-6) (ε = 2)"].ours == "RAND 1.200× (12)"  # the median, not the mean
    assert rows["Table 1, non-DP OLS, test MSE"].ours == "RAND 10"
    assert rows["Table 1, IBM diffprivlib (ε = 2)"].published == "7.856 (8.999× OLS)"
    assert rows["Table 1, geodp KNG (DPGR, Euclidean) (ε = 2)"].ours == "not run"


def test_the_registry_runs_the_new_table():
    item = get_reproduction("k25-table1")
    assert item.run is table1.run_table1 and item.status == "stand-in data"


def test_one_worker_process_runs_every_job_on_its_own_arrays(tmp_path):
    """The real subprocess, with this interpreter: a job of a kind the worker does not know answers {}
    (the npz and the task list go through), and a failing job raises with the worker's stderr."""
    import sys

    jobs = [(dict(X_train=np.zeros((2, 1))), dict(kind="none")), (dict(y_train=np.ones(3)), dict(kind="none"))]
    assert external_baselines.start_worker(sys.executable, jobs).result() == [{}, {}]
    with pytest.raises(RuntimeError, match="diffprivlib worker failed"):
        external_baselines.run_worker(sys.executable, {}, dict(kind="diffprivlib", epsilons=[1.0], releases=1))
