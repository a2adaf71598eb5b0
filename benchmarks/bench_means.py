"""Benchmark: Fréchet means against their floors and anchors, every row of issue 24's table in one run.

Each row times geodp (validation included) against an anchor on the same data, in rounds whose
order alternates (the anchor runs first in even rounds, second in odd ones); a row reports the
median of the per-round ratios (geodp time / anchor time: below 1, geodp is faster) and the
median times. Data of two spreads: "centred" and "spread" (defined per space below).

1. Affine-invariant SPD(k) against pyRiemann's ``mean_riemann`` at equal gradient norm: each
   round runs pyRiemann (tol 1e-8), measures the true gradient norm g of its answer (untimed),
   then runs geodp with ``tol=g`` (so geodp stops at least as close to the mean). Records
   ``expm(S)``, ``vecd(S)`` Gaussian with ``E‖S‖_F = 1`` (centred) or 3 (spread).
2. Log-Euclidean SPD(k): geodp's ``frechet_mean`` against pyRiemann's ``mean_logeuclid`` and
   against one batched ``numpy.linalg.eigh`` of the records (the floor).
3. Sphere(d) and Hyperbolic(d) against a plain numpy Karcher loop (two matrix–vector products per
   step, start at the normalised or lifted extrinsic mean, step 1), both stopped at gradient norm
   1e-10; peak memory (tracemalloc) of each, relative to the input's size. Sphere: records within
   0.7 (centred) or 1.4 (spread) of a pole. Hyperbolic: records in the ball of radius 1.5 about
   the origin (centred) or of radius 2.5 about a point at distance 1 from it (spread: distances
   from the origin up to 3.5). The loops stop after 300 steps (the note then shows how far apart
   the two means are).

``--only spd|sphere|hyperbolic`` runs one family of rows, ``--max-n 100`` only the rows with at
most 100 records (each row draws its data from its own seed, so a row's data do not depend on which
rows run). ``--clock cpu`` times the process's CPU time instead of the wall clock: on a loaded
machine a call of a few milliseconds waits for a core for tens of milliseconds in some rounds (the
scheduler's time slice), which swamps the wall-clock medians of the n = 100 rows. ``--grid quick``
(the default) covers k = 3–128 and d = 2–1000 at n = 100 and 10³–10⁵ (smaller n at larger k);
``--grid full`` adds n = 10⁴–10⁵ for SPD and n = 10⁵–10⁶ on the sphere and hyperboloid (minutes,
GBs). ``--dask N`` adds the out-of-core run: N SPD(3) records written chunk by chunk to a
memory-mapped ``.npy`` in the temporary directory (deleted afterwards), read lazily as a Dask array
(chunks of 10⁶ records; :func:`geodp.dask_support.read_npy`, not ``from_array`` of a memmap, which
dask copies into memory), log-Euclidean mean (and affine-invariant with ``--dask-ai``), each in a
fresh subprocess whose peak RSS and peak anonymous RSS (the heap, without the mapped store's pages)
are reported.

``--only le`` runs the log-Euclidean SPD rows alone (without the affine-invariant ones).

Run: ``python benchmarks/bench_means.py [--rounds 5] [--grid quick|full] [--dask 10000000 [--dask-ai]]``
(pyRiemann and dask come with the test extras).
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
from geodp.manifolds import SPD, Hyperbolic, Sphere
from geodp.manifolds import matrix_functions as mf

CLOCK = {"wall": time.perf_counter, "cpu": time.process_time}
clock = CLOCK["wall"]


def timed(fn):
    t = clock()
    out = fn()
    return clock() - t, out


def interleaved(ours, anchor, rounds):
    """Median ratio and median times of ``ours`` against ``anchor``; the anchor runs first in even rounds."""
    pairs = []
    for r in range(rounds):
        if r % 2 == 0:
            b = timed(anchor)[0]
            a = timed(ours)[0]
        else:
            a = timed(ours)[0]
            b = timed(anchor)[0]
        pairs.append((a, b))
    mine, theirs = np.array(pairs).T
    return float(np.median(mine / theirs)), float(np.median(mine)), float(np.median(theirs))


def peak_memory(fn):
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


# ------------------------------------------------------------------------------- SPD
SPREADS = {"centred": 1.0, "spread": 3.0}


def spd_data(k, n, rng, spread):
    """``expm(S)`` with ``vecd(S)`` Gaussian, ``E‖S‖_F ≈ spread``."""
    dim = k * (k + 1) // 2
    return mf.expm(mf.invvecd(spread / np.sqrt(dim) * rng.standard_normal((n, dim)), k))


def ai_grad(space, mean, X):
    return float(space.norm(mean, space.log(mean, X).mean(axis=0)))


def bench_ai(X, rounds):
    from pyriemann.utils.mean import mean_riemann

    space = SPD(X.shape[-1])
    anchor = lambda: mean_riemann(X, tol=1e-8, maxiter=200)  # noqa: E731
    g_p = ai_grad(space, anchor(), X)
    ratio, mine, theirs = interleaved(lambda: frechet_mean(space, X, tol=g_p), anchor, rounds)
    g_mine = ai_grad(space, frechet_mean(space, X, tol=g_p), X)
    return ratio, mine, theirs, f"grad {g_mine:.1e} vs {g_p:.1e}"


def bench_le(X, rounds):
    from pyriemann.utils.mean import mean_logeuclid

    space = SPD(X.shape[-1], metric="log-euclidean")
    ours = lambda: frechet_mean(space, X)  # noqa: E731
    runs = {"eigh": lambda: np.linalg.eigh(X), "pyRiemann": lambda: mean_logeuclid(X)}
    times = {name: [] for name in ["geodp", *runs]}
    for r in range(rounds):
        order = ["geodp", *runs] if r % 2 == 0 else [*runs, "geodp"][::-1]
        for name in order:
            times[name].append(timed(ours if name == "geodp" else runs[name])[0])
    t = {name: np.array(v) for name, v in times.items()}
    return {name: (float(np.median(t["geodp"] / t[name])), float(np.median(t[name]))) for name in runs} | {
        "geodp": float(np.median(t["geodp"]))
    }


# ------------------------------------------------------------------ sphere, hyperboloid
def sphere_loop(X, tol=1e-10, max_iter=300):
    """The floor on the unit sphere: normalised-mean start, step 1, two matrix–vector products per step."""
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


def hyperbolic_loop(X, tol=1e-10, max_iter=300):
    """The floor on the unit hyperboloid: lifted-mean start, step 1, two matrix–vector products per
    step (cosh θ_i = −⟨m, x_i⟩_L, the direction Σ θ_i/sinh θ_i (x_i − cosh θ_i m)/n)."""
    n = X.shape[0]
    m = X.sum(axis=0) / n
    m[0] = np.sqrt(1.0 + m[1:] @ m[1:])
    for _ in range(max_iter):
        c = np.maximum(m[0] * X[:, 0] - X[:, 1:] @ m[1:], 1.0)
        theta = np.arccosh(c)
        s = np.sinh(theta)
        a = np.where(s > 0, theta / np.where(s > 0, s, 1.0), 1.0)
        v = (X.T @ a) / n - (a @ c / n) * m
        g = np.sqrt(max(v[1:] @ v[1:] - (m[1:] @ v[1:] / m[0]) ** 2, 0.0))  # Minkowski norm of the tangent v
        if g < tol:
            break
        m = np.cosh(g) * m + np.sinh(g) * v / g
        m[0] = np.sqrt(1.0 + m[1:] @ m[1:])
    return m


def sphere_data(d, n, rng, spread):
    space = Sphere(d)
    pole = np.zeros(d + 1)
    pole[0] = 1.0
    radius = {"centred": 0.7, "spread": 1.4}[spread]
    u = space.random_unit_tangent(pole, size=n, rng=rng)
    return np.ascontiguousarray(space._polar_exp(pole, u, radius * rng.uniform(size=n) ** (1.0 / d)))


def hyperbolic_data(d, n, rng, spread):
    space = Hyperbolic(d)
    centre = space.origin
    if spread == "spread":
        centre = space.exp(centre, space.random_unit_tangent(centre, rng=rng))
    radius = {"centred": 1.5, "spread": 2.5}[spread]
    u = space.random_unit_tangent(centre, size=n, rng=rng)
    return np.ascontiguousarray(space.project(space._polar_exp(centre, u, radius * rng.uniform(size=n) ** (1.0 / d))))


def bench_loop(space, X, loop, rounds):
    ours = lambda: frechet_mean(space, X, tol=1e-10)  # noqa: E731
    anchor = lambda: loop(X, tol=1e-10)  # noqa: E731
    ratio, mine, theirs = interleaved(ours, anchor, rounds)
    gap = float(space.dist(ours(), anchor()))
    memory = peak_memory(ours) / X.nbytes, peak_memory(anchor) / X.nbytes
    return ratio, mine, theirs, f"memory {memory[0]:.2f}× vs {memory[1]:.2f}× the input; means {gap:.0e} apart"


GRIDS = {
    "quick": {
        "spd": [
            (3, 100),
            (3, 10_000),
            (10, 100),
            (10, 10_000),
            (32, 100),
            (32, 2_000),
            (64, 100),
            (64, 1_000),
            (128, 100),
        ],
        "sphere": [(2, 100), (2, 100_000), (100, 100), (100, 100_000), (1000, 100), (1000, 10_000)],
        "hyperbolic": [(2, 100), (2, 100_000), (10, 100_000), (100, 100), (100, 100_000), (1000, 100), (1000, 10_000)],
    },
    "full": {
        "spd": [(3, 100_000), (10, 100_000), (32, 10_000), (64, 10_000), (128, 1_000)],
        "sphere": [(2, 1_000_000), (100, 1_000_000), (1000, 100_000)],
        "hyperbolic": [(2, 1_000_000), (100, 1_000_000), (1000, 100_000)],
    },
}


def row(mean, size, n, spread, ratio, mine, theirs, note=""):
    print(f"| {mean} | {size} | {n:,} | {spread} | {ratio:.2f} | {mine:.4f} s | {theirs:.4f} s | {note} |", flush=True)


def row_rng(family, size, n, spread):
    """Each row's own generator: a row's data do not depend on which other rows run."""
    return np.random.default_rng([["spd", "sphere", "hyperbolic"].index(family), size, n, list(SPREADS).index(spread)])


def in_memory(rounds, grid, only=None, max_n=None):
    print("| mean / anchor | k or d | n | data | ratio (median) | geodp | anchor | note |")
    print("|---|---|---|---|---|---|---|---|")
    grids = [GRIDS["quick"]] + ([GRIDS["full"]] if grid == "full" else [])
    sizes = {family: [p for g in grids for p in g[family] if max_n is None or p[1] <= max_n] for family in grids[0]}
    for spread in SPREADS if only in (None, "spd", "le") else []:
        for k, n in sizes["spd"]:
            X = spd_data(k, n, row_rng("spd", k, n, spread), SPREADS[spread])
            if only != "le":
                ratio, mine, theirs, note = bench_ai(X, rounds)
                row("AI-SPD / pyRiemann mean_riemann", k, n, spread, ratio, mine, theirs, note)
            le = bench_le(X, rounds)
            row("LE-SPD / pyRiemann mean_logeuclid", k, n, spread, le["pyRiemann"][0], le["geodp"], le["pyRiemann"][1])
            row("LE-SPD / one batched eigh", k, n, spread, le["eigh"][0], le["geodp"], le["eigh"][1])
    for name, make, loop, cls in [
        ("Sphere", sphere_data, sphere_loop, Sphere),
        ("Hyperbolic", hyperbolic_data, hyperbolic_loop, Hyperbolic),
    ]:
        for spread in SPREADS if only in (None, name.lower()) else []:
            for d, n in sizes[name.lower()]:
                X = make(d, n, row_rng(name.lower(), d, n, spread), spread)
                row(f"{name} / numpy Karcher loop", d, n, spread, *bench_loop(cls(d), X, loop, rounds))


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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="0: only the out-of-core run")
    parser.add_argument("--grid", choices=sorted(GRIDS), default="quick", help="sizes of the in-memory rows")
    parser.add_argument(
        "--only",
        choices=["spd", "le", "sphere", "hyperbolic"],
        help="one family of rows (le: the log-Euclidean SPD rows alone)",
    )
    parser.add_argument("--max-n", type=int, help="only the rows with at most this many records (e.g. 100)")
    parser.add_argument(
        "--clock",
        choices=sorted(CLOCK),
        default="wall",
        help="wall time, or the process's CPU time (all its threads), which leaves out the waits for a "
        "core on a loaded machine",
    )
    parser.add_argument("--dask", type=int, default=0, help="records in the out-of-core run (0: skip)")
    parser.add_argument("--dask-ai", action="store_true", help="also the affine-invariant mean out of core")
    parser.add_argument("--dask-worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.dask_worker:
        dask_worker(args.dask_worker[0], args.dask_worker[1], int(args.dask_worker[2]))
        return
    global clock
    clock = CLOCK[args.clock]
    load = os.getloadavg()[0]
    print(
        f"load average at start: {load:.2f} on {os.cpu_count()} cores; {args.rounds} interleaved rounds, medians of "
        f"ratios; {args.clock} clock\n"
    )
    if args.rounds:
        in_memory(args.rounds, args.grid, args.only, args.max_n)
        print(f"\nload average at end: {os.getloadavg()[0]:.2f}")
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
