"""``geodp audit``: JSON output, the plot, one-line errors."""

import json

import pytest

from geodp.cli import main

FAST = ["--samples", "2000", "--seed", "0"]


def test_epsilon_json_is_one_object_with_the_fields(capsys):
    assert (
        main(["audit", "epsilon", "--space", "sphere:2", "--center", "north", "--epsilon", "1", "--json", *FAST]) == 0
    )
    out = capsys.readouterr().out
    record = json.loads(out)  # exactly one JSON document on stdout
    assert out.count("\n") == 1
    assert {"epsilon_lower_bound", "exact_epsilon", "events", "mutant", "confidence", "seconds"} <= set(record)
    assert record["epsilon"] == 1.0 and record["exact_epsilon"] == pytest.approx(1.0)
    assert 0.0 <= record["epsilon_lower_bound"] <= 1.0 and record["violated"] is False


def test_epsilon_text_report_and_plot(tmp_path, capsys):
    plot = tmp_path / "loss.png"
    code = main(
        [
            "audit",
            "epsilon",
            "--space",
            "sphere:2",
            "--mechanism",
            "kng",
            "--epsilon",
            "1",
            "--mutant",
            "halve-scale",
            "--plot",
            str(plot),
            *FAST,
        ]
    )
    out = capsys.readouterr().out
    assert "MUTANT halve-scale" in out and "verdict" in out
    assert code == (1 if "EXCEEDS claimed" in out else 0)  # exit 1 exactly when the verdict is "violated"
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["audit", "epsilon", "--space", "sphre:2", "--epsilon", "1"], "unknown space"),
        (["audit", "epsilon", "--space", "sphere:2", "--epsilon", "1", "--radius", "2"], "r*"),
        (
            ["audit", "epsilon", "--space", "spd:3:log-euclidean", "--mechanism", "tangent-gaussian", "--epsilon", "1"],
            "delta",
        ),
        (["audit", "sensitivity", "--space", "kendall:2", "--radius", "0.1", "--n", "5"], "kendall"),
    ],
)
def test_bad_input_is_one_line_exit_2(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("geodp: error: ") and err.count("\n") == 1 and message in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["audit", "epsilon", "--space", "sphere:2", "--epsilon", "0"], "--epsilon"),
        (["audit", "epsilon", "--space", "sphere:2", "--epsilon", "1", "--radius", "-1"], "--radius"),
        (["audit", "epsilon", "--space", "sphere:2", "--epsilon", "1", "--samples", "10"], "--samples"),
        (["audit", "epsilon", "--space", "sphere:2", "--epsilon", "1", "--confidence", "0"], "(0, 1), got '0'"),
        (["audit", "epsilon", "--space", "sphere:2", "--epsilon", "1", "--confidence", "1"], "(0, 1), got '1'"),
        (["audit", "sensitivity", "--space", "sphere:2", "--radius", "0.5", "--n", "1"], "--n"),
    ],
)
def test_bad_option_values_are_one_line_exit_2(argv, needle, capsys):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    prog = "geodp " + " ".join(argv[:2])
    assert err.count("\n") == 1 and "usage:" not in err and needle in err
    assert err.startswith(f"{prog}: error: argument ") and err.endswith(f"; see {prog} --help\n")


@pytest.mark.parametrize(
    "argv",
    [
        ["audit", "epsilon", "--space", "sphere:2", "--epsilon", "1", "--n", "100000000000000000000000"],
        ["audit", "epsilon", "--space", "sphere:2", "--mechanism", "kng", "--epsilon", "1", "--n", "10000000"],
        ["audit", "sensitivity", "--space", "sphere:2", "--radius", "0.5", "--n", "1000000000"],
    ],
)
def test_huge_n_is_a_one_line_error_before_any_work(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("geodp: error: n must be at most ") and err.count("\n") == 1


@pytest.mark.parametrize("center", [[], ["--center", "north"]])
def test_tiny_kng_radius_is_a_one_line_error(center, capsys):
    argv = ["audit", "epsilon", "--space", "sphere:2", "--mechanism", "kng", "--epsilon", "1", "--radius", "1e-12"]
    assert main([*argv, *center]) == 2
    err = capsys.readouterr().err
    assert "float64" in err and "radius of at least" in err and "outside the public ball" not in err


def test_violated_verdict_exits_1_and_help_lists_the_exit_codes(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    # The halved-scale Laplace on S² (exact ε 2) is certified above 1 with these draws.
    argv = [
        "audit",
        "epsilon",
        "--space",
        "sphere:2",
        "--epsilon",
        "1",
        "--mutant",
        "halve-scale",
        "--json",
        "--samples",
        "20000",
        "--seed",
        "0",
    ]
    assert main(argv) == 1
    assert json.loads(capsys.readouterr().out)["violated"] is True
    with pytest.raises(SystemExit):
        main(["audit", "epsilon", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "exit codes: 0 consistent with the claim, 1 violated, 3 inconclusive" in text and "2 bad input" in text


def test_every_subcommand_answers_bad_options_in_one_line(capsys):
    for argv in (
        ["demo", "--repeats", "x"],
        ["release", "--bogus"],
        ["mdm", "--bogus"],
        ["reproduce", "--bogus"],
        ["shapes", "--bogus"],
        ["audit", "bogus"],
        ["bogus"],
    ):
        with pytest.raises(SystemExit) as stop:
            main(argv)
        err = capsys.readouterr().err
        assert stop.value.code == 2 and err.count("\n") == 1 and "usage:" not in err, argv
        assert err.startswith("geodp") and "--help\n" in err, argv
