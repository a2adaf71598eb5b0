"""Budget accounting: releases on the same data composed sequentially, by RDP or by PLD."""

from __future__ import annotations

import math
from numbers import Real
from typing import NamedTuple

import dp_accounting

from geodp.composition import EpsilonDeltaDpEvent, check_composition, composed_epsilon, dp_event, guarantee_fields
from geodp.errors import BudgetExceededError, InvalidParameterError, InvalidTypeError
from geodp.validation import check_delta, check_epsilon

__all__ = ["BudgetAccountant", "Charge", "check_accountant"]

_SLACK = 1e-12


class Charge(NamedTuple):
    """One release as an accountant counts it: its declared ``(epsilon, delta)`` (``(inf, 0.0)``
    for a bare ``GaussianDpEvent``, which declares a curve and no single pair) and its ``event``.

    Examples
    --------
    >>> Charge(1.0, 0.0, EpsilonDeltaDpEvent(1.0)).event.epsilon
    1.0
    """

    epsilon: float
    delta: float
    event: dp_accounting.DpEvent


class BudgetAccountant:
    """Track the privacy budget spent by successive releases on the same data.

    A spend that would take the composed ε (at the budget's δ) past the budget is refused
    *before* anything is released. Three composition rules (:mod:`geodp.composition`, where each
    is proved):

    * ``"sequential"`` (default): releasing (ε₁, δ₁)- and (ε₂, δ₂)-DP outputs of the same data is
      (ε₁+ε₂, δ₁+δ₂)-DP; :attr:`total_spent` is ``(Σε, Σδ)``.
    * ``"pld"``: the privacy loss distributions of the releases compose (dp-accounting; μ-GDP
      releases exactly); :attr:`total_spent` is ``(ε(δ), δ)`` at the budget's δ.
    * ``"rdp"``: Rényi DP, looser than PLD but a standard reference; same reading.

    With ``"pld"`` or ``"rdp"`` the ε reported is also never above the sequential sum (both are
    bounds on the same composition at δ, so the smaller holds). 100 Gaussian releases of
    μ = 0.3 cost ε ≈ 16.7 at δ = 1e-5 by PLD, where adding each release's ε at δ = 1e-7
    costs ε ≈ 144 (docs/guide.md, "Composing releases").

    Copying never duplicates a budget: ``copy.deepcopy`` (and so scikit-learn's ``clone``) returns
    the same accountant, so every copy of a model charges one ledger. A pickled accountant is a
    snapshot: after unpickling, it no longer tracks the original.

    Parameters
    ----------
    epsilon : float, default inf
        Total ε budget.
    delta : float, default 0.0
        Total δ budget, in [0, 1). With ``"pld"``/``"rdp"`` the composition is measured at it: a
        Gaussian release needs ``delta > 0``.
    composition : {"sequential", "rdp", "pld"}, default "sequential"

    Attributes
    ----------
    charges : list of Charge
        Each release's declared (ε, δ) and its DpEvent, in order.

    Examples
    --------
    >>> acc = BudgetAccountant(epsilon=1.0)
    >>> acc.spend(0.4)
    >>> acc.remaining
    (0.6, 0.0)
    >>> acc.spend(0.7)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    geodp.errors.BudgetExceededError: spending epsilon=0.7, delta=0.0 would exceed the budget (epsilon=1.0, ...

    Gaussian releases compose like √k under PLD (a :class:`~geodp.mechanisms.base.Guarantee`,
    a privacy report or a fitted model's plan is charged the same way as this dict):

    >>> pld = BudgetAccountant(epsilon=20.0, delta=1e-5, composition="pld")
    >>> for _ in range(100):
    ...     pld.spend({"epsilon": 1.44, "delta": 1e-7, "gdp_mu": 0.3})
    >>> round(pld.total_spent[0], 2), pld.total_spent[1]
    (16.68, 1e-05)
    """

    def __init__(self, epsilon: float = math.inf, delta: float = 0.0, composition: str = "sequential"):
        self.epsilon = math.inf if epsilon == math.inf else check_epsilon(epsilon)
        self.delta = check_delta(delta, allow_zero=True)
        self.composition = check_composition(composition)
        self.charges: list[Charge] = []

    @property
    def spent(self) -> list[tuple[float, float]]:
        """Each release's declared ``(ε, δ)``, in order."""
        return [(c.epsilon, c.delta) for c in self.charges]

    def _composed(self, charges) -> tuple[float, float]:
        if not charges:
            return (0.0, 0.0)
        eps = math.fsum(c.epsilon for c in charges)
        delta = math.fsum(c.delta for c in charges)
        if self.composition == "sequential":
            return (eps, delta)
        sequential = eps if delta <= self.delta else math.inf
        return (min(sequential, composed_epsilon([c.event for c in charges], self.delta, self.composition)), self.delta)

    @property
    def total_spent(self) -> tuple[float, float]:
        """``(Σε, Σδ)`` over all spends so far (sequential), or ``(ε, δ)`` of their composition
        at the budget's δ (``"pld"``, ``"rdp"``; ``(0.0, 0.0)`` before any spend)."""
        return self._composed(self.charges)

    @property
    def remaining(self) -> tuple[float, float]:
        """Budget left, ``(ε, δ)``, rounded to 12 significant digits for display.

        With ``"pld"``/``"rdp"`` the ε left is the slack at the budget's δ (all of which the
        composition uses): it is not what one more release may cost, since composition does not
        add; ask :meth:`check` about a release."""
        eps, delta = self.total_spent
        # A budget spent exactly can leave a rounding residue below zero (0.3 - 0.1 - 0.2): show 0.
        return (max(0.0, float(f"{self.epsilon - eps:.12g}")), max(0.0, float(f"{self.delta - delta:.12g}")))

    def charge_of(self, release, delta: float | None = None) -> Charge:
        """The :class:`Charge` of ``release``: a number ε (with ``delta``, default 0.0), a
        guarantee (a :class:`~geodp.mechanisms.base.Guarantee`, its dict, a privacy report or a
        release plan: anything :func:`~geodp.composition.dp_event` reads) or a DpEvent
        (``GaussianDpEvent``, ``ZCDpEvent``, :class:`~geodp.composition.EpsilonDeltaDpEvent`, or a
        ``ComposedDpEvent`` of these, declared as the sum of its parts' pairs).

        Examples
        --------
        >>> BudgetAccountant().charge_of(0.5, 1e-6)
        Charge(epsilon=0.5, delta=1e-06, event=EpsilonDeltaDpEvent(epsilon=0.5, delta=1e-06))
        """
        if isinstance(release, Real) and not isinstance(release, bool):
            event = EpsilonDeltaDpEvent(release, 0.0 if delta is None else delta)
            return Charge(event.epsilon, event.delta, event)
        if delta is not None:
            raise InvalidParameterError(
                "delta is given with a number epsilon only; a guarantee or event carries its own."
            )
        if isinstance(release, EpsilonDeltaDpEvent):
            return Charge(release.epsilon, release.delta, release)
        if isinstance(release, (dp_accounting.GaussianDpEvent, dp_accounting.ZCDpEvent)):
            if self.composition == "sequential":
                raise InvalidParameterError(
                    f"sequential composition adds (epsilon, delta), and a bare {type(release).__name__} has a curve, "
                    "not one pair: charge the release's guarantee, or use composition='pld' or 'rdp'."
                )
            return Charge(math.inf, 0.0, release)
        if isinstance(release, dp_accounting.ComposedDpEvent):  # declared: the sum of its parts' pairs
            parts = [self.charge_of(part) for part in release.events]
            return Charge(math.fsum(c.epsilon for c in parts), math.fsum(c.delta for c in parts), release)
        if isinstance(release, dp_accounting.DpEvent):
            raise InvalidTypeError(
                "geodp composes GaussianDpEvent, ZCDpEvent, EpsilonDeltaDpEvent and their ComposedDpEvent, got "
                f"{type(release).__name__}."
            )
        event = dp_event(release, neighboring="replace-one")  # geodp's relation; composed as such
        fields = guarantee_fields(release)
        return Charge(check_epsilon(fields["epsilon"]), check_delta(fields["delta"] or 0.0, allow_zero=True), event)

    def check(self, release, delta: float | None = None) -> None:
        """Raise :class:`BudgetExceededError` if spending ``release`` (as :meth:`charge_of` reads
        it) would overspend; nothing is recorded.

        Examples
        --------
        >>> budget = BudgetAccountant(epsilon=1.0, delta=1e-5, composition="pld")
        >>> budget.check({"epsilon": 9.0, "delta": 1e-6, "gdp_mu": 2.0})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        geodp.errors.BudgetExceededError: spending epsilon=9.0, delta=1e-06 would exceed the budget (epsilon=1.0, ...
        """
        self.check_charge(self.charge_of(release, delta))

    def check_charge(self, charge: Charge) -> None:
        """:meth:`check` for a :class:`Charge`."""
        eps, spent_delta = self._composed([*self.charges, charge])
        delta_over = self.composition == "sequential" and spent_delta > self.delta + _SLACK * max(self.delta, 1e-300)
        if eps > self.epsilon * (1 + _SLACK) or delta_over:
            r_eps, r_delta = self.remaining
            what = (
                f"epsilon={charge.epsilon!r}, delta={charge.delta!r}"
                if math.isfinite(charge.epsilon)
                else f"the event {charge.event!r}"
            )
            rule = "" if self.composition == "sequential" else f"; composition {self.composition!r}"
            hint = (
                " A release with delta > 0 (a Gaussian mechanism, or the delta_t = 1e-10 of a timing-safe release) "
                "needs a budget with delta > 0: BudgetAccountant(epsilon, delta=...), "
                'or a "delta" in the ledger file of the CLI.'
                if self.delta == 0.0 and charge.delta > 0.0
                else ""
            )
            raise BudgetExceededError(
                f"spending {what} would exceed the budget (epsilon={self.epsilon!r}, delta={self.delta!r}{rule}); "
                f"remaining: epsilon={r_eps!r}, delta={r_delta!r}.{hint}"
            )

    def spend(self, release, delta: float | None = None) -> None:
        """Record a release (as :meth:`charge_of` reads it) after :meth:`check`-ing it: refused,
        and nothing recorded, if it would overspend."""
        charge = self.charge_of(release, delta)
        self.check_charge(charge)
        self.charges.append(charge)

    def __deepcopy__(self, memo):
        # An accountant stands for one real budget: copies of a model (sklearn's clone, deepcopy,
        # meta-estimators such as GridSearchCV) must charge the same ledger, never a fresh copy.
        return self

    def __copy__(self):
        return self

    def __repr__(self) -> str:
        rule = "" if self.composition == "sequential" else f", composition={self.composition!r}"
        return f"BudgetAccountant(epsilon={self.epsilon!r}, delta={self.delta!r}{rule}, spent={self.total_spent!r})"


def check_accountant(accountant):
    """Refuse an accountant that is not geodp's :class:`BudgetAccountant` (diffprivlib's is a
    different class); None (no accounting) passes. Returns it.

    Examples
    --------
    >>> check_accountant(None) is None
    True
    """
    if accountant is not None and not isinstance(accountant, BudgetAccountant):
        kind = type(accountant)
        raise InvalidTypeError(
            f"accountant must be a geodp.accountant.BudgetAccountant, got {kind.__module__}.{kind.__qualname__}."
        )
    return accountant
