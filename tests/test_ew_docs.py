"""docs/ew_study.md is generated: its section equals the render of docs/ew_study.json, and the
findings are computed from the rows (hand-made rows with known answers)."""

import json
from pathlib import Path

from geodp.experiments.ew_docs import BEGIN, PAGE, RESULTS, render
from geodp.experiments.ew_study import MECHANISMS
from geodp.experiments.generated_docs import generated_section

ROOT = Path(__file__).resolve().parents[1]


def test_page_equals_the_render_of_its_json():
    results = json.loads((ROOT / RESULTS).read_text())
    assert generated_section((ROOT / PAGE).read_text(), BEGIN) == render(results)
    families = {r["family"] for r in results["rows"]}
    assert families == {"spd-affine", "spd-log-euclidean", "spd-log-cholesky", "hyperbolic"}
    assert {r["mechanism"] for r in results["rows"]} == set(MECHANISMS)
    assert {r["size"] for r in results["rows"]} == {3, 10, 15} and not results["quick"]


def _rows(errors_by_mu):
    rows = []
    for mu, errors in errors_by_mu.items():
        for mechanism, error in zip(MECHANISMS, errors):
            rows.append(dict(family="spd-affine", size=3, mu=mu, mechanism=mechanism, status="exact", error=error,
                             ms_per_release=1.0, reps=2, not_finite=0))  # fmt: skip
    return dict(code="x", seconds=1, quick=True, reps=2, seed=0, rows=rows)


def test_findings_say_where_ours_differs_from_the_paper():
    # order: riemannian-laplace, wrapped-laplace, wrapped-gaussian, riemannian-gaussian
    differs = render(_rows({1.0: [0.5, 0.6, 0.2, 0.25], 2.0: [0.3, 0.3, 0.1, 0.1]}))
    assert "ours differs from the paper here" in differs
    assert "lower error in 2 of the 2 cells" in differs and "from 2.5 to 3" in differs
    agrees = render(_rows({1.0: [0.1, 0.6, 0.2, 0.25], 2.0: [0.3, 0.3, 0.1, 0.1]}))
    assert "as in the paper" in agrees and "lower error in 1 of the 2 cells" in agrees
    assert "AI-SPD(3) at μ = 1" in agrees  # the exception is named
    assert "| AI-SPD(3) | 1 | 0.1 | 0.6 | 0.2 | 0.25 |" in agrees
