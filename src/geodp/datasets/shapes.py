"""Real planar shapes: cell contours shipped with geomstats, as k-landmark configurations.

The 650 cell contours of geomstats' ``load_cells`` (two cell lines, three treatments) are closed
curves with 52–210 points each. :func:`contour_landmarks` turns one into ``k`` landmarks for
:class:`~geodp.manifolds.KendallShape`:

1. drop repeated consecutive points and orient the curve counterclockwise (positive signed area);
2. start at the contour point farthest from the centroid of the contour points;
3. place ``k`` landmarks at equal arc-length spacing from there.

Every step commutes with translation, rotation and scaling of the contour, so the landmarks of a
moved contour are the moved landmarks: the shape is well defined. Landmark ``j`` of two cells
then corresponds by arc-length position from the farthest point (pseudo-landmarks; there are no
anatomical landmarks on these cells).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from geodp.datasets.geomstats_sets import geomstats_datasets
from geodp.errors import InvalidDataError, InvalidParameterError
from geodp.validation import check_finite_array

__all__ = ["contour_landmarks", "load_cell_shapes", "CellShapes"]


def contour_landmarks(contour, n_landmarks: int) -> np.ndarray:
    """``n_landmarks`` equally spaced (in arc length) landmarks on a closed planar contour.

    Parameters
    ----------
    contour : array_like, shape (m, 2)
        Points along a closed curve (the last point connects back to the first).
    n_landmarks : int
        k ≥ 3.

    Returns
    -------
    numpy.ndarray, shape (n_landmarks, 2)

    Examples
    --------
    >>> quad = [[0.0, 0.0], [2.0, 0.0], [2.0, 1.0], [0.0, 3.0]]  # (0, 3) is farthest from the centroid
    >>> contour_landmarks(quad, 4).round(3).tolist()
    [[0.0, 3.0], [0.0, 0.793], [1.414, 0.0], [1.561, 1.439]]
    """
    if isinstance(n_landmarks, bool) or not isinstance(n_landmarks, (int, np.integer)) or n_landmarks < 3:
        raise InvalidParameterError(f"n_landmarks must be an integer >= 3, got {n_landmarks!r}.")
    c = check_finite_array(contour, "contour", min_ndim=2)
    if c.ndim != 2 or c.shape[1] != 2:
        raise InvalidDataError(f"contour must have shape (m, 2), got {c.shape}.")
    keep = np.linalg.norm(c - np.roll(c, 1, axis=0), axis=1) > 0
    c = c[keep] if keep.any() else c[:1]
    if len(c) < 3:
        raise InvalidDataError("contour must have at least 3 distinct points.")
    x, y = c[:, 0], c[:, 1]
    if np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y) < 0:
        c = c[::-1]
    start = int(np.argmax(np.linalg.norm(c - c.mean(axis=0), axis=1)))
    c = np.roll(c, -start, axis=0)
    closed = np.vstack([c, c[:1]])
    arc = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(closed, axis=0), axis=1))])
    targets = arc[-1] * np.arange(n_landmarks) / n_landmarks
    return np.stack([np.interp(targets, arc, closed[:, 0]), np.interp(targets, arc, closed[:, 1])], axis=1)


@dataclass(frozen=True)
class CellShapes:
    """Landmark configurations of real cells.

    Attributes
    ----------
    landmarks : numpy.ndarray, shape (n, k, 2)
    cell_lines : numpy.ndarray of str, shape (n,)
        ``"dlm8"`` or ``"dunn"``.
    treatments : numpy.ndarray of str, shape (n,)
        ``"control"``, ``"cytd"`` or ``"jasp"``.
    """

    landmarks: np.ndarray
    cell_lines: np.ndarray
    treatments: np.ndarray


def load_cell_shapes(n_landmarks: int = 8, *, cell_line=None, treatment=None) -> CellShapes:
    """Load geomstats' cell contours as ``n_landmarks``-landmark configurations.

    Needs the optional dependency geomstats (the ``geomstats`` extra: ``pip install -e ".[geomstats]"``
    in the root of a checkout of geodp; ``pip install "geodp[geomstats]"`` once geodp is published
    on a package index); the data ship inside it, nothing is downloaded.

    Parameters
    ----------
    n_landmarks : int, default 8
    cell_line : {"dlm8", "dunn"}, optional
    treatment : {"control", "cytd", "jasp"}, optional
        Keep only these cells.

    Examples
    --------
    >>> cells = load_cell_shapes(8, cell_line="dunn", treatment="control")
    >>> cells.landmarks.shape
    (204, 8, 2)
    """
    cells, lines, treatments = geomstats_datasets("load_cell_shapes").load_cells()
    lines, treatments = np.asarray(lines), np.asarray(treatments)
    for name, value, options in (("cell_line", cell_line, lines), ("treatment", treatment, treatments)):
        if value is not None and value not in set(options):
            raise InvalidParameterError(f"{name} must be one of {sorted(set(options))}, got {value!r}.")
    mask = np.ones(len(cells), dtype=bool)
    if cell_line is not None:
        mask &= lines == cell_line
    if treatment is not None:
        mask &= treatments == treatment
    landmarks = np.stack(
        [contour_landmarks(np.asarray(cells[i], dtype=float), n_landmarks) for i in np.flatnonzero(mask)]
    )
    return CellShapes(landmarks, lines[mask], treatments[mask])
