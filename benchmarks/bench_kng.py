"""Exact KNG release vs S22's MH, and the exact sampler's acceptance against radius and dimension.

1. One KNG release on S² (n = 100, ε = 1, r = 0.5) through ``KNGMechanism.randomise`` (the
   Fréchet mean used as proposal footpoint is computed inside) vs S22's MH settings (burn-in
   20,000, thinning 600) run with geodp's MH on the same density (one chain, same geometry code):
   a fresh chain per release (20,600 steps) and the amortised cost along one chain (600 steps).
2. Acceptance of the exact rejection sampler (observed, data-dependent) and its public lower bound
   (which decides the MH fallback at 1e-3) for S², S⁵, Kendall k = 4 and k = 8, n = 100, ε = 1,
   over radii as fractions of r*.
3. Higher dimensions at n = 100, ε = 1 (S²⁰, S⁵⁰ at r = 0.5; H¹⁰, SPD(5) at r = 1; Kendall k = 50,
   100 at r = 0.2): the public bound, the sampler chosen, the observed acceptance and the median
   time per release over rounds that interleave the spaces. MH releases (20,600 steps) take
   minutes on Kendall shapes: timed only with ``--mh``.

4. Issue 22's targets (:func:`issue_targets`): Kendall-100, H¹⁰ and affine SPD(8) fits, exact or MH.
5. KNG on affine SPD(8) with adversarial data (:func:`spd_affine_targets`).

Run: ``python benchmarks/bench_kng.py [--mh] [--targets] [--spd]``
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from geodp.distributions import KNGDistribution
from geodp.distributions.laplace import ACCEPTANCE_FLOOR
from geodp.distributions.mcmc import random_walk_metropolis
from geodp.errors import ApproximateSamplerWarning
from geodp.manifolds import SPD, Hyperbolic, KendallShape, Sphere
from geodp.mechanisms import KNGMechanism
from geodp.sensitivity import frechet_mean_sensitivity, max_radius


def data_in_ball(space, radius, n, seed):
    center = space.random_point(rng=seed)
    v = space.random_tangent(center, size=n, rng=seed + 1)
    X, _ = space.clip_to_ball(space.exp(center, 0.6 * radius * v / np.sqrt(space.dim)), center, radius)
    return center, X


def timing():
    space, radius, n = Sphere(2), 0.5, 100
    center, X = data_in_ball(space, radius, n, 0)
    mech = KNGMechanism(
        space, epsilon=1.0, sensitivity=frechet_mean_sensitivity(space, radius, n, "kng"), center=center, radius=radius
    )
    rng = np.random.default_rng(1)
    mech.randomise(X, rng=rng)
    t = time.perf_counter()
    for _ in range(200):
        mech.randomise(X, rng=rng)
    exact = (time.perf_counter() - t) / 200
    law = mech.distribution(X)
    t = time.perf_counter()
    result = random_walk_metropolis(
        space,
        law.log_density,
        law.frechet_mean[None],
        burn_in=20_000,
        thinning=600,
        step_size=mech.scale,
        in_support=lambda y: space.dist(center, y) <= radius,
        rng=rng,
    )
    fresh = time.perf_counter() - t
    print(f"KNG on S², n = {n}, r = {radius}, ε = 1, σ = {mech.scale:.4g}")
    print(f"  MH diagnostics: {result.diagnostics}")
    print(f"  exact release (mechanism.randomise):        {exact * 1e3:9.3f} ms")
    print(f"  S22 MH, fresh chain (20,000 + 600 steps):   {fresh * 1e3:9.1f} ms   ratio {fresh / exact:8.0f}")
    print(
        f"  S22 MH, amortised (600 steps):              {fresh * 600 / 20600 * 1e3:9.1f} ms   ratio "
        f"{fresh * 600 / 20600 / exact:8.0f}"
    )


def acceptance_table():
    print(f"\nacceptance of the exact KNG sampler (n = 100, ε = 1); MH below the public bound {ACCEPTANCE_FLOOR}")
    print(f"  {'space':<16}{'dim':>4}{'r/r*':>6}{'r':>8}{'h':>8}{'public bound':>14}{'observed':>10}  sampler")
    for space in (Sphere(2), Sphere(5), KendallShape(4), KendallShape(8)):
        for frac in (0.2, 0.4, 0.6, 0.8, 0.9):
            radius = frac * max_radius(space)
            center, X = data_in_ball(space, radius, 100, 3)
            sigma = 2 * frechet_mean_sensitivity(space, radius, 100, "kng")
            law = KNGDistribution(space, X, sigma, center=center, radius=radius, sampler="exact")
            observed = float("nan")
            if law.acceptance_bound > 1e-5:
                law.sample(400, rng=4)
                observed = law.acceptance_rate
            kind = "exact" if law.acceptance_bound >= ACCEPTANCE_FLOOR else "MH"
            print(
                f"  {space!r:<16}{space.dim:>4}{frac:>6}{radius:>8.3f}{law.h:>8.3f}"
                f"{law.acceptance_bound:>14.3g}{observed:>10.3g}  {kind}"
            )


def high_dimension(with_mh, rounds=5):
    cases = [
        (Sphere(20), 0.5),
        (Sphere(50), 0.5),
        (Hyperbolic(10), 1.0),
        (SPD(5), 1.0),
        (KendallShape(50), 0.2),
        (KendallShape(100), 0.2),
    ]
    setups = []
    for space, radius in cases:
        center, X = data_in_ball(space, radius, 100, 0)
        mech = KNGMechanism(
            space,
            epsilon=1.0,
            sensitivity=frechet_mean_sensitivity(space, radius, 100, "kng"),
            center=center,
            radius=radius,
        )
        setups.append((space, radius, X, mech, []))
    rng = np.random.default_rng(5)
    for _ in range(rounds):  # interleaved: every space once per round
        for _space, _radius, X, mech, times in setups:
            if not mech.exact and not with_mh:
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ApproximateSamplerWarning)
                t = time.perf_counter()
                mech.randomise(X, rng=rng)
                times.append(time.perf_counter() - t)
    print("\nKNG at higher dimension (n = 100, ε = 1); median time per release over interleaved rounds")
    print(f"  {'space':<22}{'r':>5}{'σ':>9}{'public bound':>14}{'observed':>10}{'ms/release':>12}  sampler")
    for space, radius, X, mech, times in setups:
        observed = float("nan")
        if mech.exact:
            law = mech.distribution(X)
            law.sample(400, rng=6)
            observed = law.acceptance_rate
        ms = f"{np.median(times) * 1e3:12.1f}" if times else f"{'(--mh)':>12}"
        kind = "exact" if mech.exact else ("MH" if mech._use_mcmc else "envelope ok, proposal MH")
        print(
            f"  {space!r:<22}{radius:>5}{mech.scale:>9.4f}{mech.acceptance_bound:>14.3g}{observed:>10.3g}{ms}  {kind}"
        )


def kendall_private_mean(rounds=11):
    """Issue 13's Kendall target: one ``PrivateFrechetMean(KendallShape(100), mechanism="kng")``
    fit (ε = 1, r = 0.2, n = 100; Fréchet mean, exact in-ball proposal, KNG rejection), median of
    ``rounds`` releases per dataset, with the load average (the machine is shared)."""
    import os

    from geodp.models import PrivateFrechetMean

    space, radius = KendallShape(100), 0.2
    center, X = data_in_ball(space, radius, 100, 0)
    v = space.random_unit_tangent(center, rng=7)
    boundary = np.repeat(space.exp(center, radius * (1 - 1e-9) * v)[None], 100, axis=0)
    print("\nPrivateFrechetMean(KendallShape(100), ε = 1, r = 0.2, mechanism='kng'), n = 100")
    for name, data in (("spread", X), ("one boundary point", boundary)):
        times = []
        for seed in range(rounds):
            t = time.perf_counter()
            model = PrivateFrechetMean(
                space, epsilon=1.0, center=center, radius=radius, mechanism="kng", random_state=seed
            ).fit(data)
            times.append(time.perf_counter() - t)
        print(
            f"  {name:<20} median {np.median(times) * 1e3:7.1f} ms  (min {min(times) * 1e3:.1f}, "
            f"max {max(times) * 1e3:.1f}; load average {os.getloadavg()[0]:.2f}); exact: {model.mechanism_.exact}"
        )


def _hyperbolic_cluster(n=2000, seed=0):
    """H¹⁰, ball of radius 2.5 at the origin, ``n`` points clustered 1.4 away (spread 0.3)."""
    space, radius = Hyperbolic(10), 2.5
    origin = np.zeros(11)
    origin[0] = 1.0
    middle = space.exp(origin, 1.4 * space.random_unit_tangent(origin, rng=seed))
    v = space.random_tangent(middle, size=n, rng=seed + 1) * 0.3 / np.sqrt(space.dim)
    return space, origin, radius, space.clip_to_ball(space.exp(middle, v), origin, radius)[0]


def _spd_off_centre(n=200, seed=0):
    """Affine SPD(8), ball of radius 3 at I, ``n`` covariances around a point 1.5 away (spread 0.5)."""
    space, radius = SPD(8), 3.0
    middle = space.exp(np.eye(8), 1.5 * space.random_unit_tangent(np.eye(8), rng=seed))
    v = space.random_tangent(middle, size=n, rng=seed + 1) * 0.5 / np.sqrt(space.dim)
    return space, np.eye(8), radius, space.clip_to_ball(space.exp(middle, v), np.eye(8), radius)[0]


def issue_targets(rounds=5, with_mh=False):
    """Issue 22's targets: ``PrivateFrechetMean(..., mechanism="kng")`` fits on Kendall-100
    (r = 0.2, n ∈ {100, 300, 1000}, ε ∈ {0.5, 1, 4}), H¹⁰ (r = 2.5, 2,000 points 1.4 away) and
    affine SPD(8) (r = 3, 200 covariances off the centre) at ε ∈ {0.5, 5}: the route (public),
    exact or MH, and the median time per fit over rounds that interleave every setting (a new
    seed each round; the first round's fits include the per-σ caches), wall-clock and CPU time of
    this process (the CPU column is what an idle machine's wall clock shows with single-threaded
    BLAS; on a loaded machine the wall clock waits for a core). MH fits are timed only with
    ``--mh`` (tens of seconds each)."""
    import os

    from geodp.models import PrivateFrechetMean

    settings = []
    for n in (100, 300, 1000):
        space, radius = KendallShape(100), 0.2
        center, X = data_in_ball(space, radius, n, 0)
        settings += [(f"Kendall(100) n={n}", space, center, radius, X, eps) for eps in (0.5, 1.0, 4.0)]
    space, center, radius, X = _hyperbolic_cluster()
    settings += [("H^10 n=2000", space, center, radius, X, eps) for eps in (0.5, 5.0)]
    space, center, radius, X = _spd_off_centre()
    settings += [("SPD(8) n=200", space, center, radius, X, eps) for eps in (0.5, 5.0)]
    times = {i: [] for i in range(len(settings))}
    cpu = {i: [] for i in range(len(settings))}
    exact = {}
    for r in range(rounds):
        for i, (_name, space, center, radius, X, eps) in enumerate(settings):
            model = PrivateFrechetMean(
                space, epsilon=eps, center=center, radius=radius, mechanism="kng", random_state=r
            )
            exact[i] = model.plan(X).exact  # public: decided before any data is seen
            if exact[i] is False and not with_mh:
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ApproximateSamplerWarning)
                t, c = time.perf_counter(), time.process_time()
                model.fit(X)
                times[i].append(time.perf_counter() - t)
                cpu[i].append(time.process_time() - c)
            exact[i] = model.mechanism_.exact
    print(f"\nIssue 22 targets: PrivateFrechetMean(mechanism='kng') fits, median of {rounds} interleaved rounds")
    print(f"  {'setting':<22}{'ε':>5}{'exact':>7}{'ms/fit':>10}{'CPU ms':>9}  (load average {os.getloadavg()[0]:.2f})")
    for i, (name, *_rest, eps) in enumerate(settings):
        ms = f"{np.median(times[i]) * 1e3:10.1f}{np.median(cpu[i]) * 1e3:9.1f}" if times[i] else f"{'(--mh)':>10}"
        print(f"  {name:<22}{eps:>5}{'yes' if exact[i] else 'MH':>7}{ms}")


def spd_affine_targets(rounds=5):
    """KNG on affine SPD(8), r = 3, n = 200, ε ∈ {0.5, 5} (the ``"spd-tangent"`` route): the
    issue's off-centre data and two adversarial datasets (every record on one boundary point, so the
    anchor sits on the boundary; two antipodal boundary clusters, so the gradient norm grows fastest
    off the mean). Median ms per ``PrivateFrechetMean`` fit over rounds that interleave the
    settings, and the observed acceptance of 200 draws (curator-only: it depends on the data)."""
    import os

    from geodp.models import PrivateFrechetMean

    space, center, radius, X = _spd_off_centre()
    direction = space.random_unit_tangent(center, rng=11)
    edge = space.exp(center, radius * (1 - 1e-9) * direction)
    far = space.exp(center, -radius * (1 - 1e-9) * direction)
    datasets = {
        "off-centre (issue)": X,
        "one boundary point": np.repeat(edge[None], 200, axis=0),
        "two antipodal clusters": np.concatenate([np.repeat(p[None], 100, axis=0) for p in (edge, far)]),
    }
    settings = [(name, data, eps) for name, data in datasets.items() for eps in (0.5, 5.0)]
    times = {i: [] for i in range(len(settings))}
    cpu = {i: [] for i in range(len(settings))}
    loads = []
    for r in range(rounds):
        for i, (_name, data, eps) in enumerate(settings):
            model = PrivateFrechetMean(
                space, epsilon=eps, center=center, radius=radius, mechanism="kng", random_state=r
            )
            t, c = time.perf_counter(), time.process_time()
            model.fit(data)
            times[i].append(time.perf_counter() - t)
            cpu[i].append(time.process_time() - c)
            assert model.mechanism_.exact
        loads.append(os.getloadavg()[0])
    print(f"\nKNG on affine SPD(8), r = 3, n = 200 (route spd-tangent), median of {rounds} interleaved rounds")
    print(
        f"  {'data':<26}{'ε':>5}{'ms/fit':>10}{'CPU ms':>9}{'acceptance':>12}  (load average "
        f"{min(loads):.1f}–{max(loads):.1f} on {os.cpu_count()} cores)"
    )
    for i, (name, data, eps) in enumerate(settings):
        scale = 2 * frechet_mean_sensitivity(space, radius, len(data), "kng") / eps
        law = KNGDistribution(space, data, scale, center=center, radius=radius)
        law.sample(200, rng=0)
        print(
            f"  {name:<26}{eps:>5}{np.median(times[i]) * 1e3:10.1f}{np.median(cpu[i]) * 1e3:9.1f}"
            f"{law.acceptance_rate:12.3f}"
        )


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mh", action="store_true", help="also time the MH releases at high dimension (minutes)")
    parser.add_argument("--targets", action="store_true", help="only issue 22's targets")
    parser.add_argument("--spd", action="store_true", help="only KNG on affine SPD(8), adversarial data included")
    args = parser.parse_args()
    if args.targets:
        issue_targets(with_mh=args.mh)
        raise SystemExit
    if args.spd:
        spd_affine_targets()
        raise SystemExit
    timing()
    acceptance_table()
    high_dimension(with_mh=args.mh)
    kendall_private_mean()
    issue_targets(with_mh=args.mh)
    spd_affine_targets()
