"""Laplace laws (docs/math.md §5): the l2 (K-norm) Laplace in ``R^d`` and the Riemannian Laplace
``∝ exp(−ρ(η, x)/σ)`` on every geodp space, sampled exactly wherever a method exists."""

from __future__ import annotations

import functools
import math

import numpy as np

from geodp.distributions.ball_polar import direction_share, exact_ball_proposal, has_exact_ball_proposal
from geodp.distributions.base import (
    Distribution,
    approximate_sampler_notice,
    check_private_points,
    rejection_sample,
    size_tuple,
)
from geodp.distributions.mcmc import random_walk_metropolis
from geodp.distributions.radial import RadialLaw, is_isotropic
from geodp.distributions.spd_affine import SPDEigenvalueLaw, spd_ball_acceptance_bound, spd_laplace_scale_limit
from geodp.errors import InvalidDataError, InvalidTypeError
from geodp.manifolds import matrix_functions as mf
from geodp.manifolds.base import check_space
from geodp.manifolds.euclidean import Euclidean
from geodp.validation import as_generator, check_positive
from geodp.work import fixed_work

__all__ = [
    "l2_laplace_noise",
    "laplace_normalisability",
    "RiemannianLaplace",
    "ACCEPTANCE_FLOOR",
    "ball_acceptance_bound",
    "direction_share",
]

# The polar proposal keeps ≥ 1/2 of its proposals by construction; half of that is the loop's floor
# (the margin absorbs draws that rounding puts a hair outside the ball).
_BALL_POLAR_RATE = 0.25

#: Below this expected acceptance rate a rejection sampler is deemed impractical and the law is
#: sampled by MH instead (recorded in the sampler description and the guarantee).
ACCEPTANCE_FLOOR = 1e-3

_BALL_GRID = 33  # distances ρ(η, m0) ∈ [0, r] at which the truncation bound is evaluated


def l2_laplace_noise(dim: int, scale: float, size=(), rng=None) -> np.ndarray:
    """Draw from the l2-Laplace (K-norm with the Euclidean norm) in ``R^dim``, centred at 0.

    Density ``∝ exp(−|y|/σ)``; exact: ``Y = σ · G · U`` with ``G ~ Gamma(dim, 1)`` and ``U``
    uniform on the unit sphere (R21 A.4). ``E|Y|² = σ² dim (dim + 1)``.

    Parameters
    ----------
    dim : int
    scale : float
        σ > 0.
    size : tuple of int
        Batch shape; the output has shape ``size + (dim,)``.
    rng : None, int or numpy.random.Generator

    Examples
    --------
    >>> l2_laplace_noise(3, 1.0, size=(5,), rng=0).shape
    (5, 3)
    """
    scale = check_positive(scale, "scale")
    rng = as_generator(rng)
    size = tuple(size)
    direction = rng.standard_normal(size + (dim,))
    direction /= np.linalg.norm(direction, axis=-1, keepdims=True)
    radius = rng.gamma(shape=dim, scale=scale, size=size)
    return radius[..., None] * direction


@functools.lru_cache(maxsize=64)
def _radial_law(space, scale: float, t_max: float) -> RadialLaw:
    """Radial laws depend only on public (space, σ, t_max): build each once (quadratures)."""
    return RadialLaw(space, scale, t_max)


@functools.lru_cache(maxsize=64)
def _eigenvalue_law(k: int, scale: float, t_max: float) -> SPDEigenvalueLaw:
    """Eigenvalue laws depend only on (k, σ, t_max): build each once (hat and acceptance bound)."""
    return SPDEigenvalueLaw(k, scale, t_max)


@functools.lru_cache(maxsize=64)
def _spd_ball_rate(k: int, scale: float, t_max: float, radius: float) -> float:
    """A proven lower bound, over every footpoint in the ball, on the share of exact AI-SPD draws
    that land in it (:func:`~geodp.distributions.spd_affine.spd_ball_acceptance_bound`; public:
    k, σ, r). 0 when the eigenvalue rejection is unusable, which sends the law to MH on the ball."""
    if _eigenvalue_law(k, scale, t_max).acceptance_rate < ACCEPTANCE_FLOOR:
        return 0.0
    return spd_ball_acceptance_bound(k, scale, radius)


@functools.lru_cache(maxsize=64)
def ball_acceptance_bound(space, scale: float, radius: float) -> float:
    """A lower bound, over **every** footpoint η in ``B_radius(m0)``, on the chance that a draw of
    the Laplace law at η (radius restricted to ``[0, 2 radius]``) lands in the ball: the
    acceptance of the truncation step, from public quantities only (docs/math.md §5).

    For isotropic and flat spaces, with κ the lower curvature bound: the share of directions
    (:func:`direction_share`) is non-increasing in ``t`` and, in ``s = ρ(η, m0)``, smallest at an
    end of every interval of ``s``, so ``min_s E_t[share(t, s)]`` is bounded below by using, on
    each cell of a quantile grid of ``t`` and of a grid of ``s``, the cell's worst corner. Needs
    ``radius·√κ ≤ π/2`` when κ > 0; returns 0 otherwise (no bound: the law uses MH) and for
    other spaces.

    Parameters
    ----------
    space : Manifold
    scale : float
        σ > 0 of the Laplace law.
    radius : float
        Radius > 0 of the ball.

    Returns
    -------
    float
        The bound, in ``[0, 1]``.

    Examples
    --------
    >>> from geodp.manifolds import Sphere
    >>> b = ball_acceptance_bound(Sphere(2), 0.05, 0.5)  # η on the boundary: about half inside
    >>> 0.4 < b < 0.5
    True
    """
    scale, radius = check_positive(scale, "scale"), check_positive(radius, "radius")
    polar = Euclidean(space.dim) if space.is_flat else space
    if not is_isotropic(polar):
        return 0.0
    kappa = float(polar.curvature_bounds[0])
    if kappa > 0 and radius * math.sqrt(kappa) > math.pi / 2:
        return 0.0
    law = _radial_law(polar, scale, 2.0 * radius)
    # cells of t: quantiles (they carry equal mass) and a uniform grid (steep shares), merged
    t = np.unique(np.concatenate([law.quantile(np.linspace(0.0, 1.0, 1025)), np.linspace(0.0, law.upper, 513)]))
    mass = np.diff(law.cdf(t))
    s = np.linspace(0.0, radius, _BALL_GRID)
    share = direction_share(t[1:, None], s[None, :], radius, kappa, space.dim)  # right ends: worst in t
    return float(max(np.min(mass @ np.minimum(share[:, :-1], share[:, 1:])), 0.0))


def laplace_normalisability(space, scale) -> tuple[bool, str]:
    """Is ``exp(−ρ(η, x)/σ)`` integrable over the whole space (docs/math.md §4)? Returns the answer
    and the reason, as written into guarantees.

    Examples
    --------
    >>> from geodp.manifolds import Hyperbolic
    >>> laplace_normalisability(Hyperbolic(3), 0.4)[0], laplace_normalisability(Hyperbolic(3), 0.6)[0]
    (True, False)
    """
    scale = check_positive(scale, "scale")
    if space.is_flat:
        return True, f"exp(-|y|/σ) is integrable on R^{space.dim} for every σ > 0"
    if is_isotropic(space):
        if math.isfinite(space.cut_radius):
            return True, f"{space!r} is compact"
        growth = float(space.volume_growth_rate)
        ok = 1.0 / scale > growth
        return ok, f"1/σ = {1 / scale:.6g} {'>' if ok else '<='} (d-1)/R = {growth:.6g} (volume growth of {space!r})"
    if "spd-eigenvalue-laplace" in space.closed_forms:
        limit = spd_laplace_scale_limit(space.k)
        ok = scale < limit
        return ok, f"σ = {scale:.6g} {'<' if ok else '>='} σ_max({space.k}) = {limit:.6g} (Hajri et al. 2016)"
    return False, f"no normalisability result is known for {space!r}"


class RiemannianLaplace(Distribution):
    """Riemannian Laplace law ``∝ exp(−ρ(η, x)/σ)``, optionally truncated to a ball ``B_r(m0)``.

    The sampler is chosen from the space (docs/math.md §5), exact wherever possible:

    * flat spaces (Euclidean, log-Euclidean SPD): the l2-Laplace in the isometric chart;
    * isotropic spaces (sphere, hyperbolic, Kendall): radius ``t`` from :class:`RadialLaw` by
      rejection, uniform direction ``u``, ``x = exp_η(t u)``;
    * affine-invariant SPD: Hajri's decomposition with the eigenvalue law by rejection
      (:class:`SPDEigenvalueLaw`), or by MH on ``R^k`` when its acceptance is below
      :data:`ACCEPTANCE_FLOOR`;
    * any other space: random-walk MH (:func:`~geodp.distributions.mcmc.random_walk_metropolis`).

    Truncation to ``B_r(m0)`` redraws until inside (every draw is then within ``2r`` of η, so the
    radial law is first restricted to ``[0, 2r]``). Its acceptance depends on where η lies in the
    ball; the sampler is chosen from a public quantity instead: on flat and isotropic spaces
    :func:`ball_acceptance_bound`, a lower bound over **every** footpoint in the ball (which also
    caps the loop), on affine-invariant SPD
    :func:`~geodp.distributions.spd_affine.spd_ball_acceptance_bound` (likewise). Below
    :data:`ACCEPTANCE_FLOOR`, MH restricted to the ball is used instead. :attr:`exact` and
    :attr:`sampler` record the choice.

    MH chains start at a public point, never at η: the centre ``m0`` of the ball, or, untruncated,
    ``space.random_point(rng=0)`` (a generic space has no canonical origin; this fixed-seed point
    depends on the space alone), and reach the law by the burn-in. Every :meth:`sample` call that
    uses MH emits one :class:`~geodp.errors.ApproximateSamplerWarning` (public text).

    Parameters
    ----------
    space : Manifold
    footpoint : array_like, shape space.point_shape
        η, the value being privatised.
    scale : float
        σ > 0.
    center, radius : optional
        Truncate to the geodesic ball ``B_radius(center)``; η must lie in it.
    burn_in, thinning : int
        MH settings when MH is used (defaults: R21's 10,000 and 100).

    Raises
    ------
    AssumptionError
        The untruncated law is not normalisable (hyperbolic with ``1/σ ≤ (d−1)/R``, AI-SPD with
        ``σ ≥ σ_max(k)``).
    InvalidDataError
        η outside the truncation ball (the message carries no number computed from η).

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Sphere
    >>> law = RiemannianLaplace(Sphere(2), np.array([0.0, 0.0, 1.0]), scale=0.2)
    >>> law.exact, law.sample(size=4, rng=0).shape
    (True, (4, 3))
    """

    def __init__(self, space, footpoint, scale, *, center=None, radius=None, burn_in=10_000, thinning=100):
        check_space(space)
        self.space = space
        self.footpoint = check_private_points(space, footpoint, "footpoint", batch_ndim=0)
        self.scale = check_positive(scale, "scale")
        self.burn_in, self.thinning = burn_in, thinning
        self.truncated = center is not None or radius is not None
        t_max = math.inf
        if self.truncated:
            self.center = space.check_points(center, "center", batch_ndim=0)
            self.radius = check_positive(radius, "radius")
            excess = np.max(space.unchecked.dist(self.center, self.footpoint)) - self.radius
            if excess > 1e-9 * max(1.0, self.radius):
                # no number computed from the footpoint in the message: it is private
                raise InvalidDataError(f"footpoint lies outside the truncation ball B_{self.radius!r}(center).")
            if excess > 0:  # within the tolerance: onto the boundary, where the public bounds hold
                self.footpoint = space.unchecked.clip_to_ball(self.footpoint[None], self.center, self.radius)[0][0]
            t_max = 2.0 * self.radius
        self.diagnostics = None
        self._choose_sampler(t_max)

    # ----------------------------------------------------------- sampler choice
    def _choose_sampler(self, t_max):
        space, trunc = self.space, ""
        ball_bound = None  # proven lower bound on the truncation step's acceptance, when one is known
        if space.is_flat or is_isotropic(space):
            polar = Euclidean(space.dim) if space.is_flat else space
            self._radial = _radial_law(polar, self.scale, t_max)
            self._method = "chart" if space.is_flat else "radial"
            where = f"in the isometric chart of {space!r}" if space.is_flat else f"on {space!r}"
            description = (
                f"exact: radius by rejection from a {self._radial.envelope_text} (acceptance "
                f"{self._radial.acceptance_rate:.3g}), uniform direction, {where}"
            )
            if self.truncated:
                ball_bound = ball_rate = ball_acceptance_bound(space, self.scale, self.radius)
                # Sizes the first batch only: the share at footpoint = center, where it is largest.
                self._ball_acceptance = max(float(self._radial.cdf(self.radius)), ball_bound)
                estimate = f"public lower bound over every footpoint in the ball: {ball_bound:.1e}"
        elif "spd-eigenvalue-laplace" in space.closed_forms:
            self._eigen = _eigenvalue_law(space.k, self.scale, t_max)
            rate = self._eigen.acceptance_rate
            self._method = "spd-eigen" if rate >= ACCEPTANCE_FLOOR else "spd-eigen-mh"
            description = (
                f"exact: Hajri decomposition, eigenvalue law by rejection (acceptance ≥ {rate:.3g}, proven)"
                if self._method == "spd-eigen"
                else f"MH on the k = {space.k} log-eigenvalues (rejection acceptance bound {rate:.1e} < "
                f"{ACCEPTANCE_FLOOR}), Haar eigenvectors exact; burn-in {self.burn_in}"
            )
            mh = (
                f"MH on the k = {space.k} log-eigenvalues r of η^-½ X η^-½ (Hajri's decomposition; the "
                f"law of r does not depend on η), started at r ≈ 0, Haar eigenvectors exact, burn-in "
                f"{self.burn_in}, thinning {self.thinning}",
                f"the proven acceptance bound of the exact eigenvalue rejection sampler at σ = "
                f"{self.scale:.6g} is {rate:.1e} < {ACCEPTANCE_FLOOR} (a function of k, σ and the public "
                "radius only)",
            )
            if self.truncated:
                ball_rate = _spd_ball_rate(space.k, self.scale, t_max, self.radius)
                if self._method == "spd-eigen":
                    ball_bound = ball_rate
                self._ball_acceptance = ball_rate
                estimate = f"public lower bound over every footpoint in the ball: {ball_rate:.1e}"
        else:
            self._method = "mcmc"
            # The chains start at the public centre when there is a ball (_mcmc_start).
            start = "the public center" if self.truncated else "the public point space.random_point(rng=0)"
            description = f"MH random walk (no exact sampler for {space!r}), started at {start}; burn-in {self.burn_in}"
            mh = (
                f"random-walk Metropolis–Hastings started at {start}, burn-in {self.burn_in}, thinning {self.thinning}",
                f"no exact sampler is known for {space!r}",
            )
        if self.truncated and self._method == "mcmc":
            trunc = f"; restricted to B_{self.radius!r}(center)"
        elif self.truncated:
            if (
                ball_rate < ACCEPTANCE_FLOOR
                and self._method == "radial"
                and has_exact_ball_proposal(space, self.radius)
            ):
                # Rejection into the ball could be slow; draw in polar coordinates at η from the
                # in-ball directions instead (exact, the construction keeps ≥ 1/2 of proposals).
                self._method, ball_bound = "ball-polar", _BALL_POLAR_RATE
                description = (
                    f"exact: polar coordinates at the footpoint restricted to B_{self.radius!r}(center): radius "
                    "∝ e^{−t/σ}·J(t)·S(t) by rejection from a secant hat (S the in-ball share of directions), "
                    f"direction uniform in the in-ball set; acceptance ≥ {_BALL_POLAR_RATE} by construction "
                    f"(rejection into the ball would accept ≥ {ball_rate:.1e} only)"
                )
            elif ball_rate < ACCEPTANCE_FLOOR:
                self._method = "mcmc"
                description = (
                    f"MH restricted to the ball, started at its center: exact sampling with rejection "
                    f"into B_{self.radius!r} could accept below {ACCEPTANCE_FLOOR} ({estimate}); "
                    f"burn-in {self.burn_in}"
                )
                mh = (
                    f"random-walk Metropolis–Hastings restricted to the ball B_{self.radius!r}(center), "
                    f"started at the public center, burn-in {self.burn_in}, thinning {self.thinning}",
                    f"exact rejection into the ball could accept below {ACCEPTANCE_FLOOR} ({estimate})",
                )
            elif ball_bound is not None:
                trunc = (
                    f"; truncated to B_{self.radius!r}(center) by rejection (acceptance ≥ {ball_bound:.3g} "
                    "at every footpoint in the ball)"
                )
            else:
                trunc = (
                    f"; truncated to B_{self.radius!r}(center) by rejection (acceptance ≈ {ball_rate:.3g} "
                    "at the center)"
                )
        self._ball_bound = ball_bound
        self.exact = self._method in ("chart", "radial", "spd-eigen", "ball-polar")
        self.sampler = description + trunc
        # Public: (space, σ, ball, settings) only. Kept for KNG, whose proposal this law may be.
        self._mh_sampler, self._mh_reason = (None, None) if self.exact else mh
        self.approximation_notice = (
            None
            if self.exact
            else approximate_sampler_notice(f"Riemannian Laplace on {space!r}", self._mh_sampler, self._mh_reason)
        )

    # ----------------------------------------------------------------- drawing
    def _draw_coordinates(self, m, rng):
        t = self._radial.sample(m, rng=rng)
        u = rng.standard_normal((m, self.space.dim))
        u /= np.linalg.norm(u, axis=-1, keepdims=True)
        return self.space.to_coordinates(self.footpoint) + t[:, None] * u

    def _draw(self, m, rng):
        """``m`` exact draws of the (radially restricted) untruncated law."""
        if self._method == "chart":
            return self.space.from_coordinates(self._draw_coordinates(m, rng))
        if self._method == "radial":
            u = self.space.unchecked.random_unit_tangent(self.footpoint, size=m, rng=rng)
            return self.space.unchecked.polar_exp(self.footpoint, u, self._radial.sample(m, rng=rng))
        if self._method == "spd-eigen":
            S = self._eigen.sample_symmetric(m, rng=rng)
        else:
            S, result = self._eigen.sample_symmetric_mcmc(m, rng=rng, burn_in=self.burn_in, thinning=self.thinning)
            self.diagnostics = result.diagnostics
        return mf.sym(mf.congruence(self._footpoint_root, mf.expm(S)))

    @functools.cached_property
    def _ball_polar(self):
        """The polar proposal at η restricted to the ball, built once per law (its nodes depend on
        ρ(η, m0), hence on the data: this costs time, not privacy; under fixed work the build does
        the same work for every η: docs/math.md §15)."""
        return exact_ball_proposal(self.space, self.footpoint, self.center, 1.0 / self.scale, self.radius)

    def _propose_in_ball(self, k, rng):
        """``k`` polar proposals; those kept by the construction and inside the ball (all of them
        but rounding-level strays at the boundary) are accepted."""
        if fixed_work() is not None:  # every candidate is checked (fixed work: docs/math.md §15)
            x, kept = self._ball_polar.propose_every(k, rng)
            inside = kept & (np.asarray(self.space.unchecked.dist(self.center, x)) <= self.radius)
            return x, np.where(inside, 0.0, -np.inf)
        x, kept = self._ball_polar.propose(k, rng)
        inside = np.asarray(self.space.unchecked.dist(self.center, x)) <= self.radius
        out, log_acc = np.empty((k,) + self.space.point_shape), np.full(k, -np.inf)
        accepted = np.flatnonzero(kept)[inside]
        out[accepted], log_acc[accepted] = x[inside], 0.0
        return out, log_acc

    @functools.cached_property
    def _footpoint_root(self):
        """``η^½`` (AI-SPD draws are ``η^½ Exp(S) η^½``), computed once per law."""
        return mf.sqrtm_and_invsqrtm(self.footpoint)[0]

    def _mcmc_start(self):
        """The chains' public starting point: the ball's centre, else a fixed-seed point of the
        space (never the footpoint, which is private; the burn-in carries the chains to the law)."""
        if self.truncated:
            return self.center
        return self.space.check_points(self.space.random_point(rng=0), "start", batch_ndim=0)

    def _mcmc(self, m, rng):
        support = None
        if self.truncated:

            def support(x):
                return self.space.unchecked.dist(self.center, x) <= self.radius

        result = random_walk_metropolis(
            self.space,
            self.log_density,
            np.repeat(self._mcmc_start()[None], m, axis=0),
            burn_in=self.burn_in,
            thinning=self.thinning,
            in_support=support,
            step_size=min(self.scale, self.radius if self.truncated else math.inf, self.space.injectivity_radius / 4),
            rng=rng,
            factored_log_density=self._factored_log_density
            if "spd-eigenvalue-laplace" in self.space.closed_forms
            else None,
        )
        self.diagnostics = result.diagnostics
        return result.samples[0]

    def sample(self, size=None, rng=None):
        """Draw ``size`` points (``None``: one point). Warns
        (:class:`~geodp.errors.ApproximateSamplerWarning`, once per call) when the sampler is MH."""
        self._warn_if_approximate()
        return self._sample(size, rng)

    def _sample(self, size=None, rng=None):
        """:meth:`sample` without the warning (for laws that use this one as a proposal)."""
        rng = as_generator(rng)
        shape = size_tuple(size)
        m = int(np.prod(shape, dtype=int))
        if self._method == "mcmc":
            x = self._mcmc(m, rng)
        elif self._method == "ball-polar":
            x, _ = rejection_sample(
                self._propose_in_ball, m, self.space.point_shape, 2 * _BALL_POLAR_RATE, rng, min_rate=_BALL_POLAR_RATE
            )
        elif self.truncated:

            def propose(k, rng):
                x = self._draw(k, rng)
                return x, np.where(self.space.unchecked.dist(self.center, x) <= self.radius, 0.0, -np.inf)

            x, _ = rejection_sample(
                propose, m, self.space.point_shape, self._ball_acceptance, rng, min_rate=self._ball_bound
            )
        else:
            x = self._draw(m, rng)
        return x.reshape(shape + self.space.point_shape)

    def sample_coordinates(self, size=None, rng=None):
        """Flat spaces: draws in the isometric chart, free of the chart round-trip error."""
        if self._method != "chart":
            raise InvalidTypeError(f"sample_coordinates needs a flat space, got {self.space!r}.")
        rng = as_generator(rng)
        shape = size_tuple(size)
        m = int(np.prod(shape, dtype=int))
        if not self.truncated:
            y = self._draw_coordinates(m, rng)
        else:
            c = self.space.to_coordinates(self.center)

            def propose(k, rng):
                z = self._draw_coordinates(k, rng)
                return z, np.where(np.linalg.norm(z - c, axis=-1) <= self.radius, 0.0, -np.inf)

            y, _ = rejection_sample(
                propose, m, (self.space.dim,), self._ball_acceptance, rng, min_rate=self._ball_bound
            )
        return y.reshape(shape + (self.space.dim,))

    @functools.cached_property
    def _inv_roots(self):
        """``η^-½`` and (truncated) ``m0^-½``, once per law: MH on AI-SPD evaluates distances
        from them at every step."""
        roots = [mf.sqrtm_and_invsqrtm(self.footpoint)[1]]
        return roots + ([mf.sqrtm_and_invsqrtm(self.center)[1]] if self.truncated else [])

    def _factored_log_density(self, x, factor, inv_factor):
        """:meth:`log_density` on AI-SPD from the cached inverse roots (one ``eigvalsh`` per
        distance; the chain's factors are not needed)."""

        def dist(inv_root):
            w = np.linalg.eigvalsh(mf.congruence(inv_root, x))
            return np.sqrt(np.sum(np.log(mf.positive_eigenvalues(w)) ** 2, axis=-1))

        value = -dist(self._inv_roots[0]) / self.scale
        if self.truncated:
            value = np.where(dist(self._inv_roots[1]) <= self.radius, value, -np.inf)
        return value

    def log_density(self, x):
        """``−ρ(η, x)/σ`` (``−inf`` outside the truncation ball)."""
        value = -np.asarray(self.space.unchecked.dist(self.footpoint, x)) / self.scale
        if self.truncated:
            value = np.where(self.space.unchecked.dist(self.center, x) <= self.radius, value, -np.inf)
        return value
