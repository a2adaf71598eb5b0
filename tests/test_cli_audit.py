"""``geodp audit``: JSON output, the plot, one-line errors."""

import json

import pytest

from geodp.cli import main

FAST = ["--samples", "2000", "--seed", "0"]


def test_epsilon_json_is_one_object_with_the_fields(capsys):
    assert main(["audit", "epsilon", "--space", "sphere:2", "--center", "north", "--epsilon", "1", "--json", *FAST]) == 0
    out = capsys.readouterr().out
    record = json.loads(out)  # exactly one JSON document on stdout
    assert out.count("\n") == 1
    assert {"epsilon_lower_bound", "exact_epsilon", "events", "mutant", "confidence", "seconds"} <= set(record)
    assert record["epsilon"] == 1.0 and record["exact_epsilon"] == pytest.approx(1.0)
    assert 0.0 <= record["epsilon_lower_bound"] <= 1.0 and record["violated"] is False


def test_epsilon_text_report_and_plot(tmp_path, capsys):
    plot = tmp_path / "loss.png"
    assert main(["audit", "epsilon", "--space", "sphere:2", "--mechanism", "kng", "--epsilon", "1",
                 "--mutant", "halve-scale", "--plot", str(plot), *FAST]) == 0
    out = capsys.readouterr().out
    assert "MUTANT halve-scale" in out and "verdict" in out
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("argv, message", [
    (["audit", "epsilon", "--space", "sphre:2", "--epsilon", "1"], "unknown space"),
    (["audit", "epsilon", "--space", "sphere:2", "--epsilon", "1", "--radius", "2"], "r*"),
    (["audit", "epsilon", "--space", "spd:3:log-euclidean", "--mechanism", "tangent-gaussian", "--epsilon", "1"],
     "delta"),
    (["audit", "sensitivity", "--space", "kendall:2", "--radius", "0.1", "--n", "5"], "kendall"),
])
def test_bad_input_is_one_line_exit_2(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("geodp: error: ") and err.count("\n") == 1 and message in err
    assert "Traceback" not in err


def test_bad_option_values_exit_2(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["audit", "epsilon", "--space", "sphere:2", "--epsilon", "1", "--confidence", "0"])
    assert stop.value.code == 2
    assert "--confidence" in capsys.readouterr().err
