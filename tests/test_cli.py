import io
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import geodp
from geodp.cli import DEMO_CLASSES, DEMO_EPSILONS, MECHANISMS, main, run_demo
from geodp.errors import AssumptionError, InvalidParameterError, NumericalWarning


def test_demo_table_report_and_plot(tmp_path):
    pytest.importorskip("matplotlib")
    out = io.StringIO()
    with warnings.catch_warnings():
        # the demo reads the exact coordinates: it does not warn about releases beyond float64
        warnings.simplefilter("error", NumericalWarning)
        rows = run_demo(tmp_path, repeats=3, seed=1, out=out)
    text = out.getvalue()
    assert len(rows) == len(DEMO_CLASSES) * len(DEMO_EPSILONS) * len(MECHANISMS)
    assert (tmp_path / "error_vs_epsilon.png").stat().st_size > 10_000
    assert "privacy report" in text and "epsilon = 1.0, delta = 1e-06" in text
    # errors fall with epsilon for each mechanism, and track the closed form within a factor 2
    for mech in MECHANISMS:
        errs = [
            np.mean([r["error"] for r in rows if r["mechanism"] == mech and r["epsilon"] == e]) for e in DEMO_EPSILONS
        ]
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


# --- issue 8, item 11: a robust ``geodp`` command ----------------------------------------------


def _run(*args, **kwargs):
    """Run the installed entry point's code in a fresh interpreter (``python -m geodp.cli``)."""
    return subprocess.run(
        [sys.executable, "-m", "geodp.cli", *args], capture_output=True, text=True, timeout=120, **kwargs
    )


@pytest.mark.parametrize(
    "argv, option",
    [
        (["shapes", "--releases", "0"], "--releases"),
        (["shapes", "--releases", "1"], "--releases"),
        (["shapes", "--releases", "ten"], "--releases"),
        (["shapes", "--radius", "0"], "--radius"),
        (["shapes", "--radius", "-0.1"], "--radius"),
        (["shapes", "--radius", "nan"], "--radius"),
        (["shapes", "--radius", "1.0"], "--radius"),
        (["shapes", "--epsilons", "1", "0"], "--epsilons"),
        (["shapes", "--epsilons", "inf"], "--epsilons"),
        (["shapes", "--seed", "-1"], "--seed"),
        (["demo", "--repeats", "0"], "--repeats"),
        (["demo", "--repeats", "1.5"], "--repeats"),
        (["demo", "--seed", "-1"], "--seed"),
    ],
)
def test_bad_numeric_options_are_usage_errors_without_traceback(argv, option, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"error: argument {option}:" in err and "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith(f"geodp {argv[0]}: error:")


def test_shapes_radius_beyond_r_star_is_refused_before_any_work(capsys, monkeypatch):
    import geodp.experiments.cell_shapes as study

    def no_data(*args, **kwargs):
        raise AssertionError("data were loaded before the radius was checked")

    monkeypatch.setattr(study, "load_cell_shapes", no_data)
    with pytest.raises(SystemExit) as exc:
        main(["shapes", "--radius", "1.0", "--no-plot"])
    assert exc.value.code == 2
    assert "r* = π/8 ≈ 0.3927" in capsys.readouterr().err
    # the library function checks too, before loading anything
    with pytest.raises(AssumptionError, match="r\\*"):
        study.run_cell_shapes(radius=1.0, out=io.StringIO())
    for bad in (dict(releases=0), dict(releases=1), dict(epsilons=(1.0, 0.0)), dict(epsilons=()), dict(n_landmarks=2)):
        with pytest.raises(InvalidParameterError):
            study.run_cell_shapes(out=io.StringIO(), **bad)


def test_geodp_errors_are_one_line_and_bugs_keep_their_traceback(capsys, monkeypatch, tmp_path):
    import geodp.cli as cli

    def user_error(*args, **kwargs):
        raise InvalidParameterError("radius must be > 0, got -1.")

    monkeypatch.setattr(cli, "run_demo", user_error)
    assert main(["demo", "--no-plot"]) == 2
    assert capsys.readouterr().err == "geodp: error: radius must be > 0, got -1.\n"

    def bug(*args, **kwargs):
        raise ZeroDivisionError("a genuine bug")

    monkeypatch.setattr(cli, "run_demo", bug)
    with pytest.raises(ZeroDivisionError):
        main(["demo", "--no-plot"])


def test_run_demo_validates_its_arguments():
    with pytest.raises(InvalidParameterError, match="repeats"):
        run_demo(repeats=0, plot=False, out=io.StringIO())
    with pytest.raises(InvalidParameterError, match="seed"):
        run_demo(repeats=1, seed=-1, plot=False, out=io.StringIO())


def test_missing_geomstats_names_the_checkout_install(capsys, monkeypatch, tmp_path):
    for name in [m for m in sys.modules if m == "geomstats" or m.startswith("geomstats.")] + ["geomstats"]:
        monkeypatch.setitem(sys.modules, name, None)  # makes ``import geomstats...`` fail
    assert main(["shapes", "--releases", "2", "--output-dir", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("geodp: error: the shapes command needs the optional dependency geomstats")
    assert (
        'pip install -e ".[geomstats]"' in err and "repository root" in err and 'pip install "geodp[geomstats]"' in err
    )
    assert not (tmp_path / "out").exists()  # failed before creating anything
    from geodp.datasets import load_cell_shapes

    with pytest.raises(ImportError, match=r'pip install -e "\.\[geomstats\]"'):
        load_cell_shapes(8)


def test_output_dir_is_checked_and_created_before_any_work(capsys, monkeypatch, tmp_path):
    import geodp.cli as cli

    a_file = tmp_path / "a-file"
    a_file.write_text("")
    for bad, reason in ((a_file, "is not a folder"), (a_file / "sub", "cannot be created")):
        assert main(["demo", "--repeats", "1", "--output-dir", str(bad)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"geodp: error: --output-dir {str(bad)!r}") and reason in err
        assert err.count("\n") == 1
    seen = {}
    monkeypatch.setattr(cli, "run_demo", lambda output_dir, **kw: seen.setdefault("exists", Path(output_dir).is_dir()))
    assert main(["demo", "--output-dir", str(tmp_path / "new" / "folder")]) == 0
    assert seen["exists"]  # created up front, before the releases
    # --no-plot needs no output folder
    assert main(["demo", "--no-plot", "--output-dir", str(a_file)]) == 0


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root can write anywhere")
def test_unwritable_output_dir_fails_fast(capsys, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        assert main(["demo", "--repeats", "1", "--output-dir", str(locked)]) == 2
        assert "is not writable" in capsys.readouterr().err
    finally:
        locked.chmod(0o700)


def test_version_and_help(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # no wrapping inside the words we look for
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out == f"geodp {geodp.__version__}\n"
    for argv, needles in (
        (["--help"], ["demo", "shapes", "--version", "examples"]),
        (["demo", "--help"], ["digits", "default: 20", "default: geodp-demo", "default: 0"]),
        (
            ["shapes", "--help"],
            [
                "K-norm gradient",
                "default: 100",
                "default: 0.25",
                "r* = π/8",
                "default: geodp-shapes",
                'pip install -e ".[geomstats]"',
            ],
        ),
    ):
        with pytest.raises(SystemExit):
            main(argv)
        text = " ".join(capsys.readouterr().out.split())  # the help is wrapped to the terminal width
        for needle in needles:
            assert needle in text, (argv, needle)


def test_entry_point_errors_have_no_traceback(tmp_path):
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    for args, needle in (
        (["shapes", "--radius", "1.0"], "argument --radius: must be < r*"),
        (["demo", "--output-dir", str(a_file)], "is not a folder"),
    ):
        proc = _run(*args)
        assert proc.returncode == 2 and needle in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
        assert proc.stdout == ""
    proc = _run("--version")
    assert proc.returncode == 0 and proc.stdout == f"geodp {geodp.__version__}\n"


def test_entry_point_stops_quietly_when_the_reader_closes_the_pipe(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "geodp.cli", "demo", "--repeats", "1", "--no-plot"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
    )
    proc.stdout.readline()  # like ``geodp demo | head -1``
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=120)
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
