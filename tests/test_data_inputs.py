"""Issue 21, items 1–5: what geodp accepts as data and how it refuses the rest."""

from __future__ import annotations

import numpy as np
import pytest

from geodp.errors import InvalidDataError, InvalidParameterError, NotOnManifoldError
from geodp.manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Sphere
from geodp.models import PrivateFrechetMean

SINGULAR = np.tile(np.diag([1.0, 1.0, 0.0]), (50, 1, 1))


def _eeg_like(n=30, channels=6, seed=0):
    """Covariances of average-referenced signals: rank channels − 1 (singular up to rounding)."""
    rng = np.random.default_rng(seed)
    signals = rng.standard_normal((n, channels, 200))
    signals -= signals.mean(axis=1, keepdims=True)
    return signals @ np.swapaxes(signals, -1, -2) / 200


# ------------------------------------------------------------------ item 1: singular covariances
@pytest.mark.parametrize("metric", ["log-euclidean", "affine"])
def test_singular_covariances_are_invalid_records(metric):
    space = SPD(3, metric=metric)
    model = PrivateFrechetMean(space, epsilon=1.0, center=np.eye(3), radius=3.0, random_state=0)
    with pytest.raises(NotOnManifoldError, match="singular"):
        model.fit(SINGULAR)
    assert space.invalid_records(SINGULAR).all()
    assert model.set_params(on_invalid="center").fit(SINGULAR).curator_diagnostics_.n_invalid == 50


@pytest.mark.parametrize("metric", ["log-euclidean", "affine"])
def test_every_path_agrees_on_rank_deficient_eeg_covariances(metric):
    da = pytest.importorskip("dask.array")
    space = SPD(6, metric=metric)
    X = np.concatenate([_eeg_like(), space.random_point(10, rng=1)])
    invalid = space.invalid_records(X)
    assert invalid[:30].all() and not invalid[30:].any()
    for data in (X, da.from_array(X, chunks=7)):
        model = PrivateFrechetMean(
            space, epsilon=1.0, center=np.eye(6), radius=1.0, on_invalid="center", random_state=0
        )
        assert model.fit(data).curator_diagnostics_.n_invalid == 30


def test_regularise_is_a_documented_per_record_map():
    space = SPD(6, metric="log-euclidean")
    X = _eeg_like()
    ridged = space.regularise(X, ridge=1e-3)
    shrunk = space.regularise(X, shrinkage=0.1, target=2.0 * np.eye(6))
    assert not space.invalid_records(ridged).any() and not space.invalid_records(shrunk).any()
    np.testing.assert_allclose(shrunk, 0.9 * X + 0.2 * np.eye(6), atol=1e-14)
    np.testing.assert_array_equal(space.regularise(X[:1], ridge=1e-3)[0], ridged[0])  # record by record
    for bad in (dict(), dict(shrinkage=1.5), dict(ridge=-1.0), dict(shrinkage=0.1, target=-np.eye(6))):
        with pytest.raises(InvalidParameterError):
            space.regularise(X, **bad)


def test_cli_says_a_singular_record_is_singular():
    from geodp.cli.records import invalid_records_detail

    assert "is singular" in invalid_records_detail(SINGULAR[:2], SPD(3), "covs.npy")  # curator-only


# ------------------------------------------------------------------ item 5: accurate messages
def test_pyriemann_metric_names_are_aliases():
    assert SPD(3, metric="riemann") == SPD(3, metric="affine")
    assert SPD(3, metric="logeuclid") == SPD(3, metric="log-euclidean")


def test_matrices_beyond_float_range_are_refused_as_such():
    from geodp.cli.records import invalid_records_detail

    with pytest.raises(NotOnManifoldError, match="beyond float64's working range"):
        SPD(3).check_points(1e300 * np.eye(3))
    assert "beyond float64's working range" in invalid_records_detail((1e300 * np.eye(3))[None], SPD(3), "covs.npy")


@pytest.mark.parametrize("space", [SPD(2), Sphere(2), Hyperbolic(2), KendallShape(3), Euclidean(2)])
def test_negative_sizes_are_typed_errors(space):
    with pytest.raises(InvalidParameterError, match="size"):
        space.random_point(-1)
    with pytest.raises(InvalidParameterError, match="size"):
        space.random_tangent(space.reference_point(), size=(2, -1))


def test_corrupt_npy_files_get_accurate_typed_errors(tmp_path):
    pytest.importorskip("dask")
    from geodp.cli.common import CommandError
    from geodp.cli.records import read_records
    from geodp.dask_support import read_npy

    noise = tmp_path / "noise.npy"
    noise.write_bytes(np.random.default_rng(0).bytes(300))
    good = tmp_path / "good.npy"
    np.save(good, np.zeros((10, 3)))
    short = tmp_path / "short.npy"
    short.write_bytes(good.read_bytes()[:150])
    objects = tmp_path / "objects.npy"
    np.save(objects, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    for path, words in ((noise, "not a .npy file"), (short, "truncated"), (objects, "Python objects")):
        with pytest.raises(InvalidDataError, match=words) as info:
            read_npy(path)
        assert "pickle" not in str(info.value).replace("unpickles", "")
        with pytest.raises((InvalidDataError, CommandError), match=words):
            read_records(path, Sphere(2))
    with pytest.raises(InvalidDataError, match="cannot read"):
        read_npy(tmp_path / "missing.npy")


def test_a_directory_as_ledger_is_called_a_directory(tmp_path):
    from geodp.cli.common import CommandError
    from geodp.cli.ledger import open_ledger

    with pytest.raises(CommandError, match="is a directory") as info:
        with open_ledger(tmp_path, {"what": "test"}):
            pass
    assert "hard links" not in str(info.value)


def test_flat_space_diagnostics_describe_the_closed_form():
    X = np.random.default_rng(0).normal(size=(20, 2))
    for mechanism in ("laplace", "kng"):
        model = PrivateFrechetMean(
            Euclidean(2), epsilon=1.0, mechanism=mechanism, center=np.zeros(2), radius=3.0, random_state=0
        ).fit(X)
        text = str(model.curator_diagnostics_)
        assert "closed form" in text and "no estimate to release" not in text, mechanism


# ------------------------------------------------------------------ item 3: tangent vectors
NORTH = np.array([0.0, 0.0, 1.0])


@pytest.mark.parametrize(
    "space,x,v",
    [
        (Sphere(2), NORTH, NORTH),
        (SPD(2), np.eye(2), np.array([[0.0, 1.0], [0.0, 0.0]])),
        (SPD(2, metric="log-euclidean"), np.eye(2), np.array([[0.0, 1.0], [0.0, 0.0]])),
        (Hyperbolic(2), np.array([1.0, 0.0, 0.0]), np.array([1.0, 0.5, 0.0])),
    ],
    ids=["sphere", "spd-affine", "spd-log-euclidean", "hyperbolic"],
)
def test_geometry_refuses_vectors_that_are_not_tangent(space, x, v):
    y = space.reference_point() if space.point_shape == (2, 2) else np.array([0.0, 1.0, 0.0])
    y = space.exp(x, space.to_tangent(x, 0.3 * np.ones(space.point_shape))) if isinstance(space, SPD) else y
    if isinstance(space, Hyperbolic):
        y = space.project(np.array([0.0, 0.3, 0.2]))
    calls = {
        "exp": lambda: space.exp(x, v),
        "inner": lambda: space.inner(x, v, v),
        "norm": lambda: space.norm(x, v),
        "transport": lambda: space.transport(x, y, v),
        "polar_exp": lambda: space.polar_exp(x, v, 0.5),
    }
    for name, call in calls.items():
        with pytest.raises(InvalidDataError, match="not tangent.*to_tangent") as info:
            call()
        assert not isinstance(info.value, NotOnManifoldError), name
    tangent = space.to_tangent(x, v)
    assert np.all(np.isfinite(space.exp(x, tangent)))  # the fix the message names works
    space.unchecked.exp(x, v)  # the fast path stays unvalidated


def test_sphere_exp_of_a_normal_vector_no_longer_leaves_the_sphere():
    with pytest.raises(InvalidDataError):
        Sphere(2).exp(NORTH, NORTH)
    # a tangent vector with a rounding-level normal part is accepted and stays on the sphere
    out = Sphere(2).exp(NORTH, np.array([0.5, 0.0, 1e-12]))
    assert abs(np.linalg.norm(out) - 1.0) < 1e-15


# ------------------------------------------------------------------ item 2: rounded records
def test_unit_vectors_written_with_six_decimals_are_accepted_and_normalised(tmp_path):
    da = pytest.importorskip("dask.array")
    from geodp.cli.records import check_records, invalid_records_detail, read_records

    space = Sphere(2)
    X = np.round(space.random_point(500, rng=0), 6)
    assert not space.invalid_records(X).any()
    checked = space.check_points(X)
    np.testing.assert_allclose(np.linalg.norm(checked, axis=1), 1.0, rtol=0, atol=4e-16)
    for data in (X, da.from_array(X, chunks=97)):
        model = PrivateFrechetMean(space, epsilon=1.0, center=NORTH, radius=0.7, on_invalid="center", random_state=0)
        assert model.fit(data).curator_diagnostics_.n_invalid == 0
    path = tmp_path / "directions.csv"
    np.savetxt(path, X, fmt="%.6f", delimiter=",")
    records, lines = read_records(path, space)
    check_records(records, space, str(path), lines)  # no refusal
    # beyond the public tolerance: refused
    assert space.invalid_records(1.001 * X).all()
    assert "record_rtol" in invalid_records_detail(1.001 * X, space, str(path))  # curator-only
    with pytest.raises(InvalidDataError, match="holds records that are not points of sphere:2"):
        check_records(1.001 * X, space, str(path))


def test_hyperboloid_records_written_with_six_decimals_are_accepted_and_lifted():
    space = Hyperbolic(2)
    X = np.round(space.random_point(200, rng=0), 6)
    assert not space.invalid_records(X).any()
    checked = space.check_points(X)
    np.testing.assert_allclose(checked[:, 1:], X[:, 1:])
    assert np.all(space.belongs(checked))  # on the hyperboloid to the strict tolerance
    with pytest.raises(NotOnManifoldError):
        space.exp(X[0], np.zeros(3))  # the geometry keeps the strict tolerance


# ------------------------------------------------------------------ item 4: the Poincaré ball
@pytest.mark.parametrize("curvature", [-1.0, -0.25, -4.0])
def test_poincare_ball_conversion_is_accurate_near_the_boundary(curvature):
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 60
    space = Hyperbolic(3, curvature=curvature)
    R = space.radius
    rng = np.random.default_rng(0)
    directions = rng.standard_normal((40, 3))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    gaps = np.r_[1e-12, 3e-12, 1e-10, 1e-6, 0.1, 0.9, np.full(34, 0.5)]
    P = R * directions * (1.0 - gaps)[:, None]
    P = P[np.linalg.norm(P, axis=1) < R]
    X = space.from_poincare(P)
    assert np.all(space.belongs(X))
    for p, x in zip(P, X):
        mp = [mpmath.mpf(float(c)) for c in p]
        gap = mpmath.mpf(R) ** 2 - sum(c * c for c in mp)
        exact = [2 * mpmath.mpf(R) ** 2 * c / gap for c in mp]
        exact0 = mpmath.sqrt(mpmath.mpf(R) ** 2 + sum(c * c for c in exact))
        for got, want in zip(x, [exact0, *exact]):
            assert abs(mpmath.mpf(float(got)) - want) <= 1e-9 * abs(exact0)
    np.testing.assert_allclose(space.to_poincare(X), P, rtol=1e-14, atol=1e-15 * R)
    # the distance from the origin, 2R artanh(|p|/R), in high precision
    d = space.dist(space.origin, X)
    for p, got in zip(P, d):
        norm = mpmath.sqrt(sum(mpmath.mpf(float(c)) ** 2 for c in p))
        assert abs(got - float(2 * R * mpmath.atanh(norm / R))) <= 1e-9 * float(2 * R * mpmath.atanh(norm / R))
    with pytest.raises(NotOnManifoldError):
        space.from_poincare([R, 0.0, 0.0])
    with pytest.raises(InvalidDataError):
        space.from_poincare([0.1, 0.0])


def test_tiny_asymmetric_records_are_judged_alike_on_every_path():
    """A re-audit: entries near 1e-150 made the asymmetry test underflow on the log-Euclidean
    fast path, which kept a record that invalid_records refuses."""
    x = np.array(
        [
            [1.4371998193648002e-151, -1.0807081505232581e-151, 1.9070987145291884e-151],
            [-1.0807081505229301e-151, 8.0348126360992313e-151, 1.1109437184802284e-150],
            [1.9070987145293298e-151, 1.1109437184802253e-150, 2.4316202761996577e-150],
        ]
    )
    space = SPD(3, metric="log-euclidean")
    assert space.invalid_records(x[None])[0]
    assert space.unchecked.space._record_coordinates(x[None])[1][0]


def test_a_sphere_record_is_made_canonical_whatever_its_block_mates():
    from geodp.manifolds import Sphere

    eps = np.finfo(float).eps
    y = np.array([0.0, 0.6, 0.8]) * (1 + 3 * eps)
    far = np.array([1.0, 0.0, 0.0]) * (1 + 0.5e-4)
    alone = Sphere(2)._canonical(y[None])
    together = Sphere(2)._canonical(np.stack([y, far]))
    assert np.array_equal(alone[0], together[0])
