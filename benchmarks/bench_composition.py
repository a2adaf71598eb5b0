"""What k releases on the same data cost under each composition rule, and what a check costs.

k Gaussian releases, each μ-GDP with μ = 0.3 and declared at its ε for δ_B/k (so that the
sequential δ's add up to the budget's δ_B = 1e-5: the honest comparison), are charged to a
``BudgetAccountant`` with ``composition="sequential"``, ``"rdp"`` and ``"pld"``; the ε each
reports at δ_B is printed with the time of the last ``spend`` (its check composes every release
so far). Then the same for a mix: k/2 such Gaussian releases and k/2 pure ε = 0.5 releases
(a Laplace or KNG mean), where PLD composes through dp-accounting's privacy loss distributions.

Run: ``PYTHONPATH=src python benchmarks/bench_composition.py`` (a few seconds).
"""

from __future__ import annotations

import time

from dp_accounting.gaussian_mechanism import get_epsilon_gaussian

from geodp.accountant import BudgetAccountant

MU, DELTA = 0.3, 1e-5
RULES = ("sequential", "rdp", "pld")


def _gaussian(k: int) -> dict:
    per_release = DELTA / k
    return {"epsilon": get_epsilon_gaussian(1.0 / MU, per_release), "delta": per_release, "gdp_mu": MU}


def _row(label: str, releases) -> str:
    cells = []
    for rule in RULES:
        budget = BudgetAccountant(delta=DELTA, composition=rule)
        for release in releases[:-1]:
            budget.spend(release)
        start = time.perf_counter()
        budget.spend(releases[-1])
        seconds = time.perf_counter() - start
        cells.append(f"{budget.total_spent[0]:8.2f} ({seconds * 1e3:6.1f} ms)")
    return f"| {label:<34} | " + " | ".join(cells) + " |"


def main() -> None:
    print(f"| releases (delta = {DELTA:g}) | " + " | ".join(f"{rule}: epsilon (last spend)" for rule in RULES) + " |")
    print("|---|---|---|---|")
    for k in (10, 100, 1000):
        print(_row(f"{k} Gaussian, mu = {MU}", [_gaussian(k)] * k))
    for k in (10, 100):
        pure = {"epsilon": 0.5, "delta": 0.0}
        print(_row(f"{k // 2} Gaussian + {k // 2} pure eps = 0.5", [_gaussian(k)] * (k // 2) + [pure] * (k // 2)))


if __name__ == "__main__":
    main()
