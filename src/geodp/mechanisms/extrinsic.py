"""Extrinsic (ambient) baselines for comparison with the intrinsic mechanisms (docs/math.md §7).

The data sit in a manifold embedded in a Euclidean space (the sphere in ``R^(d+1)``, SPD(k) in the
symmetric matrices with the Frobenius norm). The sound baseline averages the clipped records in
the ambient space and adds an l2-Laplace calibrated to ``Δ_E = 2 r_E/n`` (``r_E`` from
:func:`geodp.sensitivity.extrinsic_radius`); the output may leave the manifold, so it is
optionally projected back and the share of off-manifold outputs is reported. The variant of
R21 §5 / U23 §6.1 adds the same noise to the *Fréchet* mean, which ``Δ_E`` does not cover: it is
kept only for reproductions, behind ``as_published=True``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

import numpy as np

from geodp.calibration import laplace_scale
from geodp.distributions.base import check_private_points
from geodp.distributions.laplace import RiemannianLaplace
from geodp.errors import InvalidDataError, PrivacyLeakWarning
from geodp.frechet import frechet_mean
from geodp.manifolds.base import check_space
from geodp.manifolds.euclidean import Euclidean
from geodp.mechanisms.base import Guarantee, Mechanism
from geodp.mechanisms.grid import GridLaplace
from geodp.sensitivity import extrinsic_mean_sensitivity, extrinsic_radius
from geodp.validation import check_positive, check_sample_size

__all__ = ["ExtrinsicMeanMechanism", "ExtrinsicRelease"]


@dataclass(frozen=True)
class ExtrinsicRelease:
    """Releases of :meth:`ExtrinsicMeanMechanism.release`.

    Attributes
    ----------
    ambient : numpy.ndarray, shape (*size, *space.point_shape)
        The noisy ambient means (the DP output).
    value : numpy.ndarray
        ``ambient`` projected onto the manifold (post-processing: same guarantee).
    on_manifold : numpy.ndarray of bool
        Which ambient outputs were already on the manifold (SPD: positive-definite).
    off_manifold_share : float
    """

    ambient: np.ndarray
    value: np.ndarray
    on_manifold: np.ndarray
    off_manifold_share: float


class ExtrinsicMeanMechanism(Mechanism):
    """Ambient mean + l2-Laplace noise: the extrinsic baseline (docs/math.md §7).

    Parameters
    ----------
    space : Sphere or SPD
    epsilon : float
    center : array_like
        Public centre of the data ball (the identity for SPD, R21 Prop. 1).
    radius : float
        Public geodesic radius of the data ball.
    n : int
        Public number of records.
    as_published : bool, default False
        Add the noise to the Fréchet mean instead of the ambient mean, as R21 §5 and U23 §6.1 do.
        ``Δ_E`` bounds the ambient mean only, so this has no proof; it warns
        (:class:`~geodp.PrivacyLeakWarning`) and its guarantee says so.

    Privacy
    -------
    ε-DP (sound variant), replace-one with n public, in the ambient Euclidean norm: records are
    clipped into ``B_r(center)``, which lies in the ambient ball of radius ``r_E``, so the ambient
    mean moves by at most ``2 r_E/n``; the l2-Laplace in ``R^D`` is footpoint-invariant, σ = Δ/ε.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Sphere
    >>> space, north = Sphere(2), np.array([0.0, 0.0, 1.0])
    >>> X = space.exp(north, space.random_tangent(north, size=100, rng=0) * 0.2)
    >>> mech = ExtrinsicMeanMechanism(space, epsilon=1.0, center=north, radius=0.5, n=100)
    >>> out = mech.release(X, rng=1)
    >>> out.value.shape, out.off_manifold_share
    ((3,), 1.0)
    """

    def __init__(self, space, *, epsilon, center, radius, n, as_published=False):
        self.space = check_space(space)
        self.center = self.space.check_points(center, "center", batch_ndim=0)
        self.radius = check_positive(radius, "radius")
        self.n = check_sample_size(n)
        super().__init__(
            epsilon=epsilon,
            delta=0.0,
            sensitivity=extrinsic_mean_sensitivity(self.space, self.radius, self.n, self.center),
            delta_allows_zero=True,
        )
        self.as_published = bool(as_published)
        if self.as_published:
            warnings.warn(
                "as_published=True adds ambient noise calibrated to the ambient-mean sensitivity to "
                "the Fréchet mean (R21 §5, U23 §6.1): not covered by a DP proof; use for reproductions only.",
                PrivacyLeakWarning,
                stacklevel=2,
            )
        self._scale = laplace_scale(self.epsilon, self.sensitivity, footpoint_invariant=True)
        self._ambient = Euclidean(self._ambient_dim)

    @property
    def _ambient_dim(self) -> int:
        return self.space.embedding_dim

    def _to_ambient(self, x):
        return self.space.unchecked.to_embedding(x)

    def _from_ambient(self, y):
        return self.space.unchecked.from_embedding(y)

    @property
    def scale(self) -> float:
        """σ = Δ_E/ε."""
        return self._scale

    def distribution(self, value) -> RiemannianLaplace:
        """The ambient l2-Laplace around ``value`` (in Frobenius-isometric coordinates for SPD)."""
        return RiemannianLaplace(self._ambient, self._to_ambient(value), self._scale)

    def summary(self, X) -> np.ndarray:
        """The value that is privatised: ambient mean of the clipped records (or, as published,
        their Fréchet mean)."""
        X = check_private_points(self.space, X, "X", batch_ndim=1)
        if X.shape[0] != self.n:
            raise InvalidDataError(f"X must hold n={self.n} points (n is public), got {X.shape[0]}.")
        clipped, _ = self.space.clip_to_ball(X, self.center, self.radius)
        return frechet_mean(self.space, clipped) if self.as_published else clipped.mean(axis=0)

    def release(self, X, rng=None, size=None) -> ExtrinsicRelease:
        """Clip, average, add noise; project back and count off-manifold outputs.

        ``size`` gives independent releases (each spends ε again), for studies of the baseline.
        """
        ambient = self.randomise(self.summary(X), rng=rng, size=size)
        on = np.asarray(self.space.belongs(ambient))
        return ExtrinsicRelease(ambient, self.space.project(ambient), on, float(1.0 - on.mean()))

    def _chart(self, value=None):
        return self._ambient  # flat: secure mode releases exact discrete noise on a grid

    def _grid_noise(self, dim: int) -> GridLaplace:
        return GridLaplace(self.epsilon, self.sensitivity, dim)

    def guarantee_for(self, rng, value=None) -> Guarantee:
        """As :meth:`Mechanism.guarantee_for`; the as-published variant is never reported
        floating-point safe (nor safe at all): it has no DP proof, whatever the sampler."""
        g = super().guarantee_for(rng, value)
        if self.as_published and g.floating_point_safe:
            g = replace(
                g,
                floating_point_safe=False,
                construction=(
                    g.construction + "; but AS PUBLISHED the noise is calibrated to a sensitivity that does not bound "
                    "the privatised Fréchet mean: no DP proof, so not floating-point safe either"
                ),
            )
        return g

    def randomise(self, value, rng=None, size=None):
        """Noisy ambient copy of an ambient ``value`` (not projected)."""
        return self._from_ambient(super().randomise(value, rng=rng, size=size))

    @property
    def guarantee(self) -> Guarantee:
        """The record of one release."""
        rule = "σ = Δ_E/ε: l2-Laplace in the ambient Euclidean space (footpoint-invariant)"
        ambient_radius = extrinsic_radius(self.space, self.radius, self.center)
        assumptions = (
            f"records clipped into the public geodesic ball of radius {self.radius!r}",
            f"that ball lies in the ambient ball of radius r_E = {ambient_radius!r}",
            "projection back onto the manifold is post-processing",
        )
        if self.as_published:
            assumptions += ("AS PUBLISHED: noise added to the Fréchet mean, which Δ_E does not bound — no DP proof",)
        return Guarantee(
            mechanism="extrinsic mean + l2-Laplace" + (" (as published)" if self.as_published else ""),
            epsilon=self.epsilon,
            delta=0.0,
            sensitivity=self.sensitivity,
            metric="ambient Euclidean (Frobenius) norm",
            scale=self._scale,
            scale_rule=rule,
            space=repr(self.space),
            sampler="exact: l2-Laplace (Gamma radius, uniform direction)",
            exact=True,
            support=f"R^{self._ambient_dim} (ambient), then projected",
            assumptions=assumptions,
        )
