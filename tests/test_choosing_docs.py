"""docs/choosing.md "Choosing a mechanism": the generated section equals the render of its JSON,
and the composition numbers agree with closed forms computed here independently."""

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import norm

from geodp.composition import EpsilonDeltaDpEvent, composed_epsilon
from geodp.experiments.choosing_docs import BEGIN, PAGE, RESULTS, budget_split, composition_rows, error_rows, render
from geodp.experiments.generated_docs import generated_section

ROOT = Path(__file__).resolve().parents[1]


def _gdp_epsilon(mu, delta):
    """ε at δ of μ-GDP (Dong, Roth & Su, Cor. 2.13), solved here with scipy only."""
    return brentq(lambda e: norm.cdf(-e / mu + mu / 2) - np.exp(e) * norm.cdf(-e / mu - mu / 2) - delta, 0, 500)


def _gdp_mu(epsilon, delta):
    return brentq(lambda m: norm.cdf(-epsilon / m + m / 2) - np.exp(epsilon) * norm.cdf(-epsilon / m - m / 2) - delta,
                  1e-3, 50)  # fmt: skip


def test_gaussian_pld_matches_the_exact_gdp_composition_and_beats_sequential():
    rows = {r["k"]: r for r in composition_rows([1, 10, 100])}
    mu = _gdp_mu(1.0, 1e-5)
    for k, row in rows.items():
        exact = _gdp_epsilon(mu * np.sqrt(k), 1e-5)
        assert exact * (1 - 1e-6) <= row["gaussian_pld"] <= exact * 1.02  # PLD: a sound, tight bound
    assert rows[100]["gaussian_pld"] < rows[100]["sequential"] / 3
    assert rows[1]["laplace_pld"] == pytest.approx(1.0, abs=1e-3)


def test_budget_split_spends_the_total_and_no_more():
    split = budget_split(k=100, total=10.0)
    eps0 = split["laplace_pld_eps"]
    assert composed_epsilon([EpsilonDeltaDpEvent(eps0, 0.0)] * 100, 1e-5, "pld") == pytest.approx(10.0, rel=1e-3)
    assert _gdp_epsilon(split["gaussian_mu"] * 10, 1e-5) == pytest.approx(10.0, rel=1e-6)
    assert split["noise_laplace_sequential"] == pytest.approx(100.0)  # d·k/ε_total = 10·100/10


def test_quick_error_rows_are_exact_and_ordered_in_epsilon():
    rows = error_rows(epsilons=[0.3, 10.0], reps=4, mechanisms=["wrapped-gaussian"])
    assert all(r["exact"] for r in rows)
    assert rows[0]["error"] > 5 * rows[1]["error"]  # σ ∝ 1/ε (about ×30 here)


def test_page_equals_the_render_of_its_json():
    results = json.loads((ROOT / RESULTS).read_text())
    assert generated_section((ROOT / PAGE).read_text(), BEGIN) == render(results)
    assert not results["quick"] and len({r["mechanism"] for r in results["errors"]}) == 5
