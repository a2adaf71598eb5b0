"""The Riemannian Gaussian law ``∝ exp(−ρ(η, x)²/2σ²)`` w.r.t. the volume (docs/math.md §12),
sampled exactly.

* Isotropic spaces (sphere, hyperbolic, Kendall): radius ``t ∝ e^{−t²/2σ²} J(t)`` from
  :class:`~geodp.distributions.radial.RadialLaw` with the Gaussian profile, a uniform unit
  direction ``u`` at η, ``x = exp_η(t u)`` — the Riemannian Laplace's construction with another
  radial profile.
* Affine-invariant SPD: Hajri's decomposition ``x = η^½ U diag(e^r) Uᵀ η^½`` with the
  eigenvalue law ``∝ e^{−|r|²/2σ²} Π sinh(|r_i − r_j|/2)`` drawn exactly by
  :class:`~geodp.distributions.spd_affine.SPDEigenvalueLaw` with the Gaussian profile.
* Flat spaces are handled by :class:`~geodp.distributions.gaussian.TangentGaussian` (the law is
  the Gaussian in the isometric chart); other spaces are refused.
"""

from __future__ import annotations

import functools

import numpy as np

from geodp.distributions.base import Distribution, check_private_points, size_tuple
from geodp.distributions.laplace import ACCEPTANCE_FLOOR
from geodp.distributions.radial import RadialLaw, is_isotropic
from geodp.distributions.spd_affine import SPDEigenvalueLaw
from geodp.errors import AssumptionError, InvalidParameterError
from geodp.manifolds import matrix_functions as mf
from geodp.manifolds.base import check_space
from geodp.validation import as_generator, check_positive

__all__ = ["RiemannianGaussian", "gaussian_radial_law", "gaussian_eigenvalue_law", "has_exact_riemannian_gaussian"]


@functools.lru_cache(maxsize=64)
def gaussian_radial_law(space, scale: float) -> RadialLaw:
    """The law of ``ρ(η, X)`` under the Riemannian Gaussian on an isotropic space (public: space
    and σ; built once).

    Examples
    --------
    >>> from geodp.manifolds import Sphere
    >>> law = gaussian_radial_law(Sphere(2), 0.1)
    >>> law.profile, bool(0.1 < law.sample(1000, rng=0).mean() < 0.15)  # ≈ σ√(π/2) = 0.125
    ('gaussian', True)
    """
    return RadialLaw(space, scale, profile="gaussian")


@functools.lru_cache(maxsize=64)
def gaussian_eigenvalue_law(k: int, scale: float) -> SPDEigenvalueLaw:
    """The law of the log-eigenvalues ``r`` of ``η^-½ X η^-½`` under the Riemannian Gaussian on
    affine-invariant SPD(k) (public: k and σ; built once).

    Examples
    --------
    >>> gaussian_eigenvalue_law(3, 0.2).acceptance_rate > 0.5
    True
    """
    return SPDEigenvalueLaw(k, scale, profile="gaussian")


def has_exact_riemannian_gaussian(space) -> bool:
    """Whether geodp samples the Riemannian Gaussian on ``space`` exactly (flat, isotropic, or
    affine-invariant SPD).

    Examples
    --------
    >>> from geodp.manifolds import SPD, Sphere
    >>> has_exact_riemannian_gaussian(Sphere(2)), has_exact_riemannian_gaussian(SPD(3))
    (True, True)
    """
    return bool(space.is_flat or is_isotropic(space) or "spd-eigenvalue-laplace" in space.closed_forms)


class RiemannianGaussian(Distribution):
    """Riemannian Gaussian law ``∝ exp(−ρ(η, x)²/2σ²)`` on an isotropic space or affine-invariant
    SPD, sampled exactly (module docstring).

    Parameters
    ----------
    space : Manifold
        Sphere, Hyperbolic, KendallShape (any isotropic space) or ``SPD(k)`` (affine-invariant).
        Flat spaces: use :class:`~geodp.distributions.gaussian.TangentGaussian`.
    footpoint : array_like, shape space.point_shape
        η.
    scale : float
        σ > 0.

    Raises
    ------
    InvalidParameterError
        The space is flat or has no exact sampler.
    AssumptionError
        On SPD, the eigenvalue sampler's proven acceptance is below
        :data:`~geodp.distributions.laplace.ACCEPTANCE_FLOOR` (large σ).

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Hyperbolic
    >>> law = RiemannianGaussian(Hyperbolic(2), np.array([1.0, 0.0, 0.0]), scale=0.3)
    >>> law.exact, law.sample(size=4, rng=0).shape
    (True, (4, 3))
    """

    exact = True

    def __init__(self, space, footpoint, scale):
        check_space(space)
        self.space = space
        self.scale = check_positive(scale, "scale")
        if space.is_flat:
            raise InvalidParameterError(
                f"{space!r} is flat: its Riemannian Gaussian is the Gaussian in the chart (TangentGaussian)."
            )
        if is_isotropic(space):
            self.radial_law = gaussian_radial_law(space, self.scale)
            self._eigen = None
            self.sampler = (
                f"exact: radius by rejection from a {self.radial_law.envelope_text} (acceptance "
                f"{self.radial_law.acceptance_rate:.3g}), uniform direction, on {space!r}"
            )
        elif "spd-eigenvalue-laplace" in space.closed_forms:
            self.radial_law = None
            self._eigen = gaussian_eigenvalue_law(space.k, self.scale)
            if self._eigen.acceptance_rate < ACCEPTANCE_FLOOR:  # public: k and σ
                raise AssumptionError(
                    f"the exact eigenvalue sampler of the Riemannian Gaussian on {space!r} at scale {self.scale!r} "
                    f"accepts below {ACCEPTANCE_FLOOR} of its proposals (proven bound "
                    f"{self._eigen.acceptance_rate:.1e}); no MCMC fallback is offered: use a smaller scale."
                )
            self.sampler = (
                "exact: Hajri decomposition, Haar eigenvectors, log-eigenvalue law ∝ exp(−|r|²/2σ²)·Π sinh(|r_i − "
                f"r_j|/2) by rejection (acceptance ≥ {self._eigen.acceptance_rate:.3g}, proven)"
            )
        else:
            raise InvalidParameterError(
                f"no exact sampler of the Riemannian Gaussian on {space!r}: it needs an isotropic space "
                "(radial_log_jacobian: Euclidean, Sphere, Hyperbolic, KendallShape) or affine-invariant SPD."
            )
        self.footpoint = check_private_points(space, footpoint, "footpoint", batch_ndim=0)

    @functools.cached_property
    def _footpoint_root(self):
        return mf.sqrtm_and_invsqrtm(self.footpoint)[0]

    def sample(self, size=None, rng=None):
        """Exact draws, shape ``size + space.point_shape``."""
        rng = as_generator(rng)
        shape = size_tuple(size)
        m = int(np.prod(shape, dtype=int))
        if self._eigen is not None:
            S = self._eigen.sample_symmetric(m, rng=rng)
            x = mf.sym(mf.congruence(self._footpoint_root, mf.expm(S)))
        else:
            u = self.space.unchecked.random_unit_tangent(self.footpoint, size=m, rng=rng)
            x = self.space.unchecked.polar_exp(self.footpoint, u, self.radial_law.sample(m, rng=rng))
        return x.reshape(shape + self.space.point_shape)

    def log_density(self, x):
        """``−ρ(η, x)²/2σ²``."""
        rho = np.asarray(self.space.unchecked.dist(self.footpoint, x))
        return -(rho**2) / (2.0 * self.scale * self.scale)

    def __repr__(self) -> str:
        return f"RiemannianGaussian({self.space!r}, scale={self.scale!r})"
