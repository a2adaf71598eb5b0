"""Mechanism base class and the :class:`Guarantee` record every release carries."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field

from geodp.errors import InvalidParameterError, InvalidTypeError
from geodp.manifolds.base import Manifold
from geodp.validation import as_generator, check_delta, check_epsilon, check_positive

__all__ = ["Guarantee", "Mechanism", "check_space", "require_flat"]

ADJACENCY = "replace-one (n public)"


@dataclass(frozen=True)
class Guarantee:
    """What a mechanism guarantees and why (OpenDP's privacy map, as a record).

    Attributes
    ----------
    mechanism : str
    epsilon, delta : float
        The privacy parameters of one release; ``delta == 0.0`` means pure ε-DP.
    sensitivity : float
        Δ, in the metric named by ``metric``.
    metric : str
        The distance Δ is measured in.
    scale : float
        Noise scale σ.
    scale_rule : str
        How σ follows from (ε, δ, Δ), and why.
    space : str
    adjacency : str
    support : str
    sampler : str
    exact : bool
        False when the sampler is MCMC (then DP holds only approximately).
    assumptions : tuple of str
        The assumptions checked at run time.
    """

    mechanism: str
    epsilon: float
    delta: float
    sensitivity: float
    metric: str
    scale: float
    scale_rule: str
    space: str
    sampler: str
    exact: bool
    support: str = "the whole space"
    adjacency: str = ADJACENCY
    assumptions: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict:
        """Plain-dict view (JSON-friendly)."""
        d = asdict(self)
        d["assumptions"] = list(self.assumptions)
        return d

    def render(self, details=(), extra_assumptions=()) -> str:
        """Readable text; ``details`` lines follow the header, ``extra_assumptions`` the list."""
        kind = "ε-DP" if self.delta == 0.0 else "(ε, δ)-DP"
        lines = [f"{kind}: epsilon = {self.epsilon!r}, delta = {self.delta!r}; adjacency: {self.adjacency}"]
        lines += list(details)
        lines += [
            f"mechanism   : {self.mechanism} on {self.space}",
            f"sensitivity : {self.sensitivity!r} ({self.metric})",
            f"noise scale : {self.scale!r}  [{self.scale_rule}]",
            f"support     : {self.support}",
            f"sampler     : {self.sampler}",
            "assumptions checked:",
        ]
        lines += [f"  - {a}" for a in (*self.assumptions, *extra_assumptions)]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()


class Mechanism(ABC):
    """A randomised map with a privacy contract (diffprivlib's ``DPMechanism`` style).

    Parameters are keyword-only and validated on construction; the value is re-checked on every
    :meth:`randomise` call.
    """

    def __init__(self, *, epsilon, delta, sensitivity, delta_allows_zero: bool):
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta, allow_zero=delta_allows_zero)
        self.sensitivity = check_positive(sensitivity, "sensitivity")

    @property
    @abstractmethod
    def scale(self) -> float:
        """Noise scale σ."""

    @property
    @abstractmethod
    def guarantee(self) -> Guarantee:
        """The :class:`Guarantee` of one release."""

    @abstractmethod
    def distribution(self, value):
        """The output law of the mechanism for ``value`` (validated on the manifold)."""

    def randomise(self, value, rng=None, size=None):
        """Release a privatised copy of the point ``value``; ``size`` independent copies (for
        studies of the mechanism: each copy spends the budget again)."""
        return self.distribution(value).sample(size, rng=as_generator(rng))

    def randomise_coordinates(self, value, rng=None, size=None):
        """Like :meth:`randomise` on a flat space, but return the release in the isometric
        chart, free of the round-trip error of mapping to the manifold and back."""
        return self.distribution(value).sample_coordinates(size, rng=as_generator(rng))

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(epsilon={self.epsilon!r}, delta={self.delta!r}, "
            f"sensitivity={self.sensitivity!r})"
        )


def check_space(space) -> Manifold:
    """Refuse anything that is not a geodp :class:`~geodp.manifolds.Manifold`."""
    if not isinstance(space, Manifold):
        raise InvalidTypeError(f"space must be a geodp Manifold, got {type(space).__name__}.")
    return space



def require_flat(space: Manifold, what: str) -> None:
    """Refuse a curved space where a flat chart is needed."""
    if not space.is_flat:
        raise InvalidParameterError(
            f"{what} is only available on flat spaces (Euclidean, SPD log-Euclidean) so far; "
            f"got {space!r}."
            + (f" Use SPD({space.k}, metric='log-euclidean') (spec spd:{space.k}:log-euclidean)."
               if getattr(space, "metric", None) == "affine" else "")
        )

