"""The PrivateMDM study on real covariance matrices and its ``geodp mdm`` command."""

import csv
import sys

import numpy as np
import pytest

pytest.importorskip("geomstats")
pyriemann = pytest.importorskip("pyriemann")

from geodp.cli import main  # noqa: E402
from geodp.datasets import load_connectomes, load_emg_covariances  # noqa: E402
from geodp.errors import InvalidParameterError  # noqa: E402
from geodp.experiments.mdm_study import load_study_data, run_mdm_study  # noqa: E402
from geodp.manifolds import SPD  # noqa: E402


def test_emg_split_is_by_time_within_each_recording_and_sign():
    emg, data = load_emg_covariances(), load_study_data("emg")
    # Independent of the study's cycle ranking: the runs of each (recording, sign), ordered by
    # their first row in the file; the test windows must come from the last two.
    test_starts = set()
    for exp in np.unique(emg.experiments):
        for sign in np.unique(emg.labels):
            mask = (emg.experiments == exp) & (emg.labels == sign)
            runs = sorted(np.unique(emg.runs[mask]), key=lambda r: emg.starts[emg.runs == r].min())
            assert len(runs) == 6
            test_starts.update(emg.starts[np.isin(emg.runs, runs[4:])].tolist())
    assert len(data.y_test) == len(test_starts) and len(data.y_train) == len(emg.labels) - len(test_starts)
    # the records are the windows scaled to unit determinant
    det = np.linalg.det(np.concatenate([data.X_train, data.X_test]))
    np.testing.assert_allclose(det, 1.0, rtol=1e-9)
    assert np.all(SPD(8).belongs(data.X_test))


def test_connectome_split_is_stratified_and_radius_is_the_provable_one():
    data, conn = load_study_data("connectomes"), load_connectomes(shrinkage=0.5)
    assert (len(data.y_train), len(data.y_test)) == (57, 29)
    assert abs(np.mean(data.y_test) - np.mean(conn.labels)) < 0.05
    # every record lies inside the public ball (nothing is clipped by the provable radius)
    assert np.max(SPD(28).dist(np.eye(28), conn.matrices)) < data.radius


def test_private_accuracy_reaches_pyriemann_at_large_epsilon():
    rows = run_mdm_study(
        ["connectomes"],
        epsilons=[1e9],
        repeats=1,
        metrics=["log-euclidean"],
        mechanisms=["laplace", "tangent-gaussian"],
        progress=False,
        out=open("/dev/null", "w"),
    )
    data = load_study_data("connectomes")
    oracle = (
        pyriemann.classification.MDM(metric="logeuclid").fit(data.X_train, data.y_train).score(data.X_test, data.y_test)
    )
    for row in rows:
        assert row["accuracy"] == pytest.approx(oracle) and row["non_private"] == pytest.approx(oracle)
        assert row["exact"]


def test_small_epsilon_is_at_chance_on_connectomes():
    rows = run_mdm_study(
        ["connectomes"],
        epsilons=[0.1],
        repeats=2,
        metrics=["log-euclidean"],
        mechanisms=["laplace"],
        seed=1,
        progress=False,
        out=open("/dev/null", "w"),
    )
    # at ε = 0.1 the noise (scale ≈ 5 in 406 dimensions) swamps the class means
    assert rows[0]["accuracy"] < rows[0]["non_private"]
    assert rows[0]["repeats"] == 2 and np.isfinite(rows[0]["accuracy_se"])


def test_study_refuses_unknown_settings_before_loading():
    with pytest.raises(InvalidParameterError, match="dataset"):
        run_mdm_study(["eeg"], progress=False)
    with pytest.raises(InvalidParameterError, match="mechanism"):
        run_mdm_study(["emg"], mechanisms=["gauss"], progress=False)
    with pytest.raises(InvalidParameterError, match="repeats"):
        run_mdm_study(["emg"], repeats=0, progress=False)


def test_mdm_command_writes_table_and_plot(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    code = main(
        [
            "mdm",
            "--dataset",
            "connectomes",
            "--metrics",
            "log-euclidean",
            "--epsilons",
            "1e4",
            "--repeats",
            "1",
            "--output-dir",
            str(tmp_path),
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "non-private" in printed and "connectomes" in printed
    with open(tmp_path / "mdm_study.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert {r["mechanism"] for r in rows} == {"laplace", "kng", "tangent-gaussian"}
    assert (tmp_path / "mdm_study.png").stat().st_size > 10_000


def test_mdm_command_without_geomstats_says_how_to_install(monkeypatch, capsys):
    for name in [m for m in sys.modules if m.startswith("geomstats")] + ["geomstats.datasets.utils"]:
        monkeypatch.setitem(sys.modules, name, None)
    assert main(["mdm", "--quick", "--no-plot"]) == 2
    err = capsys.readouterr().err
    assert "geomstats" in err and "pip install" in err and len(err.strip().splitlines()) == 1


def test_every_mechanism_the_study_runs_has_a_plot_style():
    """`python -m geodp.experiments.mdm_docs` failed on a mechanism added without a style."""
    from geodp.experiments import mdm_study

    runs = {(m, k) for m in ("affine", "log-euclidean") for k in ("laplace", "kng")}
    runs |= {("log-euclidean", "tangent-gaussian"), ("affine", "wrapped-gaussian")}
    assert set(mdm_study.MECHANISMS) == {k for _, k in runs}
    assert runs <= set(mdm_study._STYLE)
