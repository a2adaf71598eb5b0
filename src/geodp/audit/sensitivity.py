"""Adversarial search for replace-one neighbours that stretch a sensitivity bound (docs/audit.md).

For a space, a statistic, a public ball ``B_r(center)`` and a public size ``n``, the search looks,
among neighbouring datasets ``D, D'`` (one record replaced, every record in the ball), for the
largest distance between the statistics of ``D`` and ``D'``, and reports it over the bound the
library calibrates its noise with (docs/math.md §3). A dataset is described by a few groups: the
``n − 1`` shared records in one to three clusters of public multiplicities, plus the replaced
record and its replacement. Each point is ``exp_center(r sin(|z|)/|z| · Σ z_i e_i)`` for free
coordinates ``z`` in an orthonormal tangent basis ``e`` at the centre, so every candidate lies in
the closed ball; Nelder–Mead moves the points from structured starts (records at the centre, on
one boundary point, split between opposite ones; the replaced record moved across the ball) and
random ones. Finding no violation is evidence, not proof; a search whose evaluations were
mostly discarded as invalid (fewer than 90% valid) is **inconclusive** and says so.

On flat spaces the Fréchet mean is computed by default exactly as
:class:`~geodp.models.PrivateFrechetMean` computes the statistic it noises
(:func:`geodp.models.frechet_mean.flat_statistic`: the records' chart coordinates, clipped in
the chart, exactly averaged), from datasets written out record by record, so that a defect of
the model's own code path (a lossy matrix round trip, say) shows in the audit.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from geodp.audit.defaults import MAX_RECORDS, check_audit_n, default_center
from geodp.errors import ConvergenceWarning, InvalidParameterError, NotOnManifoldError
from geodp.frechet import convexity_bound, frechet_mean, karcher_iteration_budget
from geodp.manifolds.base import check_space
from geodp.sensitivity import check_radius, frechet_mean_sensitivity
from geodp.validation import CLIP_MARGIN, as_generator, check_positive_integer

__all__ = ["STATISTICS", "NeighbourPair", "SensitivityAudit", "audit_sensitivity"]

STATISTICS = ("frechet-mean", "kng-gradient")
_BOUND_MECHANISM = {"frechet-mean": "laplace", "kng-gradient": "kng"}
# Relative slack when judging a violation (rounding of distances); the Fréchet mean adds its
# solver term 2·tol/μ (docs/math.md §3, "Solver tolerance").
_ROUNDING_SLACK = 1e-6
_BOUNDARY = math.pi / 2  # |z| at which sin(|z|) = 1: a point on the ball's boundary
# A search is conclusive only when at least this share of its evaluations was valid.
MIN_VALID_SHARE = 0.9
# A search whose tolerance (the solver's accuracy over the bound) exceeds this cannot tell a bound
# that holds from one broken by less than the tolerance: it is inconclusive (tiny radii, where the
# mean cannot be solved to a small fraction of 2r/n in float64).
MAX_TOLERANCE = 0.01


@dataclass(frozen=True, eq=False)
class NeighbourPair:
    """The worst neighbouring datasets found, as groups of identical records.

    Attributes
    ----------
    shared : numpy.ndarray, shape (k, *point_shape)
        The clusters of the ``n − 1`` records that ``D`` and ``D'`` share.
    multiplicities : tuple of int
        How many shared records sit at each cluster (they sum to ``n − 1``).
    record, replacement : numpy.ndarray, shape point_shape
        The record of ``D`` and the one that replaces it in ``D'``.
    value, neighbour_value : numpy.ndarray
        The statistic of ``D`` and of ``D'``: the two Fréchet means (their chart coordinates
        when the search ran through the model), or the two gradients ``∇F_D(x)``, ``∇F_D'(x)``
        (tangent vectors at ``point``).
    point : numpy.ndarray or None
        ``x``, where the gradient fields are compared (``"kng-gradient"`` only).
    """

    shared: np.ndarray
    multiplicities: tuple
    record: np.ndarray
    replacement: np.ndarray
    value: np.ndarray
    neighbour_value: np.ndarray
    point: np.ndarray | None = None

    def datasets(self) -> tuple[np.ndarray, np.ndarray]:
        """``(D, D')`` with every record written out, shape ``(n, *point_shape)`` each.

        Examples
        --------
        >>> import numpy as np
        >>> pair = NeighbourPair(np.zeros((1, 1)), (2,), np.ones(1), -np.ones(1), np.zeros(1), np.zeros(1))
        >>> [d.ravel().tolist() for d in pair.datasets()]
        [[0.0, 0.0, 1.0], [0.0, 0.0, -1.0]]
        """
        common = np.repeat(self.shared, self.multiplicities, axis=0)
        return (np.concatenate([common, self.record[None]]), np.concatenate([common, self.replacement[None]]))

    def to_dict(self) -> dict:
        """JSON-friendly form (nested lists)."""
        out = {
            "shared": self.shared.tolist(),
            "multiplicities": list(self.multiplicities),
            "record": self.record.tolist(),
            "replacement": self.replacement.tolist(),
            "value": self.value.tolist(),
            "neighbour_value": self.neighbour_value.tolist(),
        }
        if self.point is not None:
            out["point"] = self.point.tolist()
        return out


@dataclass(frozen=True, eq=False)
class SensitivityAudit:
    """Result of :func:`audit_sensitivity`.

    Attributes
    ----------
    space : str
        ``repr`` of the space.
    statistic : str
    n : int
    radius : float
    center : numpy.ndarray
    bound : float
        The library's sensitivity bound for this setting.
    observed : float
        The largest distance between neighbours' statistics that the search found.
    tolerance : float
        Relative slack before a ratio above 1 counts as a violation (rounding, and for the
        Fréchet mean its solver accuracy ``2·tol/μ``).
    worst : NeighbourPair or None
        The pair that attains ``observed`` (None if no evaluation was valid).
    evaluations : int
        Neighbouring pairs evaluated.
    invalid_evaluations : int
        Pairs discarded (never counted as large): a Karcher flow did not converge or was not
        certified unique, or rounding put a point outside the ball.
    starts : int
        Local searches run.
    seconds : float
        Wall-clock time of the search.
    through_model : bool
        Whether the statistic was computed by the model's own code path (flat spaces).
    """

    space: str
    statistic: str
    n: int
    radius: float
    center: np.ndarray
    bound: float
    observed: float
    tolerance: float
    worst: NeighbourPair | None
    evaluations: int
    invalid_evaluations: int
    starts: int
    seconds: float
    through_model: bool = False

    @property
    def valid_share(self) -> float:
        """Share of the evaluations that were valid (0.0 when none ran)."""
        return (self.evaluations - self.invalid_evaluations) / self.evaluations if self.evaluations else 0.0

    @property
    def conclusive(self) -> bool:
        """Whether at least 90% of the evaluations were valid and the tolerance is at most 1% of
        the bound. A violation found is a violation either way; "bound holds" is reported only by
        a conclusive search."""
        return self.valid_share >= MIN_VALID_SHARE and self.tolerance <= MAX_TOLERANCE

    @property
    def verdict(self) -> str:
        """``"BOUND VIOLATED"``, ``"INCONCLUSIVE"`` (too few valid evaluations, or a tolerance above
        1% of the bound) or ``"bound holds"``."""
        if self.violated:
            return "BOUND VIOLATED"
        return "bound holds" if self.conclusive else "INCONCLUSIVE"

    @property
    def ratio(self) -> float:
        """``observed / bound``: at most 1 (up to ``tolerance``) if the bound holds."""
        return self.observed / self.bound

    @property
    def violated(self) -> bool:
        """Whether the search found neighbours beyond the bound (``ratio > 1 + tolerance``)."""
        return self.ratio > 1.0 + self.tolerance

    def to_dict(self) -> dict:
        """JSON-friendly form: floats, ints, strings, booleans and nested lists.

        Examples
        --------
        >>> from geodp.manifolds import Euclidean
        >>> audit = audit_sensitivity(Euclidean(1), radius=1.0, n=4, n_starts=1, max_evaluations=50, rng=0)
        >>> sorted(audit.to_dict())[:4]
        ['bound', 'center', 'conclusive', 'evaluations']
        """
        return {
            "space": self.space,
            "statistic": self.statistic,
            "n": self.n,
            "radius": self.radius,
            "center": self.center.tolist(),
            "bound": self.bound,
            "observed": self.observed,
            "ratio": self.ratio,
            "tolerance": self.tolerance,
            "violated": self.violated,
            "conclusive": self.conclusive,
            "verdict": self.verdict,
            "valid_share": self.valid_share,
            "through_model": self.through_model,
            "worst": None if self.worst is None else self.worst.to_dict(),
            "evaluations": self.evaluations,
            "invalid_evaluations": self.invalid_evaluations,
            "starts": self.starts,
            "seconds": self.seconds,
        }

    def __str__(self) -> str:
        verdict = self.verdict
        what = (
            "distance between the neighbours' Fréchet means"
            if self.statistic == "frechet-mean"
            else "norm of the difference of the neighbours' KNG gradient fields"
        )
        if self.through_model:
            what += ", computed by PrivateFrechetMean's own code path"
        return "\n".join(
            [
                f"Sensitivity audit of the {self.statistic} on {self.space}: n = {self.n}, public ball of radius "
                f"{self.radius!r}",
                f"  bound    {self.bound:.6g}  (frechet_mean_sensitivity, "
                f"mechanism={_BOUND_MECHANISM[self.statistic]!r})",
                f"  observed {self.observed:.6g}  (largest {what} found)",
                f"  observed/bound = {self.ratio:.4f} ({verdict}; tolerance {self.tolerance:.1g})",
                f"  search: {self.starts} starts, {self.evaluations} evaluations"
                f" ({self.invalid_evaluations} discarded as invalid), {self.seconds:.1f} s",
                *(
                    []
                    if self.conclusive or self.violated or self.valid_share < MIN_VALID_SHARE
                    else [
                        f"  INCONCLUSIVE: the tolerance {self.tolerance:.2g} exceeds {MAX_TOLERANCE:.0%} of the "
                        "bound (the "
                        "mean cannot be solved precisely enough at this radius and n); the search cannot say that the "
                        "bound holds."
                    ]
                ),
                *(
                    []
                    if self.conclusive or self.violated or self.valid_share >= MIN_VALID_SHARE
                    else [
                        f"  INCONCLUSIVE: only {self.valid_share:.0%} of the evaluations were valid (at least "
                        f"{MIN_VALID_SHARE:.0%} needed); the search checked too little to say that the bound holds."
                    ]
                ),
                "  A search that finds no violation is evidence, not proof.",
            ]
        )


def _tangent_basis(space, x, rng) -> np.ndarray:
    """Orthonormal basis of ``T_x M`` (shape ``(dim, *point_shape)``): Gram–Schmidt, twice, in
    the space's inner product, of Gaussian tangent vectors; a draw that is nearly dependent on
    the vectors already kept (residual norm below 0.1; the draws have norm ≈ √dim) is replaced
    by a fresh one."""
    basis = []
    while len(basis) < space.dim:
        v = space.random_tangent(x, rng=rng)
        for _ in range(2):
            for b in basis:
                v = v - space.inner(x, v, b) * b
        residual = float(space.norm(x, v))
        if residual > 0.1:
            basis.append(v / residual)
    return np.stack(basis)


class _ChartBall:
    """Flat spaces: free coordinates ``z`` ↦ chart points ``c0 + r sin(|z|)/|z| · Q z`` (``Q`` a
    random rotation) of the closed ball, mapped to points of the space by ``from_coordinates``
    (the model's input; whatever that map loses, the model's clipping is what is audited)."""

    def __init__(self, space, center, radius, rng):
        self.space, self.center, self.radius = space, center, radius
        self.c0 = space.to_coordinates(center)
        self.rotation = np.linalg.qr(rng.standard_normal((space.dim, space.dim)))[0]

    def points(self, z):
        z = np.asarray(z, dtype=float).reshape(-1, self.space.dim)
        s = np.linalg.norm(z, axis=1)
        shrink = np.where(s > 0, np.sin(s) / np.where(s > 0, s, 1.0), 1.0)
        coords = self.c0 + self.radius * CLIP_MARGIN * (shrink[:, None] * z) @ self.rotation.T
        with np.errstate(all="ignore"):
            points = self.space.from_coordinates(coords)
        return points, bool(np.all(np.isfinite(points)))


class _Ball:
    """Free coordinates ``z ∈ R^dim`` ↦ points of the closed ball ``B_r(center)``."""

    def __init__(self, space, center, radius, basis):
        self.space, self.center, self.radius, self.basis = space, center, radius, basis

    def points(self, z):
        z = np.asarray(z, dtype=float).reshape(-1, self.space.dim)
        s = np.linalg.norm(z, axis=1)
        shrink = np.where(s > 0, np.sin(s) / np.where(s > 0, s, 1.0), 1.0)  # |sin s|/s·s ≤ 1
        tangents = np.tensordot(self.radius * CLIP_MARGIN * shrink[:, None] * z, self.basis, axes=1)
        points = self.space.unchecked.exp(self.center, tangents)
        inside = np.asarray(self.space.unchecked.dist(self.center, points)) <= self.radius
        return points, bool(np.all(inside) and np.all(np.isfinite(points)))


def _gradient(space, x, points, weights):
    """The KNG gradient field at ``x``: ``∇F_D(x) = −Σ w_j log_x(p_j)`` with ``w_j = m_j/n``
    (``F_D(x) = (1/2n) Σ ρ²(x, x_i)``, the convention of ``geodp.distributions.kng``)."""
    w = weights.reshape(weights.shape + (1,) * len(space.point_shape))
    return -np.sum(w * space.unchecked.log(x, points), axis=0)


def _compositions(total, parts):
    """``total`` split into ``parts`` near-equal positive multiplicities."""
    base, extra = divmod(total, parts)
    return tuple(base + (i < extra) for i in range(parts))


def _mean_starts(dim, n):
    """Structured starts ``(multiplicities, cluster z's, record z, replacement z)`` for the mean."""
    e1 = np.eye(dim)[0] * _BOUNDARY
    e2 = np.eye(dim)[min(1, dim - 1)] * _BOUNDARY
    zero = np.zeros(dim)
    starts = [
        ((n - 1,), [zero], e1, -e1),  # the flat worst case: one record across the ball
        ((n - 1,), [e1], -e1, e1),  # the replaced record joins a boundary cluster
        ((n - 1,), [e2], e1, -e1),  # cluster on an orthogonal boundary point
        ((n - 1,), [zero], e1, e2),  # replaced record moved to an orthogonal point
        ((n - 1,), [-e1], e1, zero),  # replaced record moved to the centre
    ]
    if n - 1 >= 2:
        starts += [
            (_compositions(n - 1, 2), [e2, -e2], e1, -e1),  # split across, moved orthogonally
            (_compositions(n - 1, 2), [e1, -e1], e2, -e2),
        ]
    if n - 1 >= 3:
        starts.append((_compositions(n - 1, 3), [e1, e2, -e2], -e1, e1))
    return starts


def _kng_starts(dim):
    """Structured starts ``(x, record, replacement)`` in coordinates, for the gradient field."""
    e1 = np.eye(dim)[0] * _BOUNDARY
    e2 = np.eye(dim)[min(1, dim - 1)] * _BOUNDARY
    diagonal = (e2 - e1) / math.sqrt(2.0)
    return [
        (np.zeros(dim), e1, -e1),  # x at the centre, the record across the ball (flat worst case)
        (e1, e1, -e1),  # x on the record: log_x a = 0, |log_x b| = 2r
        (e1, e2, -e2),  # x on the boundary, the records on the orthogonal diameter
        (e1, diagonal, diagonal - np.sqrt(2.0) * e2),  # records on the far side of x
        (-e1, e1, np.zeros(dim)),
    ]


def _random_mean_start(dim, n, rng):
    k = int(rng.integers(1, min(3, n - 1) + 1))
    cuts = np.sort(rng.choice(np.arange(1, n - 1), size=k - 1, replace=False)) if k > 1 else np.array([], int)
    multiplicities = tuple(int(m) for m in np.diff(np.concatenate([[0], cuts, [n - 1]])))
    z = rng.standard_normal((k + 2, dim))
    return multiplicities, list(z[:k]), z[k], z[k + 1]


def audit_sensitivity(
    space,
    *,
    radius,
    n,
    statistic="frechet-mean",
    center=None,
    n_starts=10,
    max_evaluations=1000,
    structured_starts=True,
    through_model=None,
    rng=None,
) -> SensitivityAudit:
    """Search replace-one neighbours in a public ball for the largest change of a statistic.

    Parameters
    ----------
    space : Manifold
    radius : float
        Radius of the public ball; must satisfy Assumption 1 (``check_radius``).
    n : int
        Public number of records, ≥ 2 and at most :data:`~geodp.audit.defaults.MAX_RECORDS` (10⁶).
    statistic : {"frechet-mean", "kng-gradient"}, default "frechet-mean"
        ``"frechet-mean"``: the distance between the Fréchet means of ``D`` and ``D'``, against
        ``frechet_mean_sensitivity(space, radius, n, mechanism="laplace")`` (the bound of the
        Laplace and tangent-Gaussian releases). ``"kng-gradient"``: ``sup_x ‖∇F_D(x) − ∇F_D'(x)‖_x``
        over ``x`` in the ball, ``F_D(x) = (1/2n) Σ ρ²(x, x_i)``, against
        ``frechet_mean_sensitivity(..., mechanism="kng")``; ``x`` is searched too.
    center : array_like, optional
        Centre of the ball; default :func:`geodp.audit.defaults.default_center` (north pole,
        identity, origin, regular polygon).
    n_starts : int, default 10
        Local searches: the structured starts first (up to 8 for the mean, 5 for the gradient),
        then random ones.
    max_evaluations : int, default 1000
        Total number of neighbouring pairs evaluated, shared evenly among the starts.
    structured_starts : bool, default True
        ``False`` runs random starts only (to check that the search finds the worst case
        without being handed it).
    through_model : bool, optional
        ``"frechet-mean"`` on a flat space: compute each statistic by the code
        :class:`~geodp.models.PrivateFrechetMean` noises
        (:func:`geodp.models.frechet_mean.flat_statistic`, every record written out; the
        distance is the chart distance), with the records placed in the ball in the chart.
        Default (None): True on flat spaces, False elsewhere (curved spaces: the Karcher flow of
        :func:`geodp.frechet.frechet_mean`; True is refused there).
    rng : None, int or numpy.random.Generator
        For the tangent basis and the random starts.

    Returns
    -------
    SensitivityAudit
        ``ratio = observed / bound``; ``violated`` when it exceeds ``1 + tolerance``;
        ``conclusive`` when at least 90% of the evaluations were valid (``verdict`` is
        ``"INCONCLUSIVE"`` otherwise, unless a violation was found).

    Raises
    ------
    InvalidTypeError
        ``space`` is not a geodp Manifold, or ``n`` is not an integer.
    InvalidParameterError
        ``n < 2`` or ``n > MAX_RECORDS``, an unknown ``statistic``, or a non-positive budget.
    AssumptionError
        ``radius ≥ r*`` (Assumption 1).

    Notes
    -----
    A Fréchet mean whose Karcher flow does not converge (or is not certified unique) makes its
    pair invalid: it is counted in ``invalid_evaluations`` and never taken as a large distance.
    On flat and non-positively curved spaces the bound ``2r/n`` is attained (one record moved
    between opposite boundary points, the others at the centre), so the ratio should reach 1.

    Examples
    --------
    >>> from geodp.manifolds import Hyperbolic
    >>> audit = audit_sensitivity(Hyperbolic(2), radius=1.0, n=5, n_starts=1, max_evaluations=20, rng=0)
    >>> round(audit.bound, 6), 0.99 < audit.ratio <= 1 + audit.tolerance, audit.violated
    (0.4, True, False)
    """
    check_space(space)
    radius = check_radius(space, radius)
    n = check_audit_n(n, limit=MAX_RECORDS, what="the sensitivity search (it splits n − 1 records into clusters)")
    if n < 2:
        raise InvalidParameterError(
            f"n must be >= 2 (a replace-one neighbour needs a record besides the replaced one), got {n!r}."
        )
    if statistic not in STATISTICS:
        raise InvalidParameterError(f"statistic must be one of {STATISTICS}, got {statistic!r}.")
    n_starts = check_positive_integer(n_starts, "n_starts")
    max_evaluations = check_positive_integer(max_evaluations, "max_evaluations")
    center = default_center(space) if center is None else space.check_points(center, "center", batch_ndim=0)
    rng = as_generator(rng)
    if through_model not in (None, True, False):
        raise InvalidParameterError(f"through_model must be None, True or False, got {through_model!r}.")
    if statistic != "frechet-mean" or not space.is_flat:
        if through_model:
            raise InvalidParameterError("through_model=True needs statistic='frechet-mean' on a flat space.")
        through_model = False
    through_model = True if through_model is None else bool(through_model)
    bound = frechet_mean_sensitivity(space, radius, n, mechanism=_BOUND_MECHANISM[statistic])
    if through_model:
        search = _ModelMeanSearch(_ChartBall(space, center, radius, rng), n, bound)
    else:
        ball = _Ball(space, center, radius, _tangent_basis(space, center, rng))
        search = _MeanSearch(ball, n, bound) if statistic == "frechet-mean" else _GradientSearch(ball, n, bound)

    started = time.perf_counter()
    structured = search.structured() if structured_starts else []
    per_start = max(1, max_evaluations // n_starts)
    for i in range(n_starts):
        start = structured[i] if i < len(structured) else search.random(rng)
        search.optimise(start, min(per_start, max_evaluations - search.evaluations))
        if search.evaluations >= max_evaluations:
            n_starts = i + 1
            break
    return SensitivityAudit(
        space=repr(space),
        statistic=statistic,
        n=n,
        radius=radius,
        center=np.array(center, dtype=float),
        bound=bound,
        observed=search.best,
        tolerance=search.tolerance,
        worst=search.worst,
        evaluations=search.evaluations,
        invalid_evaluations=search.invalid,
        starts=n_starts,
        seconds=time.perf_counter() - started,
        through_model=through_model,
    )


class _Search:
    """Nelder–Mead over the free coordinates of the points, remembering the best valid pair."""

    tolerance = _ROUNDING_SLACK

    def __init__(self, ball, n, bound):
        self.ball, self.n, self.bound = ball, n, bound
        self.best, self.worst = 0.0, None
        self.evaluations = self.invalid = 0

    def optimise(self, start, budget):
        layout, z0 = start
        if budget < 1:
            return

        def objective(z):
            self.evaluations += 1
            found = self.evaluate(layout, z)
            if found is None:
                self.invalid += 1
                return 0.0  # invalid: never a large distance
            distance, pair = found
            if distance > self.best:
                self.best, self.worst = distance, pair
            return -distance / self.bound

        simplex = z0 + np.vstack([np.zeros(z0.size), 0.4 * np.eye(z0.size)])
        optimize.minimize(
            objective,
            z0,
            method="Nelder-Mead",
            options={"maxfev": budget, "initial_simplex": simplex, "adaptive": True, "xatol": 1e-9, "fatol": 1e-12},
        )


class _MeanSearch(_Search):
    """Points: the shared clusters, the record and its replacement; statistic: the Fréchet mean."""

    def __init__(self, ball, n, bound):
        super().__init__(ball, n, bound)
        space = ball.space
        self.mu = convexity_bound(space, 2.0 * ball.radius)  # strong convexity of F on the ball
        # Accurate to a relative 2e-9 of the bound (the mean is within tol/μ of the exact one),
        # but not below what float64 resolves.
        self.mean_tol = max(1e-9 * self.mu * bound, 1e-13 * max(1.0, ball.radius))
        self.max_iter = karcher_iteration_budget(space, ball.radius, self.mean_tol)
        self.tolerance = _ROUNDING_SLACK + 2.0 * self.mean_tol / (self.mu * bound)
        self.last_mean = ball.center  # warm start: the flow's result does not depend on it

    def structured(self):
        return [self._pack(*s) for s in _mean_starts(self.ball.space.dim, self.n)]

    def random(self, rng):
        return self._pack(*_random_mean_start(self.ball.space.dim, self.n, rng))

    @staticmethod
    def _pack(multiplicities, clusters, record, replacement):
        return tuple(multiplicities), np.concatenate([*clusters, record, replacement])

    def _mean(self, records, weights, init):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            try:
                mean, info = frechet_mean(
                    self.ball.space,
                    records,
                    weights=weights,
                    tol=self.mean_tol,
                    max_iter=self.max_iter,
                    init=init,
                    return_info=True,
                )
            except NotOnManifoldError:
                return None
        return mean if info.converged else None

    def evaluate(self, multiplicities, z):
        points, inside = self.ball.points(z)
        if not inside:
            return None
        k = len(multiplicities)
        weights = np.array([*multiplicities, 1.0])
        mean = self._mean(points[: k + 1], weights, self.last_mean)
        other = None if mean is None else self._mean(np.concatenate([points[:k], points[k + 1 :]]), weights, mean)
        if other is None:
            return None
        self.last_mean = mean
        distance = float(self.ball.space.dist(mean, other))
        return distance, NeighbourPair(points[:k], multiplicities, points[k], points[k + 1], mean, other)


class _ModelMeanSearch(_MeanSearch):
    """Flat spaces: the statistic of :class:`~geodp.models.PrivateFrechetMean`, by its own code
    (:func:`~geodp.models.frechet_mean.flat_statistic`), of the datasets written out."""

    def __init__(self, ball, n, bound):
        _Search.__init__(self, ball, n, bound)
        self.tolerance = _ROUNDING_SLACK

    def evaluate(self, multiplicities, z):
        from geodp.models.frechet_mean import flat_statistic

        points, finite = self.ball.points(z)
        if not finite:
            return None
        k = len(multiplicities)
        pair = NeighbourPair(points[:k], multiplicities, points[k], points[k + 1], np.empty(0), np.empty(0))
        space, ball = self.ball.space, self.ball
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            try:
                values = [flat_statistic(space, d, center=ball.center, radius=ball.radius) for d in pair.datasets()]
            except NotOnManifoldError:
                return None
        if not all(np.all(np.isfinite(v)) for v in values):
            return None
        pair = NeighbourPair(points[:k], multiplicities, points[k], points[k + 1], values[0], values[1])
        return float(np.linalg.norm(values[0] - values[1])), pair


class _GradientSearch(_Search):
    """Points: ``x``, the record and its replacement (the shared records, at the centre, cancel)."""

    def structured(self):
        return [((), np.concatenate(s)) for s in _kng_starts(self.ball.space.dim)]

    def random(self, rng):
        return (), rng.standard_normal(3 * self.ball.space.dim)

    def evaluate(self, _layout, z):
        space = self.ball.space
        (x, record, replacement), inside = self.ball.points(z)
        if not inside:
            return None
        shared = self.ball.center[None]
        weights = np.array([self.n - 1.0, 1.0]) / self.n
        value = _gradient(space, x, np.stack([shared[0], record]), weights)
        other = _gradient(space, x, np.stack([shared[0], replacement]), weights)
        distance = float(space.norm(x, value - other))
        return distance, NeighbourPair(shared, (self.n - 1,), record, replacement, value, other, point=x)
