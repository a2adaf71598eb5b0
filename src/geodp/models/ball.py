"""A data ball chosen privately (``geodp.domain.private_ball``), as the estimators accept it.

The function that chooses it lives in :mod:`geodp.domain`, above the estimators it uses; the
record it returns lives here so that the estimators (``ball=``) can recognise it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from geodp.errors import InvalidParameterError, InvalidTypeError
from geodp.models.report import BallDiagnostics, PrivacyReport

__all__ = ["PrivateBall", "resolve_ball"]


@dataclass(frozen=True, eq=False)
class PrivateBall:
    """A geodesic ball released under differential privacy (:func:`geodp.domain.private_ball`).

    Its centre and radius are public once released (their ε is in the report), so they may
    serve as the data ball of a later release on the same records: pass ``ball=`` to
    :class:`~geodp.models.PrivateFrechetMean`, :class:`~geodp.models.PrivateGeodesicRegression`
    or :class:`~geodp.models.PrivateMDM`. The two releases compose sequentially: ε of the ball
    plus ε of the estimator (charge both to one accountant).

    Attributes
    ----------
    center : numpy.ndarray, shape space.point_shape
        The released centre (a valid point of the space).
    radius : float
        The released radius, within the space's allowed radii (below r* on positively curved spaces).
    epsilon, delta : float
        What the release of the ball cost (pure ε-DP: ``delta == 0.0``).
    space : Manifold
        The space the ball lives in.
    privacy_report_ : PrivacyReport
        The **publishable** guarantee of the ball (text and ``to_dict()``).
    curator_diagnostics_ : BallDiagnostics
        **Curator-only** facts (the fraction of records inside). Never publish them.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.domain import private_ball
    >>> from geodp.manifolds import Euclidean
    >>> X = np.random.default_rng(0).normal(size=(2000, 2)) * 0.1 + 3.0
    >>> ball = private_ball(Euclidean(2), X, epsilon=0.5, center=np.zeros(2), radius=20.0, random_state=0)
    >>> bool(ball.radius < 2.0), ball.epsilon
    (True, 0.5)
    """

    center: np.ndarray
    radius: float
    epsilon: float
    delta: float
    space: object = field(repr=False)
    privacy_report_: PrivacyReport = field(repr=False)
    curator_diagnostics_: BallDiagnostics = field(repr=False)

    def __repr__(self) -> str:
        return (
            f"PrivateBall(radius={self.radius!r}, epsilon={self.epsilon!r}, delta={self.delta!r}, space={self.space!r})"
        )


def resolve_ball(space, center, radius, ball):
    """The public ball an estimator releases in: ``(center, radius, note)``, where ``note`` is
    None for a ball given as ``center``/``radius`` and, for a :class:`PrivateBall`, the public
    sentence the estimator's report carries. Refuses a ball given both ways or of the wrong type.

    Examples
    --------
    >>> resolve_ball(None, [0.0], 1.0, None)
    ([0.0], 1.0, None)
    """
    if ball is None:
        return center, radius, None
    if not isinstance(ball, PrivateBall):
        raise InvalidTypeError(
            f"ball must be a PrivateBall from geodp.domain.private_ball, got {type(ball).__name__}; "
            "pass a public ball as center= and radius= instead."
        )
    if center is not None or radius is not None:
        raise InvalidParameterError("pass either ball= or center= and radius=, not both.")
    if repr(ball.space) != repr(space):
        raise InvalidParameterError(f"ball was chosen on {ball.space!r}, but this estimator works on {space!r}.")
    note = (
        f"data ball chosen privately by geodp.domain.private_ball at epsilon = {ball.epsilon!r}, "
        f"delta = {ball.delta!r} (its own report); with this release the records' total cost is the sum "
        "(sequential composition): charge both to one accountant"
    )
    return ball.center, ball.radius, note
