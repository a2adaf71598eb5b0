"""Private principal geodesic analysis: the tangent PCA of Fletcher et al. (2004) at a private mean.

Two releases, composed: the footpoint ``m`` (a :class:`~geodp.models.PrivateFrechetMean`
projected onto the public ball, or a public point), then the tangent covariance
``C = (1/n) Σ_i u_i u_iᵀ`` of ``u_i = clip_R(Log_m(x_i))`` in an orthonormal frame of ``T_mM``,
released by the Gaussian mechanism on its upper triangle (Analyze Gauss, Dwork, Talwar, Thakurta
& Zhang 2014) with replace-one sensitivity ``√2·R²/n``; the principal directions are the
eigenvectors of the noisy ``C`` (post-processing). docs/math.md §14 has the proof.
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError

from geodp.accountant import check_accountant
from geodp.calibration import gaussian_sigma
from geodp.errors import AssumptionError, InvalidParameterError, NotOnManifoldError
from geodp.manifolds.base import check_space
from geodp.mechanisms.base import Guarantee, sampler_construction
from geodp.models.frechet_mean import NEEDS_DELTA, PrivateFrechetMean, invalid_message, prepared_records
from geodp.models.report import PrincipalGeodesicsDiagnostics, PrivacyReport, with_deadline
from geodp.release import (
    TIMING_SAFE_DELTA,
    TIMING_SAFE_POLICY,
    ReleasePlan,
    ball_stand_ins,
    check_timing_safe,
    deadline_key,
    execute,
    timing_deadline,
)
from geodp.secure import is_secure
from geodp.sensitivity import check_radius
from geodp.validation import as_generator, check_delta, check_epsilon, check_positive_integer
from geodp.work import NoAcceptance, count

__all__ = ["PrivatePrincipalGeodesics", "covariance_sensitivity", "tangent_covariance", "tangent_frame"]

_FITTED = (
    "mean_",
    "covariance_",
    "frame_",
    "components_",
    "explained_variance_",
    "n_samples_",
    "privacy_report_",
    "curator_diagnostics_",
    "timing_deadline_",
)
_ON_INVALID = ("raise", "center")


def tangent_frame(space, point) -> np.ndarray:
    """An orthonormal basis of ``T_pM`` in the metric at ``p``, shape ``(space.dim, *point_shape)``.

    ``space.dim`` standard Gaussian tangent vectors at ``p`` from a fixed seed (already of unit
    scale in the metric, however far ``p`` lies), orthonormalised by Gram–Schmidt in the metric,
    twice. Deterministic, and a function of ``p`` only (public when ``p`` is).

    Raises
    ------
    AssumptionError
        The draws do not span ``space.dim`` dimensions (a space whose tangent sampler does not).

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import SPD
    >>> space, p = SPD(2), np.array([[2.0, 0.5], [0.5, 1.0]])
    >>> E = tangent_frame(space, p)
    >>> E.shape, np.allclose(space.inner(p, E[:, None], E[None, :]), np.eye(3))
    ((3, 2, 2), True)
    """
    space = check_space(space)
    point = space.check_points(point, "point", batch_ndim=0)
    geometry = space.unchecked
    draws = geometry.random_tangent(point, size=space.dim, rng=np.random.default_rng(0))
    frame = np.zeros_like(draws)
    for k, v in enumerate(draws):
        scale = float(geometry.norm(point, v))
        for _ in range(2):  # twice is enough (Giraud et al. 2005)
            if k:
                v = v - np.tensordot(np.asarray(geometry.inner(point, frame[:k], v)), frame[:k], axes=1)
        length = float(geometry.norm(point, v))
        if not length > 1e-8 * scale:
            raise AssumptionError(
                f"the tangent draws of {space!r} span fewer than dim = {space.dim} dimensions at this point: "
                "principal geodesics need a full orthonormal frame."
            )
        frame[k] = v / length
    return frame


def tangent_covariance(space, point, frame, records, bound) -> np.ndarray:
    """``(1/n) Σ_i u_i u_iᵀ`` of the coordinates ``u_i`` in ``frame`` of ``Log_p(x_i)`` shrunk to
    norm ≤ ``bound`` (a per-record rule; a non-finite vector counts as 0), shape ``(d, d)``.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Euclidean
    >>> X = np.array([[3.0, 0.0], [0.0, 1.0]])
    >>> tangent_covariance(Euclidean(2), np.zeros(2), np.eye(2), X, 2.0)
    array([[2. , 0. ],
           [0. , 0.5]])
    """
    count("records", len(records))
    logs = space.unchecked.log(point, records)
    coords = np.asarray(space.unchecked.inner(point, frame[None, :], logs[:, None]), dtype=float)
    with np.errstate(all="ignore"):
        norms = np.linalg.norm(coords, axis=1)
        factor = np.where(norms > bound, bound / np.where(norms > 0, norms, 1.0), 1.0)
        factor = np.where(np.isfinite(norms), factor, 0.0)
    coords = np.where(np.isfinite(norms)[:, None], coords, 0.0) * factor[:, None]
    return coords.T @ coords / coords.shape[0]


def covariance_sensitivity(bound, n) -> float:
    """Replace-one sensitivity of :func:`tangent_covariance`'s upper triangle (diagonal included),
    in the Euclidean norm: ``√2·R²/n`` (docs/math.md §14; attained by orthogonal ``u``, ``v`` of
    norm ``R``).

    Examples
    --------
    >>> round(covariance_sensitivity(1.0, 100), 6)
    0.014142
    """
    return math.sqrt(2.0) * float(bound) ** 2 / int(n)


def _symmetric_noise(dim, sigma, rng) -> np.ndarray:
    """A symmetric ``dim × dim`` matrix whose upper triangle (diagonal included) is i.i.d. N(0, σ²)."""
    upper = np.triu(rng.standard_normal((dim, dim)) * sigma)
    return upper + np.triu(upper, 1).T


class PrivatePrincipalGeodesics(BaseEstimator):
    """(ε, δ)-DP principal geodesic analysis: the leading eigenvectors of the tangent covariance
    at a private mean (Fletcher, Lu, Pizer & Joshi 2004, tangent PCA).

    ``fit`` releases (1) the footpoint ``mean_``: a :class:`~geodp.models.PrivateFrechetMean` with
    ``mean_share`` of the budget, projected onto the public ball (or the public ``footpoint``,
    which costs nothing); (2) the tangent covariance at it, of the records clipped into the public
    ball, each ``Log`` shrunk to norm ``R`` (``R = 2·radius`` at a private mean, ``radius + ρ(footpoint,
    center)`` at a public one: by the triangle inequality nothing is shrunk when ``R`` is below the
    injectivity radius), with symmetric Gaussian noise of replace-one sensitivity ``√2·R²/n``.
    The principal directions are its eigenvectors (post-processing). The accountant is charged
    once, before any record is read, with the composition of the two releases.

    Parameters
    ----------
    space : Manifold
    n_components : int
        Number of principal geodesics, ≤ ``space.dim``.
    epsilon : float
        Total budget of the two releases (sequential composition).
    delta : float
        In (0, 1), total (the timing-safe δ_t comes on top).
    center, radius
        The public ball (radius below the space's convexity radius, ``check_radius``).
    mean_share : float, default 0.5
        Fraction of ε (and of δ, if ``mean_mechanism`` is a Gaussian one) spent on the mean.
    mean_mechanism : str, default "laplace"
        ``PrivateFrechetMean``'s ``mechanism``.
    footpoint : point, optional
        A public footpoint instead of the private mean (all the budget goes to the covariance).
    on_invalid : {"raise", "center"}, default "raise"
        A record that is not a point of the space: ``"raise"`` refuses the fit with
        :class:`~geodp.errors.NotOnManifoldError` after the charge, with one fixed message
        whatever the fault (NaN, off the manifold, degenerate); ``"center"`` replaces it by the
        public centre in both releases (a per-record map: replace-one adjacency is kept), the
        count in ``curator_diagnostics_``.
    accountant : BudgetAccountant, optional
        Charged once for both releases (their ``ComposedDpEvent``); a short budget charges nothing.
    random_state : None, int or numpy.random.Generator
    timing_safe : bool or float, default False
        As in :class:`~geodp.models.PrivateFrechetMean`: both releases run with fixed public
        work (the footpoint's Karcher flow its whole budget, its sampler a fixed number of
        proposals; every record validated, clipped and read by the covariance pass), padded to
        one public deadline (given in seconds, or calibrated on public stand-in records), in
        ``timing_deadline_`` and the report. The footpoint's δ_t is charged and reported
        (``timing_delta``).

    Attributes
    ----------
    mean_ : ndarray, shape point_shape
        The footpoint (released).
    components_ : ndarray, shape (n_components, *point_shape)
        Unit tangent vectors at ``mean_`` (the metric there), by decreasing released variance.
    explained_variance_ : ndarray, shape (n_components,)
        The noisy covariance's eigenvalues, floored at 0.
    covariance_ : ndarray, shape (space.dim, space.dim)
        The released (noisy) tangent covariance, in the frame ``frame_``.
    frame_ : ndarray, shape (space.dim, *point_shape)
        The orthonormal frame of ``T_{mean_}M`` (:func:`tangent_frame`, public).
    n_samples_ : int
    timing_deadline_ : float or None
        The public deadline the private part was padded to (None without ``timing_safe``).
    privacy_report_ : PrivacyReport
        **Publishable**: the total (ε, δ) (δ_t included) and both releases' guarantees.
    curator_diagnostics_ : PrincipalGeodesicsDiagnostics
        **Curator-only** (records clipped or replaced, the footpoint's diagnostics, withheld
        warnings). Never publish them.

    Notes
    -----
    **Privacy.** Replace-one adjacency, n public. The mean release is ``PrivateFrechetMean``'s
    guarantee (with δ_t in the timing-safe mode); the covariance release is the Gaussian mechanism
    (μ-GDP with μ = Δ/σ, σ the analytic calibration of ``(1 − mean_share)·ε``; it has no
    rejection loop, so fixed work leaves it unchanged). The pair is charged as one release whose
    event is the ``ComposedDpEvent`` of the two (PLD keeps the covariance Gaussian) and reported
    as their sum (ε₁ + ε₂, δ₁ + δ₂ [+ δ_t]). docs/math.md §14.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Sphere
    >>> space, north = Sphere(2), np.array([0.0, 0.0, 1.0])
    >>> rng = np.random.default_rng(0)
    >>> v = np.c_[0.3 * rng.standard_normal(2000), 0.05 * rng.standard_normal(2000), np.zeros(2000)]
    >>> X = space.unchecked.exp(north, v)                   # spread along the x axis
    >>> model = PrivatePrincipalGeodesics(space, 1, epsilon=2.0, delta=1e-5, center=north, radius=0.7,
    ...                                   random_state=0).fit(X)
    >>> bool(abs(model.components_[0][0]) > 0.95), model.privacy_report_.to_dict()["epsilon"]
    (True, 2.0)
    >>> str(model.curator_diagnostics_).startswith("CURATOR-ONLY")  # never publish
    True
    """

    def __init__(
        self,
        space,
        n_components,
        *,
        epsilon,
        delta,
        center,
        radius,
        mean_share=0.5,
        mean_mechanism="laplace",
        footpoint=None,
        on_invalid="raise",
        accountant=None,
        random_state=None,
        timing_safe=False,
    ):
        self.space = space
        self.n_components = n_components
        self.epsilon = epsilon
        self.delta = delta
        self.center = center
        self.radius = radius
        self.mean_share = mean_share
        self.mean_mechanism = mean_mechanism
        self.footpoint = footpoint
        self.on_invalid = on_invalid
        self.accountant = accountant
        self.random_state = random_state
        self.timing_safe = timing_safe

    def __getattr__(self, name):
        if name in _FITTED:
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet. Call 'fit' before using {name}."
            )
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _mean_model(self, epsilon, delta, timing_safe, random_state=None):
        return PrivateFrechetMean(
            self.space,
            epsilon=epsilon,
            delta=delta,
            center=self.center,
            radius=self.radius,
            mechanism=self.mean_mechanism,
            on_invalid=self.on_invalid,
            project_to_ball=True,
            accountant=None,
            random_state=random_state,
            timing_safe=timing_safe,
        )

    def _split(self):
        """(ε₁, δ₁) of the mean (None with a public footpoint), (ε₂, δ₂) of the covariance."""
        epsilon, delta = check_epsilon(self.epsilon), check_delta(self.delta, allow_zero=False)
        if self.footpoint is not None:
            return None, (epsilon, delta)
        share = self.mean_share
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0.0 < share < 1.0:
            raise InvalidParameterError(f"mean_share must be a number in (0, 1), got {share!r}.")
        needs_delta = self.mean_mechanism in NEEDS_DELTA  # the mean's mechanisms that are (ε, δ > 0)-DP
        mean_delta = share * delta if needs_delta else 0.0
        return (share * epsilon, mean_delta), ((1.0 - share) * epsilon, delta - mean_delta)

    def plan(self, X, y=None) -> ReleasePlan:
        """The plan of both releases, from public quantities only: ``epsilon``/``delta`` their
        totals (δ_t included in the timing-safe mode), ``composed_of`` the footpoint's plan (none
        with a public footpoint) and the covariance's guarantee, ``sensitivity``/``scale`` the
        covariance's; ``facts["mean_plan"]`` holds the footpoint's plan.

        Examples
        --------
        >>> import numpy as np
        >>> from geodp.manifolds import Euclidean
        >>> plan = PrivatePrincipalGeodesics(Euclidean(3), 2, epsilon=1.0, delta=1e-5, center=np.zeros(3),
        ...                                  radius=1.0).plan(np.zeros((100, 3)))
        >>> round(plan.sensitivity, 6), plan.exact, plan.facts["bound"], plan.epsilon
        (0.056569, True, 2.0, 1.0)
        >>> type(plan.dp_event()).__name__
        'ComposedDpEvent'
        """
        space = check_space(self.space)
        n = int(space.unchecked.dataset_array(X, "X").shape[0])
        radius = check_radius(space, self.radius)
        center = space.check_points(self.center, "center", batch_ndim=0)
        k = check_positive_integer(self.n_components, "n_components")
        if k > space.dim:
            raise InvalidParameterError(f"n_components must be <= space.dim = {space.dim}, got {k}.")
        if self.on_invalid not in _ON_INVALID:
            raise InvalidParameterError(f"on_invalid must be one of {_ON_INVALID}, got {self.on_invalid!r}.")
        timing = check_timing_safe(self.timing_safe)
        check_accountant(self.accountant)
        tangent_frame(space, center)  # a space without a full frame is refused before any charge
        rng = as_generator(self.random_state)
        mean_budget, (epsilon, delta) = self._split()
        if mean_budget is None:
            footpoint = space.check_points(self.footpoint, "footpoint", batch_ndim=0)
            bound = radius + float(space.dist(center, footpoint))
            mean_plan = None
        else:
            footpoint, bound = None, 2.0 * radius
            mean_plan = self._mean_model(*mean_budget, timing, self.random_state).plan(X)  # refusals come now
        sensitivity = covariance_sensitivity(bound, n)
        sigma = gaussian_sigma(epsilon, delta, sensitivity)
        guarantee = Guarantee(
            mechanism="Gaussian mechanism on the tangent covariance's upper triangle (Analyze Gauss)",
            epsilon=epsilon,
            delta=delta,
            sensitivity=sensitivity,
            metric="Euclidean norm of the upper triangle (diagonal included) in an orthonormal frame of T_m M",
            scale=sigma,
            scale_rule="analytic Gaussian (Balle & Wang 2018, Thm 8) of sensitivity sqrt(2)·R²/n",
            space=repr(space),
            sampler="exact: i.i.d. normal upper triangle, mirrored",
            exact=True,
            support="symmetric d × d matrices",
            assumptions=(
                f"records clipped into the public ball (radius {radius!r}); each Log_m shrunk to norm <= R = {bound!r}",
                "footpoint m public (a released private mean projected onto the ball, or given)",
            ),
            gdp_mu=sensitivity / sigma,
            **sampler_construction(rng, "Gaussian noise in floating point"),
        )
        parts = (guarantee,) if mean_plan is None else (mean_plan, guarantee)
        mus = [part.gdp_mu for part in parts]
        report = self._report(space, guarantee, mean_plan, n, k, radius, bound)
        return ReleasePlan(
            estimator="PrivatePrincipalGeodesics",
            n_samples=n,
            epsilon=math.fsum(part.epsilon for part in parts),
            delta=math.fsum(part.delta for part in parts),
            sensitivity=sensitivity,
            scale=sigma,
            exact=True if mean_plan is None else mean_plan.exact,
            sampler=guarantee.sampler,
            report=report,
            notices=() if mean_plan is None else mean_plan.notices,
            facts={
                "center": center,
                "radius": radius,
                "bound": bound,
                "footpoint": footpoint,
                "mean_plan": mean_plan,
                "mean_budget": mean_budget,
                "guarantee": guarantee,
                "n_components": k,
            },
            # μ-GDP parts compose exactly: μ = √(Σμ²) (Dong, Roth & Su 2022, Cor 3.3)
            gdp_mu=None if None in mus else math.sqrt(math.fsum(mu * mu for mu in mus)),
            composed_of=parts,
            timing_delta=0.0 if mean_plan is None else mean_plan.timing_delta,
        )

    def _report(self, space, guarantee, mean_plan, n, k, radius, bound) -> PrivacyReport:
        timing = self.timing_safe is not False
        mean_data = None if mean_plan is None else mean_plan.report.to_dict()
        parts = [guarantee.to_dict()] if mean_data is None else [mean_data, guarantee.to_dict()]
        eps = math.fsum(part["epsilon"] for part in parts)
        delta = math.fsum(part["delta"] for part in parts)
        mus = [part.get("gdp_mu") for part in parts]
        # Only the footpoint runs rejection loops; the covariance's Gaussian noise has none.
        timing_delta = TIMING_SAFE_DELTA if timing and mean_data is not None else 0.0
        kind = "(ε, δ)-DP with fixed work" if timing else "(ε, δ)-DP"
        details = [
            "estimator   : PrivatePrincipalGeodesics (tangent PCA at the released footpoint; eigenvectors are "
            "post-processing)",
            f"records     : n = {n}; clipped into the public ball of radius {radius!r}; {k} component(s); "
            + (
                "invalid records replaced by the centre"
                if self.on_invalid == "center"
                else "an invalid record refuses the fit after the charge (one fixed message)"
            ),
            f"total       : epsilon = {eps!r}, delta = {delta!r} (sequential composition of the two releases)",
            "accountant  : charged once, the ComposedDpEvent of the releases' events (PLD and RDP compose each "
            "by its own curve)",
        ]
        if timing:
            details.append(f"timing      : {TIMING_SAFE_POLICY}")
            details.append(
                f"fixed work  : delta_t = {timing_delta!r} "
                + (
                    "(the footpoint's samplers; the covariance's Gaussian noise has no rejection loop), "
                    "included in the total; if the footpoint falls back, the public centre is the footpoint"
                    if timing_delta
                    else "(a public footpoint: no rejection loop runs, so nothing falls back)"
                )
            )
        text = (
            "geodp privacy report: PrivatePrincipalGeodesics (publishable: nothing in it is computed from the "
            f"private data)\nin total {kind}: epsilon = {eps!r}, delta = {delta!r} (both releases"
            + (f"; delta_t = {timing_delta!r} included" if timing else "")
            + "); the covariance release:\n"
            + guarantee.render(details)
        )
        if mean_plan is None:
            text += "\nfootpoint   : public (given), no release"
        else:
            text += "\n\nfootpoint release (PrivateFrechetMean, projected onto the ball):\n" + str(mean_plan.report)
        data = {
            "estimator": "PrivatePrincipalGeodesics",
            "epsilon": eps,
            "delta": delta,
            "gdp_mu": None if None in mus else math.sqrt(math.fsum(mu * mu for mu in mus)),
            "n_samples": n,
            "n_components": k,
            "radius": radius,
            "tangent_bound": bound,
            "space": repr(space),
            "on_invalid": self.on_invalid,
            "timing_safe": timing,
            "timing_delta": timing_delta,
            "covariance": guarantee.to_dict(),
            "mean": mean_data,
            "composed_of": parts,
        }
        return PrivacyReport(text, data)

    def fit(self, X, y=None):
        """Release the footpoint and the principal geodesics of ``X``.

        Raises
        ------
        InvalidParameterError, AssumptionError, InvalidDataError
            Public refusals, before any charge.
        BudgetExceededError
            The accountant cannot pay both releases (nothing charged).
        NotOnManifoldError
            With ``on_invalid="raise"``, a record is not a point of the space (after the charge:
            it depends on the data; one message whatever the fault).
        """
        if y is not None:
            raise InvalidParameterError("y must be None: principal geodesic analysis is unsupervised.")
        plan = self.plan(X)
        space, facts = self.space, plan.facts
        data = space.unchecked.dataset_array(X, "X")
        rng = as_generator(self.random_state)
        stand_in_rng = as_generator(None if is_secure(rng) else 0)  # the same construction as the release
        deadline = timing_deadline(
            self.timing_safe,
            lambda records: self._private_release(records, facts, plan.scale, stand_in_rng),
            lambda: ball_stand_ins(space, facts["center"], facts["radius"], plan.n_samples),
            key=deadline_key(plan, is_secure(rng), np.shape(data)) if self.timing_safe is True else None,
        )
        (footpoint, frame, noisy, diagnostics), withheld, overran = execute(
            plan, self.accountant, lambda: self._private_release(data, facts, plan.scale, rng), deadline=deadline
        )
        values, vectors = np.linalg.eigh(noisy)  # post-processing of the release
        order = np.argsort(values)[::-1][: facts["n_components"]]
        self.mean_, self.covariance_, self.frame_ = footpoint, noisy, frame
        self.components_ = np.tensordot(vectors[:, order].T, frame, axes=1)
        self.explained_variance_ = np.maximum(values[order], 0.0)
        self.n_samples_ = plan.n_samples
        self.timing_deadline_ = deadline
        self.privacy_report_ = with_deadline(plan.report, deadline, calibrated=self.timing_safe is True)
        self.curator_diagnostics_ = PrincipalGeodesicsDiagnostics(
            **diagnostics, warnings=withheld, timing_overran=overran
        )
        return self

    def _private_release(self, records, facts, scale, rng):
        """Everything that reads the records (run by :func:`geodp.release.execute`, with fixed work
        in the timing-safe mode): the footpoint's release, then the covariance's. Returns
        ``(footpoint, frame, noisy covariance, diagnostics)``; raises only the invalid-record error."""
        space, center, radius = self.space, facts["center"], facts["radius"]
        mean_diagnostics, fell_back = None, False
        if facts["mean_plan"] is None:
            footpoint = facts["footpoint"]
        else:  # the fixed work, if any, comes from the section this runs in
            model = self._mean_model(*facts["mean_budget"], False, rng)
            try:
                footpoint = model.fit(records).mean_
                mean_diagnostics = model.curator_diagnostics_
            except NoAcceptance:  # fixed work only, probability at most δ_t (charged): the public centre
                footpoint, fell_back = np.array(center, dtype=float), True
        frame = tangent_frame(space, footpoint)  # a function of the released footpoint
        clipped, (n_invalid, n_clipped) = prepared_records(space, center, radius, records, coordinates=False)
        if n_invalid and self.on_invalid == "raise":
            raise NotOnManifoldError(invalid_message(space))
        covariance = tangent_covariance(space, footpoint, frame, clipped, facts["bound"])
        noisy = covariance + _symmetric_noise(space.dim, scale, rng)
        diagnostics = dict(n_clipped=n_clipped, n_invalid=n_invalid, mean=mean_diagnostics, mean_fell_back=fell_back)
        return footpoint, frame, noisy, diagnostics
