"""The tangent Gaussian mechanism on log-Euclidean SPD (U23 Def. 2, Thm 1)."""

from __future__ import annotations

import math

from geodp.calibration import gaussian_sigma
from geodp.distributions.base import check_private_points, refuse_non_finite
from geodp.distributions.gaussian import TangentGaussian
from geodp.errors import InvalidDataError, InvalidParameterError
from geodp.manifolds.base import check_space
from geodp.manifolds.spd import LogEuclideanSPD
from geodp.mechanisms.base import Guarantee, Mechanism, require_flat
from geodp.mechanisms.grid import GaussianChartNoise
from geodp.validation import check_finite_array

__all__ = ["TangentGaussianMechanism"]

_CALIBRATIONS = ("analytic", "classical")


class TangentGaussianMechanism(GaussianChartNoise, Mechanism):
    """Release ``M`` as ``Exp(invvecd(vecd Log M + N(0, σ² I)))``: (ε, δ)-DP.

    The privacy loss is ``N(ρ²/2σ², ρ²/σ²)`` with ρ the log-Euclidean distance between the
    neighbouring values (U23 Thm 1), exactly as for the Gaussian mechanism in ``R^d``, so the
    classical and analytic calibrations both apply with Δ = the log-Euclidean sensitivity.

    Parameters
    ----------
    epsilon : float
    delta : float
        In (0, 1).
    sensitivity : float
        Log-Euclidean sensitivity Δ (``2r/n`` for the Fréchet mean, U23 Thm 3).
    calibration : {"analytic", "classical"}, default "analytic"
        Balle & Wang (2018) analytic calibration, or the classical one (ε < 1 only).
    space : Manifold, optional
        A flat space to work in. Default: log-Euclidean ``SPD(k)``, k read from the value. A
        ``Euclidean`` space gives the ordinary Gaussian mechanism.

    Privacy
    -------
    (ε, δ)-DP under the adjacency for which Δ holds. Sampled exactly. Utility:
    ``ρ²_LE(M, output) ~ σ² χ²_d`` with ``d = k(k+1)/2``.

    Examples
    --------
    >>> import numpy as np
    >>> mech = TangentGaussianMechanism(epsilon=0.5, delta=1e-6, sensitivity=1.0)
    >>> round(mech.scale, 3)
    8.058
    >>> mech.randomise(np.eye(3), rng=0).shape
    (3, 3)
    >>> secure = mech.guarantee_for("secure", value=np.eye(3))  # exact discrete Gaussian on a grid
    >>> secure.floating_point_safe, secure.grid, secure.delta <= 1e-6
    (True, 0.0078125, True)
    """

    def __init__(self, *, epsilon, delta, sensitivity, calibration="analytic", space=None):
        super().__init__(epsilon=epsilon, delta=delta, sensitivity=sensitivity, delta_allows_zero=False)
        if calibration not in _CALIBRATIONS:
            raise InvalidParameterError(f"calibration must be one of {_CALIBRATIONS}, got {calibration!r}.")
        self.calibration = calibration
        if space is not None:
            require_flat(check_space(space), "TangentGaussianMechanism")
        self.space = space
        self._sigma = gaussian_sigma(self.epsilon, self.delta, self.sensitivity, method=calibration)

    def rescaled(self, factor: float, *, space=None, center=None) -> TangentGaussianMechanism:
        """The same mechanism with ``factor`` times the sensitivity (so ``factor`` times the noise
        scale), on ``space`` with the public ball at ``center`` if given (the isometric chart of a
        flat space): the audit's mutants and chart copies.

        Examples
        --------
        >>> mech = TangentGaussianMechanism(epsilon=1.0, delta=1e-5, sensitivity=0.3)
        >>> round(mech.rescaled(0.5).scale / mech.scale, 12)
        0.5
        """
        return TangentGaussianMechanism(
            epsilon=self.epsilon,
            delta=self.delta,
            sensitivity=self.sensitivity * factor,
            calibration=self.calibration,
            space=self.space if space is None else space,
        )

    @property
    def scale(self) -> float:
        """σ, the standard deviation per log-Euclidean coordinate."""
        return self._sigma

    def _space_for(self, value):
        if self.space is not None:
            return self.space
        refuse_non_finite(value, "value")  # without counting the bad entries
        arr = check_finite_array(value, "value", min_ndim=2)
        if arr.shape[-1] != arr.shape[-2]:
            raise InvalidDataError(f"value must be a k×k SPD matrix (or a batch), got shape {arr.shape}.")
        return LogEuclideanSPD(arr.shape[-1])

    def _chart(self, value=None):
        if self.space is None and value is None:
            raise InvalidParameterError(
                "this mechanism was built without a space: pass value= (its shape gives SPD(k)) or "
                "build it with space=."
            )
        return self.space if self.space is not None else self._space_for(value)

    def _flat_space(self, dim: int):
        if self.space is not None:
            return self.space
        k = (math.isqrt(8 * dim + 1) - 1) // 2 if dim > 0 else 0
        return LogEuclideanSPD(k) if k >= 1 and k * (k + 1) // 2 == dim else None

    def distribution(self, value) -> TangentGaussian:
        """The output law for ``value``."""
        space = self._space_for(value)
        return TangentGaussian(space, check_private_points(space, value, "value"), self._sigma)

    @property
    def guarantee(self) -> Guarantee:
        """The (ε, δ)-DP record of one release."""
        rule = (
            "smallest σ with Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ) ≤ δ (Balle & Wang 2018, Thm 8), rounded up"
            if self.calibration == "analytic"
            else "σ = Δ √(2 ln(1.25/δ)) / ε (classical, ε < 1)"
        )
        space = repr(self.space) if self.space is not None else "SPD(k, metric='log-euclidean')"
        return Guarantee(
            mechanism="tangent Gaussian (U23 Def. 2)",
            epsilon=self.epsilon,
            delta=self.delta,
            sensitivity=self.sensitivity,
            metric="log-Euclidean distance" if self.space is None else f"geodesic distance of {self.space!r}",
            scale=self._sigma,
            scale_rule=rule,
            space=space,
            sampler=f"exact: Gaussian in the isometric chart of {space}",
            exact=True,
            gdp_mu=self.sensitivity / self._sigma,
            assumptions=(
                "space is flat with a global isometric chart, so the privacy loss is that of the "
                "Gaussian mechanism in R^d (U23 Thm 1)",
                f"{self.calibration} calibration preconditions hold (epsilon > 0, 0 < delta < 1"
                + (", epsilon < 1)" if self.calibration == "classical" else ")"),
            ),
        )
