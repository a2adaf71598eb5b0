"""Fréchet means of Dask arrays (the ``[dask]`` extra): the data are never materialised.

Every pass of :func:`geodp.frechet.frechet_mean` (one per Karcher-flow iteration, one in all on
flat spaces) maps a per-chunk function over the chunks of ``X`` and combines the per-chunk sums,
so memory does not grow with ``n`` and the same code runs on a ``dask.distributed`` cluster.
Validation (and, in :class:`~geodp.models.PrivateFrechetMean`, the invalid-record policy and
the clipping) happens chunk by chunk inside the same passes, each chunk in sub-blocks of about
8 MB, so that a pass's temporaries do not grow with the chunk size either. dask is imported only
here.

Memory then depends on the chunk size only, provided the Dask array reads its chunks lazily: since
dask 2024.12, ``dask.array.from_array`` copies a NumPy array into memory, a ``numpy.memmap``
included (dask issue 11850), so a store on disk is best read through an array-like without a
``copy`` method: :func:`read_npy` for a ``.npy`` file, or zarr / h5py datasets.
"""

from __future__ import annotations

import functools
import os

import numpy as np

from geodp.errors import GeodpError, InvalidDataError, InvalidParameterError, MissingDependencyError, NotOnManifoldError
from geodp.frechet import _BLOCK_VALUES
from geodp.validation import check_real_dtype

__all__ = ["DaskRecords", "read_npy"]


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
        sub, sub_counts = prepare(block[start:start + rows])
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
            raise InvalidDataError(f"X must have shape (n, {shape}) with n >= 1 for {space!r}, got {X.shape}.")
        check_real_dtype(X.dtype, "X")  # the in-memory rule and error
        X = X.rechunk({axis: -1 for axis in range(1, X.ndim)})
        self.space, self.X, self.n = space, X, int(X.shape[0])
        self.chunks = X.to_delayed().ravel().tolist()
        self.prepare = prepare or functools.partial(checked_block, space)
        self.refuse_invalid = refuse_invalid
        # Sub-blocks of a chunk: as many records as an in-memory block (about 8 MB of a pass's
        # temporaries per record value), so that memory depends on neither n nor the chunk size.
        self.rows = max(1, _BLOCK_VALUES // max(1, int(space._karcher_row_values)))
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


class _NpyStore:
    """A ``.npy`` file as a lazy array-like for ``dask.array.from_array``: ``shape``, ``dtype``,
    ``ndim`` and slicing, which maps the file and returns the slice (page-cache pages, no copy of
    the file). Not the ``numpy.memmap`` itself, which ``from_array`` would copy into memory (it
    has a ``copy`` method). Only the path is pickled to a worker."""

    def __init__(self, path):
        mapped = np.load(path, mmap_mode="r")
        self.path, self.shape, self.dtype, self.ndim = path, mapped.shape, mapped.dtype, mapped.ndim

    def __getitem__(self, key):
        return np.load(self.path, mmap_mode="r")[key]


def read_npy(path, chunk_records: int = 1_000_000):
    """A ``.npy`` file of records as a lazy Dask array, read chunk by chunk, never copied whole.

    ``dask.array.from_array(numpy.load(path, mmap_mode="r"))`` looks lazy but, since dask
    2024.12, copies the whole file into memory (dask issue 11850); this reads each chunk from the
    mapped file when a pass needs it, so :func:`~geodp.frechet.frechet_mean` and
    :meth:`PrivateFrechetMean.fit <geodp.models.PrivateFrechetMean.fit>` use memory that depends
    on the chunk size only (measured: 154 MB of heap for 10⁸ SPD(3) records, 7.2 GB on disk).

    Parameters
    ----------
    path : str or os.PathLike
        A ``.npy`` file whose first axis indexes the records (write a large one chunk by chunk
        with ``numpy.lib.format.open_memmap``).
    chunk_records : int, default 1,000,000
        Records per Dask chunk (each chunk is further processed in sub-blocks of about 8 MB).

    Returns
    -------
    dask.array.Array

    Raises
    ------
    MissingDependencyError
        dask is not installed (``pip install "geodp[dask]"``).
    InvalidParameterError
        ``chunk_records`` is not a positive integer.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from geodp.frechet import frechet_mean
    >>> from geodp.manifolds import Sphere
    >>> path = os.path.join(tempfile.mkdtemp(), "directions.npy")
    >>> np.save(path, Sphere(2).random_point(1000, rng=0))
    >>> X = read_npy(path, chunk_records=300)
    >>> X.chunks[0]
    (300, 300, 300, 100)
    >>> bool(np.allclose(frechet_mean(Sphere(2), X), frechet_mean(Sphere(2), np.load(path))))
    True
    """
    if isinstance(chunk_records, bool) or not isinstance(chunk_records, (int, np.integer)) or chunk_records < 1:
        raise InvalidParameterError(f"chunk_records must be a positive integer, got {chunk_records!r}.")
    try:
        import dask.array as da
    except ImportError:
        raise MissingDependencyError('read_npy needs dask: pip install "geodp[dask]"') from None
    store = _NpyStore(os.fspath(path))
    return da.from_array(store, chunks=(int(chunk_records),) + store.shape[1:])
