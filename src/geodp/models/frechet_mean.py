"""``PrivateFrechetMean``: validate, clip into the public ball, average, privatise, report."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator

from geodp.accountant import BudgetAccountant
from geodp.errors import InvalidParameterError, InvalidTypeError
from geodp.frechet import frechet_mean
from geodp.manifolds.base import Manifold
from geodp.mechanisms import KNGMechanism, LaplaceMechanism, TangentGaussianMechanism
from geodp.models.report import PrivacyReport
from geodp.sensitivity import check_radius, frechet_mean_sensitivity, max_radius
from geodp.validation import as_generator, check_delta, check_epsilon

__all__ = ["PrivateFrechetMean"]

_MECHANISMS = ("laplace", "tangent-gaussian", "kng")


class PrivateFrechetMean(BaseEstimator):
    """Differentially private Fréchet mean of manifold-valued records.

    ``fit`` validates the records, clips them geodesically into the public ball
    ``B_radius(center)`` (docs/math.md §0), computes the Fréchet mean, and releases it through the
    chosen mechanism with the sensitivity of :func:`geodp.sensitivity.frechet_mean_sensitivity`.
    The non-private mean is never stored.

    Parameters
    ----------
    space : Manifold
        Any geodp space for ``"laplace"``: ``Euclidean``, ``Sphere``, ``Hyperbolic``,
        ``KendallShape``, ``SPD`` (either metric); ``"tangent-gaussian"`` needs a flat space.
    epsilon : float
        Privacy budget of the release, > 0.
    delta : float, default 0.0
        Needed (in (0, 1)) by ``"tangent-gaussian"``; the Laplace mechanism is pure ε-DP and
        reports δ = 0.0.
    center : array_like, shape space.point_shape
        Public centre of the data ball. Must not be computed from the private data.
    radius : float
        Public radius of the data ball, ``0 < radius < r*``.
    mechanism : {"laplace", "tangent-gaussian", "kng"}, default "laplace"
        ``"kng"``: the K-norm gradient mechanism (S22), sampled exactly; better than the Laplace
        on positively curved spaces (shapes), where the Laplace sensitivity carries 1/h.
    calibration : {"analytic", "classical"}, default "analytic"
        Gaussian calibration, for ``"tangent-gaussian"``.
    accountant : BudgetAccountant, optional
        Charged ``(epsilon, delta)`` before the release; overspending raises.
    random_state : None, int or numpy.random.Generator
        ``None`` draws fresh OS entropy (use this in production).

    Attributes
    ----------
    mean_ : numpy.ndarray, shape space.point_shape
        The released private mean.
    mean_coordinates_ : numpy.ndarray, shape (space.dim,)
        The release in the space's isometric chart, without round-trip error.
    n_samples_ : int
    n_clipped_ : int
        Records moved onto the ball's boundary.
    sensitivity_ : float
    mechanism_ : Mechanism
    privacy_report_ : PrivacyReport
        Readable text (``str``) with a dict in ``privacy_report_.to_dict()``.

    Privacy
    -------
    Replace-one adjacency with n public; ε-DP (Laplace) or (ε, δ)-DP (tangent Gaussian) in the
    space's geodesic distance, given that ``center`` and ``radius`` are public.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import SPD
    >>> space = SPD(2, metric="log-euclidean")
    >>> X = space.random_point(50, rng=0)
    >>> model = PrivateFrechetMean(space, epsilon=1.0, center=np.eye(2), radius=3.0,
    ...                            random_state=0).fit(X)
    >>> model.mean_.shape, model.n_samples_
    ((2, 2), 50)
    >>> "epsilon = 1.0" in model.privacy_report_
    True
    """

    def __init__(
        self,
        space,
        *,
        epsilon,
        delta=0.0,
        center,
        radius,
        mechanism="laplace",
        calibration="analytic",
        accountant=None,
        random_state=None,
    ):
        self.space = space
        self.epsilon = epsilon
        self.delta = delta
        self.center = center
        self.radius = radius
        self.mechanism = mechanism
        self.calibration = calibration
        self.accountant = accountant
        self.random_state = random_state

    def _build_mechanism(self, sensitivity: float, center, radius: float):
        if self.mechanism == "laplace":
            return LaplaceMechanism(self.space, epsilon=self.epsilon, sensitivity=sensitivity, center=center, radius=radius)
        if self.mechanism == "kng":
            return KNGMechanism(self.space, epsilon=self.epsilon, sensitivity=sensitivity, center=center, radius=radius)
        return TangentGaussianMechanism(
            epsilon=self.epsilon,
            delta=self.delta,
            sensitivity=sensitivity,
            calibration=self.calibration,
            space=self.space,
        )

    def fit(self, X, y=None):
        """Release the private Fréchet mean of ``X``.

        Parameters
        ----------
        X : array_like, shape (n, *space.point_shape)
        y : ignored

        Returns
        -------
        self
        """
        space = self.space
        if not isinstance(space, Manifold):
            raise InvalidTypeError(f"space must be a geodp Manifold, got {type(space).__name__}.")
        if self.mechanism not in _MECHANISMS:
            raise InvalidParameterError(f"mechanism must be one of {_MECHANISMS}, got {self.mechanism!r}.")
        epsilon = check_epsilon(self.epsilon)
        delta = check_delta(self.delta, allow_zero=self.mechanism != "tangent-gaussian")
        if self.center is None or self.radius is None:
            raise InvalidParameterError(
                "center and radius are required: they declare the public data domain. Do not "
                "compute them from the private data."
            )
        if self.accountant is not None and not isinstance(self.accountant, BudgetAccountant):
            raise InvalidTypeError(f"accountant must be a BudgetAccountant, got {type(self.accountant).__name__}.")
        center = space.check_points(self.center, "center", batch_ndim=0)
        radius = check_radius(space, self.radius)
        X = space.check_points(X, "X", batch_ndim=1)
        rng = as_generator(self.random_state)

        n = X.shape[0]
        sensitivity = frechet_mean_sensitivity(space, radius, n, mechanism=self.mechanism)
        mechanism = self._build_mechanism(sensitivity, center, radius)
        released_delta = mechanism.delta
        if self.accountant is not None:
            self.accountant.spend(epsilon, released_delta)

        clipped, was_clipped = space.clip_to_ball(X, center, radius)
        # KNG privatises the whole objective, the others the mean itself.
        private_input = clipped if self.mechanism == "kng" else frechet_mean(space, clipped)
        if space.is_flat:
            self.mean_coordinates_ = mechanism.randomise_coordinates(private_input, rng=rng)
            self.mean_ = space.from_coordinates(self.mean_coordinates_)
        else:
            self.mean_ = mechanism.randomise(private_input, rng=rng)
        self.n_samples_ = n
        self.n_clipped_ = int(np.count_nonzero(was_clipped))
        self.sensitivity_ = sensitivity
        self.mechanism_ = mechanism
        self.privacy_report_ = self._report(mechanism, radius, delta)
        return self

    def _report(self, mechanism, radius: float, requested_delta: float) -> PrivacyReport:
        g = mechanism.guarantee
        domain = (
            f"public geodesic ball of radius {radius!r} around the given center; "
            f"{self.n_clipped_} of {self.n_samples_} records were outside and clipped onto its boundary"
        )
        if self.mechanism == "kng":
            bound = "2r(2-h)/n on the gradient field (S22 Lemma 1; h = 1 on flat spaces)"
        elif self.space.is_flat:
            bound = "2r/n (flat space: U23 Thm 3 / R21 Thm 2 with h = 1)"
        else:
            bound = "2r(2-h)/(n h) (R21 Thm 2)"
        details = [
            f"n           : {self.n_samples_} records (public)",
            f"data domain : {domain}",
            f"bound       : Δ = {bound}",
        ]
        extra = [f"radius {radius!r} < r* = {max_radius(self.space)!r} (Assumption 1); records clipped into the ball"]
        if self.mechanism != "tangent-gaussian" and requested_delta > 0:
            extra.append(f"delta={requested_delta!r} was passed, but the {self.mechanism} mechanism is pure ε-DP: delta = 0.0")
        text = "geodp privacy report: PrivateFrechetMean\n" + g.render(details, extra)
        data = g.to_dict() | {
            "n_samples": self.n_samples_,
            "n_clipped": self.n_clipped_,
            "radius": radius,
            "sensitivity_bound": bound,
        }
        return PrivacyReport(text, data)
