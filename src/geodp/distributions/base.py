"""The :class:`Distribution` protocol: ``sample(size, rng)`` and an unnormalised log-density."""

from __future__ import annotations

import contextlib
import math
import os
import sys
import warnings
from abc import ABC, abstractmethod

import numpy as np

from geodp.errors import (
    ApproximateSamplerWarning,
    AssumptionError,
    InvalidDataError,
    InvalidParameterError,
    NotOnManifoldError,
)
from geodp.manifolds.base import Manifold, check_space
from geodp.validation import as_generator
from geodp.work import NoAcceptance, count, fixed_proposals, fixed_work

__all__ = ["Distribution", "FlatChartDistribution", "rejection_sample", "check_private_points", "refuse_non_finite"]

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _caller_stacklevel() -> int:
    """``stacklevel`` that attributes a warning to the first frame outside geodp (as pandas'
    ``find_stack_level``), counted from the function that calls :func:`warnings.warn`."""
    frame, level = sys._getframe(1), 1  # level 1: the caller of warnings.warn
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    return level


def refuse_non_finite(X, name: str) -> None:
    """Refuse NaN/inf in private values with a message that does not count them (the generic
    validation counts the bad entries, a number computed from the data)."""
    arr = None
    with contextlib.suppress(Exception):  # not array-like: the caller's validation says so
        arr = np.asarray(X)
    if (
        arr is not None
        and arr.dtype != object
        and np.issubdtype(arr.dtype, np.number)
        and not np.iscomplexobj(arr)
        and not np.all(np.isfinite(arr))
    ):
        raise InvalidDataError(f"{name} holds NaN or infinite values; remove or impute them.")


def check_private_points(space, X, name: str, batch_ndim=None):
    """``space.check_points`` for private values (data, the footpoint being privatised).

    A refusal is observable, so its message must not carry numbers computed from the data: the
    generic messages count the non-finite entries and the off-manifold points and give the index
    of the first; these are replaced by fixed texts. Shape and dtype messages are kept (the
    shape of the input is public: n is public).

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Sphere
    >>> try:
    ...     check_private_points(Sphere(2), np.ones((3, 3)), "data", batch_ndim=1)
    ... except NotOnManifoldError as e:
    ...     print(e)
    data holds points that are not on Sphere(2); find them with space.invalid_records(data).
    """
    refuse_non_finite(X, name)
    try:
        return space.check_points(X, name, batch_ndim=batch_ndim)
    except NotOnManifoldError:
        raise NotOnManifoldError(
            f"{name} holds points that are not on {space!r}; find them with space.invalid_records({name})."
        ) from None


def approximate_sampler_notice(law: str, sampler: str, reason: str) -> str:
    """The text of :class:`~geodp.errors.ApproximateSamplerWarning`. Every argument must be public
    (a function of the space, σ, the public ball, the settings and the public floors): never an
    acceptance rate, ESS or any other number computed from a chain run on private data."""
    return (
        f"{law}: this release is drawn by {sampler}, because {reason}. MCMC output is only "
        "approximately from the target law, so differential privacy then holds only "
        "approximately (the guarantee says exact=False; the chain's diagnostics depend on the "
        "data and are for the data holder, not for publication)."
    )


def rejection_sample(
    propose,
    need: int,
    item_shape,
    rate_guess: float,
    rng,
    max_batch: int = 1_000_000,
    min_rate: float | None = None,
    max_proposals: int | None = None,
):
    """Vectorised rejection sampling: the one loop every exact sampler in geodp shares.

    Parameters
    ----------
    propose : callable or sequence of callables
        ``propose(m, rng) -> (candidates, log_accept)``: ``m`` proposals (shape ``(m, *item_shape)``)
        and their log acceptance probabilities (≤ 0; ``-inf`` rejects). A sequence is a race:
        each round gives every proposal a batch of the same size (chosen from counts only), and
        every accepted candidate, whichever proposal made it, is an exact draw.
    need : int
        Number of accepted draws.
    item_shape : tuple of int
    rate_guess : float
        Expected acceptance, used to size the first batch; later batches use the observed rate.
    rng : numpy.random.Generator
    max_batch : int
        Largest batch of proposals.
    min_rate : float, optional
        A proven lower bound on the acceptance rate. The loop then stops with
        :class:`~geodp.errors.AssumptionError` after ``(2·need + 400)/min_rate`` proposals, which
        a sampler that honours its bound reaches with probability below e^−50 (Chernoff): a wrong
        bound raises instead of hanging. For a race, the bound of the whole race (proposals of
        every kind counted).
    max_proposals : int, optional
        A public cap on the work: the loop stops once this many proposals were made and returns
        the draws it has (fewer than ``need``); the caller decides what follows.

    Under fixed work (:func:`geodp.work.fixed_work`: a timing-safe release) the loop makes a
    public number of proposals whatever happens: :func:`~geodp.work.fixed_proposals` of
    ``min_rate`` (public there) for the section's share of δ_t, or ``max_proposals`` when no bound
    is given, in batches of public sizes; the draws are the first ``need`` accepted ones (exact:
    the first acceptances of i.i.d. proposals). If fewer were accepted it raises
    :class:`~geodp.work.NoAcceptance` (with ``min_rate``: probability at most that share), and the
    estimator releases its public fallback (docs/math.md, "Fixed work").

    Returns
    -------
    draws : numpy.ndarray, shape (need, *item_shape)
        Fewer rows only when ``max_proposals`` ran out.
    acceptance : float or None
        Observed acceptance rate over all proposals (``None`` when nothing was proposed).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> half_normal = lambda m, rng: (x := rng.standard_normal(m), np.where(x > 0, 0.0, -np.inf))
    >>> draws, rate = rejection_sample(half_normal, 1000, (), 0.5, rng)
    >>> bool(draws.min() > 0), round(rate, 1)
    (True, 0.5)
    """
    proposals = tuple(propose) if isinstance(propose, (list, tuple)) else (propose,)
    section = fixed_work()
    if section is not None:
        return _fixed_rejection(proposals, need, item_shape, rng, max_batch, min_rate, max_proposals, section)
    out = np.empty((need,) + tuple(item_shape))
    filled = proposed = accepted = 0
    budget = math.inf if min_rate is None else (2 * need + 400) / min_rate
    cap = math.inf if max_proposals is None else max_proposals
    while filled < need:
        if proposed > budget:
            raise AssumptionError(
                f"a rejection sampler used up its budget of {math.ceil(budget)} proposals for {need} "
                f"draws, which its proven acceptance bound {min_rate:.3g} makes impossible in practice "
                "(probability < e^-50): please report this bug."
            )
        if cap - proposed < len(proposals):
            return out[:filled], (accepted / proposed if proposed else None)
        rate = accepted / proposed if accepted else rate_guess / (1 + proposed)
        m = int(min(max(1.25 * (need - filled) / max(rate, 1e-12), 16), max_batch, (cap - proposed) // len(proposals)))
        for one in proposals:
            x, log_accept = one(m, rng)
            with np.errstate(invalid="ignore"):
                keep = x[np.log(rng.random(m)) < log_accept]
            accepted, proposed = accepted + len(keep), proposed + m
            count("proposals", m)
            keep = keep[: need - filled]
            out[filled : filled + len(keep)] = keep
            filled += len(keep)
    return out, (accepted / proposed if proposed else None)


def _fixed_rejection(proposals, need, item_shape, rng, max_batch, min_rate, max_proposals, section):
    """:func:`rejection_sample` under fixed work: a public number of proposals, every one made."""
    if min_rate is not None:
        total = fixed_proposals(min(float(min_rate), 1.0), need, section.next_delta())
        total = total if max_proposals is None else min(total, max_proposals)
    elif max_proposals is not None:
        total = max_proposals
    else:
        raise AssumptionError(
            "a timing-safe release reached a rejection sampler with neither a proven acceptance bound nor a "
            "public cap on its proposals, so its work would depend on the data: please report this bug."
        )
    per_kind = max(1, math.ceil(total / len(proposals)))
    batch = min(max_batch, per_kind)
    kept, accepted = [], 0
    for start in range(0, per_kind, batch):
        m = min(batch, per_kind - start)
        for one in proposals:
            x, log_accept = one(m, rng)
            with np.errstate(invalid="ignore"):
                keep = np.log(rng.random(m)) < log_accept
            count("proposals", m)
            kept.append(x[keep][: max(need - accepted, 0)])  # copies only what is kept, every batch
            accepted += int(np.count_nonzero(keep))
    out = np.concatenate(kept)[:need].reshape((-1,) + tuple(item_shape)) if kept else np.empty((0,) + tuple(item_shape))
    if len(out) < need and min_rate is not None:
        raise NoAcceptance
    return out, accepted / (per_kind * len(proposals)) if per_kind else None


def size_tuple(size) -> tuple[int, ...]:
    """A ``size`` argument (None, an int or a tuple of ints ≥ 0) as a shape tuple.

    Examples
    --------
    >>> size_tuple(None), size_tuple(3), size_tuple((2, 4))
    ((), (3,), (2, 4))
    """
    if size is None:
        return ()
    if np.isscalar(size):
        size = (size,)
    size = tuple(int(s) for s in size)
    if any(s < 0 for s in size):
        raise InvalidParameterError(f"size must be non-negative, got {size!r}.")
    return size


class Distribution(ABC):
    """A law on a manifold.

    Attributes
    ----------
    space : Manifold
    exact : bool
        True when :meth:`sample` draws exactly from the law (no MCMC).
    sampler : str
        Human-readable description of the sampling method, recorded in guarantees.
    """

    space: Manifold
    exact: bool
    sampler: str
    #: Text of the :class:`~geodp.errors.ApproximateSamplerWarning` a non-exact law emits once per
    #: :meth:`sample` call (public quantities only); ``None`` for exact laws.
    approximation_notice: str | None = None

    def _warn_if_approximate(self) -> None:
        """Emit :class:`~geodp.errors.ApproximateSamplerWarning` when the sampler is not exact."""
        if not self.exact and self.approximation_notice is not None:
            warnings.warn(self.approximation_notice, ApproximateSamplerWarning, stacklevel=_caller_stacklevel())

    @abstractmethod
    def sample(self, size=None, rng=None):
        """Draw ``size`` points (``None``: one point of shape ``space.point_shape``)."""

    @abstractmethod
    def log_density(self, x):
        """Unnormalised log-density w.r.t. the Riemannian volume at points ``x``."""


class FlatChartDistribution(Distribution):
    """A law on a flat space defined by a law on its global isometric chart ``R^d``.

    Subclasses implement :meth:`sample_coordinates` and :meth:`log_density_coordinates`;
    samples are mapped back by ``space.from_coordinates`` (keep the coordinates when precision
    matters: a round trip through a 30×30 matrix with large noise can lose all digits).
    """

    def __init__(self, space: Manifold, footpoint):
        check_space(space)
        if not space.is_flat:
            raise InvalidParameterError(f"{type(self).__name__} needs a flat space with a global chart, got {space!r}.")
        self.space = space
        self.footpoint = check_private_points(space, footpoint, "footpoint")
        self.footpoint_coordinates = space.to_coordinates(self.footpoint)

    @abstractmethod
    def sample_coordinates(self, size=None, rng=None) -> np.ndarray:
        """Draw chart coordinates, shape ``batch + (dim,)``."""

    @abstractmethod
    def log_density_coordinates(self, y) -> np.ndarray:
        """Unnormalised log-density at chart coordinates ``y``."""

    def sample(self, size=None, rng=None):
        """Draw points on the manifold (chart samples mapped back)."""
        return self.space.from_coordinates(self.sample_coordinates(size, as_generator(rng)))

    def log_density(self, x):
        """Unnormalised log-density at points ``x`` (the chart is an isometry: no Jacobian)."""
        return self.log_density_coordinates(self.space.to_coordinates(np.asarray(x, dtype=float)))

    def _batch(self, size) -> tuple[int, ...]:
        base = self.footpoint_coordinates.shape[:-1]
        return np.broadcast_shapes(size_tuple(size), base) if size is not None else base
