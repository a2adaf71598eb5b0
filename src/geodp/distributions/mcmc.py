"""Vectorised Riemannian random-walk Metropolis–Hastings with diagnostics (docs/math.md §5).

The fallback sampler for laws without an exact method, and the independent check of the exact
ones. Proposal ``x' = exp_x(s ξ)`` with ``ξ`` a standard Gaussian in an orthonormal basis of
``T_x M``; on the symmetric spaces of geodp (Euclidean, sphere, hyperbolic, Kendall, SPD) this
proposal is symmetric w.r.t. the Riemannian volume, so the acceptance ratio is the density ratio.
The step ``s`` is adapted only during burn-in. MCMC output is only approximately the target law:
a mechanism sampled this way is only approximately DP, and says so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from geodp.errors import InvalidParameterError
from geodp.validation import as_generator, check_positive

__all__ = ["MCMCDiagnostics", "MCMCResult", "random_walk_metropolis", "effective_sample_size"]


@dataclass(frozen=True)
class MCMCDiagnostics:
    """What a chain run reports alongside its samples.

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
    """

    acceptance_rate: float
    effective_sample_size: float
    step_size: float
    n_chains: int
    burn_in: int
    thinning: int
    n_steps: int

    def __str__(self) -> str:
        return (
            f"MH: {self.n_chains} chain(s), burn-in {self.burn_in}, thinning {self.thinning}, "
            f"step {self.step_size:.3g}, acceptance {self.acceptance_rate:.2f}, "
            f"ESS {self.effective_sample_size:.0f} over {self.n_steps} post-burn-in steps"
        )


@dataclass(frozen=True)
class MCMCResult:
    """``samples`` of shape ``(n_samples, n_chains, *point_shape)`` and their diagnostics."""

    samples: np.ndarray
    diagnostics: MCMCDiagnostics


def effective_sample_size(trace) -> float:
    """ESS of a scalar trace of shape ``(n_steps, n_chains)`` (Geyer 1992, initial positive
    sequence of the chain-averaged autocorrelation).

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
) -> MCMCResult:
    """Run independent random-walk MH chains in parallel (one per point of ``initial``).

    Parameters
    ----------
    space : Manifold
    log_density : callable
        Unnormalised log-density w.r.t. the Riemannian volume, vectorised over chains.
    initial : array_like, shape (n_chains, *space.point_shape)
        Starting points (inside the support).
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

    Returns
    -------
    MCMCResult

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
    """
    rng = as_generator(rng)
    for name, value in (("n_samples", n_samples), ("thinning", thinning)):
        if not isinstance(value, (int, np.integer)) or value < 1:
            raise InvalidParameterError(f"{name} must be a positive integer, got {value!r}.")
    if not isinstance(burn_in, (int, np.integer)) or burn_in < 0:
        raise InvalidParameterError(f"burn_in must be a non-negative integer, got {burn_in!r}.")
    if not 0 < target_acceptance < 1:
        raise InvalidParameterError(f"target_acceptance must be in (0, 1), got {target_acceptance!r}.")
    x = np.array(initial, dtype=float)
    n_pt = len(space.point_shape)
    n_chains = x.shape[0]
    log_step = np.log(check_positive(step_size, "step_size") if step_size is not None else 1.0 / np.sqrt(space.dim))
    logp = np.asarray(log_density(x), dtype=float)
    if in_support is not None and not np.all(in_support(x)):
        raise InvalidParameterError("initial points must lie in the support.")
    if not np.all(np.isfinite(logp)):
        raise InvalidParameterError("log_density is not finite at the initial points.")

    total = burn_in + n_samples * thinning
    samples = np.empty((n_samples, n_chains) + space.point_shape)
    trace = np.empty((n_samples * thinning, n_chains))
    accepted = 0
    window_acc, window = 0, 0
    steps = range(total)
    if progress:
        try:
            from tqdm.auto import tqdm

            steps = tqdm(steps, desc="MH", unit="step", disable=None)  # shown on a terminal only
        except ImportError:  # progress bars are a convenience, not a dependency
            pass
    for i in steps:
        xi = space._random_tangent(x, rng=rng)
        # Re-project each proposal: long chains must not drift off the manifold by rounding.
        proposal = space.project(space._exp(x, np.exp(log_step) * xi))
        logq = np.asarray(log_density(proposal), dtype=float)
        ok = np.log(rng.random(n_chains)) < logq - logp
        if in_support is not None:
            ok &= np.asarray(in_support(proposal), dtype=bool)
        x = np.where(ok.reshape((-1,) + (1,) * n_pt), proposal, x)
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
        if (j + 1) % thinning == 0:
            samples[j // thinning] = x
    diagnostics = MCMCDiagnostics(
        acceptance_rate=accepted / (n_chains * n_samples * thinning),
        effective_sample_size=effective_sample_size(trace),
        step_size=float(np.exp(log_step)),
        n_chains=n_chains,
        burn_in=int(burn_in),
        thinning=int(thinning),
        n_steps=n_samples * thinning,
    )
    return MCMCResult(samples, diagnostics)
