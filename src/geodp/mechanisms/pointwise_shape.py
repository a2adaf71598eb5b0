"""S22's point-wise shape Laplace baseline (S22 §2.5.2; docs/math.md §7), sound and as published.

Each configuration is rotated onto a reference shape (Procrustes), the aligned landmark
coordinates are averaged, and every coordinate of the mean gets an independent scalar Laplace
with budget ``ε/(2k)`` (2k coordinates, sequential composition). The published version aligns to
the non-private Fréchet mean and takes its per-coordinate ranges from the data: neither is DP.
The sound version aligns to the *public* centre (a per-record map) and uses *public* ranges: by
default ``±2 sin(r/2)`` around the centre, the chord that bounds every aligned preshape of the
ball ``B_r(centre)``; records are clipped into the ball and the coordinates into the ranges.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from geodp.distributions.base import check_private_points
from geodp.errors import InvalidParameterError, InvalidTypeError, PrivacyLeakWarning
from geodp.frechet import frechet_mean
from geodp.manifolds.kendall import KendallShape
from geodp.mechanisms.base import Guarantee, sampler_construction
from geodp.mechanisms.grid import GridLaplace
from geodp.secure import is_secure
from geodp.sensitivity import check_radius
from geodp.validation import as_generator, check_epsilon

__all__ = ["PointwiseShapeLaplace", "PointwiseRelease"]


@dataclass(frozen=True)
class PointwiseRelease:
    """``shape``: the released preshape(s); ``configuration``: the noisy aligned mean before
    projection (both are the DP output up to post-processing)."""

    shape: np.ndarray
    configuration: np.ndarray


class PointwiseShapeLaplace:
    """Point-wise Laplace on landmark coordinates of planar shapes (S22 §2.5.2).

    The scalar floating-point Laplace is the construction Mironov (2012) attacked: with
    ``rng="secure"`` each coordinate instead gets exact discrete Laplace noise on a public grid
    (:class:`~geodp.mechanisms.grid.GridLaplace` with d = 1, budget ``ε/(2k)``), and
    ``guarantee(n, rng="secure")`` states the construction and its cost.

    Parameters
    ----------
    space : KendallShape
    epsilon : float
        Total budget; each of the 2k coordinates gets ``ε/(2k)``.
    center : array_like, shape (k, 2)
        Public reference shape (alignment target and centre of the data ball).
    radius : float
        Public radius of the data ball in shape distance (``< π/8``).
    ranges : array_like, shape (k, 2), optional
        Public half-widths of each aligned coordinate around the centre; default
        ``2 sin(r/2)`` everywhere (always valid).
    as_published : bool, default False
        S22's version: align to the Fréchet mean, ranges from the data. Not DP; warns.

    Privacy
    -------
    Sound version: ε-DP, replace-one with n public. The per-record map (clip into the ball, align
    to the public centre, clip coordinates into the public ranges) preserves adjacency; each
    coordinate mean has sensitivity ``2·range/n``; the scalar Laplace with scale
    ``2·range/n · 2k/ε`` is ``ε/(2k)``-DP; 2k of them compose to ε.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import KendallShape
    >>> space = KendallShape(5)
    >>> center = space.random_point(rng=0)
    >>> X = space.exp(center, 0.1 * space.random_tangent(center, size=50, rng=1))
    >>> out = PointwiseShapeLaplace(space, epsilon=1.0, center=center, radius=0.3).release(X, rng=2)
    >>> out.shape.shape, bool(abs(np.linalg.norm(out.shape) - 1) < 1e-12)
    ((5, 2), True)
    >>> mech = PointwiseShapeLaplace(space, epsilon=1.0, center=center, radius=0.3)
    >>> mech.release(X, rng="secure").shape.shape, mech.guarantee(50, rng="secure").floating_point_safe
    ((5, 2), True)
    """

    def __init__(self, space, *, epsilon, center, radius, ranges=None, as_published=False):
        if not isinstance(space, KendallShape):
            raise InvalidTypeError(f"the point-wise shape Laplace needs a KendallShape space, got {space!r}.")
        self.space = space
        self.epsilon = check_epsilon(epsilon)
        self.center = space.check_points(center, "center", batch_ndim=0)
        self.radius = check_radius(space, radius)
        self.as_published = bool(as_published)
        chord = 2.0 * math.sin(self.radius / 2.0)
        if ranges is None:
            ranges = np.full(space.point_shape, chord)
        ranges = np.broadcast_to(np.asarray(ranges, dtype=float), space.point_shape)
        if not np.all(np.isfinite(ranges)) or np.any(ranges <= 0):
            raise InvalidParameterError("ranges must be positive and finite (public half-widths per coordinate).")
        self.ranges = ranges
        if self.as_published:
            warnings.warn(
                "as_published=True aligns to the non-private Fréchet mean and takes the ranges from "
                "the data (S22 §2.5.2): not differentially private; use for reproductions only.",
                PrivacyLeakWarning,
                stacklevel=2,
            )

    def _budget_scale(self, ranges, n):
        return 2.0 * ranges / n * (2 * self.space.n_landmarks) / self.epsilon

    def _coordinate_epsilon(self) -> float:
        """ε/(2k), rounded down so that 2k of them sum to at most ε exactly."""
        parts = 2 * self.space.n_landmarks
        share = self.epsilon / parts
        while Fraction(share) * parts > Fraction(self.epsilon):
            share = math.nextafter(share, 0.0)
        return share

    def _grid_noises(self, n: int) -> list[GridLaplace]:
        """Secure mode: one exact discrete Laplace on a grid per coordinate (d = 1)."""
        sensitivities = (2.0 * self.ranges / n).ravel()
        return [GridLaplace(self._coordinate_epsilon(), float(s), 1) for s in sensitivities]

    def release(self, X, rng=None, size=None) -> PointwiseRelease:
        """Release the private mean shape of ``X`` (configurations or preshapes, shape (n, k, 2))."""
        rng = as_generator(rng)
        X = check_private_points(self.space, X, "X", batch_ndim=1)
        n = len(X)
        if self.as_published:
            reference = frechet_mean(self.space, X)
            aligned = self.space.align(reference, X)
            ranges = np.max(np.abs(aligned - reference), axis=0)
            mean = aligned.mean(axis=0)
        else:
            clipped, _ = self.space.clip_to_ball(X, self.center, self.radius)
            aligned = np.clip(
                self.space.align(self.center, clipped), self.center - self.ranges, self.center + self.ranges
            )
            ranges, mean = self.ranges, aligned.mean(axis=0)
        shape = () if size is None else ((size,) if np.isscalar(size) else tuple(size))
        if is_secure(rng) and not self.as_published:
            columns = [
                noise.release(m[None], rng, shape)[..., 0] for noise, m in zip(self._grid_noises(n), mean.ravel())
            ]
            noisy = np.stack(columns, axis=-1).reshape(shape + self.space.point_shape)
        else:
            scale = np.maximum(self._budget_scale(ranges, n), np.finfo(float).tiny)
            noisy = mean + rng.laplace(0.0, 1.0, size=shape + self.space.point_shape) * scale
        return PointwiseRelease(self.space.project(noisy), noisy)

    def scale(self, n: int) -> np.ndarray:
        """Per-coordinate Laplace scales of the sound version for ``n`` records."""
        return self._budget_scale(self.ranges, n)

    def guarantee(self, n: int, rng=None) -> Guarantee:
        """The record of one release with ``n`` records, drawn with ``rng`` (secure mode:
        exact discrete Laplace on a grid per coordinate)."""
        assumptions = (
            "records clipped into the public shape ball and rotated onto the public centre (per-record maps)",
            "aligned coordinates clipped into the public ranges",
            f"budget split ε/(2k) over the 2k = {2 * self.space.n_landmarks} coordinates (sequential composition)",
        )
        if self.as_published:
            assumptions = ("AS PUBLISHED: alignment to the Fréchet mean and ranges from the data — not DP",)
        fields = sampler_construction(rng, "as_published ranges come from the data, so no public grid exists")
        if is_secure(rng) and not self.as_published:
            noises = self._grid_noises(n)
            widest = max(noises, key=lambda noise: noise.scale)
            fields = {**widest.describe(), "support": "R^(2k) on per-coordinate grids, projected to a preshape"}
            fields["grid"] = min(noise.grid for noise in noises)  # every coordinate's grid is a multiple of it
            fields["scale_rule"] = (
                "per coordinate, budget ε/(2k) (rounded down): " + fields["scale_rule"] + " (largest shown)"
            )
        else:
            fields |= dict(
                scale=float(np.max(self.scale(n))),
                scale_rule="σ_j = (2·range_j/n)/(ε/2k) per coordinate (largest shown)",
                sampler="exact: scalar Laplace per coordinate",
                support="R^(2k), projected to a preshape",
            )
        return Guarantee(
            mechanism="point-wise shape Laplace (S22 §2.5.2)" + (" (as published)" if self.as_published else ""),
            epsilon=self.epsilon,
            delta=0.0,
            sensitivity=float(2.0 * np.max(self.ranges) / n),
            metric="each aligned landmark coordinate (largest shown)",
            space=repr(self.space),
            exact=True,
            assumptions=assumptions,
            **fields,
        )
