"""What secure mode's discrete Gaussian costs under composition, against the seeded float Gaussian.

Monthly tangent-Gaussian releases on log-Euclidean SPD(8) (ε = 1, δ = 1e-8, chart sensitivity
0.1 each) are charged to a ``BudgetAccountant(10, 1e-5)`` under each rule, once with the guarantee
of secure mode (the default ``random_state=None``: exact discrete Gaussian on a grid, ρ-zCDP) and
once with that of a seeded release (floating-point Gaussian, μ-GDP). Printed: the per-release ρ
or μ²/2, the ε of 50 releases at δ = 1e-5, and how many releases fit the budget.

Run: ``PYTHONPATH=src python benchmarks/bench_secure_composition.py`` (a few seconds).
"""

from __future__ import annotations

import math

from geodp.accountant import BudgetAccountant
from geodp.composition import composed_epsilon, dp_event
from geodp.errors import BudgetExceededError
from geodp.manifolds import SPD
from geodp.mechanisms import TangentGaussianMechanism

BUDGET, DELTA, RELEASES = 10.0, 1e-5, 50
RULES = ("sequential", "rdp", "pld")


def _fits(guarantee, rule: str) -> int:
    budget = BudgetAccountant(BUDGET, DELTA, composition=rule)
    for count in range(10_000):
        try:
            budget.spend(guarantee)
        except BudgetExceededError:
            return count
    return math.inf


def main() -> None:
    mechanism = TangentGaussianMechanism(epsilon=1.0, delta=1e-8, sensitivity=0.1, space=SPD(8, metric="log-euclidean"))
    modes = {"secure (default)": mechanism.guarantee_for("secure"), "seeded": mechanism.guarantee_for(0)}
    print(f"| mode | per-release ρ | rule | ε of {RELEASES} releases | releases in ({BUDGET:g}, {DELTA:g}) |")
    print("|---|---|---|---|---|")
    for mode, guarantee in modes.items():
        rho = guarantee.zcdp_rho if guarantee.zcdp_rho is not None else guarantee.gdp_mu**2 / 2
        for rule in RULES:
            if rule == "sequential":
                epsilon = RELEASES * guarantee.epsilon
            else:
                epsilon = composed_epsilon([dp_event(guarantee)] * RELEASES, DELTA, rule)
            print(f"| {mode} | {rho:.5f} | {rule} | {epsilon:.2f} | {_fits(guarantee, rule)} |")


if __name__ == "__main__":
    main()
