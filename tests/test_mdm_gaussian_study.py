"""The connectome MDM study with the Gaussian mechanisms: its quick path, the private radius and
the generated page (needs geomstats for the data)."""

import io
import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("geomstats")

from geodp.accountant import BudgetAccountant  # noqa: E402
from geodp.errors import BudgetExceededError, InvalidParameterError  # noqa: E402
from geodp.experiments.generated_docs import generated_section  # noqa: E402
from geodp.experiments.mdm_gaussian_study import (  # noqa: E402
    BEGIN,
    PAGE,
    RESULTS,
    _private_radius,
    render,
    run_mdm_gaussian_study,
)
from geodp.experiments.mdm_study import run_mdm_study  # noqa: E402
from geodp.manifolds import SPD  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def test_quick_path_runs_each_ball_and_stays_in_budget():
    arms = [("log-euclidean", "coarse", "laplace"), ("log-euclidean", "private-radius", "tangent-gaussian")]
    rows = run_mdm_gaussian_study(quick=True, repeats=2, arms=arms, out=io.StringIO())
    assert [(r["ball"], r["epsilon"]) for r in rows] == [("coarse", 10.0), ("private-radius", 10.0)]
    coarse, private = rows
    assert coarse["radius"] == pytest.approx(14.15, abs=0.01)
    assert 2.0 < private["radius"] < coarse["radius"]  # the records lie 2.5-3.6 from I
    assert all(0.0 <= r["accuracy"] <= 1.0 and r["chance"] == pytest.approx(16 / 29) for r in rows)


def test_private_radius_is_charged_before_reading_and_refused_when_over_budget():
    space = SPD(2, metric="log-euclidean")
    X = np.stack([np.diag([np.exp(t), 1.0]) for t in np.linspace(0.5, 1.0, 200)])  # distances 0.5..1 to I
    budget = BudgetAccountant(epsilon=1.0)
    radius = _private_radius(space, X, np.eye(2), 10.0, 1.0, budget, np.random.default_rng(0))
    assert budget.total_spent[0] == pytest.approx(1.0)
    assert 0.7 < radius < 1.0  # the 0.75-quantile of distances uniform on [0.5, 1] is 0.875
    with pytest.raises(BudgetExceededError):
        _private_radius(space, X, np.eye(2), 10.0, 0.1, budget, np.random.default_rng(0))


def test_mdm_study_refuses_a_bad_ball_share():
    with pytest.raises(InvalidParameterError):
        run_mdm_study(["connectomes"], epsilons=[10.0], repeats=1, ball_share=1.5, progress=False)


@pytest.mark.skipif(not (ROOT / RESULTS).exists(), reason="no run recorded yet")
def test_page_equals_the_render_of_its_json():
    results = json.loads((ROOT / RESULTS).read_text())
    assert generated_section((ROOT / PAGE).read_text(), BEGIN) == render(results)
    at_ten = [r for r in results["rows"] if r["epsilon"] == 10.0]
    assert {r["ball"] for r in at_ten} == {"coarse", "private-radius", "private-ball"}


def test_mdm_study_runs_the_wrapped_gaussian_on_the_affine_metric_only():
    from geodp.experiments.mdm_study import _combinations

    combos = list(_combinations(["affine", "log-euclidean"], ["tangent-gaussian", "wrapped-gaussian"], False))
    assert combos == [("affine", "wrapped-gaussian"), ("log-euclidean", "tangent-gaussian")]


def test_cli_mdm_passes_the_ball_share():
    import argparse

    from geodp.cli.mdm import add_parser

    parser = argparse.ArgumentParser(prog="geodp")
    add_parser(parser.add_subparsers(dest="command"))
    assert parser.parse_args(["mdm", "--ball-share", "0.2"]).ball_share == 0.2
