"""``geodp release`` writes, apart from the publishable outputs and only when asked, how many
records the public ball clipped or the centre replaced (a new user's volts² data were silently all
clipped); what it prints never depends on the records."""

import json

import numpy as np

from geodp.cli import main
from geodp.manifolds import SPD


def _release(tmp_path, records, *extra):
    np.save(tmp_path / "covs.npy", records)
    return main(
        [
            "release",
            str(tmp_path / "covs.npy"),
            "--space",
            "spd:3",
            "--center",
            "identity",
            "--radius",
            "3",
            "--epsilon",
            "1",
            "--seed",
            "0",
            "--output",
            str(tmp_path / "m.npy"),
            "--guarantee",
            str(tmp_path / "g.json"),
            *extra,
        ]
    )


def test_clipped_records_are_written_for_the_curator_only(tmp_path, capsys):
    records = SPD(3).random_point(50, rng=0)
    expected = int(np.count_nonzero(SPD(3).dist(np.eye(3), records * 1e-10) > 3))  # independent count
    assert _release(tmp_path, records * 1e-10, "--diagnostics", str(tmp_path / "d.json")) == 0
    facts = json.loads((tmp_path / "d.json").read_text())
    assert facts["n_clipped"] == expected == 50 and facts["curator_only"].startswith("DO NOT PUBLISH")
    guarantee = json.loads((tmp_path / "g.json").read_text())
    assert not {"n_clipped", "n_invalid", "curator_only"} & set(json.dumps(guarantee).replace('"', " ").split())
    captured = capsys.readouterr()
    assert "50" not in captured.err and "do not publish" in captured.out


def test_what_is_printed_does_not_depend_on_the_records(tmp_path, capsys):
    records = SPD(3).random_point(50, rng=0)
    outputs = []
    for data in (records * 1e-10, records[SPD(3).dist(np.eye(3), records) < 3][:20]):
        assert _release(tmp_path, data, "--overwrite") == 0
        captured = capsys.readouterr()
        outputs.append((captured.err, captured.out.splitlines()[-1]))
    assert outputs[0] == outputs[1] and "--diagnostics FILE" in outputs[0][1]


def test_diagnostics_file_must_not_be_an_output(tmp_path, capsys):
    records = SPD(3).random_point(10, rng=0)
    assert _release(tmp_path, records, "--diagnostics", str(tmp_path / "g.json"), "--overwrite") == 2
    assert "--diagnostics must differ" in capsys.readouterr().err


def test_diagnostics_file_must_not_replace_the_ledger_or_the_records(tmp_path, capsys):
    records = SPD(3).random_point(10, rng=0)
    ledger = tmp_path / "budget.json"
    ledger.write_text('{"epsilon": 5.0}')
    assert _release(tmp_path, records, "--budget-file", str(ledger), "--diagnostics", str(ledger), "--overwrite") == 2
    assert ledger.read_text() == '{"epsilon": 5.0}' and "--diagnostics must differ" in capsys.readouterr().err
