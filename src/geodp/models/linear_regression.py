"""``PrivateLinearRegression``: least squares released by the exact K-norm gradient mechanism
(ε-DP) or by AdaSSP's perturbed sufficient statistics ((ε, δ)-DP)."""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.exceptions import NotFittedError

from geodp.accountant import check_accountant
from geodp.distributions.affine_kng import AffineKNG, CrossPolytopeDomain, affine_kng_route, approximate_route_notice
from geodp.errors import (
    ApproximateSamplerWarning,
    InvalidDataError,
    InvalidParameterError,
    InvalidTypeError,
    NumericalWarning,
    PrivacyLeakWarning,
)
from geodp.mechanisms.base import Guarantee, sampler_construction
from geodp.models.adassp import RIDGE_FAILURE, adassp_calibration, adassp_release
from geodp.models.record_passes import check_dask_records, combine_moments, moment_parts, record_pass, rows_per_block
from geodp.models.report import (
    PrivacyReport,
    RegressionDiagnostics,
    regression_diagnostics,
    with_deadline,
    with_timing_policy,
)
from geodp.records import is_dask
from geodp.release import ReleasePlan, check_timing_safe, deadline_key, execute, timing_deadline, timing_safe_plan
from geodp.secure import is_secure
from geodp.validation import as_generator, as_real_array, check_delta, check_epsilon, check_finite_array

__all__ = ["PrivateLinearRegression", "DOMAIN_FACTOR", "MECHANISMS"]

#: The parameter domain holds the coefficients whose every prediction over the public box of X
#: lies in the public response range widened by this factor about its midpoint. Chosen by
#: measured test MSE and sampler acceptance (benchmarks/README.md): with 1 (the range itself)
#: least squares falls just outside the domain on the RAND and Fair data and the exact sampler
#: ran out of proposals on Fair at ε ≤ 1; 1.1 gave the lowest MSE (1–2% below 1.25) but
#: acceptance down to 8e-6; 1.5 and 2 cost up to 7% and 30% more MSE at ε = 0.5.
DOMAIN_FACTOR = 1.25
MECHANISMS = ("kng", "adassp")
_FITTED = (
    "coef_",
    "intercept_",
    "n_features_in_",
    "sensitivity_",
    "scale_",
    "privacy_report_",
    "curator_diagnostics_",
    "timing_deadline_",
)


class PrivateLinearRegression(RegressorMixin, BaseEstimator):
    """Differentially private least squares, released by the K-norm gradient mechanism.

    A drop-in for diffprivlib's ``LinearRegression`` (same argument names), with an exact
    sampler and no budget split: the whole ε goes into one release of all coefficients.

    ``fit`` maps the covariates through the public ``bounds_X`` into a unit box (records
    outside are clipped), divides each response by the width of its public range (clipping
    into ``bounds_y``), and draws the coefficients θ from the KNG law (Reimherr & Awan 2019;
    S22) ``∝ exp(−‖∇F_D(θ)‖_F / σ)`` of the least-squares objective
    ``F_D(θ) = (1/2n) Σ ‖x̃_iᵀθ − ỹ_i‖²``, whose gradient ``Aθ − B`` is affine, restricted to a
    public convex domain Θ. :class:`~geodp.distributions.affine_kng.AffineKNG` samples it
    exactly. ``coef_`` and ``intercept_`` are in the original units.

    Parameters
    ----------
    epsilon : float, default 1.0
        Privacy budget of the release, > 0.
    bounds_X : tuple (lower, upper)
        Public bounds of the covariates, each a scalar or a vector of length n_features, with
        lower < upper. Must not be computed from the private data. If None, taken from the
        data with a :class:`~geodp.errors.PrivacyLeakWarning` (diffprivlib's behaviour): the
        release is then **not** differentially private.
    bounds_y : tuple (lower, upper)
        Public bounds of the response(s), scalars or vectors of length n_targets; same rules.
    fit_intercept : bool, default True
    copy_X : bool, default True
        Accepted for diffprivlib compatibility and ignored: geodp never writes to ``X``.
    on_invalid : {"raise", "center"}, default "raise"
        A record whose covariates or response hold an entry that is not a finite real number
        (NaN, inf, None, text, an int beyond float64): raise (after the charge, with one fixed
        text), or replace the record by the midpoints of ``bounds_X`` and ``bounds_y`` (then
        nothing can fail after the charge). Not a diffprivlib argument.
    accountant : geodp.accountant.BudgetAccountant, optional
        Charged ε before the data are touched; overspending raises. (diffprivlib's accountant
        is a different class: use geodp's.)
    random_state : None, int or numpy.random.Generator
        ``None`` draws fresh OS entropy (use this in production).
    mechanism : {"kng", "adassp"}, default "kng"
        ``"kng"``: the exact K-norm gradient release above (ε-DP). ``"adassp"``: AdaSSP (Wang
        2018, Alg. 2; :mod:`geodp.models.adassp`): Gaussian noise on λ_min of the Gram matrix, on
        the Gram matrix and on the cross products of the same clipped, normalised records, then
        ridge regression with a ridge chosen from the noisy λ_min; (ε, δ)-DP, exactly μ-GDP. Not a
        diffprivlib argument.
    delta : float or None, default None
        δ of ``mechanism="adassp"``, in (0, 1) (e.g. 1e-6, well below 1/n); it must be None
        with ``"kng"``, which is pure ε-DP.
    timing_safe : bool or float, default False
        Pad the private part of ``fit`` to a public deadline (seconds, or ``True``: calibrated
        on public stand-in records inside the public bounds), in ``timing_deadline_`` and the report; see
        :class:`~geodp.models.PrivateFrechetMean` and SECURITY.md.

    Attributes
    ----------
    coef_ : numpy.ndarray, shape (n_features,) or (n_targets, n_features)
    intercept_ : float or numpy.ndarray of shape (n_targets,)
        0.0 when ``fit_intercept=False``.
    n_features_in_ : int
    sensitivity_ : float
        Δ, the replace-one sensitivity of the gradient in the normalised units (AdaSSP: the
        largest of its three releases', all in ``privacy_report_.to_dict()``).
    scale_ : float
        σ = 2Δ/ε (AdaSSP: the largest of its three noise scales).
    privacy_report_ : PrivacyReport
        The **publishable** guarantee. Nothing in it is computed from the private data.
    curator_diagnostics_ : RegressionDiagnostics
        **Curator-only**: records clipped, the sampler's acceptance rate, withheld warnings.

    Notes
    -----
    **Normalisation.** With an intercept the covariates go to ``[−½, ½]^m`` (centred at the
    midpoints of their bounds): then ``max‖x̃‖ = √(1 + m/4)`` against ``√(1 + m)`` on
    ``[0, 1]^m`` (a sensitivity 1.8× smaller at m = 10), and the intercept column is nearly
    orthogonal to the slopes, so the Gram is better conditioned. Measured (80% of the RAND and
    Fair data, ε = 0.5, median of 50 releases): condition 171 against 208 (RAND) and 152 against
    405 (Fair); test MSE 1.049× OLS against 1.104× (RAND) and 1.066× against 1.103× (Fair).
    Without an intercept the model must keep x = 0, so each covariate is only divided by
    ``max(|lower|, |upper|)``.

    **Residual bound and domain.** Θ is the set of coefficients whose every prediction over the
    public box of covariates lies in the public response range widened by ``DOMAIN_FACTOR``
    F = 1.25 about its midpoint: a product of weighted l1 balls,
    ``|θ_0| + ½ Σ_j |θ_j| ≤ F/2`` per response in the normalised units (responses mapped to
    ``[−½, ½]``). On Θ every residual is bounded by the public ``τ = (F + 1)/2`` (1.125 times the
    width of the response range), so no residual needs clipping and the gradient is exactly
    affine. F = 1 would bound residuals by the range itself, but least squares often predicts
    just outside the range at some corner of the box (it does on the RAND and Fair data), and
    the law then piles into a thin corner of Θ that no proposal reaches often enough; F = 1.25
    was chosen on measured test MSE and acceptance (see ``DOMAIN_FACTOR``). Without an
    intercept, Θ is ``Σ_j |θ_j| ≤ F·M`` with M the largest ``|ỹ|`` allowed by the bounds.
    On small or ill-conditioned designs the law is much wider than Θ in the design's weak
    directions and the release spreads over Θ there (measured on scikit-learn's diabetes data,
    353 training records: 1.66× OLS's test MSE at ε = 0.5, 1.22× at ε = 5).

    **Privacy.** Replace-one adjacency with n public; ε-DP. A record changes the gradient
    ``(1/n) Σ x̃_i (x̃_iᵀθ − ỹ_i)ᵀ`` by at most ``Δ = 2·max‖x̃‖·‖τ‖/n`` at every θ ∈ Θ
    (``‖τ‖ = τ√d`` for d responses), and KNG's normaliser depends on the data, so
    ``σ = 2Δ/ε`` (docs/math.md §4). The bounds, Θ and the sampler's route are public
    (:func:`~geodp.distributions.affine_kng.affine_kng_route`): an exact rejection race, proven
    to end within its public cap only at small n·ε; beyond, a draw the capped race did not
    finish is finished by a Metropolis–Hastings chain of fixed length, so the report says
    ``exact: False`` and DP holds approximately. Nothing can fail after the charge except an
    invalid record under ``on_invalid="raise"``; the running time depends on the data (a
    timing channel bounded by the public work). With ``mechanism="adassp"`` the release is
    (ε, δ)-DP and exactly μ-GDP instead, from three Gaussian releases of the same normalised
    moments (docs/math.md §9.2); its draws are exact at every n·ε and it has no parameter domain.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 10, size=(20000, 2))
    >>> y = 1.0 + X @ np.array([0.5, -0.2]) + rng.normal(scale=0.5, size=20000)
    >>> model = PrivateLinearRegression(epsilon=1.0, bounds_X=(0, 10), bounds_y=(-4, 8),
    ...                                 random_state=0).fit(X, y)
    >>> np.round(model.coef_, 1), round(float(model.intercept_), 1)
    (array([ 0.5, -0.2]), 0.9)
    >>> model.predict(X[:3]).shape
    (3,)
    >>> "epsilon = 1.0" in model.privacy_report_            # publishable
    True
    >>> str(model.curator_diagnostics_).startswith("CURATOR-ONLY")  # never publish
    True

    Records in a Dask array are read chunk by chunk, never materialised; the release is the
    in-memory one:

    >>> import dask.array as da
    >>> lazy = PrivateLinearRegression(epsilon=1.0, bounds_X=(0, 10), bounds_y=(-4, 8), random_state=0)
    >>> _ = lazy.fit(da.from_array(X, chunks=3000), da.from_array(y, chunks=3000))
    >>> bool(np.array_equal(lazy.coef_, model.coef_)), lazy.intercept_ == model.intercept_
    (True, True)
    """

    def __init__(
        self,
        *,
        epsilon=1.0,
        bounds_X=None,
        bounds_y=None,
        fit_intercept=True,
        copy_X=True,
        on_invalid="raise",
        accountant=None,
        random_state=None,
        timing_safe=False,
        mechanism="kng",
        delta=None,
    ):
        self.epsilon = epsilon
        self.mechanism = mechanism
        self.delta = delta
        self.on_invalid = on_invalid
        self.bounds_X = bounds_X
        self.bounds_y = bounds_y
        self.fit_intercept = fit_intercept
        self.copy_X = copy_X
        self.accountant = accountant
        self.random_state = random_state
        self.timing_safe = timing_safe

    def __getattr__(self, name):
        if name in _FITTED:
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet. Call 'fit' before using {name}."
            )
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.single_output = True
        tags.target_tags.multi_output = True
        tags.non_deterministic = True
        return tags

    def fit(self, X, y, sample_weight=None):
        """Release private least-squares coefficients.

        Parameters
        ----------
        X : array_like or dask.array.Array, shape (n, n_features)
            A Dask array is never materialised: one pass over its chunks (each in sub-blocks of
            about 8 MB) sums the moments the release needs, so memory depends on the chunk size,
            not on n. The release equals the in-memory one (same ``random_state``): the moments
            are summed exactly, whatever the chunks.
        y : array_like or dask.array.Array, shape (n,) or (n, n_targets)
            Aligned to the chunks of ``X`` if either is a Dask array.
        sample_weight : None
            Accepted for diffprivlib compatibility; weights are refused (they would change the
            sensitivity), where diffprivlib ignores them with a warning.

        Returns
        -------
        self

        Raises
        ------
        InvalidParameterError, InvalidTypeError
            A parameter is invalid, or the shapes of X, y do not fit (public).
        InvalidDataError
            With ``on_invalid="raise"``, X or y holds an entry that is not a finite real
            number. Raised after the accountant is charged: whether it happens depends on the
            data (one fixed text; on Dask input, after the pass over the chunks). (A singular
            design, e.g. a covariate constant on these data, is not an error: the law is proper
            on the bounded domain and is sampled by uniform proposals; the curator diagnostics
            say so.)
        BudgetExceededError
            The accountant cannot pay for the release (nothing is released, nothing charged).

        Warns
        -----
        PrivacyLeakWarning
            ``bounds_X`` or ``bounds_y`` is None: bounds are taken from the data.
        """
        _refuse_weights(sample_weight)
        X, y = _as_numeric(X, "X"), _as_numeric(y, "y")
        plan = self._plan(X, y)
        rng = as_generator(self.random_state)
        stand_in_rng = as_generator(None if is_secure(rng) else 0)  # the same construction as the release
        deadline = timing_deadline(
            self.timing_safe,
            lambda records: self._private_release(*records, plan, stand_in_rng),
            lambda: _stand_ins(plan.facts, X.shape, y.shape),
            key=deadline_key(plan, is_secure(rng), X.shape, y.shape) if self.timing_safe is True else None,
        )
        (theta, facts, diagnostics), withheld, overran = execute(
            plan,
            self.accountant,
            lambda: self._private_release(X, y, plan, rng),
            deadline=deadline,
            # timing-safe, if a sampler accepted none of its fixed proposals: the release of public stand-ins
            fallback=lambda: self._private_release(*_stand_ins(plan.facts, X.shape, y.shape)[0], plan, rng),
        )
        self.timing_deadline_ = deadline
        with np.errstate(all="ignore"):  # extreme public bounds may overflow: the release says so by itself
            coef, intercept = facts["to_original"](theta)
        if y.ndim == 1:
            coef, intercept = coef[0], float(intercept[0])
        self.coef_, self.intercept_ = coef, intercept
        self.n_features_in_ = X.shape[1]
        self.sensitivity_, self.scale_ = facts["sensitivity"], facts["scale"]  # the plan's, unless leaked
        self.curator_diagnostics_ = RegressionDiagnostics(**diagnostics, warnings=withheld, timing_overran=overran)
        leaked = plan.facts["leaked"]  # bounds from the data: the report shows what was used
        report = self._report_from({**plan.facts, **facts}) if leaked else plan.report
        self.privacy_report_ = with_deadline(report, deadline, calibrated=self.timing_safe is True)
        return self

    def plan(self, X, y, sample_weight=None) -> ReleasePlan:
        """What :meth:`fit` will do on ``(X, y)``, without reading a value: the exact sampler's
        route (proven exact or finished by MCMC), ε to charge, Δ, σ and the publishable report.

        Parameters
        ----------
        X : array_like or dask.array.Array, shape (n, n_features)
        y : array_like or dask.array.Array, shape (n,) or (n, n_targets)
            Only their shapes and dtypes are read (a Dask array's chunks are not computed).
        sample_weight : None

        Returns
        -------
        ReleasePlan

        Examples
        --------
        >>> import numpy as np
        >>> model = PrivateLinearRegression(epsilon=0.1, bounds_X=(0, 1), bounds_y=(0, 1))
        >>> plan = model.plan(np.zeros((300, 2)), np.zeros(300))
        >>> plan.exact, plan.epsilon                      # n·ε = 30: the exact race is proven to end
        (True, 0.1)
        """
        _refuse_weights(sample_weight)
        return self._plan(_as_numeric(X, "X"), _as_numeric(y, "y"))

    def _plan(self, X, y) -> ReleasePlan:
        epsilon = check_epsilon(self.epsilon)
        if self.on_invalid not in ("raise", "center"):
            raise InvalidParameterError(f"on_invalid must be 'raise' or 'center', got {self.on_invalid!r}.")
        if not isinstance(self.fit_intercept, (bool, np.bool_)):
            raise InvalidTypeError(f"fit_intercept must be a bool, got {type(self.fit_intercept).__name__}.")
        delta = self._check_mechanism()
        check_accountant(self.accountant)
        as_generator(self.random_state)  # a bad random_state is refused before the charge
        if X.ndim != 2:
            raise InvalidDataError(
                f"X must be a 2-D array (n_samples, n_features), got shape {X.shape}. Reshape your data "
                "with X.reshape(-1, 1) for a single covariate."
            )
        if y.ndim not in (1, 2) or y.shape[0] != X.shape[0]:
            raise InvalidDataError(
                f"y must have shape (n,) or (n, n_targets) with n = {X.shape[0]}, got shape {y.shape}."
            )
        n, m = X.shape
        d = 1 if y.ndim == 1 else y.shape[1]
        if m < 1:
            raise InvalidDataError(f"Found array with 0 feature(s) (shape={X.shape}) while a minimum of 1 is required.")
        if d < 1:
            raise InvalidDataError(f"y needs at least one column, got shape {y.shape}.")
        if n < m + 2:
            raise InvalidDataError(
                f"n_samples = {n} record(s) cannot identify {m} covariate(s) and an intercept: need "
                f"n >= n_features + 2 = {m + 2}."
            )
        leaked = self.bounds_X is None or self.bounds_y is None
        if check_timing_safe(self.timing_safe) is True and leaked:
            raise InvalidParameterError(
                "timing_safe=True calibrates its deadline on public stand-in records inside bounds_X and "
                "bounds_y: give both bounds, or give the deadline in seconds."
            )
        bounds_X = None if self.bounds_X is None else _check_bounds(self.bounds_X, m, "bounds_X")
        bounds_y = None if self.bounds_y is None else _check_bounds(self.bounds_y, d, "bounds_y")
        notices = []
        if leaked:
            notices.append(
                (
                    PrivacyLeakWarning,
                    "bounds_X or bounds_y is None, so the missing bounds are taken from the private "
                    "data: the release is NOT differentially private. Pass public bounds (from a "
                    "codebook or the measurement's range, never from these data).",
                )
            )
        facts = _release_facts(
            *(bounds_X or (np.zeros(m), np.ones(m))),
            *(bounds_y or (np.zeros(d), np.ones(d))),
            self.fit_intercept,
            n,
            epsilon,
            delta,
        )
        if not facts["exact"] and self.timing_safe is not False:  # public: refuse before any charge
            raise InvalidParameterError(
                "timing_safe cannot fix the work of the exact KNG race beyond its proven-exact range "
                f"(here n·ε = {n * epsilon:g}): its Metropolis–Hastings finish runs only when the race does "
                "not end within its cap, which depends on the data; use a smaller n·ε, or delta > 0 (AdaSSP)."
            )
        if not facts["exact"]:
            notices.append((ApproximateSamplerWarning, approximate_route_notice(n * epsilon, facts["route"])))
        facts |= {
            "n": n,
            "m": m,
            "d": d,
            "epsilon": epsilon,
            "delta": delta,
            "leaked": leaked,
            "bounds_X": bounds_X,
            "bounds_y": bounds_y,
        }
        plan = ReleasePlan(
            estimator=type(self).__name__,
            n_samples=n,
            epsilon=epsilon,
            delta=delta,
            sensitivity=facts["sensitivity"],
            scale=facts["scale"],
            exact=facts["exact"],
            sampler=facts["sampler"],
            report=with_timing_policy(self._report_from(facts), self.timing_safe),
            notices=tuple(notices),
            facts=facts,
        )
        return timing_safe_plan(plan, self.timing_safe)

    def _check_mechanism(self) -> float:
        """δ to charge (0.0 for KNG), after checking ``mechanism`` and ``delta`` (public)."""
        if not isinstance(self.mechanism, str) or self.mechanism not in MECHANISMS:
            raise InvalidParameterError(f"mechanism must be one of {MECHANISMS}, got {self.mechanism!r}.")
        if self.mechanism == "kng":
            if self.delta is not None:
                raise InvalidParameterError(
                    f"delta must be None with mechanism='kng' (pure epsilon-DP), got {self.delta!r}; "
                    "delta is for mechanism='adassp'."
                )
            return 0.0
        if self.delta is None:
            raise InvalidParameterError(
                "mechanism='adassp' is (epsilon, delta)-DP: pass delta in (0, 1), e.g. 1e-6 (well below 1/n)."
            )
        return check_delta(self.delta, allow_zero=False)

    def _private_release(self, X, y, plan, rng):
        """Everything that touches the private records: one pass over them (two if the bounds
        are taken from the data), in memory or chunk by chunk (:func:`record_pass`), for the
        exactly summed Gram matrix and cross products of the clipped, normalised records."""
        bounds_X, bounds_y = plan.facts["bounds_X"], plan.facts["bounds_y"]
        n, m, d = plan.facts["n"], plan.facts["m"], plan.facts["d"]
        q = m + 1 if self.fit_intercept else m
        y = y.reshape(n, -1)
        refuse = self.on_invalid == "raise"
        rows = rows_per_block(q * (q + d) + 2 * (m + d))
        if bounds_X is None or bounds_y is None:  # after a PrivacyLeakWarning only
            extremes = record_pass(_valid_extremes, [X, y], rows=rows)
            if refuse and sum(e[0] for e in extremes):
                _raise_invalid()
            if bounds_X is None:
                bounds_X = _data_bounds([e[1] for e in extremes], [e[2] for e in extremes], m)
            if bounds_y is None:
                bounds_y = _data_bounds([e[3] for e in extremes], [e[4] for e in extremes], d)
        x_lo, x_hi = bounds_X
        y_lo, y_hi = bounds_y
        # the requested (ε, δ), as planned: a timing-safe plan's δ also holds δ_t, which must not
        # switch the route (δ > 0 selects AdaSSP)
        epsilon, delta = plan.facts["epsilon"], plan.facts["delta"]
        facts = _release_facts(x_lo, x_hi, y_lo, y_hi, self.fit_intercept, n, epsilon, delta)
        args = (facts["to_design"], facts["to_response"], bounds_X, bounds_y, refuse)
        results = record_pass(_moment_part, [X, y], args, rows=rows)
        n_invalid, n_clipped_x, n_clipped_y = (int(c) for c in sum(r[1] for r in results))
        if refuse and n_invalid:  # one text, whichever record holds it
            _raise_invalid()
        gram, target = combine_moments([r[0] for r in results], n, q, d)
        facts |= {"bounds_X": bounds_X, "bounds_y": bounds_y}
        if "calibration" in facts:  # AdaSSP
            theta, _ = adassp_release(gram, target, facts["calibration"], rng)
            return theta, facts, regression_diagnostics(n_clipped_x, n_clipped_y, {})
        law = AffineKNG(
            gram, target, facts["scale"], in_domain=facts["in_domain"], gradient_bound=_gradient_bound(facts)
        )
        if law.singular:  # curator-only: whether the design is singular depends on the data
            warnings.warn(
                "the design is singular (a covariate is constant on these data): the "
                "release was sampled by the singular-design proposals",
                NumericalWarning,
                stacklevel=2,
            )
        theta = law.sample(rng=rng)
        diagnostics = regression_diagnostics(
            n_clipped_x,
            n_clipped_y,
            dict(
                acceptance=law.acceptance_rate,
                ess=law.chain_diagnostics.effective_sample_size if law.fell_back else None,
                fell_back=law.fell_back,
            ),
        )
        return theta, facts, diagnostics

    def _report_from(self, facts) -> PrivacyReport:
        n, m, d, leaked = facts["n"], facts["m"], facts["d"], facts["leaked"]
        bounds_X, bounds_y = facts["bounds_X"], facts["bounds_y"]
        q = m + 1 if self.fit_intercept else m
        normalisation = (
            "covariates mapped to [-1/2, 1/2] through their bounds' midpoints and widths"
            if self.fit_intercept
            else "covariates divided by max(|lower|, |upper|) of their bounds (no intercept)"
        )
        space = f"R^({q}×{d}) (coefficients{' and intercept' if self.fit_intercept else ''})"
        guarantee = (_adassp_guarantee if "calibration" in facts else _kng_guarantee)(
            facts, normalisation, space, self.random_state
        )
        extra = []
        if leaked:
            extra.append(
                "NOT DIFFERENTIALLY PRIVATE: bounds were taken from the private data (PrivacyLeakWarning); "
                "they are withheld from this report"
            )
        details = [
            f"n           : {n} records, {m} covariate(s), {d} response(s) (public)",
            f"bounds      : {'taken from the private data (withheld)' if leaked else 'public, in to_dict()'}",
        ]
        header = (
            "geodp privacy report: PrivateLinearRegression — NOT DIFFERENTIALLY PRIVATE (bounds taken "
            "from the private data: the numbers below may depend on them)"
            if leaked
            else "geodp privacy report: PrivateLinearRegression (publishable: nothing in it is computed "
            "from the private data)"
        )
        text = header + "\n" + guarantee.render(details, extra)
        data = guarantee.to_dict()
        data["assumptions"] = list(data["assumptions"]) + extra
        data |= {
            "n_samples": n,
            "n_features": m,
            "n_targets": d,
            "fit_intercept": bool(self.fit_intercept),
            "on_invalid": self.on_invalid,
            "release_mechanism": self.mechanism,
            "domain_factor": DOMAIN_FACTOR if "calibration" not in facts else None,
            "bounds_X": None if leaked else [bounds_X[0].tolist(), bounds_X[1].tolist()],
            "bounds_y": None if leaked else [bounds_y[0].tolist(), bounds_y[1].tolist()],
            "differentially_private": not leaked,
        }
        return PrivacyReport(text, data)

    def predict(self, X):
        """Predictions ``X @ coef_.T + intercept_``, shape (n,) or (n, n_targets)."""
        coef = self.coef_  # raises NotFittedError before fit
        X = check_finite_array(X, "X")
        if X.ndim != 2:
            raise InvalidDataError(
                f"X must have shape (n, {self.n_features_in_}), got shape {X.shape}. Reshape your data "
                "with X.reshape(1, -1) for a single record."
            )
        if X.shape[1] != self.n_features_in_:
            raise InvalidDataError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input."
            )
        return X @ np.asarray(coef).T + self.intercept_


def _stand_ins(facts, x_shape, y_shape):
    """Public ``(X, y)`` standing in for the data when the timing-safe deadline is calibrated:
    every record at the lower bounds, and records uniform in the public box (a public seed)."""
    (low_x, high_x), (low_y, high_y) = facts["bounds_X"], facts["bounds_y"]
    n, rng = x_shape[0], np.random.default_rng(0)
    pairs = [
        (np.broadcast_to(low_x, x_shape).copy(), np.broadcast_to(low_y, (n, facts["d"])).copy()),
        (rng.uniform(low_x, high_x, size=x_shape), rng.uniform(low_y, high_y, size=(n, facts["d"]))),
    ]
    return [(X, y.reshape(y_shape)) for X, y in pairs]


def _refuse_weights(sample_weight) -> None:
    if sample_weight is not None:
        raise InvalidParameterError(
            "sample_weight is not supported: weighted records change the sensitivity of the "
            "release. Drop sample_weight (diffprivlib ignores it with a warning)."
        )


def _release_facts(x_lo, x_hi, y_lo, y_hi, fit_intercept: bool, n: int, epsilon: float, delta: float) -> dict:
    """The public facts of a release from the bounds: the normalisation, Δ and σ. KNG (δ = 0):
    σ = 2Δ/ε and the sampler's route (:func:`~geodp.distributions.affine_kng.affine_kng_route`);
    AdaSSP (δ > 0): its calibration (:func:`~geodp.models.adassp.adassp_calibration`)."""
    facts = _normalisation(x_lo, x_hi, y_lo, y_hi, fit_intercept)
    if delta > 0.0:
        cal = adassp_calibration(
            epsilon,
            delta,
            n=n,
            q=len(x_lo) + int(fit_intercept),
            x_norm_max=facts["x_norm_max"],
            y_norm_max=facts["y_norm_max"],
        )
        return facts | {
            "sensitivity": max(cal.sensitivities),
            "scale": max(cal.sigmas),
            "calibration": cal,
            "exact": True,
            "sampler": ADASSP_SAMPLER,
        }
    sensitivity = 2.0 * facts["x_norm_max"] * float(np.linalg.norm(facts["tau"])) / n
    scale = 2.0 * sensitivity / epsilon
    route = affine_kng_route(scale, _gradient_bound(facts))
    return facts | {
        "sensitivity": sensitivity,
        "scale": scale,
        "route": route,
        "exact": route.exact,
        "sampler": route.sampler,
    }


ADASSP_SAMPLER = (
    "exact Gaussian draws (numpy): one for λ_min of the Gram matrix, a symmetric matrix for the Gram "
    "matrix, a matrix for the cross products"
)


def _kng_guarantee(facts, normalisation: str, space: str, random_state) -> Guarantee:
    return Guarantee(
        mechanism="K-norm gradient (Reimherr & Awan 2019; S22) on the least-squares gradient",
        epsilon=facts["epsilon"],
        delta=0.0,
        sensitivity=facts["sensitivity"],
        metric=(
            f"Frobenius norm of the gradient in normalised units ({normalisation}; each "
            "response divided by the width of its bounds)"
        ),
        scale=facts["scale"],
        scale_rule="σ = 2Δ/ε (KNG's normaliser depends on the data)",
        space=space,
        sampler=facts["route"].sampler,
        exact=facts["route"].exact,
        **sampler_construction(
            random_state, "the KNG law of the least-squares gradient has no exact lattice sampler in geodp"
        ),
        support=(
            "public polytope: every prediction over the public box of X lies in the response "
            f"bounds widened by the factor {DOMAIN_FACTOR!r} about their midpoint"
        ),
        assumptions=(
            "records clipped into bounds_X and bounds_y (a per-record, public map)",
            f"residuals bounded on the whole domain by tau = {facts['tau'].tolist()!r} (normalised units)",
            f"max ‖x̃‖ over the box = {facts['x_norm_max']!r}; Δ = 2·max‖x̃‖·‖tau‖/n",
            "the sampler ends within public work on every dataset; its running time depends on the data",
        ),
    )


def _adassp_guarantee(facts, normalisation: str, space: str, random_state) -> Guarantee:
    cal = facts["calibration"]
    (d_lam, d_gram, d_target), (s_lam, s_gram, s_target) = cal.sensitivities, cal.sigmas
    return Guarantee(
        mechanism=(
            "AdaSSP (Wang 2018, Alg. 2): Gaussian noise on λ_min(G), on G = (1/n) Σ x̃x̃ᵀ and on "
            "b = (1/n) Σ x̃ỹᵀ, then (Ĝ + λI)⁻¹ b̂ with the ridge λ from the noisy λ_min"
        ),
        epsilon=cal.epsilon,
        delta=cal.delta,
        sensitivity=facts["sensitivity"],
        metric=(
            f"the largest of three: |·| of λ_min(G), Frobenius norm of G and of b, in normalised units "
            f"({normalisation}; each response divided by the width of its bounds)"
        ),
        scale=facts["scale"],
        scale_rule=(
            "σ_k = √3·Δ_k/μ for each of the three releases, μ the largest GDP parameter whose privacy "
            "curve meets (ε, δ) (Balle & Wang 2018): each release is (μ/√3)-GDP, together exactly μ-GDP "
            "(Dong, Roth & Su 2022)"
        ),
        space=space,
        sampler=ADASSP_SAMPLER,
        exact=True,
        **sampler_construction(random_state, "AdaSSP's Gaussian noise is drawn in floating point"),
        gdp_mu=cal.mu,
        assumptions=(
            "records clipped into bounds_X and bounds_y (a per-record, public map)",
            f"max ‖x̃‖ over the box B = {facts['x_norm_max']!r}, max ‖ỹ‖ Y = {facts['y_norm_max']!r}",
            f"λ_min(G): Δ = B²/n = {d_lam!r}, σ = {s_lam!r}, shifted down by {cal.shift!r}",
            f"G: Δ = √2·B²/n = {d_gram!r} (Frobenius), σ = {s_gram!r} per coordinate of the "
            "Frobenius-isometric parametrisation (diagonal σ, off-diagonal σ/√2)",
            f"b: Δ = 2·B·Y/n = {d_target!r} (Frobenius), σ = {s_target!r}",
            f"ridge λ = max(0, η − λ̃_min) with η = {cal.eta!r} (ρ = {RIDGE_FAILURE}): post-processing",
        ),
    )


def _gradient_bound(facts) -> float:
    """Public bound on ``‖Aθ − B‖_F = ‖(1/n) Σ x̃_i (x̃_iᵀθ − ỹ_i)ᵀ‖_F`` over Θ and every dataset:
    ``max‖x̃‖ · ‖τ‖`` (every residual is bounded by τ on Θ)."""
    return facts["x_norm_max"] * float(np.linalg.norm(facts["tau"]))


def _as_numeric(value, name: str):
    """The records behind ``value`` as float64 (:func:`~geodp.validation.as_real_array`): entries
    that are not finite reals become NaN, left for the private part. A Dask array stays lazy:
    only its public metadata (shape, number of records, dtype) are checked here."""
    if is_dask(value):
        if np.issubdtype(value.dtype, np.complexfloating):
            raise InvalidTypeError(f"{name} must be real, got complex numbers.")
        check_dask_records(value, name)
        return value
    try:
        return as_real_array(value, name)
    except InvalidDataError as err:
        if "Complex" in str(err):  # scikit-learn's convention for complex input: a TypeError
            raise InvalidTypeError(f"{name} must be real, got complex numbers.") from None
        raise


def _check_bounds(bounds, width: int, name: str):
    """``(lower, upper)`` as two float vectors of length ``width`` with lower < upper."""
    if not isinstance(bounds, (tuple, list)) or len(bounds) != 2:
        raise InvalidTypeError(f"{name} must be a tuple (lower, upper), got {bounds!r}.")
    out = []
    for side, value in zip(("lower", "upper"), bounds, strict=True):
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            arr = np.full(width, float(value))
        else:
            try:
                arr = np.asarray(value, dtype=float).ravel()
            except (TypeError, ValueError):
                raise InvalidTypeError(f"{name}'s {side} bound must be a number or a vector, got {value!r}.") from None
            if arr.shape == (1,):
                arr = np.full(width, arr[0])
            if arr.shape != (width,):
                raise InvalidParameterError(
                    f"{name}'s {side} bound must be a scalar or have length {width}, got shape {arr.shape}."
                )
        if not np.all(np.isfinite(arr)):
            raise InvalidParameterError(f"{name}'s {side} bound must be finite, got {value!r}.")
        out.append(arr)
    lower, upper = out
    if not np.all(lower < upper):
        bad = int(np.flatnonzero(~(lower < upper))[0])
        raise InvalidParameterError(
            f"{name} needs lower < upper in every column; column {bad} has lower={float(lower[bad])!r}, "
            f"upper={float(upper[bad])!r}."
        )
    width = upper - lower
    if not np.all(np.isfinite(width)) or not np.all(width >= 1e-150):
        raise InvalidParameterError(
            f"{name}'s upper − lower must lie in [1e-150, 1.8e308] (float64 must hold the width and its inverse); "
            "express the data in other units."
        )
    return lower, upper


def _raise_invalid():
    raise InvalidDataError(
        "X or y holds NaN, infinite or non-numeric values; remove or impute them, or pass on_invalid='center'."
    )


def _invalid_rows(X, y) -> np.ndarray:
    return ~(np.all(np.isfinite(X), axis=1) & np.all(np.isfinite(y), axis=1))


def _valid_extremes(X, y):
    """``(n_invalid, min X, max X, min y, max y)`` of a block, over its valid records (±inf if
    none): the data bounds of a leaky release, block by block."""
    invalid = _invalid_rows(X, y)
    X, y = X[~invalid], y[~invalid]
    if len(X) == 0:
        inf_x, inf_y = np.full(X.shape[1], np.inf), np.full(y.shape[1], np.inf)
        return int(np.count_nonzero(invalid)), inf_x, -inf_x, inf_y, -inf_y
    return int(np.count_nonzero(invalid)), X.min(axis=0), X.max(axis=0), y.min(axis=0), y.max(axis=0)


def _moment_part(to_design, to_response, bounds_X, bounds_y, refuse, X, y):
    """One block of records: ``(moment parts, [n_invalid, n_clipped_x, n_clipped_y])``. Invalid
    records are replaced by the midpoints of the bounds (or, if they are refused, nothing is
    computed), then every record is clipped into the bounds and normalised: a per-record map."""
    invalid = _invalid_rows(X, y)
    n_invalid = int(np.count_nonzero(invalid))
    if n_invalid and refuse:
        return None, np.array([n_invalid, 0, 0])
    if n_invalid:
        X, y = X.copy(), y.copy()
        X[invalid] = bounds_X[0] + 0.5 * (bounds_X[1] - bounds_X[0])  # midpoints, without overflow
        y[invalid] = bounds_y[0] + 0.5 * (bounds_y[1] - bounds_y[0])
    (x_lo, x_hi), (y_lo, y_hi) = bounds_X, bounds_y
    clipped_x = np.count_nonzero(np.any((X < x_lo) | (X > x_hi), axis=1))
    clipped_y = np.count_nonzero(np.any((y < y_lo) | (y > y_hi), axis=1))
    design, response = to_design(np.clip(X, x_lo, x_hi)), to_response(np.clip(y, y_lo, y_hi))
    return moment_parts(design, response), np.array([n_invalid, clipped_x, clipped_y])


def _data_bounds(lowers, uppers, width: int):
    """Bounds taken from the data (only after a PrivacyLeakWarning), from the blocks' extremes
    over their valid records. Never raises (it runs after the charge): a constant column is
    widened by 1/2 on each side, and no valid record at all gives [0, 1]."""
    lower, upper = np.min(lowers, axis=0), np.max(uppers, axis=0)
    if not np.all(np.isfinite(lower)):  # no valid record
        return np.zeros(width), np.ones(width)
    flat = ~(lower < upper)
    # widen a constant column by at least its rounding level (±0.5 is lost to rounding at 1e17),
    # and keep every width finite (data spanning ±1e308)
    pad = np.maximum(0.5, 2.0**-40 * np.maximum(np.abs(lower), np.abs(upper)))
    lower, upper = np.where(flat, lower - pad, lower), np.where(flat, upper + pad, upper)
    half = np.finfo(float).max / 2.0
    lower, upper = np.clip(lower, -half, half), np.clip(upper, -half, half)
    return lower, np.maximum(upper, lower + np.maximum(1e-150, 2.0**-40 * np.abs(lower)))


def _normalisation(x_lo, x_hi, y_lo, y_hi, fit_intercept: bool) -> dict:
    """The public maps to the normalised units, and the domain Θ there (all from the bounds).

    With an intercept, ``x̃ = (1, (x − mid)/width) ∈ {1} × [−½, ½]^m`` and ``ỹ = (y − mid)/width
    ∈ [−½, ½]``: every prediction over the box lies in ``[−F/2, F/2]`` iff
    ``|θ_0| + ½ Σ_j |θ_j| ≤ F/2`` (per response), so ``|residual| ≤ (F + 1)/2``. Without one,
    ``x̃ = x / max(|lower|, |upper|) ∈ [−1, 1]^m`` and ``ỹ = y / width``: predictions lie in
    ``[−F·M, F·M]`` (M = max |ỹ| over the bounds) iff ``Σ_j |θ_j| ≤ F·M``, so
    ``|residual| ≤ (F + 1)·M``.
    """
    m = len(x_lo)
    y_width = y_hi - y_lo
    if fit_intercept:
        x_shift, x_div = x_lo + 0.5 * (x_hi - x_lo), x_hi - x_lo  # the midpoints, without overflow
        y_shift = y_lo + 0.5 * (y_hi - y_lo)
        weights = np.concatenate([[1.0], np.full(m, 0.5)])
        radius = np.full(len(y_lo), 0.5 * DOMAIN_FACTOR)
        tau = radius + 0.5
        y_norm_max = 0.5 * math.sqrt(len(y_lo))
        x_norm_max = math.sqrt(1.0 + m / 4.0)
    else:
        x_shift, x_div = np.zeros(m), np.maximum(np.abs(x_lo), np.abs(x_hi))
        y_shift = np.zeros(len(y_lo))
        weights = np.ones(m)
        largest = np.maximum(np.abs(y_lo), np.abs(y_hi)) / y_width
        radius = DOMAIN_FACTOR * largest
        tau = radius + largest
        y_norm_max = float(np.linalg.norm(largest))
        x_norm_max = math.sqrt(float(m))
    domain = CrossPolytopeDomain(weights, np.zeros((len(weights), len(y_lo))), radius)

    # Measured from the lower bound and clipped: (x − mid)/width can leave [−½, ½] when mid
    # rounds (an audit put x̃ at 1 with bounds (1, 1 + 2⁻⁵²)), and Δ, τ and G assume it does not.
    def to_design(X):
        if not fit_intercept:
            return X / x_div  # |x| ≤ M gives |x/M| ≤ 1 exactly (division is monotone)
        Z = np.clip((X - x_lo) / x_div - 0.5, -0.5, 0.5)
        return np.hstack([np.ones((len(Z), 1)), Z])

    def to_response(y):
        return np.clip((y - y_lo) / y_width - 0.5, -0.5, 0.5) if fit_intercept else y / y_width

    def to_original(theta):  # (q, d) normalised -> coef (d, m), intercept (d,)
        slopes = theta[1:] if fit_intercept else theta
        coef = (slopes / x_div[:, None] * y_width).T
        intercept = y_shift + (y_width * theta[0] if fit_intercept else 0.0) - coef @ x_shift
        return coef, intercept

    return dict(
        to_design=to_design,
        to_response=to_response,
        in_domain=domain,
        to_original=to_original,
        tau=tau,
        x_norm_max=x_norm_max,
        y_norm_max=y_norm_max,
    )
