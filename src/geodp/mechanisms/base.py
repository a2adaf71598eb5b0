"""Mechanism base class and the :class:`Guarantee` record every release carries."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from geodp.distributions.base import refuse_non_finite
from geodp.errors import InvalidDataError, InvalidParameterError
from geodp.manifolds.base import Manifold
from geodp.secure import is_secure
from geodp.validation import as_generator, check_delta, check_epsilon, check_positive

__all__ = [
    "Guarantee",
    "Mechanism",
    "combine_sum_parts",
    "exact_weighted_sum_parts",
    "require_flat",
    "sampler_construction",
]

ADJACENCY = "replace-one (n public)"
FLOATING_POINT_SAMPLER = (
    "floating-point sampler on numpy's generator: not floating-point safe (its low-order bits can "
    "leak, Mironov 2012); random_state='secure' uses a secure generator and, on flat spaces, exact "
    "discrete noise on a grid (docs/secure.md)"
)


def sampler_construction(rng, why_not_safe: str) -> dict:
    """The ``construction``/``floating_point_safe`` fields of a :class:`Guarantee` whose sampler
    is floating-point, for the random state ``rng``; ``why_not_safe`` says why no
    floating-point-safe construction is used (public: depends on the space and law only).

    Examples
    --------
    >>> sampler_construction("secure", "curved space")["floating_point_safe"]
    False
    """
    if not is_secure(rng):
        return dict(construction=FLOATING_POINT_SAMPLER, floating_point_safe=False, grid=None)
    return dict(
        construction=(
            "secure mode: every draw from a cryptographically secure generator (ChaCha20 keyed with 256 OS "
            f"bits), but the sampler is floating-point, so not floating-point safe: {why_not_safe}"
        ),
        floating_point_safe=False,
        grid=None,
    )


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
    floating_point_safe : bool
        True only for the exact discrete constructions of secure mode on flat spaces
        (docs/secure.md); a floating-point sampler is not (Mironov 2012).
    construction : str
        Which construction ran: the random generator, and the grid and discrete noise or why
        there is none.
    grid : float or None
        The public grid 2^k the release lies on (secure mode on flat spaces), else None.
    gdp_mu : float or None
        Set when the release is μ-GDP (Dong, Roth & Su 2022): its whole privacy curve is that of
        the Gaussian mechanism with noise multiplier ``1/μ`` (Δ/σ for a Gaussian release of
        sensitivity Δ). Composition accountants use it; None for the other mechanisms.
    zcdp_rho : float or None
        Set when the release is ρ-zCDP (Bun & Steinke 2016) but not μ-GDP: secure mode's exact
        discrete Gaussian on the grid, ``ρ = Δ'²/(2σ_u²)`` (Canonne, Kamath & Steinke 2020,
        Thm 14). Composition accountants add the ρ's (:func:`geodp.composition.dp_event`).
    subsampled_gaussian : tuple (q, σ, T) or None
        Set for a run of T Poisson-subsampled Gaussian steps (sampling rate q, noise σ per unit of
        the per-record bound; :mod:`geodp.optim` with ``batch``): accountants compose it as
        dp-accounting's ``PoissonSampledDpEvent(q, GaussianDpEvent(σ))`` T times under replace-one
        (docs/math.md §13).
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
    floating_point_safe: bool = False
    construction: str = FLOATING_POINT_SAMPLER
    grid: float | None = None
    gdp_mu: float | None = None
    zcdp_rho: float | None = None
    subsampled_gaussian: tuple[float, float, int] | None = None

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
            f"sensitivity : {self.sensitivity:.6g} ({self.metric}; full precision in to_dict())",
            f"noise scale : {self.scale:.6g}  [{self.scale_rule}]",
            f"support     : {self.support}",
            f"sampler     : {self.sampler}",
            "exact       : "
            + (
                "yes (the release is drawn from the mechanism's law)"
                if self.exact
                else "no: MCMC draws (or may draw) the release, so the guarantee above holds only approximately"
            ),
            f"fp-safe     : {'yes' if self.floating_point_safe else 'no'}: {self.construction}",
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

    def noise_second_moment(self, dim: int) -> float | None:
        """``E‖Z‖²`` of the release's additive noise ``Z`` in ``R^dim``: in the isometric chart of
        a flat space, or in the tangent space at the public centre for the wrapped mechanisms;
        ``None`` where the release is no additive noise (a Riemannian law on a curved space).

        A function of the public parameters only (so is everything computed from it). It is the
        moment of the continuous law: secure mode's grid noise (docs/secure.md) has nearly the
        same. ``PrivateMDM`` subtracts it from squared distances to debias its predictions
        (docs/math.md, "Debiased MDM prediction").

        Examples
        --------
        >>> from geodp.manifolds import Sphere
        >>> from geodp.mechanisms import LaplaceMechanism
        >>> LaplaceMechanism(Sphere(2), epsilon=1.0, sensitivity=0.1).noise_second_moment(2) is None
        True
        """
        return None

    def _chart(self, value=None):
        """The flat space the release lives on, or None where no floating-point-safe
        construction exists (curved spaces). Public: ``value`` is used for its shape only."""
        return None

    def _chart_statistic(self, value):
        """(flat space, chart coordinates of the statistic) for the exact grid release."""
        space = self._chart(value)
        return space, space.to_coordinates(self.distribution(value).footpoint)

    def _grid_noise(self, dim: int):
        """The secure-mode discrete construction (:mod:`geodp.mechanisms.grid`) for ``dim``."""
        raise NotImplementedError

    def _secure_release(self, value, rng, size):
        space, coordinates = self._chart_statistic(value)
        return space, self._grid_noise(space.dim).release(coordinates, rng, size)

    def randomise(self, value, rng=None, size=None):
        """Release a privatised copy of the point ``value``; ``size`` independent copies (for
        studies of the mechanism: each copy spends the budget again).

        ``rng="secure"`` (or a :class:`~geodp.secure.SecureGenerator`) draws from a secure
        generator and, on flat spaces, releases exact discrete noise on a public grid
        (:meth:`guarantee_for` tells which construction ran; docs/secure.md)."""
        rng = as_generator(rng)
        if is_secure(rng) and self._chart(value) is not None:
            space, coordinates = self._secure_release(value, rng, size)
            return space.from_coordinates(coordinates)
        return self.distribution(value).sample(size, rng=rng)

    def randomise_coordinates(self, value, rng=None, size=None):
        """Like :meth:`randomise` on a flat space, but return the release in the isometric
        chart, free of the round-trip error of mapping to the manifold and back (in secure
        mode: exact multiples of the grid)."""
        rng = as_generator(rng)
        if is_secure(rng) and self._chart(value) is not None:
            return self._secure_release(value, rng, size)[1]
        return self.distribution(value).sample_coordinates(size, rng=rng)

    def _chart_law(self, space, coordinates):
        """The output law for the statistic with chart coordinates ``coordinates`` on the flat
        ``space``, built on ``Euclidean(space.dim)`` (the chart is an isometry onto it, so it is
        the same law, with no matrix round trip). Flat mechanisms only."""
        raise NotImplementedError

    def _flat_space(self, dim: int):
        """The flat space whose chart has ``dim`` coordinates that this mechanism releases on,
        or None (curved space). Public: ``dim`` is a shape."""
        space = getattr(self, "space", None)
        return space if space is not None and space.is_flat else None

    def _grid_applies(self) -> bool:
        """Whether secure mode releases through the exact grid construction (flat spaces)."""
        return True

    def randomise_chart(self, coordinates, rng=None, size=None):
        """Release a statistic given by its chart coordinates; return the release's chart
        coordinates (flat spaces only).

        The statistic never leaves the chart: no matrix is formed, so nothing is lost however
        far out it lies (on log-Euclidean SPD, ``Exp`` then ``Log`` of a point whose
        log-eigenvalues spread beyond ~36 destroys its small eigenvalues, and with them the
        sensitivity bound). The sensitivity Δ is a bound on the Euclidean distance between the
        coordinates of neighbouring statistics. Secure mode (``rng="secure"``) rounds them to
        the public grid and adds exact discrete noise, as :meth:`randomise_coordinates` does.

        Parameters
        ----------
        coordinates : array_like, shape (space.dim,)
            The statistic's chart coordinates (``space.to_coordinates`` of the point).
        rng : None, int, numpy.random.Generator or "secure"
        size : int or tuple, optional
            Independent copies (each spends the budget again).

        Returns
        -------
        numpy.ndarray, shape size + (space.dim,)

        Examples
        --------
        >>> import numpy as np
        >>> from geodp.manifolds import SPD
        >>> from geodp.mechanisms import LaplaceMechanism
        >>> mech = LaplaceMechanism(SPD(2, metric="log-euclidean"), epsilon=1.0, sensitivity=0.1)
        >>> far = np.array([40.0, -40.0, 0.0])  # Exp of it would hold e^-40 next to e^40
        >>> mech.randomise_chart(far, rng=0).shape, mech.randomise_chart(far, rng="secure", size=2).shape
        ((3,), (2, 3))
        """
        refuse_non_finite(coordinates, "coordinates")  # without counting the bad entries
        c = np.array(coordinates, dtype=float)
        space = self._flat_space(c.shape[0] if c.ndim == 1 else -1)
        if space is None:
            raise InvalidParameterError(
                f"randomise_chart needs a flat space (a global isometric chart); {self!r} has none "
                f"for coordinates of shape {c.shape}."
            )
        if c.shape != (space.dim,):
            raise InvalidDataError(f"coordinates must have shape ({space.dim},), got {c.shape}.")
        rng = as_generator(rng)
        if is_secure(rng) and self._grid_applies():
            return self._grid_noise(space.dim).release(c, rng, size)
        return self._chart_law(space, c).sample_coordinates(size, rng=rng)

    def guarantee_for(self, rng, value=None) -> Guarantee:
        """The :class:`Guarantee` of a release drawn with ``rng`` (as passed to :meth:`randomise`):
        :attr:`guarantee`, or in secure mode the guarantee of the construction that runs.

        ``value`` is needed (for its shape only) when the mechanism was built without a space.

        Examples
        --------
        >>> import numpy as np
        >>> from geodp.mechanisms import LaplaceMechanism
        >>> from geodp.manifolds import Euclidean, Sphere
        >>> LaplaceMechanism(Euclidean(2), epsilon=1.0, sensitivity=0.1).guarantee_for("secure").floating_point_safe
        True
        >>> LaplaceMechanism(Sphere(2), epsilon=1.0, sensitivity=0.1).guarantee_for("secure").floating_point_safe
        False
        """
        guarantee = self.guarantee
        if not is_secure(rng):
            return guarantee
        space = self._chart(value)
        if space is None:
            return replace(
                guarantee,
                **sampler_construction(
                    rng,
                    "no floating-point-safe construction is known on a curved space (the law has no exact lattice "
                    "analogue)",
                ),
            )
        # The grid's discrete noise has its own accounting (ρ-zCDP for the discrete Gaussian, ε-DP for
        # the discrete Laplace), not the continuous law's GDP curve.
        return replace(guarantee, **{"gdp_mu": None, "zcdp_rho": None, **self._grid_noise(space.dim).describe()})

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(epsilon={self.epsilon!r}, delta={self.delta!r}, sensitivity={self.sensitivity!r})"
        )


def exact_weighted_sum_parts(block, weights) -> np.ndarray:
    """``(hi, lo)`` per coordinate, shape ``(2, d)``: ``Σ_i fl(w_i·c_i)`` over the rows ``c_i`` of
    ``block`` as a correctly rounded float ``hi`` (:func:`math.fsum`) plus the correctly rounded
    rest ``lo``; :func:`combine_sum_parts` adds such parts of several blocks.

    Each term ``fl(w_i·c_i)`` is a function of its own record, and the sum is exact up to
    ``eps²``: replacing one record moves the result by that record's terms, never by a rounding
    of the other ``n − 1`` records' sum (whose worst case grows like ``n·eps·r``, beyond ``2r/n``
    at large ``n``).

    Examples
    --------
    >>> import numpy as np
    >>> parts = exact_weighted_sum_parts(np.array([[1e16], [1.0], [-1e16]]), np.ones(3))
    >>> combine_sum_parts([parts])
    array([1.])
    """
    terms = np.asarray(weights, dtype=float)[:, None] * np.asarray(block, dtype=float)
    hi = np.array([math.fsum(col) for col in terms.T])
    lo = np.array([math.fsum(np.append(col, -h)) if math.isfinite(h) else 0.0 for col, h in zip(terms.T, hi)])
    return np.stack([hi, lo])


def combine_sum_parts(parts) -> np.ndarray:
    """The correctly rounded sum of the ``(hi, lo)`` parts of :func:`exact_weighted_sum_parts`."""
    stacked = np.concatenate([np.asarray(p, dtype=float) for p in parts], axis=0)
    return np.array([math.fsum(col) for col in stacked.T])


def require_flat(space: Manifold, what: str) -> None:
    """Refuse a curved space where a flat chart is needed."""
    if not space.is_flat:
        raise InvalidParameterError(
            f"{what} is only available on flat spaces (is_flat, with a global chart: Euclidean, "
            "log-Euclidean SPD, or your own); "
            f"got {space!r}."
            + (
                f" Use SPD({space.k}, metric='log-euclidean') (spec spd:{space.k}:log-euclidean)."
                if getattr(space, "metric", None) == "affine"
                else ""
            )
        )
