"""What a fitted model tells you: the publishable privacy report, and curator-only diagnostics.

The two are kept in different types so that the difference is impossible to miss: a
:class:`PrivacyReport` holds only public facts (the parameters you chose, n, the public domain,
the bound, the noise scale, the sampler) and may be published beside the release; a
:class:`CuratorDiagnostics` holds facts computed from the private data (how many records were
clipped, the solver's iterations) and must never be published: each of them is itself a query
on the data, released without noise.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from geodp.composition import dp_event
from geodp.release import TIMING_SAFE_DELTA, TIMING_SAFE_POLICY

__all__ = [
    "BallDiagnostics",
    "PrivacyReport",
    "CuratorDiagnostics",
    "RegressionDiagnostics",
    "PerClassDiagnostics",
    "PrincipalGeodesicsDiagnostics",
]


class PrivacyReport(str):
    """The publishable guarantee: a ``str`` (the human-readable report) with the same facts as a
    dict in :meth:`to_dict`. It contains nothing computed from the private data.

    Examples
    --------
    >>> report = PrivacyReport("epsilon = 1.0", {"epsilon": 1.0})
    >>> "epsilon = 1.0" in report, report.to_dict()["epsilon"]
    (True, 1.0)
    >>> import pickle
    >>> pickle.loads(pickle.dumps(report)).to_dict() == report.to_dict()
    True
    """

    def __new__(cls, text: str, data: dict):
        obj = super().__new__(cls, text)
        obj._data = dict(data)
        return obj

    def __reduce__(self):
        return (type(self), (str(self), self._data))

    def to_dict(self) -> dict:
        """The report's facts as a plain dict (a copy)."""
        return dict(self._data)

    def dp_event(self, *, neighboring="add-or-remove"):
        """The release's ``dp_accounting`` event, from the report's ``epsilon``, ``delta`` and
        ``gdp_mu`` (:func:`geodp.composition.dp_event`): ``GaussianDpEvent(1/μ)`` for a μ-GDP
        release, else geodp's ``EpsilonDeltaDpEvent(ε, δ)`` (a subsampled descent: see ``neighboring``
        there). Compose it with other releases in a
        :class:`~geodp.accountant.BudgetAccountant` (``composition="pld"``) or in your own
        dp-accounting pipeline (docs/guide.md, "Composing releases").

        Examples
        --------
        >>> PrivacyReport("...", {"epsilon": 1.0, "delta": 1e-6, "gdp_mu": 0.25}).dp_event()
        GaussianDpEvent(noise_multiplier=4.0)
        >>> PrivacyReport("...", {"epsilon": 1.0, "delta": 0.0}).dp_event()
        EpsilonDeltaDpEvent(epsilon=1.0, delta=0.0)
        """
        return dp_event(self._data, neighboring=neighboring)


def with_assumption(report: PrivacyReport, line: str, **fields) -> PrivacyReport:
    """``report`` with ``line`` added to its assumptions (text and dict) and ``fields`` to its dict.

    Examples
    --------
    >>> report = with_assumption(PrivacyReport("header", {"epsilon": 1.0}), "a checked fact", note=1)
    >>> report.to_dict()["assumptions"], report.to_dict()["note"], str(report).splitlines()[-1]
    (['a checked fact'], 1, '  - a checked fact')
    """
    data = report.to_dict() | fields
    data["assumptions"] = list(data.get("assumptions", ())) + [line]
    return PrivacyReport(f"{report}\n  - {line}", data)


def with_timing_policy(report: PrivacyReport, timing_safe) -> PrivacyReport:
    """``report`` with the timing-safe policy added when ``timing_safe`` is not False: the line of
    :data:`geodp.release.TIMING_SAFE_POLICY` and the guarantee of fixed work, (ε, δ + δ_t) with
    δ_t = :data:`geodp.release.TIMING_SAFE_DELTA`; in the dict ``timing_safe: True``,
    ``timing_delta: δ_t``, ``delta`` raised by δ_t and no μ-GDP or zCDP curve nor parts
    (``composed_of``), as :func:`geodp.release.timing_safe_plan` charges.

    Examples
    --------
    >>> report = with_timing_policy(PrivacyReport("header", {"epsilon": 1.0, "delta": 0.0}), 0.5)
    >>> facts = report.to_dict()
    >>> facts["timing_safe"], facts["timing_delta"], facts["delta"], "padded to a public deadline" in report
    (True, 1e-10, 1e-10, True)
    >>> str(with_timing_policy(PrivacyReport("ε-DP: epsilon = 1.0, delta = 0.0; adjacency: replace-one", {}), True))
    ... # doctest: +ELLIPSIS
    '(ε, δ)-DP with fixed work: epsilon = None, delta = 1e-10 (δ_t included); adjacency: replace-one...'

    """
    if timing_safe is False:
        return report
    data = report.to_dict()
    delta = float(data.get("delta") or 0.0) + TIMING_SAFE_DELTA
    report = with_assumption(
        report,
        TIMING_SAFE_POLICY,
        timing_safe=True,
        timing_delta=TIMING_SAFE_DELTA,
        delta=delta,
        **{key: None for key in ("gdp_mu", "zcdp_rho", "composed_of") if key in data},
    )
    report = with_assumption(
        report, f"guarantee with fixed work: (epsilon, delta + delta_t) = ({data.get('epsilon')!r}, {delta!r})"
    )
    # The headline states what is charged: (ε, δ + δ_t)-DP, not the exact mechanism's ε-DP.
    headline = re.compile(r"^(?:ε-DP|\(ε, δ\)-DP): epsilon = [^,]+, delta = [^;]+;", re.MULTILINE)
    fixed = f"(ε, δ)-DP with fixed work: epsilon = {data.get('epsilon')!r}, delta = {delta!r} (δ_t included);"
    return PrivacyReport(headline.sub(lambda _: fixed, str(report), count=1), report.to_dict())


def with_deadline(report: PrivacyReport, deadline: float | None, *, calibrated: bool) -> PrivacyReport:
    """``report`` with the public deadline a timing-safe fit padded its private part to, in
    seconds (``timing_deadline`` in the dict, and a line of assumptions); unchanged when
    ``deadline`` is None. The deadline is public: given by the user, or (``calibrated``)
    measured before the records are read, on public stand-in records built from the public ball
    and bounds (:func:`geodp.release.timing_deadline`) — a function of public inputs and of the
    machine's speed, never of the records.

    Examples
    --------
    >>> report = with_deadline(PrivacyReport("header", {"epsilon": 1.0}), 0.25, calibrated=False)
    >>> report.to_dict()["timing_deadline"], str(report).splitlines()[-1]
    (0.25, '  - timing-safe deadline: the private part padded to 0.25 s (given)')
    >>> with_deadline(report, None, calibrated=False) is report
    True
    """
    if deadline is None:
        return report
    how = "calibrated on public stand-in records before the data were read" if calibrated else "given"
    return with_assumption(
        report,
        f"timing-safe deadline: the private part padded to {deadline!r} s ({how})",
        timing_deadline=float(deadline),
    )


_BANNER = "CURATOR-ONLY — DO NOT PUBLISH: computed from the private data without noise"


def _nested(diagnostics) -> list:
    """The lines of another release's diagnostics inside these: indented, without its banner."""
    return [f"  {line}" for line in str(diagnostics).splitlines()[1:]]


class _CuratorFacts:
    """What every curator-only record offers besides its text."""

    def to_dict(self) -> dict:
        """The diagnostics as a plain dict."""
        return asdict(self)

    def _timing_lines(self) -> list:
        """The line about the padding deadline (none outside timing-safe mode)."""
        overran = getattr(self, "timing_overran", None)
        if overran is None:
            return []
        return [
            "timing-safe: the private part OVERRAN its public deadline (its late return is observable)"
            if overran
            else "timing-safe: the private part finished within its public deadline"
        ]


@dataclass(frozen=True)
class CuratorDiagnostics(_CuratorFacts):
    """Facts about the private data that only the data curator may see.

    Every field is computed from the private records without noise: publishing any of them (or
    acting on them in public) spends privacy that no guarantee accounts for.

    Attributes
    ----------
    n_clipped : int
        Records that were outside the public ball and moved onto its boundary.
    n_invalid : int
        Records that were not points of the space and were replaced by the public centre
        (``on_invalid="center"``).
    mean_iterations : int or None
        Karcher-flow iterations (0 for the closed form of a flat space, whatever the mechanism;
        None for KNG on a curved space, which privatises the objective: its sampler computes the
        mean only as its proposal's anchor; None for ``mechanism="gradient"``, which computes no mean).
    mean_grad_norm : float or None
        Gradient norm of the Fréchet objective at the computed mean (None for KNG).
    mean_converged : bool or None
        Whether the mean met its tolerance within the public iteration budget (None for KNG).
    warnings : tuple of str
        Warnings raised while the private data were processed (they are withheld from the
        caller, since their text or presence may depend on the data).
    timing_overran : bool or None
        Timing-safe mode: whether the private part ran past its public deadline (an overrun is
        observable, and depends on the machine and possibly the data); None without the mode.

    Examples
    --------
    >>> d = CuratorDiagnostics(n_clipped=3, n_invalid=0, mean_iterations=7, mean_grad_norm=1e-12,
    ...                        mean_converged=True, warnings=())
    >>> str(d).splitlines()[0]
    'CURATOR-ONLY — DO NOT PUBLISH: computed from the private data without noise'
    >>> d.to_dict()["n_clipped"]
    3
    """

    n_clipped: int
    n_invalid: int
    mean_iterations: int | None
    mean_grad_norm: float | None
    mean_converged: bool | None
    warnings: tuple = ()
    timing_overran: bool | None = None

    def __str__(self) -> str:
        lines = [
            _BANNER,
            f"records clipped onto the ball's boundary : {self.n_clipped}",
            f"invalid records replaced by the centre   : {self.n_invalid}",
            "Fréchet mean: no estimate to release (KNG privatises the whole objective, its sampler using "
            "the mean only as the proposal's anchor; mechanism='gradient' descends privately from the centre)"
            if self.mean_iterations is None
            else "Fréchet mean: closed form (the mean of the chart coordinates of a flat space; no iterations)"
            if self.mean_iterations == 0 and self.mean_grad_norm == 0.0
            else f"Fréchet mean: {self.mean_iterations} iterations, gradient norm {self.mean_grad_norm:.3g}, "
            f"converged: {self.mean_converged}",
        ]
        lines += self._timing_lines()
        lines += [f"warning withheld from the caller: {w}" for w in self.warnings]
        return "\n".join(lines)


@dataclass(frozen=True)
class RegressionDiagnostics(_CuratorFacts):
    """Facts about the private data behind a private regression, for the data curator only.

    Like :class:`CuratorDiagnostics`, every field is computed from the private records without
    noise; none of them may be published.

    Attributes
    ----------
    n_clipped_x : int
        Records whose covariates were outside the public bounds and were clipped into them.
    n_clipped_y : int
        Records whose responses were outside the public domain (bounds or ball) and were clipped.
    solver_iterations : int or None
        Iterations of the non-private solver (None when none ran, e.g. a closed form).
    solver_grad_norm : float or None
        Gradient norm of the (clipped) objective at the solver's answer.
    solver_converged : bool or None
        Whether the solver met its tolerance within its public iteration budget.
    sampler_acceptance : float or None
        Acceptance rate of the sampler that drew the release (rejection or MH); it depends on
        the data.
    sampler_ess : float or None
        Effective sample size reported by an MH sampler (None for exact samplers).
    sampler_fell_back : bool or None
        Whether the capped exact race needed the fixed-length MH chain to finish (None when the
        sampler has no such fallback); it depends on the data.
    warnings : tuple of str
        Warnings raised while the private data were processed, withheld from the caller.
    timing_overran : bool or None
        Timing-safe mode: whether the private part ran past its public deadline (an overrun is
        observable, and depends on the machine and possibly the data); None without the mode.

    Examples
    --------
    >>> d = RegressionDiagnostics(n_clipped_x=2, n_clipped_y=0, solver_iterations=None,
    ...                           solver_grad_norm=None, solver_converged=None,
    ...                           sampler_acceptance=0.8, sampler_ess=None)
    >>> str(d).splitlines()[0]
    'CURATOR-ONLY — DO NOT PUBLISH: computed from the private data without noise'
    >>> d.to_dict()["n_clipped_x"]
    2
    """

    n_clipped_x: int
    n_clipped_y: int
    solver_iterations: int | None
    solver_grad_norm: float | None
    solver_converged: bool | None
    sampler_acceptance: float | None
    sampler_ess: float | None
    sampler_fell_back: bool | None = None
    warnings: tuple = ()
    timing_overran: bool | None = None

    def __str__(self) -> str:
        lines = [
            _BANNER,
            f"records with covariates clipped into the public bounds : {self.n_clipped_x}",
            f"records with responses clipped into the public domain  : {self.n_clipped_y}",
        ]
        if self.solver_iterations is not None:
            lines.append(
                f"solver: {self.solver_iterations} iterations, gradient norm {self.solver_grad_norm:.3g}, "
                f"converged: {self.solver_converged}"
            )
        if self.sampler_fell_back:
            lines.append(
                f"the exact race did not finish within its public cap (acceptance {self.sampler_acceptance:.3g}): "
                "the fixed-length MH chain drew the release"
            )
        elif self.sampler_acceptance is not None:
            lines.append(f"sampler acceptance rate: {self.sampler_acceptance:.3g}")
        if self.sampler_ess is not None:
            lines.append(f"MH effective sample size: {self.sampler_ess:.1f}")
        lines += self._timing_lines()
        lines += [f"warning withheld from the caller: {w}" for w in self.warnings]
        return "\n".join(lines)


@dataclass(frozen=True)
class PerClassDiagnostics(_CuratorFacts):
    """The curator diagnostics of a model that releases one statistic per class (``PrivateMDM``).

    Every entry of ``per_class`` is computed from the private records of its class without
    noise; none of them may be published. The class labels themselves are public (the model's
    privacy assumption).

    Attributes
    ----------
    classes : tuple
        The class labels, in the order of the model's ``classes_``.
    per_class : tuple of CuratorDiagnostics
        The diagnostics of each class's release, in the same order.

    Examples
    --------
    >>> one = CuratorDiagnostics(n_clipped=1, n_invalid=0, mean_iterations=5,
    ...                          mean_grad_norm=1e-12, mean_converged=True)
    >>> d = PerClassDiagnostics(classes=("left", "right"), per_class=(one, one))
    >>> str(d).splitlines()[:2]
    ['CURATOR-ONLY — DO NOT PUBLISH: computed from the private data without noise', "class 'left':"]
    >>> d.to_dict()["per_class"][1]["n_clipped"]
    1
    """

    classes: tuple
    per_class: tuple

    def __str__(self) -> str:
        lines = [_BANNER]
        for label, diagnostics in zip(self.classes, self.per_class):
            lines.append(f"class {label!r}:")
            lines += _nested(diagnostics)
        return "\n".join(lines)


@dataclass(frozen=True)
class PrincipalGeodesicsDiagnostics(_CuratorFacts):
    """Curator-only facts about the records behind a ``PrivatePrincipalGeodesics`` fit.

    Every field is computed from the private records without noise: never publish any of them.

    Attributes
    ----------
    n_clipped : int
        Records outside the public ball, clipped onto its boundary before the covariance.
    n_invalid : int
        Records that were not points of the space, replaced by the public centre
        (``on_invalid="center"``).
    mean : CuratorDiagnostics or None
        The footpoint release's diagnostics (None with a public footpoint, or when it fell back).
    mean_fell_back : bool
        Timing-safe mode: the footpoint's sampler accepted none of its fixed public number of
        proposals (probability at most δ_t), so the public centre was the footpoint.
    warnings : tuple of str
        Warnings raised while the private data were processed (withheld from the caller).
    timing_overran : bool or None
        Timing-safe mode: whether the private part ran past its public deadline (an overrun is
        observable, and depends on the machine and possibly the data); None without the mode.

    Examples
    --------
    >>> d = PrincipalGeodesicsDiagnostics(n_clipped=2, n_invalid=0, mean=None, mean_fell_back=False)
    >>> str(d).splitlines()[0]
    'CURATOR-ONLY — DO NOT PUBLISH: computed from the private data without noise'
    >>> d.to_dict()["n_clipped"]
    2
    """

    n_clipped: int
    n_invalid: int
    mean: CuratorDiagnostics | None
    mean_fell_back: bool
    warnings: tuple = ()
    timing_overran: bool | None = None

    def __str__(self) -> str:
        lines = [
            _BANNER,
            f"records clipped onto the ball's boundary : {self.n_clipped}",
            f"invalid records replaced by the centre   : {self.n_invalid}",
        ]
        if self.mean_fell_back:
            lines.append("footpoint: its sampler accepted none of its fixed proposals; the public centre was used")
        elif self.mean is not None:
            lines.append("footpoint release (PrivateFrechetMean):")
            lines += _nested(self.mean)
        lines += self._timing_lines()
        lines += [f"warning withheld from the caller: {w}" for w in self.warnings]
        return "\n".join(lines)


@dataclass(frozen=True)
class BallDiagnostics(_CuratorFacts):
    """Curator-only facts about the records behind a :class:`PrivateBall`.

    Every field is computed from the private records without noise: never publish any of them.

    Attributes
    ----------
    fraction_inside : float
        Fraction of the records (after clipping into the coarse ball) within the new ball.
    n_clipped_coarse : int
        Records outside the coarse public ball, clipped onto it.
    n_invalid : int
        Records that were not points of the space (replaced by the coarse centre).
    warnings : tuple of str
        Warnings raised while the private data were processed (withheld from the caller).
    timing_overran : bool or None
        Timing-safe mode: whether the private part ran past its public deadline (an overrun is
        observable, and depends on the machine and possibly the data); None without the mode.

    Examples
    --------
    >>> d = BallDiagnostics(fraction_inside=0.9, n_clipped_coarse=0, n_invalid=0)
    >>> str(d).splitlines()[1]
    'records inside the new ball           : 90.0%'
    """

    fraction_inside: float
    n_clipped_coarse: int
    n_invalid: int
    warnings: tuple = ()
    timing_overran: bool | None = None

    def __str__(self) -> str:
        lines = [
            _BANNER,
            f"records inside the new ball           : {100.0 * self.fraction_inside:.1f}%",
            f"records clipped onto the coarse ball  : {self.n_clipped_coarse}",
            f"invalid records replaced by the centre: {self.n_invalid}",
        ]
        lines += self._timing_lines()
        lines += [f"warning withheld from the caller: {w}" for w in self.warnings]
        return "\n".join(lines)


def regression_diagnostics(n_clipped_x: int, n_clipped_y: int, info: dict) -> dict:
    """The fields of :class:`RegressionDiagnostics` but ``warnings``, from the clipping counts and
    the solver's and sampler's ``info`` (keys ``solver_iterations``, ``solver_grad_norm``,
    ``solver_converged``, ``acceptance``, ``ess``, ``fell_back``; a missing one is None).

    Examples
    --------
    >>> regression_diagnostics(1, 0, {"acceptance": 0.5})["sampler_acceptance"]
    0.5
    """
    return dict(
        n_clipped_x=int(n_clipped_x),
        n_clipped_y=int(n_clipped_y),
        solver_iterations=info.get("solver_iterations"),
        solver_grad_norm=info.get("solver_grad_norm"),
        solver_converged=info.get("solver_converged"),
        sampler_acceptance=info.get("acceptance"),
        sampler_ess=info.get("ess"),
        sampler_fell_back=info.get("fell_back"),
    )
