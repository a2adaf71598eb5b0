"""The records of a dataset as blocks, one protocol for in-memory arrays and Dask arrays.

A statistic computed in passes (the Karcher flow of :func:`geodp.frechet.frechet_mean`, the
chart mean of flat spaces) sees the records only through an object with ``n``, ``start()``,
``validate()``, ``map(part, *args)`` (one pass: ``part(*args, block, block_weights)`` on every
block), ``first()``, ``raise_invalid(count=None)`` and ``keeps_hessian``:
:class:`InMemoryRecords` (row blocks of about 8 MB of temporaries) and :class:`DaskRecords`
(the chunks of a Dask array, validated and prepared chunk by chunk in every pass, never
materialised). dask is imported only inside :class:`DaskRecords`' passes.
"""

from __future__ import annotations

import functools
import struct

import numpy as np

from geodp.errors import GeodpError, InvalidDataError, InvalidParameterError, NotOnManifoldError
from geodp.validation import check_finite_array, check_real_dtype
from geodp.work import count

__all__ = ["BLOCK_VALUES", "DaskRecords", "InMemoryRecords", "checked_block", "is_dask", "normalised_weights"]


def is_dask(X) -> bool:
    """Whether ``X`` is a Dask array (checked without importing dask)."""
    return type(X).__module__.startswith("dask.") and hasattr(X, "to_delayed")


BLOCK_VALUES = 2**20  # float64 values per in-memory block (8 MB): bounds every temporary


class InMemoryRecords:
    """Records of an in-memory dataset as row blocks (views, as long as validation changes
    nothing), with their normalised weights; :meth:`map` is one pass over the data. Blocks hold
    about 8 MB of the pass's temporaries (32,768 rows on the sphere and 16,384 on the
    hyperboloid, whose passes keep only n-vectors). Unless ``validated``, the first pass
    (:meth:`start` or :meth:`validate`) validates the blocks."""

    keeps_hessian = True  # the Newton state of a pass may be kept (it is the size of the data)
    # No instance dict: the object is most of a small call's fixed memory (~0.2 KB of 2.4 KB at n = 100, d = 2).
    __slots__ = ("space", "array", "n", "weights", "blocks", "n_passes", "validated")

    def __init__(self, space, X, weights=None, *, validated=False):
        arr = np.asarray(X) if validated else _validated_array(space, X)
        rows = max(1, BLOCK_VALUES // max(1, int(space._karcher_row_values)))
        self.n = arr.shape[0]
        self.weights = normalised_weights(weights, self.n)
        self.blocks = [arr] if self.n <= rows else [arr[i : i + rows] for i in range(0, self.n, rows)]
        self.space, self.array, self.n_passes, self.validated = space, arr, 0, validated or space.is_flat

    def _block_weights(self):
        start = 0
        for block in self.blocks:
            yield block, self.weights[start : start + len(block)]
            start += len(block)

    def map(self, part, *args):
        """``[part(*args, block, block_weights)]`` over the blocks."""
        self.n_passes += 1
        count("records", self.n)
        if len(self.blocks) == 1:  # n ≤ one block (n = 100): no generator of weight slices
            return [part(*args, self.blocks[0], self.weights)]
        return [part(*args, block, weights) for block, weights in self._block_weights()]

    def start(self):
        """One pass: validate the blocks (unless done) and sum the start statistic."""
        if self.validated:
            return sum(self.map(self.space._start_statistic))
        self.n_passes += 1
        count("records", self.n)
        try:
            parts = [self.space._validated_start(block, weights) for block, weights in self._block_weights()]
        except GeodpError:
            self.raise_invalid()
        self.blocks, self.validated = [p[0] for p in parts], True
        return sum(p[1] for p in parts)

    def validate(self):
        """One pass (if not done yet): validate the blocks."""
        if not self.validated:
            try:
                self.blocks = [self.space._checked_records(block) for block in self.blocks]
            except GeodpError:
                self.raise_invalid()
            self.n_passes, self.validated = self.n_passes + 1, True
            count("records", self.n)

    def first(self):
        return self.blocks[0][0]

    def raise_invalid(self, count=None):
        """Raise the validation error about the whole dataset (some record is invalid)."""
        self.space.check_points(self.array, "X", batch_ndim=1)
        raise InvalidDataError("X holds records that are not points of the space.")  # not reached


def _validated_array(space, X) -> np.ndarray:
    """``X`` as a float64 array of shape ``(n, *point_shape)``, or the usual validation error.
    Membership is checked block by block later (no whole-dataset temporaries)."""
    arr = np.asarray(X) if isinstance(X, np.ndarray) else None
    if arr is None or arr.dtype != np.float64 or arr.shape[1:] != space.point_shape or arr.shape[0] == 0:
        return space.check_points(X, "X", batch_ndim=1)
    return arr


def normalised_weights(weights, n: int) -> np.ndarray:
    """Weights summing to 1 (uniform when None), validated. Uniform weights are one value
    broadcast to ``n`` (a read-only view with stride 0 of an 8-byte ``bytes``, 137 bytes in all):
    a pass reads them as it reads any weights, and no n-vector is held (at n = 100, d = 2 that
    vector was 0.4× the input).

    Examples
    --------
    >>> w = normalised_weights(None, 4)
    >>> w.tolist(), w.strides, normalised_weights([1.0, 3.0], 2).tolist()
    ([0.25, 0.25, 0.25, 0.25], (0,), [0.25, 0.75])
    """
    if weights is None:  # np.broadcast_to's view, made directly (half its time at n = 100); read-only as its buffer
        return np.ndarray((n,), buffer=struct.pack("d", 1.0 / n), strides=(0,))
    w = check_finite_array(weights, "weights", min_ndim=1)
    if w.shape != (n,):
        raise InvalidDataError(f"weights must have shape ({n},), got {w.shape}.")
    if np.any(w < 0) or w.sum() <= 0:
        raise InvalidParameterError("weights must be non-negative with a positive sum.")
    return w / w.sum()


def checked_block(space, block):
    """Validate one chunk for :func:`~geodp.frechet.frechet_mean`: ``(points, (n_invalid,))``;
    flat spaces validate inside their coordinate pass, so their chunks pass through."""
    if space.is_flat:
        return block, (0,)
    try:
        return space.check_points(block, "X", batch_ndim=1), (0,)
    except GeodpError:
        return None, (int(np.count_nonzero(space.invalid_records(block))),)


def _chunk_part(prepare, part, args, block, n, rows):
    """``(parts, counts)`` of one chunk: ``part`` on each of its sub-blocks of ``rows`` records
    (prepared one by one, so that every temporary is a sub-block's, whatever the chunk size),
    ``counts`` summed over them; ``parts`` is None if some record was invalid (the pass raises)."""
    block = np.asarray(block, dtype=np.float64)
    parts, counts = [], None
    for start in range(0, max(block.shape[0], 1), rows):  # an empty chunk is prepared once
        sub, sub_counts = prepare(block[start : start + rows])
        counts = sub_counts if counts is None else tuple(a + b for a, b in zip(counts, sub_counts))
        if sub is None or parts is None:
            parts = None  # keep counting the invalid records of the chunk, compute nothing more
            continue
        parts.append(part(*args, sub, np.full(sub.shape[0], 1.0 / n)))
    return parts, counts


def _start_part(space, block, weights):
    return space._start_statistic(block, weights)


class DaskRecords:
    """The records of a Dask array, validated (and prepared) chunk by chunk in every pass.

    Parameters
    ----------
    space : Manifold
    X : dask.array.Array, shape (n, *space.point_shape)
        Chunked along the first axis (other axes are merged into one chunk). Each chunk is
        processed in sub-blocks of ``rows`` records (the rows of an in-memory block).
    prepare : callable, optional
        ``prepare(block) -> (points, counts)``: validates one chunk; ``counts[0]`` is its number
        of invalid records. Default :func:`checked_block`.
    refuse_invalid : str or False, optional
        Message of the :class:`~geodp.errors.NotOnManifoldError` raised after a pass that met
        an invalid record; default a message with their number; False: ``prepare`` replaced
        them (``on_invalid="center"``), do not raise.

    Examples
    --------
    >>> import dask.array as da
    >>> import numpy as np
    >>> from geodp.frechet import frechet_mean
    >>> from geodp.manifolds import Sphere
    >>> X = da.from_array(np.array([[1.0, 0.0], [0.0, 1.0]]), chunks=1)
    >>> np.round(frechet_mean(Sphere(1), X), 6).tolist()
    [0.707107, 0.707107]
    """

    def __init__(self, space, X, prepare=None, refuse_invalid=None):
        if X.ndim != len(space.point_shape) + 1 or tuple(X.shape[1:]) != space.point_shape or X.shape[0] == 0:
            shape = ", ".join(map(str, space.point_shape))
            raise InvalidDataError(
                f"X must have shape (n, {shape}) with n >= 1 for {space!r}, got {X.shape}.{space._shape_hint(X.shape)}"
            )
        check_real_dtype(X.dtype, "X")  # the in-memory rule and error
        X = X.rechunk({axis: -1 for axis in range(1, X.ndim)})
        self.space, self.X, self.n = space, X, int(X.shape[0])
        self.chunks = X.to_delayed().ravel().tolist()
        self.prepare = prepare or functools.partial(checked_block, space)
        self.refuse_invalid = refuse_invalid
        # Sub-blocks of a chunk: as many records as an in-memory block (about 8 MB of a pass's
        # temporaries per record value), so that memory depends on neither n nor the chunk size.
        self.rows = max(1, BLOCK_VALUES // max(1, int(space._karcher_row_values)))
        self.n_passes, self.counts = 0, None

    keeps_hessian = False  # per-chunk Newton state would grow with n: gradient steps only

    def start(self):
        """One pass: the summed start statistic (:meth:`~geodp.manifolds.Manifold._start_statistic`)."""
        return sum(self.map(_start_part, self.space))

    def validate(self):
        """Nothing to do: every pass validates its chunks."""

    def map(self, part, *args):
        """One pass: ``part(*args, points, weights)`` on every prepared chunk (uniform weights)."""
        import dask

        self.n_passes += 1
        count("records", self.n)
        task = dask.delayed(_chunk_part)
        results = dask.compute(*[task(self.prepare, part, args, chunk, self.n, self.rows) for chunk in self.chunks])
        self.counts = tuple(int(sum(c)) for c in zip(*(r[1] for r in results)))
        if self.counts[0] and self.refuse_invalid is not False:
            self.raise_invalid()
        return [p for r in results if r[0] is not None for p in r[0]]

    def first(self):
        """The first record, prepared (a fallback start of the flow)."""
        return self.prepare(np.asarray(self.X[:1].compute(), dtype=np.float64))[0][0]

    def raise_invalid(self, count=None):
        count = self.counts[0] if count is None else count
        raise NotOnManifoldError(
            self.refuse_invalid or f"{count} point(s) of X are not on {self.space!r}. {self.space._membership_hint}"
        )
