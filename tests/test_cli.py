import io

import numpy as np
import pytest

from geodp.cli import DEMO_CLASSES, DEMO_EPSILONS, MECHANISMS, main, run_demo


def test_demo_table_report_and_plot(tmp_path):
    pytest.importorskip("matplotlib")
    out = io.StringIO()
    rows = run_demo(tmp_path, repeats=3, seed=1, out=out)
    text = out.getvalue()
    assert len(rows) == len(DEMO_CLASSES) * len(DEMO_EPSILONS) * len(MECHANISMS)
    assert (tmp_path / "error_vs_epsilon.png").stat().st_size > 10_000
    assert "privacy report" in text and "epsilon = 1.0, delta = 1e-06" in text
    # errors fall with epsilon for each mechanism, and track the closed form within a factor 2
    for mech in MECHANISMS:
        errs = [np.mean([r["error"] for r in rows if r["mechanism"] == mech and r["epsilon"] == e]) for e in DEMO_EPSILONS]
        assert errs[0] > errs[-1] * 5
        for r in rows:
            assert 0.5 < r["error"] / r["expected"] < 2.0


def test_main_demo_without_plot(capsys, tmp_path):
    assert main(["demo", "--repeats", "1", "--no-plot", "--output-dir", str(tmp_path)]) == 0
    assert "done in" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["demo", "--repeats", "0"])


def test_shapes_command_writes_table_and_plot(capsys, tmp_path):
    pytest.importorskip("geomstats")
    pytest.importorskip("matplotlib")
    assert main(["shapes", "--releases", "20", "--output-dir", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "kng" in text and "pointwise" in text and "records clipped" in text
    assert (tmp_path / "cell_shapes.png").stat().st_size > 10_000


def test_cell_shape_errors_fall_with_epsilon_and_kng_beats_the_pointwise_baseline():
    pytest.importorskip("geomstats")
    from geodp.experiments import run_cell_shapes

    rows = run_cell_shapes(epsilons=(0.5, 2.0), releases=60, out=io.StringIO())
    err = {(r["mechanism"], r["epsilon"]): r["error"] for r in rows}
    for mech in ("kng", "laplace", "pointwise"):
        assert err[(mech, 0.5)] > 2.5 * err[(mech, 2.0)]  # error ∝ 1/ε: factor 4 expected
    assert err[("kng", 1 / 2)] < err[("pointwise", 0.5)] and err[("laplace", 2.0)] < err[("pointwise", 2.0)]
