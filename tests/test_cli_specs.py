"""The one parser of space specs and named points shared by the ``geodp`` commands."""

import numpy as np
import pytest

from geodp.cli import parse_space, space_spec
from geodp.cli.specs import SPACE_GRAMMAR, named_point
from geodp.errors import InvalidParameterError, InvalidTypeError
from geodp.manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Sphere


@pytest.mark.parametrize(
    "spec, space",
    [
        ("euclidean:5", Euclidean(5)),
        ("sphere:2", Sphere(2)),
        ("sphere:3:4", Sphere(3, curvature=4.0)),
        ("sphere:2:0.25", Sphere(2, curvature=0.25)),
        ("hyperbolic:2", Hyperbolic(2)),
        ("hyperbolic:4:-0.5", Hyperbolic(4, curvature=-0.5)),
        ("spd:8", SPD(8, metric="affine")),
        ("spd:8:affine", SPD(8, metric="affine")),
        ("spd:8:log-euclidean", SPD(8, metric="log-euclidean")),
        ("SPD:2:Log-Euclidean", SPD(2, metric="log-euclidean")),
        (" kendall:8 ", KendallShape(8)),
        ("kendall:3", KendallShape(3)),
    ],
)
def test_parse_space_names_the_space(spec, space):
    parsed = parse_space(spec)
    assert type(parsed) is type(space) and parsed == space
    # the inverse: the shortest spec, which parses back to the same space
    assert parse_space(space_spec(parsed)) == space


def test_space_spec_is_the_shortest_spelling():
    assert [
        space_spec(s)
        for s in (
            SPD(3),
            SPD(3, metric="log-euclidean"),
            Sphere(2),
            Sphere(2, curvature=2.5),
            Hyperbolic(3),
            Hyperbolic(3, curvature=-2.0),
            Euclidean(1),
            KendallShape(6),
        )
    ] == [
        "spd:3",
        "spd:3:log-euclidean",
        "sphere:2",
        "sphere:2:2.5",
        "hyperbolic:3",
        "hyperbolic:3:-2.0",
        "euclidean:1",
        "kendall:6",
    ]
    # a curvature that is not a short decimal survives the round trip exactly
    k = 1 / 3
    assert parse_space(space_spec(Sphere(2, curvature=k))).curvature == k


def test_space_spec_refuses_a_space_without_a_spec():
    with pytest.raises(InvalidTypeError, match="has no space spec"):
        space_spec(object())


@pytest.mark.parametrize(
    "spec, problem",
    [
        ("", "unknown space ''"),
        ("torus:2", "unknown space 'torus'"),
        ("sphere", "sphere needs its dimension"),
        ("spd", "spd needs its size"),
        ("sphere:0", "D must be an integer >= 1"),
        ("sphere:two", "D must be an integer >= 1"),
        ("sphere:2.0", "D must be an integer >= 1"),
        ("sphere:-2", "D must be an integer >= 1"),
        ("euclidean:", "D must be an integer >= 1"),
        ("kendall:2", "K must be an integer >= 3"),
        ("spd:0", "K must be an integer >= 1"),
        ("spd:3:euclid", "the SPD metric must be affine (pyRiemann's riemann), log-euclidean"),
        ("spd:3:affine:1", "too many fields for spd"),
        ("euclidean:3:1", "too many fields for euclidean"),
        ("kendall:4:2", "too many fields for kendall"),
        ("sphere:2:-1", "the curvature K of sphere:D:K must be a finite number > 0"),
        ("sphere:2:0", "the curvature K of sphere:D:K must be a finite number > 0"),
        ("sphere:2:inf", "the curvature K of sphere:D:K must be a finite number > 0"),
        ("hyperbolic:2:1", "the curvature K of hyperbolic:D:K must be a finite number < 0"),
        ("hyperbolic:2:nan", "the curvature K of hyperbolic:D:K must be a finite number < 0"),
    ],
)
def test_a_wrong_spec_is_one_line_with_the_grammar(spec, problem):
    with pytest.raises(InvalidParameterError) as exc:
        parse_space(spec)
    message = str(exc.value)
    assert message.startswith(f"space spec {spec!r}: {problem}")
    assert message.endswith(f"the grammar is {SPACE_GRAMMAR}") and "\n" not in message


def test_parse_space_needs_a_string():
    with pytest.raises(InvalidTypeError, match="must be a string"):
        parse_space(8)


@pytest.mark.parametrize(
    "space, name, expected",
    [
        (SPD(3), "identity", np.eye(3)),
        (SPD(2, metric="log-euclidean"), "identity", np.eye(2)),
        (Sphere(2), "north", [0.0, 0.0, 1.0]),
        (Sphere(3, curvature=4.0), "north", [0.0, 0.0, 0.0, 0.5]),  # radius 1/sqrt(4)
        (Euclidean(3), "origin", [0.0, 0.0, 0.0]),
        (Hyperbolic(2), "origin", [1.0, 0.0, 0.0]),
        (Hyperbolic(2, curvature=-4.0), "origin", [0.5, 0.0, 0.0]),  # -x0² = -1/4
    ],
)
def test_named_points(space, name, expected):
    point = named_point(space, name)
    assert np.array_equal(point, np.asarray(expected, dtype=float))
    assert bool(space.belongs(point))


@pytest.mark.parametrize(
    "space, name, tail",
    [
        (SPD(3), "north", "its named point is identity, or give a file holding one point."),
        (Sphere(2), "identity", "its named point is north, or give a file holding one point."),
        (Euclidean(2), "north", "its named point is origin, or give a file holding one point."),
        (Hyperbolic(2), "identity", "its named point is origin, or give a file holding one point."),
        (KendallShape(4), "origin", "it has no named point: give a file holding one point."),
    ],
)
def test_a_named_point_the_space_lacks_is_refused(space, name, tail):
    with pytest.raises(InvalidParameterError) as exc:
        named_point(space, name)
    assert str(exc.value) == f"the named point {name!r} does not exist in {space!r}; {tail}"


def test_an_unknown_name_is_refused():
    with pytest.raises(
        InvalidParameterError, match="'south' is not a named point; the named points are identity, north, origin"
    ):
        named_point(Sphere(2), "south")


def test_pyriemann_metric_names_are_aliases():
    assert parse_space("spd:4:riemann") == SPD(4) and parse_space("spd:4:logeuclid") == SPD(4, metric="log-euclidean")
    assert space_spec(parse_space("spd:4:logeuclid")) == "spd:4:log-euclidean"
