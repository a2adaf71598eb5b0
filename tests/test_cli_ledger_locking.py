"""Budget-ledger edges found by the re-audit: a lock file that is a symlink to the ledger made the
command wait forever on its own lock; budgets near float's limit overflowed the sum of spends."""

import json
import os

import numpy as np
import pytest

from geodp.cli import main
from geodp.manifolds import SPD

pytestmark = pytest.mark.skipif(os.name == "nt", reason="the ledger needs fcntl")


def _release(tmp_path, ledger, name="m"):
    np.save(tmp_path / "covs.npy", SPD(3).random_point(20, rng=0))
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
            "0.5",
            "--seed",
            "0",
            "--output",
            str(tmp_path / f"{name}.npy"),
            "--guarantee",
            str(tmp_path / f"{name}.json"),
            "--budget-file",
            str(ledger),
        ]
    )


def test_a_lock_file_that_is_a_symlink_is_refused_not_waited_on(tmp_path, capsys):
    ledger = tmp_path / "budget.json"
    ledger.write_text('{"epsilon": 1.0}')
    os.symlink(ledger.name, tmp_path / "budget.json.lock")
    assert _release(tmp_path, ledger) == 2  # before the fix: blocked forever in flock
    err = capsys.readouterr().err
    assert "lock file" in err and len(err.strip().splitlines()) == 1
    assert json.loads(ledger.read_text()) == {"epsilon": 1.0}


@pytest.mark.parametrize(
    "text", ['{"epsilon": 1.7976931348623157e308}', '{"epsilon": 1e308, "spends": [{"epsilon": 1e308, "delta": 0}]}']
)
def test_budgets_near_float_limits_are_refused_in_one_line(tmp_path, capsys, text):
    ledger = tmp_path / "budget.json"
    ledger.write_text(text)
    assert _release(tmp_path, ledger) == 2
    err = capsys.readouterr().err
    assert "not a budget ledger" in err and "Traceback" not in err
    assert ledger.read_text() == text
