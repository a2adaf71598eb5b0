"""The K-norm gradient (KNG) law of the Fréchet objective, sampled exactly (docs/math.md §5).

``p(x) ∝ exp(−‖∇F_D(x)‖_x/σ)`` on the public ball ``B_r(m0)``, with
``F_D(x) = (1/2n) Σ ρ²(x, x_i)`` and ``∇F_D(x) = −(1/n) Σ log_x(x_i)`` (S22). Under Assumption 1
the gradient norm is bounded below by ``h·ρ(x, x̄)`` (S22 Lemma 1, ``h = h(r, κ_max)``), so a
Laplace proposal at the Fréchet mean ``x̄`` with scale ``σ/h``, truncated to the ball, accepted with
probability ``exp(−(‖∇F_D(x)‖ − h ρ(x, x̄))/σ)``, is an exact sampler. In flat spaces
``∇F_D(x) = x − x̄``: KNG is the untruncated Laplace at ``x̄`` and every proposal is accepted.

The acceptance rate depends on the data; whether to use rejection or MH is decided from the public
lower bound :func:`kng_acceptance_lower_bound` only, so the choice leaks nothing.
"""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np

from geodp.distributions.base import (
    Distribution,
    _size_tuple,
    approximate_sampler_notice,
    check_private_points,
    rejection_sample,
)
from geodp.distributions.laplace import ACCEPTANCE_FLOOR, RiemannianLaplace, _eigenvalue_law, _radial_law
from geodp.distributions.mcmc import random_walk_metropolis
from geodp.distributions.radial import is_isotropic
from geodp.errors import ConvergenceWarning, InvalidDataError, InvalidParameterError, InvalidTypeError
from geodp.frechet import frechet_mean, karcher_iteration_budget
from geodp.manifolds.base import Manifold
from geodp.manifolds.spd import AffineInvariantSPD
from geodp.sensitivity import check_radius, curvature_factor
from geodp.validation import as_generator, check_positive

__all__ = ["KNGDistribution", "kng_acceptance_lower_bound", "kng_uses_mcmc", "gradient_norm_bounds"]

_SAMPLERS = ("auto", "exact", "mcmc")


def gradient_norm_bounds(space, radius) -> tuple[float, float]:
    """``(h, H)`` with ``h ρ(x, x̄) ≤ ‖∇F_D(x)‖ ≤ H ρ(x, x̄)`` for data and ``x`` in ``B_r(m0)``.

    ``h = h(r, κ_max)`` (S22 Lemma 1, R21 Thm 2). ``H`` bounds the Hessian of F: 1 when
    ``κ_min ≥ 0``; ``a coth a`` with ``a = 2r√(−κ_min)`` otherwise (Hessian comparison, with
    ``ρ(x, x_i) ≤ 2r``).

    Examples
    --------
    >>> from geodp.manifolds import Sphere
    >>> [round(b, 4) for b in gradient_norm_bounds(Sphere(2), 0.5)]
    [0.6421, 1.0]
    """
    kappa_min, kappa_max = space.curvature_bounds
    h = curvature_factor(radius, kappa_max)
    if kappa_min >= 0:
        return h, 1.0
    a = 2.0 * radius * math.sqrt(-kappa_min)
    return h, a / math.tanh(a)


@functools.lru_cache(maxsize=64)
def kng_acceptance_lower_bound(space, scale: float, radius: float) -> float:
    """A data-independent lower bound on the exact KNG sampler's acceptance rate.

    With ``‖∇F_D(x)‖ ≤ H ρ`` the acceptance is at least ``E[exp(−(H − h) ρ/σ)]`` under the
    untruncated radial law of scale ``σ/h``, i.e. a ratio of Laplace normalisers
    ``Z(σ/H)/Z(σ/h)`` (isotropic spaces) or a fixed-seed pilot average (AI-SPD). Flat: 1.

    Examples
    --------
    >>> from geodp.manifolds import Sphere
    >>> round(kng_acceptance_lower_bound(Sphere(2), 0.05, 0.5), 3)
    0.414
    """
    if space.is_flat:
        return 1.0
    h, H = gradient_norm_bounds(space, radius)
    if is_isotropic(space):
        t_max = math.inf if math.isfinite(space.cut_radius) else 2.0 * radius
        return math.exp(_radial_law(space, scale / H, t_max).log_normaliser - _radial_law(space, scale / h, t_max).log_normaliser)
    if isinstance(space, AffineInvariantSPD):
        law = _eigenvalue_law(space.k, scale / h, 2.0 * radius)
        if law.acceptance_rate < ACCEPTANCE_FLOOR:
            return 0.0
        t = np.linalg.norm(np.linalg.eigvalsh(law.sample_symmetric(4000, rng=0)), axis=-1)
        return float(np.mean(np.exp(-(H - h) * t / scale)))
    return 0.0


def kng_uses_mcmc(space, scale: float, radius: float, sampler: str = "auto") -> bool:
    """Does KNG on ``space`` use MH? Decided from public quantities only: ``"mcmc"`` always,
    ``"exact"`` never, ``"auto"`` when the public acceptance bound is below the floor. Flat spaces
    never need it (KNG is the Laplace at the mean).

    Examples
    --------
    >>> from geodp.manifolds import KendallShape
    >>> kng_uses_mcmc(KendallShape(8), 0.01, 0.2), kng_uses_mcmc(KendallShape(8), 0.01, 0.35)
    (False, True)
    """
    if sampler not in _SAMPLERS:
        raise InvalidParameterError(f"sampler must be one of {_SAMPLERS}, got {sampler!r}.")
    if space.is_flat or sampler == "exact":
        return False
    return sampler == "mcmc" or kng_acceptance_lower_bound(space, scale, radius) < ACCEPTANCE_FLOOR


class KNGDistribution(Distribution):
    """KNG law of the Fréchet objective of ``data`` on the ball ``B_radius(center)``.

    Parameters
    ----------
    space : Manifold
    data : array_like, shape (n, *space.point_shape)
        Records, already inside the ball (clip them first).
    scale : float
        σ > 0.
    center, radius
        The public ball. The records must lie in it on every space (the gradient sensitivity
        assumes it); on flat spaces it does not restrict the law, which is the untruncated
        Laplace at the mean there.
    sampler : {"auto", "exact", "mcmc"}
        ``"auto"``: exact rejection unless :func:`kng_acceptance_lower_bound` is below
        :data:`~geodp.distributions.laplace.ACCEPTANCE_FLOOR`, then MH. MH chains start at the
        public ``center`` (never at the private mean) and reach the law by the burn-in; every
        :meth:`sample` call that is not exact emits one
        :class:`~geodp.errors.ApproximateSamplerWarning` (public text).
    burn_in, thinning : int
        MH settings (S22: 20,000 and 600).

    Raises
    ------
    InvalidDataError
        A record lies outside the ball (the message holds no number computed from the data).
    NotOnManifoldError
        A record is not a point of the space (idem).

    Attributes
    ----------
    frechet_mean : numpy.ndarray
        The (non-private) mean used as the proposal's footpoint, by the Karcher flow from the
        public centre. Never release it.
    mean_info : FrechetMeanInfo
        How the flow ended. **Data-dependent**; its ConvergenceWarning is not emitted (it would
        carry numbers computed from the data): the sampler stays exact when the flow stops early,
        because the acceptance uses ``‖∇F_D(x)‖ ≥ h ρ(x, x̄') − ‖∇F_D(x̄')‖`` at the computed x̄'.
    acceptance_rate : float or None
        Observed acceptance of the last exact draw. **Data-dependent**: a diagnostic for the
        data holder, not for publication.
    diagnostics : MCMCDiagnostics or None
        Of the last MH run. **Data-dependent**, like ``acceptance_rate``.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Sphere
    >>> space, north = Sphere(2), np.array([0.0, 0.0, 1.0])
    >>> X = space.exp(north, space.random_tangent(north, size=100, rng=0) * 0.1)
    >>> law = KNGDistribution(space, X, 0.03, center=north, radius=0.5)
    >>> law.exact, law.sample(size=3, rng=1).shape
    (True, (3, 3))
    """

    def __init__(self, space, data, scale, *, center, radius, sampler="auto", burn_in=20_000, thinning=600):
        if not isinstance(space, Manifold):
            raise InvalidTypeError(f"space must be a geodp Manifold, got {type(space).__name__}.")
        self.space = space
        self.scale = check_positive(scale, "scale")
        self.center = space.check_points(center, "center", batch_ndim=0)
        self.radius = check_radius(space, radius)
        data = check_private_points(space, data, "data", batch_ndim=1)  # messages without counts
        # Every space, flat ones included: the gradient sensitivity (and KNGMechanism) assume it.
        if np.any(np.asarray(space._dist(self.center, data)) > self.radius * (1 + 1e-9)):
            raise InvalidDataError(
                f"data holds records outside the public ball B_{self.radius!r}(center): KNG's "
                "sensitivity needs the data in the ball; clip them first (space.clip_to_ball)."
            )
        self.data = data
        self.burn_in, self.thinning = burn_in, thinning
        with warnings.catch_warnings():
            # Its text (iterations, gradient norm) is computed from the data; see mean_info.
            warnings.simplefilter("ignore", ConvergenceWarning)
            self.frechet_mean, self.mean_info = frechet_mean(
                space, data, tol=1e-12, init=self.center, return_info=True,
                max_iter=karcher_iteration_budget(space, self.radius, 1e-12),
            )
            if not space.is_flat:
                # The anchor must lie in the ball for the truncated proposal; rounding far out can
                # put it a hair outside. Any anchor in the ball keeps the rejection exact (the
                # acceptance subtracts the gradient norm at the anchor), so clipping is safe here.
                self.frechet_mean = space._clip_to_ball(self.frechet_mean[None], self.center, self.radius)[0][0]
        self.h, self.H = (1.0, 1.0) if space.is_flat else gradient_norm_bounds(space, self.radius)
        self.acceptance_bound = kng_acceptance_lower_bound(space, self.scale, self.radius)
        use_mcmc = kng_uses_mcmc(space, self.scale, self.radius, sampler)
        self.acceptance_rate, self.diagnostics = None, None
        if space.is_flat:
            self._proposal = RiemannianLaplace(space, self.frechet_mean, self.scale)
        else:
            self._proposal = RiemannianLaplace(space, self.frechet_mean, self.scale / self.h,
                                               center=self.center, radius=self.radius)
        self.exact = not use_mcmc and self._proposal.exact
        self.approximation_notice = None
        law = f"KNG on {space!r}"
        if space.is_flat:
            self.sampler = f"exact: KNG = Laplace at the mean in a flat space ({self._proposal.sampler})"
        elif use_mcmc:
            self.sampler = (
                f"MH on the ball (public acceptance bound {self.acceptance_bound:.1e} < {ACCEPTANCE_FLOOR})"
                if sampler == "auto" else "MH on the ball (requested)"
            ) + f", started at the center; burn-in {burn_in}, thinning {thinning}"
            reason = (
                f"the public lower bound {self.acceptance_bound:.1e} on the exact rejection sampler's "
                f"acceptance is below the floor {ACCEPTANCE_FLOOR}"
                if sampler == "auto" else "sampler='mcmc' was requested"
            )
            self.approximation_notice = approximate_sampler_notice(
                law, f"random-walk Metropolis–Hastings restricted to the ball B_{self.radius!r}(center), "
                f"started at the public center, burn-in {burn_in}, thinning {thinning}", reason)
        else:
            self.sampler = (
                f"exact rejection from the Laplace with scale σ/h (h = {self.h:.4g}) on the ball; "
                f"acceptance ≥ {self.acceptance_bound:.3g} (public bound)"
            )
            if not self._proposal.exact:
                self.sampler = (
                    f"rejection from the Laplace with scale σ/h (h = {self.h:.4g}) on the ball, whose "
                    f"draws are approximate ({self._proposal.sampler})"
                )
                self.approximation_notice = approximate_sampler_notice(
                    law, f"rejection from a Laplace proposal (scale σ/h = {self.scale / self.h:.6g}) "
                    f"that is itself drawn by {self._proposal._mh_sampler}",
                    f"for that proposal {self._proposal._mh_reason}")
        self._use_mcmc = use_mcmc
        # ‖∇F_D(x)‖ ≥ hρ(x, x̄) ≥ hρ(x, x̄') − ‖∇F_D(x̄')‖ at the computed mean x̄' (also in the ball):
        # subtracting this offset keeps the rejection exact however far the flow got.
        self._mean_offset = 0.0 if space.is_flat else float(self.gradient_norm(self.frechet_mean))

    def sample_coordinates(self, size=None, rng=None):
        """Flat spaces: draws in the isometric chart (KNG is the Laplace at the mean there)."""
        if not self.space.is_flat:
            raise InvalidTypeError(f"sample_coordinates needs a flat space, got {self.space!r}.")
        return self._proposal.sample_coordinates(size, rng=rng)

    def gradient_norm(self, x):
        """``‖∇F_D(x)‖_x`` for points ``x`` (batched; chunked to bound memory)."""
        x = np.asarray(x, dtype=float)
        shape = x.shape[: x.ndim - len(self.space.point_shape)]
        flat = x.reshape((-1,) + self.space.point_shape)
        chunk = max(1, 2_000_000 // (len(self.data) * int(np.prod(self.space.point_shape))))
        out = np.empty(len(flat))
        for i in range(0, len(flat), chunk):
            xs = flat[i : i + chunk]
            expand = (slice(None), None) + (slice(None),) * len(self.space.point_shape)
            grad = -np.mean(self.space._log(xs[expand], self.data[None]), axis=1)
            out[i : i + chunk] = self.space._norm(xs, grad)
        return out.reshape(shape)

    def log_density(self, x):
        """``−‖∇F_D(x)‖/σ`` (``−inf`` outside the ball on curved spaces)."""
        value = -self.gradient_norm(x) / self.scale
        if not self.space.is_flat:
            value = np.where(np.asarray(self.space._dist(self.center, x)) <= self.radius, value, -np.inf)
        return value

    def sample(self, size=None, rng=None):
        """Draw ``size`` points (``None``: one point). Warns
        (:class:`~geodp.errors.ApproximateSamplerWarning`, once per call) when not exact."""
        self._warn_if_approximate()
        rng = as_generator(rng)
        shape = _size_tuple(size)
        m = int(np.prod(shape, dtype=int))
        if self.space.is_flat:
            return self._proposal._sample(size, rng=rng)
        if self._use_mcmc:
            # Public start (the centre), never the private mean: the burn-in reaches the law.
            result = random_walk_metropolis(
                self.space, self.log_density, np.repeat(self.center[None], m, axis=0),
                burn_in=self.burn_in, thinning=self.thinning, step_size=min(self.scale, self.radius),
                in_support=lambda x: np.asarray(self.space._dist(self.center, x)) <= self.radius, rng=rng,
            )
            self.diagnostics = result.diagnostics
            return result.samples[0].reshape(shape + self.space.point_shape)
        def propose(batch, rng):
            x = self._proposal._sample(batch, rng=rng)
            rho = np.asarray(self.space._dist(self.frechet_mean, x))
            # ≤ 0 up to rounding (the offset accounts for the inexact mean); the clamp absorbs rounding.
            return x, np.minimum(-(self.gradient_norm(x) - self.h * rho + self._mean_offset) / self.scale, 0.0)

        # The public bound is pessimistic: start from a quarter, then the observed rate.
        out, self.acceptance_rate = rejection_sample(propose, m, self.space.point_shape,
                                                     max(self.acceptance_bound, 0.25), rng, max_batch=100_000)
        return out.reshape(shape + self.space.point_shape)
