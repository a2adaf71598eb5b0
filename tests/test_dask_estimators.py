"""Every estimator on the same records, in memory or in Dask chunks: the same release, report and
refusals, one pass over the chunks, never materialised (issue 20)."""

import warnings

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

from geodp.accountant import BudgetAccountant  # noqa: E402
from geodp.errors import (  # noqa: E402
    ApproximateSamplerWarning,
    InvalidDataError,
    InvalidParameterError,
    NotOnManifoldError,
    PrivacyLeakWarning,
)
from geodp.manifolds import SPD, Euclidean, Sphere  # noqa: E402
from geodp.models import PrivateGeodesicRegression, PrivateLinearRegression, PrivateMDM  # noqa: E402

CHUNKS = [64, 250, (37, 100, 1, 462)]  # the last uneven, with a one-record chunk
LE = SPD(2, metric="log-euclidean")


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ApproximateSamplerWarning)
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        yield


def _lazy(a, chunks):
    return da.from_array(a, chunks=(chunks,) + a.shape[1:])


def _counted(a, chunks, reads):
    """``a`` as a Dask array whose chunk reads are counted."""

    def read(block):
        if block.size:  # dask also calls it on empty blocks to infer the output
            reads.append(len(block))
        return block

    return _lazy(a, chunks).map_blocks(read, dtype=a.dtype)


def _linear_data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 10, size=(n, 2))
    X[:5] = 12.0  # clipped into bounds_X
    y = np.column_stack([1 + X @ [0.5, -0.2], X @ [0.1, 0.3]]) + rng.normal(scale=0.5, size=(n, 2))
    return X, y


def _same_linear(a, b):
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-12, atol=0)
    np.testing.assert_allclose(b.intercept_, a.intercept_, rtol=1e-12, atol=0)
    assert str(b.privacy_report_) == str(a.privacy_report_)
    assert b.privacy_report_.to_dict() == a.privacy_report_.to_dict()
    assert b.curator_diagnostics_ == a.curator_diagnostics_


# ----------------------------------------------------------------------- linear regression
@pytest.mark.parametrize("chunks", CHUNKS)
@pytest.mark.parametrize("targets", [1, 2])
def test_linear_regression_on_dask_releases_the_in_memory_coefficients(chunks, targets):
    X, y = _linear_data()
    y = y[:, 0] if targets == 1 else y
    kwargs = dict(epsilon=0.5, bounds_X=(0, 10), bounds_y=(-4, 8), random_state=3)
    memory = PrivateLinearRegression(**kwargs).fit(X, y)
    lazy = PrivateLinearRegression(**kwargs).fit(_lazy(X, chunks), _lazy(y, chunks))
    _same_linear(memory, lazy)
    assert memory.curator_diagnostics_.n_clipped_x == 5
    mixed = PrivateLinearRegression(**kwargs).fit(_lazy(X, chunks), y)  # y in memory: aligned to X's chunks
    _same_linear(memory, mixed)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_linear_regression_invalid_records_in_a_chunk_are_replaced_as_in_memory(fit_intercept):
    X, y = _linear_data()
    X[[3, 400], 1], y[250, 0] = np.nan, np.inf
    kwargs = dict(epsilon=1.0, bounds_X=(0, 10), bounds_y=(-4, 8), on_invalid="center", random_state=8)
    memory = PrivateLinearRegression(fit_intercept=fit_intercept, **kwargs).fit(X, y)
    lazy = PrivateLinearRegression(fit_intercept=fit_intercept, **kwargs).fit(_lazy(X, CHUNKS[2]), _lazy(y, 64))
    _same_linear(memory, lazy)


def test_linear_regression_bounds_from_the_data_are_the_in_memory_ones():
    X, y = _linear_data()
    X[7, 0] = np.nan  # not a valid record: excluded from the data bounds, then replaced
    kwargs = dict(epsilon=1.0, on_invalid="center", random_state=2)
    memory = PrivateLinearRegression(**kwargs).fit(X, y)
    lazy = PrivateLinearRegression(**kwargs).fit(_lazy(X, CHUNKS[2]), _lazy(y, 250))
    _same_linear(memory, lazy)


def test_linear_regression_refuses_an_invalid_record_in_a_chunk_after_the_charge_with_the_in_memory_message():
    X, y = _linear_data()
    X[101, 0] = np.nan
    errors = []
    for X_in, y_in in [(X, y), (_lazy(X, CHUNKS[2]), _lazy(y, CHUNKS[2]))]:
        budget = BudgetAccountant(epsilon=2.0)
        model = PrivateLinearRegression(epsilon=0.5, bounds_X=(0, 10), bounds_y=(-4, 8), accountant=budget)
        with pytest.raises(InvalidDataError) as error:
            model.fit(X_in, y_in)
        assert budget.total_spent == (0.5, 0.0)  # refused after the charge, in memory and on Dask
        errors.append(str(error.value))
    assert errors[0] == errors[1]


def test_linear_regression_public_refusals_of_dask_input_come_before_the_charge():
    budget = BudgetAccountant(epsilon=1.0)
    model = PrivateLinearRegression(epsilon=0.5, bounds_X=(0, 1), bounds_y=(0, 1), accountant=budget)
    with pytest.raises(InvalidDataError, match="shape"):
        model.fit(da.zeros((50, 2), chunks=10), da.zeros(40, chunks=10))
    unknown = da.zeros((50, 2), chunks=10)
    unknown = unknown[unknown[:, 0] > -1]  # chunk sizes unknown until computed
    with pytest.raises(InvalidDataError, match="compute_chunk_sizes"):
        model.fit(unknown, da.zeros(50, chunks=10))
    assert budget.total_spent == (0.0, 0.0)
    plan = model.plan(da.zeros((300, 2), chunks=7), da.zeros(300, chunks=7))
    assert plan == model.plan(np.zeros((300, 2)), np.zeros(300))
    assert str(plan.report) == str(model.plan(np.zeros((300, 2)), np.zeros(300)).report)


# ----------------------------------------------------------------------- geodesic regression
def _geodesic_data(space, n=600, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-0.1, 1.1, size=(n, 2))  # some covariates clipped into x_bounds
    if space is LE:
        Y = LE.random_point(n, rng=seed)
    else:
        Y = 0.2 * x @ np.array([[1.0, 0.0, 0.5], [0.0, -1.0, 0.2]]) + rng.normal(scale=0.3, size=(n, 3))
    return x, Y


def _geodesic(space, **extra):
    center = np.eye(2) if space is LE else np.zeros(3)
    kwargs = dict(epsilon=1.0, center=center, radius=1.0, x_bounds=([0.0, 0.0], [1.0, 1.0]), random_state=6)
    return PrivateGeodesicRegression(space, **(kwargs | extra))


def _same_geodesic(a, b):
    np.testing.assert_allclose(b.intercept_, a.intercept_, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-12, atol=1e-15)
    assert str(b.privacy_report_) == str(a.privacy_report_)
    assert b.privacy_report_.to_dict() == a.privacy_report_.to_dict()
    assert b.curator_diagnostics_ == a.curator_diagnostics_


@pytest.mark.parametrize("chunks", CHUNKS)
@pytest.mark.parametrize("space", [Euclidean(3), LE], ids=["euclidean", "log-euclidean"])
def test_flat_geodesic_regression_on_dask_releases_the_in_memory_geodesic(space, chunks):
    x, Y = _geodesic_data(space)
    memory = _geodesic(space).fit(x, Y)
    lazy = _geodesic(space).fit(_lazy(x, chunks), _lazy(Y, 100))
    _same_geodesic(memory, lazy)
    assert memory.curator_diagnostics_.n_clipped_x > 0 and memory.curator_diagnostics_.n_clipped_y > 0
    one = _geodesic(space, x_bounds=(0.0, 1.0)).fit(x[:, 0], Y)  # covariates of shape (n,)
    _same_geodesic(one, _geodesic(space, x_bounds=(0.0, 1.0)).fit(_lazy(x[:, 0], chunks), Y))


@pytest.mark.parametrize("space", [Euclidean(3), LE], ids=["euclidean", "log-euclidean"])
def test_flat_geodesic_regression_invalid_records_in_a_chunk_behave_as_in_memory(space):
    x, Y = _geodesic_data(space)
    x[12, 1], Y[[300, 555]] = np.inf, np.nan
    _same_geodesic(
        _geodesic(space, on_invalid="center").fit(x, Y),
        _geodesic(space, on_invalid="center").fit(_lazy(x, CHUNKS[2]), _lazy(Y, CHUNKS[2])),
    )
    errors = []
    for x_in, Y_in in [(x, Y), (_lazy(x, CHUNKS[2]), _lazy(Y, 64))]:
        budget = BudgetAccountant(epsilon=2.0)
        with pytest.raises(NotOnManifoldError) as error:
            _geodesic(space, accountant=budget).fit(x_in, Y_in)
        assert budget.total_spent == (1.0, 0.0)
        errors.append(str(error.value))
    assert errors[0] == errors[1]


@pytest.mark.parametrize(
    "space, extra",
    [(Sphere(2), {}), (Euclidean(3), {"residual_bound": 0.5}), (Euclidean(3), {"as_published": True})],
    ids=["curved", "clipped-residuals", "as-published"],
)
def test_geodesic_regression_without_the_affine_route_refuses_dask_input_before_the_charge(space, extra):
    warnings.simplefilter("always", PrivacyLeakWarning)  # as_published runs only where it is seen
    center = np.array([0.0, 0.0, 1.0]) if isinstance(space, Sphere) else np.zeros(3)
    budget = BudgetAccountant(epsilon=5.0)
    model = PrivateGeodesicRegression(
        space, epsilon=1.0, center=center, radius=0.5, x_bounds=(0, 1), accountant=budget, **extra
    )
    with pytest.raises(InvalidParameterError, match="Dask input") as error:
        model.fit(da.zeros(100, chunks=10), da.zeros((100, 3), chunks=10))
    assert "compute()" in str(error.value)
    with pytest.raises(InvalidParameterError, match="Dask input"):
        model.plan(np.zeros(100), da.zeros((100, 3), chunks=10))
    assert budget.total_spent == (0.0, 0.0)


# ----------------------------------------------------------------------- MDM
@pytest.mark.parametrize("chunks", CHUNKS)
def test_mdm_on_dask_releases_the_in_memory_class_means(chunks):
    X = LE.random_point(600, rng=3)
    X[[10, 500]] = np.nan  # replaced by the centre in their classes
    y = np.arange(600) % 3
    kwargs = dict(epsilon=1.0, center=np.eye(2), radius=2.0, on_invalid="center", random_state=4)
    memory = PrivateMDM(LE, **kwargs).fit(X, y)
    lazy = PrivateMDM(LE, **kwargs).fit(_lazy(X, chunks), _lazy(y, 100))  # labels on Dask too: public
    np.testing.assert_allclose(lazy.covmeans_, memory.covmeans_, rtol=1e-12, atol=0)
    assert str(lazy.privacy_report_) == str(memory.privacy_report_)
    assert lazy.curator_diagnostics_ == memory.curator_diagnostics_
    assert sum(d.n_invalid for d in lazy.curator_diagnostics_.per_class) == 2
    np.testing.assert_array_equal(lazy.predict(X[20:40]), memory.predict(X[20:40]))


def test_mdm_on_a_curved_space_gives_the_in_memory_means():
    space = SPD(2)
    X, y = space.random_point(300, rng=1), np.arange(300) % 2
    kwargs = dict(epsilon=1.0, center=np.eye(2), radius=2.0, random_state=4)
    memory = PrivateMDM(space, **kwargs).fit(X, y)
    lazy = PrivateMDM(space, **kwargs).fit(_lazy(X, (37, 100, 1, 162)), y)
    # the Karcher flow on Dask takes gradient steps only (no per-record Newton state): the same
    # mean to its tolerance, not the same iterations
    np.testing.assert_allclose(lazy.covmeans_, memory.covmeans_, rtol=0, atol=1e-9)
    assert str(lazy.privacy_report_) == str(memory.privacy_report_)


def test_mdm_invalid_record_and_kng_refusals_are_the_in_memory_ones():
    X, y = LE.random_point(200, rng=2), np.arange(200) % 2
    X[33] = np.nan
    errors = []
    for X_in in (X, _lazy(X, CHUNKS[0])):
        budget = BudgetAccountant(epsilon=2.0)
        with pytest.raises(NotOnManifoldError) as error:
            PrivateMDM(LE, epsilon=1.0, center=np.eye(2), radius=2.0, accountant=budget).fit(X_in, y)
        assert budget.total_spent == (1.0, 0.0)
        errors.append(str(error.value))
    assert errors[0] == errors[1]
    budget = BudgetAccountant(epsilon=2.0)
    kng = PrivateMDM(SPD(2), epsilon=1.0, center=np.eye(2), radius=1.0, mechanism="kng", accountant=budget)
    with pytest.raises(InvalidParameterError, match="kng"):
        kng.fit(_lazy(SPD(2).random_point(40, rng=0), 10), np.arange(40) % 2)
    assert budget.total_spent == (0.0, 0.0)


# ----------------------------------------------------------------------- never materialised
def test_dask_input_is_never_materialised_and_each_chunk_is_read_once(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the whole Dask array was materialised")

    X, y = _linear_data(n=900)
    x, Y = _geodesic_data(Euclidean(3), n=900)
    reads = {"X": [], "y": [], "x": [], "Y": []}
    lazy = {
        "X": _counted(X, CHUNKS[2][:3] + (762,), reads["X"]),
        "y": _counted(y, 300, reads["y"]),
        "x": _counted(x, 200, reads["x"]),
        "Y": _counted(Y, CHUNKS[2][:3] + (762,), reads["Y"]),
    }
    monkeypatch.setattr(da.Array, "__array__", refuse)
    monkeypatch.setattr(da.Array, "compute", refuse)
    linear = PrivateLinearRegression(epsilon=1.0, bounds_X=(0, 10), bounds_y=(-4, 8), random_state=0)
    linear.fit(lazy["X"], lazy["y"])
    geodesic = _geodesic(Euclidean(3)).fit(lazy["x"], lazy["Y"])
    monkeypatch.undo()
    assert sorted(reads["X"]) == sorted(CHUNKS[2][:3] + (762,))  # one pass: every chunk read once
    assert sorted(reads["y"]) == [300, 300, 300]
    assert sorted(reads["x"]) == [100] + [200] * 4
    assert sorted(reads["Y"]) == sorted(CHUNKS[2][:3] + (762,))
    assert np.all(np.isfinite(linear.coef_)) and np.all(np.isfinite(geodesic.coef_))


# ----------------------------------------------------------------------- distributed
def test_every_estimator_runs_on_a_distributed_local_cluster():
    distributed = pytest.importorskip("dask.distributed")
    X, y = _linear_data()
    x, Y = _geodesic_data(LE)
    Z, labels = LE.random_point(300, rng=5), np.arange(300) % 2
    linear_kwargs = dict(epsilon=1.0, bounds_X=(0, 10), bounds_y=(-4, 8), random_state=1)
    mdm_kwargs = dict(epsilon=1.0, center=np.eye(2), radius=2.0, random_state=1)
    memory = (
        PrivateLinearRegression(**linear_kwargs).fit(X, y),
        _geodesic(LE).fit(x, Y),
        PrivateMDM(LE, **mdm_kwargs).fit(Z, labels),
    )
    with (
        distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster,
        distributed.Client(cluster),
    ):
        linear = PrivateLinearRegression(**linear_kwargs).fit(_lazy(X, CHUNKS[2]), _lazy(y, 64))
        geodesic = _geodesic(LE).fit(_lazy(x, 250), _lazy(Y, CHUNKS[2]))
        mdm = PrivateMDM(LE, **mdm_kwargs).fit(_lazy(Z, 64), labels)
    _same_linear(memory[0], linear)
    _same_geodesic(memory[1], geodesic)
    np.testing.assert_allclose(mdm.covmeans_, memory[2].covmeans_, rtol=1e-12, atol=0)


def test_exact_sums_beyond_float64_range_round_to_infinity_not_an_error():
    """A sum past float64's range is ±inf, as a float sum would give (it raised a bare
    OverflowError, whose text is not one of the fixed refusals)."""
    from geodp.models.record_passes import _exact_value, exact_column_sums

    column = np.full((1000, 1), 1.79e308)
    assert _exact_value(exact_column_sums(column)[0]) == np.inf
    assert _exact_value(exact_column_sums(-column)[0]) == -np.inf
