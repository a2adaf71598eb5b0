"""The two geodesic-regression releases of the K25 sphere experiment, vectorised over releases: K25's
two-stage KNG as the paper runs it and geodp's sound joint KNG, compared at ``x = 0``."""

from __future__ import annotations

import warnings

import numpy as np

from geodp.errors import ApproximateSamplerWarning, PrivacyLeakWarning, as_published_only
from geodp.experiments.k25.setting import (
    AS_PUBLISHED,
    EPSILON,
    RADIUS,
    SOUND,
    TAU,
    VELOCITY,
    k25_sphere_data,
)
from geodp.manifolds import Sphere
from geodp.models.geodesic_sampling import mcmc_draws
from geodp.regression import geodesic_regression, unchecked_regression_gradient
from geodp.sensitivity import geodesic_regression_sensitivity, k25_published_sensitivity
from geodp.validation import CLIP_MARGIN

__all__ = [
    "k25_published_bounds",
    "k25_two_stage",
    "release_stats",
    "signed_angle_deg",
    "sound_releases",
    "sphere_releases",
]


def signed_angle_deg(p, a, b):
    """Signed angles from tangent vectors a to b at p on S² (batched over rows), in degrees."""
    return np.degrees(np.arctan2(np.sum(p * np.cross(a, b), axis=-1), np.sum(a * b, axis=-1)))


def _largest_residual(space, t, Y, p, v):
    return float(space.dist(space.exp(np.broadcast_to(p, Y.shape), t[:, None] * v), Y).max())


def k25_published_bounds(space, n, tau):
    """K25's Thm 3.4 bounds for a reproduction: :func:`geodp.sensitivity.k25_published_sensitivity`
    with ``as_published=True``, its :class:`~geodp.errors.PrivacyLeakWarning` left to the caller's
    as-published switch (:func:`k25_two_stage`) or, for Fig. 5's ratios, not a release at all."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return k25_published_sensitivity(space, n, residual_bound=tau, as_published=True)


def k25_two_stage(space, t, Y, center, n_chains, rng, *, as_published: bool = False):
    """K25 App. A's release as the paper runs it, vectorised over ``n_chains`` independent releases.

    Not differentially private as calibrated (K25's footpoint bound is too small and τ is read off
    the data): runs only with ``as_published=True`` and warns (:class:`~geodp.errors.PrivacyLeakWarning`).

    Stage 1 draws p̃ ∝ exp(−‖∇_p E(p, Γ v̂)‖/σ_p) with the non-private v̂ transported to p; stage 2
    draws ṽ at p̃ ∝ exp(−‖∇_v E(p̃, v)‖/σ_v); ε/2 each, σ = Δ/(ε/2) from Thm 3.4 with τ the fit's
    largest residual (data-dependent); residuals are **not** clipped (K25 clips nothing: τ enters only
    σ). Random-walk MH from (p̂, v̂), 2,000 steps of burn-in and 1,000 more, as geodp's
    ``as_published=True`` model. Covariates ``t`` in [0, 1], footpoint at ``x = 0``.
    """
    from geodp.distributions.mcmc import random_walk_metropolis
    from geodp.distributions.tangent_bundle import TangentBundle

    as_published_only(
        as_published,
        "K25's two-stage release (Thm 3.4 bounds, τ from the data, each stage conditioned on the other's "
        "non-private estimate) is not differentially private as calibrated: pass as_published=True to run it "
        "in a reproduction, or use geodp.models.PrivateGeodesicRegression",
        "K25's two-stage release as published is not differentially private as calibrated (Thm 3.4's footpoint "
        "bound is too small and τ is the data's largest residual): use for reproductions only",
    )
    x = t[:, None]
    p_hat, v_hat = geodesic_regression(space, x, Y)
    tau = _largest_residual(space, t, Y, p_hat, v_hat[0])
    sens = k25_published_bounds(space, t.size, tau)
    sigma_p, sigma_v = sens.footpoint / (EPSILON / 2), sens.velocity / (EPSILON / 2)

    def stage_one(p):
        v = space.transport(p_hat[None], p[:, None], v_hat)
        grad_p, _ = unchecked_regression_gradient(space, p, v, x, Y)
        return -np.linalg.norm(grad_p, axis=-1) / sigma_p

    first = random_walk_metropolis(
        space,
        stage_one,
        np.repeat(p_hat[None], n_chains, axis=0),
        burn_in=2000,
        thinning=1000,
        step_size=sigma_p * space.dim,
        rng=rng,
        in_support=lambda p: space.dist(center, p) <= RADIUS,
    )
    p_tilde = first.samples[0]
    bundle = TangentBundle(space, 1, footpoint_step=0.0)

    def stage_two(state):
        q, v = bundle.split(state)
        _, grad_v = unchecked_regression_gradient(space, q, v, x, Y)
        return -np.linalg.norm(grad_v[:, 0], axis=-1) / sigma_v

    start = bundle.stack(p_tilde, space.transport(p_hat[None], p_tilde[:, None], v_hat))
    second = random_walk_metropolis(
        bundle,
        stage_two,
        start,
        burn_in=2000,
        thinning=1000,
        step_size=sigma_v * bundle.dim,
        rng=rng,
        in_support=lambda s: np.linalg.norm(bundle.split(s)[1][:, 0], axis=-1) <= VELOCITY,
    )
    _, v_tilde = bundle.split(second.samples[0])
    return p_tilde, v_tilde[:, 0], tau


def sound_releases(space, t, Y, center, n_chains, rng):
    """geodp's sound joint KNG (σ = 2Δ/ε, public τ, covariates centred), moved to ``x = 0``."""
    xs = (t - 0.5)[:, None]
    sens = geodesic_regression_sensitivity(
        space, t.size, residual_bound=TAU, x_bound=0.5, velocity_bound=VELOCITY, radius=RADIUS
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ApproximateSamplerWarning)
        result = mcmc_draws(
            space,
            xs,
            Y,
            center,
            RADIUS,
            VELOCITY,
            TAU * CLIP_MARGIN,
            2.0 * sens.joint / EPSILON,
            rng,
            n_chains=n_chains,
        )
    mid, v_mid = result.samples[0][:, 0], result.samples[0][:, 1]
    p0 = space.exp(mid, -0.5 * v_mid)
    return p0, space.transport(mid, p0, v_mid), 2.0 * sens.joint / EPSILON


def sphere_releases(n, repetitions, rng):
    """One K25 §4.1 data set of ``n`` points; ``repetitions`` sound and K25 releases, compared at ``x = 0``."""
    space = Sphere(2)
    t, Y, center = k25_sphere_data(n, rng=rng)
    p_hat, v_hat = geodesic_regression(space, t[:, None], Y)
    v_hat = v_hat[0]
    p_s, v_s, sigma_s = sound_releases(space, t, Y, center, repetitions, rng)
    with warnings.catch_warnings():  # the reproduction runs K25's release on purpose, labelled as published
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        p_k, v_k, tau_k25 = k25_two_stage(space, t, Y, center, repetitions, rng, as_published=True)
    sigma_k = k25_published_bounds(space, n, tau_k25).footpoint / (EPSILON / 2)

    def mae(p, v):
        fitted = space.exp(np.broadcast_to(p[:, None], (len(p),) + Y.shape), t[None, :, None] * v[:, None])
        return space.dist(fitted, Y[None]).mean(axis=1), space.dist(fitted, Y[None])

    data = []
    for label, (p, v, tau, sigma) in ((SOUND, (p_s, v_s, TAU, sigma_s)), (AS_PUBLISHED, (p_k, v_k, tau_k25, sigma_k))):
        moved = space.transport(np.broadcast_to(p_hat, p.shape), p, np.broadcast_to(v_hat, v.shape))
        errors, residuals = mae(p, v)
        for rep in range(len(p)):
            data.append(
                dict(
                    n=n,
                    release=label,
                    repetition=rep,
                    footpoint_distance=float(space.dist(p_hat, p[rep])),
                    angle_deg=float(signed_angle_deg(p[rep], moved[rep], v[rep])),
                    mae=float(errors[rep]),
                    clipped_share=float(np.mean(residuals[rep] > tau)),
                    tau=tau,
                    sigma=sigma,
                )
            )
    mae_hat = float(mae(p_hat[None], v_hat[None])[0][0])
    return data, mae_hat, (t, Y, p_hat, v_hat, (p_s, v_s), (p_k, v_k))


def release_stats(data, label, key):
    """Mean, sd and count of ``key`` over the rows of ``data`` drawn by the release ``label``."""
    vals = np.array([d[key] for d in data if d["release"] == label])
    return float(vals.mean()), float(vals.std(ddof=1)) if vals.size > 1 else 0.0, vals.size
