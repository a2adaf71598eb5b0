"""Random-walk moves on ``(p, v_1, …, v_m)``: a footpoint and ``m`` tangent vectors at it.

The regression parameters of a geodesic model live in the Whitney sum of ``m`` copies of the
tangent bundle. :class:`TangentBundle` presents it to
:func:`~geodp.distributions.mcmc.random_walk_metropolis` as a "space" whose moves are the
proposal of docs/math.md §9: ``p' = Exp(p, s ξ)`` and ``v'_j = Γ_{p→p'}(v_j + s_v ζ_j)``, with
``ξ, ζ_j`` standard Gaussians in ``T_p M``. Parallel transport is an isometry along the same
geodesic both ways, and the reverse move uses ``−Γξ, −Γζ``, so on geodp's symmetric spaces the
proposal is symmetric w.r.t. the Riemannian volume of ``M`` times Lebesgue measure on the
fibres: the Metropolis ratio is the density ratio.
"""

from __future__ import annotations

import numpy as np

from geodp.manifolds.base import Manifold

__all__ = ["TangentBundle"]


class TangentBundle:
    """``(p, v_1, …, v_m)`` stacked as one array of shape ``(1 + m, *space.point_shape)``.

    Parameters
    ----------
    space : Manifold
    m : int
        Number of tangent vectors (covariates).
    footpoint_step, velocity_step : float
        Relative proposal scales of the footpoint and of the velocities (the MH step size
        multiplies both). ``footpoint_step=0`` keeps the footpoint fixed: a random walk in
        ``(T_p M)^m``.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Sphere
    >>> space = Sphere(2)
    >>> bundle = TangentBundle(space, 1)
    >>> state = np.array([[[0.0, 0.0, 1.0], [0.3, 0.0, 0.0]]])  # p = north, v = 0.3 e_x
    >>> moved = bundle.unchecked.exp(state, 0.1 * bundle.unchecked.random_tangent(state, rng=0))
    >>> bool(np.isclose(np.linalg.norm(moved[0, 0]), 1.0)), bool(abs(moved[0, 0] @ moved[0, 1]) < 1e-12)
    (True, True)
    """

    closed_forms = frozenset()  # none of the spaces' closed forms holds on the bundle

    def __init__(self, space: Manifold, m: int, *, footpoint_step: float = 1.0, velocity_step: float = 1.0):
        self.space = space
        self.m = int(m)
        self.point_shape = (1 + self.m,) + tuple(space.point_shape)
        self.dim = (1 + self.m) * space.dim if footpoint_step > 0 else self.m * space.dim
        self.footpoint_step = float(footpoint_step)
        self.velocity_step = float(velocity_step)

    def _axis(self) -> int:
        return -1 - len(self.space.point_shape)

    def split(self, state):
        """``(p, v)`` of shapes ``(*batch, *point_shape)`` and ``(*batch, m, *point_shape)``."""
        state = np.asarray(state, dtype=float)
        return np.take(state, 0, axis=self._axis()), np.take(state, np.arange(1, 1 + self.m), axis=self._axis())

    def stack(self, p, v):
        """Inverse of :meth:`split`."""
        return np.concatenate(
            [np.expand_dims(np.asarray(p, dtype=float), self._axis()), np.asarray(v, dtype=float)], axis=self._axis()
        )

    @property
    def unchecked(self):
        """The bundle's own geometry is unvalidated (the MCMC samplers call it as a space's fast path)."""
        return self

    def random_tangent(self, x, size=None, rng=None):
        """Gaussian steps: the space's tangent Gaussian at the footpoint, scaled per component."""
        p, _ = self.split(x)
        repeated = np.repeat(np.expand_dims(p, self._axis()), 1 + self.m, axis=self._axis())
        xi = self.space.unchecked.random_tangent(repeated, rng=rng)
        scales = np.array([self.footpoint_step] + [self.velocity_step] * self.m)
        return xi * scales.reshape((-1,) + (1,) * len(self.space.point_shape))

    def exp(self, x, d):
        """Move the footpoint by ``Exp`` and the velocities by addition, transported to the new footpoint."""
        p, v = self.split(x)
        dp, dv = self.split(d)
        moved = v + dv
        if self.footpoint_step == 0:
            return self.stack(p, moved)
        q = self.space.unchecked.exp(p, dp)
        transported = self.space.unchecked.transport(
            np.expand_dims(p, self._axis()), np.expand_dims(q, self._axis()), moved
        )
        return self.stack(q, transported)

    def project(self, x):
        """Re-project the footpoint onto the manifold and the velocities onto its tangent space
        (long chains must not drift by rounding)."""
        p, v = self.split(x)
        p = self.space.project(p)
        v = self.space.to_tangent(np.expand_dims(p, self._axis()), v)
        return self.stack(p, v)
