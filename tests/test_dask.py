"""Dask input: the same answers as in memory, one pass over the chunks per step, on a cluster too."""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

from geodp.errors import NotOnManifoldError  # noqa: E402
from geodp.frechet import frechet_mean  # noqa: E402
from geodp.manifolds import SPD, Sphere  # noqa: E402
from geodp.models import PrivateFrechetMean  # noqa: E402

SPHERE, AI, LE = Sphere(3), SPD(3), SPD(3, metric="log-euclidean")
UNEVEN = ((37, 100, 1, 62),)


def _data(space):
    rng = np.random.default_rng(1)
    if space is SPHERE:
        return SPHERE.project(rng.normal(size=(200, 4)) * 0.2 + [1.0, 0, 0, 0])
    return space.random_point(200, rng=2)


def _counted(X, calls):
    """The Dask array of ``X`` in uneven chunks, counting every chunk read."""

    def read(block):
        if len(block):  # dask also calls it on an empty block to infer the output
            calls.append(len(block))
        return block

    return da.from_array(X, chunks=UNEVEN + ((X.shape[1],),) * (X.ndim - 1)).map_blocks(read, dtype=X.dtype)


@pytest.mark.parametrize("space", [SPHERE, AI, LE], ids=["sphere", "affine", "log-euclidean"])
def test_dask_mean_is_the_in_memory_mean_with_one_pass_per_step(space):
    X = _data(space)
    expected = frechet_mean(space, X, tol=1e-13)
    calls = []
    mean, info = frechet_mean(space, _counted(X, calls), tol=1e-13, return_info=True)
    np.testing.assert_allclose(mean, expected, rtol=0, atol=1e-10)
    assert len(calls) == 4 * info.n_passes  # every chunk read exactly once per pass
    if space is LE:
        assert info.n_passes == 1
    else:  # start + one per iteration (+ one per rejected trial step) + the uniqueness check
        assert info.n_iter + 1 <= info.n_passes <= 2 * info.n_iter + 2


@pytest.mark.parametrize("space", [SPHERE, LE], ids=["sphere", "log-euclidean"])
def test_dask_fit_releases_what_the_in_memory_fit_releases(space):
    X = _data(space)
    X[[3, 150]] = np.nan  # replaced by the centre under on_invalid="center"
    center = X[0] if space is SPHERE else np.eye(3)
    kwargs = dict(epsilon=1.0, center=center, radius=0.4, on_invalid="center", random_state=5)
    memory = PrivateFrechetMean(space, **kwargs).fit(X)
    lazy = PrivateFrechetMean(space, **kwargs).fit(da.from_array(X, chunks=UNEVEN + ((X.shape[1],),) * (X.ndim - 1)))
    np.testing.assert_allclose(lazy.mean_, memory.mean_, rtol=0, atol=1e-10)
    assert lazy.curator_diagnostics_.n_invalid == memory.curator_diagnostics_.n_invalid == 2
    assert lazy.curator_diagnostics_.n_clipped == memory.curator_diagnostics_.n_clipped > 0
    assert str(lazy.privacy_report_) == str(memory.privacy_report_)


def test_dask_invalid_record_raises_the_public_message_of_the_in_memory_fit():
    X = _data(SPHERE)
    X[7] *= 2.0
    kwargs = dict(epsilon=1.0, center=X[0], radius=0.4)
    messages = []
    for data in (X, da.from_array(X, chunks=50)):
        with pytest.raises(NotOnManifoldError) as err:
            PrivateFrechetMean(SPHERE, **kwargs).fit(data)
        messages.append(str(err.value))
    assert messages[0] == messages[1] and "7" not in messages[0]
    with pytest.raises(NotOnManifoldError, match="1 point"):
        frechet_mean(SPHERE, da.from_array(X, chunks=50))


def test_same_code_on_a_distributed_local_cluster():
    distributed = pytest.importorskip("distributed")
    X = _data(AI)
    expected = frechet_mean(AI, X, tol=1e-13)
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cluster:
        with distributed.Client(cluster):
            mean = frechet_mean(AI, da.from_array(X, chunks=UNEVEN + ((3,), (3,))), tol=1e-13)
            le = frechet_mean(LE, da.from_array(X, chunks=64))
    np.testing.assert_allclose(mean, expected, rtol=0, atol=1e-10)
    np.testing.assert_allclose(le, frechet_mean(LE, X), rtol=0, atol=1e-10)


def test_kng_on_a_dask_array_is_refused_before_the_accountant_is_charged():
    from geodp.accountant import BudgetAccountant
    from geodp.errors import InvalidParameterError

    X = _data(SPHERE)
    accountant = BudgetAccountant(epsilon=5.0)
    model = PrivateFrechetMean(SPHERE, epsilon=1.0, center=X[0], radius=0.4, mechanism="kng", accountant=accountant)
    with pytest.raises(InvalidParameterError, match="in memory"):
        model.fit(da.from_array(X, chunks=50))
    assert accountant.spent == []
    model.fit(X)  # in memory the same model releases and pays
    assert len(accountant.spent) == 1


def _lazy_copies(block, k):
    """``k`` copies of ``block`` as a Dask array of ``k`` chunks, each chunk a fresh copy made when
    it is read (so that holding on to the chunks would cost memory, as with data read from disk)."""
    base = da.from_array(block, chunks=block.shape)
    return da.concatenate([base] * k).map_blocks(np.copy, dtype=block.dtype)


def _traced_peak(fn):
    """Peak traced allocation of ``fn`` on dask's synchronous scheduler. With worker threads the
    peak also depends on how many chunks the scheduler happens to hold in flight (bounded by the
    workers, not by n, but varying from run to run: up to 6 B/record of noise measured under load),
    which would hide the per-record allocation this measures (0.7-0.9 B/record, all bookkeeping)."""
    import tracemalloc

    import dask

    tracemalloc.start()
    try:
        with dask.config.set(scheduler="synchronous"):
            fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("case", ["log-euclidean mean", "sphere fit"])
def test_dask_peak_memory_does_not_grow_with_n(case, monkeypatch):
    """2 and 6 chunks of 20,000 records (4 sub-blocks each): the traced peak may grow by the
    per-chunk bookkeeping (the graph, a few small results: ~20 kB a chunk), never by an array of
    length n — a float64 vector of n entries would add 8 bytes per extra record, a chunk kept in
    memory 72 (SPD(3)) or 32 (Sphere(3)); the bound allows 4 bytes. A single chunk of the 6·20,000
    records peaks below twice its own size: its temporaries are a sub-block's, not the chunk's."""
    import geodp.records

    monkeypatch.setattr(geodp.records, "BLOCK_VALUES", 5000 * 9)
    c, rng = 20_000, np.random.default_rng(3)
    if case == "sphere fit":
        block = SPHERE.project(rng.normal(size=(c, 4)) * 0.2 + [1.0, 0, 0, 0])

        def run(X):
            PrivateFrechetMean(SPHERE, epsilon=1.0, center=block[0], radius=0.4, random_state=0).fit(X)
    else:
        block = LE.random_point(c, rng=rng)

        def run(X):
            frechet_mean(LE, X)

    run(_lazy_copies(block[:100], 2))  # warm the caches (imports, dask's tokenizers) untraced
    small, large = (_traced_peak(lambda: run(_lazy_copies(block, k))) for k in (2, 6))  # noqa: B023
    assert large - small < 4 * (6 - 2) * c, (small, large)
    whole = np.concatenate([block] * 6)  # without sub-blocks: 4.9x (mean), 7.9x (fit)
    assert _traced_peak(lambda: run(da.from_array(whole, chunks=whole.shape))) < 2 * whole.nbytes


def test_chunks_in_sub_blocks_give_the_in_memory_mean_and_count_every_invalid_record(monkeypatch):
    """Sub-blocks of 7 records inside chunks of up to 100: the same mean and the same passes as
    whole chunks; invalid records in different sub-blocks of one chunk are all counted."""
    import geodp.records

    monkeypatch.setattr(geodp.records, "BLOCK_VALUES", 7 * 9)
    for space in (AI, LE):
        X = _data(space)
        calls = []
        mean, info = frechet_mean(space, _counted(X, calls), tol=1e-13, return_info=True)
        np.testing.assert_allclose(mean, frechet_mean(space, X, tol=1e-13), rtol=0, atol=1e-10)
        assert len(calls) == 4 * info.n_passes
    X = _data(SPHERE)
    X[[40, 50, 120]] *= 2.0  # three sub-blocks of the second chunk (records 37..136)
    with pytest.raises(NotOnManifoldError, match="^3 point"):
        frechet_mean(SPHERE, da.from_array(X, chunks=UNEVEN + ((4,),)))


@pytest.mark.parametrize("dtype", ["<U1", complex, object, bool])
def test_dask_dtype_is_accepted_or_refused_as_in_memory(dtype):
    """``frechet_mean``: the same error type and message for a NumPy array and its Dask array;
    booleans are accepted by both (as 0.0 and 1.0)."""
    X = np.zeros((4, 4), dtype=dtype)
    X[:, 0] = 1
    outcomes = []
    for data in (X, da.from_array(X, chunks=2)):
        try:
            outcomes.append(("ok", frechet_mean(SPHERE, data).tolist()))
        except Exception as err:
            outcomes.append((type(err).__name__, str(err)))
    assert outcomes[0] == outcomes[1], outcomes
    assert (outcomes[0][0] == "ok") == (dtype is bool), outcomes


def test_read_npy_is_lazy_and_gives_the_in_memory_mean(tmp_path, monkeypatch):
    """A 3.2 MB ``.npy`` of 100,000 Sphere(3) records: the mean through :func:`read_npy` is the
    in-memory mean, and the traced peak stays below a third of the file (the file is mapped, each
    chunk read when a pass needs it; a copy of the file would be traced in full)."""
    import geodp.records
    from geodp.dask_support import read_npy
    from geodp.errors import InvalidParameterError

    monkeypatch.setattr(geodp.records, "BLOCK_VALUES", 5000 * 9)
    X = SPHERE.project(np.random.default_rng(4).normal(size=(100_000, 4)) * 0.2 + [1.0, 0, 0, 0])
    path = tmp_path / "records.npy"
    np.save(path, X)
    lazy = read_npy(path, chunk_records=10_000)
    assert lazy.chunks[0] == (10_000,) * 10
    np.testing.assert_allclose(
        frechet_mean(SPHERE, lazy, tol=1e-13), frechet_mean(SPHERE, X, tol=1e-13), rtol=0, atol=1e-10
    )
    assert _traced_peak(lambda: frechet_mean(SPHERE, read_npy(path, chunk_records=10_000))) < X.nbytes / 3
    with pytest.raises(InvalidParameterError, match="chunk_records"):
        read_npy(path, chunk_records=0)
