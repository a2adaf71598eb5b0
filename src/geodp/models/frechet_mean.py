"""``PrivateFrechetMean``: validate, clip into the public ball, average, privatise, report."""

from __future__ import annotations

import functools
import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError

from geodp.accountant import check_accountant
from geodp.errors import (
    ApproximateSamplerWarning,
    InvalidDataError,
    InvalidParameterError,
    InvalidTypeError,
    NotOnManifoldError,
    NumericalWarning,
)
from geodp.frechet import convexity_bound, karcher_iteration_budget, mean_of_records
from geodp.manifolds.base import check_space
from geodp.manifolds.spd_accurate import accurate_whitening
from geodp.mechanisms import (
    KNGMechanism,
    LaplaceMechanism,
    RiemannianGaussianMechanism,
    TangentGaussianMechanism,
    WrappedGaussianMechanism,
    WrappedLaplaceMechanism,
)
from geodp.mechanisms.base import combine_sum_parts, exact_weighted_sum_parts
from geodp.models.ball import resolve_ball
from geodp.models.report import CuratorDiagnostics, PrivacyReport, with_deadline, with_timing_policy
from geodp.optim import descend, gd_guarantee
from geodp.records import DaskRecords, InMemoryRecords, is_dask
from geodp.release import (
    ReleasePlan,
    ball_stand_ins,
    check_timing_safe,
    deadline_key,
    execute,
    timing_deadline,
    timing_safe_plan,
)
from geodp.secure import is_secure
from geodp.sensitivity import check_radius, frechet_mean_sensitivity, max_radius
from geodp.validation import CLIP_MARGIN, as_generator, check_delta, check_epsilon, check_real_dtype, check_sample_size
from geodp.work import count

__all__ = ["PrivateFrechetMean", "MECHANISMS"]

MECHANISMS = (
    "laplace",
    "tangent-gaussian",
    "kng",
    "wrapped-laplace",
    "wrapped-gaussian",
    "riemannian-gaussian",
    "gradient",
)
NEEDS_DELTA = ("tangent-gaussian", "wrapped-gaussian", "riemannian-gaussian", "gradient")  # (ε, δ) with δ > 0
#: mechanism="gradient": T and the step of the private descent (public; chosen by measurement, docs/guide.md).
GRADIENT_ITERATIONS = 1
GRADIENT_STEP = 1.0
_ON_INVALID = ("raise", "center")
_FITTED = (
    "mean_",
    "mean_coordinates_",
    "n_samples_",
    "timing_deadline_",
    "sensitivity_",
    "mechanism_",
    "privacy_report_",
    "curator_diagnostics_",
)
# Karcher-flow tolerance of private fits, relative to max(1, radius).
_MEAN_TOL = 1e-10
# Affine-invariant SPD balls up to this radius were checked against 50-digit recomputation on
# adversarial records (SPD(2), SPD(3), SPD(5)): with the accurate whitening and the float64
# resolution floor every flow reached its tolerance (docs/math.md §15, "Whitening far from the
# iterate"). Beyond it the floor makes the tolerance margin large, and nothing was checked.
_AFFINE_CHECKED_RADIUS = 20.0
_AFFINE_RADIUS_NOTICE = (
    "On affine-invariant SPD beyond an effective ball radius of 20 (here {radius:g}: the radius plus the "
    "centre's log-condition number over √2) float64 places the mean only "
    "to about {resolution:.2g}; the sensitivity's tolerance margin grows with it, and the computation "
    "was not checked against high precision there. Use metric='log-euclidean' (closed form), or a "
    "smaller ball or a better-conditioned centre."
)


class PrivateFrechetMean(BaseEstimator):
    """Differentially private Fréchet mean of manifold-valued records.

    ``fit`` validates the records, clips them geodesically into the public ball
    ``B_radius(center)`` (docs/math.md §0), computes the Fréchet mean, and releases it through the
    chosen mechanism with the sensitivity of :func:`geodp.sensitivity.frechet_mean_sensitivity`.
    The non-private mean is never stored.

    Parameters
    ----------
    space : Manifold
        Any geodp space for ``"laplace"``: ``Euclidean``, ``Sphere``, ``Hyperbolic``,
        ``KendallShape``, ``SPD`` (either metric); ``"tangent-gaussian"`` needs a flat space;
        ``"riemannian-gaussian"`` takes every one of these.
    epsilon : float
        Privacy budget of the release, > 0.
    delta : float, default 0.0
        Needed (in (0, 1)) by the Gaussian mechanisms (``"tangent-gaussian"``,
        ``"wrapped-gaussian"``, ``"riemannian-gaussian"``); the Laplace mechanisms are pure ε-DP
        and report δ = 0.0.
    center : array_like, shape space.point_shape
        Public centre of the data ball. Must not be computed from the private data.
    radius : float
        Public radius of the data ball, ``0 < radius < r*``.
    ball : PrivateBall, optional
        Instead of ``center`` and ``radius``: a ball released by
        :func:`geodp.domain.private_ball` on the same records (its cost is added to this
        release's by sequential composition; the report says so).
    mechanism : str, default "laplace"
        One of ``"laplace"``, ``"tangent-gaussian"``, ``"kng"``, ``"wrapped-laplace"``,
        ``"wrapped-gaussian"``, ``"riemannian-gaussian"``.
        ``"riemannian-gaussian"``: the law ``∝ exp(−ρ²/2σ²)`` at the mean, sampled exactly,
        (ε, δ) by the triangle bound on curved spaces (docs/math.md §12).
        ``"kng"``: the K-norm gradient mechanism (S22), sampled exactly by rejection where its
        public acceptance bound allows (otherwise MH, with an ApproximateSamplerWarning). Its scale is 2h times
        the Laplace's (the Laplace sensitivity carries 1/h, KNG's normaliser needs 2Δ/ε), so it
        wins only where h < ½: r > 0.58 on the unit sphere, r > 0.29 on Kendall shapes.
        ``"wrapped-laplace"``/``"wrapped-gaussian"`` (every space): ℓ2 Laplace or Gaussian noise
        in the tangent space at the public centre, wrapped by ``Exp``
        (:class:`~geodp.mechanisms.WrappedLaplaceMechanism`); the sensitivity is ``L·Δ``, with
        ``L`` the Lipschitz constant of ``Log`` at the centre on the ball (1 where the curvature
        is ≤ 0), stated in the report.
        ``"gradient"`` (every space, in memory; needs δ > 0): private Riemannian gradient descent
        (:func:`geodp.optim.private_riemannian_gd`) on ``½ρ²(x, x_i)``, whose gradient
        ``−Log_x(x_i)`` has norm ≤ 2·radius in the ball, so it is clipped at ``2·radius`` (never
        active); ``GRADIENT_ITERATIONS`` steps of size ``GRADIENT_STEP`` from the public centre,
        each iterate projected onto the ball (so ``project_to_ball`` changes nothing). μ-GDP.
    calibration : {"analytic", "classical"}, default "analytic"
        Gaussian calibration, for ``"tangent-gaussian"`` and ``"wrapped-gaussian"``.
    on_invalid : {"raise", "center"}, default "raise"
        What to do with a record that is not a point of the space (NaN/inf, off the manifold, a
        degenerate Kendall configuration). ``"raise"``: ``fit`` raises
        :class:`~geodp.errors.NotOnManifoldError` (its message says neither which records nor
        how many, but *whether* ``fit`` raises then depends on the data: check your data before
        releasing). ``"center"``: each such record is replaced by the public centre, a
        per-record, data-independent map that keeps replace-one adjacency, so one record can
        never decide whether a release happens; the count is in ``curator_diagnostics_``.
    project_to_ball : bool, default False
        Post-process the release onto the public ball (the metric projection: along the
        geodesic from the centre). Free under DP; on flat and non-positively curved spaces it
        can only bring the release closer to every point of the ball. Recommended at small ε on
        log-Euclidean SPD, where a release far out overflows the matrix exponential.
    accountant : BudgetAccountant, optional
        Charged ``(epsilon, delta)`` before the release; overspending raises.
    random_state : None, int or numpy.random.Generator
        ``None`` draws fresh OS entropy (use this in production).
    timing_safe : bool or float, default False
        Make the wall time of ``fit`` a function of public inputs only: the private part is
        padded to a public deadline — the given number of seconds, or (``True``) one calibrated
        on public stand-in data (the centre repeated n times, n points on the ball's boundary,
        and n/2 at each of two opposite boundary points): 2 × the slowest of 3 runs + 10 ms, in
        ``timing_deadline_`` and in the report (``timing_deadline``: it is public). An overrun
        (the work outlasting the deadline) is observable; ``curator_diagnostics_.timing_overran``
        says whether it happened (curator-only). See SECURITY.md.

    Attributes
    ----------
    mean_ : numpy.ndarray, shape space.point_shape
        The released private mean.
    mean_coordinates_ : numpy.ndarray, shape (space.dim,)
        The release in the space's isometric chart, without round-trip error.
    n_samples_ : int
    sensitivity_ : float
        The sensitivity used: the bound of :func:`geodp.sensitivity.frechet_mean_sensitivity`
        plus ``2·tol/μ`` on curved spaces, which covers the Karcher flow's tolerance (the
        computed mean is within ``tol/μ`` of the exact one, μ the public convexity bound).
    mechanism_ : Mechanism or None
        None for ``"gradient"`` (its guarantee is in ``privacy_report_``).
    privacy_report_ : PrivacyReport
        The **publishable** guarantee: readable text (``str``) with a dict in
        ``privacy_report_.to_dict()``. It holds nothing computed from the private data.
    curator_diagnostics_ : CuratorDiagnostics
        **Curator-only** facts computed from the private data without noise (records clipped,
        records replaced, the solver's convergence, withheld warnings). Never publish them.

    Notes
    -----
    **Privacy.** Replace-one adjacency with n public; ε-DP (Laplace, KNG, wrapped Laplace) or (ε, δ)-DP
    (tangent and wrapped Gaussian) in the space's geodesic distance, given that ``center`` and
    ``radius`` are public. Everything ``fit`` lets the caller observe is public: the release, the
    report, the warnings that reach the caller (about the sampler only) and its exceptions (about
    the parameters and the shape of ``X`` only; with ``on_invalid="raise"``, also whether some record is invalid). The
    Karcher flow starts from the public centre with a public iteration budget; its convergence
    on every dataset in the ball is a tested property.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import SPD
    >>> space = SPD(2, metric="log-euclidean")
    >>> X = space.random_point(50, rng=0)
    >>> model = PrivateFrechetMean(space, epsilon=1.0, center=np.eye(2), radius=3.0,
    ...                            random_state=0).fit(X)
    >>> model.mean_.shape, model.n_samples_
    ((2, 2), 50)
    >>> "epsilon = 1.0" in model.privacy_report_            # publishable
    True
    >>> str(model.curator_diagnostics_).startswith("CURATOR-ONLY")  # never publish
    True
    """

    def __init__(
        self,
        space,
        *,
        epsilon,
        delta=0.0,
        center=None,
        radius=None,
        ball=None,
        mechanism="laplace",
        calibration="analytic",
        on_invalid="raise",
        project_to_ball=False,
        accountant=None,
        random_state=None,
        timing_safe=False,
    ):
        self.space = space
        self.epsilon = epsilon
        self.delta = delta
        self.center = center
        self.radius = radius
        self.ball = ball
        self.mechanism = mechanism
        self.calibration = calibration
        self.on_invalid = on_invalid
        self.project_to_ball = project_to_ball
        self.accountant = accountant
        self.random_state = random_state
        self.timing_safe = timing_safe

    def _build_mechanism(self, sensitivity: float, center, radius: float):
        if self.mechanism == "laplace":
            return LaplaceMechanism(
                self.space, epsilon=self.epsilon, sensitivity=sensitivity, center=center, radius=radius
            )
        if self.mechanism == "kng":
            return KNGMechanism(self.space, epsilon=self.epsilon, sensitivity=sensitivity, center=center, radius=radius)
        if self.mechanism == "wrapped-laplace":
            return WrappedLaplaceMechanism(
                self.space, epsilon=self.epsilon, sensitivity=sensitivity, center=center, radius=radius
            )
        if self.mechanism == "wrapped-gaussian":
            return WrappedGaussianMechanism(
                self.space,
                epsilon=self.epsilon,
                delta=self.delta,
                sensitivity=sensitivity,
                center=center,
                radius=radius,
                calibration=self.calibration,
            )
        if self.mechanism == "riemannian-gaussian":
            return RiemannianGaussianMechanism(
                self.space, epsilon=self.epsilon, delta=self.delta, sensitivity=sensitivity
            )
        return TangentGaussianMechanism(
            epsilon=self.epsilon,
            delta=self.delta,
            sensitivity=sensitivity,
            calibration=self.calibration,
            space=self.space,
        )

    def __getattr__(self, name):
        if name in _FITTED:
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet. Call 'fit' before using {name}."
            )
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def fit(self, X, y=None):
        """Release the private Fréchet mean of ``X``.

        Parameters
        ----------
        X : array_like, shape (n, *space.point_shape)
        y : ignored

        Returns
        -------
        self

        Raises
        ------
        InvalidParameterError, InvalidTypeError, AssumptionError
            A parameter is invalid (public).
        InvalidDataError
            ``X`` is not a numeric array of shape ``(n, *space.point_shape)`` (public, given n).
        NotOnManifoldError
            With ``on_invalid="raise"``, some record is not a point of the space. The
            accountant has already been charged (whether this error is raised depends on the
            data, so it is treated as part of the release): check records with
            ``space.invalid_records(X)`` before fitting. In memory it is raised before any
            work on the records; on a Dask array after the first pass over the chunks (which
            validates them) — the same error with the same message, only later.
        BudgetExceededError
            The accountant cannot pay for the release (nothing is released, nothing charged).

        Warns
        -----
        ApproximateSamplerWarning
            Before sampling, when the release falls back to MCMC (decided from public
            quantities: space, scale, ball).
        """
        data = self._public_input(X)
        plan = self._plan(int(data.shape[0]), dask=is_dask(data))
        rng = as_generator(self.random_state)
        deadline = self._deadline(plan, is_secure(rng), np.shape(data))
        result, withheld, overran = execute(
            plan,
            self.accountant,
            lambda: self._release(plan, data, rng),
            deadline=deadline,
            fallback=lambda: self._fallback(plan.facts),
        )
        self._finish(result, plan, withheld, overran)
        self.timing_deadline_ = deadline
        self.privacy_report_ = with_deadline(plan.report, deadline, calibrated=self.timing_safe is True)
        return self

    def _fallback(self, facts):
        """Timing-safe mode's public release when a sampler accepted none of its fixed proposals
        (probability at most δ_t): the public centre (its chart coordinates on flat spaces)."""
        center = facts["center"]
        release = self.space.to_coordinates(center) if self.space.is_flat else np.array(center, dtype=float)
        diagnostics = dict(n_clipped=0, n_invalid=0, mean_iterations=None, mean_grad_norm=None, mean_converged=None)
        return release, diagnostics

    def _stand_ins(self, plan):
        """Public records standing in for the data when the timing-safe deadline is calibrated
        (:func:`geodp.release.ball_stand_ins`)."""
        return ball_stand_ins(self.space, plan.facts["center"], plan.facts["radius"], plan.n_samples)

    def plan(self, X, y=None) -> ReleasePlan:
        """What :meth:`fit` will do on ``X``, without reading a record: the mechanism and its
        sampler route, ε and δ to charge, the sensitivity and the publishable report.

        Parameters
        ----------
        X : array_like, dask.array.Array of shape (n, *space.point_shape), or int
            Only its type, shape and dtype are read; an int is the number of records n alone
            (what the ε audit plans with, without building n records).
        y : ignored

        Returns
        -------
        ReleasePlan

        Raises
        ------
        InvalidParameterError, InvalidTypeError, AssumptionError, InvalidDataError
            As :meth:`fit` does before charging.

        Examples
        --------
        >>> import numpy as np
        >>> from geodp.manifolds import SPD
        >>> plan = PrivateFrechetMean(SPD(3), epsilon=0.5, center=np.eye(3), radius=1.0).plan(np.zeros((50, 3, 3)))
        >>> plan.epsilon, plan.exact, round(plan.sensitivity, 4)
        (0.5, True, 0.04)
        """
        if isinstance(X, numbers.Integral) and not isinstance(X, bool):
            return self._plan(check_sample_size(X), dask=False)
        data = self._public_input(X)
        return self._plan(int(data.shape[0]), dask=is_dask(data))

    def _public_input(self, X):
        """``X`` as the release will read it (a Dask array stays lazy); its shape and dtype are
        checked here, its values only in the private part."""
        self._check_space()
        return public_records(self.space, X)

    def _check_space(self):
        check_space(self.space)

    def _plan(self, n: int, *, dask: bool) -> ReleasePlan:
        space = self.space
        self._check_space()
        if self.mechanism not in MECHANISMS:
            raise InvalidParameterError(f"mechanism must be one of {MECHANISMS}, got {self.mechanism!r}.")
        if self.on_invalid not in _ON_INVALID:
            raise InvalidParameterError(f"on_invalid must be one of {_ON_INVALID}, got {self.on_invalid!r}.")
        if not isinstance(self.project_to_ball, (bool, np.bool_)):
            raise InvalidTypeError(f"project_to_ball must be a bool, got {type(self.project_to_ball).__name__}.")
        epsilon = check_epsilon(self.epsilon)
        delta = check_delta(self.delta, allow_zero=self.mechanism not in NEEDS_DELTA)
        center, radius, ball_note = resolve_ball(space, self.center, self.radius, self.ball)
        if center is None or radius is None:
            raise InvalidParameterError(
                "center and radius (or ball=geodp.domain.private_ball(...)) are required: they declare the "
                "public data domain. Do not compute them from the private data."
            )
        check_accountant(self.accountant)
        center = space.check_points(center, "center", batch_ndim=0)
        radius = check_radius(space, radius)
        if dask and self.mechanism == "kng":  # public refusals come before the charge
            raise InvalidParameterError(
                "mechanism='kng' needs the records in memory: pass a numpy array (X.compute()), or use "
                "mechanism='laplace' or 'tangent-gaussian', which take Dask arrays."
            )
        if dask and self.mechanism == "gradient":
            raise InvalidParameterError(
                "mechanism='gradient' needs the records in memory: pass a numpy array (X.compute())."
            )
        as_generator(self.random_state)  # a bad random_state is refused before the charge
        check_timing_safe(self.timing_safe)
        if self.mechanism == "gradient":
            return timing_safe_plan(self._gradient_plan(n, epsilon, delta, center, radius, ball_note), self.timing_safe)

        bound, margin, tol = release_sensitivity(space, radius, n, self.mechanism, center)
        sensitivity = bound + margin
        with np.errstate(all="ignore"):  # public computations; an underflow there is harmless
            mechanism = self._build_mechanism(sensitivity, center, radius)
        guarantee = mechanism.guarantee
        route = getattr(mechanism, "_route", None)
        unbounded = route not in (None, "mcmc") and not mechanism.acceptance_bound > 0  # public (space, σ, r)
        if self.timing_safe is not False and unbounded:  # public: refuse now, before any charge
            raise InvalidParameterError(
                f"timing_safe cannot fix the work of KNG's {_ROUTE_NAMES.get(route, route + ' route')} (chosen here "
                "from the space, σ and the ball), which has no public acceptance bound; use mechanism='laplace'"
                + (", or a smaller n·ε." if route in ("envelope", "cap") else ".")
            )
        notices = ()
        if not guarantee.exact:  # decided from public quantities: say so before the (long) sampling
            notices = (
                (
                    ApproximateSamplerWarning,
                    f"This release samples by MCMC ({guarantee.sampler}): DP then holds "
                    "only approximately, and the run can take a while. The reason is in the privacy "
                    "report.",
                ),
            )
        if (
            margin > 0
            and hasattr(space, "flow_resolution")
            and space.effective_radius(center, radius) > _AFFINE_CHECKED_RADIUS
        ):
            resolution = space.flow_resolution(center, radius)
            notices = (
                *notices,
                (
                    NumericalWarning,
                    _AFFINE_RADIUS_NOTICE.format(radius=space.effective_radius(center, radius), resolution=resolution),
                ),
            )
        report = self._report(mechanism, n, center, radius, delta, bound, ball_note, margin)
        plan = ReleasePlan(
            estimator=type(self).__name__,
            n_samples=n,
            epsilon=epsilon,
            delta=mechanism.delta,
            sensitivity=sensitivity,
            scale=mechanism.scale,
            exact=guarantee.exact,
            sampler=guarantee.sampler,
            report=report,
            notices=notices,
            mechanism=mechanism,
            facts={"center": center, "radius": radius, "tol": tol},
            # The construction that runs (secure mode's grid noise is not μ-GDP), as reported.
            gdp_mu=report.to_dict()["gdp_mu"],
            zcdp_rho=report.to_dict().get("zcdp_rho"),
        )
        return timing_safe_plan(plan, self.timing_safe)

    def _release(self, plan, records, rng):
        """The private part of :meth:`fit` on ``records`` (or on public stand-ins, to calibrate)."""
        facts = plan.facts
        mechanism = plan.scale if self.mechanism == "gradient" else plan.mechanism
        return self._private_release(
            self.space, records, facts["center"], facts["radius"], facts["tol"], mechanism, rng
        )

    def _deadline(self, plan, secure, shape):
        """The release's public deadline (:func:`~geodp.release.timing_deadline`; None without
        ``timing_safe``): calibrated on stand-ins with the release's construction, kept per public key."""
        stand_in_rng = as_generator(None if secure else 0)  # the same construction as the release
        return timing_deadline(
            self.timing_safe,
            lambda records: self._release(plan, records, stand_in_rng),
            lambda: self._stand_ins(plan),
            key=deadline_key(plan, secure, shape) if self.timing_safe is True else None,
        )

    def _calibrate_deadline(self, X) -> None:
        """Calibrate (and keep) the deadline a later :meth:`fit` on records shaped like ``X`` uses, from
        public inputs only: :class:`~geodp.models.PrivateMDM` calibrates every class before any
        class's private part runs."""
        if self.timing_safe is True:
            plan = self._plan(int(np.shape(X)[0]), dask=is_dask(X))
            self._deadline(plan, is_secure(as_generator(self.random_state)), np.shape(X))

    def _gradient_plan(self, n, epsilon, delta, center, radius, ball_note) -> ReleasePlan:
        """The plan of ``mechanism="gradient"``: the guarantee of the private descent's public settings."""
        guarantee = gd_guarantee(
            self.space,
            epsilon=epsilon,
            delta=delta,
            iterations=GRADIENT_ITERATIONS,
            step=GRADIENT_STEP,
            clip=2.0 * radius,
            center=center,
            radius=radius,
            random_state=self.random_state,
        )
        bound = "2·clip = 4r per step on the clipped gradient sum (−Log_x(x_i) has norm <= 2r in the ball)"
        report = self._report(guarantee, n, center, radius, delta, bound, ball_note=ball_note)
        return ReleasePlan(
            estimator=type(self).__name__,
            n_samples=n,
            epsilon=epsilon,
            delta=delta,
            sensitivity=guarantee.sensitivity,
            scale=guarantee.scale,
            exact=True,
            sampler=guarantee.sampler,
            report=report,
            facts={"center": center, "radius": radius, "tol": None},
            gdp_mu=guarantee.gdp_mu,
        )

    def _finish(self, release, plan, withheld, overran):
        """The fitted attributes from the release (post-processing: free)."""
        space = self.space
        release, diagnostics = release
        if space.is_flat:
            self.mean_coordinates_ = release
            with np.errstate(over="ignore", invalid="ignore"):
                self.mean_ = space.from_coordinates(release)
        else:
            self.mean_ = release
        # A function of the release only: free to report.
        if not _represents_release(space, self.mean_, release):
            warnings.warn(
                "The release is not a finite point of the space (the noise carried it beyond what "
                "float64 represents). Use mean_coordinates_ (exact on flat spaces), "
                "project_to_ball=True or a smaller public radius.",
                NumericalWarning,
                stacklevel=3,
            )
        self.n_samples_ = plan.n_samples
        self.sensitivity_ = plan.sensitivity
        self.mechanism_ = plan.mechanism
        self.curator_diagnostics_ = CuratorDiagnostics(**diagnostics, warnings=withheld, timing_overran=overran)

    def _private_release(self, space, data, center, radius, tol, mechanism, rng):
        """Everything that touches the private records. Returns the release (coordinates on
        flat spaces) and the curator diagnostics; raises only the invalid-record error.

        Flat spaces never leave the chart: the records' chart coordinates (one per-record map:
        validated, decomposed and clipped record by record) are averaged by an exact sum and
        noised in the chart (:meth:`~geodp.mechanisms.base.Mechanism.randomise_chart`), for
        every mechanism. A matrix round trip of the mean (``Exp`` then ``Log``) would lose the
        small eigenvalues of a log-Euclidean SPD mean far out, and with them the bound ``2r/n``.
        """
        if self.mechanism == "gradient":
            return self._gradient_release(space, data, center, radius, mechanism, rng)
        flat = space.is_flat
        prepare = functools.partial(prepared_records, space, center, radius, coordinates=flat)
        refusal = False if self.on_invalid == "center" else invalid_message(space)
        info = None
        if is_dask(data):  # validated, clipped and averaged chunk by chunk, in every pass
            records = DaskRecords(space, data, prepare=prepare, refuse_invalid=refusal)
        else:
            clipped, (n_invalid, n_clipped) = prepare(data)
            if n_invalid and refusal:
                raise NotOnManifoldError(refusal)
            records = (
                None if (self.mechanism == "kng" and not flat) else InMemoryRecords(space, clipped, validated=True)
            )
        if flat:  # the records are clipped chart coordinates: their mean, exactly summed
            private_input = _chart_mean(records)
        elif records is None:  # KNG privatises the whole objective, not the mean
            private_input = clipped
        else:
            budget = karcher_iteration_budget(space, radius, tol)
            accurate = getattr(space, "needs_accurate_whitening", lambda c, r: False)(center, radius)  # public
            with accurate_whitening(accurate):
                mean, info = mean_of_records(space, records, center, tol=tol, max_iter=budget, step=1.0, adaptive=True)
            # The mean of records in the (convex) ball lies in it; rounding far out can put the
            # computed one a hair outside, where a truncated law would refuse it. Pull it in by
            # at most a relative 1e-6, never to the centre (a statistic must not jump).
            private_input = space.unchecked.clip_to_ball(mean[None], center, radius, last_resort="keep")[0][0]
        if is_dask(data):
            n_invalid, n_clipped = records.counts
        if flat:
            release = mechanism.randomise_chart(private_input, rng=rng)
            if self.project_to_ball:
                release = _project_coordinates(release, space.to_coordinates(center), radius)
        else:
            release = mechanism.randomise(private_input, rng=rng)
            if self.project_to_ball:
                release = space.unchecked.clip_to_ball(release[None], center, radius)[0][0]
        closed_form = info is None and (flat or self.mechanism != "kng")  # the chart mean of a flat space
        diagnostics = dict(
            n_clipped=int(n_clipped),
            n_invalid=int(n_invalid),
            mean_iterations=0 if closed_form else None if info is None else info.n_iter,
            mean_grad_norm=0.0 if closed_form else None if info is None else info.grad_norm,
            mean_converged=True if closed_form else None if info is None else info.converged,
        )
        return release, diagnostics

    def _gradient_release(self, space, data, center, radius, scale, rng):
        """``mechanism="gradient"``: the records validated and clipped (as for every mechanism),
        then the private descent on ``½ρ²`` from the public centre (:func:`geodp.optim.descend`)."""
        clipped, (n_invalid, n_clipped) = prepared_records(space, center, radius, data, coordinates=False)
        if n_invalid and self.on_invalid != "center":
            raise NotOnManifoldError(_INVALID_MESSAGE.format(space=space))
        clip = 2.0 * radius
        point = descend(
            space,
            lambda x, records: -space.unchecked.log(x, records),
            clipped,
            center,
            iterations=GRADIENT_ITERATIONS,
            step=GRADIENT_STEP,
            clip=clip,
            noise_multiplier=scale / clip,
            center=center,
            radius=radius,
            rng=rng,
        )
        diagnostics = dict(
            n_clipped=int(n_clipped),
            n_invalid=int(n_invalid),
            mean_iterations=None,
            mean_grad_norm=None,
            mean_converged=None,
        )
        return (space.to_coordinates(point) if space.is_flat else point), diagnostics

    def _report(
        self,
        mechanism,
        n: int,
        center,
        radius: float,
        requested_delta: float,
        bound_value,
        ball_note: str | None = None,
        margin: float = 0.0,
    ) -> PrivacyReport:
        """The publishable report; ``mechanism`` is the mechanism, or the guarantee itself for
        ``"gradient"`` (then ``bound_value`` is the bound's text)."""
        g = mechanism if self.mechanism == "gradient" else mechanism.guarantee_for(self.random_state)
        domain = (
            f"public geodesic ball of radius {radius!r} around the given center (to_dict()['center']); records "
            "outside it are clipped onto its boundary"
            + ("; invalid records are replaced by the centre" if self.on_invalid == "center" else "")
        )
        if self.mechanism == "gradient":
            bound = bound_value
        elif self.mechanism == "kng":
            bound = "2r(2-h)/n on the gradient field (S22 Lemma 1; h = 1 on flat spaces)"
        elif self.space.is_flat:
            bound = "2r/n (flat space: U23 Thm 3 / R21 Thm 2 with h = 1)"
        else:
            bound = f"2r(2-h)/(n h) (R21 Thm 2) + 2·tol/μ = {bound_value!r} + {margin!r} (Karcher-flow tolerance)"
        details = [
            f"n           : {n} records (public)",
            f"data domain : {domain}",
            f"bound       : Δ = {bound}",
        ]
        if self.mechanism.startswith("wrapped-"):  # the wrapped mechanisms noise Log at the public centre
            details.append(
                f"tangent     : noise drawn in the tangent space at the public centre p0 = center, wrapped by Exp; "
                f"sensitivity there L·Δ = {mechanism.tangent_sensitivity!r} with L = {mechanism.lipschitz!r}"
            )
        extra = [
            f"radius {radius:.6g} < r* = {max_radius(self.space):.6g} (Assumption 1); records clipped into the ball"
        ]
        if margin > 0 and hasattr(self.space, "flow_resolution"):
            accurate = self.space.needs_accurate_whitening(center, radius)
            tol = release_sensitivity(self.space, radius, n, self.mechanism, center)[2]
            extra.append(
                f"Karcher flow run until its gradient norm is below tol = {tol!r} (the tolerance, no finer than "
                f"float64's resolution in the ball, {self.space.flow_resolution(center, radius):.3g}); "
                + (
                    "whitened records decomposed to high relative accuracy (Jacobi SVD of factored records)"
                    if accurate
                    else "whitened records decomposed by eigh (ball small enough)"
                )
            )
        if ball_note is not None:
            extra.append(ball_note)
        if self.mechanism not in NEEDS_DELTA and requested_delta > 0:
            extra.append(
                f"delta={requested_delta!r} was passed, but the {self.mechanism} mechanism is pure ε-DP: delta = 0.0"
            )
        if self.project_to_ball and self.mechanism != "gradient":  # the descent projects every iterate already
            extra.append(
                "the release is projected onto the public ball (post-processing)"
                + (
                    f"; the projection, applied after the grid step, moves a release outside the ball off the grid "
                    f"{g.grid!r}: only a release inside the ball is a multiple of it"
                    if g.grid is not None
                    else ""
                )
            )
        text = (
            "geodp privacy report: PrivateFrechetMean (publishable: nothing in it is computed from "
            "the private data)\n" + g.render(details, extra)
        )
        data = g.to_dict()
        data["assumptions"] = list(data.get("assumptions", ())) + extra
        data |= {
            "n_samples": n,
            "center": np.asarray(center).tolist(),
            "radius": radius,
            "private_ball": ball_note,
            "sensitivity_bound": bound,
            "on_invalid": self.on_invalid,
            "project_to_ball": bool(self.project_to_ball),
            "timing_safe": self.timing_safe is not False,
        }
        if self.mechanism.startswith("wrapped-"):
            data |= {"lipschitz": mechanism.lipschitz, "tangent_sensitivity": mechanism.tangent_sensitivity}
        return with_timing_policy(PrivacyReport(text, data), self.timing_safe)


# KNG routes whose rejection loops can have no proven public acceptance bound (a bound of 0): a
# timing-safe release could not fix their number of proposals (docs/math.md §15), so the mode
# refuses them at plan time.
_ROUTE_NAMES = {
    "envelope": "envelope route (large n·ε)",
    "spd-tangent": "tangent route on affine-invariant SPD",
    "cap": "cap route with the data's own chord (large n·ε)",
}


def _represents_release(space, point, release) -> bool:
    """Is ``point`` a point of the space that stands for ``release``? On flat spaces the release
    is exact in coordinates and the point must map back to them (a matrix exponential that
    overflowed, or lost its small eigenvalues, does not)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if not bool(np.all(space.belongs(point))):
            return False
        if not space.is_flat:
            return True
        back = space.to_coordinates(point)
    return bool(np.all(np.isfinite(back))) and float(np.linalg.norm(back - release)) <= 1e-6 * (
        1.0 + float(np.linalg.norm(release))
    )


def release_sensitivity(space, radius, n, mechanism, center=None):
    """The sensitivity a mean release of ``n`` records in the public ball is calibrated to, from
    public quantities only: ``(bound, margin, tol)``, with ``Δ = bound + margin``.

    ``bound`` is :func:`~geodp.sensitivity.frechet_mean_sensitivity`; ``margin`` is ``2·tol/μ`` on curved spaces
    for the Laplace and tangent Gaussian (the flow stops within ``tol/μ`` of the exact mean, μ the
    public convexity bound); KNG's gradient bound and flat spaces' closed-form mean need no margin.
    :class:`PrivateFrechetMean` and the ε audit (:func:`geodp.audit.audit_epsilon`) both use it.

    Examples
    --------
    >>> from geodp.manifolds import Euclidean
    >>> release_sensitivity(Euclidean(2), 1.0, 100, "laplace")
    (0.02, 0.0, 1e-10)
    """
    tol = _MEAN_TOL * max(1.0, radius)
    if center is not None and hasattr(space, "flow_resolution"):  # float64's grid in the ball, if coarser
        tol = max(tol, space.flow_resolution(center, radius))
    bound = frechet_mean_sensitivity(space, radius, n, mechanism=mechanism)
    margin = 0.0 if space.is_flat or mechanism == "kng" else 2.0 * tol / convexity_bound(space, 2.0 * radius)
    return bound, margin, tol


_INVALID_MESSAGE = (
    "X holds records that are not points of {space!r} (NaN/inf, off the manifold, singular, "
    "degenerate, or beyond float64's range). Find them with space.invalid_records(X). If they are "
    "points up to normalisation or rounding (unit vectors, symmetric matrices), map the data with "
    "space.project(X) first; regularise singular covariances with a public per-record map "
    "(space.regularise(X, ridge=...)); otherwise pass on_invalid='center' to replace each by the public centre."
)


def public_records(space, X):
    """``X`` as a release reads it: an in-memory dataset array, or the Dask array itself (kept
    lazy) once its public metadata (shape, number of records, dtype) are checked."""
    if not is_dask(X):
        return space.unchecked.dataset_array(X, "X")
    shape = ", ".join(map(str, space.point_shape))
    if X.ndim != len(space.point_shape) + 1 or tuple(X.shape[1:]) != space.point_shape:
        raise InvalidDataError(f"X must have shape (n, {shape}) for {space!r}, got {X.shape}.")
    if not (isinstance(X.shape[0], numbers.Integral) and X.shape[0] >= 1):
        raise InvalidDataError(
            f"X must hold n >= 1 records of known number, got {X.shape[0]} (call X.compute_chunk_sizes())."
        )
    check_real_dtype(X.dtype, "X")
    return X


def invalid_message(space) -> str:
    """The message of the invalid-record error (public: it names the space only).

    Examples
    --------
    >>> from geodp.manifolds import Sphere
    >>> invalid_message(Sphere(2)).startswith("X holds records that are not points of Sphere")
    True
    """
    return _INVALID_MESSAGE.format(space=space)


def prepared_records(space, center, radius, block, *, coordinates):
    """Validate a block of records once, replace the invalid ones by the centre, clip into the
    ball: ``(records, (n_invalid, n_clipped))``. With ``coordinates`` (flat spaces) the records
    come back as chart coordinates, from the decomposition that validated them (one ``eigh``
    per matrix on log-Euclidean SPD), clipped along the straight chart geodesics.

    **Private**: the counts are curator-only facts. A per-record map (each record's image
    depends on that record and the public ball only), so replace-one adjacency is preserved.

    Examples
    --------
    >>> from geodp.manifolds import Euclidean
    >>> records, counts = prepared_records(Euclidean(1), np.zeros(1), 1.0, np.array([[0.5], [3.0], [np.nan]]),
    ...                                    coordinates=True)
    >>> records.ravel().round(6).tolist(), counts
    ([0.5, 1.0, 0.0], (1, 1))
    """
    if coordinates:
        coords, invalid = space._record_coordinates(block)
        c0 = space.to_coordinates(center)
        coords[invalid] = c0
        offset = coords - c0
        dist = np.linalg.norm(offset, axis=-1)
        outside = ~(dist <= radius)
        count("records", len(dist))
        with np.errstate(divide="ignore", invalid="ignore"):  # every record computed: no work depends on which
            coords = np.where(outside[:, None], c0 + offset * (radius * CLIP_MARGIN / dist)[:, None], coords)
        return coords, (int(np.count_nonzero(invalid)), int(np.count_nonzero(outside)))
    # A space may fold the three steps below into fewer decompositions (affine-invariant SPD).
    count("records", len(block))
    prepared = space.unchecked.prepared_records(block, center, radius)
    if prepared is not None:
        clipped, invalid, was_clipped = prepared
    else:
        invalid = space.invalid_records(block)
        block = np.array(block, dtype=np.float64)
        block[invalid] = center
        clipped, was_clipped = space.unchecked.clip_to_ball(space.unchecked.canonical_records(block), center, radius)
    return clipped, (int(np.count_nonzero(invalid)), int(np.count_nonzero(was_clipped)))


def _chart_mean(records):
    """Flat spaces: the mean of prepared (clipped chart-coordinate) records, exactly summed."""
    return combine_sum_parts(records.map(exact_weighted_sum_parts))


def flat_statistic(space, X, *, center, radius) -> np.ndarray:
    """The non-private statistic ``PrivateFrechetMean.fit`` noises on a flat space, by the same
    code: the records' chart coordinates (invalid ones replaced by the centre), clipped into
    the ball in the chart, their exactly summed mean. **Private**: for audits and tests of the
    sensitivity bound (:func:`geodp.audit.audit_sensitivity`), never for publication.

    Parameters
    ----------
    space : Manifold
        A flat space.
    X : array_like, shape (n, *space.point_shape)
    center, radius
        The public ball.

    Returns
    -------
    numpy.ndarray, shape (space.dim,)
        Chart coordinates.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import SPD
    >>> space = SPD(2, metric="log-euclidean")
    >>> X = space.from_coordinates(np.array([[10.0, -10.0, 0.0], [0.0, 0.0, 0.0]]))
    >>> flat_statistic(space, X, center=np.eye(2), radius=5.0).round(6)  # first clipped to 5
    array([ 1.767767, -1.767767,  0.      ])
    """
    if not space.is_flat:
        raise InvalidParameterError(f"flat_statistic needs a flat space, got {space!r}.")
    center = space.check_points(center, "center", batch_ndim=0)
    radius = check_radius(space, radius)
    clipped, _ = prepared_records(space, center, radius, space.unchecked.dataset_array(X, "X"), coordinates=True)
    return _chart_mean(InMemoryRecords(space, clipped, validated=True))


def _project_coordinates(release, c0, radius):
    """The metric projection onto the ball in the chart: the release pulled along the straight
    line to the centre ``c0`` when it lies farther than ``radius`` (post-processing)."""
    offset = release - c0
    norm = float(np.linalg.norm(offset))
    return c0 + offset * (radius / norm) if norm > radius else release
