"""The unvalidated fast path of a space, as an explicit API: ``space.unchecked``.

A :class:`~geodp.manifolds.Manifold` validates the arguments of its public methods (shapes,
finiteness, membership) and then calls its implementation methods (``_exp``, ``_log``, …). Code
that has already validated its points — estimators, samplers, the audit's inner loops — calls
the implementations through ``space.unchecked``, so that an underscore always means
"private to its module" and the skipped validation is visible at the call site.
"""

from __future__ import annotations

__all__ = ["UncheckedGeometry"]


class UncheckedGeometry:
    """The unvalidated geometry of a space (see :attr:`Manifold.unchecked`): each method calls
    the space's implementation directly, without checking shapes, finiteness or membership.

    Examples
    --------
    >>> from geodp.manifolds import Sphere
    >>> fast = Sphere(2).unchecked
    >>> round(float(fast.dist([1.0, 0.0, 0.0], [0.0, 1.0, 0.0])), 6)
    1.570796
    """

    __slots__ = ("space",)

    def __init__(self, space):
        self.space = space

    def exp(self, x, v):
        return self.space._exp(x, v)

    def log(self, x, y):
        return self.space._log(x, y)

    def dist(self, x, y):
        return self.space._dist(x, y)

    def inner(self, x, u, v):
        return self.space._inner(x, u, v)

    def norm(self, x, v):
        return self.space._norm(x, v)

    def transport(self, x, y, v):
        return self.space._transport(x, y, v)

    def polar_exp(self, x, direction, t):
        return self.space._polar_exp(x, direction, t)

    def clip_to_ball(self, X, center, radius, *, last_resort: str = "center"):
        return self.space._clip_to_ball(X, center, radius, last_resort=last_resort)

    def random_tangent(self, x, size=None, rng=None):
        return self.space._random_tangent(x, size=size, rng=rng)

    def random_unit_tangent(self, x, size=None, rng=None):
        return self.space._random_unit_tangent(x, size=size, rng=rng)

    def adjoint_exp_derivatives(self, p, u, w, y=None):
        return self.space._adjoint_exp_derivatives(p, u, w, y)

    def tangent_from_coordinates(self, p, c):
        return self.space._tangent_from_coordinates(p, c)

    def to_embedding(self, x):
        return self.space._to_embedding(x)

    def from_embedding(self, y):
        return self.space._from_embedding(y)

    def extrinsic_radius(self, center, radius: float) -> float:
        return self.space._extrinsic_radius(center, radius)

    def mean_log_norms(self, xs, data):
        return self.space._mean_log_norms(xs, data)

    def distances_from(self, start):
        return self.space._distances_from(start)

    def isometry_to_reference(self, center):
        return self.space._isometry_to_reference(center)

    def prepared_records(self, block, center, radius):
        return self.space._prepared_records(block, center, radius)

    def canonical_records(self, X):
        return self.space._canonical_records(X)

    def dataset_array(self, X, name: str = "X"):
        """``X`` as float64 ``(n, *point_shape)``; entries that are not finite reals become NaN."""
        return self.space._dataset_array(X, name)
