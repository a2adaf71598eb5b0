"""Public defaults the audits share: the centre of the ball when none is given, and the largest
public ``n`` they accept (docs/audit.md).

Everything here is a function of public settings only (the space, ``n``): the audits run on
synthetic pairs, never on anybody's records.
"""

from __future__ import annotations

import numbers

import numpy as np

from geodp.errors import InvalidParameterError
from geodp.manifolds import Manifold
from geodp.validation import check_sample_size

__all__ = ["MAX_KNG_N", "MAX_N", "MAX_RECORDS", "check_audit_n", "default_center"]

#: Largest public ``n`` of an audit whose pair is described without writing records out (the
#: Laplace and tangent-Gaussian ε audits): beyond it the sensitivity ``~ r/n`` comes within a few
#: thousand ulps of the coordinates near the centre, and the pair's footpoints are no longer
#: resolved in float64.
MAX_N = 10**9

#: Largest public ``n`` of the sensitivity search, which splits ``n − 1`` records into clusters
#: (it draws cluster sizes among ``1 … n − 1``).
MAX_RECORDS = 10**6

#: Largest public ``n`` of the KNG ε audit: its pair holds the ``n`` records, and every draw and
#: every quadrature node evaluates the gradient field over all of them; at n = 1000 the default run
#: takes about 80 s on two cores (S², the quadrature ~20 s, 13,000 draws per law and round).
MAX_KNG_N = 1000


def check_audit_n(n, *, limit: int, what: str) -> int:
    """Validate a public ``n`` for an audit: an integer in ``[1, limit]``.

    Parameters
    ----------
    n : int
    limit : int
        :data:`MAX_N`, :data:`MAX_KNG_N` or :data:`MAX_RECORDS`.
    what : str
        Why the limit applies (ends the error message).

    Raises
    ------
    InvalidTypeError
        ``n`` is not an integer.
    InvalidParameterError
        ``n < 1`` or ``n > limit``.

    Examples
    --------
    >>> check_audit_n(5, limit=MAX_RECORDS, what="the search")
    5
    >>> check_audit_n(10**23, limit=MAX_N, what="the audit")
    Traceback (most recent call last):
    ...
    geodp.errors.InvalidParameterError: n must be at most 1e+09 for the audit, got 100000000000000000000000.
    """
    if isinstance(n, numbers.Integral) and not isinstance(n, bool) and n > limit:
        raise InvalidParameterError(f"n must be at most {limit:.0e} for {what}, got {n!r}.")
    return check_sample_size(n)


def default_center(space: Manifold) -> np.ndarray:
    """The public centre an audit uses when none is given: a canonical point of the space.

    * Sphere of radius ``R``: the north pole ``(0, …, 0, R)``;
    * SPD(k), either metric: the identity;
    * Euclidean space: the origin; hyperbolic space: its origin ``(R, 0, …, 0)``;
    * Kendall shape space of ``k`` landmarks: the preshape of the regular ``k``-gon (landmarks
      ``(cos 2πj/k, sin 2πj/k)``, centred and scaled to norm 1);
    * any other space: its ``reference_point()`` (a fixed point unless the space names one).

    These are the named points of the command line (``north``, ``identity``, ``origin``).

    Parameters
    ----------
    space : Manifold

    Returns
    -------
    numpy.ndarray, shape ``space.point_shape``

    Examples
    --------
    >>> from geodp.manifolds import SPD, KendallShape, Sphere
    >>> default_center(Sphere(2)).tolist()
    [0.0, 0.0, 1.0]
    >>> default_center(SPD(2)).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    >>> square = default_center(KendallShape(4))
    >>> round(float(np.linalg.norm(square)), 12), (square.round(6) + 0.0).tolist()[0]
    (1.0, [0.5, 0.0])
    """
    point = space.reference_point()
    return space.check_points(point, "center", batch_ndim=0)
