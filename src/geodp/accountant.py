"""Sequential-composition budget accounting (ε's and δ's add)."""

from __future__ import annotations

import math

from geodp.errors import BudgetExceededError, InvalidTypeError
from geodp.validation import check_delta, check_epsilon

__all__ = ["BudgetAccountant", "check_accountant"]


class BudgetAccountant:
    """Track the privacy budget spent by successive releases on the same data.

    Basic sequential composition: releasing (ε₁, δ₁)- and (ε₂, δ₂)-DP outputs of the same data
    is (ε₁+ε₂, δ₁+δ₂)-DP. A spend that would exceed the total is refused *before* anything is
    released.

    Copying never duplicates a budget: ``copy.deepcopy`` (and so scikit-learn's ``clone``) returns
    the same accountant, so every copy of a model charges one ledger. A pickled accountant is a
    snapshot: after unpickling, it no longer tracks the original.

    Parameters
    ----------
    epsilon : float, default inf
        Total ε budget.
    delta : float, default 0.0
        Total δ budget, in [0, 1).

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
    """

    def __init__(self, epsilon: float = math.inf, delta: float = 0.0):
        self.epsilon = math.inf if epsilon == math.inf else check_epsilon(epsilon)
        self.delta = check_delta(delta, allow_zero=True)
        self.spent: list[tuple[float, float]] = []

    @property
    def total_spent(self) -> tuple[float, float]:
        """``(Σε, Σδ)`` over all spends so far."""
        return (math.fsum(e for e, _ in self.spent), math.fsum(d for _, d in self.spent))

    @property
    def remaining(self) -> tuple[float, float]:
        """Budget left, ``(ε, δ)``, rounded to 12 significant digits for display."""
        eps, delta = self.total_spent
        # A budget spent exactly can leave a rounding residue below zero (0.3 - 0.1 - 0.2): show 0.
        return (max(0.0, float(f"{self.epsilon - eps:.12g}")), max(0.0, float(f"{self.delta - delta:.12g}")))

    def check(self, epsilon: float, delta: float = 0.0) -> None:
        """Raise :class:`BudgetExceededError` if spending ``(epsilon, delta)`` would overspend."""
        epsilon = check_epsilon(epsilon)
        delta = check_delta(delta, allow_zero=True)
        eps_spent, delta_spent = self.total_spent
        slack = 1e-12
        if eps_spent + epsilon > self.epsilon * (1 + slack) or delta_spent + delta > self.delta + slack * max(
            self.delta, 1e-300
        ):
            r_eps, r_delta = self.remaining
            raise BudgetExceededError(
                f"spending epsilon={epsilon!r}, delta={delta!r} would exceed the budget "
                f"(epsilon={self.epsilon!r}, delta={self.delta!r}); remaining: epsilon={r_eps!r}, "
                f"delta={r_delta!r}."
            )

    def spend(self, epsilon: float, delta: float = 0.0) -> None:
        """Record a release of ``(epsilon, delta)`` after :meth:`check`-ing it."""
        self.check(epsilon, delta)
        self.spent.append((float(epsilon), float(delta)))

    def __deepcopy__(self, memo):
        # An accountant stands for one real budget: copies of a model (sklearn's clone, deepcopy,
        # meta-estimators such as GridSearchCV) must charge the same ledger, never a fresh copy.
        return self

    def __copy__(self):
        return self

    def __repr__(self) -> str:
        return f"BudgetAccountant(epsilon={self.epsilon!r}, delta={self.delta!r}, spent={self.total_spent!r})"


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
