"""Benchmark: Fréchet means against their floors and anchors, every ratio in one run.

1. Affine-invariant SPD(k) against pyRiemann's ``mean_riemann`` at equal gradient norm: each
   round runs pyRiemann (tol 1e-8), measures the true gradient norm g of its answer (untimed),
   then runs geodp with ``tol=g`` (so geodp stops at least as close to the mean). k = 3, 10
   (n = 10⁴) and k = 30 (n = 2,000).
2. Log-Euclidean SPD(10), n = 10⁴: geodp's ``frechet_mean`` (validation included) against one
   batched ``numpy.linalg.eigh`` of the data and against pyRiemann's ``mean_logeuclid``.
3. Sphere(100), n = 10⁵ records within 0.7 of a pole: geodp (validation included) against a
   plain numpy Karcher loop (two matrix–vector products per step, normalised-mean start, step 1)
   stopped at the same gradient norm 1e-10, and against geomstats' ``FrechetMean``; peak memory
   (tracemalloc) of each, relative to the input's size.

Rounds are interleaved (the order alternates) and each row is the median of per-round ratios.
``--dask N`` adds the out-of-core run: N SPD(3) records written chunk by chunk to a memory-mapped
``.npy`` in the temporary directory (deleted afterwards), read lazily as a Dask array (chunks of
10⁶ records; :func:`geodp.dask_support.read_npy`, not ``from_array`` of a memmap, which dask copies into memory),
log-Euclidean mean (and affine-invariant with ``--dask-ai``), each in a fresh subprocess whose
peak RSS and peak anonymous RSS (the heap, without the mapped store's pages) are reported.

Run: ``python benchmarks/bench_means.py [--rounds 7] [--dask 10000000 [--dask-ai]]`` (pyRiemann,
geomstats and dask come with the test extras).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
import warnings

import numpy as np

from geodp import frechet_mean
from geodp.manifolds import SPD, Sphere
from geodp.manifolds import matrix_functions as mf


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def spd_data(k, n, rng, spread=0.5):
    return mf.expm(mf.invvecd(spread * rng.standard_normal((n, k * (k + 1) // 2)), k))


def ai_grad(space, mean, X):
    return float(space.norm(mean, space.log(mean, X).mean(axis=0)))


def bench_ai(k, n, rounds, rng):
    from pyriemann.utils.mean import mean_riemann

    X = spd_data(k, n, rng)
    space = SPD(k)
    ratios, mine, theirs, grads = [], [], [], []
    for r in range(rounds):
        t_p, m_p = timed(lambda: mean_riemann(X, tol=1e-8, maxiter=200))
        g_p = ai_grad(space, m_p, X)
        t_g, m_g = timed(lambda: frechet_mean(space, X, tol=g_p))  # noqa: B023
        if r % 2:  # alternate the order: the anchor runs second in odd rounds
            t_p, _ = timed(lambda: mean_riemann(X, tol=1e-8, maxiter=200))
        ratios.append(t_g / t_p)
        mine.append(t_g)
        theirs.append(t_p)
        grads.append((ai_grad(space, m_g, X), g_p))
    g_mine, g_theirs = np.median(np.array(grads), axis=0)
    return (
        float(np.median(ratios)),
        float(np.median(mine)),
        float(np.median(theirs)),
        f"grad {g_mine:.1e} vs {g_theirs:.1e}",
    )


def bench_le(k, n, rounds, rng):
    from pyriemann.utils.mean import mean_logeuclid

    X = spd_data(k, n, rng)
    space = SPD(k, metric="log-euclidean")
    runs = {
        "geodp": lambda: frechet_mean(space, X),
        "eigh": lambda: np.linalg.eigh(X),
        "pyRiemann": lambda: mean_logeuclid(X),
    }
    times = {name: [] for name in runs}
    for r in range(rounds):
        for name in list(runs) if r % 2 == 0 else list(runs)[::-1]:
            times[name].append(timed(runs[name])[0])
    t = {name: np.array(v) for name, v in times.items()}
    return (
        float(np.median(t["geodp"] / t["eigh"])),
        float(np.median(t["geodp"] / t["pyRiemann"])),
        float(np.median(t["geodp"])),
        float(np.median(t["eigh"])),
        float(np.median(t["pyRiemann"])),
    )


def numpy_karcher_loop(X, tol=1e-10, max_iter=1000):
    """The floor: normalised-mean start, step 1, two matrix–vector products per step."""
    n = X.shape[0]
    m = X.sum(axis=0)
    m /= np.linalg.norm(m)
    for _ in range(max_iter):
        c = np.clip(X @ m, -1.0, 1.0)
        theta = np.arccos(c)
        s = np.sin(theta)
        a = np.where(s > 0, theta / np.where(s > 0, s, 1.0), 1.0)
        v = (X.T @ a) / n - (a @ c / n) * m
        g = np.linalg.norm(v)
        if g < tol:
            break
        m = np.cos(g) * m + np.sin(g) * v / g
        m /= np.linalg.norm(m)
    return m


def peak_memory(fn):
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def bench_sphere(d, n, rounds, rng, geomstats_rounds=3):
    space = Sphere(d)
    north = np.zeros(d + 1)
    north[0] = 1.0
    u = space.random_unit_tangent(north, size=n, rng=rng)
    X = np.ascontiguousarray(space._polar_exp(north, u, 0.7 * np.sqrt(rng.uniform(size=n))))
    ours = lambda: frechet_mean(space, X, tol=1e-10)  # noqa: E731
    loop = lambda: numpy_karcher_loop(X, tol=1e-10)  # noqa: E731
    pairs = []
    for r in range(rounds):
        a = timed(ours)[0] if r % 2 == 0 else None
        b = timed(loop)[0]
        a = timed(ours)[0] if a is None else a
        pairs.append((a, b))
    t_ours, t_loop = np.array(pairs).T
    row = {
        "vs_loop": float(np.median(t_ours / t_loop)),
        "geodp_s": float(np.median(t_ours)),
        "loop_s": float(np.median(t_loop)),
        "geodp_mem": peak_memory(ours) / X.nbytes,
        "loop_mem": peak_memory(loop) / X.nbytes,
    }
    try:
        from geomstats.geometry.hypersphere import Hypersphere
        from geomstats.learning.frechet_mean import FrechetMean
    except ImportError:
        return row
    est = FrechetMean(Hypersphere(d))
    est.set(max_iter=200, epsilon=1e-10)
    gs_pairs = []
    for _ in range(geomstats_rounds):
        gs_pairs.append((timed(ours)[0], timed(lambda: est.fit(X))[0]))
    mine, theirs = np.array(gs_pairs).T
    est.fit(X)
    m = est.estimate_
    row |= {
        "vs_geomstats": float(np.median(mine / theirs)),
        "geomstats_s": float(np.median(theirs)),
        "geomstats_grad": float(space.norm(m, space.log(m, X).mean(axis=0))),
        "geomstats_mem": peak_memory(lambda: est.fit(X)) / X.nbytes,
    }
    return row


# ------------------------------------------------------------------ out of core (Dask)
def write_spd3_store(path, n, chunk=1_000_000, seed=0):
    """N SPD(3) records L Lᵀ + 0.1 I, written chunk by chunk to a memory-mapped .npy."""
    rng = np.random.default_rng(seed)
    out = np.lib.format.open_memmap(path, mode="w+", dtype=np.float64, shape=(n, 3, 3))
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        L = 0.5 * rng.standard_normal((m, 3, 3))
        out[start : start + m] = L @ np.swapaxes(L, -1, -2) + 0.1 * np.eye(3)
    out.flush()
    del out


def _status(field) -> int:
    """A memory field of ``/proc/self/status`` (Linux), in bytes."""
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(field + ":"))


def _anonymous_rss() -> int:
    """Resident anonymous memory of this process (Linux), in bytes: the heap, not the pages of the
    memory-mapped store, which the kernel counts in the RSS while they sit in the page cache."""
    return _status("RssAnon")


def dask_worker(path, metric, chunk):
    """Run in a subprocess: the mean of the store, its time, the peak RSS and the peak anonymous
    RSS (polled every 20 ms)."""
    import threading

    import dask

    from geodp.dask_support import read_npy

    peak, done = [_anonymous_rss()], threading.Event()

    def poll():
        while not done.wait(0.02):
            peak[0] = max(peak[0], _anonymous_rss())

    threading.Thread(target=poll, daemon=True).start()
    dask.config.set(scheduler="threads", num_workers=2)
    X = read_npy(path, chunk_records=chunk)
    t, (mean, info) = timed(lambda: frechet_mean(SPD(3, metric=metric), X, tol=1e-10, return_info=True))
    done.set()
    # VmHWM, the peak RSS of this process's own address space: getrusage's ru_maxrss survives
    # exec, so after subprocess's vfork it reported the parent's peak (writing the store).
    rss = _status("VmHWM")
    print(
        json.dumps(
            {
                "seconds": t,
                "peak_rss": rss,
                "peak_anon": max(peak[0], _anonymous_rss()),
                "passes": info.n_passes,
                "mean": mean.tolist(),
            }
        )
    )


def bench_dask(n, with_ai, chunk=1_000_000):
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "spd3.npy")
        t_write, _ = timed(lambda: write_spd3_store(path, n, chunk))
        size = os.path.getsize(path)
        for metric in ["log-euclidean"] + (["affine"] if with_ai else []):
            out = subprocess.run(
                [sys.executable, __file__, "--dask-worker", path, metric, str(chunk)],
                check=True,
                capture_output=True,
                text=True,
            )
            rows.append((metric, json.loads(out.stdout.strip().splitlines()[-1])))
    return t_write, size, rows


def in_memory(rounds, rng):
    print("| mean | setting | ratio (median) | geodp | anchor | note |\n|---|---|---|---|---|---|")
    for k, n in [(3, 10_000), (10, 10_000), (30, 2_000)]:
        ratio, mine, theirs, note = bench_ai(k, n, rounds, rng)
        print(
            f"| AI-SPD({k}) / pyRiemann mean_riemann | n = {n:,}, equal gradient norm | {ratio:.2f} | "
            f"{mine:.3f} s | {theirs:.3f} s | {note} |"
        )
    vs_eigh, vs_pyr, mine, t_eigh, t_pyr = bench_le(10, 10_000, rounds, rng)
    print(f"| LE-SPD(10) / one batched eigh | n = 10,000 | {vs_eigh:.2f} | {mine:.3f} s | {t_eigh:.3f} s | |")
    print(f"| LE-SPD(10) / pyRiemann mean_logeuclid | n = 10,000 | {vs_pyr:.2f} | {mine:.3f} s | {t_pyr:.3f} s | |")
    s = bench_sphere(100, 100_000, rounds, rng)
    print(
        f"| Sphere(100) / numpy Karcher loop | n = 100,000, tol 1e-10 | {s['vs_loop']:.2f} | {s['geodp_s']:.3f} s | "
        f"{s['loop_s']:.3f} s | peak memory {s['geodp_mem']:.2f}× vs {s['loop_mem']:.2f}× the input |"
    )
    if "vs_geomstats" in s:
        print(
            f"| Sphere(100) / geomstats FrechetMean | n = 100,000 | {s['vs_geomstats']:.2f} | {s['geodp_s']:.3f} s | "
            f"{s['geomstats_s']:.3f} s | geomstats: grad {s['geomstats_grad']:.1e}, memory {s['geomstats_mem']:.2f}× |"
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="0: only the out-of-core run")
    parser.add_argument("--dask", type=int, default=0, help="records in the out-of-core run (0: skip)")
    parser.add_argument("--dask-ai", action="store_true", help="also the affine-invariant mean out of core")
    parser.add_argument("--dask-worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.dask_worker:
        dask_worker(args.dask_worker[0], args.dask_worker[1], int(args.dask_worker[2]))
        return
    rng = np.random.default_rng(0)
    load = os.getloadavg()[0]
    print(
        f"load average at start: {load:.2f} on {os.cpu_count()} cores; {args.rounds} interleaved rounds, medians of "
        "ratios\n"
    )
    if args.rounds:
        in_memory(args.rounds, rng)
    if args.dask:
        t_write, size, rows = bench_dask(args.dask, args.dask_ai)
        print(
            f"\nOut of core: {args.dask:,} SPD(3) records, {size / 1e9:.2f} GB .npy written in {t_write:.0f} s; "
            "Dask threads, 2 workers, chunks of 10⁶ records\n"
        )
        print(
            "| metric | time | passes | peak RSS (incl. mapped store pages) | peak anonymous RSS |\n"
            "|---|---|---|---|---|"
        )
        for metric, r in rows:
            print(
                f"| {metric} | {r['seconds']:.1f} s | {r['passes']} | {r['peak_rss'] / 1e6:.0f} MB | "
                f"{r['peak_anon'] / 1e6:.0f} MB |"
            )


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        main()
