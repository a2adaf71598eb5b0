"""Choose the data ball privately: a small share of ε buys a ball that fits the data.

A release's noise grows with the radius of its public data ball, and the ball a user can state
honestly without looking at the data is usually far too large. :func:`private_ball` spends a
small ε to localise the data inside such a coarse ball — a coarse private centre (a private
Fréchet mean in the coarse ball), then a private quantile of the distances to it — and returns a
:class:`~geodp.models.ball.PrivateBall` that the estimators take as ``ball=``. The guide's
section "Choosing the data ball" (docs/guide.md) has the measured gains and the split of ε.
"""

from __future__ import annotations

import math

import numpy as np

from geodp.accountant import check_accountant
from geodp.errors import InvalidDataError, InvalidParameterError, NotOnManifoldError
from geodp.manifolds.base import check_space
from geodp.mechanisms.quantile import private_quantile, quantile_guarantee
from geodp.models.ball import PrivateBall
from geodp.models.frechet_mean import PrivateFrechetMean, invalid_message, prepared_records
from geodp.models.report import BallDiagnostics, PrivacyReport, with_deadline, with_timing_policy
from geodp.records import is_dask
from geodp.release import ReleasePlan, ball_stand_ins, check_timing_safe, execute, timing_deadline, timing_safe_plan
from geodp.sensitivity import MIN_RADIUS, max_radius
from geodp.validation import as_generator, check_epsilon

__all__ = ["DEFAULT_CENTER_SHARE", "DEFAULT_QUANTILE", "PrivateBall", "private_ball"]

# Chosen by measurement (benchmarks/bench_private_ball.py; docs/guide.md, "Choosing the data ball").
DEFAULT_QUANTILE = 0.95
DEFAULT_CENTER_SHARE = 0.7
# The radius is a quantile of log-distances on [log(U·LOG_FLOOR), log U] (U the public upper end).
LOG_FLOOR = 1e-6
# Below this (1 − center_share)·ε·n·min(q, 1 − q)/2 the quantile's law drops by less than a factor
# e^0.5 over the whole rank range: a cold trial at 0.225 (n = 300, ε = 0.1, SPD(8)) got balls holding
# no record, while the weakest setting of docs/guide.md's table, 0.75 (S², n = 2,000, ball share
# 0.05, q = 0.95, centre share 0.7), still had 0.145 of the coarse ball's error.
MIN_STRENGTH = 0.5


def _check_share(value, name: str, *, allow_zero: bool = False) -> float:
    interval = "[0, 1)" if allow_zero else "(0, 1)"
    try:
        share = float(value)
    except (TypeError, ValueError):
        raise InvalidParameterError(f"{name} must be a number in {interval}, got {value!r}.") from None
    if not (0.0 <= share if allow_zero else 0.0 < share) or not share < 1.0:
        raise InvalidParameterError(f"{name} must be in {interval}, got {value!r}.")
    return share


def radius_limit(space) -> float:
    """The largest radius a released ball may take on ``space``: just below r* (R21 Assumption 1)
    and within ``space.max_representable_radius``.

    Examples
    --------
    >>> from geodp.manifolds import Sphere
    >>> radius_limit(Sphere(2)) < math.pi / 4
    True
    """
    limit = min(max_radius(space), space.max_representable_radius)
    return math.nextafter(limit, 0.0) if math.isfinite(limit) else space.max_representable_radius


def private_ball(
    space,
    X,
    *,
    epsilon,
    center,
    radius,
    quantile=DEFAULT_QUANTILE,
    center_share=DEFAULT_CENTER_SHARE,
    on_invalid="raise",
    accountant=None,
    random_state=None,
    timing_safe=False,
) -> PrivateBall:
    """Release, under ε-DP, a geodesic ball that holds most of the records.

    Two releases on the records, composed sequentially (with ``center_share=0``, the second
    only, around the public centre):

    1. the centre: :class:`~geodp.models.PrivateFrechetMean` (Laplace) in the coarse ball at
       ``center_share·epsilon``, projected onto the coarse ball (post-processing);
    2. the radius: the exponential-mechanism ``quantile`` of the distances from the released
       centre to the records (clipped into the coarse ball), which all lie in
       ``[0, U]``, ``U = radius + ρ(released centre, center)``; the mechanism
       (:func:`geodp.mechanisms.quantile.private_quantile`) runs on their logarithms, floored
       at ``log(U·1e-6)``, at the rest of ``epsilon``. On the log scale the interval above the
       largest distance weighs ``log(U/max)`` rather than ``U − max``: far fewer useless radii
       near ``U`` when the coarse ball is much wider than the data (measured in docs/guide.md).

    The radius is then limited to the space's allowed radii (below r* on positively curved
    spaces, within the representable range; :func:`radius_limit`), and where it is not smaller
    than the coarse radius the coarse ball itself is returned (it holds every clipped record):
    both post-processing of the two releases.

    Parameters
    ----------
    space : Manifold
    X : array_like, shape (n, *space.point_shape)
        The private records (in memory).
    epsilon : float
        Budget of the ball, > 0 (the whole cost; a later release adds its own).
    center : array_like, shape space.point_shape
        Centre of the coarse public ball (not computed from the data).
    radius : float
        Radius of the coarse public ball: as large as you can honestly state; it must pass the
        checks of the estimators' public ball (``radius < r*``).
    quantile : float, default 0.95
        Share of the records the new ball should hold, in (0, 1). High levels keep the later
        release's clipping bias small, but the quantile mechanism returns a radius near the
        interval's upper end unless ``(1 − center_share)·epsilon·(1 − quantile)·n`` is well
        above 1 (docs/math.md §6): lower it for small n·ε. A budget with
        ``(1 − center_share)·epsilon·n·min(quantile, 1 − quantile)/2 < 0.5`` is refused before
        any charge: the radius would be mostly noise.
    center_share : float, default 0.7
        Share of ``epsilon`` spent on the centre, in [0, 1). Both defaults were chosen by
        measurement (docs/guide.md, "Choosing the data ball"). ``0`` is the radius-only mode:
        the coarse ``center`` is kept, nothing is spent on it, and the whole ``epsilon`` buys the
        radius (the quantile of the distances to ``center``, on ``[0, radius]``). Use it when
        the public centre is already near the data and only the radius is too large (the
        connectomes around I: docs/guide.md), or when a private centre would be noisier than
        the coarse radius (small n·ε in high dimension).
    on_invalid : {"raise", "center"}, default "raise"
        Records that are not points of the space: raise (after the charge, like the
        estimators) or replace each by the coarse centre.
    accountant : BudgetAccountant, optional
        Charged ``(epsilon, 0)`` before any record is read.
    random_state : None, int or numpy.random.Generator
    timing_safe : bool or float, default False
        Timing-safe release (docs/guide.md): both releases run fixed public work, the wall time
        is padded to a public deadline (True: calibrated on public stand-in records in the coarse
        ball; the report gives it as ``timing_deadline``) and the guarantee becomes (ε, δ_t),
        charged so.

    Returns
    -------
    PrivateBall
        ``.center``, ``.radius``, ``.epsilon``, ``.delta`` (0.0), the publishable
        ``privacy_report_`` and the curator-only ``curator_diagnostics_``.

    Raises
    ------
    InvalidParameterError, InvalidTypeError, AssumptionError, InvalidDataError
        A public parameter or the shape of ``X`` is invalid (before any charge).
    NotOnManifoldError
        With ``on_invalid="raise"``, some record is not a point of the space (after the charge).
    BudgetExceededError
        The accountant cannot pay (nothing charged, nothing released).

    Notes
    -----
    **Privacy.** Replace-one adjacency with n public. The centre is ``center_share·ε``-DP
    (PrivateFrechetMean's guarantee); given the released centre, the per-record map "clip into
    the coarse ball, take the distance to the centre" changes one value when one record is
    replaced, so the quantile is ``(1 − center_share)·ε``-DP; together ε-DP (sequential
    composition, docs/math.md). Nothing else is observable: no warning or error depends on the
    records (the fraction of records inside the new ball is a curator-only diagnostic), and the
    interval's upper end is computed from the released centre only. Its wall time is not padded:
    ``private_ball`` has no timing-safe mode (an audit measured the Karcher flow's data-dependent
    time through it), so do not expose how long it took.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Sphere
    >>> from geodp.models import PrivateFrechetMean
    >>> space = Sphere(2)
    >>> north = np.array([0.0, 0.0, 1.0])
    >>> rng = np.random.default_rng(0)
    >>> m = space.exp(north, np.array([0.3, 0.0, 0.0]))       # the data lie within ~0.1 of m
    >>> X = space.exp(m, space.to_tangent(m, 0.03 * rng.normal(size=(5000, 3))))
    >>> ball = private_ball(space, X, epsilon=0.5, center=north, radius=0.7, random_state=0)
    >>> bool(ball.radius < 0.1)           # the coarse radius was 0.7
    True
    >>> model = PrivateFrechetMean(space, epsilon=1.0, ball=ball, random_state=0).fit(X)
    >>> "chosen privately" in model.privacy_report_
    True
    """
    space = check_space(space)
    epsilon = check_epsilon(epsilon)
    level = _check_share(quantile, "quantile")
    share = _check_share(center_share, "center_share", allow_zero=True)
    check_accountant(accountant)
    if is_dask(X):
        raise InvalidDataError("private_ball needs the records in memory: pass a numpy array (X.compute()).")
    rng = as_generator(random_state)
    mean_model = PrivateFrechetMean(  # with share 0 it only checks the public inputs (never fitted)
        space,
        epsilon=share * epsilon if share > 0.0 else epsilon,
        center=center,
        radius=radius,
        on_invalid=on_invalid,
        project_to_ball=True,
        random_state=rng,
    )
    mean_plan = mean_model.plan(X)  # checks the coarse ball, the shape of X and on_invalid (public)
    coarse_center, coarse_radius = mean_plan.facts["center"], mean_plan.facts["radius"]
    radius_epsilon = epsilon - share * epsilon
    strength = radius_epsilon * mean_plan.n_samples * min(level, 1.0 - level) / 2.0
    if strength < MIN_STRENGTH:  # public (ε, n, levels): refused before anything is charged or read
        raise InvalidParameterError(
            f"private_ball at this budget would give a radius that is mostly noise: (1 − center_share)·epsilon·n·"
            f"min(quantile, 1 − quantile)/2 = {strength:.3g} < {MIN_STRENGTH:g}, so the quantile's law is nearly flat "
            "over the log-distances and the radius can land far below the data (a ball holding no record) or at "
            "the coarse radius. Raise epsilon, use a quantile nearer 0.5, or keep the coarse ball."
        )
    timing = check_timing_safe(timing_safe)
    if share > 0.0:
        plan = ReleasePlan(
            estimator="private_ball",
            n_samples=mean_plan.n_samples,
            epsilon=epsilon,
            delta=0.0,
            sensitivity=mean_plan.sensitivity,
            scale=mean_plan.scale,
            exact=mean_plan.exact,
            sampler=f"{mean_plan.sampler}; then the exact exponential-mechanism quantile",
            report=None,
            notices=mean_plan.notices,
        )
    else:  # radius only: one exponential-mechanism release (rank utility, sensitivity 1)
        plan = ReleasePlan(
            estimator="private_ball",
            n_samples=mean_plan.n_samples,
            epsilon=epsilon,
            delta=0.0,
            sensitivity=1.0,
            scale=2.0 / epsilon,
            exact=True,
            sampler="the exact exponential-mechanism quantile (the public centre kept)",
            report=None,
        )
    plan = timing_safe_plan(plan, timing)
    data = space.unchecked.dataset_array(X, "X")

    def private_part(data):
        if share > 0.0:
            mean_model.fit(data)
            released = mean_model.mean_
            upper = coarse_radius + float(space.dist(coarse_center, released))
        else:  # the public centre: the distances lie in [0, coarse radius]
            released, upper = coarse_center, coarse_radius
        flat = space.is_flat
        records, (n_invalid, n_clipped) = prepared_records(space, coarse_center, coarse_radius, data, coordinates=flat)
        if n_invalid and on_invalid == "raise" and share == 0.0:  # as the centre's fit would (after the charge)
            raise NotOnManifoldError(invalid_message(space))
        if flat:
            origin = mean_model.mean_coordinates_ if share > 0.0 else space.to_coordinates(coarse_center)
            distances = np.linalg.norm(records - origin, axis=-1)
        else:
            distances = space.unchecked.distances_from(released)(records)
        distances = np.clip(np.nan_to_num(np.asarray(distances, dtype=float), nan=upper), 0.0, upper)
        floor = upper * LOG_FLOOR
        drawn = math.exp(
            private_quantile(
                np.log(np.maximum(distances, floor)),
                epsilon=radius_epsilon,
                quantile=level,
                lower=math.log(floor),
                upper=math.log(upper),
                random_state=rng,
            )
        )
        new_radius = min(max(drawn, MIN_RADIUS), radius_limit(space))
        inside = float(np.mean(distances <= new_radius)) if new_radius < coarse_radius else 1.0
        return released, upper, drawn, new_radius, BallDiagnostics(inside, int(n_clipped), int(n_invalid))

    deadline = timing_deadline(
        timing, private_part, lambda: ball_stand_ins(space, coarse_center, coarse_radius, mean_plan.n_samples)
    )
    (released, upper, drawn, new_radius, diagnostics), withheld, overran = execute(
        plan, accountant, lambda: private_part(data), deadline=deadline
    )
    fell_back = new_radius >= coarse_radius  # a function of the releases: public
    final_center, final_radius = (coarse_center, coarse_radius) if fell_back else (released, new_radius)
    diagnostics = BallDiagnostics(
        diagnostics.fraction_inside,
        diagnostics.n_clipped_coarse,
        diagnostics.n_invalid,
        tuple(withheld) + (tuple(mean_model.curator_diagnostics_.warnings) if share > 0.0 else ()),
        timing_overran=overran,
    )
    report = _report(
        space,
        mean_model if share > 0.0 else None,
        quantile_guarantee(
            epsilon=radius_epsilon,
            quantile=level,
            lower=math.log(upper * LOG_FLOOR),
            upper=math.log(upper),
            random_state=random_state,
        ),
        epsilon=epsilon,
        coarse=(coarse_center, coarse_radius),
        result=(released, drawn, new_radius, fell_back),
    )
    report = with_deadline(with_timing_policy(report, timing), deadline, calibrated=timing is True)
    return PrivateBall(
        center=final_center,
        radius=final_radius,
        epsilon=epsilon,
        delta=plan.delta,
        space=space,
        privacy_report_=report,
        curator_diagnostics_=diagnostics,
    )


def _report(space, mean_model, radius_guarantee, *, epsilon, coarse, result) -> PrivacyReport:
    """The publishable report of a private ball: the two releases (or the radius alone, with
    ``mean_model`` None) and the post-processing. Every number in it is a parameter or a function
    of the released centre and radius."""
    coarse_center, coarse_radius = coarse
    released, drawn, new_radius, fell_back = result
    limit = radius_limit(space)
    post = (
        f"radius = min(max(drawn {drawn!r}, {MIN_RADIUS!r}), {limit!r}) = {new_radius!r} "
        "(the space's allowed radii; post-processing)"
    )
    if fell_back:
        post += (
            f"; not smaller than the coarse radius {coarse_radius!r}, so the result is the coarse ball "
            "(post-processing: the coarse ball holds every clipped record)"
        )
    else:
        post += "; centre in to_dict()['center']"
    if mean_model is None:
        head = [
            f"ε-DP: epsilon = {epsilon!r}, delta = 0.0: one release on the records (the radius; the public centre "
            "is kept)",
            f"coarse ball : public, radius {coarse_radius!r} around the given centre (to_dict()['coarse_center'])",
            "step 1      : none: center_share = 0, the coarse centre is the ball's centre (public, no cost)",
        ]
        origin = "the coarse centre"
        upper = "U = coarse radius"
    else:
        head = [
            f"ε-DP: epsilon = {epsilon!r}, delta = 0.0: two releases on the same records, composed sequentially",
            f"coarse ball : public, radius {coarse_radius!r} around the given centre (to_dict()['coarse_center'])",
            f"step 1      : the centre, at epsilon = {mean_model.epsilon!r} (projected onto the coarse ball):",
            *(f"  {line}" for line in str(mean_model.privacy_report_).splitlines()),
        ]
        origin = "the released centre"
        upper = "U = coarse radius + distance of the released centre to the coarse centre"
    lines = [
        "geodp privacy report: private_ball (publishable: nothing in it is computed from the private data "
        "except the releases it describes)",
        *head,
        f"step 2      : the radius, at epsilon = {radius_guarantee.epsilon!r}: exp of the quantile of the "
        f"log-distances from {origin} to the records clipped into the coarse ball, floored at U·1e-6, with "
        f"{upper}:",
        *(f"  {line}" for line in radius_guarantee.render().splitlines()),
        f"result      : {post}",
    ]
    data = {
        "model": "private_ball",
        "epsilon": epsilon,
        "delta": 0.0,
        "space": repr(space),
        "coarse_center": np.asarray(coarse_center).tolist(),
        "coarse_radius": coarse_radius,
        "center_epsilon": 0.0 if mean_model is None else mean_model.epsilon,
        "radius_epsilon": radius_guarantee.epsilon,
        "center_release": None if mean_model is None else mean_model.privacy_report_.to_dict(),
        "radius_release": radius_guarantee.to_dict(),
        "released_center": np.asarray(released).tolist(),
        "drawn_radius": drawn,
        "fell_back_to_coarse_ball": fell_back,
        "center": np.asarray(coarse_center if fell_back else released).tolist(),
        "radius": coarse_radius if fell_back else new_radius,
        "radius_limit": limit,
    }
    return PrivacyReport("\n".join(lines), data)
