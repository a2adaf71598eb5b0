"""The samplers of :class:`~geodp.models.PrivateGeodesicRegression`: the exact race on flat spaces
(:class:`~geodp.distributions.affine_kng.AffineKNG` on the chart), Metropolis–Hastings on the
tangent bundle elsewhere from the public ``(center, 0)``, and K25's two-stage release as
published (reproductions only). Every setting here is public.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from geodp.distributions.affine_kng import AffineKNG
from geodp.distributions.mcmc import random_walk_metropolis
from geodp.distributions.tangent_bundle import TangentBundle
from geodp.errors import GeodpError, NumericalWarning
from geodp.models.record_passes import combine_moments, moment_parts
from geodp.regression import geodesic_regression, unchecked_regression_gradient
from geodp.validation import CLIP_MARGIN

# Metropolis–Hastings settings of the curved-space release (public).
BURN_IN = 4_000
THINNING = 1_000
# Relative proposal scale of the velocities: the spread of a slope over that of an intercept
# when the covariate fills its public range uniformly (√12). A public choice of efficiency only.
VELOCITY_STEP = math.sqrt(12.0)


def velocity_norm(space, p, v):
    """``(Σ_j |v_j|²_p)^½`` for ``v`` of shape ``(*batch, m, *point_shape)``."""
    axis = -1 - len(space.point_shape)
    return np.sqrt(np.maximum(np.sum(np.asarray(space.unchecked.inner(np.expand_dims(p, axis), v, v)), axis=-1), 0.0))


def joint_gradient_norm(space, p, v, xs, Y, tau):
    """``‖(∇_p E, ∇_v E)‖`` of the regression objective with residuals clipped to ``tau``: the
    statistic whose KNG law the regression releases (unvalidated inputs; curator code path)."""
    grad_p, grad_v = unchecked_regression_gradient(space, p, v, xs, Y, residual_bound=tau)
    return np.hypot(np.asarray(space.unchecked.norm(p, grad_p)), velocity_norm(space, p, grad_v))


def published_release(space, xs, Y, center, radius, velocity, tau, sensitivity, half, rng):
    """K25's two stages: p̃ with the non-private v̂ held fixed (transported), then ṽ at p̃;
    each with ε/2 and σ = Δ/(ε/2) from the published bounds. Random-walk MH from p̂."""
    p_hat, v_hat, info = geodesic_regression(space, xs, Y, return_info=True)
    p_hat = space.unchecked.clip_to_ball(p_hat[None], center, radius, last_resort="keep")[0][0]
    m = xs.shape[1]
    axis = -1 - len(space.point_shape)
    sigma_p = sensitivity.footpoint / half
    sigma_v = sensitivity.velocity / half

    def stage_one(p):
        v = space.unchecked.transport(np.expand_dims(p_hat, axis), np.expand_dims(p, axis), v_hat)
        grad_p, _ = unchecked_regression_gradient(space, p, v, xs, Y, residual_bound=tau)
        value = -np.asarray(space.unchecked.norm(p, grad_p)) / sigma_p
        return np.where(np.asarray(space.unchecked.dist(center, p)) <= radius, value, -np.inf)

    first = random_walk_metropolis(
        space,
        stage_one,
        p_hat[None],
        burn_in=BURN_IN // 2,
        thinning=THINNING,
        step_size=min(0.5 * radius, sigma_p * space.dim),
        rng=rng,
        progress=True,
    )
    p = first.samples[0, 0]
    bundle = TangentBundle(space, m, footpoint_step=0.0)

    def stage_two(state):
        q, v = bundle.split(state)
        _, grad_v = unchecked_regression_gradient(space, q, v, xs, Y, residual_bound=tau)
        value = -velocity_norm(space, q, grad_v) / sigma_v
        return np.where(velocity_norm(space, q, v) <= velocity, value, -np.inf)

    v_start = space.unchecked.transport(np.expand_dims(p_hat, axis), np.expand_dims(p, axis), v_hat)
    second = random_walk_metropolis(
        bundle,
        stage_two,
        bundle.stack(p, v_start)[None],
        burn_in=BURN_IN // 2,
        thinning=THINNING,
        step_size=max(sigma_v * bundle.dim, 1e-8),
        rng=rng,
        progress=True,
    )
    _, v = bundle.split(second.samples[0, 0])
    # Report the geodesic at the centre of the covariate range, like the sound release.
    mid = space.unchecked.exp(p, 0.5 * v.sum(axis=0))
    v_mid = space.unchecked.transport(np.expand_dims(p, axis), np.expand_dims(mid, axis), v)
    return (
        mid,
        v_mid,
        {
            "solver_iterations": info.n_iter,
            "solver_grad_norm": info.grad_norm,
            "solver_converged": info.converged,
            "acceptance": 0.5 * (first.diagnostics.acceptance_rate + second.diagnostics.acceptance_rate),
        },
    )


def mcmc_draws(space, xs, Y, center, radius, velocity, tau, scale, rng, n_chains=1):
    """Run ``n_chains`` MH chains on the joint KNG law of ``(p, v)`` from the public
    ``(center, 0)``; returns the :class:`~geodp.distributions.mcmc.MCMCResult` (one state per
    chain, stacked as :class:`TangentBundle` points)."""
    m = xs.shape[1]
    bundle = TangentBundle(space, m, velocity_step=VELOCITY_STEP)

    def log_density(state):
        p, v = bundle.split(state)
        return -joint_gradient_norm(space, p, v, xs, Y, tau) / scale

    def in_support(state):
        p, v = bundle.split(state)
        return (np.asarray(space.unchecked.dist(center, p)) <= radius) & (velocity_norm(space, p, v) <= velocity)

    start = bundle.stack(center, np.zeros((m,) + tuple(space.point_shape)))
    step = min(0.5 * radius, max(scale * bundle.dim, 1e-8 * radius))
    return random_walk_metropolis(
        bundle,
        log_density,
        np.repeat(start[None], n_chains, axis=0),
        burn_in=BURN_IN,
        thinning=THINNING,
        step_size=step,
        in_support=in_support,
        rng=rng,
        progress=True,
    )


def flat_gradient_bound(m, largest_residual):
    """Public bound on the joint gradient ``‖(1/n) Σ x̃_i r_iᵀ‖_F`` over the support and every
    dataset (flat spaces): ``‖x̃‖ ≤ √(1 + m/4)`` with ``x̃ = (1, x) ∈ {1} × [−½, ½]^m``, and every
    residual is at most ``2·radius + x_max·V`` on the support."""
    return math.sqrt(1.0 + m / 4.0) * largest_residual


def exact_flat_release(space, xs, Y, center, radius, velocity, scale, gradient_bound, rng):
    """Flat spaces: the gradient is affine, ``Aθ − B`` in the chart; exact AffineKNG on the
    in-memory records (scaled covariates ``xs``, responses ``Y`` in the ball)."""
    n = len(xs)
    c0 = space.to_coordinates(center).reshape(-1)
    design = np.hstack([np.ones((n, 1)), xs])
    parts = moment_parts(design, space.to_coordinates(Y).reshape(n, -1) - c0)
    gram, target = combine_moments([parts], n, design.shape[1], c0.size)
    return flat_release_from_moments(space, gram, target, c0, radius, velocity, scale, gradient_bound, rng)


def flat_release_from_moments(space, gram, target, c0, radius, velocity, scale, gradient_bound, rng):
    """Flat spaces: the gradient is affine, ``Aθ − B`` in the chart, with ``A = gram`` (the
    design's Gram matrix over n) and ``B = target`` (its cross products with the chart
    coordinates relative to the centre ``c0``, over n: θ is relative to the centre, so the ball
    is ``|θ_0| ≤ r``); exact AffineKNG."""
    m = len(gram) - 1
    # Sampled in units of a power of two near the domain's size (the law is scale-equivariant and
    # the rescaling exact): far from 1, ‖Aθ − B‖ would overflow (an audit's radius 1e160 gave
    # the centre itself, the race accepting nothing).
    unit = 2.0 ** round(math.log2(math.hypot(radius, velocity)))
    in_domain = BallPairDomain(radius / unit, velocity / unit, m + 1, target.shape[1])
    bound = None if gradient_bound is None else gradient_bound / unit
    law = AffineKNG(gram, target / unit, scale / unit, in_domain=in_domain, gradient_bound=bound)
    if law.singular:  # curator-only: whether the design is singular depends on the data
        warnings.warn(
            "the design is singular (a covariate is constant on these data): the release "
            "was sampled by the singular-design proposals",
            NumericalWarning,
            stacklevel=2,
        )
    theta = unit * law.sample(rng=rng)
    p, v = from_chart(space, theta[0] + c0, theta[1:])
    ess = law.chain_diagnostics.effective_sample_size if law.fell_back else None
    return p, v, {"acceptance": law.acceptance_rate, "fell_back": law.fell_back, "ess": ess}


class BallPairDomain:
    """``{θ ∈ R^{(1+m)×D} : |θ_0| ≤ r, ‖θ_{1:}‖_F ≤ V}`` (footpoint ball × velocity ball in the
    chart, relative to the centre): membership and uniform draws, for :class:`AffineKNG`."""

    def __init__(self, radius, velocity, q, d):
        self.radius, self.velocity, self.q, self.d = radius, velocity, q, d
        self.center = np.zeros((q, d))  # the public centre, and zero velocity

    def __call__(self, theta):
        return (np.linalg.norm(theta[:, 0], axis=-1) <= self.radius) & (
            np.linalg.norm(theta[:, 1:].reshape(len(theta), -1), axis=-1) <= self.velocity
        )

    def bounding_ball(self):
        """The Frobenius ball ``‖θ‖ ≤ √(r² + V²)`` contains the domain."""
        return np.zeros((self.q, self.d)), math.hypot(self.radius, self.velocity)

    def uniform(self, m, rng):
        def ball(k, r):
            g = rng.standard_normal((m, k))
            g /= np.linalg.norm(g, axis=1, keepdims=True)
            return g * (r * rng.random((m, 1)) ** (1.0 / k))

        foot = ball(self.d, self.radius)
        velocity = ball((self.q - 1) * self.d, self.velocity)
        return np.concatenate([foot[:, None], velocity.reshape(m, self.q - 1, self.d)], axis=1)


def from_chart(space, a, theta_v):
    """The point with chart coordinates ``a`` and the tangent vectors at it whose chart
    coordinates are the rows of ``theta_v`` (flat spaces)."""
    p = space.from_coordinates(a)
    return p, space.unchecked.tangent_from_coordinates(p[None], np.asarray(theta_v, dtype=float))


def flat_moment_part(space, center, radius, lower, upper, c0, refuse, x, y):
    """One block of records on a flat space: ``(moment parts, [n_invalid, n_failed, n_clipped_x,
    n_clipped_y])``. Invalid records are replaced by the public centres (or, refused, nothing is
    computed); then covariates are clipped into the bounds and scaled to [-1/2, 1/2], responses
    validated, clipped into the ball and mapped to chart coordinates relative to the centre."""
    invalid = space.invalid_records(y) | ~np.all(np.isfinite(x), axis=1)
    n_invalid = int(np.count_nonzero(invalid))
    if n_invalid and refuse:
        return None, np.array([n_invalid, 0, 0, 0])
    if n_invalid:
        x, y = x.copy(), y.copy()
        y[invalid], x[invalid] = center, (lower + upper) / 2.0
    try:  # canonical points (flat spaces need no recentring)
        points = space.check_points(y, "y", batch_ndim=1)
    except GeodpError:
        return None, np.array([n_invalid, 1, 0, 0])
    clipped_x = np.clip(x, lower, upper)
    n_clipped_x = np.count_nonzero(np.any(clipped_x != x, axis=1))
    # A relative 1e-12 inside the ball: rounding must not carry a residual past τ.
    Y, was_clipped = space.unchecked.clip_to_ball(points, center, radius * CLIP_MARGIN)
    xs = (clipped_x - lower) / (upper - lower) - 0.5
    design = np.hstack([np.ones((len(xs), 1)), xs])
    coords = space.to_coordinates(Y).reshape(len(xs), -1)
    return moment_parts(design, coords - c0), np.array([n_invalid, 0, n_clipped_x, np.count_nonzero(was_clipped)])
