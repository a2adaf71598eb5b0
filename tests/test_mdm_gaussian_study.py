"""The connectome MDM study with the Gaussian mechanisms: its quick path, the radius-only ball it
uses, its ceiling and the generated page (needs geomstats for the data)."""

import io
import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("geomstats")

from geodp.errors import InvalidParameterError  # noqa: E402
from geodp.experiments.generated_docs import generated_section  # noqa: E402
from geodp.experiments.mdm_gaussian_study import (  # noqa: E402
    BEGIN,
    PAGE,
    RESULTS,
    _fit,
    ceiling,
    render,
    run_mdm_gaussian_study,
)
from geodp.experiments.mdm_study import load_study_data, run_mdm_study  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def test_quick_path_runs_each_ball_and_stays_in_budget():
    arms = [("log-euclidean", "coarse", "laplace"), ("log-euclidean", "private-radius", "tangent-gaussian")]
    rows = run_mdm_gaussian_study(quick=True, repeats=2, arms=arms, tuning=False, out=io.StringIO())
    assert [(r["kind"], r["ball"], r["epsilon"]) for r in rows] == [
        ("arm", "coarse", 10.0), ("arm", "private-radius", 10.0), ("ceiling", "exact (non-private) radius", 10.0)
    ]  # fmt: skip
    coarse, private, _ = rows
    assert coarse["radius"] == pytest.approx(14.15, abs=0.01)
    assert 2.0 < private["radius"] < coarse["radius"]  # the records lie 2.8-3.6 from I
    assert all(0.0 <= r["accuracy"] <= 1.0 and r["chance"] == pytest.approx(16 / 29) for r in rows)


def test_private_radius_arm_keeps_i_and_spends_its_share_on_the_radius(monkeypatch):
    """The arm calls the library's radius-only private_ball (no re-implementation) with the share."""
    import geodp.experiments.mdm_gaussian_study as study

    calls = []
    real = study.private_ball
    monkeypatch.setattr(study, "private_ball", lambda *a, **k: calls.append(k) or real(*a, **k))
    data = load_study_data("connectomes")
    scores, radius = _fit(data, "log-euclidean", "private-radius", "tangent-gaussian", 10.0,
                          np.random.default_rng(0), share=0.1, quantile=0.5)  # fmt: skip
    assert [(k["center_share"], k["epsilon"], k["quantile"]) for k in calls] == [(0.0, 1.0, 0.5)]
    assert set(scores) == {"debiased", "pyriemann"} and 0.0 < radius < data.radius


def test_ceiling_is_chance_at_tiny_epsilon_and_the_non_private_accuracy_at_huge_epsilon():
    data = load_study_data("connectomes")
    rng = np.random.default_rng(0)
    low, high = ceiling(data, 0.01, rng, draws=50), ceiling(data, 1e6, rng, draws=5)
    assert high["accuracy"] == pytest.approx(0.724, abs=0.02)  # the records clipped at r barely move the means
    assert abs(low["accuracy"] - 0.5) < 0.1 and low["accuracy_pyriemann"] == pytest.approx(16 / 29, abs=0.03)


def test_mdm_study_refuses_a_bad_ball_share():
    with pytest.raises(InvalidParameterError):
        run_mdm_study(["connectomes"], epsilons=[10.0], repeats=1, ball_share=1.5, progress=False)


@pytest.mark.skipif(not (ROOT / RESULTS).exists(), reason="no run recorded yet")
def test_page_equals_the_render_of_its_json():
    results = json.loads((ROOT / RESULTS).read_text())
    assert generated_section((ROOT / PAGE).read_text(), BEGIN) == render(results)
    at_ten = [r for r in results["rows"] if r["epsilon"] == 10.0 and r["kind"] == "arm"]
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
