"""The Riemannian Laplace mechanism (R21 Def. 3, Thm 1)."""

from __future__ import annotations

from geodp.calibration import laplace_scale
from geodp.distributions.laplace import RiemannianLaplace
from geodp.mechanisms.base import Guarantee, Mechanism, check_space, require_flat

__all__ = ["LaplaceMechanism"]


class LaplaceMechanism(Mechanism):
    """Release a point ``η`` as a draw from ``∝ exp(−ρ(η, x)/σ)``: ε-DP when Δ bounds the
    geodesic sensitivity of ``η``.

    ``σ = Δ/ε`` because every space supported here is homogeneous and the law is untruncated
    and normalisable, so its normaliser does not depend on the footpoint (MATH.md §4); the
    reason is written into :attr:`guarantee`.

    Parameters
    ----------
    space : Manifold
        Currently a flat space: ``Euclidean`` or ``SPD(k, metric="log-euclidean")``.
    epsilon : float
    sensitivity : float
        Geodesic sensitivity Δ of the released summary.

    Privacy
    -------
    ε-DP under the adjacency for which Δ holds (replace-one with n public for the Fréchet-mean
    bounds of :mod:`geodp.sensitivity`). Sampled exactly (no MCMC).

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import SPD
    >>> mech = LaplaceMechanism(SPD(2, metric="log-euclidean"), epsilon=1.0, sensitivity=0.1)
    >>> mech.scale
    0.1
    >>> mech.randomise(np.eye(2), rng=0).shape
    (2, 2)
    """

    def __init__(self, space, *, epsilon, sensitivity):
        super().__init__(epsilon=epsilon, delta=0.0, sensitivity=sensitivity, delta_allows_zero=True)
        self.space = check_space(space)
        require_flat(self.space, "LaplaceMechanism")
        self._scale = laplace_scale(self.epsilon, self.sensitivity, footpoint_invariant=True)

    @property
    def scale(self) -> float:
        """σ = Δ/ε."""
        return self._scale

    def distribution(self, value) -> RiemannianLaplace:
        """The output law for ``value``."""
        return RiemannianLaplace(self.space, self.space.check_points(value, "value"), self._scale)


    @property
    def guarantee(self) -> Guarantee:
        """The ε-DP record of one release."""
        return Guarantee(
            mechanism="Riemannian Laplace (R21 Def. 3)",
            epsilon=self.epsilon,
            delta=0.0,
            sensitivity=self.sensitivity,
            metric=f"geodesic distance of {self.space!r}",
            scale=self._scale,
            scale_rule="σ = Δ/ε: homogeneous space, untruncated, normalisable law (R21 Thm 1)",
            space=repr(self.space),
            sampler=f"exact: l2-Laplace in the isometric chart of {self.space!r}",
            exact=True,
            assumptions=(
                "space is homogeneous: the Laplace normaliser does not depend on the footpoint",
                "law is normalisable: exp(-|y|/σ) is integrable on R^d for every σ > 0",
                "law is not truncated",
            ),
        )
