"""Benchmark: every ratio and target of issue 13 ("exact and fast at every size") in one run.

One table, one row per measurement: item of the issue | setting | measured | target | met? —
the item is the issue's "what to build" number, or "done when". Compared runs are interleaved
within a row (the order reverses every other round); a ratio is the median of the per-round
ratios, a time the median over the rounds.

* **1 cost bound: release sweep.** ``PrivateFrechetMean`` (Laplace, n = 100) on S^d and H^d,
  d = 2, 10, 100, 1000, ε = 0.1, 1, 10, r = 0.1, 0.5 (48 releases); whether each is exact is
  decided first, from public quantities, as ``fit`` does. The slowest exact release (median over
  the rounds, caches warm) and the slowest MH release (each timed once; ``--quick``: only the
  first, H^100 at ε = 0.1, r = 0.1). Target: no release over 1 s.
* **2 radial laws: acceptance.** Every radial law of d ∈ {2, …, 1000} × σ ∈ {10⁻⁸, …, 10⁸}
  (S^d untruncated and truncated to t ≤ 0.5, H^d truncated to t ≤ 2 and untruncated where
  normalisable): the worst public acceptance rate (quadrature of the hat) and the worst observed
  one (mean acceptance probability of 4,000 proposals). Target ≥ 0.5.
* **2 radial laws: release.** ``bench_radial``'s releases on S^200 and H^100 (n = 100, ε = 1,
  r = 0.5), whole ``fit``. Targets < 50 ms (S^200, "done when") and < 1 s (H^100, item 1).
* **3 AI-SPD exact.** ``bench_spd_affine``'s laws at k = 10, 16, 32, σ = 0.02: the proven
  acceptance bound, the observed acceptance (20,000 proposals), one exact draw against the MH
  fallback (R21's burn-in of 10,000 steps). Target: exact (bound ≥ the floor 1e-3).
* **4 KNG.** ``bench_kng``'s data, n = 100, ε = 1: the public acceptance bound over the observed
  acceptance (400 draws; ``--quick``: 100), the route and the time per release on SPD(5), H^10
  (r = 1) and S^50 (r = 0.5); the route on Kendall k = 100 (r = 0.2; "done when": exact in
  < 50 ms, or numbers showing why not). **4 MH state cache**: ``bench_mh``'s truncated Laplace on
  SPD(16), one chain, per-step time without / with the cache.
* **5 means.** ``bench_means``: AI-SPD(10) / pyRiemann ``mean_riemann`` at equal gradient norm
  (n = 10⁴; ≤ 0.67, i.e. 1.5× faster), LE-SPD(10) / one batched ``eigh`` (≤ 1.1) and / pyRiemann
  ``mean_logeuclid`` (< 1), Sphere(100) / a numpy Karcher loop (n = 10⁵; ≤ 1) and / geomstats
  (no target), the sphere mean's peak memory / the input's size (≤ 1.5).
* **6 Dask out of core** (only with ``--dask N``, minutes): ``bench_means``' out-of-core
  log-Euclidean mean of 2·10⁶ and N SPD(3) records from a ``.npy`` store; growth of the peak
  anonymous RSS per record (< 4 bytes, the bound ``tests/test_dask.py`` checks).
* **done when: end to end.** ``bench_release_targets``' data: a default
  ``PrivateFrechetMean(SPD(16), epsilon=1, center=I, radius=2)`` fit on 200 covariances, and the
  Laplace on Sphere(200), n = 100 in a polar cap of radius 0.5, whole ``fit``. Target: exact,
  < 50 ms.

The data, laws and anchors come from the other scripts (imported); the sweeps, the KNG rows and
the end-to-end cases are written here, since those scripts only print them.

Run: ``python benchmarks/bench_summary.py [--rounds 7] [--quick] [--csv FILE] [--dask N]``
(≈ 5–10 min on 2 cores; ``--quick``: 3 rounds, 100 KNG draws, 500 MH steps, one geomstats round
and one timed MH release, < 3 min).
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_kng
import bench_means
import bench_mh
import bench_radial
import bench_release_targets
import bench_spd_affine
from geodp.datasets.synthetic import polar_cap
from geodp.distributions.laplace import ACCEPTANCE_FLOOR
from geodp.distributions.radial import RadialLaw
from geodp.manifolds import SPD, Hyperbolic, KendallShape, Sphere
from geodp.mechanisms import KNGMechanism, LaplaceMechanism
from geodp.models import PrivateFrechetMean
from geodp.models.frechet_mean import release_sensitivity
from geodp.sensitivity import frechet_mean_sensitivity

COLUMNS = ("item", "setting", "measured", "target", "met")


def row(item, setting, measured, target, met):
    """One line of the table; ``met`` is True, False or None (no target)."""
    return dict(zip(COLUMNS, (item, setting, measured, target, {True: "yes", False: "NO", None: "–"}[met])))


def interleave(runs, rounds):
    """Time each callable of ``runs`` once per round, the order reversed every other round.

    Returns
    -------
    dict
        name → array of the ``rounds`` times in seconds.
    """
    names = list(runs)
    times = {name: [] for name in names}
    for r in range(rounds):
        for name in names if r % 2 == 0 else names[::-1]:
            times[name].append(bench_means.timed(runs[name])[0])
    return {name: np.array(t) for name, t in times.items()}


def ms(seconds):
    """Seconds, written in milliseconds."""
    return f"{1e3 * seconds:.1f} ms"


# ------------------------------------------------------------------ 1–2: release sweep, radial laws
def radial_acceptance():
    """Worst public and observed acceptance of the exact radial samplers over the sweep."""
    rng = np.random.default_rng(0)
    worst_bound, worst_observed, count = (math.inf, ""), (math.inf, ""), 0
    for d in (2, 3, 5, 10, 20, 50, 100, 200, 500, 1000):
        for scale in 10.0 ** np.arange(-8, 9):
            laws = [(Sphere(d), math.inf), (Sphere(d), 0.5), (Hyperbolic(d), 2.0)]
            laws += [(Hyperbolic(d), math.inf)] if scale * (d - 1) < 1 else []
            for space, t_max in laws:
                law = RadialLaw(space, scale, t_max)
                _, log_accept = law._propose(4000, rng)
                label = f"{space!r}, σ = {scale:g}, t ≤ {t_max:g}"
                worst_bound = min(worst_bound, (law.acceptance_rate, label))
                worst_observed = min(worst_observed, (float(np.mean(np.exp(log_accept))), label))
                count += 1
    setting = f"{count} laws: S^d, H^d, d = 2–1000, σ = 1e-8–1e8"
    return [
        row(
            "2 radial laws: acceptance",
            setting,
            f"public {worst_bound[0]:.3f} ({worst_bound[1]}); observed {worst_observed[0]:.3f} ({worst_observed[1]})",
            "≥ 0.5",
            min(worst_bound[0], worst_observed[0]) >= 0.5,
        )
    ]


def release_sweep(rounds, quick):
    """Slowest ``PrivateFrechetMean`` Laplace release over dimensions, ε and radii; whether each
    release is exact is decided beforehand, from public quantities, as ``fit`` decides it."""
    exact, mh = {}, {}
    for d in (2, 10, 100, 1000):
        for space in (Sphere(d), Hyperbolic(d)):
            center = np.eye(d + 1)[0]
            for radius in (0.1, 0.5):
                v = space.random_tangent(center, size=100, rng=0)
                X = space.exp(center, 0.6 * radius * v / np.sqrt(d))
                bound, margin, _ = release_sensitivity(space, radius, 100, "laplace")
                for eps in (0.1, 1.0, 10.0):
                    mechanism = LaplaceMechanism(
                        space, epsilon=eps, sensitivity=bound + margin, center=center, radius=radius
                    )
                    (exact if mechanism.guarantee.exact else mh)[f"{space!r}, ε = {eps:g}, r = {radius:g}"] = (
                        lambda space=space, center=center, radius=radius, X=X, eps=eps: PrivateFrechetMean(
                            space, epsilon=eps, center=center, radius=radius, random_state=0
                        ).fit(X)
                    )
    warm = interleave(exact, rounds)
    slowest = max(warm, key=lambda name: np.median(warm[name]))
    rows = [
        row(
            "1 cost bound: release sweep",
            f"{len(exact)} exact releases of {len(exact) + len(mh)}: S^d, H^d, "
            "d = 2–1000, ε = 0.1–10, r = 0.1–0.5, n = 100",
            f"slowest {ms(np.median(warm[slowest]))} ({slowest})",
            "< 1 s",
            bool(np.median(warm[slowest]) < 1),
        )
    ]
    if mh:
        timed_mh = {name: bench_means.timed(mh[name])[0] for name in (list(mh)[:1] if quick else mh)}
        worst = max(timed_mh, key=timed_mh.get)
        rows.append(
            row(
                "1 cost bound: release sweep",
                f"{len(mh)} MH releases (truncated laws, public ball bound "
                f"< {ACCEPTANCE_FLOOR:g}); {len(timed_mh)} timed once",
                f"slowest {timed_mh[worst]:.1f} s ({worst})",
                "< 1 s",
                timed_mh[worst] < 1,
            )
        )
    return rows


def high_dimension_releases(rounds):
    """``bench_radial``'s releases on Sphere(200) and Hyperbolic(100)."""
    spaces = {Sphere(200): (0.05, "< 50 ms"), Hyperbolic(100): (1.0, "< 1 s")}
    data = {space: bench_radial.dataset(space) for space in spaces}
    runs = {space: (lambda space=space: bench_radial.release(space, *data[space], seed=1)) for space in spaces}
    exact = {space: runs[space]().privacy_report_.to_dict()["exact"] for space in spaces}
    times = interleave(runs, rounds)
    return [
        row(
            "2 radial laws: release",
            f"{space!r}, n = {bench_radial.N}, ε = {bench_radial.EPSILON:g}, r = {bench_radial.RADIUS}, whole fit",
            f"{ms(np.median(times[space]))}, exact {exact[space]}",
            f"exact, {target}",
            exact[space] and np.median(times[space]) < limit,
        )
        for space, (limit, target) in spaces.items()
    ]


# ------------------------------------------------------------------ 3: affine-invariant SPD
def spd_affine(rounds):
    """Exact AI-SPD eigenvalue sampler vs its MH fallback at k = 10, 16, 32, σ = 0.02."""
    rows = []
    configs = [(k, 0.02) for k in (10, 16, 32)]
    for c in configs:  # warm the caches (hat, bound)
        bench_spd_affine.exact_release(*c, np.random.default_rng(0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k, scale in configs:
            rng = np.random.default_rng(k)
            times = interleave(
                {
                    "exact": lambda k=k, scale=scale, rng=rng: bench_spd_affine.exact_release(k, scale, rng),
                    "MH": lambda k=k, scale=scale, rng=rng: bench_spd_affine.mh_release(k, scale, rng),
                },
                rounds,
            )
            law = bench_spd_affine.law_for(k, scale)._eigen
            observed = float(np.mean(np.exp(law._propose(20_000, np.random.default_rng(1))[1])))
            trunc = f", t ≤ {law.t_max:g}" if math.isfinite(law.t_max) else ""
            rows.append(
                row(
                    "3 AI-SPD exact",
                    f"SPD({k}), σ = {scale}{trunc}, one draw",
                    f"bound {law.acceptance_rate:.3f}, observed {observed:.3f}; exact "
                    f"{ms(np.median(times['exact']))}, MH/exact {np.median(times['MH'] / times['exact']):.0f}×",
                    f"exact (bound ≥ {ACCEPTANCE_FLOOR:g})",
                    law.acceptance_rate >= ACCEPTANCE_FLOOR,
                )
            )
    return rows


# ------------------------------------------------------------------ 4: KNG and MH
def kng(rounds, draws):
    """Public bound vs observed acceptance and the route of KNG at high dimension."""
    rows = []
    for space, radius in [(SPD(5), 1.0), (Hyperbolic(10), 1.0), (Sphere(50), 0.5), (KendallShape(100), 0.2)]:
        center, X = bench_kng.data_in_ball(space, radius, 100, 0)
        mech = KNGMechanism(
            space,
            epsilon=1.0,
            sensitivity=frechet_mean_sensitivity(space, radius, 100, "kng"),
            center=center,
            radius=radius,
        )
        setting = f"{space!r}, r = {radius}, n = 100, ε = 1"
        kendall = isinstance(space, KendallShape)  # "done when": exact in < 50 ms, or numbers why not
        item, target = ("4 KNG / done when", "exact, < 50 ms") if kendall else ("4 KNG", "exact")
        if not mech.exact:
            rows.append(
                row(
                    item,
                    setting,
                    f"route {mech._route}, public bound {mech.acceptance_bound:.2g}: MH ({mech._proposal_sampler})",
                    target,
                    False,
                )
            )
            continue
        rng = np.random.default_rng(5)
        times = interleave({"release": lambda mech=mech, X=X, rng=rng: mech.randomise(X, rng=rng)}, rounds)["release"]
        law = mech.distribution(X)
        law.sample(draws, rng=6)
        rows.append(
            row(
                item,
                setting,
                f"route {mech._route}: public bound {mech.acceptance_bound:.2g} / observed "
                f"{law.acceptance_rate:.2g} = {mech.acceptance_bound / law.acceptance_rate:.2g}; "
                f"{ms(np.median(times))} per release",
                target,
                not kendall or np.median(times) < 0.05,
            )
        )
    return rows


def mh_cache(rounds, steps):
    """MH per-step time without / with the state cache (``bench_mh``'s SPD(16) Laplace case)."""
    name, run = bench_mh.laplace_case(16, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        times = interleave({"plain": lambda: run(False, steps, 0), "cached": lambda: run(True, steps, 0)}, rounds)
    return [
        row(
            "4 MH state cache",
            f"{name}, {steps} steps",
            f"uncached / cached {np.median(times['plain'] / times['cached']):.2f}×; "
            f"{1e6 * np.median(times['cached']) / steps:.0f} µs/step cached",
            "> 1× (cache used)",
            bool(np.median(times["plain"] / times["cached"]) > 1),
        )
    ]


# ------------------------------------------------------------------ 5: means
def means(rounds, geomstats_rounds):
    """``bench_means``' ratios."""
    rng = np.random.default_rng(0)
    ratio, _, _, note = bench_means.bench_ai(10, 10_000, rounds, rng)
    rows = [
        row(
            "5 means",
            "AI-SPD(10) / pyRiemann mean_riemann, n = 10,000, equal gradient norm",
            f"{ratio:.2f} ({note})",
            "≤ 0.67",
            ratio <= 0.67,
        )
    ]
    vs_eigh, vs_pyr, *_ = bench_means.bench_le(10, 10_000, rounds, rng)
    rows += [
        row("5 means", "LE-SPD(10) / one batched eigh, n = 10,000", f"{vs_eigh:.2f}", "≤ 1.1", vs_eigh <= 1.1),
        row("5 means", "LE-SPD(10) / pyRiemann mean_logeuclid, n = 10,000", f"{vs_pyr:.2f}", "< 1", vs_pyr < 1),
    ]
    s = bench_means.bench_sphere(100, 100_000, rounds, rng, geomstats_rounds=geomstats_rounds)
    rows += [
        row(
            "5 means",
            "Sphere(100) / numpy Karcher loop, n = 100,000, tol 1e-10",
            f"{s['vs_loop']:.2f}",
            "≤ 1",
            s["vs_loop"] <= 1,
        ),
        row(
            "5 means",
            "Sphere(100) peak memory / input size (tracemalloc)",
            f"{s['geodp_mem']:.2f} (loop {s['loop_mem']:.2f})",
            "≤ 1.5",
            s["geodp_mem"] <= 1.5,
        ),
    ]
    if "vs_geomstats" in s:
        rows.append(
            row(
                "5 means",
                f"Sphere(100) / geomstats FrechetMean, {geomstats_rounds} round(s)",
                f"{s['vs_geomstats']:.2f} (geomstats grad {s['geomstats_grad']:.1e})",
                "–",
                None,
            )
        )
    return rows


# ------------------------------------------------------------------ 6: out of core
def dask_memory(n, base=2_000_000):
    """Peak anonymous RSS of ``bench_means``' out-of-core log-Euclidean mean at ``base`` (two
    chunks) and ``n`` records, and its growth per record between the two."""
    peaks = {}
    for m in (base, n):
        _, _, ((_, peaks[m]),) = bench_means.bench_dask(m, False)
    growth = (peaks[n]["peak_anon"] - peaks[base]["peak_anon"]) / (n - base)
    return [
        row(
            "6 Dask out of core",
            f"LE-SPD(3) mean, {base:,} → {n:,} records in a .npy store, chunks of 10⁶",
            f"peak anonymous RSS {peaks[base]['peak_anon'] / 1e6:.0f} → {peaks[n]['peak_anon'] / 1e6:.0f} MB "
            f"({growth:.2f} B/record); {peaks[n]['seconds']:.1f} s at {n:,}",
            "independent of n (< 4 B/record)",
            growth < 4,
        )
    ]


# ------------------------------------------------------------------ done when: end to end
def end_to_end(rounds):
    """``bench_release_targets``' two releases, whole ``fit``, interleaved."""
    X16 = bench_release_targets.spd_records(200, 16, 1.9)
    XS = polar_cap(100, radius=0.5, dim=200, rng=1)
    north = np.eye(201)[-1]
    runs = {
        "default SPD(16) affine Laplace, n = 200, center I, r = 2": lambda: PrivateFrechetMean(
            SPD(16), epsilon=1.0, center=np.eye(16), radius=2.0
        ).fit(X16),
        "Sphere(200) Laplace, n = 100 (polar cap), r = 0.5": lambda: PrivateFrechetMean(
            Sphere(200), epsilon=1.0, center=north, radius=0.5
        ).fit(XS),
    }
    exact = {name: fit().privacy_report_.to_dict()["exact"] for name, fit in runs.items()}
    times = interleave(runs, rounds)
    return [
        row(
            "done when: end to end",
            f"{name}, ε = 1, whole fit",
            f"{ms(np.median(times[name]))} (min {ms(times[name].min())}), exact {exact[name]}",
            "exact, < 50 ms",
            exact[name] and np.median(times[name]) < 0.05,
        )
        for name in runs
    ]


# ------------------------------------------------------------------ output
def versions():
    import pyriemann

    import geodp

    try:
        import geomstats

        gs = geomstats.__version__
    except ImportError:
        gs = "not installed"
    return f"geodp {geodp.__version__}, numpy {np.__version__}, pyriemann {pyriemann.__version__}, geomstats {gs}"


def print_table(rows):
    print("| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS))
    for r in rows:
        print("| " + " | ".join(str(r[c]) for c in COLUMNS) + " |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rounds", type=int, default=None, help="interleaved rounds per row (default 7; 3 with --quick)"
    )
    parser.add_argument(
        "--quick", action="store_true", help="3 rounds, fewer KNG draws, MH steps and timed MH releases"
    )
    parser.add_argument("--csv", metavar="FILE", help="also write the table as CSV")
    parser.add_argument(
        "--dask", type=int, default=0, metavar="N", help="add the out-of-core row (2·10⁶ and N records)"
    )
    args = parser.parse_args()
    if args.dask and args.dask <= 2_000_000:
        parser.error("--dask N compares N records with 2,000,000: give N > 2,000,000")
    rounds = args.rounds or (3 if args.quick else 7)
    start = time.perf_counter()
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    print(
        f"{versions()}; {rounds} interleaved rounds per row, medians of per-round ratios"
        + (
            "; --quick: 100 KNG draws, 500 MH steps, 1 geomstats round, one MH release of the sweep timed"
            if args.quick
            else ""
        )
    )
    rows = release_sweep(rounds, args.quick)
    rows += radial_acceptance()
    rows += high_dimension_releases(rounds)
    rows += spd_affine(rounds)
    rows += kng(rounds, 100 if args.quick else 400)
    rows += mh_cache(rounds, 500 if args.quick else 2000)
    rows += means(rounds, 1 if args.quick else 3)
    rows += dask_memory(args.dask) if args.dask else []
    rows += end_to_end(rounds)
    print()
    print_table(rows)
    print(
        f"\nload average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
        f"{time.perf_counter() - start:.0f} s in all"
    )
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=COLUMNS)
            writer.writeheader()
            writer.writerows(rows)


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        main()
