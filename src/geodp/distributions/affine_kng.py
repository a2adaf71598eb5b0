"""The exact K-norm gradient law of an affine gradient field (docs/math.md §5, §9).

When the objective's gradient is affine in the parameters, ``∇F_D(θ) = Aθ − B`` (least squares:
``A = X̃ᵀX̃/n``, ``B = X̃ᵀY/n``), the KNG density ``∝ exp(−‖Aθ − B‖_F/σ)`` is the image of an
l2-Laplace ``z`` in ``R^{q·d}`` under the affine map ``θ = A⁻¹(B + z)`` (a linear change of
variables: constant Jacobian). Truncation to a public convex domain Θ is exact by rejection.

When Θ is a :class:`CrossPolytopeDomain`, more exact proposals join the race (the second only
when the unconstrained mode ``θ̂ = A⁻¹B`` lies outside Θ), built on the constrained minimiser
``θ*`` of ``f(θ) = ‖Aθ − B‖_F`` over Θ (any approximation of it is valid: the bounds below are
certified with the exact support function of Θ):

* **hyperbolic envelope at θ*.** With ``r* = Aθ* − B``, ``ρ = ‖r*‖`` and
  ``η = ⟨θ*, Ar*⟩ − min_{θ∈Θ} ⟨θ, Ar*⟩`` (``η = 0`` at the exact minimiser),
  ``f(θ)² = ‖A(θ − θ*)‖² + 2⟨θ − θ*, Ar*⟩ + ρ² ≥ ‖A(θ − θ*)‖² + κ²`` on Θ, with
  ``κ² = ρ² − 2η``. So ``exp(−f/σ) ≤ exp(−√(‖u‖² + κ²)/σ)`` with ``u = A(θ − θ*)``: a multivariate
  hyperbolic law, a Gaussian scale mixture ``u = √W·N(0, I)``, ``W ~ GIG((k+1)/2, κ², 1/σ²)``
  (k = q·d). Accept with probability ``exp(−(f(θ) − √(‖u‖² + κ²))/σ)`` inside Θ. It is tight
  where the law piles up against the boundary of Θ.
* **uniform on Θ**, accepted with probability ``exp(−(f(θ) − L)/σ)``, where ``L ≤ min_Θ f`` is
  the weak-duality bound ``−⟨Λ, B⟩ + min_{θ∈Θ} ⟨AΛ, θ⟩`` with ``Λ = r*/ρ`` (and ``L ≥ κ``;
  ``L = 0`` when θ̂ ∈ Θ). It is efficient where the law is wide compared with Θ (small n, an
  ill-conditioned design, many covariates).

A singular ``A`` (a covariate constant on the data) leaves the law proper on a bounded domain
that offers ``uniform`` draws (and ``bounding_ball``): it is sampled by uniform proposals racing
an l2-Laplace in the range of ``A`` times uniform draws in its kernel.

Each accepted proposal, whatever its kind, is an exact draw from the truncated law, so racing
them (batch sizes chosen from acceptance counts only) keeps the output law exact.

**Termination is public** (:func:`affine_kng_route`). The work of rejection must not depend on
one record in a way that shows (a capped sampler that gives up on one dataset and not on its
neighbour leaks through whether it gave up: docs/math.md §5). The uniform proposal accepts with
probability ``exp(−(‖Aθ − B‖ − L)/σ) ≥ exp(−G/σ)`` for every dataset, where ``G`` is a public bound
on ``‖Aθ − B‖`` over Θ and over the public data domain (the caller's ``gradient_bound``; for least
squares ``max‖x̃‖·‖τ‖``). When the proposal count this bound implies fits the public work cap,
the release is exact and ends within that count except with probability below e^−50. Otherwise
the race runs up to the public cap and, if it has not finished, a Metropolis–Hastings chain of
fixed public length finishes the draw: the release always ends within public work, and it is
reported as approximate (``exact=False``) because the mixture weight of the chain depends on the
data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import linalg, stats

from geodp.distributions.base import Distribution, approximate_sampler_notice, rejection_sample, size_tuple
from geodp.distributions.laplace import l2_laplace_noise
from geodp.distributions.mcmc import random_walk_metropolis
from geodp.distributions.polytope import CrossPolytopeDomain
from geodp.errors import (
    InvalidDataError,
    InvalidTypeError,
    ProposalBudgetExhaustedError,
)
from geodp.manifolds.euclidean import Euclidean
from geodp.validation import as_generator, check_positive, check_positive_integer

__all__ = [
    "AffineKNG",
    "AffineKNGRoute",
    "CrossPolytopeDomain",
    "MAX_PROPOSALS",
    "affine_kng_route",
    "approximate_route_notice",
    "proven_n_epsilon",
]

#: A Gram matrix whose condition number exceeds this is refused as singular: the solve would
#: lose more than ~4 of float64's 16 digits, and the design does not identify the parameters.
CONDITION_LIMIT = 1e12
# Floats per proposal batch (q·d per proposal): bounds the sampler's memory at ~64 MB.
_BATCH_FLOATS = 8_000_000
#: Public cap on the proposals of one release (all kinds counted): about 10 s of work at q·d = 11.
MAX_PROPOSALS = 10_000_000
# Most proposal kinds a race holds (Laplace or range-kernel, hyperbolic envelope, uniform): the
# uniform proposal gets at least 1/_RACE_KINDS of the proposals.
_RACE_KINDS = 3
# Smallest rate κ/σ of the hyperbolic envelope's GIG mixing law that scipy samples reliably.
_GIG_MIN_RATE = 1e-90
# The Metropolis–Hastings chain that finishes a draw the capped race did not (public settings).
FALLBACK_BURN_IN = 3_000
FALLBACK_THINNING = 500


@dataclass(frozen=True)
class AffineKNGRoute:
    """How :class:`AffineKNG` will draw, decided from public quantities only.

    Attributes
    ----------
    exact : bool
        The proven acceptance bound makes the race end within ``max_proposals`` except with
        probability below e^−50: the draw is exact.
    acceptance_bound : float
        Proven lower bound on the race's acceptance per proposal, over every dataset of the
        public domain (0.0 when none is known).
    max_proposals : int
        The public cap on proposals. Past it (only possible when ``exact`` is False) a
        Metropolis–Hastings chain of ``FALLBACK_BURN_IN + FALLBACK_THINNING`` steps finishes
        the draw.
    sampler : str
        Public description, for the guarantee.
    """

    exact: bool
    acceptance_bound: float
    max_proposals: int
    sampler: str


def affine_kng_route(
    scale, gradient_bound=None, need: int = 1, *, uniform: bool = True, max_proposals: int | None = None
) -> AffineKNGRoute:
    """The public route of an :class:`AffineKNG` release: exact within a proven proposal count,
    or a capped race finished by a fixed-length Metropolis–Hastings chain.

    Parameters
    ----------
    scale : float
        σ.
    gradient_bound : float, optional
        Public bound ``G ≥ ‖Aθ − B‖_F`` for every θ in the domain and every dataset of the
        public data domain. The uniform proposal (``L ≤ min f``, so its acceptance is at least
        ``exp(−G/σ)``) then gives the race an acceptance of at least ``exp(−G/σ)/3``.
    need : int
        Draws per call.
    uniform : bool
        Whether the domain offers uniform draws (the proof needs them).
    max_proposals : int, optional
        Public work cap; default ``MAX_PROPOSALS``.

    Returns
    -------
    AffineKNGRoute

    Examples
    --------
    >>> affine_kng_route(0.5, gradient_bound=2.0).exact          # small n·ε: proven
    True
    >>> affine_kng_route(0.01, gradient_bound=2.0).exact         # exp(-200): no proof
    False
    """
    scale = check_positive(scale, "scale")
    max_proposals = MAX_PROPOSALS if max_proposals is None else max_proposals
    max_proposals = check_positive_integer(max_proposals, "max_proposals")
    bound = 0.0
    if gradient_bound is not None and uniform:
        bound = math.exp(-check_positive(gradient_bound, "gradient_bound") / scale) / _RACE_KINDS
    budget = (2 * need + 400) / bound if bound > 0 else math.inf
    base = (
        "exact: l2-Laplace mapped through A⁻¹(B + z) (Cholesky solve), truncated to the public domain by "
        "rejection, racing uniform proposals on the domain (and, for a polytope whose constrained "
        "minimiser is on its boundary, a certified hyperbolic envelope; for a singular design, an "
        "l2-Laplace in the Gram's range times uniform draws in its kernel)"
    )
    if budget <= max_proposals:
        text = (
            f"{base}; proven acceptance >= {bound:.3g} for every dataset, so it ends within "
            f"{math.ceil(budget):,} proposals except with probability < e^-50"
        )
        return AffineKNGRoute(True, bound, int(math.ceil(budget)), text)
    text = (
        f"{base.replace('exact: ', '', 1)}, for at most {max_proposals:,} proposals; if that race "
        f"has not ended, a random-walk Metropolis–Hastings chain of {FALLBACK_BURN_IN + FALLBACK_THINNING:,} "
        "steps on the same truncated law finishes the draw (no acceptance bound is proven for every "
        "dataset at this σ, so the release is approximate)"
    )
    return AffineKNGRoute(False, bound, int(max_proposals), text)


def proven_n_epsilon(max_proposals: int | None = None) -> float:
    """Largest n·ε at which one least-squares release (linear, or geodesic on a flat space) is
    proven exact within the public cap: their gradient bound and scale give ``G/σ = n·ε/4``, and
    :func:`affine_kng_route` is exact while ``3·402·exp(G/σ) ≤ max_proposals``.

    Examples
    --------
    >>> round(proven_n_epsilon(), 1)          # with the default cap of 10⁷ proposals
    36.1
    """
    cap = MAX_PROPOSALS if max_proposals is None else max_proposals
    return 4.0 * math.log(cap / (_RACE_KINDS * 402))


def approximate_route_notice(n_epsilon: float, route: AffineKNGRoute) -> str:
    """The :class:`~geodp.errors.ApproximateSamplerWarning` of a least-squares release whose
    route is not proven exact (public: n, ε and the cap only)."""
    return (
        f"This release may finish by Metropolis–Hastings: its exact sampler is proven to end within "
        f"the public cap of {route.max_proposals:,} proposals only for "
        f"n·ε <= {proven_n_epsilon(route.max_proposals):.1f} "
        f"(here n·ε = {n_epsilon:.6g}); past the cap, a Metropolis–Hastings chain of "
        f"{FALLBACK_BURN_IN + FALLBACK_THINNING:,} steps finishes the draw, so DP holds only approximately "
        "and the report says exact: no. On ordinary data the exact race finishes well within the cap "
        "(curator_diagnostics_.sampler_fell_back says whether it did; never publish it). See docs/guide.md, "
        "'Nothing fails after the charge'."
    )


class AffineKNG(Distribution):
    """KNG law of an affine gradient field, ``∝ exp(−‖Aθ − B‖_F / σ)`` on a public convex domain.

    Exact sampler: ``z`` from the l2-Laplace in ``R^{q·d}`` (``σ·Gamma(q·d, 1)`` times a uniform
    direction), ``θ = A⁻¹(B + z)`` through a Cholesky solve, kept iff ``θ`` lies in the domain
    (rejection is exact truncation). When ``in_domain`` is a :class:`CrossPolytopeDomain`,
    uniform draws on the domain and, if ``θ̂ = A⁻¹B`` lies outside it, a hyperbolic envelope at
    the constrained minimiser (exact proposals too; see the module docstring) race with it; any
    domain with ``uniform`` adds uniform proposals. Its work is public
    (:func:`affine_kng_route`): exact within a proven proposal count, or capped and finished by
    a fixed-length Metropolis–Hastings chain (then ``exact`` is False).

    Parameters
    ----------
    gram : array_like, shape (q, q)
        ``A``, symmetric positive semi-definite (the design Gram ``X̃ᵀX̃/n``). A singular one is
        accepted only with a bounded domain that offers ``uniform``.
    target : array_like, shape (q, d)
        ``B`` (``X̃ᵀY/n``). The unconstrained mode is ``θ̂ = A⁻¹B``.
    scale : float
        σ > 0.
    in_domain : callable
        ``in_domain(theta) -> bool array``: ``theta`` of shape ``(N, q, d)`` → shape ``(N,)``.
        Membership in the public convex domain Θ; it must not depend on the private data. If it
        also has a method ``uniform(m, rng) -> (m, q, d)`` drawing uniformly from Θ (a bounded
        domain), uniform proposals join the race, and a singular ``gram`` is sampled by them. An
        attribute ``center`` (a public point of Θ) is where the fallback chain starts when no
        proposal landed in Θ; without it, an unfinished race raises
        :class:`~geodp.errors.ProposalBudgetExhaustedError` instead.
    gradient_bound : float, optional
        Public bound on ``‖Aθ − B‖_F`` over Θ for every dataset of the public data domain: it
        proves the acceptance bound of :func:`affine_kng_route`.
    max_proposals : int, optional
        Public cap on the proposals of one :meth:`sample` call; default ``MAX_PROPOSALS``.

    Attributes
    ----------
    space : Euclidean
        ``Euclidean(q·d)``: the law lives on ``R^{q×d}`` with the Frobenius metric; points keep
        their ``(q, d)`` shape.
    exact : bool
        Whether one draw is exact (:func:`affine_kng_route`; public).
    sampler : str
        Public description of the sampler.
    acceptance_rate : float or None
        Share of proposals accepted during the last :meth:`sample` call (``None`` before). It
        depends on the data: **curator-only**, never publish it.
    fell_back : bool or None
        Whether the last :meth:`sample` call needed the fallback chain (**curator-only**).

    Raises
    ------
    InvalidDataError
        ``gram`` is ill-conditioned (condition number beyond ``CONDITION_LIMIT``: the design is
        singular) and the domain offers no ``uniform``. Whether this happens depends on the data.

    Notes
    -----
    Rejection's running time and which proposals run depend on the data (on how much of the law
    falls in Θ): a timing channel, bounded by the public ``max_proposals`` plus the chain.

    Examples
    --------
    >>> import numpy as np
    >>> box = CrossPolytopeDomain([1.0, 1.0], np.zeros((2, 1)), [2.0])
    >>> law = AffineKNG(np.eye(2), np.zeros((2, 1)), 1.0, in_domain=box, gradient_bound=3.0)
    >>> law.sample(5, rng=0).shape
    (5, 2, 1)
    >>> law.exact, float(law.log_density(np.full((2, 1), 2.0)))
    (True, -inf)
    """

    def __init__(self, gram, target, scale, *, in_domain, gradient_bound=None, max_proposals=None):
        gram = _as_float_array(gram, "gram")
        target = _as_float_array(target, "target")
        if gram.ndim != 2 or gram.shape[0] != gram.shape[1] or gram.shape[0] < 1:
            raise InvalidDataError(f"gram must be a square (q, q) matrix, got shape {gram.shape}.")
        q = gram.shape[0]
        if target.ndim != 2 or target.shape[0] != q or target.shape[1] < 1:
            raise InvalidDataError(f"target must have shape (q, d) = ({q}, d), got shape {target.shape}.")
        if not (np.all(np.isfinite(gram)) and np.all(np.isfinite(target))):
            raise InvalidDataError("gram and target must be finite.")
        if not np.allclose(gram, gram.T, rtol=1e-10, atol=1e-12 * float(np.max(np.abs(gram), initial=0.0))):
            raise InvalidDataError("gram must be symmetric.")
        if not callable(in_domain):
            raise InvalidTypeError(f"in_domain must be callable, got {type(in_domain).__name__}.")
        self.scale = check_positive(scale, "scale")
        samplable = callable(getattr(in_domain, "uniform", None))
        self.gradient_bound, self.max_proposals, self.in_domain = gradient_bound, max_proposals, in_domain
        self.route(1)  # validates gradient_bound and max_proposals
        gram = 0.5 * (gram + gram.T)
        eigenvalues = np.linalg.eigvalsh(gram)
        self.singular = not eigenvalues[0] > eigenvalues[-1] / CONDITION_LIMIT
        self._positive_rank = bool(eigenvalues[-1] > 0.0)  # a zero Gram has no range to propose in
        if self.singular and not samplable:
            raise InvalidDataError(
                "the design is singular: a covariate is constant (or a linear combination of the "
                f"others) on these data, so its Gram matrix is not invertible (condition number beyond "
                f"{CONDITION_LIMIT:.0e}). Drop the constant or redundant covariates."
            )
        # A singular design leaves the law proper on a bounded domain: sample it by uniform
        # proposals alone (the Laplace proposal needs A⁻¹).
        self._factor = None if self.singular else linalg.cho_factor(gram, lower=True, check_finite=False)
        self._samplable = samplable
        self.gram, self.target = gram, target
        self.q, self.d = q, target.shape[1]
        self.space = Euclidean(q * self.d)
        self.in_domain = in_domain
        self.acceptance_rate = None
        self.fell_back = None
        self.chain_diagnostics = None  # MCMCDiagnostics of the last fallback chain (curator-only)
        self._best_inside = None  # (objective, θ) of the best proposal inside the domain, curator-only
        self._track_best = False
        first = self.route(1)
        self.exact, self.sampler = first.exact, first.sampler
        self.approximation_notice = (
            None
            if first.exact
            else approximate_sampler_notice(
                "the K-norm gradient law of an affine gradient field",
                "a capped exact race finished by MCMC",
                "no acceptance bound is proven for every dataset at this noise scale",
            )
        )

    def __repr__(self) -> str:
        return f"AffineKNG(q={self.q}, d={self.d}, scale={self.scale!r})"

    def route(self, need: int) -> AffineKNGRoute:
        """The public route of a call drawing ``need`` points (:func:`affine_kng_route`)."""
        return affine_kng_route(
            self.scale,
            self.gradient_bound,
            need,
            max_proposals=self.max_proposals,
            uniform=callable(getattr(self.in_domain, "uniform", None)),
        )

    def mode(self) -> np.ndarray:
        """``θ̂ = A⁻¹B``, the unconstrained minimiser (computed from the data: never publish it;
        undefined for a singular design)."""
        if self._factor is None:
            raise InvalidDataError("the design is singular: the unconstrained minimiser is not unique.")
        return self._solve(self.target[None])[0]

    def _solve(self, rhs):
        """``A⁻¹ rhs`` for ``rhs`` of shape (N, q, d)."""
        m = rhs.shape[0]
        flat = np.moveaxis(rhs, 1, 0).reshape(self.q, m * self.d)
        sol = linalg.cho_solve(self._factor, flat, check_finite=False)
        return np.moveaxis(sol.reshape(self.q, m, self.d), 0, 1)

    def _objective(self, theta):
        """``‖Aθ − B‖_F`` for ``theta`` of shape (N, q, d)."""
        residual = np.einsum("ij,njk->nik", self.gram, theta) - self.target
        return np.linalg.norm(residual.reshape(len(theta), -1), axis=1)

    def _inside(self, theta):
        inside = np.asarray(self.in_domain(theta), dtype=bool)
        if inside.shape != (len(theta),):
            raise InvalidTypeError(
                f"in_domain must return a bool array of shape (N,) = ({len(theta)},), got shape {inside.shape}."
            )
        # A proposal the float64 solve made non-finite is outside every domain.
        return inside & np.all(np.isfinite(theta), axis=(1, 2))

    def _truncated(self, theta, log_accept=0.0):
        """``(theta, log_accept)`` with ``-inf`` outside the domain (rejection is truncation)."""
        inside = self._inside(theta)
        if self._track_best and inside.any():  # the fallback chain's start: the best proposal in the domain
            candidates = theta[inside]
            values = self._objective(candidates)
            best = int(np.argmin(values))
            if self._best_inside is None or values[best] < self._best_inside[0]:
                self._best_inside = (values[best], candidates[best])
        return theta, np.where(inside, log_accept, -np.inf)

    def _laplace_proposal(self, m, rng):
        z = l2_laplace_noise(self.q * self.d, self.scale, size=(m,), rng=rng).reshape(m, self.q, self.d)
        return self._truncated(self._solve(self.target[None] + z))

    def _uniform_proposal(self, m, rng, lower=0.0):
        """Uniform on the domain (its ``uniform(m, rng)``), accepted with probability
        ``exp(−(‖Aθ − B‖ − L)/σ)``, ``L ≤ min_Θ ‖Aθ − B‖``: exact, since the density is at most
        ``exp(−L/σ)`` there."""
        theta = np.asarray(self.in_domain.uniform(m, rng), dtype=float)
        return self._truncated(theta, np.minimum(0.0, -(self._objective(theta) - lower) / self.scale))

    def _range_kernel_proposal(self):
        """Singular ``A = U_r Λ U_rᵀ``: the density depends on θ only through its range
        coordinates ρ = U_rᵀθ, ``‖Aθ − B‖² = ‖Λρ − U_rᵀB‖² + c²`` (c = ‖U_kᵀB‖, zero up to
        rounding). Propose ρ = Λ⁻¹(U_rᵀB + z), z an l2-Laplace of scale σ, and the kernel
        coordinates uniform in the projection of the domain's bounding ball; accept inside the
        domain with probability ``exp(−(√(g² + c²) − g)/σ)``, g = ‖Λρ − U_rᵀB‖. The proposal
        covers the domain and its density is ``exp(−g/σ)`` there, so this is exact."""
        w, u = np.linalg.eigh(self.gram)
        keep = w > w[-1] / CONDITION_LIMIT
        u_r, u_k, lam = u[:, keep], u[:, ~keep], w[keep]
        b_r = u_r.T @ self.target
        c = float(np.linalg.norm(u_k.T @ self.target))
        center, radius = self.in_domain.bounding_ball()
        k_center = u_k.T @ np.asarray(center, dtype=float)
        r_dim, k_dim = b_r.size, k_center.size

        def propose(m, rng):
            z = l2_laplace_noise(r_dim, self.scale, size=(m,), rng=rng).reshape((m,) + b_r.shape)
            rho = (b_r + z) / lam[:, None]
            g = np.linalg.norm(z.reshape(m, -1), axis=1)
            direction = rng.standard_normal((m, k_dim))
            direction /= np.linalg.norm(direction, axis=1, keepdims=True)
            kernel = k_center + (direction * (radius * rng.random((m, 1)) ** (1.0 / k_dim))).reshape(
                (m,) + k_center.shape
            )
            theta = np.einsum("ij,njk->nik", u_r, rho) + np.einsum("ij,njk->nik", u_k, kernel)
            return self._truncated(theta, -(np.sqrt(g * g + c * c) - g) / self.scale)

        return propose

    def _structured_proposals(self):
        """The hyperbolic-envelope and uniform proposals (certified with the domain's support
        function) for a :class:`CrossPolytopeDomain`. With the mode inside the domain only the
        uniform one is added (with ``L = 0``): it is the efficient one when the law is much
        wider than the domain."""
        domain, sigma, k = self.in_domain, self.scale, self.q * self.d
        mode = self.mode()
        if self._inside(mode[None])[0]:
            anchor, rho = mode, 0.0
        else:
            anchor = domain.minimise_quadratic(self.gram, self.target)
            residual = self.gram @ anchor - self.target
            rho = float(np.linalg.norm(residual))
        proposals = []
        kappa = kappa_sq = lower = 0.0
        if rho > 0:
            direction = self.gram @ residual
            _, support = domain.minimise_linear(direction)
            eta = float(np.sum(anchor * direction)) - support
            kappa_sq = (rho * rho - 2.0 * max(eta, 0.0)) * (1.0 - 1e-9)
            kappa = math.sqrt(kappa_sq) if kappa_sq > 0 else 0.0
            dual = (support - float(np.sum(residual * self.target))) / rho
            lower = max(kappa, dual * (1.0 - 1e-9) if dual > 0 else 0.0)

        if kappa / sigma > _GIG_MIN_RATE:  # scipy's GIG generator fails below (audit: b < 1e-105)

            def hyperbolic(m, rng):
                w = kappa * sigma * stats.geninvgauss.rvs((k + 1) / 2.0, kappa / sigma, size=m, random_state=rng)
                u = np.sqrt(w)[:, None, None] * rng.standard_normal((m, self.q, self.d))
                theta = anchor + self._solve(u)
                envelope = np.sqrt(np.sum(u * u, axis=(1, 2)) + kappa_sq)
                with np.errstate(invalid="ignore"):
                    return self._truncated(theta, np.minimum(0.0, -(self._objective(theta) - envelope) / sigma))

            proposals.append(hyperbolic)
        proposals.append(lambda m, rng: self._uniform_proposal(m, rng, lower))
        return proposals

    def _proposals(self, need):
        if self.singular:
            proposals = [self._uniform_proposal]
            if callable(getattr(self.in_domain, "bounding_ball", None)) and need > 0 and self._positive_rank:
                proposals.append(self._range_kernel_proposal())
            return proposals
        proposals = [self._laplace_proposal]
        if isinstance(self.in_domain, CrossPolytopeDomain) and need > 0:
            try:  # optional helpers: their construction must never decide whether a release happens
                with np.errstate(all="ignore"):
                    return proposals + self._structured_proposals()
            except (ArithmeticError, ValueError, RuntimeError, IndexError, np.linalg.LinAlgError):
                pass  # (audit: tiny designs underflowed the anchor's solver) the plain race below
        if self._samplable:
            proposals.append(self._uniform_proposal)
        return proposals

    def sample(self, size=None, rng=None):
        """Draw from the truncated law.

        Parameters
        ----------
        size : None, int or tuple of int
            ``None``: one draw of shape ``(q, d)``; otherwise shape ``(*size, q, d)``.
        rng : None, int or numpy.random.Generator

        Raises
        ------
        ProposalBudgetExhaustedError
            Only for a domain without ``center`` whose capped race did not finish (no estimator
            of geodp builds one).

        Warns
        -----
        ApproximateSamplerWarning
            When the route of this call is not exact (decided from public quantities).
        """
        shape = size_tuple(size)
        rng = as_generator(rng)
        need = math.prod(shape)
        route = self.route(need)
        if not route.exact:
            self._warn_if_approximate()
        self._best_inside, self._track_best = None, not route.exact  # the exact route never falls back
        max_batch = max(16, _BATCH_FLOATS // (self.q * self.d))
        draws, self.acceptance_rate = rejection_sample(
            self._proposals(need),
            need,
            (self.q, self.d),
            1.0,
            rng,
            max_batch=max_batch,
            min_rate=route.acceptance_bound if route.exact else None,
            max_proposals=route.max_proposals,
        )
        self.fell_back = len(draws) < need
        if self.fell_back:
            draws = np.concatenate([draws, self._chain(need - len(draws), rng)])
        return draws.reshape(shape + (self.q, self.d))

    def _chain(self, count, rng):
        """``count`` draws by random-walk MH of fixed public length, in coordinates where the law
        is about isotropic (``θ = θ0 + σ(A + σ/R·I)⁻¹u``, R the domain's bounding radius), started
        at the best proposal that fell in the domain (a noisy draw of an exact proposal, never the
        non-private minimiser), else at the domain's public ``center``."""
        start = self._best_inside[1] if self._best_inside is not None else getattr(self.in_domain, "center", None)
        if start is None:
            raise ProposalBudgetExhaustedError(
                f"the public parameter domain barely overlaps the KNG law: {self.route(count).max_proposals:,} "
                "proposals did "
                "not finish, and the domain has no public center to start the fallback chain from. Give the "
                "domain a center attribute, widen it, or raise max_proposals."
            )
        start = np.asarray(start, dtype=float).reshape(self.q, self.d)
        radius = self.in_domain.bounding_ball()[1] if callable(getattr(self.in_domain, "bounding_ball", None)) else 1.0
        whiten = self.scale * np.linalg.inv(self.gram + self.scale / radius * np.eye(self.q))
        k = self.q * self.d

        def to_theta(u):
            return start + np.einsum("ij,njk->nik", whiten, u.reshape(-1, self.q, self.d))

        def log_density(u):
            theta = to_theta(u)
            return np.where(self._inside(theta), -self._objective(theta) / self.scale, -np.inf)

        chains = random_walk_metropolis(
            Euclidean(k),
            log_density,
            np.zeros((count, k)),
            burn_in=FALLBACK_BURN_IN,
            thinning=FALLBACK_THINNING,
            step_size=1.0 / math.sqrt(k),
            rng=rng,
        )
        self.chain_diagnostics = chains.diagnostics
        return to_theta(chains.samples[0])

    def log_density(self, theta):
        """Unnormalised log-density ``−‖Aθ − B‖_F/σ`` at ``theta`` (shape ``(..., q, d)``);
        ``-inf`` outside the domain."""
        theta = np.asarray(theta, dtype=float)
        if theta.shape[-2:] != (self.q, self.d):
            raise InvalidDataError(f"theta must have shape (..., {self.q}, {self.d}), got {theta.shape}.")
        batch = theta.shape[:-2]
        flat = theta.reshape((-1, self.q, self.d))
        logp = -self._objective(flat) / self.scale
        return np.where(self._inside(flat), logp, -np.inf).reshape(batch)


def _as_float_array(value, name: str) -> np.ndarray:
    try:
        arr = np.asarray(value)
    except Exception as exc:  # ragged lists and the like
        raise InvalidDataError(f"{name} could not be converted to an array: {exc}") from exc
    if (
        arr.dtype == object
        or not (np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.bool_))
        or np.iscomplexobj(arr)
    ):
        raise InvalidTypeError(f"{name} must be a real numeric array, got dtype {arr.dtype}.")
    return arr.astype(np.float64)
