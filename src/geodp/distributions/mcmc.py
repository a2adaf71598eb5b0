"""Vectorised Riemannian random-walk Metropolis–Hastings with diagnostics (docs/math.md §5).

The fallback sampler for laws without an exact method, and the independent check of the exact
ones. Proposal ``x' = exp_x(s ξ)`` with ``ξ`` a standard Gaussian in an orthonormal basis of
``T_x M``; on the symmetric spaces of geodp (Euclidean, sphere, hyperbolic, Kendall, SPD) this
proposal is symmetric w.r.t. the Riemannian volume, so the acceptance ratio is the density ratio.
The step ``s`` is adapted only during burn-in. MCMC output is only approximately the target law:
a mechanism sampled this way is only approximately DP, and says so.

**State cache.** Each chain keeps its current log-density (never re-evaluated), and on
affine-invariant SPD a factor ``L`` with ``x = L Lᵀ`` and its inverse. The metric is invariant
under every congruence, so ``ξ = L S Lᵀ`` (``vecd S`` standard Gaussian) is a standard Gaussian
tangent vector and ``exp_x(s ξ) = L Exp(s S) Lᵀ``; with ``s S = V diag(w) Vᵀ`` the proposal's
factor is ``L V diag(e^{w/2})``. A step costs one ``k × k`` eigendecomposition plus what the
log-density needs at the proposal (``factored_log_density`` receives the factors, so it needs
no square root of its own).

**Diagnostics** (:class:`MCMCDiagnostics`) are for the curator only: they are computed from the
chain, whose law depends on the private footpoint or data.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from geodp.errors import InvalidParameterError
from geodp.manifolds import matrix_functions as mf
from geodp.manifolds.base import Manifold
from geodp.validation import as_generator, check_positive, check_positive_integer

__all__ = [
    "MCMCDiagnostics",
    "MCMCResult",
    "random_walk_metropolis",
    "effective_sample_size",
    "batch_means_ess",
    "split_rhat",
]

_RECORDED = 1000  # functionals are recorded at most this many times per chain (post burn-in)


@dataclass(frozen=True)
class MCMCDiagnostics:
    """What a chain run reports alongside its samples. **Curator-only**: every number here is
    computed from chains whose law depends on private data; never publish them.

    Attributes
    ----------
    acceptance_rate : float
        Share of accepted proposals after burn-in, over all chains.
    effective_sample_size : float
        ESS of the log-density trace after burn-in, summed over chains (Geyer's initial
        positive sequence); ``nan`` when fewer than 20 steps were recorded.
    step_size : float
        Final (frozen) proposal scale.
    n_chains, burn_in, thinning, n_steps : int
    functional_names : tuple of str
        The public functionals tracked: distance to the (public) start point and a projection
        onto a fixed-seed unit vector of the ambient coordinates.
    functional_ess : tuple of float
        Geyer ESS of each functional over the recorded trace, summed over chains.
    split_rhat : tuple of float
        Split-R̂ (Gelman et al., BDA3 §11.4) of each functional; ``nan`` with one chain.
    record_stride : int
        The functionals were recorded every ``record_stride`` post-burn-in steps.
    """

    acceptance_rate: float
    effective_sample_size: float
    step_size: float
    n_chains: int
    burn_in: int
    thinning: int
    n_steps: int
    functional_names: tuple = ()
    functional_ess: tuple = ()
    split_rhat: tuple = ()
    record_stride: int = 1

    @property
    def min_ess(self) -> float:
        """Smallest ESS over the log-density and the functionals."""
        return float(np.nanmin((self.effective_sample_size,) + tuple(self.functional_ess)))

    @property
    def max_rhat(self) -> float:
        """Largest split-R̂ (``nan`` with one chain)."""
        values = np.asarray(self.split_rhat, dtype=float)
        return float(np.max(values)) if values.size and not np.all(np.isnan(values)) else float("nan")

    def __str__(self) -> str:
        return (
            f"MH: {self.n_chains} chain(s), burn-in {self.burn_in}, thinning {self.thinning}, "
            f"step {self.step_size:.3g}, acceptance {self.acceptance_rate:.2f}, "
            f"ESS {self.effective_sample_size:.0f} (log-density), {self.min_ess:.0f} (min), "
            f"split-R̂ {self.max_rhat:.3f} over {self.n_steps} post-burn-in steps"
        )


@dataclass(frozen=True)
class MCMCResult:
    """``samples`` of shape ``(n_samples, n_chains, *point_shape)`` and their diagnostics."""

    samples: np.ndarray
    diagnostics: MCMCDiagnostics


def effective_sample_size(trace) -> float:
    """ESS of a scalar trace of shape ``(n_steps, n_chains)`` (Geyer 1992, initial positive
    sequence of the chain-averaged autocorrelation).

    For an AR(1) chain with coefficient ρ the ESS is ``n(1 − ρ)/(1 + ρ)``
    (tests/test_mh_diagnostics.py checks it for ρ = −0.5, 0.5, 0.9).

    Examples
    --------
    >>> import numpy as np
    >>> iid = np.random.default_rng(0).standard_normal((2000, 4))
    >>> 6000 < effective_sample_size(iid) < 10000
    True
    """
    x = np.asarray(trace, dtype=float)
    n, m = x.shape
    if n < 20:
        return float("nan")
    x = x - x.mean(axis=0)
    var = np.mean(x**2, axis=0)
    if np.all(var == 0):
        return 1.0
    f = np.fft.rfft(x, n=2 * n, axis=0)
    acov = np.fft.irfft(f * np.conj(f), axis=0)[:n] / n
    rho = np.mean(acov / np.where(var > 0, var, 1.0), axis=1)
    pairs = rho[: n - n % 2].reshape(-1, 2).sum(axis=1)
    negative = np.flatnonzero(pairs <= 0)
    pairs = pairs[: negative[0]] if negative.size else pairs
    tau = -1.0 + 2.0 * np.sum(pairs)
    return float(n * m / max(tau, 1.0 / (n * m)))


def batch_means_ess(trace, n_batches: int | None = None) -> float:
    """ESS of a trace of shape ``(n_steps, n_chains)`` by non-overlapping batch means (Flegal
    & Jones 2010): ``n·m·s²/σ̂²`` with ``σ̂² = b · var(batch means)``, ``b ≈ √n`` steps a batch.

    Examples
    --------
    >>> import numpy as np
    >>> iid = np.random.default_rng(0).standard_normal((4000, 4))
    >>> 10000 < batch_means_ess(iid) < 24000
    True
    """
    x = np.asarray(trace, dtype=float)
    n, m = x.shape
    a = int(n_batches) if n_batches is not None else int(np.sqrt(n))
    if n < 20 or a < 2:
        return float("nan")
    b = n // a
    x = x[: a * b] - x[: a * b].mean(axis=0)
    var = np.mean(x**2)
    if var == 0:
        return 1.0
    means = x.reshape(a, b, m).mean(axis=1)
    sigma2 = b * np.sum(means**2) / ((a - 1) * m)
    return float(a * b * m * var / sigma2)


def split_rhat(trace) -> float:
    """Split-R̂ of a trace of shape ``(n_steps, n_chains)`` (Gelman et al., BDA3 §11.4): each
    chain is cut in halves; ``sqrt(((N−1)/N · W + B/N) / W)``. ``nan`` below 2 chains or 4 steps.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> round(split_rhat(rng.standard_normal((1000, 4))), 2)
    1.0
    >>> split_rhat(rng.standard_normal((1000, 4)) + np.arange(4)) > 1.5  # chains disagree
    True
    """
    x = np.asarray(trace, dtype=float)
    n, m = x.shape
    if m < 2 or n < 4:
        return float("nan")
    half = n // 2
    seqs = np.concatenate([x[:half], x[n - half :]], axis=1)
    means = seqs.mean(axis=0)
    within = float(np.mean(seqs.var(axis=0, ddof=1)))
    between = half * float(np.var(means, ddof=1))
    if within == 0:
        return 1.0 if between == 0 else float("inf")
    return float(np.sqrt(((half - 1) / half * within + between / half) / within))


class _Functionals:
    """The public functionals of the diagnostics: ``ρ(x0, x)`` for the public start ``x0`` (the
    ambient distance on state spaces without a metric, such as the tangent bundle of geodesic
    regression) and ``⟨x − x0, v⟩`` for a fixed-seed unit vector ``v`` of the ambient coordinates."""

    names = ("distance to the start", "fixed projection")

    def __init__(self, space, start):
        self.space, self.start = space, start
        v = np.random.default_rng(0).standard_normal(start.shape)
        self.v = v / np.linalg.norm(v)
        self._distance = space.unchecked.distances_from(start) if isinstance(space, Manifold) else None

    def __call__(self, x):
        axes = tuple(range(1, x.ndim))
        if self._distance is not None:
            dist = np.asarray(self._distance(x), dtype=float)
        else:  # a state space without a metric (the tangent bundle of regression): ambient distance
            dist = np.sqrt(np.sum((x - self.start) ** 2, axis=axes))
        return np.stack([dist, np.sum((x - self.start) * self.v, axis=axes)], axis=-1)


def whitened(space) -> bool:
    """Whether the samplers may keep the chain's states as congruence factors ``x = L Lᵀ`` (the
    space declares the closed form ``"spd-congruence-whitening"``): then a log density may be
    given as ``factored_log_density(x, L, L⁻¹)``."""
    return "spd-congruence-whitening" in space.closed_forms


def random_walk_metropolis(
    space,
    log_density,
    initial,
    n_samples: int = 1,
    *,
    burn_in: int = 10_000,
    thinning: int = 100,
    step_size: float | None = None,
    target_acceptance: float = 0.3,
    in_support=None,
    rng=None,
    progress: bool = False,
    factored_log_density=None,
    state_cache: bool = True,
) -> MCMCResult:
    """Run independent random-walk MH chains in parallel (one per point of ``initial``).

    Parameters
    ----------
    space : Manifold
    log_density : callable
        Unnormalised log-density w.r.t. the Riemannian volume, vectorised over chains.
    initial : array_like, shape (n_chains, *space.point_shape)
        Starting points (inside the support). Start at a public point (a ball's centre), never
        at private data: the burn-in carries the chains to the law.
    n_samples : int, default 1
        Samples kept per chain after burn-in, one every ``thinning`` steps.
    burn_in, thinning : int
        R21's sphere experiments use 10,000 and 100.
    step_size : float, optional
        Initial proposal scale; default ``1/√dim``. Adapted during burn-in
        (Robbins–Monro on ``log s`` toward ``target_acceptance``), then frozen.
    in_support : callable, optional
        Boolean mask over chains; proposals outside are rejected (truncated laws).
    rng : None, int or numpy.random.Generator
    progress : bool
        Show a tqdm progress bar (if tqdm is installed and stderr is a terminal).
    factored_log_density : callable, optional
        Affine-invariant SPD only: ``f(x, L, L_inv)`` equal to ``log_density(x)`` (and ``-inf``
        outside the support) for ``x = L Lᵀ``; used instead of ``log_density`` and
        ``in_support`` so the log-density needs no square root of ``x``.
    state_cache : bool, default True
        On affine-invariant SPD, propose through the cached factor (module docstring). ``False``
        recomputes the square roots every step (the same proposal law; for benchmarks).

    Returns
    -------
    MCMCResult
        Samples, and diagnostics for the curator only (:class:`MCMCDiagnostics`).

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Sphere
    >>> space, north = Sphere(2), np.array([0.0, 0.0, 1.0])
    >>> res = random_walk_metropolis(space, lambda x: -space.dist(north, x) / 0.2,
    ...                              np.tile(north, (8, 1)), n_samples=50, burn_in=500,
    ...                              thinning=5, rng=0)
    >>> res.samples.shape, 0.15 < res.diagnostics.acceptance_rate < 0.5
    ((50, 8, 3), True)
    >>> res.diagnostics.max_rhat < 1.1
    True
    """
    rng = as_generator(rng)
    n_samples, thinning = check_positive_integer(n_samples, "n_samples"), check_positive_integer(thinning, "thinning")
    if not isinstance(burn_in, (int, np.integer)) or burn_in < 0:
        raise InvalidParameterError(f"burn_in must be a non-negative integer, got {burn_in!r}.")
    if not 0 < target_acceptance < 1:
        raise InvalidParameterError(f"target_acceptance must be in (0, 1), got {target_acceptance!r}.")
    x = np.array(initial, dtype=float)
    n_pt = len(space.point_shape)
    n_chains = x.shape[0]
    log_step = np.log(check_positive(step_size, "step_size") if step_size is not None else 1.0 / np.sqrt(space.dim))
    if in_support is not None and not np.all(in_support(x)):
        raise InvalidParameterError("initial points must lie in the support.")
    factored = state_cache and whitened(space)
    if factored:
        # x = L Lᵀ; the symmetric root is one such factor (computed once, for the start only)
        factor, inv_factor = mf.sqrtm_and_invsqrtm(x)
        k = space.k
    if factored and factored_log_density is not None:
        logp = np.asarray(factored_log_density(x, factor, inv_factor), dtype=float)
    else:
        logp = np.asarray(log_density(x), dtype=float)
    if not np.all(np.isfinite(logp)):
        raise InvalidParameterError("log_density is not finite at the initial points.")

    n_post = n_samples * thinning
    stride = max(1, n_post // _RECORDED)
    functionals = _Functionals(space, x[0].copy())
    samples = np.empty((n_samples, n_chains) + space.point_shape)
    trace = np.empty((n_post, n_chains))
    recorded = np.empty((n_post // stride, n_chains, len(_Functionals.names)))
    accepted = 0
    window_acc, window = 0, 0
    steps = range(burn_in + n_post)
    if progress:
        try:
            from tqdm.auto import tqdm

            steps = tqdm(steps, desc="MH", unit="step", disable=None)  # shown on a terminal only
        except ImportError:  # progress bars are a convenience, not a dependency
            pass
    mask_shape = (-1,) + (1,) * n_pt
    for i in steps:
        if factored:
            z = rng.standard_normal((n_chains, space.dim))  # as space._random_tangent draws it
            w, v = np.linalg.eigh(np.exp(log_step) * mf.invvecd(z, k))
            new_factor = factor @ (v * np.exp(0.5 * w)[:, None, :])
            new_inv = (v * np.exp(-0.5 * w)[:, None, :]).swapaxes(-1, -2) @ inv_factor
            proposal = mf.sym(new_factor @ new_factor.swapaxes(-1, -2))
            if factored_log_density is not None:
                logq = np.asarray(factored_log_density(proposal, new_factor, new_inv), dtype=float)
            else:
                logq = np.asarray(log_density(proposal), dtype=float)
        else:
            xi = space.unchecked.random_tangent(x, rng=rng)
            # Re-project each proposal: long chains must not drift off the manifold by rounding.
            proposal = space.project(space.unchecked.exp(x, np.exp(log_step) * xi))
            logq = np.asarray(log_density(proposal), dtype=float)
        ok = np.log(rng.random(n_chains)) < logq - logp
        if in_support is not None and not (factored and factored_log_density is not None):
            ok &= np.asarray(in_support(proposal), dtype=bool)
        x = np.where(ok.reshape(mask_shape), proposal, x)
        if factored:
            factor = np.where(ok[:, None, None], new_factor, factor)
            inv_factor = np.where(ok[:, None, None], new_inv, inv_factor)
        logp = np.where(ok, logq, logp)
        if i < burn_in:
            window_acc += int(ok.sum())
            window += n_chains
            if window >= 50 * n_chains:
                log_step += (window_acc / window - target_acceptance) / np.sqrt(1.0 + i / 500.0)
                window_acc, window = 0, 0
            continue
        j = i - burn_in
        accepted += int(ok.sum())
        trace[j] = logp
        if (j + 1) % stride == 0 and j // stride < len(recorded):
            recorded[j // stride] = functionals(x)
        if (j + 1) % thinning == 0:
            samples[j // thinning] = x
    diagnostics = MCMCDiagnostics(
        acceptance_rate=accepted / (n_chains * n_post),
        effective_sample_size=effective_sample_size(trace),
        step_size=float(np.exp(log_step)),
        n_chains=n_chains,
        burn_in=int(burn_in),
        thinning=int(thinning),
        n_steps=n_post,
        functional_names=_Functionals.names,
        functional_ess=tuple(effective_sample_size(recorded[..., f]) for f in range(recorded.shape[-1])),
        split_rhat=tuple(split_rhat(recorded[..., f]) for f in range(recorded.shape[-1])),
        record_stride=stride,
    )
    return MCMCResult(samples, diagnostics)
