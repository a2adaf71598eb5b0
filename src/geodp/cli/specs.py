"""Space specs: the short names the ``geodp`` commands give spaces (``spd:8``, ``sphere:2``, ...),
and the named public points (``identity``, ``north``, ``origin``).

Every command that takes a space parses it here, so the grammar is the same everywhere:

==========================  ===================================================================
spec                        space
==========================  ===================================================================
``euclidean:D``             ``Euclidean(D)``, points of shape ``(D,)``
``sphere:D[:K]``            ``Sphere(D, curvature=K)`` (K > 0, default 1), unit vectors of R^(D+1)
``hyperbolic:D[:K]``        ``Hyperbolic(D, curvature=K)`` (K < 0, default -1), hyperboloid points
``spd:K[:METRIC]``          ``SPD(K, metric=METRIC)``: ``affine`` (default), ``log-euclidean`` or
                            ``log-cholesky``
                            (pyRiemann's ``riemann`` and ``logeuclid`` are aliases)
``kendall:K``               ``KendallShape(K)``: K >= 3 planar landmarks, points of shape ``(K, 2)``
==========================  ===================================================================
"""

from __future__ import annotations

import math
import re

import numpy as np

from geodp.errors import InvalidParameterError, InvalidTypeError
from geodp.manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Manifold, Sphere

__all__ = ["NAMED_POINTS", "SPACE_GRAMMAR", "named_point", "parse_space", "space_spec"]

# pyRiemann's names of the same metrics, accepted as aliases
_PYRIEMANN_METRICS = {"riemann": "affine", "logeuclid": "log-euclidean"}
SPACE_GRAMMAR = (
    "euclidean:D | sphere:D[:K] | hyperbolic:D[:K] | spd:K[:affine|:log-euclidean|:log-cholesky] | "
    "kendall:K (e.g. spd:8, spd:8:log-euclidean, sphere:2, hyperbolic:2, kendall:8, euclidean:5)"
)

# name -> the kinds of space that have the point
NAMED_POINTS = {"identity": (SPD,), "north": (Sphere,), "origin": (Euclidean, Hyperbolic)}

_INTEGER = re.compile(r"[0-9]+")
_SIZE = {"euclidean": ("D", 1), "sphere": ("D", 1), "hyperbolic": ("D", 1), "spd": ("K", 1), "kendall": ("K", 3)}


def _refuse(spec, problem: str):
    return InvalidParameterError(f"space spec {spec!r}: {problem}; the grammar is {SPACE_GRAMMAR}")


def _size(spec, kind: str, text: str) -> int:
    letter, minimum = _SIZE[kind]
    if not _INTEGER.fullmatch(text) or int(text) < minimum:
        raise _refuse(spec, f"{letter} must be an integer >= {minimum} in {kind}:{letter}, got {text!r}")
    return int(text)


def _curvature(spec, kind: str, text: str) -> float:
    sign = "> 0" if kind == "sphere" else "< 0"
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and (value > 0 if kind == "sphere" else value < 0)):
        raise _refuse(spec, f"the curvature K of {kind}:D:K must be a finite number {sign}, got {text!r}")
    return value


def parse_space(spec: str) -> Manifold:
    """The space a spec names.

    Parameters
    ----------
    spec : str
        ``euclidean:D``, ``sphere:D[:K]``, ``hyperbolic:D[:K]``, ``spd:K[:affine|:log-euclidean|:log-cholesky]``
        or ``kendall:K`` (see this module's docstring).

    Returns
    -------
    Manifold

    Raises
    ------
    InvalidParameterError
        The spec does not follow the grammar; the one-line message quotes the grammar.
    InvalidTypeError
        ``spec`` is not a string.

    Examples
    --------
    >>> parse_space("spd:8")
    SPD(8, metric='affine')
    >>> parse_space("spd:3:log-euclidean"), parse_space("sphere:2:4"), parse_space("kendall:5")
    (SPD(3, metric='log-euclidean'), Sphere(2, curvature=4.0), KendallShape(5))
    >>> parse_space("sphere")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    geodp.errors.InvalidParameterError: space spec 'sphere': sphere needs its dimension, as in sphere:D; the ...
    """
    if not isinstance(spec, str):
        raise InvalidTypeError(f"a space spec must be a string such as 'spd:8', got {type(spec).__name__}.")
    kind, *fields = spec.strip().lower().split(":")
    if kind not in _SIZE:
        raise _refuse(spec, f"unknown space {kind!r}")
    letter = _SIZE[kind][0]
    if not fields:
        raise _refuse(spec, f"{kind} needs its {'dimension' if letter == 'D' else 'size'}, as in {kind}:{letter}")
    most = 2 if kind in ("sphere", "hyperbolic", "spd") else 1
    if len(fields) > most:
        raise _refuse(spec, f"too many fields for {kind}")
    size = _size(spec, kind, fields[0])
    if kind == "euclidean":
        return Euclidean(size)
    if kind == "kendall":
        return KendallShape(size)
    if kind == "spd":
        metric = fields[1] if len(fields) == 2 else "affine"
        metric = _PYRIEMANN_METRICS.get(metric, metric)
        if metric not in ("affine", "log-euclidean", "log-cholesky"):
            raise _refuse(
                spec,
                f"the SPD metric must be affine (pyRiemann's riemann), log-euclidean (pyRiemann's "
                f"logeuclid) or log-cholesky, got {metric!r}",
            )
        return SPD(size, metric=metric)
    if kind == "sphere":
        return Sphere(size, curvature=_curvature(spec, kind, fields[1]) if len(fields) == 2 else 1.0)
    return Hyperbolic(size, curvature=_curvature(spec, kind, fields[1]) if len(fields) == 2 else -1.0)


def space_spec(space: Manifold) -> str:
    """The spec of a space, the inverse of :func:`parse_space`: ``parse_space(space_spec(s)) == s``.

    Parameters
    ----------
    space : Manifold
        A ``Euclidean``, ``Sphere``, ``Hyperbolic``, ``SPD`` or ``KendallShape``.

    Returns
    -------
    str
        The shortest spec (defaults left out; a curvature written as Python's ``repr``).

    Raises
    ------
    InvalidTypeError
        The space has no spec (not one of the five kinds above).

    Examples
    --------
    >>> from geodp.manifolds import SPD, Sphere
    >>> space_spec(SPD(8)), space_spec(SPD(8, metric="log-euclidean")), space_spec(Sphere(2, curvature=0.25))
    ('spd:8', 'spd:8:log-euclidean', 'sphere:2:0.25')
    """
    if isinstance(space, Euclidean):
        return f"euclidean:{space.dim}"
    if isinstance(space, KendallShape):
        return f"kendall:{space.n_landmarks}"
    if isinstance(space, SPD):
        return f"spd:{space.k}" + ("" if space.metric == "affine" else f":{space.metric}")
    if isinstance(space, Sphere):
        return f"sphere:{space.dim}" + ("" if space.curvature == 1.0 else f":{space.curvature!r}")
    if isinstance(space, Hyperbolic):
        return f"hyperbolic:{space.dim}" + ("" if space.curvature == -1.0 else f":{space.curvature!r}")
    raise InvalidTypeError(
        f"{space!r} has no space spec; specs name Euclidean, Sphere, Hyperbolic, SPD and KendallShape spaces."
    )


def named_point(space: Manifold, name: str) -> np.ndarray:
    """The public point called ``name`` in ``space``.

    ``identity``: the identity matrix of SPD(k); ``north``: ``(0, …, 0, R)`` on a sphere of radius
    ``R = 1/√K``; ``origin``: the zero vector of Euclidean space, ``(R, 0, …, 0)`` on the
    hyperboloid. Kendall shape spaces have no named point.

    Raises
    ------
    InvalidParameterError
        ``name`` is not a named point, or the space does not have it (the message lists the names
        that exist for the space).

    Examples
    --------
    >>> from geodp.manifolds import Sphere, SPD
    >>> named_point(Sphere(2), "north").tolist()
    [0.0, 0.0, 1.0]
    >>> named_point(SPD(2), "north")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    geodp.errors.InvalidParameterError: the named point 'north' does not exist in SPD(2, metric='affine'); ...
    """
    if name not in NAMED_POINTS:
        raise InvalidParameterError(f"{name!r} is not a named point; the named points are {', '.join(NAMED_POINTS)}.")
    if not isinstance(space, NAMED_POINTS[name]):
        own = [n for n, kinds in NAMED_POINTS.items() if isinstance(space, kinds)]
        choice = f"its named point is {own[0]}, or give" if own else "it has no named point: give"
        raise InvalidParameterError(
            f"the named point {name!r} does not exist in {space!r}; {choice} a file holding one point."
        )
    if isinstance(space, SPD):
        return np.eye(space.k)
    if isinstance(space, Hyperbolic):
        return space.origin
    point = np.zeros(space.point_shape)
    if isinstance(space, Sphere):
        point[-1] = space.radius
    return point
