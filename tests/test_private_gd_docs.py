"""docs/private_gd.md is generated: its section equals the render of docs/private_gd.json, and its
findings are computed from the rows (hand-made rows with known answers)."""

import json
from pathlib import Path

from geodp.experiments.generated_docs import generated_section
from geodp.experiments.private_gd_docs import BEGIN, DISTANCES, METHODS, PAGE, RESULTS, render

ROOT = Path(__file__).resolve().parents[1]


def test_page_equals_the_render_of_its_json():
    results = json.loads((ROOT / RESULTS).read_text())
    assert generated_section((ROOT / PAGE).read_text(), BEGIN) == render(results)
    assert {r["method"] for r in results["rows"]} == set(METHODS)
    assert [o["distance"] for o in results["outliers"]] == list(DISTANCES)
    assert not results["quick"] and results["reps"] >= 20
    assert all(o["gradient_move"] <= 2.0 for o in results["outliers"])  # the stated bound, in the published run


def _results(excess_by_n):
    rows = [dict(setting="spd2", n=n, rep=0, method=m, excess=e) for n, errors in excess_by_n.items()
            for m, e in zip(METHODS, errors)]  # fmt: skip
    outliers = [dict(distance=d, mean_shift=d / 200, median_shift=0.004, gradient_move=1.5) for d in (1.0, 100.0, 1e4)]
    return dict(code="x", quick=True, reps=1, seed=0, seconds=1.0, rows=rows, outliers=outliers)


def test_findings_say_which_release_wins_at_each_n():
    # order: Laplace (output), geodp optim, their sigma
    text = render(_results({20: [1.0, 0.2, 0.1], 200: [0.1, 0.2, 0.05]}))
    assert "private GD has the lower excess risk at n = 20; the Laplace release at n = 200." in text
    assert "| 20 | 1 | 0.2 | 0.1 |" in text
    assert "the Fréchet mean moves by 0.5 to 50" in text and "by at most 1.5 ≤ 2" in text
    everywhere = render(_results({20: [1.0, 0.2, 0.1], 200: [0.3, 0.2, 0.05]}))
    assert "private GD has the lower excess risk at n = 20, 200." in everywhere
