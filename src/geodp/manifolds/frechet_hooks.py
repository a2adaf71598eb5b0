"""What the Fréchet flow asks of a space: per-block statistics of the records.

:func:`geodp.frechet.frechet_mean` and the record passes of :mod:`geodp.records` see a
dataset as blocks (row slices in memory, chunks of a Dask array) and ask the space for sums
and maxima over a block, so blocks combine. :class:`FrechetFlowHooks` gives generic defaults
from the space's geometry; spaces override them with faster closed forms (one ``eigh`` per SPD
record, norms only on the sphere). The hooks are unvalidated and serve only those two modules.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["FrechetFlowHooks"]


class FrechetFlowHooks:
    """Mixin of :class:`~geodp.manifolds.Manifold`: the Fréchet flow's per-block hooks.

    Every quantity is a sum or a maximum over records, so the blocks of a pass combine.
    """

    # The flow of geodp.frechet sees the records as blocks (row slices in memory, chunks of a
    # Dask array); every quantity below is a sum or a maximum over records, so blocks combine.
    # Float64 temporaries per record in a pass (sets the rows of an in-memory block, ~8 MB).
    @property
    def _karcher_row_values(self) -> int:
        return math.prod(self.point_shape)

    # Does _karcher_direction measure distances exactly (a log at the cut locus is 0, a distance
    # is not)? Then the last pass also certifies uniqueness, without a pass of its own.
    _karcher_exact_distances = False
    # Does _karcher_direction(..., hessian=True) return per-block Hessian state for
    # _newton_direction(x, direction, states, grad_norm, tol) (in-memory records only)?
    _karcher_newton = False

    def _checked_records(self, X: np.ndarray) -> np.ndarray:
        """Validate a float64 block ``(n, *point_shape)`` as :meth:`check_points` does (same
        errors, same returned points); spaces override it with a cheaper test that falls back
        to :meth:`check_points` whenever some record fails it."""
        return self.check_points(X, "X", batch_ndim=1)

    def _start_statistic(self, X: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """The block's share of the statistic :meth:`_karcher_start` maps to the start: ``Σ w_i x_i``."""
        return np.dot(weights, X.reshape(len(X), -1)).reshape(X.shape[1:])  # np.tensordot's product

    def _validated_start(self, X: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(points, start statistic)`` of a block in one pass (validation as :meth:`_checked_records`)."""
        points = self._checked_records(X)
        return points, self._start_statistic(points, weights)

    def _karcher_start(self, weighted_sum: np.ndarray) -> np.ndarray | None:
        """Start of the Karcher flow from the summed :meth:`_start_statistic` (by default the
        extrinsic mean ``Σ w_i x_i``), or None to start at the first record (the default: not
        every embedding has a usable extrinsic mean)."""
        return None

    def _karcher_direction(self, x, X, weights) -> tuple[np.ndarray, float, float]:
        """``(Σ w_i log_x x_i, ½ Σ w_i ρ²(x, x_i), max_i ρ(x, x_i))`` over the records ``X``:
        minus the Fréchet gradient, the objective and the largest distance (for the step bound)."""
        w = weights.reshape(weights.shape + (1,) * len(self.point_shape))
        logs = self._log(x, X)
        dists = np.asarray(self._norm(x, logs))
        return np.sum(w * logs, axis=0), 0.5 * float(np.sum(weights * dists**2)), float(np.max(dists))

    def _karcher_grad_norm(self, x, direction) -> float:
        """``‖direction‖`` at the point ``x``, in the metric (the flow's gradient norm); spaces
        override it with a single-point form."""
        return float(self._norm(x, direction))

    def _max_dist(self, x, X) -> float:
        """``max_i ρ(x, x_i)`` measured afresh (a log at the cut locus is 0, a distance is not)."""
        return float(np.max(self._dist(x, X)))

    def _coordinate_sum(self, X, weights) -> tuple[np.ndarray, int]:
        """Flat spaces: ``(Σ w_i φ(x_i) over the valid records, number of invalid records)``, the
        sum in the form :meth:`_closed_form_mean` takes (by default the chart coordinates)."""
        coords, invalid = self._record_coordinates(X)
        return weights @ np.where(invalid[:, None], 0.0, coords), int(np.count_nonzero(invalid))

    def _closed_form_mean(self, total) -> tuple[np.ndarray, float, float]:
        """Flat spaces: ``(mean, ‖φ(mean) − c‖, ‖c‖)`` for the summed :meth:`_coordinate_sum`
        ``c``: the point, and how far its chart image lands from ``c``, measured afresh on the
        returned point (a round trip: the gradient norm of F there, which certifies convergence)."""
        mean = self.from_coordinates(total)
        residual = self.to_coordinates(mean) - total
        # np.linalg.norm, without its wrapper
        return mean, float(np.sqrt(np.vdot(residual, residual))), float(np.sqrt(np.vdot(total, total)))

    def _record_coordinates(self, X) -> tuple[np.ndarray, np.ndarray]:
        """Flat spaces: ``(coordinates, invalid)`` of a block of records, NaN where invalid."""
        invalid = ~np.asarray(self._records_belong(X))
        coords = np.full((len(invalid), self.dim), np.nan)
        if not np.all(invalid):
            coords[~invalid] = self.to_coordinates(self._canonical_records(np.asarray(X, dtype=float)[~invalid]))
        return coords, invalid

    def _canonical_records(self, X: np.ndarray) -> np.ndarray:
        """Records known to be valid in the form :meth:`check_points` returns."""
        return self._canonical(X)
