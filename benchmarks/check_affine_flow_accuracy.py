"""How close the private fit's affine-invariant Karcher flow gets to the exact mean, checked in
50 digits on adversarial records (docs/math.md §15, "Whitening far from the iterate").

Each dataset holds 2–4 records on the boundary of the ball ``B_r(I)`` of SPD(k), their eigenbases
small rotations of one frame (near-commuting but far apart, the hard case: whitened condition
numbers up to e^{2√2 r}), half of them with two eigenvalues ``e^{±r/√2}``, and Dirichlet weights.
The flow runs as a private fit runs it (tolerance from ``release_sensitivity``, public iteration
budget, whitening path from the ball); the exact gradient at its output is recomputed with mpmath
on the records' eigh factors. A dataset counts as a violation when that gradient exceeds the
tolerance the sensitivity margin assumes. ``--dense`` forces the dense ``eigh`` path and the old
tolerance ``1e-10·r`` (the code before the fix).

    python benchmarks/check_affine_flow_accuracy.py --k 2 --radii 6,10,14.15,17,20 --trials 30

``--cost`` times the flow on both paths instead (interleaved rounds, median ratio, the load).
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
from scipy.linalg import expm
from scipy.stats import special_ortho_group

from geodp.audit.affine_flow import exact_gradient_norm
from geodp.frechet import frechet_mean, karcher_iteration_budget
from geodp.manifolds import SPD
from geodp.manifolds.spd_accurate import accurate_whitening
from geodp.models.frechet_mean import release_sensitivity


def adversarial_dataset(k, radius, rng):
    base = special_ortho_group.rvs(k, random_state=rng)
    records = []
    for _ in range(int(rng.integers(2, 5))):
        angle = rng.choice([1e-3, 1e-2, 0.1, 0.5, 1.5])
        skew = rng.normal(size=(k, k))
        frame = base @ expm(angle * (skew - skew.T) / 2)
        logs = rng.normal(size=k)
        logs *= radius / np.linalg.norm(logs)
        if rng.random() < 0.5:
            logs = np.zeros(k)
            logs[:2] = radius / np.sqrt(2), -radius / np.sqrt(2)
        x = frame @ np.diag(np.exp(logs)) @ frame.T
        records.append((x + x.T) / 2)
    return np.stack(records), rng.dirichlet(np.full(len(records), rng.choice([0.1, 1.0])))


def check(k, radius, trials, dense):
    space, center = SPD(k), np.eye(k)
    rng = np.random.default_rng(int(radius * 100) + k + 7)
    tol = 1e-10 * max(1.0, radius) if dense else release_sensitivity(space, radius, 1, "laplace", center)[2]
    budget = karcher_iteration_budget(space, radius, tol)
    accurate = not dense and space.needs_accurate_whitening(center, radius)
    worst, violations, unconverged = 0.0, 0, 0
    for _ in range(trials):
        records, weights = adversarial_dataset(k, radius, rng)
        with warnings.catch_warnings(), accurate_whitening(accurate):
            warnings.simplefilter("ignore")
            mean, info = frechet_mean(space, records, weights=weights, tol=tol, max_iter=budget, return_info=True)
        gradient = exact_gradient_norm(mean, records, weights)
        worst = max(worst, gradient / tol)
        violations += gradient > tol
        unconverged += not info.converged
    path = "dense eigh" if not accurate else "accurate"
    print(
        f"| SPD({k}) | {radius:g} | {path} | {tol:.2g} | {violations}/{trials} | {unconverged} | {worst:.3g} |",
        flush=True,
    )


def cost(rounds):
    """Median time of the flow on records from B_3(I), dense vs accurate whitening, interleaved."""
    print(f"load {os.getloadavg()[0]:.1f}")
    print("| space | n | dense eigh | accurate | ratio |")
    print("|---|---|---|---|---|")
    for k, n in ((3, 100), (3, 1000), (10, 1000), (28, 100)):
        rng = np.random.default_rng(k * n)
        logs = rng.normal(size=(n, k, k))
        records = np.stack([expm((a + a.T) / 2 * (3.0 / np.linalg.norm(a + a.T) * 2 * rng.random())) for a in logs])
        times = {False: [], True: []}
        for _ in range(rounds):
            for accurate in (False, True):
                start = time.perf_counter()
                with accurate_whitening(accurate):
                    frechet_mean(SPD(k), records, tol=1e-10, max_iter=100)
                times[accurate].append(time.perf_counter() - start)
        ratio = np.median(np.array(times[True]) / np.array(times[False]))
        print(f"| SPD({k}) | {n} | {np.median(times[False]):.3g} s | {np.median(times[True]):.3g} s | {ratio:.1f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--k", type=int, default=2)
    parser.add_argument("--radii", default="6,10,14.15,17,20")
    parser.add_argument("--trials", type=int, default=30)
    parser.add_argument("--dense", action="store_true", help="the dense eigh path and tolerance 1e-10·r")
    parser.add_argument("--cost", action="store_true", help="time both paths instead")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if args.cost:
        cost(args.rounds)
        return
    print("| space | radius | whitening | tol | exact gradient > tol | not converged | worst exact/tol |")
    print("|---|---|---|---|---|---|---|")
    for radius in (float(r) for r in args.radii.split(",")):
        check(args.k, radius, args.trials, args.dense)


if __name__ == "__main__":
    main()
