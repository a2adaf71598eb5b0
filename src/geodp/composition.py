"""The DpEvent of a release, and the ε at which several releases on the same data compose.

A release is described, for composition, by a ``dp_accounting`` ``DpEvent`` (Google's
dp-accounting): :func:`dp_event` maps the guarantee of a geodp release to it, and
:func:`composed_epsilon` composes a list of them by one of three rules (``"sequential"``,
``"rdp"``, ``"pld"``). :class:`~geodp.accountant.BudgetAccountant` is built on these two.

Soundness, in one place (docs/math.md, "Composition"). Every geodp release is either

* **μ-GDP** (``Guarantee.gdp_mu`` set; Dong, Roth & Su 2022): the pair of its output laws on any two
  neighbouring datasets is a post-processing of ``(N(0, 1), N(μ, 1))`` (Blackwell's theorem, their
  Thm 2.10), so its privacy profile, Rényi divergences and privacy loss distribution are bounded by
  that Gaussian's: the event is ``GaussianDpEvent(noise_multiplier=1/μ)``; or
* **ρ-zCDP** (``Guarantee.zcdp_rho`` set, no ``gdp_mu``; Bun & Steinke 2016): secure mode's exact
  discrete Gaussian on a grid. Its Rényi divergence of order α is ≤ αρ for every α > 1; it has no
  Gaussian dominating pair in general, so the event is dp-accounting's ``ZCDpEvent(ρ)``; or
* **a Poisson-subsampled Gaussian run** (``Guarantee.subsampled_gaussian = (q, σ, T)``: the
  subsampled private gradient descent of :mod:`geodp.optim`): each of its T steps is dominated,
  under replace-one, by dp-accounting's ``REPLACE_ONE`` pair of the Poisson-sampled Gaussian
  ``((1−q)N(0, σ²) + qN(−1, σ²), (1−q)N(0, σ²) + qN(1, σ²))`` (docs/math.md §13 proves it); the
  event is ``SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(σ)), T)``; or
* **(ε, δ)-DP** (pure when δ = 0): the pair is a post-processing of the randomised response pair
  of Kairouz, Oh & Viswanath (2015, Thm 2.1 and §3) —
  ``P = (δ, (1−δ)e^ε/(1+e^ε), (1−δ)/(1+e^ε), 0)``, ``Q`` the same reversed — so composing that pair
  is sound for every (ε, δ)-DP mechanism, whatever its law. dp-accounting 0.6 has no event for it;
  :class:`EpsilonDeltaDpEvent` is geodp's, and dp-accounting's own accountants refuse it (they
  never misread it).

Adaptive composition of mechanisms each dominated by a pair is dominated by the product of the
pairs (Zhu, Dong & Wang 2022, Thm 10; KOV Thm 3.3), so the rules below bound the ε of the whole
sequence at a target δ, under the adjacency of the releases (geodp's replace-one). A release made
of several adaptive ones (``PrivatePrincipalGeodesics``: a footpoint, then a covariance at it) is
such a sequence itself: its event is the ``ComposedDpEvent`` of its parts', and the rules compose
its parts as if each had been charged alone:

``"sequential"``
    ``(Σε, Σδ)`` (Dwork & Roth 2014, Thm 3.16), using each release's declared (ε, δ).
``"pld"``
    The privacy loss distribution of the product pair (Koskela et al. 2020; dp-accounting's
    ``privacy_loss_distribution``, pessimistic rounding, so an upper bound). The Gaussian events
    first merge into one exactly — ``⊗ (N(0,1), N(μ_i,1))`` is ``(N(0,1), N(‖μ‖₂,1))`` up to a
    rotation — and when nothing else was released ε(δ) is the Gaussian's exact one (Balle & Wang
    2018, ``dp_accounting.gaussian_mechanism.get_epsilon_gaussian``, the limit the PLD
    accountant approximates), padded up by a relative 1e-9. Each (ε, δ) event enters through
    ``from_privacy_parameters``, the PLD of the KOV pair above. zCDP events have no pair: they
    are accounted by their total ``ρ = Σρ_i`` and joined to the PLD part by basic composition,
    ``ε = min_t ε_Z(tδ) + ε_P((1−t)δ)`` over a small grid of splits t, with ``ε_Z`` the RDP
    accountant's conversion of ρ-zCDP and ``ε_P`` the PLD bound of the other events (proof in
    :func:`composed_epsilon`); the ``"rdp"`` rule's ε is also a bound, and the smaller is returned.
    A subsampled run enters as dp-accounting's ``REPLACE_ONE`` PLD of its Poisson-sampled Gaussian,
    self-composed T times (``from_gaussian_mechanism(σ, sampling_prob=q, neighboring_relation=
    REPLACE_ONE)``, what dp-accounting's ``PLDAccountant(REPLACE_ONE)`` composes for that event).
``"rdp"``
    Rényi DP (Mironov 2017) through ``dp_accounting.rdp.RdpAccountant``: a μ-GDP release is
    ``μ²/2``-zCDP (its Rényi divergences are the Gaussian's, by data processing), a ρ-zCDP
    release has the RDP curve ``α ↦ αρ`` (exactly what a Gaussian with ``μ² = 2ρ`` has, so the
    ρ's add to the Gaussians' ``μ²/2``), a pure ε-DP
    release has the Rényi divergences of the binary randomised response above (the accountant's
    ``RandomizedResponseDpEvent(2/(1+e^ε), 2)`` under ``REPLACE_ONE``). An (ε, δ) event with
    δ > 0 has no finite Rényi divergence; those events compose sequentially with the rest: if
    the RDP part is (ε_R, δ_R)-DP and they are (Σε_j, Σδ_j)-DP, the whole is
    ``(ε_R + Σε_j, δ_R + Σδ_j)``-DP — basic composition of the two product pairs (Dwork & Roth
    Thm 3.16 applied to the two factors), with ``δ_R = δ − Σδ_j``. dp-accounting's RDP accountant
    has no ``REPLACE_ONE`` analysis of the Poisson-sampled Gaussian; a subsampled run's T steps
    are bounded by 2T add-or-remove steps of ``PoissonSampledDpEvent(q, GaussianDpEvent(σ/2))``
    (docs/math.md §13: the replace-one pair is a post-processing of the product of that event's
    remove and add pairs), composed in ``RdpAccountant(ADD_OR_REMOVE_ONE)`` with the μ-GDP and
    zCDP events (their RDP curve does not depend on the relation); pure events then join by basic
    composition as the (ε, δ) ones do, at the best of a grid of δ splits.

Every rule returns ``inf`` when no bound at δ exists (a Gaussian at δ = 0, Σδ_j ≥ δ).

Examples
--------
>>> events = [dp_event({"epsilon": 1.0, "delta": 1e-7, "gdp_mu": 0.3})] * 100
>>> round(composed_epsilon(events, 1e-5, "pld"), 3)         # μ = 0.3·√100 = 3
16.675
>>> composed_epsilon([EpsilonDeltaDpEvent(0.5)] * 4, 0.0, "sequential")
2.0
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Mapping, Sequence

import attr
import dp_accounting
from dp_accounting import gaussian_mechanism
from dp_accounting.pld import common as pld_common
from dp_accounting.pld import privacy_loss_distribution as pld
from dp_accounting.rdp import rdp_privacy_accountant as rdp
from scipy.special import expit

from geodp.errors import InvalidParameterError, InvalidTypeError
from geodp.validation import check_delta, check_epsilon, check_positive

__all__ = [
    "COMPOSITIONS",
    "EpsilonDeltaDpEvent",
    "check_composition",
    "composed_epsilon",
    "dp_event",
    "guarantee_fields",
    "subsampled_gaussian_event",
]

COMPOSITIONS = ("sequential", "rdp", "pld")

#: Width of the PLD's privacy-loss grid (dp-accounting's default is 1e-4: ten times slower, and the
#: ε it gives differs by less than 1e-6 on the compositions of the tests; rounding is pessimistic).
PLD_DISCRETIZATION = 1e-3

#: The guarantee fields an event is built from.
_FIELDS = ("epsilon", "delta", "gdp_mu", "zcdp_rho", "subsampled_gaussian", "composed_of")

#: Shares t of δ given to the zCDP part under "pld" (basic composition with the PLD part).
_ZCDP_SHARES = (0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98)

#: Relative pad on the root of the Gaussian's δ(ε) = δ (found to 1e-12 absolute).
_ROOT_PAD = 1e-9


@attr.s(frozen=True, slots=True, auto_attribs=True)
class EpsilonDeltaDpEvent(dp_accounting.DpEvent):
    """A release that is (ε, δ)-DP, and nothing more is known of it (pure ε-DP when δ = 0).

    dp-accounting 0.6 has no such event: its accountants refuse this one (``supports`` is False),
    so a pipeline of theirs never misreads it. geodp's accountants compose it as the randomised
    response pair of Kairouz, Oh & Viswanath (2015), which every (ε, δ)-DP mechanism is a
    post-processing of (module docstring). For dp-accounting's own accountants, a pure event
    converts with :meth:`randomized_response`.

    Attributes
    ----------
    epsilon : float
        > 0.
    delta : float, default 0.0
        In [0, 1).

    Examples
    --------
    >>> EpsilonDeltaDpEvent(1.0)
    EpsilonDeltaDpEvent(epsilon=1.0, delta=0.0)
    """

    epsilon: float
    delta: float = 0.0

    def __attrs_post_init__(self):
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_delta(self.delta, allow_zero=True))

    def randomized_response(self) -> dp_accounting.RandomizedResponseDpEvent:
        """dp-accounting's event with the same privacy curve, for a pure ε-DP event: binary
        randomised response with noise parameter ``2/(1 + e^ε)`` (it reports the truth with
        probability ``e^ε/(1 + e^ε)``). Compose it in dp-accounting's accountants built with
        ``neighboring_relation=NeighboringRelation.REPLACE_ONE`` (their ``REPLACE_SPECIAL``
        reading of it would understate the loss; ``ADD_OR_REMOVE_ONE`` refuses it).

        Raises
        ------
        InvalidParameterError
            δ > 0: no dp-accounting event has the curve of an (ε, δ) guarantee.

        Examples
        --------
        >>> import math
        >>> event = EpsilonDeltaDpEvent(math.log(3.0)).randomized_response()
        >>> round(event.noise_parameter, 12), event.num_buckets
        (0.5, 2)
        """
        if self.delta > 0:
            raise InvalidParameterError(
                f"only a pure event (delta = 0) converts to randomised response, got delta={self.delta!r}."
            )
        return dp_accounting.RandomizedResponseDpEvent(noise_parameter=2.0 * float(expit(-self.epsilon)), num_buckets=2)


def guarantee_fields(guarantee) -> dict:
    """``{"epsilon", "delta", "gdp_mu", "zcdp_rho", "subsampled_gaussian", "composed_of"}`` of a
    guarantee-like object (None where absent): read through ``to_dict()`` if it has one, else as a
    mapping or through attributes.

    Examples
    --------
    >>> guarantee_fields({"epsilon": 1.0})["epsilon"], guarantee_fields({"epsilon": 1.0})["composed_of"]
    (1.0, None)
    """
    if not isinstance(guarantee, Mapping) and callable(getattr(guarantee, "to_dict", None)):
        guarantee = guarantee.to_dict()
    if isinstance(guarantee, Mapping):
        return {name: guarantee.get(name) for name in _FIELDS}
    return {name: getattr(guarantee, name, None) for name in _FIELDS}


def dp_event(guarantee, *, neighboring="add-or-remove") -> dp_accounting.DpEvent:
    """The ``dp_accounting`` ``DpEvent`` of one release, from its guarantee.

    ``composed_of`` set (a sequence of the guarantees of several releases on the same data, made
    one after the other, as ``PrivatePrincipalGeodesics``' footpoint and covariance) →
    ``ComposedDpEvent`` of their events, so that the accountants compose each part by its own
    curve (a μ-GDP part stays Gaussian under ``"pld"``). Otherwise ``subsampled_gaussian = (q, σ, T)``
    set → with ``neighboring="add-or-remove"`` (the default:
    what dp-accounting's accountants assume unless told otherwise)
    ``SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(σ/2)), 2T)``, the 2T
    add-or-remove steps that dominate the T replace-one steps (docs/math.md §13, "RDP"; sound for
    any accountant built on dp-accounting's default relation, looser than the tight form); with
    ``neighboring="replace-one"`` the tight ``SelfComposedDpEvent(PoissonSampledDpEvent(q,
    GaussianDpEvent(σ)), T)``, only for accountants built with ``REPLACE_ONE`` (geodp's own
    :class:`~geodp.accountant.BudgetAccountant` composes that one). Otherwise the event is the
    same for both relations: ``gdp_mu`` set → ``GaussianDpEvent(noise_multiplier=1/μ)``; else ``zcdp_rho`` set →
    ``ZCDpEvent(ρ)`` (secure mode's discrete Gaussian: never a Gaussian event, whose PLD would
    claim more than zCDP gives); otherwise ``EpsilonDeltaDpEvent(ε, δ)`` (pure when δ = 0). The
    Euclidean Laplace is not mapped to dp-accounting's ``LaplaceDpEvent``: that is the 1-D
    Laplace's curve, and geodp's Laplace is the K-norm law in d dimensions (and on curved spaces
    something else again); the randomised response bound is sound for all of them.

    Parameters
    ----------
    guarantee : Guarantee, dict, PrivacyReport or ReleasePlan
        Anything with ``epsilon``, ``delta`` and optionally ``gdp_mu`` (attributes or keys; an
        object with ``to_dict()`` is read through it).

    Returns
    -------
    dp_accounting.DpEvent

    Raises
    ------
    InvalidParameterError, InvalidTypeError
        ε, δ or μ missing or invalid.

    Examples
    --------
    >>> dp_event({"epsilon": 1.0, "delta": 0.0})
    EpsilonDeltaDpEvent(epsilon=1.0, delta=0.0)
    >>> dp_event({"epsilon": 1.5, "delta": 1e-6, "gdp_mu": 0.5})
    GaussianDpEvent(noise_multiplier=2.0)
    >>> dp_event({"epsilon": 1.0, "delta": 1e-8, "zcdp_rho": 0.02})
    ZCDpEvent(rho=0.02, xi=0.0)
    >>> subsampled = {"epsilon": 1.0, "delta": 1e-5, "subsampled_gaussian": (0.01, 1.1, 100)}
    >>> dp_event(subsampled).count, dp_event(subsampled, neighboring="replace-one").count
    (200, 100)
    >>> dp_event({"composed_of": [{"epsilon": 0.5}, {"epsilon": 1.0, "delta": 1e-6, "gdp_mu": 0.5}]}).events
    [EpsilonDeltaDpEvent(epsilon=0.5, delta=0.0), GaussianDpEvent(noise_multiplier=2.0)]
    """
    if neighboring not in ("add-or-remove", "replace-one"):
        raise InvalidParameterError(f"neighboring must be 'add-or-remove' or 'replace-one', got {neighboring!r}.")
    fields = guarantee_fields(guarantee)
    if fields["composed_of"] is not None:
        return dp_accounting.ComposedDpEvent(
            [dp_event(part, neighboring=neighboring) for part in fields["composed_of"]]
        )
    if fields["subsampled_gaussian"] is not None:
        rate, sigma, steps = fields["subsampled_gaussian"]
        if neighboring == "replace-one":
            return subsampled_gaussian_event(rate, sigma, steps)
        return subsampled_gaussian_event(rate, 0.5 * float(sigma), 2 * int(steps))
    if fields["gdp_mu"] is not None:
        return dp_accounting.GaussianDpEvent(noise_multiplier=1.0 / check_positive(fields["gdp_mu"], "gdp_mu"))
    if fields["zcdp_rho"] is not None:
        return dp_accounting.ZCDpEvent(rho=check_positive(fields["zcdp_rho"], "zcdp_rho"))
    epsilon, delta = fields["epsilon"], fields["delta"]
    if epsilon is None:
        raise InvalidTypeError(
            f"a guarantee needs epsilon and delta (and gdp_mu for a μ-GDP release), got {type(guarantee).__name__}."
        )
    return EpsilonDeltaDpEvent(epsilon, 0.0 if delta is None else delta)


def subsampled_gaussian_event(sampling_rate, noise_multiplier, iterations) -> dp_accounting.DpEvent:
    """``SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(σ)), T)``: T steps of the
    Poisson-sampled Gaussian with per-record bound 1 and noise σ, under replace-one (module docstring).

    Examples
    --------
    >>> subsampled_gaussian_event(0.1, 2.0, 3).event.sampling_probability
    0.1
    """
    rate = check_positive(sampling_rate, "sampling_rate")
    if rate > 1.0:
        raise InvalidParameterError(f"sampling_rate must be in (0, 1], got {sampling_rate!r}.")
    count = int(iterations)
    if count != iterations or count < 1:
        raise InvalidParameterError(f"iterations must be a positive integer, got {iterations!r}.")
    gaussian = dp_accounting.GaussianDpEvent(noise_multiplier=check_positive(noise_multiplier, "noise_multiplier"))
    return dp_accounting.SelfComposedDpEvent(dp_accounting.PoissonSampledDpEvent(rate, gaussian), count)


def _subsampled(event):
    """``((q, σ), T)`` when ``event`` is a Poisson-sampled Gaussian (possibly self-composed), else None."""
    count = 1
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        event, count = event.event, event.count
    if isinstance(event, dp_accounting.PoissonSampledDpEvent) and isinstance(
        event.event, dp_accounting.GaussianDpEvent
    ):
        key = (check_positive(event.sampling_probability, "sampling_probability"), event.event.noise_multiplier)
        return (key[0], check_positive(key[1], "noise_multiplier")), int(count)
    return None


def check_composition(composition) -> str:
    """Validate a composition rule's name.

    Examples
    --------
    >>> check_composition("pld")
    'pld'
    """
    if composition not in COMPOSITIONS:
        raise InvalidParameterError(f"composition must be one of {COMPOSITIONS}, got {composition!r}.")
    return composition


def _leaves(events: Sequence):
    """The events with every ``ComposedDpEvent`` replaced by its parts (recursively): composing a
    composition is composing its parts."""
    for event in events:
        if isinstance(event, dp_accounting.ComposedDpEvent):
            yield from _leaves(event.events)
        else:
            yield event


def _parts(events: Sequence) -> tuple[float, float, tuple, tuple]:
    """``(Σμ², Σρ, ((ε, δ, count), …), ((q, σ, T), …))``: the Gaussian and the zCDP events merged,
    the others counted (sorted, so the result does not depend on their order)."""
    mu_squared, rhos, others, sampled = [], [], Counter(), Counter()
    for event in _leaves(events):
        subsampled = _subsampled(event)
        if subsampled is not None:
            sampled[subsampled[0]] += subsampled[1]
        elif isinstance(event, dp_accounting.GaussianDpEvent):
            mu_squared.append(1.0 / check_positive(event.noise_multiplier, "noise_multiplier") ** 2)
        elif isinstance(event, dp_accounting.ZCDpEvent):
            rhos.append(check_positive(event.rho, "rho"))
        elif isinstance(event, EpsilonDeltaDpEvent):
            others[(event.epsilon, event.delta)] += 1
        else:
            raise InvalidTypeError(
                f"geodp composes GaussianDpEvent, ZCDpEvent, EpsilonDeltaDpEvent and Poisson-sampled Gaussians (from "
                f"geodp.composition.dp_event), got {type(event).__name__}."
            )
    return (
        math.fsum(mu_squared),
        math.fsum(rhos),
        tuple(sorted((e, d, k) for (e, d), k in others.items())),
        tuple(sorted((q, m, k) for (q, m), k in sampled.items())),
    )


def composed_epsilon(events: Sequence, delta: float, composition: str = "pld") -> float:
    """ε at ``delta`` of the composition of ``events`` by the rule ``composition``.

    Parameters
    ----------
    events : sequence of GaussianDpEvent, ZCDpEvent or EpsilonDeltaDpEvent
        One per release (:func:`dp_event`).
    delta : float
        Target δ, in [0, 1).
    composition : {"sequential", "rdp", "pld"}
        The rule (module docstring). ``"sequential"`` needs every event to be an
        :class:`EpsilonDeltaDpEvent` (a Gaussian's or a zCDP curve has no single (ε, δ) to add).

    Returns
    -------
    float
        An upper bound on the ε of the composition at ``delta`` (0.0 for no event; ``inf`` when
        none exists at that δ).

    Notes
    -----
    Soundness of the ``"pld"`` rule with zCDP events. Fix neighbours ``x, x'``. Each non-zCDP
    release is dominated by its pair ``(P_i, Q_i)`` (module docstring): for every prefix of the
    transcript a randomised map ``T`` carries ``P_i`` to its output law on ``x`` and ``Q_i`` to
    that on ``x'``. So the whole transcript is a post-processing of ``Z`` drawn once from
    ``⊗P_i`` (``⊗Q_i`` on ``x'``) followed by the zCDP releases run adaptively on ``Z`` and the
    earlier outputs. ``Z`` is ``(ε_P, δ_P)``-DP (the PLD bound of the product pair); the zCDP
    releases, adaptively composed, are ``Σρ_i``-zCDP given ``Z`` (Bun & Steinke 2016, Lemma 2.3),
    hence ``(ε_Z, δ_Z)``-DP for every ``δ_Z`` by the RDP conversion; adaptive basic composition
    of the two (Dwork & Roth 2014, Thm 3.16) and post-processing give
    ``(ε_Z + ε_P, δ_Z + δ_P)``-DP. Every split ``δ_Z = tδ``, ``δ_P = (1−t)δ`` is valid, so the
    minimum over the grid of ``t`` is. The ``"rdp"`` rule is also valid (a ρ-zCDP release's
    curve is ``αρ``), so the smaller of the two is returned.

    Examples
    --------
    >>> pure = [EpsilonDeltaDpEvent(0.1)] * 100
    >>> [round(composed_epsilon(pure, 1e-6, rule), 2) for rule in ("sequential", "rdp", "pld")]
    [10.0, 5.07, 4.77]
    """
    check_composition(composition)
    delta = check_delta(delta, allow_zero=True)
    mu_squared, rho, others, sampled = _parts(events)
    return _epsilon(composition, delta, mu_squared, rho, others, sampled)


@functools.lru_cache(maxsize=256)
def _epsilon(
    composition: str, delta: float, mu_squared: float, rho: float, others: tuple, sampled: tuple = ()
) -> float:
    if composition == "sequential":
        if mu_squared > 0 or rho > 0 or sampled:
            raise InvalidParameterError(
                "sequential composition adds (epsilon, delta), and a subsampled Gaussian, GaussianDpEvent or "
                "ZCDpEvent has a curve, not one pair: pass the release's guarantee (its declared epsilon and "
                "delta), or compose with 'pld' or 'rdp'."
            )
        return _sequential(others, delta)
    if composition == "rdp":
        return _rdp(delta, mu_squared + 2.0 * rho, others, sampled)
    if rho == 0:
        return _pld(delta, mu_squared, others, sampled)
    return min(
        _rdp(delta, mu_squared + 2.0 * rho, others, sampled), _zcdp_then_pld(delta, mu_squared, rho, others, sampled)
    )


def _sequential(others: tuple, delta: float) -> float:
    spent = math.fsum(d * k for _, d, k in others)
    return math.fsum(e * k for e, _, k in others) if spent <= delta else math.inf


def _gaussian(mu_squared: float, delta: float) -> float:
    if delta == 0.0:
        return math.inf
    epsilon = float(gaussian_mechanism.get_epsilon_gaussian(1.0 / math.sqrt(mu_squared), delta))
    return epsilon * (1.0 + _ROOT_PAD) + _ROOT_PAD


def _pld(delta: float, mu_squared: float, others: tuple, sampled: tuple = ()) -> float:
    if not others and not sampled:
        return 0.0 if mu_squared == 0 else _gaussian(mu_squared, delta)
    return float(_pld_of(mu_squared, others, sampled).get_epsilon_for_delta(delta))


@functools.lru_cache(maxsize=64)
def _pld_of(mu_squared: float, others: tuple, sampled: tuple = ()):
    """The PLD of the Gaussian events (merged), the (ε, δ) events and the subsampled runs (cached:
    the zCDP split asks it at several δ)."""
    total = pld.identity(value_discretization_interval=PLD_DISCRETIZATION)
    if mu_squared > 0:
        total = total.compose(
            pld.from_gaussian_mechanism(
                standard_deviation=1.0 / math.sqrt(mu_squared), value_discretization_interval=PLD_DISCRETIZATION
            )
        )
    for epsilon, event_delta, count in others:
        part = pld.from_privacy_parameters(
            pld_common.DifferentialPrivacyParameters(epsilon, event_delta),
            value_discretization_interval=PLD_DISCRETIZATION,
        )
        total = total.compose(part.self_compose(count) if count > 1 else part)
    for rate, multiplier, count in sampled:
        part = pld.from_gaussian_mechanism(
            standard_deviation=multiplier,
            sampling_prob=rate,
            neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE,
            value_discretization_interval=PLD_DISCRETIZATION,
        )
        total = total.compose(part.self_compose(count) if count > 1 else part)
    return total


def _zcdp_epsilon(rho: float, delta: float) -> float:
    """ε at δ of ρ-zCDP: dp-accounting's RDP-to-(ε, δ) conversion of the curve α ↦ αρ."""
    accountant = rdp.RdpAccountant(neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    accountant.compose(dp_accounting.ZCDpEvent(rho=rho))
    return float(accountant.get_epsilon(delta))


def _zcdp_then_pld(delta: float, mu_squared: float, rho: float, others: tuple, sampled: tuple = ()) -> float:
    """``min_t ε_Z(tδ) + ε_P((1−t)δ)``: the zCDP events by their total ρ, the rest by PLD, joined
    by basic composition (:func:`composed_epsilon`, Notes)."""
    if delta == 0.0:
        return math.inf
    if mu_squared == 0 and not others and not sampled:
        return _zcdp_epsilon(rho, delta)
    return min(
        _zcdp_epsilon(rho, t * delta) + _pld((1.0 - t) * delta, mu_squared, others, sampled) for t in _ZCDP_SHARES
    )


def _rdp(delta: float, mu_squared: float, others: tuple, sampled: tuple = ()) -> float:
    approximate = tuple(o for o in others if o[1] > 0)
    pure = tuple(o for o in others if o[1] == 0)
    rest = delta - math.fsum(d * k for _, d, k in approximate)
    added = math.fsum(e * k for e, _, k in approximate)
    if mu_squared == 0 and not pure and not sampled:
        return added if rest >= 0 else math.inf
    if rest <= 0:
        return math.inf
    if not sampled:
        return _rdp_epsilon(rest, mu_squared, pure, ()) + added
    if not pure:
        return _rdp_epsilon(rest, mu_squared, (), sampled) + added
    # Pure events need REPLACE_ONE, the subsampled bound ADD_OR_REMOVE_ONE: basic composition of the two.
    return added + min(
        _rdp_epsilon(t * rest, mu_squared, (), sampled) + _rdp_epsilon((1.0 - t) * rest, 0.0, pure, ())
        for t in _ZCDP_SHARES
    )


def _rdp_epsilon(delta: float, mu_squared: float, pure: tuple, sampled: tuple) -> float:
    """ε at δ from dp-accounting's RDP accountant: the Gaussian events as zCDP, the pure events as
    randomised response (``REPLACE_ONE``) or the subsampled runs as 2T add-or-remove steps of
    ``PoissonSampledDpEvent(q, GaussianDpEvent(σ/2))`` (``ADD_OR_REMOVE_ONE``); never both of the
    last two (module docstring)."""
    relation = dp_accounting.NeighboringRelation
    accountant = rdp.RdpAccountant(neighboring_relation=relation.ADD_OR_REMOVE_ONE if sampled else relation.REPLACE_ONE)
    if mu_squared > 0:
        accountant.compose(dp_accounting.ZCDpEvent(rho=mu_squared / 2.0))
    for epsilon, _, count in pure:
        accountant.compose(EpsilonDeltaDpEvent(epsilon).randomized_response(), count)
    for rate, multiplier, count in sampled:
        step = dp_accounting.PoissonSampledDpEvent(rate, dp_accounting.GaussianDpEvent(multiplier / 2.0))
        accountant.compose(step, 2 * count)
    return float(accountant.get_epsilon(delta))
