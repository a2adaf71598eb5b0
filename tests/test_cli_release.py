"""``geodp release``: formats, refusals, the guarantee's schema, the budget ledger (issue 12, item 1)."""

import json
import os
import re
import subprocess
import sys
import warnings

import jsonschema
import numpy as np
import pytest

from geodp.cli import guarantee_schema, main
from geodp.errors import ApproximateSamplerWarning
from geodp.manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Sphere
from geodp.models import PrivateFrechetMean
from geodp.models.report import CuratorDiagnostics

N = 30
SEED = 7


def _records(space, center, radius, rng):
    """N points of ``space`` inside the public ball (drawn at distance < radius from the centre)."""
    directions = space.random_unit_tangent(center, size=N, rng=rng)
    t = radius * rng.uniform(0.1, 0.9, size=N)
    return space.exp(center, t.reshape((N,) + (1,) * len(space.point_shape)) * directions)


# spec -> (space, --center, centre point, radius)
SPACES = {
    "spd:3": (SPD(3), "identity", np.eye(3), 1.5),
    "spd:3:log-euclidean": (SPD(3, metric="log-euclidean"), "identity", np.eye(3), 1.5),
    "sphere:2": (Sphere(2), "north", np.array([0.0, 0.0, 1.0]), 0.5),
    "hyperbolic:2": (Hyperbolic(2), "origin", np.array([1.0, 0.0, 0.0]), 1.0),
    "euclidean:3": (Euclidean(3), "origin", np.zeros(3), 1.0),
}


def _args(tmp_path, data, spec, center, radius, *extra, out="mean"):
    return [
        "release",
        str(data),
        "--space",
        spec,
        "--center",
        str(center),
        "--radius",
        repr(radius),
        "--epsilon",
        "1.0",
        "--seed",
        str(SEED),
        "--output",
        str(tmp_path / f"{out}.npy"),
        "--guarantee",
        str(tmp_path / f"{out}.json"),
        *extra,
    ]


def _expected_release(space, X, center, radius, **kw):
    """The oracle: the library's release of the same array with the same seed."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ApproximateSamplerWarning)
        return (
            PrivateFrechetMean(space, epsilon=1.0, center=center, radius=radius, random_state=SEED, **kw).fit(X).mean_
        )


def _check_guarantee(path, *, spec, epsilon, delta, n, radius, mechanism):
    record = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.validate(record, guarantee_schema(), cls=jsonschema.Draft202012Validator)
    report = record["report"]
    assert (record["space"], record["mechanism"]) == (spec, mechanism)
    assert (report["epsilon"], report["delta"], report["n_samples"], report["radius"]) == (epsilon, delta, n, radius)
    return record


def _write(path, X, fmt):
    """Write records in one of the formats the command reads."""
    flat = X.reshape(len(X), -1)
    if fmt == "npy":
        np.save(path, X)
    elif fmt == "npy-flat":
        np.save(path, flat)
    elif fmt in ("npz", "npz-key"):
        extra = {"labels": np.arange(len(X))} if fmt == "npz-key" else {}
        np.savez(path, covs=X, **extra)
    elif fmt == "csv":
        header = ",".join(f"v{i}" for i in range(flat.shape[1]))
        np.savetxt(path, flat, delimiter=",", fmt="%.17g", header=header, comments="")
    elif fmt == "txt":
        np.savetxt(path, flat, fmt="%.17g", header="written by numpy")  # '# ' comment line, spaces
    else:  # mat / mat-key
        from scipy.io import savemat

        savemat(path, {"covs": X, **({"subject": np.array([[3.0]])} if fmt == "mat-key" else {})})
    return path


FORMATS = {
    "npy": ".npy",
    "npy-flat": ".npy",
    "npz": ".npz",
    "npz-key": ".npz",
    "csv": ".csv",
    "txt": ".txt",
    "mat": ".mat",
    "mat-key": ".mat",
}


@pytest.mark.parametrize("fmt", FORMATS)
def test_each_format_round_trips(fmt, tmp_path, capsys):
    space, center_name, center, radius = SPACES["spd:3"]
    X = _records(space, center, radius, np.random.default_rng(0))
    data = _write(tmp_path / f"covs{FORMATS[fmt]}", X, fmt)
    key = ["--key", "covs"] if fmt.endswith("-key") else []
    header = ["--header"] if fmt in ("csv", "txt") else []  # np.savetxt wrote one header line
    assert main(_args(tmp_path, data, "spd:3", center_name, radius, *key, *header)) == 0
    out, err = capsys.readouterr()
    assert err == "" and "geodp privacy report" in out and "CURATOR" not in out

    release = np.load(tmp_path / "mean.npy")
    assert release.shape == (3, 3) and bool(space.belongs(release))
    # the file was read exactly as the array it was written from
    np.testing.assert_array_equal(release, _expected_release(space, X, center, radius))
    _check_guarantee(
        tmp_path / "mean.json", spec="spd:3", epsilon=1.0, delta=0.0, n=N, radius=radius, mechanism="laplace"
    )


@pytest.mark.parametrize("spec", SPACES)
def test_each_space_round_trips_through_csv(spec, tmp_path, capsys):
    space, center_name, center, radius = SPACES[spec]
    X = _records(space, center, radius, np.random.default_rng(1))
    data = _write(tmp_path / "records.csv", X, "csv")
    assert main(_args(tmp_path, data, spec, center_name, radius, "--header")) == 0
    release = np.load(tmp_path / "mean.npy")
    assert release.shape == space.point_shape and bool(space.belongs(release))
    np.testing.assert_array_equal(release, _expected_release(space, X, center, radius))
    record = _check_guarantee(
        tmp_path / "mean.json", spec=spec, epsilon=1.0, delta=0.0, n=N, radius=radius, mechanism="laplace"
    )
    assert record["release_shape"] == list(space.point_shape) and record["release_file"] == "mean.npy"
    assert record["report_text"] in capsys.readouterr().out


def test_kendall_configurations_and_a_centre_file(tmp_path):
    """Kendall records are landmark configurations (any position and size), flattened x1, y1, x2, ..."""
    space = KendallShape(4)
    rng = np.random.default_rng(2)
    base = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    X = base + 0.05 * rng.standard_normal((N, 4, 2))
    X = X * rng.uniform(1, 10, size=(N, 1, 1)) + rng.uniform(-5, 5, size=(N, 1, 2))  # move and scale
    data = _write(tmp_path / "shapes.csv", X, "csv")
    center_file = tmp_path / "square.csv"
    np.savetxt(center_file, 3.0 * base.reshape(1, -1) + 1.0, delimiter=",")  # a configuration, one line
    assert main(_args(tmp_path, data, "kendall:4", center_file, 0.2, "--header")) == 0
    release = np.load(tmp_path / "mean.npy")
    assert release.shape == (4, 2) and bool(space.belongs(release))
    preshape = space.project(base)
    np.testing.assert_array_equal(release, _expected_release(space, X, preshape, 0.2))
    record = _check_guarantee(
        tmp_path / "mean.json", spec="kendall:4", epsilon=1.0, delta=0.0, n=N, radius=0.2, mechanism="laplace"
    )
    np.testing.assert_allclose(record["report"]["center"], preshape, atol=1e-15)


@pytest.mark.parametrize(
    "spec, mechanism, delta",
    [
        ("spd:3:log-euclidean", "tangent-gaussian", 1e-6),
        ("sphere:2", "kng", 0.0),
        ("euclidean:3", "kng", 0.0),
        ("sphere:2", "riemannian-gaussian", 1e-6),
        ("sphere:2", "gradient", 1e-6),
        ("spd:3:log-euclidean", "gradient", 1e-6),
    ],
)
def test_other_mechanisms(spec, mechanism, delta, tmp_path):
    space, center_name, center, radius = SPACES[spec]
    X = _records(space, center, radius, np.random.default_rng(3))
    data = _write(tmp_path / "records.npy", X, "npy")
    assert main(_args(tmp_path, data, spec, center_name, radius, "--mechanism", mechanism, "--delta", repr(delta))) == 0
    release = np.load(tmp_path / "mean.npy")
    np.testing.assert_array_equal(
        release, _expected_release(space, X, center, radius, mechanism=mechanism, delta=delta)
    )
    _check_guarantee(
        tmp_path / "mean.json", spec=spec, epsilon=1.0, delta=delta, n=N, radius=radius, mechanism=mechanism
    )


def test_the_guarantee_holds_nothing_curator_only(tmp_path, capsys):
    """Records outside the ball and invalid ones replaced by the centre: their counts, the solver's
    facts and the seed stay out of the guarantee and out of what the command prints."""
    space, _, center, _ = SPACES["spd:3"]
    X = _records(space, center, 4.0, np.random.default_rng(4))  # many records beyond radius 1
    X[3] = np.nan
    data = _write(tmp_path / "covs.npy", X, "npy")
    argv = _args(tmp_path, data, "spd:3", "identity", 1.0, "--on-invalid", "center")
    argv[argv.index("--seed") + 1] = "987654321"
    assert main(argv) == 0
    out, err = capsys.readouterr()
    record = _check_guarantee(
        tmp_path / "mean.json", spec="spd:3", epsilon=1.0, delta=0.0, n=N, radius=1.0, mechanism="laplace"
    )
    assert record["report"]["on_invalid"] == "center"
    text = (tmp_path / "mean.json").read_text(encoding="utf-8")

    def keys(node):
        if isinstance(node, dict):
            for k, v in node.items():
                yield k
                yield from keys(v)
        elif isinstance(node, list):
            for v in node:
                yield from keys(v)

    curator = set(CuratorDiagnostics.__dataclass_fields__)
    assert curator >= {"n_clipped", "n_invalid", "mean_iterations"}
    assert not curator & set(keys(record))
    assert "seed" not in set(keys(record)) and "987654321" not in text + out + err
    assert "CURATOR" not in text + out + err and "clipped onto the ball's boundary :" not in out
    # the oracle: the same release from the library, whose curator diagnostics do count them
    model = PrivateFrechetMean(
        space, epsilon=1.0, center=center, radius=1.0, on_invalid="center", random_state=987654321
    ).fit(X)
    assert model.curator_diagnostics_.n_invalid == 1 and model.curator_diagnostics_.n_clipped > 0
    np.testing.assert_array_equal(np.load(tmp_path / "mean.npy"), model.mean_)


def test_text_tables_with_header_crlf_and_a_byte_order_mark(tmp_path, capsys):
    """--header skips the first line whatever it holds; CRLF line ends and a BOM are read."""
    space, _, center, radius = SPACES["euclidean:3"]
    X = _records(space, center, radius, np.random.default_rng(5))
    expected = _expected_release(space, X, center, radius)
    spaced = "\n".join(" \t".join(repr(float(v)) for v in row) for row in X)
    commas = "\n".join(", ".join(repr(float(v)) for v in row) for row in X)
    for name, text in (
        ("points.txt", f"# exported points\n{spaced}\n"),  # np.savetxt's '# ' header
        ("points.csv", f"\ufeffx y z\n{commas}\n"),  # a BOM, a header without commas
        ("crlf.csv", f"x,y,z\r\n{commas}\n".replace("\n", "\r\n")),  # CRLF
        ("no-end.csv", f"1,2,3,4,5\n{commas}"),
    ):  # any header; no final newline
        data = tmp_path / name
        data.write_bytes(text.encode("utf-8"))
        assert main(_args(tmp_path, data, "euclidean:3", "origin", radius, "--header", "--overwrite")) == 0, name
        np.testing.assert_array_equal(np.load(tmp_path / "mean.npy"), expected)
        _check_guarantee(
            tmp_path / "mean.json", spec="euclidean:3", epsilon=1.0, delta=0.0, n=N, radius=radius, mechanism="laplace"
        )
    capsys.readouterr()
    np.save(tmp_path / "points.npy", X)
    _refused(
        capsys,
        tmp_path,
        _args(tmp_path, tmp_path / "points.npy", "euclidean:3", "origin", radius, "--header", out="npy"),
        "--header is for a .csv or .txt file; this is a .npy file",
        out="npy",
    )


# --- refusals: one line on stderr, exit code 2, no traceback, no output file ---------------------


def _refused(capsys, tmp_path, argv, *needles, out="mean"):
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 2, captured
    err = captured.err
    assert err.startswith("geodp: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err and captured.out == ""
    for needle in needles:
        assert needle in err, (needle, err)
    assert not (tmp_path / f"{out}.npy").exists() and not (tmp_path / f"{out}.json").exists()
    assert not list(tmp_path.glob(".*.tmp"))  # no temporary file left behind
    assert not list(tmp_path.glob("*.lock"))  # nor the ledger's lock file, whatever the refusal
    return err


_LOCATES = re.compile(r"record \d|line \d|of the \d+ records|all \d+ records")


def _refused_records(capsys, tmp_path, argv, *needles, out="mean"):
    """A refusal of records: stderr (which others may see, SECURITY.md) has one fixed text that
    neither locates nor counts them; the detail (``needles``: which record, its line, why, how
    many) is only in the curator-only --diagnostics file."""
    curator = tmp_path / f"refused-{out}.json"
    curator.unlink(missing_ok=True)
    err = _refused(
        capsys,
        tmp_path,
        [*argv, "--diagnostics", str(curator)],
        "holds records that are not points of",
        "curator-only",
        "written to the --diagnostics file",
        "or pass --on-invalid center",
        out=out,
    )
    assert not _LOCATES.search(err), err
    facts = json.loads(curator.read_text())
    assert facts["curator_only"].startswith("DO NOT PUBLISH")
    for needle in needles:
        assert needle in facts["refused"], (needle, facts["refused"])
    return err


def _spd_records(seed=6):
    space, _, center, radius = SPACES["spd:3"]
    return _records(space, center, radius, np.random.default_rng(seed))


def _bad_spd_cases():
    X = _spd_records()
    nan_row, inf_row, non_pd, asymmetric = X.copy(), X.copy(), X.copy(), X.copy()
    nan_row[4, 1, 2] = np.nan
    inf_row[9, 0, 0] = np.inf
    non_pd[11] = np.diag([1.0, -0.5, 2.0])
    non_pd[20] = -np.eye(3)
    asymmetric[13, 0, 1] += 1e-3
    return [
        ("nan.npy", nan_row, ["nan.npy: record 4 holds NaN or inf", "1 of the 30 records"]),
        ("inf.npy", inf_row, ["record 9 holds NaN or inf"]),
        (
            "non-spd.npy",
            non_pd,
            [
                "record 11 is not positive definite",
                "2 of the 30 records are not points of spd:3",
            ],
        ),
        ("asymmetric.npy", asymmetric, ["record 13 is not symmetric"]),
        (
            "wrong-shape.npy",
            X.reshape(N, 9)[:, :8],
            ["wrong-shape.npy: wrong shape: a point of spd:3 has shape (3, 3)", "array of shape (30, 8)"],
        ),
        ("transposed.npy", np.moveaxis(X, 0, -1), ["wrong shape", "(3, 3, 30)", "records go along the first axis"]),
        ("empty.npy", X[:0], ["empty.npy: holds no records"]),
        ("scalar.npy", np.float64(1.0), ["holds a single number, not records"]),
        ("complex.npy", X.astype(complex), ["holds complex numbers"]),
        ("strings.npy", np.array([["a"] * 9] * 3), ["holds <U1 values, not numbers"]),
    ]


@pytest.mark.parametrize("name, array, needles", _bad_spd_cases(), ids=lambda c: c if isinstance(c, str) else "")
def test_bad_npy_files_are_refused(name, array, needles, tmp_path, capsys):
    data = tmp_path / name
    np.save(data, array)
    refused = _refused_records if any(_LOCATES.search(n) for n in needles) else _refused
    refused(capsys, tmp_path, _args(tmp_path, data, "spd:3", "identity", 1.5), *needles)


@pytest.mark.parametrize(
    "spec, change, needle",
    [
        ("sphere:2", lambda X: X.__setitem__(5, 1.01 * X[5]), "record 5 does not have Euclidean norm 1"),
        ("sphere:2", lambda X: X.__setitem__(6, np.round(X[6], 1)), "record_rtol = 0.0001"),
        (
            "hyperbolic:2",
            lambda X: X.__setitem__((7, 0), -X[7, 0]),
            "record 7 is not on the upper sheet of the hyperboloid",
        ),
        ("euclidean:3", lambda X: X.__setitem__((8, 1), np.nan), "record 8 holds NaN or inf"),
    ],
)
def test_records_off_the_manifold_are_refused(spec, change, needle, tmp_path, capsys):
    space, center_name, center, radius = SPACES[spec]
    X = _records(space, center, radius, np.random.default_rng(7))
    change(X)
    data = _write(tmp_path / "records.npy", X, "npy")
    _refused_records(capsys, tmp_path, _args(tmp_path, data, spec, center_name, radius), needle)


def test_a_degenerate_kendall_configuration_is_refused(tmp_path, capsys):
    X = np.random.default_rng(8).standard_normal((N, 4, 2))
    X[12] = [2.0, 3.0]  # all landmarks at one place: no shape
    data = _write(tmp_path / "shapes.npy", X, "npy")
    center = _write(tmp_path / "center.npy", X[0], "npy")
    _refused_records(
        capsys,
        tmp_path,
        _args(tmp_path, data, "kendall:4", center, 0.2),
        "record 12 has all its landmarks equal, so it has no shape",
    )


@pytest.mark.parametrize(
    "content, needles",
    [
        ("", ["covs.csv: holds no records"]),
        (
            "# only a comment\n\n",
            [
                "record 0 (line 1) starts with '#' (a record file has no comment lines",
                "(a header line? pass --header)",
                "2 of the 2 records",
            ],
        ),  # no comments
        ("\n", ["record 0 (line 1) is blank", "1 of the 1 records"]),  # a blank line is a record
        (
            "a,b,c,d,e,f,g,h,i\n",
            ["record 0 (line 1): field 1 is not a number (a header line? pass --header)", "1 of the 1 records"],
        ),  # a header without --header
        (
            "1,0,0,0,1,0,0,0,1\n1,0,0,0,1,0,0,0\n",
            [
                "covs.csv: record 1 (line 2) has 8 values, but a point of spd:3 has shape (3, 3), or rows of 9 values",
                "1 of the 2 records",
            ],
        ),
        (
            "1,0,0,0,1,0,0,0,1,0\n1,0,0,0,1,0,0,0,1\n",
            ["covs.csv: record 0 (line 1) has 10 values, but a point of spd:3"],
        ),
        (
            "1,0,0,0,1,0,0,0\n1,0,0,0,1,0,0,0\n",
            ["wrong shape: a point of spd:3 has shape (3, 3), or rows of 9 values", "all 2 records have 8 values"],
        ),
        ("1,0,0,0,1,0,0,0\n", ["wrong shape: a point of spd:3", "record 0 (line 1) has 8 values"]),
        (
            "x1,x2,x3\n1,0,0,0,1,0,0,0,1\n",
            ["record 0 (line 1): field 1 is not a number (a header line? pass --header)"],
        ),
        ("1,0,0,0,1,0,0,0,1\n1,0,0,0,NA,0,0,0,1\n", ["covs.csv: record 1 (line 2): field 5 is not a number"]),
        ("1,0,0,0,1,0,0,0,1\r\n1,0,0,0,1\r0,0,0,1\r\n", ["record 1 (line 2) holds a carriage return"]),
        ("1,0,0,0,1,0,0,0,1,\n", ["record 0 (line 1): field 10 is empty"]),
        (
            "NA,NA,NA,NA,NA,NA,NA,NA,NA\n1,0,0,0,1,0,0,0,1\n",
            ["record 0 (line 1): field 1 is not a number", "1 of the 2 records"],
        ),  # a record, not a header
        ("1,0,0,0,1,0,0,0,1\n#N/A,0,0,0,1,0,0,0,1\n", ["record 1 (line 2): field 1 is not a number"]),  # not a comment
        ("1,0,0,0,1,0,0,0,1\n1,0,0,0,nan,0,0,0,1\n", ["covs.csv: record 1 (line 2) holds NaN or inf"]),
        ("1,0,0,0,1,0,0,0,1\n1,2,0,2,1,0,0,0,1\n", ["covs.csv: record 1 (line 2) is not positive definite"]),
    ],
)
def test_bad_csv_files_are_refused(content, needles, tmp_path, capsys):
    data = tmp_path / "covs.csv"
    data.write_text(content, encoding="utf-8")
    refused = _refused_records if any(_LOCATES.search(n) for n in needles) else _refused
    refused(capsys, tmp_path, _args(tmp_path, data, "spd:3", "identity", 1.5), *needles)


# One record of a CSV file replaced by each of these rows (bytes: some are not UTF-8). None keeps it.
_ONE_BAD_ROW = {
    "valid": None,
    "nan": b"nan,0,0,0,1,0,0,0,1",
    "NA-row": b"NA,NA,NA,NA,NA,NA,NA,NA,NA",  # was taken as a header when first: n changed
    "repeated-word": b"x,x,x,x,x,x,x,x,x",
    "all-empty": b",,,,,,,,",
    "empty-field": b"1,0,0,0,,0,0,0,1",
    "word": b"1,0,0,0,one,0,0,0,1",
    "short": b"1,0,0,0,1,0,0,0",
    "long": b"1,0,0,0,1,0,0,0,1,0",
    "one-field": b"?",
    "spreadsheet-error": b"#N/A,0,0,0,1,0,0,0,1",  # was a comment line: n changed
    "form-feed": b"1,0,0,0,1\x0c2,0,0,0,1",  # was split into two lines
    "line-separator": "1,0,0,0,1\u20282,0,0,0,1".encode(),
    "latin-1": b"1,0,0,0,\xe9,0,0,0,1",  # was: the whole file is not UTF-8
}


@pytest.mark.parametrize("where", [0, 13])
@pytest.mark.parametrize("name", _ONE_BAD_ROW)
def test_under_center_no_single_csv_record_decides_the_release_or_n(name, where, tmp_path, capsys):
    """With --on-invalid center a row that cannot be a record is an invalid record, replaced by the
    centre like any other: the release happens, with the same n, whatever one record holds (the
    first one too: it is never taken for a header). With raise it is refused, naming it."""
    space, _, center, radius = SPACES["spd:3"]
    X = _spd_records()
    rows = [",".join(f"{v:.17g}" for v in record.ravel()).encode() for record in X]
    row = _ONE_BAD_ROW[name]
    expected_X = X.copy()
    if row is not None:
        rows[where] = row
        expected_X[where] = np.nan
    data = tmp_path / "covs.csv"
    data.write_bytes(b"\n".join(rows) + b"\n")
    assert main(_args(tmp_path, data, "spd:3", "identity", radius, "--on-invalid", "center")) == 0, capsys.readouterr()
    err = capsys.readouterr().err  # at most the curator-only line on the records replaced
    assert all(line.startswith("geodp: curator-only (do not publish): ") for line in err.splitlines()), err
    _check_guarantee(
        tmp_path / "mean.json", spec="spd:3", epsilon=1.0, delta=0.0, n=N, radius=radius, mechanism="laplace"
    )
    np.testing.assert_array_equal(
        np.load(tmp_path / "mean.npy"), _expected_release(space, expected_X, center, radius, on_invalid="center")
    )
    if row is not None:
        _refused_records(
            capsys,
            tmp_path,
            _args(tmp_path, data, "spd:3", "identity", radius, out="raised"),
            f"covs.csv: record {where} (line {where + 1})",
            "1 of the 30 records is not a point of spd:3",
            out="raised",
        )


# A record line replaced by each of these lines: under the old reader each one decided n (a header
# guessed from record 0, or refused for its width; a line skipped as blank or a comment; a line
# split in two at a stray \r).
_ONE_LINE = {
    "names-of-the-right-width": b"a,b,c,d,e,f,g,h,i",  # was a header when first: n - 1
    "names-of-a-wrong-width": b"foo,bar",  # was a header of the wrong width when first: exit 2
    "blank": b"",  # was skipped: n - 1
    "whitespace": b" \t  ",
    "comment": b"# comment",
    "commented-record": b"#1,0,0,0,1,0,0,0,1",
    "stray-cr": b"1,0,0,0,1\r0,0,0,1",  # was split into two lines: n + 1
    "cr-at-both-ends": b"\r1,0,0,0,1,0,0,0,1\r\r",
    "form-feed": b"\x0c",
}


@pytest.mark.parametrize("header", [False, True], ids=["no-header", "header"])
@pytest.mark.parametrize("where", [0, N // 2, N - 1], ids=["first", "middle", "last"])
@pytest.mark.parametrize("name", _ONE_LINE)
def test_under_center_no_single_record_line_decides_n(name, where, header, tmp_path, capsys):
    """Every line of a record file is a record (the header, if any, is a public choice: --header),
    so under --on-invalid center replacing any one record line by anything leaves the release
    happening with the same n; the replaced record is an invalid one, replaced by the centre."""
    space, _, center, radius = SPACES["spd:3"]
    X = _spd_records()
    rows = [",".join(f"{v:.17g}" for v in record.ravel()).encode() for record in X]
    rows[where] = _ONE_LINE[name]
    expected_X = X.copy()
    expected_X[where] = np.nan
    data = tmp_path / "covs.csv"
    data.write_bytes(b"\n".join(([b"# v0 v1 v2 v3 v4 v5 v6 v7 v8"] if header else []) + rows) + b"\n")
    extra = ["--header"] if header else []
    code = main(_args(tmp_path, data, "spd:3", "identity", radius, "--on-invalid", "center", *extra))
    assert code == 0, capsys.readouterr()
    capsys.readouterr()
    assert json.loads((tmp_path / "mean.json").read_text())["report"]["n_samples"] == N
    np.testing.assert_array_equal(
        np.load(tmp_path / "mean.npy"), _expected_release(space, expected_X, center, radius, on_invalid="center")
    )
    # with raise it is refused; the curator-only detail names that record and its line
    _refused_records(
        capsys,
        tmp_path,
        _args(tmp_path, data, "spd:3", "identity", radius, *extra, out="raised"),
        f"covs.csv: record {where} (line {where + 1 + header})",
        "1 of the 30 records is not a point of spd:3",
        out="raised",
    )


def test_header_skips_exactly_one_line(tmp_path, capsys):
    """--header skips the first line whatever it holds (a number row too), and only that line; without
    it the first line is a record, whatever it holds: n never follows from what a line looks like."""
    space, _, center, radius = SPACES["euclidean:3"]
    X = _records(space, center, radius, np.random.default_rng(11))
    rows = "\n".join(",".join(repr(float(v)) for v in row) for row in X)

    def n_of(text, *extra):
        data = tmp_path / "points.csv"
        data.write_text(text, encoding="utf-8")
        assert (
            main(
                _args(tmp_path, data, "euclidean:3", "origin", radius, "--on-invalid", "center", "--overwrite", *extra)
            )
            == 0
        ), text[:40]
        capsys.readouterr()
        return json.loads((tmp_path / "mean.json").read_text())["report"]["n_samples"]

    for first in ("x1,x2,x3", "lat, lon, height", "NA,NA,NA", "x,x,x", "foo,bar", ",,", "", "# c", "0,0,0"):
        assert n_of(f"{first}\n{rows}\n") == N + 1, first  # no header: the first line is a record
        assert n_of(f"{first}\n{rows}\n", "--header") == N, first  # exactly one line skipped
    assert n_of(f"{rows}\n", "--header") == N - 1  # a record, skipped: --header is the curator's word
    assert n_of(f"# a\n# b\n{rows}\n", "--header") == N + 1  # the second '#' line is a record
    assert n_of(f"x,y,z\n{rows}\n\n", "--header") == N + 1  # a blank last line is a record too
    assert n_of(f"x,y,z\n{rows}", "--header") == N  # no final newline: the same records
    data = tmp_path / "points.csv"
    data.write_text("x,y,z\n", encoding="utf-8")
    _refused(
        capsys,
        tmp_path,
        _args(tmp_path, data, "euclidean:3", "origin", radius, "--header", out="alone"),
        "points.csv: holds no records",
        out="alone",
    )


def test_unreadable_files_and_wrong_keys_are_refused(tmp_path, capsys):
    X = _spd_records()
    args = lambda data, *extra: _args(tmp_path, data, "spd:3", "identity", 1.5, *extra)  # noqa: E731
    _refused(capsys, tmp_path, args(tmp_path / "missing.npy"), "missing.npy: no such file")
    _refused(capsys, tmp_path, args(tmp_path), "is a folder, not a file")
    (tmp_path / "zero.npy").write_bytes(b"")
    _refused(
        capsys,
        tmp_path,
        args(tmp_path / "zero.npy"),
        "zero.npy: not a .npy file (it does not start with numpy's NPY header)",
    )
    (tmp_path / "junk.npz").write_bytes(b"not a zip archive")
    _refused(capsys, tmp_path, args(tmp_path / "junk.npz"), "junk.npz: cannot read it as a .npz file")
    (tmp_path / "junk.mat").write_bytes(b"not a MATLAB file" * 20)
    _refused(capsys, tmp_path, args(tmp_path / "junk.mat"), "junk.mat: cannot read it as a .mat file")
    np.save(tmp_path / "pickled.npy", np.array([X[0], None], dtype=object), allow_pickle=True)
    _refused(capsys, tmp_path, args(tmp_path / "pickled.npy"), "holds Python objects, not numbers")
    (tmp_path / "latin1.csv").write_bytes("é,1\n".encode("latin-1"))
    _refused_records(capsys, tmp_path, args(tmp_path / "latin1.csv"), "latin1.csv: record 0 (line 1) is not UTF-8 text")
    (tmp_path / "covs.xlsx").write_bytes(b"")
    _refused(capsys, tmp_path, args(tmp_path / "covs.xlsx"), "unsupported format '.xlsx'; use one of .npy, .npz")

    np.savez(tmp_path / "none.npz")
    _refused(capsys, tmp_path, args(tmp_path / "none.npz"), "none.npz: holds no records (no array at all)")
    np.savez(tmp_path / "two.npz", covs=X, labels=np.arange(N))
    _refused(capsys, tmp_path, args(tmp_path / "two.npz"), "two.npz holds 2 arrays (covs, labels): name one with --key")
    _refused(
        capsys,
        tmp_path,
        args(tmp_path / "two.npz", "--key", "cov"),
        "two.npz: no array named 'cov' (--key); its arrays: covs, labels",
    )
    from scipy.io import savemat

    savemat(tmp_path / "two.mat", {"covs": X, "labels": np.arange(N)})
    _refused(capsys, tmp_path, args(tmp_path / "two.mat"), "two.mat holds 2 variables (covs, labels)")
    _refused(capsys, tmp_path, args(tmp_path / "two.mat", "--key", "y"), "no variable named 'y'")
    np.save(tmp_path / "covs.npy", X)
    _refused(
        capsys, tmp_path, args(tmp_path / "covs.npy", "--key", "covs"), "--key names an array in a .npz or .mat file"
    )


@pytest.mark.parametrize("spec", ["sphere", "spd:3:bures", "torus:2", "spd:0"])
def test_a_wrong_space_spec_is_one_line(spec, tmp_path, capsys):
    np.save(tmp_path / "covs.npy", _spd_records())
    _refused(
        capsys,
        tmp_path,
        _args(tmp_path, tmp_path / "covs.npy", spec, "identity", 1.5),
        f"space spec {spec!r}",
        "the grammar is euclidean:D | sphere:D[:K]",
    )


def test_centre_errors(tmp_path, capsys):
    np.save(tmp_path / "covs.npy", _spd_records())
    args = lambda center, spec="spd:3": _args(tmp_path, tmp_path / "covs.npy", spec, center, 1.5)  # noqa: E731
    _refused(
        capsys,
        tmp_path,
        args("north"),
        "the named point 'north' does not exist in SPD(3, metric='affine'); its named point is identity",
    )
    _refused(capsys, tmp_path, args("origin", "kendall:3"), "it has no named point: give a file")
    _refused(
        capsys,
        tmp_path,
        args("south"),
        "--center 'south' is neither a named point (identity, north, origin) nor an existing file",
    )
    np.save(tmp_path / "c.npy", np.eye(2))
    _refused(capsys, tmp_path, args(tmp_path / "c.npy"), "c.npy: holds an array of shape (2, 2), not one point")
    np.save(tmp_path / "c.npy", -np.eye(3))
    _refused(capsys, tmp_path, args(tmp_path / "c.npy"), "--center", "c.npy", "not on SPD(3, metric='affine')")
    np.save(tmp_path / "c.npy", np.full((3, 3), np.nan))
    _refused(capsys, tmp_path, args(tmp_path / "c.npy"), "--center", "NaN")
    # a flat file of 9 values, or one line of a CSV file, is one point
    np.savetxt(tmp_path / "c.csv", 2 * np.eye(3).reshape(1, 9), delimiter=",")
    assert main(args(tmp_path / "c.csv")) == 0
    assert json.loads((tmp_path / "mean.json").read_text())["report"]["center"] == (2 * np.eye(3)).tolist()


def test_radius_and_mechanism_errors_come_before_anything_is_written(tmp_path, capsys):
    np.save(tmp_path / "dirs.npy", _records(*SPACES["sphere:2"][::2], 0.5, np.random.default_rng(9)))
    data = tmp_path / "dirs.npy"
    _refused(capsys, tmp_path, _args(tmp_path, data, "sphere:2", "north", 1.0), "r*")
    _refused(
        capsys,
        tmp_path,
        _args(tmp_path, data, "sphere:2", "north", 0.5, "--mechanism", "tangent-gaussian", "--delta", "1e-6"),
        "TangentGaussianMechanism is only available on flat spaces",
    )


def test_outputs_are_checked_first_and_never_overwritten_by_default(tmp_path, capsys):
    np.save(tmp_path / "covs.npy", _spd_records())
    data = tmp_path / "covs.npy"
    base = _args(tmp_path, data, "spd:3", "identity", 1.5)
    (tmp_path / "mean.json").write_text("{}")
    err = _refused_keeping(capsys, base, "--guarantee", "mean.json' exists; choose another name or pass --overwrite")
    assert (tmp_path / "mean.json").read_text() == "{}" and not (tmp_path / "mean.npy").exists() and err
    assert main([*base, "--overwrite"]) == 0
    first = np.load(tmp_path / "mean.npy")
    assert main([*base, "--overwrite"]) == 0  # same seed: the same release, written again
    np.testing.assert_array_equal(np.load(tmp_path / "mean.npy"), first)
    capsys.readouterr()
    for option, value, needle in (
        ("--output", tmp_path / "mean.txt", "must end with .npy"),
        ("--guarantee", tmp_path / "mean.yaml", "must end with .json"),
        ("--output", tmp_path / "no" / "mean.npy", "does not exist; create it first"),
        ("--output", data, "INPUT"),
    ):
        argv = list(base)
        argv[argv.index(option) + 1] = str(value)
        _refused_keeping(capsys, [*argv, "--overwrite"], needle)
    np.testing.assert_array_equal(np.load(data), _spd_records())  # the input was not replaced


def _refused_keeping(capsys, argv, *needles):
    """A refusal where some files exist beforehand (so the no-output check is done by the caller)."""
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("geodp: error: ") and captured.err.count("\n") == 1 and captured.out == ""
    for needle in needles:
        assert needle in captured.err, (needle, captured.err)
    return captured.err


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root can write anywhere")
def test_an_unwritable_output_folder_is_refused_before_the_release(tmp_path, capsys):
    np.save(tmp_path / "covs.npy", _spd_records())
    locked = tmp_path / "locked"
    locked.mkdir()
    ledger = tmp_path / "budget.json"
    ledger.write_text('{"epsilon": 1.0}')
    locked.chmod(0o500)
    try:
        argv = _args(locked, tmp_path / "covs.npy", "spd:3", "identity", 1.5, "--budget-file", str(ledger))
        _refused_keeping(capsys, argv, "is not writable")
    finally:
        locked.chmod(0o700)
    assert json.loads(ledger.read_text()) == {"epsilon": 1.0}  # nothing charged


def test_a_failed_write_leaves_no_partial_release(tmp_path, capsys, monkeypatch):
    np.save(tmp_path / "covs.npy", _spd_records())
    ledger = tmp_path / "budget.json"
    ledger.write_text('{"epsilon": 2.0}')
    real_save = np.save

    def disk_full(file, arr, **kw):
        real_save(file, arr[:1], **kw)  # a partial write, then the failure
        raise OSError(28, "No space left on device")

    import geodp.cli.release as release

    monkeypatch.setattr(release.np, "save", disk_full)
    _refused(
        capsys,
        tmp_path,
        _args(tmp_path, tmp_path / "covs.npy", "spd:3", "identity", 1.5, "--budget-file", str(ledger)),
        "the outputs could not be written (No space left on device)",
        "the budget was charged",
    )
    # charged before the release: an error after the data were touched does not refund
    assert [s["epsilon"] for s in json.loads(ledger.read_text())["spends"]] == [1.0]


def test_public_warnings_are_one_line_each(tmp_path, capsys, monkeypatch):
    fit = PrivateFrechetMean.fit

    def warn_then_fit(self, X, y=None):
        warnings.warn(
            "This release samples by MCMC:\nDP then holds only approximately.", ApproximateSamplerWarning, stacklevel=2
        )
        return fit(self, X)

    monkeypatch.setattr(PrivateFrechetMean, "fit", warn_then_fit)
    np.save(tmp_path / "covs.npy", _spd_records())
    assert main(_args(tmp_path, tmp_path / "covs.npy", "spd:3", "identity", 1.5)) == 0
    assert capsys.readouterr().err == (
        "geodp: warning: This release samples by MCMC: DP then holds only approximately. (ApproximateSamplerWarning)\n"
    )


# --- the budget ledger --------------------------------------------------------------------------


def _ledger_args(tmp_path, ledger, out, *extra):
    return _args(
        tmp_path, tmp_path / "covs.npy", "spd:3", "identity", 1.5, "--budget-file", str(ledger), *extra, out=out
    )


def test_the_ledger_refuses_overspending(tmp_path, capsys):
    np.save(tmp_path / "covs.npy", _spd_records())
    ledger = tmp_path / "budget.json"
    ledger.write_text('{"epsilon": 1.5, "delta": 1e-6, "note": "study 7"}')
    assert main(_ledger_args(tmp_path, ledger, "first")) == 0
    assert "remaining epsilon = 0.5, delta = 1e-06" in capsys.readouterr().out
    _refused(
        capsys,
        tmp_path,
        _ledger_args(tmp_path, ledger, "second"),
        "--budget-file",
        "would exceed the budget",
        "remaining: epsilon=0.5",
        "Nothing was released",
        out="second",
    )
    data = json.loads(ledger.read_text())
    assert data["note"] == "study 7" and (data["epsilon"], data["delta"]) == (1.5, 1e-6)
    [spend] = data["spends"]
    assert (spend["epsilon"], spend["delta"], spend["output"], spend["space"], spend["mechanism"]) == (
        1.0,
        0.0,
        str(tmp_path / "first.npy"),
        "spd:3",
        "laplace",
    )
    assert spend["time"].endswith("Z") and spend["time"][:2] == "20"
    # a smaller release still fits; then the budget is spent exactly
    argv = _ledger_args(tmp_path, ledger, "third")
    argv[argv.index("--epsilon") + 1] = "0.5"
    assert main(argv) == 0
    assert [s["epsilon"] for s in json.loads(ledger.read_text())["spends"]] == [1.0, 0.5]


def test_the_ledger_charges_delta(tmp_path, capsys):
    X = _records(*SPACES["spd:3:log-euclidean"][::2], 1.5, np.random.default_rng(10))
    np.save(tmp_path / "covs.npy", X)
    ledger = tmp_path / "budget.json"
    ledger.write_text('{"epsilon": 10, "delta": 1e-6}')
    argv = lambda out: [
        *_args(
            tmp_path,
            tmp_path / "covs.npy",
            "spd:3:log-euclidean",
            "identity",
            1.5,  # noqa: E731
            "--mechanism",
            "tangent-gaussian",
            "--delta",
            "6e-7",
            "--budget-file",
            str(ledger),
            out=out,
        )
    ]
    assert main(argv("a")) == 0
    capsys.readouterr()
    _refused(capsys, tmp_path, argv("b"), "spending epsilon=1.0, delta=6e-07 would exceed", out="b")
    assert [s["delta"] for s in json.loads(ledger.read_text())["spends"]] == [6e-7]


@pytest.mark.parametrize(
    "content, needle",
    [
        (None, "does not exist; start a budget by writing"),
        ("", "is not a budget ledger (not JSON"),
        ("{epsilon: 1}", "is not a budget ledger (not JSON"),
        ("[1.0, 0.0]", "(a JSON list, not an object)"),
        ('{"delta": 1e-6}', '"epsilon" must be a number > 0, got None'),
        ('{"epsilon": -1}', '"epsilon" must be a number > 0, got -1'),
        ('{"epsilon": "1"}', '"epsilon" must be a number > 0'),
        ('{"epsilon": true}', '"epsilon" must be a number > 0'),
        ('{"epsilon": NaN}', "NaN is not a number JSON allows"),
        ('{"epsilon": Infinity}', "Infinity is not a number JSON allows"),
        ('{"epsilon": 1, "delta": 1}', '"delta" must be a number in [0, 1)'),
        ('{"epsilon": 1, "spends": {}}', '"spends" must be a list'),
        ('{"epsilon": 1, "spends": [{"epsilon": 0.5}]}', "spend 0 must be an object with numbers"),
        ('{"epsilon": 1, "spends": [{"epsilon": -0.5, "delta": 0}]}', "spend 0 must be an object with numbers"),
        # integers beyond float's range (math.isfinite raised OverflowError: a traceback)
        ('{"epsilon": 1' + "0" * 400 + "}", '"epsilon" must be a number > 0, got 10000000000000000000...'),
        ('{"epsilon": 1, "delta": -1' + "0" * 400 + "}", '"delta" must be a number in [0, 1), got -1000'),
        (
            '{"epsilon": 1, "spends": [{"epsilon": 1' + "0" * 400 + ', "delta": 0}]}',
            "spend 0 must be an object with numbers",
        ),
        # a key given twice (the last one won: a budget raised, the spends erased)
        ('{"epsilon": 1.5, "epsilon": 100}', "the key 'epsilon' appears twice in one object"),
        ('{"epsilon": 1, "spends": [{"epsilon": 1, "delta": 0}], "spends": []}', "the key 'spends' appears twice"),
        ('{"epsilon": 1, "spends": [{"epsilon": 1, "epsilon": 0, "delta": 0}]}', "the key 'epsilon' appears twice"),
    ],
)
def test_a_corrupt_ledger_is_one_line(content, needle, tmp_path, capsys):
    np.save(tmp_path / "covs.npy", _spd_records())
    ledger = tmp_path / "budget.json"
    if content is not None:
        ledger.write_text(content)
    _refused(capsys, tmp_path, _ledger_args(tmp_path, ledger, "mean"), "--budget-file", needle)
    assert (ledger.read_text() if content is not None else None) == content  # untouched


def test_a_platform_without_fcntl_is_refused(tmp_path, capsys, monkeypatch):
    import geodp.cli.ledger as ledger_module

    monkeypatch.setattr(ledger_module, "fcntl", None)
    np.save(tmp_path / "covs.npy", _spd_records())
    ledger = tmp_path / "budget.json"
    ledger.write_text('{"epsilon": 1.0}')
    _refused(capsys, tmp_path, _ledger_args(tmp_path, ledger, "mean"), "--budget-file needs file locking (fcntl)")


def test_a_failure_after_the_charge_does_not_refund(tmp_path, capsys, monkeypatch):
    def touched_then_failed(self, *args, **kwargs):
        raise RuntimeError("the computation on the private data failed")

    monkeypatch.setattr(PrivateFrechetMean, "_private_release", touched_then_failed)
    np.save(tmp_path / "covs.npy", _spd_records())
    ledger = tmp_path / "budget.json"
    ledger.write_text('{"epsilon": 1.0}')
    with pytest.raises(RuntimeError):  # a bug keeps its traceback
        main(_ledger_args(tmp_path, ledger, "mean"))
    assert [s["epsilon"] for s in json.loads(ledger.read_text())["spends"]] == [1.0]
    assert not (tmp_path / "mean.npy").exists() and not (tmp_path / "mean.json").exists()


def test_two_concurrent_releases_cannot_overspend(tmp_path):
    """Two processes whose spends add up to more than the budget, started while the ledger's lock
    is held so that both wait for it: exactly one releases, and the ledger shows one spend."""
    fcntl = pytest.importorskip("fcntl")
    np.save(tmp_path / "covs.npy", _spd_records())
    ledger = tmp_path / "budget.json"
    ledger.write_text('{"epsilon": 1.5}')
    lock = open(tmp_path / "budget.json.lock", "w")  # noqa: SIM115 (closed below)
    fcntl.flock(lock, fcntl.LOCK_EX)
    procs = []
    try:
        for out in ("a", "b"):
            argv = _ledger_args(tmp_path, ledger, out)
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "geodp.cli", *argv],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
        for proc in procs:  # both have read nothing yet and wait for the lock
            assert proc.stderr.readline().startswith("geodp: waiting for another command that holds the lock")
    finally:
        lock.close()  # releases the lock
    codes = {}
    for name, proc in zip(("a", "b"), procs):
        out, err = proc.communicate(timeout=120)
        codes[name] = (proc.returncode, out, err)
    assert sorted(code for code, _, _ in codes.values()) == [0, 2], codes
    won = next(name for name, (code, _, _) in codes.items() if code == 0)
    lost = "b" if won == "a" else "a"
    assert "would exceed the budget" in codes[lost][2] and "Traceback" not in codes[lost][2]
    spends = json.loads(ledger.read_text())["spends"]
    assert [s["output"] for s in spends] == [str(tmp_path / f"{won}.npy")]
    assert (tmp_path / f"{won}.npy").exists() and (tmp_path / f"{won}.json").exists()
    assert not (tmp_path / f"{lost}.npy").exists() and not (tmp_path / f"{lost}.json").exists()


def test_a_symlink_to_the_ledger_is_the_same_budget(tmp_path, capsys):
    """A release through a symbolic link charges the ledger it names (the link stays a link, one
    lock file): a second release through the real name sees the first one's spend."""
    np.save(tmp_path / "covs.npy", _spd_records())
    ledger = tmp_path / "budget.json"
    ledger.write_text('{"epsilon": 1.5}')
    alias = tmp_path / "alias.json"
    alias.symlink_to("budget.json")
    assert main(_ledger_args(tmp_path, alias, "a")) == 0
    assert alias.is_symlink() and os.readlink(alias) == "budget.json"
    assert [s["output"] for s in json.loads(ledger.read_text())["spends"]] == [str(tmp_path / "a.npy")]
    assert not (tmp_path / "budget.json.lock").exists() and not (tmp_path / "alias.json.lock").exists()
    capsys.readouterr()
    _refused(capsys, tmp_path, _ledger_args(tmp_path, ledger, "b"), "would exceed the budget", out="b")
    _refused(capsys, tmp_path, _ledger_args(tmp_path, alias, "c"), "would exceed the budget", out="c")
    assert len(json.loads(alias.read_text())["spends"]) == 1


def test_a_hard_linked_ledger_is_refused(tmp_path, capsys):
    """Two hard links are two names of one ledger with two lock files, and a rewrite through one
    name splits them into two budgets: such a ledger is refused before anything is charged."""
    np.save(tmp_path / "covs.npy", _spd_records())
    ledger = tmp_path / "budget.json"
    ledger.write_text('{"epsilon": 1.5}')
    os.link(ledger, tmp_path / "hard.json")
    for name, out in (("hard.json", "a"), ("budget.json", "b")):
        _refused(
            capsys,
            tmp_path,
            _ledger_args(tmp_path, tmp_path / name, out),
            f"--budget-file '{tmp_path / name}' has 2 names (hard links); a ledger must have one",
            "remove the other links",
            out=out,
        )
    assert ledger.read_text() == '{"epsilon": 1.5}' and (tmp_path / "hard.json").read_text() == '{"epsilon": 1.5}'
    (tmp_path / "hard.json").unlink()
    assert main(_ledger_args(tmp_path, ledger, "c")) == 0


def test_a_removed_lock_file_cannot_lose_a_spend(tmp_path):
    """The lock file is removed while command A holds it: command B takes a fresh one and spends.
    A's spend reads the ledger again, so it sees B's and is refused instead of overwriting it."""
    pytest.importorskip("fcntl")
    from geodp.cli.ledger import open_ledger
    from geodp.errors import BudgetExceededError

    ledger = tmp_path / "budget.json"
    ledger.write_text('{"epsilon": 1.5}')
    with open_ledger(ledger, {"output": "a"}) as a:
        (tmp_path / "budget.json.lock").unlink()
        with open_ledger(ledger, {"output": "b"}) as b:  # no wait: its lock file is a new one
            b.spend(1.0)
        with pytest.raises(BudgetExceededError, match="would exceed the budget"):
            a.spend(1.0)
    assert [s["output"] for s in json.loads(ledger.read_text())["spends"]] == ["b"]


def _in_thread(target):
    import threading

    outcome = {}

    def run():
        try:
            outcome["result"] = target()
        except BaseException as err:  # noqa: BLE001 (handed to the test)
            outcome["error"] = err

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


def test_a_lock_on_a_removed_lock_file_is_taken_again(tmp_path, capsys):
    """A command waits on the lock file; it is removed and another command takes a new one; the
    old one is let go. The waiter must not go on with a lock on a file that no longer has the
    name: it waits for the new one."""
    import threading
    import time

    fcntl = pytest.importorskip("fcntl")
    from geodp.cli.ledger import open_ledger

    ledger = tmp_path / "budget.json"
    ledger.write_text('{"epsilon": 1.5}')
    lock = tmp_path / "budget.json.lock"
    old = open(lock, "w")  # noqa: SIM115 (closed below)
    fcntl.flock(old, fcntl.LOCK_EX)
    entered = threading.Event()

    def waiter():
        with open_ledger(ledger, {"output": "w"}) as accountant:
            entered.set()
            accountant.spend(1.0)

    thread, outcome = _in_thread(waiter)
    time.sleep(0.5)  # the waiter has opened the old lock file and waits for it
    lock.unlink()
    new = open(lock, "w")  # noqa: SIM115 (closed below)
    fcntl.flock(new, fcntl.LOCK_EX)
    old.close()
    try:
        assert not entered.wait(1.0), "went on while another command held the ledger's lock"
    finally:
        new.close()
    thread.join(30)
    assert entered.is_set() and "error" not in outcome, outcome
    assert [s["output"] for s in json.loads(ledger.read_text())["spends"]] == ["w"]
    assert "waiting for another command" in capsys.readouterr().err


def test_a_spend_waits_for_the_ledger_file_and_reads_it_again(tmp_path):
    """A spend locks the ledger file itself while it reads, checks and rewrites it: a command that
    got past a removed lock file and is rewriting the ledger is waited for, and its spend counted."""
    import time

    fcntl = pytest.importorskip("fcntl")
    from geodp.cli.ledger import open_ledger
    from geodp.errors import BudgetExceededError

    ledger = tmp_path / "budget.json"
    ledger.write_text('{"epsilon": 1.5}')
    with open_ledger(ledger, {"output": "a"}) as accountant:
        other = open(ledger, "rb")  # noqa: SIM115 (closed below): another command, mid-spend
        fcntl.flock(other, fcntl.LOCK_EX)
        thread, outcome = _in_thread(lambda: accountant.spend(1.0))
        time.sleep(0.5)
        try:
            assert thread.is_alive(), f"did not wait for the ledger's lock: {outcome}"
            new = tmp_path / "new.json"
            new.write_text('{"epsilon": 1.5, "spends": [{"epsilon": 1.0, "delta": 0.0, "output": "other"}]}')
            os.replace(new, ledger)  # the other command's spend
        finally:
            other.close()
        thread.join(30)
    assert isinstance(outcome.get("error"), BudgetExceededError), outcome
    assert [s["output"] for s in json.loads(ledger.read_text())["spends"]] == ["other"]
