"""Loaders of the real data shipped with geomstats, checked against the raw files and sklearn."""

import csv
import importlib
import math
import os
import sys

import numpy as np
import pytest

pytest.importorskip("geomstats")

from sklearn.covariance import empirical_covariance, ledoit_wolf, oas, shrunk_covariance

from geodp.datasets import (
    geomstats_sets,
    load_cell_shapes,
    load_cities,
    load_connectomes,
    load_emg_covariances,
    load_optical_nerves,
)
from geodp.errors import InvalidDataError, InvalidParameterError, InvalidTypeError
from geodp.manifolds import SPD, Sphere


def _data_file(*parts):
    from geomstats.datasets.utils import DATA_PATH

    return os.path.join(DATA_PATH, *parts)


def _read_csv(*parts, delimiter=","):
    with open(_data_file(*parts), encoding="utf-8") as handle:
        rows = list(csv.reader(handle, delimiter=delimiter))
    return rows[0], rows[1:]


def _assert_spd(matrices):
    k = matrices.shape[-1]
    assert matrices.dtype == np.float64
    assert SPD(k).belongs(matrices).all()
    np.testing.assert_array_equal(matrices, np.swapaxes(matrices, -1, -2))
    assert np.linalg.eigvalsh(matrices)[..., 0].min() > 0


@pytest.fixture(scope="module")
def emg_table():
    from geomstats.datasets.utils import load_emg

    table = load_emg()
    # run number of every row, computed here without the loader's code
    table["run"] = ((table.label != table.label.shift()) | (table.exp != table.exp.shift())).cumsum() - 1
    return table


# --- connectomes -----------------------------------------------------------------------------


def test_connectomes_are_the_challenge_correlations_with_its_labels():
    data = load_connectomes()
    _assert_spd(data.matrices)
    assert data.matrices.shape == (86, 28, 28) and data.shrinkage == 0.0 and data.radius is None
    header, rows = _read_csv("connectomes", "train_FNC.csv")
    assert len(header) == 1 + 378
    np.testing.assert_array_equal(data.subject_ids, [int(row[0]) for row in rows])
    features = np.array([[float(v) for v in row[1:]] for row in rows])
    # a correlation matrix: unit diagonal, every FNC feature off the diagonal exactly once per side
    np.testing.assert_array_equal(np.diagonal(data.matrices, axis1=1, axis2=2), 1.0)
    off = data.matrices[:, ~np.eye(28, dtype=bool)]
    np.testing.assert_array_equal(np.sort(off, axis=1), np.sort(np.repeat(features, 2, axis=1), axis=1))
    _, label_rows = _read_csv("connectomes", "train_labels.csv")
    by_id = {int(subject): int(label) for subject, label in label_rows}
    np.testing.assert_array_equal(data.labels, [by_id[s] for s in data.subject_ids])
    # Kaggle's coding: 1 = schizophrenic patient, 0 = healthy control; 40 and 46 subjects
    assert np.count_nonzero(data.labels == 1) == 40 and np.count_nonzero(data.labels == 0) == 46


def test_shrinkage_one_half_is_geomstats_matrices():
    from geomstats.datasets.utils import load_connectomes as geomstats_connectomes

    matrices, subject_ids, labels = geomstats_connectomes()
    data = load_connectomes(shrinkage=0.5)
    np.testing.assert_allclose(data.matrices, matrices, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(data.subject_ids, subject_ids)
    np.testing.assert_array_equal(data.labels, labels)


@pytest.mark.parametrize("alpha", [0.05, 0.5])
def test_connectome_radius_bounds_the_data_and_the_extreme_correlation(alpha):
    data = load_connectomes(shrinkage=alpha)
    _assert_spd(data.matrices)
    expected = (1 - alpha) * load_connectomes().matrices + alpha * np.eye(28)
    np.testing.assert_allclose(data.matrices, expected, atol=1e-15)
    assert data.radius == pytest.approx(math.sqrt(28) * max(-math.log(alpha), math.log(28 - 27 * alpha)), rel=1e-15)
    identity = np.eye(28)
    extreme = (1 - alpha) * np.ones((28, 28)) + alpha * identity  # rank-one correlation: eigenvalues 28, 0, ...
    for metric in ("affine", "log-euclidean"):
        space = SPD(28, metric=metric)
        assert space.dist(identity, data.matrices).max() <= data.radius
        assert space.dist(identity, extreme) <= data.radius


@pytest.mark.parametrize(
    "bad, error",
    [(-0.1, InvalidParameterError), (1.0, InvalidParameterError), ("0.5", InvalidTypeError), (True, InvalidTypeError)],
)
def test_connectome_shrinkage_is_checked(bad, error):
    with pytest.raises(error, match="shrinkage"):
        load_connectomes(shrinkage=bad)


# --- EMG -------------------------------------------------------------------------------------


def test_emg_defaults(emg_table):
    data = load_emg_covariances()
    _assert_spd(data.covariances)
    n = len(data.covariances)
    assert data.covariances.shape == (n, 8, 8) and 2000 <= n <= 5000
    for name in ("labels", "experiments", "runs", "starts", "shrinkage"):
        assert getattr(data, name).shape == (n,)
    assert set(data.labels) == {"rock", "paper", "scissors", "ok"}
    assert set(data.experiments) == {"mg_s1", "mg_s2", "rr_s1", "rr_s2"}
    assert np.all((data.shrinkage > 0) & (data.shrinkage < 1))
    # as many disjoint 250-row windows as fit in every non-rest run of the raw table
    sizes = emg_table[emg_table.label != "rest"].groupby("run").size()
    np.testing.assert_array_equal(np.unique(data.runs), sizes.index.to_numpy())
    np.testing.assert_array_equal(np.bincount(data.runs, minlength=120)[sizes.index], sizes.to_numpy() // 250)


@pytest.mark.parametrize("settings", [{}, {"window": 100, "step": 37, "margin": 1000, "include_rest": True}])
def test_emg_windows_stay_inside_one_run(emg_table, settings):
    data = load_emg_covariances(**settings)
    window, margin = data.window, data.margin
    run = emg_table["run"].to_numpy()
    np.testing.assert_array_equal(run[data.starts], data.runs)
    # the window and its margins on both sides lie inside the run
    first = np.flatnonzero(np.diff(run, prepend=-1))
    last = np.append(first[1:], len(run)) - 1
    assert np.all(data.starts - margin >= first[data.runs])
    assert np.all(data.starts + window - 1 + margin <= last[data.runs])
    np.testing.assert_array_equal(emg_table.label.to_numpy()[data.starts], data.labels)
    np.testing.assert_array_equal(emg_table.exp.to_numpy()[data.starts], data.experiments)
    # the clock restarts (to ~0 ms) every 125 s and with each experiment: no window spans a restart
    time = emg_table.time.to_numpy()
    assert np.all(time[data.starts + window - 1] > time[data.starts])
    assert (data.labels == "rest").any() == settings.get("include_rest", False)


@pytest.mark.parametrize("shrinkage", ["ledoit-wolf", "oas", 0.1])
def test_emg_covariance_is_sklearns(emg_table, shrinkage):
    data = load_emg_covariances(window=120, step=500, shrinkage=shrinkage)
    readings = emg_table[[f"c{i}" for i in range(8)]].to_numpy(dtype=float)
    for index in (0, len(data.starts) // 2, len(data.starts) - 1):
        X = readings[data.starts[index] : data.starts[index] + 120]
        if shrinkage == "ledoit-wolf":
            expected, coefficient = ledoit_wolf(X)
        elif shrinkage == "oas":
            expected, coefficient = oas(X)
        else:
            expected, coefficient = shrunk_covariance(empirical_covariance(X), shrinkage), shrinkage
        np.testing.assert_allclose(data.covariances[index], expected, rtol=1e-10, atol=0)
        assert data.shrinkage[index] == pytest.approx(coefficient, rel=1e-9)


def test_emg_is_deterministic_and_rejects_bad_settings():
    a, b = load_emg_covariances(window=64, step=200), load_emg_covariances(window=64, step=200)
    for name in ("covariances", "labels", "experiments", "runs", "starts", "shrinkage"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    with pytest.raises(InvalidParameterError, match="no window"):
        load_emg_covariances(window=7000)
    with pytest.raises(InvalidParameterError, match="no window"):
        load_emg_covariances(window=1000, margin=2600)
    with pytest.raises(InvalidParameterError, match="window"):
        load_emg_covariances(window=1)
    with pytest.raises(InvalidParameterError, match="step"):
        load_emg_covariances(step=0)
    with pytest.raises(InvalidTypeError, match="margin"):
        load_emg_covariances(margin=1.5)
    with pytest.raises(InvalidParameterError, match="shrinkage"):
        load_emg_covariances(shrinkage="ledoit")
    with pytest.raises(InvalidTypeError, match="include_rest"):
        load_emg_covariances(include_rest="no")
    # 8 rows centred span at most 7 dimensions: the empirical covariance is singular
    with pytest.raises(InvalidDataError, match="not positive definite"):
        load_emg_covariances(window=8, step=4000, shrinkage=0.0)


# --- cities and optic nerves -----------------------------------------------------------------


def test_cities_are_unit_vectors_in_the_usual_axes():
    cities = load_cities()
    assert cities.points.shape == (50, 3) and cities.points.dtype == np.float64
    assert Sphere(2).belongs(cities.points).all()
    np.testing.assert_allclose(np.linalg.norm(cities.points, axis=1), 1.0, atol=1e-15)
    header, rows = _read_csv("cities", "cities.csv")
    lat = np.radians([float(row[header.index("lat")]) for row in rows])
    lon = np.radians([float(row[header.index("lng")]) for row in rows])
    expected = np.stack([np.cos(lat) * np.cos(lon), np.cos(lat) * np.sin(lon), np.sin(lat)], axis=1)
    np.testing.assert_allclose(cities.points, expected, atol=1e-14)
    np.testing.assert_allclose(np.radians(cities.latitudes), lat, atol=1e-12)
    np.testing.assert_allclose(np.radians(cities.longitudes), lon, atol=1e-12)
    assert cities.names.tolist() == [row[header.index("city")] for row in rows]


def test_optical_nerves_are_the_raw_landmarks():
    nerves = load_optical_nerves()
    header, rows = _read_csv("optical_nerves", "optical_nerves.txt", delimiter="\t")
    assert header[1:] == [f"{name}{axis}" for name in nerves.landmark_names for axis in "xyz"]
    kept = [row for row in rows if row[0] not in ("laljn103.12b", "lalj0103.12b")]
    expected = np.array([[float(v) for v in row[1:]] for row in kept]).reshape(-1, 5, 3)
    np.testing.assert_array_equal(nerves.landmarks, expected)
    assert nerves.landmarks.shape == (22, 5, 3) and nerves.landmarks.dtype == np.float64
    # the file alternates a normal eye ("...n103...") and the glaucoma eye of the same monkey
    np.testing.assert_array_equal(nerves.labels, [0 if row[0][4] == "n" else 1 for row in kept])
    np.testing.assert_array_equal(nerves.monkeys, np.repeat(np.arange(11), 2))
    assert len({row[0][3] for row in kept}) == 11


# --- geomstats missing or broken ---------------------------------------------------------------

LOADERS = [load_connectomes, load_emg_covariances, load_cities, load_optical_nerves, lambda: load_cell_shapes(8)]


@pytest.mark.parametrize("loader", LOADERS)
def test_missing_geomstats_says_how_to_install(monkeypatch, loader):
    geomstats_sets._emg_recording.cache_clear()
    for name in [m for m in sys.modules if m == "geomstats" or m.startswith("geomstats.")] + ["geomstats"]:
        monkeypatch.setitem(sys.modules, name, None)  # makes ``import geomstats...`` fail
    hint = r'needs the optional dependency geomstats: .*pip install -e "\.\[geomstats\]"'
    with pytest.raises(ImportError, match=hint):
        loader()


@pytest.mark.parametrize("loader", LOADERS)
def test_geomstats_that_does_not_import_says_why(monkeypatch, loader):
    geomstats_sets._emg_recording.cache_clear()
    real_import = importlib.import_module

    def broken(name, *args):
        if name.startswith("geomstats"):
            raise AttributeError("module 'numpy' has no attribute 'something'")
        return real_import(name, *args)

    monkeypatch.setattr(importlib, "import_module", broken)
    with pytest.raises(ImportError, match=r"installed but does not import \(AttributeError: .*numpy<2\.4"):
        loader()
