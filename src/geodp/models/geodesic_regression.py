"""``PrivateGeodesicRegression``: a geodesic fitted to (covariate, manifold-valued response)
records, released by the K-norm gradient mechanism on the footpoint and velocity jointly."""

from __future__ import annotations

import math
import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError

from geodp.accountant import check_accountant
from geodp.distributions.affine_kng import affine_kng_route, approximate_route_notice
from geodp.distributions.tangent_bundle import TangentBundle
from geodp.errors import (
    ApproximateSamplerWarning,
    AssumptionError,
    GeodpError,
    InvalidDataError,
    InvalidParameterError,
    InvalidTypeError,
    NotOnManifoldError,
    PrivacyLeakWarning,
)
from geodp.manifolds.euclidean import Euclidean
from geodp.mechanisms.base import Guarantee, sampler_construction
from geodp.models.ball import resolve_ball
from geodp.models.geodesic_sampling import (
    BURN_IN,
    THINNING,
    flat_gradient_bound,
    flat_moment_part,
    flat_release_from_moments,
    from_chart,
    mcmc_draws,
    published_release,
)
from geodp.models.geodesic_tangent import TANGENT_SAMPLER, tangent_release, tangent_report, tangent_settings
from geodp.models.record_passes import (
    check_covariate_bounds,
    check_dask_records,
    combine_moments,
    covariate_records,
    record_pass,
    rows_per_block,
)
from geodp.models.report import (
    PrivacyReport,
    RegressionDiagnostics,
    regression_diagnostics,
    with_assumption,
    with_deadline,
    with_timing_policy,
)
from geodp.records import is_dask
from geodp.regression import check_regression_space, geodesic_predict
from geodp.release import ReleasePlan, check_timing_safe, deadline_key, execute, timing_deadline, timing_safe_plan
from geodp.secure import is_secure
from geodp.sensitivity import _k25_published_bounds, check_radius, geodesic_regression_sensitivity, max_radius
from geodp.validation import CLIP_MARGIN, as_generator, check_epsilon, check_positive

__all__ = ["PrivateGeodesicRegression"]

_FITTED = (
    "intercept_",
    "coef_",
    "n_samples_",
    "sensitivity_",
    "privacy_report_",
    "curator_diagnostics_",
    "timing_deadline_",
)
_ON_INVALID = ("raise", "center")
_MECHANISMS = ("auto", "tangent", "kng")
_INVALID_TEXT = (
    "the records hold responses that are not points of {space!r} or covariates that are not finite. "
    "Find them with space.invalid_records(y) and np.isfinite(X); or pass on_invalid='center' to "
    "replace each by the public centre."
)
_PUBLISHED_WARNING = (
    "as_published=True reproduces K25's release: its footpoint bound 2τcos(1)/n is about 1.85× too "
    "small and its first stage conditions on the non-private velocity, so it is NOT ε-DP at the "
    "stated epsilon. Use it for reproductions only."
)
# Largest reach (radius + x_max·V, in units of the curvature radius) on negatively curved spaces:
# the audit measured the gradient-norm error at 1.6e-4·Δ at distance 14 from the origin and
# 0.92·Δ at 16 on H².
_REACH_LIMIT = 12.0


class PrivateGeodesicRegression(BaseEstimator):
    """Differentially private geodesic regression (Fletcher 2011; K25 with sound bounds).

    The model is ``y ≈ Exp(p, Σ_j x̃_j v_j)`` with the covariates mapped through the public
    ``x_bounds`` to ``x̃ ∈ [−½, ½]^m`` (centred: ``p`` is the fitted point at the centre of the
    bounds). ``fit`` clips covariates into ``x_bounds`` and responses into the public ball
    ``B_radius(center)`` and releases ``(p, v)`` with one of two mechanisms:

    - ``"tangent"``: perturbed sufficient statistics of the fit of ``Log_center(y)`` on the
      covariate in the tangent space at the public centre (bin count, covariate sums, tangent bin
      sums; at ``n·ε ≥ 100`` a second pass on residuals clipped to ``L·residual_bound`` plus a
      margin, L the Lipschitz constant of ``Log_center`` on the ball, and a third where that
      margin is large against ``L·residual_bound``), mapped back to a geodesic;
      exact, a few milliseconds, one covariate (docs/math.md §9.3);
    - ``"kng"``: the K-norm gradient mechanism, density ``∝ exp(−‖(∇_p E, ∇_v E)‖/σ)`` on
      ``{p ∈ B_radius(center), ‖v‖ ≤ velocity_bound}`` with residuals clipped to
      ``residual_bound``, ``σ = 2Δ/ε`` with Δ the joint bound of
      :func:`geodesic_regression_sensitivity` (docs/math.md §9).

    Parameters
    ----------
    space : Manifold
        ``Euclidean``, ``Sphere``, ``Hyperbolic``, ``KendallShape`` or ``SPD`` (either metric;
        log-Euclidean is exact and fast, affine-invariant is sampled by MH at a few ms per step).
    epsilon : float
        Privacy budget (pure ε-DP), > 0.
    center : array_like, shape space.point_shape
        Public centre of the ball that holds the responses and the footpoint.
    radius : float
        Public radius of that ball, ``0 < radius < r*``.
    ball : PrivateBall, optional
        Instead of ``center`` and ``radius``: a ball released by
        :func:`geodp.domain.private_ball` on the responses (its cost adds to this release's).
    x_bounds : tuple (lower, upper)
        Public bounds of the covariates: scalars or arrays of length ``m``.
    residual_bound : float, optional
        ``τ``: residuals are clipped to this norm. Default (and upper limit, since no residual can
        exceed it): ``2·radius + x_max·velocity_bound``, the largest distance between a fitted
        value and a response, with ``x_max = √m/2``. A smaller τ means less noise but clips
        large residuals (a robust fit).
    velocity_bound : float, optional
        ``V``: bound on the velocity ``‖v‖ = (Σ_j |v_j|²)^½`` in the scaled covariates, i.e. on
        the length of the fitted geodesic across the covariate range (for one covariate).
        Default ``2·radius`` (a geodesic across the ball), reduced to ``inj/(2 x_max)`` where the
        injectivity radius is finite.
    mechanism : {"auto", "tangent", "kng"}, default "auto"
        ``"auto"`` picks ``"tangent"`` on curved spaces with one covariate (measured better than the
        KNG release there at every n·ε of K25's sphere setting but one, and ~1,000× faster:
        docs/regression.md §1b) and ``"kng"`` otherwise (flat spaces, where KNG is exact; several
        covariates, which ``"tangent"`` refuses). A public rule: it reads only the settings.
    as_published : bool, default False
        K25's two-stage release with its published bounds, for reproductions only: it is **not
        differentially private at the stated ε** (docs/math.md §10) and warns with
        :class:`~geodp.errors.PrivacyLeakWarning`.
    on_invalid : {"raise", "center"}, default "raise"
        A record whose response is not a point of the space or whose covariates are not finite:
        raise, or replace it by (centre of ``x_bounds``, ``center``).
    accountant : BudgetAccountant, optional
        Charged ``epsilon`` before the data are touched.
    random_state : None, int or numpy.random.Generator
    timing_safe : bool or float, default False
        Pad the private part of ``fit`` to a public deadline (seconds, or ``True``: calibrated
        on public stand-in records — covariates uniform in ``x_bounds``, responses at the centre
        or on the ball's boundary), in ``timing_deadline_`` and the report; see
        :class:`~geodp.models.PrivateFrechetMean` and SECURITY.md.

    Attributes
    ----------
    intercept_ : numpy.ndarray, shape space.point_shape
        The released fitted point at the centre of ``x_bounds``.
    coef_ : numpy.ndarray
        The released velocities **per unit of the original covariates**, tangent at
        ``intercept_``: shape ``space.point_shape`` for 1-D ``x``, ``(m, *space.point_shape)``
        otherwise. The prediction at ``x`` is ``Exp(intercept_, Σ_j (x_j − x_center_j)·coef_j)``.
    x_center_ : numpy.ndarray, shape (m,)
        Centre of ``x_bounds`` (public).
    n_samples_ : int
    sensitivity_ : RegressionSensitivity
    privacy_report_ : PrivacyReport
        The publishable guarantee (nothing in it is computed from the private data).
    curator_diagnostics_ : RegressionDiagnostics
        Curator-only facts (records clipped, sampler acceptance). Never publish them.

    Notes
    -----
    **Sampler.** ``mechanism="tangent"`` draws Laplace and tangent l2-Laplace noise exactly. For
    ``"kng"``: on flat spaces (Euclidean, log-Euclidean SPD) with the default residual bound,
    no residual is ever clipped on the support, the gradient is affine in ``(p, v)`` and the law
    is sampled exactly (an l2-Laplace pushed through the inverse design Gram, truncated to the
    support by rejection). On curved spaces it is sampled by Metropolis–Hastings on
    ``(p, v)`` (proposal ``p' = Exp(p, ξ)``, ``v' = Γ_{p→p'}(v + ζ)``), started at the public
    ``(center, 0)`` with a public number of steps: DP then holds only approximately, and an
    :class:`~geodp.errors.ApproximateSamplerWarning` says so before sampling. Each step costs one
    pass over the records (about 1 ms at n = 500 on the sphere, 2–4 ms on the hyperboloid and
    affine-invariant SPD at n = 100); a progress bar is shown on a terminal.

    **Privacy.** Replace-one adjacency, n public. Whether ``fit`` raises is observable: with
    ``on_invalid="raise"`` it depends on whether some record is invalid; the exact sampler
    refuses a singular design (constant covariates) and a support the law barely reaches.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Sphere
    >>> space = Sphere(2)
    >>> north = np.array([0.0, 0.0, 1.0])
    >>> t = np.linspace(0.0, 1.0, 200)
    >>> Y = space.exp(north, np.outer(t - 0.5, [0.4, 0.0, 0.0]))  # a geodesic through north
    >>> model = PrivateGeodesicRegression(space, epsilon=1.0, center=north, radius=0.5,
    ...                                   x_bounds=(0.0, 1.0), random_state=0)
    >>> import warnings
    >>> _ = model.fit(t, Y)                   # curved, one covariate: the exact tangent release
    >>> model.intercept_.shape, model.coef_.shape, model.predict([0.25, 0.75]).shape
    ((3,), (3,), (2, 3))
    >>> model.privacy_report_.to_dict()["exact"], bool(space.dist(model.intercept_, north) < 0.05)
    (True, True)

    On a flat space the records may be Dask arrays, read chunk by chunk (never materialised),
    for the in-memory release:

    >>> import dask.array as da
    >>> from geodp.manifolds import Euclidean
    >>> rng = np.random.default_rng(1)
    >>> x = rng.uniform(0.0, 1.0, 1000)
    >>> Y = np.outer(x - 0.5, [0.4, 0.0]) + rng.normal(scale=0.1, size=(1000, 2))
    >>> flat = dict(epsilon=1.0, center=np.zeros(2), radius=1.0, x_bounds=(0.0, 1.0), random_state=0)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")   # n·ε beyond the proven-exact range: said before the charge
    ...     memory = PrivateGeodesicRegression(Euclidean(2), **flat).fit(x, Y)
    ...     lazy = PrivateGeodesicRegression(Euclidean(2), **flat).fit(
    ...         da.from_array(x, chunks=300), da.from_array(Y, chunks=300))
    >>> bool(np.array_equal(lazy.coef_, memory.coef_) and np.array_equal(lazy.intercept_, memory.intercept_))
    True
    """

    def __init__(
        self,
        space,
        *,
        epsilon,
        center=None,
        radius=None,
        ball=None,
        x_bounds,
        residual_bound=None,
        velocity_bound=None,
        mechanism="auto",
        as_published=False,
        on_invalid="raise",
        accountant=None,
        random_state=None,
        timing_safe=False,
    ):
        self.space = space
        self.epsilon = epsilon
        self.center = center
        self.radius = radius
        self.x_bounds = x_bounds
        self.ball = ball
        self.residual_bound = residual_bound
        self.velocity_bound = velocity_bound
        self.mechanism = mechanism
        self.as_published = as_published
        self.on_invalid = on_invalid
        self.accountant = accountant
        self.random_state = random_state
        self.timing_safe = timing_safe

    def __getattr__(self, name):
        if name in _FITTED or name == "x_center_":
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet. Call 'fit' before using {name}."
            )
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # ------------------------------------------------------------------ public settings
    def _check_settings(self):
        space = self.space
        check_regression_space(space)
        if self.mechanism not in _MECHANISMS:
            raise InvalidParameterError(f"mechanism must be one of {_MECHANISMS}, got {self.mechanism!r}.")
        if self.on_invalid not in _ON_INVALID:
            raise InvalidParameterError(f"on_invalid must be one of {_ON_INVALID}, got {self.on_invalid!r}.")
        if not isinstance(self.as_published, (bool, np.bool_)):
            raise InvalidTypeError(f"as_published must be a bool, got {type(self.as_published).__name__}.")
        epsilon = check_epsilon(self.epsilon)
        center, radius, _ = resolve_ball(space, self.center, self.radius, self.ball)
        if center is None or radius is None or self.x_bounds is None:
            raise InvalidParameterError(
                "center, radius (or ball=geodp.domain.private_ball(...)) and x_bounds are required: they "
                "declare the public data domain. Do not compute them from the private data."
            )
        check_accountant(self.accountant)
        center = space.check_points(center, "center", batch_ndim=0)
        _recentring(space, center)  # refuses a centre too far out to move accurately
        radius = check_radius(space, radius)
        lower, upper = check_covariate_bounds(self.x_bounds)
        m = lower.size
        x_max = math.sqrt(m) / (1.0 if self.as_published else 2.0)
        if self.velocity_bound is None:
            velocity = 2.0 * radius
            if math.isfinite(space.injectivity_radius):
                velocity = min(velocity, space.injectivity_radius / (2.0 * x_max))
        else:
            velocity = check_positive(self.velocity_bound, "velocity_bound")
        reach = x_max * velocity
        if not (radius / 1e150 <= reach <= 1e150 * radius and reach <= space.max_representable_radius):
            raise AssumptionError(
                f"velocity_bound={velocity!r} reaches {reach!r} with these x_bounds, against radius={radius!r}: "
                f"it must stay within 1e150 times the radius either way and below {space.max_representable_radius!r} "
                "(float64 cannot sample both at once). Express the data in units where they are comparable."
            )
        if x_max * velocity >= space.injectivity_radius:
            raise AssumptionError(
                f"velocity_bound={velocity!r} is too long for {space!r}: with {m} covariate(s) the "
                f"fitted geodesic reaches {x_max * velocity!r} from the footpoint, beyond the "
                f"injectivity radius {space.injectivity_radius!r} (the least-squares geodesic would "
                f"not be unique). Use velocity_bound < {space.injectivity_radius / x_max!r}."
            )
        kappa_min = space.curvature_bounds[0]
        if kappa_min < 0 and not space.is_flat:
            reach = radius + x_max * velocity
            limit = _REACH_LIMIT / math.sqrt(-kappa_min) if kappa_min == space.curvature_bounds[1] else _REACH_LIMIT
            if reach > limit:
                raise AssumptionError(
                    f"radius + x_max·velocity_bound = {reach:.6g} exceeds {limit:.6g} on {space!r}: "
                    "that far from the centre, float64 loses the gradient norms the release "
                    "depends on (its privacy would fail silently). Choose a smaller radius or "
                    "velocity_bound."
                )
        # The largest distance between a fitted value and a response on the support.
        largest_residual = 2.0 * radius + x_max * velocity
        if self.residual_bound is None:
            tau = largest_residual
        else:
            tau = min(check_positive(self.residual_bound, "residual_bound"), largest_residual)
        return space, epsilon, center, radius, lower, upper, x_max, velocity, tau, largest_residual

    # ------------------------------------------------------------------------------ fit
    def fit(self, X, y):
        """Release a private geodesic fitted to the records ``(X[i], y[i])``.

        Parameters
        ----------
        X : array_like or dask.array.Array, shape (n,) or (n, m)
            Covariates (private). ``m`` must match ``x_bounds``.
        y : array_like or dask.array.Array, shape (n, *space.point_shape)
            Manifold-valued responses (private); for ``KendallShape``, raw ``k × 2`` landmark
            configurations or preshapes. Dask arrays (either or both) are accepted where the
            release is the exact affine KNG of a flat space (Euclidean, log-Euclidean SPD with
            ``residual_bound=None`` and ``as_published=False``): one pass over the chunks sums
            the chart moments exactly, never materialising the records (memory depends on the
            chunk size, not on n), and the release equals the in-memory one. Elsewhere (curved
            spaces: MCMC over all records at every step) Dask input is refused before the charge.

        Returns
        -------
        self

        Raises
        ------
        InvalidParameterError, InvalidTypeError, AssumptionError
            A public setting is invalid, or Dask input where the release is not the flat
            affine one (before the charge).
        InvalidDataError
            ``X`` or ``y`` has the wrong shape, ``n < m + 2``, or (exact sampler) the design
            is singular.
        NotOnManifoldError
            With ``on_invalid="raise"``, some record is invalid (the accountant is charged).
        BudgetExceededError
            The accountant cannot pay (nothing is released or charged).

        Warns
        -----
        ApproximateSamplerWarning
            Before sampling by MCMC (decided from public settings).
        PrivacyLeakWarning
            With ``as_published=True``.
        """
        (x_arr, one_covariate), data = self._public_input(X, y)
        if self.as_published and _filtered_out(PrivacyLeakWarning, _PUBLISHED_WARNING):
            raise InvalidParameterError(
                "as_published=True reproduces K25's release, which is not ε-DP at the stated "
                "epsilon; it runs only where its PrivacyLeakWarning can be seen, and a warnings "
                "filter ignores it here. Remove the filter (or use as_published=False, the "
                "sound release)."
            )
        plan = self._plan(x_arr, data)
        rng = as_generator(self.random_state)
        stand_in_rng = as_generator(None if is_secure(rng) else 0)  # the same construction as the release
        deadline = timing_deadline(
            self.timing_safe,
            lambda records: self._private_release(*records, plan, stand_in_rng),
            lambda: self._stand_ins(plan, np.shape(x_arr)),
            key=deadline_key(plan, is_secure(rng), np.shape(x_arr)) if self.timing_safe is True else None,
        )
        (p, v, diagnostics), withheld, overran = execute(
            plan,
            self.accountant,
            lambda: self._private_release(x_arr, data, plan, rng),
            deadline=deadline,
            # timing-safe, if a sampler accepted none of its fixed proposals: the release of public stand-ins
            fallback=lambda: self._private_release(*self._stand_ins(plan, np.shape(x_arr))[0], plan, rng),
        )
        self.timing_deadline_ = deadline
        f = plan.facts
        width = f["upper"] - f["lower"]
        coef = v / width.reshape((-1,) + (1,) * len(self.space.point_shape))
        self.x_center_ = (f["lower"] + f["upper"]) / 2.0
        self.intercept_ = p
        self.coef_ = coef[0] if one_covariate else coef
        self.n_samples_ = plan.n_samples
        self.sensitivity_ = f["sensitivity"]
        self.curator_diagnostics_ = RegressionDiagnostics(**diagnostics, warnings=withheld, timing_overran=overran)
        self.privacy_report_ = with_deadline(plan.report, deadline, calibrated=self.timing_safe is True)
        return self

    def plan(self, X, y) -> ReleasePlan:
        """What :meth:`fit` will do on ``(X, y)``, without reading a value: the sampler route
        (exact, proven-exact race finished by MCMC, or MCMC), ε to charge, Δ, σ and the report.

        Parameters
        ----------
        X : array_like or dask.array.Array, shape (n,) or (n, m)
        y : array_like or dask.array.Array, shape (n, *space.point_shape)
            Only their shapes and dtypes are read (Dask: see :meth:`fit`).

        Returns
        -------
        ReleasePlan

        Examples
        --------
        >>> import numpy as np
        >>> from geodp.manifolds import Sphere
        >>> model = PrivateGeodesicRegression(Sphere(2), epsilon=1.0, center=np.array([0.0, 0.0, 1.0]),
        ...                                   radius=0.5, x_bounds=(0, 1))
        >>> plan = model.plan(np.zeros(100), np.zeros((100, 3)))
        >>> plan.exact, plan.report.to_dict()["mechanism_option"]   # one covariate, curved: tangent
        (True, 'tangent')
        >>> plan = model.set_params(mechanism="kng").plan(np.zeros(100), np.zeros((100, 3)))
        >>> plan.exact, "Metropolis" in plan.sampler               # KNG on a curved space: MH
        (False, True)
        """
        (x_arr, _), data = self._public_input(X, y)
        return self._plan(x_arr, data)

    def _public_input(self, X, y):
        space, *_, lower, _upper, _x_max, _velocity, _tau, _largest = self._check_settings()
        if is_dask(y):  # lazy: only its public metadata are checked here
            check_dask_records(y, "y", space.point_shape)
        return covariate_records(X, lower.size), y if is_dask(y) else space.unchecked.dataset_array(y, "y")

    def _plan(self, x_arr, data) -> ReleasePlan:
        space, epsilon, center, radius, lower, upper, x_max, velocity, tau, largest = self._check_settings()
        n, m = x_arr.shape
        if data.shape[0] != n:
            raise InvalidDataError(f"X and y must hold the same number of records, got {n} and {data.shape[0]}.")
        if n < m + 2:
            raise InvalidDataError(f"n = {n} records are too few for {m} covariate(s): need n >= m + 2.")
        as_generator(self.random_state)  # a bad random_state is refused before the charge
        if self._tangent(space, m):
            return self._tangent_plan(x_arr, data, space, epsilon, center, radius, lower, upper, velocity, tau)
        notices = []
        if self.as_published:
            notices.append((PrivacyLeakWarning, _PUBLISHED_WARNING))
            sensitivity = _k25_published_bounds(space, n, tau)  # the warning: the notice above
            scale = None
        else:
            sensitivity = geodesic_regression_sensitivity(
                space, n, residual_bound=tau, x_bound=x_max, velocity_bound=velocity, radius=radius
            )
            scale = 2.0 * sensitivity.joint / epsilon
        # Flat spaces with unclipped residuals: the gradient is affine, AffineKNG's public route.
        affine = space.is_flat and tau >= largest and not self.as_published
        gradient_bound = flat_gradient_bound(m, largest) if affine else None
        route = affine_kng_route(scale, gradient_bound) if affine else None
        exact = affine and route.exact
        if not affine and (is_dask(x_arr) or is_dask(data)):  # public, before the charge
            raise InvalidParameterError(
                "Dask input is supported where the release is an affine KNG on chart coordinates "
                "(flat spaces, residual_bound=None, as_published=False), whose statistics take one "
                f"pass over the chunks. Here ({_mcmc_reason(space, self.as_published).rstrip('.')}) the "
                "sampler needs the records in memory: pass numpy arrays (X.compute(), y.compute())."
            )
        sampler = self._sampler_text(route, scale)
        if affine and not exact and self.timing_safe is not False:  # public: refuse before any charge
            raise InvalidParameterError(
                "timing_safe cannot fix the work of the exact affine KNG race beyond its proven-exact "
                f"range (here n·ε = {n * epsilon:g}): its Metropolis–Hastings finish runs only when the race "
                "does not end within its cap, which depends on the data; use a smaller n·ε."
            )
        if affine and not exact:
            notices.append((ApproximateSamplerWarning, approximate_route_notice(n * epsilon, route)))
        elif not exact:
            notices.append(
                (
                    ApproximateSamplerWarning,
                    f"This release samples by Metropolis–Hastings ({sampler}): DP then holds only "
                    f"approximately, and the run can take a while. Why: {_mcmc_reason(space, self.as_published)}",
                )
            )
        facts = _domain_facts(center, radius, lower, upper, velocity, tau) | dict(
            largest=largest,
            sensitivity=sensitivity,
            scale=scale,
            gradient_bound=gradient_bound,
            epsilon=epsilon,
            n=n,
        )
        plan = ReleasePlan(
            estimator=type(self).__name__,
            n_samples=n,
            epsilon=epsilon,
            delta=0.0,
            sensitivity=sensitivity.joint,
            scale=scale,
            exact=exact,
            sampler=sampler,
            report=with_timing_policy(self._report(facts, exact, sampler), check_timing_safe(self.timing_safe)),
            notices=tuple(notices),
            facts=facts,
        )
        return timing_safe_plan(plan, self.timing_safe)

    def _stand_ins(self, plan, x_shape):
        """Public ``(X, y)`` standing in for the data when the timing-safe deadline is calibrated:
        covariates uniform in ``x_bounds`` (a public seed) with every response at the centre, and
        with responses spread over the ball's boundary."""
        space, f, n = self.space, plan.facts, plan.n_samples
        rng = np.random.default_rng(0)
        x = rng.uniform(f["lower"], f["upper"], size=(n, len(f["lower"]))).reshape(x_shape)
        at_center = np.broadcast_to(f["center"], (n, *np.shape(f["center"]))).copy()
        boundary = space.unchecked.exp(f["center"], f["radius"] * space.random_unit_tangent(f["center"], size=n, rng=0))
        return [(x, at_center), (x, boundary)]

    def _tangent(self, space, m) -> bool:
        """Whether the release is the tangent one (public: settings, space and m only)."""
        if self.mechanism == "tangent":
            if self.as_published:
                raise InvalidParameterError(
                    "as_published=True reproduces K25's KNG release: it cannot be combined with mechanism='tangent'."
                )
            if m != 1:
                raise InvalidParameterError(
                    f"mechanism='tangent' fits one covariate (its statistics split the records at the "
                    f"centre of x_bounds); got {m}. Use mechanism='kng' for several covariates."
                )
            return True
        return self.mechanism == "auto" and m == 1 and not space.is_flat and not self.as_published

    def _tangent_plan(self, x_arr, data, space, epsilon, center, radius, lower, upper, velocity, tau):
        n = x_arr.shape[0]
        if is_dask(x_arr) or is_dask(data):  # public, before the charge
            raise InvalidParameterError(
                "Dask input is not supported by mechanism='tangent' (it reads the records in memory): pass "
                "numpy arrays (X.compute(), y.compute()), or use mechanism='kng' on a flat space for the "
                "one-pass Dask release."
            )
        settings = tangent_settings(space, n, epsilon, radius, tau)
        facts = _domain_facts(center, radius, lower, upper, velocity, tau) | dict(
            sensitivity=settings.sensitivity,
            scale=settings.scales[2],
            gradient_bound=None,
            tangent=settings,
        )
        report = tangent_report(
            space, settings, epsilon, n, center, radius, (lower, upper), tau, self.on_invalid, self.random_state
        )
        ball_note = resolve_ball(space, self.center, self.radius, self.ball)[2]
        if ball_note is not None:
            report = with_assumption(report, ball_note, private_ball=ball_note)
        report = with_timing_policy(report, check_timing_safe(self.timing_safe))
        plan = ReleasePlan(
            estimator=type(self).__name__,
            n_samples=n,
            epsilon=epsilon,
            delta=0.0,
            sensitivity=settings.sensitivity.statistics,
            scale=settings.scales[2],
            exact=True,
            sampler=TANGENT_SAMPLER,
            report=report,
            facts=facts,
        )
        return timing_safe_plan(plan, self.timing_safe)

    def predict(self, X):
        """Fitted points ``Exp(intercept_, Σ_j (x_j − x_center_j) coef_j)`` (post-processing of
        the release: free).

        Parameters
        ----------
        X : array_like, shape (n,) or (n, m)
            Covariates (not clipped: a value beyond ``x_bounds`` extrapolates along the geodesic).

        Returns
        -------
        numpy.ndarray, shape (n, *space.point_shape)
        """
        if "intercept_" not in self.__dict__:
            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet. Call 'fit' before 'predict'.")
        m = self.x_center_.size
        x_arr, _ = covariate_records(X, m, name="X")
        if not np.all(np.isfinite(x_arr)):
            raise InvalidDataError("X must be finite.")
        coef = self.coef_.reshape((m,) + tuple(self.space.point_shape))
        return geodesic_predict(self.space, self.intercept_, coef, x_arr - self.x_center_)

    # -------------------------------------------------------------------- private part
    def _private_release(self, x_arr, data, plan, rng):
        """Everything that touches the private records."""
        space, f = self.space, plan.facts
        center, radius, lower, upper = f["center"], f["radius"], f["lower"], f["upper"]
        velocity, tau, sensitivity, scale, gradient_bound = (
            f["velocity"],
            f["tau"],
            f["sensitivity"],
            f["scale"],
            f["gradient_bound"],
        )
        if gradient_bound is not None:  # flat, affine: the chart moments in one pass
            return self._flat_release(x_arr, data, plan, rng)
        tangent = f.get("tangent")
        invalid = space.invalid_records(data) | ~np.all(np.isfinite(x_arr), axis=1)
        if np.any(invalid):
            if self.on_invalid == "raise":
                raise NotOnManifoldError(_INVALID_TEXT.format(space=space))
            data[invalid] = center
            x_arr[invalid] = (lower + upper) / 2.0
        try:  # canonical points (Kendall: landmark configurations become preshapes)
            points = space.check_points(data, "y", batch_ndim=1)
        except GeodpError:  # valid records that fail a stricter check: keep the message public
            raise InvalidDataError(f"y could not be validated as points of {space!r}.") from None
        clipped_x = np.clip(x_arr, lower, upper)
        n_clipped_x = int(np.count_nonzero(np.any(clipped_x != x_arr, axis=1)))
        # Far from the origin the hyperboloid's and SPD's float64 arithmetic loses the gradient
        # norm (audit: relative error 0.65 at distance 35): move the public centre to the origin
        # by a public isometry, and the release back afterwards (post-processing).
        to_origin, from_origin, center = _recentring(space, center)
        points = to_origin(points)
        # A relative 1e-12 inside the ball: rounding must not carry a residual past τ.
        Y, was_clipped = space.unchecked.clip_to_ball(points, center, radius * CLIP_MARGIN)
        if self.as_published:
            xs = (clipped_x - lower) / (upper - lower)  # K25: covariates in [0, 1]
            p, v, info = published_release(
                space,
                xs,
                Y,
                center,
                radius,
                velocity,
                tau * CLIP_MARGIN,
                sensitivity,
                check_epsilon(self.epsilon) / 2.0,
                rng,
            )
        elif tangent is not None:
            xs = (clipped_x[:, 0] - lower[0]) / (upper[0] - lower[0]) - 0.5
            p, v, info = tangent_release(space, xs, Y, center, tangent, rng)
        else:
            xs = (clipped_x - lower) / (upper - lower) - 0.5
            p, v, info = self._mcmc_release(space, xs, Y, center, radius, velocity, tau * CLIP_MARGIN, scale, rng)
        diagnostics = regression_diagnostics(n_clipped_x, np.count_nonzero(was_clipped), info)
        p, v = from_origin(p, v)
        return p, v, diagnostics

    def _flat_release(self, x_arr, data, plan, rng):
        """Flat spaces with the affine gradient: one pass over the records (in memory or chunk
        by chunk) for the exactly summed moments of the design and the chart coordinates, then
        the exact sampler. Validation, replacement and clipping are per record, as in memory;
        the refusals come after the pass, in the in-memory order (invalid records first)."""
        space, f = self.space, plan.facts
        n, m = x_arr.shape
        c0 = space.to_coordinates(f["center"]).reshape(-1)
        q, d = m + 1, c0.size
        refuse = self.on_invalid == "raise"
        args = (space, f["center"], f["radius"], f["lower"], f["upper"], c0, refuse)
        rows = rows_per_block(q * (q + d) + 4 * (m + d + int(np.prod(space.point_shape))))
        results = record_pass(flat_moment_part, [x_arr, data], args, rows=rows)
        n_invalid, n_failed, n_clipped_x, n_clipped_y = (int(c) for c in sum(r[1] for r in results))
        if refuse and n_invalid:
            raise NotOnManifoldError(_INVALID_TEXT.format(space=space))
        if n_failed:  # valid records that fail a stricter check: keep the message public
            raise InvalidDataError(f"y could not be validated as points of {space!r}.")
        gram, target = combine_moments([r[0] for r in results], n, q, d)
        p, v, info = flat_release_from_moments(
            space, gram, target, c0, f["radius"], f["velocity"], f["scale"], f["gradient_bound"], rng
        )
        diagnostics = regression_diagnostics(n_clipped_x, n_clipped_y, info)
        return p, v, diagnostics

    def _mcmc_release(self, space, xs, Y, center, radius, velocity, tau, scale, rng):
        if space.is_flat:  # the chart is an isometry: run the chain on its coordinates (fast)
            chart = Euclidean(space.dim)
            result = mcmc_draws(
                chart, xs, space.to_coordinates(Y), space.to_coordinates(center), radius, velocity, tau, scale, rng
            )
            a, theta_v = TangentBundle(chart, xs.shape[1]).split(result.samples[0, 0])
            p, v = from_chart(space, a, theta_v)
        else:
            result = mcmc_draws(space, xs, Y, center, radius, velocity, tau, scale, rng)
            p, v = TangentBundle(space, xs.shape[1]).split(result.samples[0, 0])
        d = result.diagnostics
        return p, v, {"acceptance": d.acceptance_rate, "ess": d.effective_sample_size}

    # ---------------------------------------------------------------------------- report
    def _sampler_text(self, route, scale):
        if self.as_published:
            return (
                f"K25's two-stage random-walk MH (footpoint, then velocity), started at the "
                f"non-private fit; burn-in {BURN_IN // 2}, {THINNING} further steps per stage"
            )
        if route is not None:
            return f"the gradient is affine in (p, v) on this flat space: {route.sampler}"
        return (
            f"Metropolis–Hastings on (p, v), proposal p' = Exp(p, ξ), v' = Γ(v + ζ), started at "
            f"the public (center, 0); burn-in {BURN_IN}, then {THINNING} steps"
        )

    def _report(self, facts, exact, sampler):
        s, n, epsilon, scale = facts["sensitivity"], facts["n"], facts["epsilon"], facts["scale"]
        center, radius, lower, upper = facts["center"], facts["radius"], facts["lower"], facts["upper"]
        velocity, tau, largest = facts["velocity"], facts["tau"], facts["largest"]
        if self.as_published:
            half = epsilon / 2.0
            mechanism = "K25 two-stage KNG (as published: NOT ε-DP at the stated ε)"
            rule = f"σ_p = Δ_p/(ε/2) (shown), σ_v = Δ_v/(ε/2) = {s.velocity / half!r} (K25 App. A)"
            bound = f"K25 Thm 3.4 / D.1 as published: Δ_p = {s.footpoint:.6g}, Δ_v = {s.velocity:.6g} (unsound)"
            scale_value = s.footpoint / half
            header = (
                "geodp privacy report: PrivateGeodesicRegression, as_published=True — NOT "
                "DIFFERENTIALLY PRIVATE AT THE STATED ε (K25's release, for reproductions only)"
            )
        else:
            mechanism = "K-norm gradient, joint on (footpoint, velocity)"
            rule = "σ = 2Δ/ε (the KNG normaliser depends on the data)"
            bound = (
                f"Δ = √(Δ_p² + Δ_v²) with Δ_p = {s.footpoint:.6g}, Δ_v = {s.velocity:.6g} "
                "(docs/math.md §9: adjoint Jacobi fields, residuals clipped to τ)"
            )
            scale_value = scale
            header = (
                "geodp privacy report: PrivateGeodesicRegression (publishable: nothing in it is "
                "computed from the private data)"
            )
        guarantee = Guarantee(
            mechanism=mechanism,
            epsilon=epsilon,
            delta=0.0,
            sensitivity=s.joint,
            metric="norm of the gradient field (∇_p E, ∇_v E)",
            scale=scale_value,
            scale_rule=rule,
            space=repr(self.space),
            sampler=sampler,
            exact=exact,
            **sampler_construction(self.random_state, "the regression's KNG law has no exact lattice sampler in geodp"),
            support=f"footpoint in the public ball of radius {radius:.6g} around the center; ‖v‖ ≤ {velocity:.6g}",
        )
        x_range = ", ".join(f"[{lo:.6g}, {hi:.6g}]" for lo, hi in zip(lower, upper))
        assumptions = [
            f"radius {radius:.6g} < r* = {max_radius(self.space):.6g}; responses clipped into the ball",
            f"covariates clipped into x_bounds {x_range} and mapped to "
            f"{'[0, 1]' if self.as_published else '[-1/2, 1/2]'}",
            f"residuals clipped to τ = {tau:.6g}"
            + (" (no residual on the support exceeds it)" if tau >= largest else ""),
            f"velocity bound V = {velocity:.6g}",
        ]
        if self.residual_bound is not None and float(self.residual_bound) > largest:
            assumptions.append(
                f"residual_bound={self.residual_bound!r} was passed, but no residual on the support exceeds "
                f"2·radius + x_max·V = {largest:.6g}: that is the τ used"
            )
        ball_note = resolve_ball(self.space, self.center, self.radius, self.ball)[2]
        if ball_note is not None:
            assumptions.append(ball_note)
        if not exact:
            affine = self.space.is_flat and tau >= largest and not self.as_published
            assumptions.append(
                f"the sampler is or may finish by MCMC, so DP holds only approximately: "
                f"{_mcmc_reason(self.space, self.as_published, affine)}"
            )
        details = [
            f"n           : {n} records (public)",
            "data domain : covariates in x_bounds, responses in the public ball around the center "
            "(to_dict()['center'], ['x_bounds'])",
            f"bound       : {bound}",
        ]
        text = header + "\n" + guarantee.render(details, assumptions)
        data = guarantee.to_dict()
        data["assumptions"] = assumptions
        data |= {
            "differentially_private": not self.as_published,
            "n_samples": n,
            "center": np.asarray(center).tolist(),
            "radius": radius,
            "private_ball": ball_note,
            "x_bounds": [lower.tolist(), upper.tolist()],
            "residual_bound": tau,
            "velocity_bound": velocity,
            "sensitivity_footpoint": s.footpoint,
            "sensitivity_velocity": s.velocity,
            "as_published": bool(self.as_published),
            "on_invalid": self.on_invalid,
        }
        return PrivacyReport(text, data)


# ---------------------------------------------------------------------------- helpers
def _domain_facts(center, radius, lower, upper, velocity, tau) -> dict:
    """The public domain every release plan carries in its facts."""
    return dict(center=center, radius=radius, lower=lower, upper=upper, velocity=velocity, tau=tau)


def _recentring(space, center):
    """``(to_reference, from_reference, image of the centre)``: the space's public isometry that
    moves ``center`` to its reference point (identity when the space has none)."""
    isometry = space.unchecked.isometry_to_reference(center)
    if isometry is None:
        return (lambda Y: Y), (lambda p, v: (p, v)), center
    return (*isometry, space.reference_point())


def _filtered_out(category, message: str) -> bool:
    """Might ``warnings.warn(message, category)`` from the caller of ``fit`` be ignored? The
    filters are read in order; one that names a module or a line counts as if the caller were
    there (the answer errs towards "ignored", so a warning that matters is never lost). The
    report of an as-published release says it is not DP whatever the filters do."""
    for action, msg, cat, mod, lineno in warnings.filters:
        if (msg is None or msg.match(message)) and issubclass(category, cat):
            if action == "ignore":
                return True
            if mod is None and not lineno:
                return False
    return warnings.defaultaction == "ignore"


def _mcmc_reason(space, as_published, affine=False) -> str:
    if as_published:
        return "K25's two-stage release is reproduced with its own random-walk sampler."
    if affine:
        return (
            "the exact sampler's acceptance is proven for every dataset only at small n·ε, so it "
            "runs within a public proposal cap and a fixed-length MH chain finishes the draw if "
            "that cap is reached (whether it is depends on the data)."
        )
    if space.is_flat:
        return (
            "residual_bound is below the largest residual on the support, so residuals are "
            "clipped and the gradient is not affine; leave residual_bound=None for the exact sampler."
        )
    return "on a curved space the gradient field is not affine in (p, v) and no exact sampler of this law is known."
