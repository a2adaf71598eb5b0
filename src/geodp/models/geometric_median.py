"""The private geometric median: private Riemannian gradient descent on ``Σ_i ρ(x, x_i)``."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError

from geodp.accountant import check_accountant
from geodp.errors import InvalidParameterError, NotOnManifoldError
from geodp.manifolds.base import check_space
from geodp.models.frechet_mean import invalid_message, prepared_records
from geodp.models.report import PrivacyReport, with_deadline, with_timing_policy
from geodp.optim import descend, gd_guarantee
from geodp.release import (
    ReleasePlan,
    ball_stand_ins,
    check_timing_safe,
    deadline_key,
    execute,
    timing_deadline,
    timing_safe_plan,
)
from geodp.secure import is_secure
from geodp.sensitivity import check_radius
from geodp.validation import as_generator, check_positive, check_positive_integer

__all__ = ["PrivateGeometricMedian", "median_gradients"]

_FITTED = ("median_", "n_samples_", "privacy_report_", "withheld_warnings_", "timing_deadline_", "timing_overran_")
_ON_INVALID = ("raise", "center")


def median_gradients(space, x, X) -> np.ndarray:
    """Riemannian gradients at ``x`` of ``ρ(x, X_i)``: ``−Log_x(X_i)/‖Log_x(X_i)‖`` (0 where
    ``X_i = x``). Each has norm ≤ 1, so clipping at 1 changes nothing.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Euclidean
    >>> median_gradients(Euclidean(2), np.zeros(2), np.array([[3.0, 4.0], [0.0, 0.0]]))
    array([[-0.6, -0.8],
           [-0. , -0. ]])
    """
    logs = space.unchecked.log(x, X)
    norms = np.asarray(space.unchecked.norm(x, logs), dtype=float).reshape((-1,) + (1,) * (logs.ndim - 1))
    return -logs / np.where(norms > 0, norms, np.inf)


class PrivateGeometricMedian(BaseEstimator):
    """(ε, δ)-DP geometric median ``argmin_x Σ_i ρ(x, x_i)`` over a public ball, by private
    Riemannian gradient descent (:func:`geodp.optim.private_riemannian_gd`).

    The per-record gradient ``−Log_x(x_i)/ρ(x, x_i)`` has norm ≤ 1, so ``clip = 1`` bounds it
    with no clipping bias; each step adds exact tangent Gaussian noise calibrated so that the
    ``iterations`` steps together are (ε, δ)-DP (μ-GDP, ``privacy_report_.to_dict()["gdp_mu"]``).
    Records are clipped into the public ball first (per record), so ``Log`` is defined. A robust
    centre: one record moves the geometric median's gradient by at most 2/n per step, however far
    it lies.

    Parameters
    ----------
    space : Manifold
    epsilon : float
    delta : float
        In (0, 1).
    center, radius
        The public ball (radius below the space's convexity radius, ``check_radius``).
    iterations : int, default 50
        T (public).
    step : float, optional
        Step size (public): ``x ← Exp_x(−step·G/n)``; default ``radius / 5``.
    on_invalid : {"raise", "center"}, default "raise"
        A record that is not a point of the space: ``"raise"`` refuses the fit with
        :class:`~geodp.errors.NotOnManifoldError` after the charge, with one fixed message
        whatever the fault (NaN, off the manifold); ``"center"`` replaces it by the public centre
        (a per-record map: replace-one adjacency is kept).
    accountant : BudgetAccountant, optional
    random_state : None, int or numpy.random.Generator
    timing_safe : bool or float, default False
        Timing-safe release (as :class:`~geodp.models.PrivateFrechetMean`'s): the T steps are fixed
        public work already; the wall time is padded to a public deadline (calibrated on public
        stand-ins for True) and the guarantee is (ε, δ + δ_t), charged so.

    Attributes
    ----------
    median_ : ndarray
    n_samples_ : int
    privacy_report_ : PrivacyReport
    withheld_warnings_ : tuple of str
        Curator only: warnings the private part raised.
    timing_deadline_ : float or None
        The public deadline the private part was padded to (None without ``timing_safe``; also
        ``privacy_report_.to_dict()["timing_deadline"]``).
    timing_overran_ : bool or None
        Curator only: whether the private part ran past that deadline (None without
        ``timing_safe``).

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Sphere
    >>> from geodp.accountant import BudgetAccountant
    >>> space, north = Sphere(2), np.array([0.0, 0.0, 1.0])
    >>> X = space.unchecked.exp(north, 0.2 * space.random_tangent(north, size=400, rng=0))
    >>> acc = BudgetAccountant(epsilon=1.0, delta=1e-5, composition="pld")
    >>> model = PrivateGeometricMedian(space, epsilon=1.0, delta=1e-5, center=north, radius=0.5,
    ...                                accountant=acc, random_state=0).fit(X)
    >>> bool(space.dist(model.median_, north) < 0.2), round(acc.total_spent[0], 3)
    (True, 1.0)
    """

    def __init__(
        self,
        space,
        *,
        epsilon,
        delta,
        center,
        radius,
        iterations=50,
        step=None,
        on_invalid="raise",
        accountant=None,
        random_state=None,
        timing_safe=False,
    ):
        self.space = space
        self.epsilon = epsilon
        self.delta = delta
        self.center = center
        self.radius = radius
        self.iterations = iterations
        self.step = step
        self.on_invalid = on_invalid
        self.accountant = accountant
        self.random_state = random_state
        self.timing_safe = timing_safe

    def __getattr__(self, name):
        if name in _FITTED:
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet. Call 'fit' before using {name}."
            )
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def plan(self, X, y=None) -> ReleasePlan:
        """What :meth:`fit` will do, from public quantities only (the shape of ``X``).

        Examples
        --------
        >>> import numpy as np
        >>> from geodp.manifolds import Euclidean
        >>> plan = PrivateGeometricMedian(Euclidean(2), epsilon=1.0, delta=1e-5, center=np.zeros(2),
        ...                               radius=1.0).plan(np.zeros((100, 2)))
        >>> plan.sensitivity, plan.exact, round(plan.gdp_mu, 4)
        (2.0, True, 0.2681)
        """
        space = check_space(self.space)
        n = int(space.unchecked.dataset_array(X, "X").shape[0])
        radius = check_radius(space, self.radius)
        iterations = check_positive_integer(self.iterations, "iterations")
        step = radius / 5.0 if self.step is None else check_positive(self.step, "step")
        if self.on_invalid not in _ON_INVALID:
            raise InvalidParameterError(f"on_invalid must be one of {_ON_INVALID}, got {self.on_invalid!r}.")
        check_accountant(self.accountant)
        as_generator(self.random_state)
        check_timing_safe(self.timing_safe)
        guarantee = gd_guarantee(
            space,
            epsilon=self.epsilon,
            delta=self.delta,
            iterations=iterations,
            step=step,
            clip=1.0,
            center=self.center,
            radius=radius,
            random_state=self.random_state,
        )
        center = space.check_points(self.center, "center", batch_ndim=0)
        details = [
            "estimator   : PrivateGeometricMedian (argmin of the sum of geodesic distances)",
            f"records     : n = {n}; each clipped into the public ball of radius {radius!r}"
            + ("; invalid records replaced by the centre" if self.on_invalid == "center" else ""),
            f"composition : {guarantee.gdp_mu:.6g}-GDP over the {iterations} steps",
        ]
        text = guarantee.render(
            details, ("gradient of rho(x, x_i) has norm <= 1: clip = 1 is exact (no clipping bias)",)
        )
        data = {
            **guarantee.to_dict(),
            "estimator": "PrivateGeometricMedian",
            "n_samples": n,
            "radius": radius,
            "iterations": iterations,
            "step": step,
            "clip": 1.0,
            "on_invalid": self.on_invalid,
        }
        plan = ReleasePlan(
            estimator="PrivateGeometricMedian",
            n_samples=n,
            epsilon=guarantee.epsilon,
            delta=guarantee.delta,
            sensitivity=guarantee.sensitivity,
            scale=guarantee.scale,
            exact=True,
            sampler=guarantee.sampler,
            report=with_timing_policy(PrivacyReport(text, data), self.timing_safe),
            facts={"center": center, "radius": radius, "iterations": iterations, "step": step},
            gdp_mu=guarantee.gdp_mu,
        )
        return timing_safe_plan(plan, self.timing_safe)

    def fit(self, X, y=None):
        """Release the private geometric median of ``X``.

        Raises
        ------
        InvalidParameterError, AssumptionError, InvalidDataError
            Public refusals, before any charge.
        BudgetExceededError
            The accountant cannot pay (nothing charged).
        NotOnManifoldError
            With ``on_invalid="raise"``, a record is not a point of the space (after the charge:
            it depends on the data; one message whatever the fault).
        """
        plan = self.plan(X)
        if y is not None:
            raise InvalidParameterError("y must be None: the geometric median is unsupervised.")
        space, facts = self.space, plan.facts
        data = space.unchecked.dataset_array(X, "X")
        rng = as_generator(self.random_state)

        def private_part(data, rng):
            # every record validated and clipped (no early exit); the invalid ones replaced by the centre
            records, (n_invalid, _) = prepared_records(space, facts["center"], facts["radius"], data, coordinates=False)
            if n_invalid and self.on_invalid == "raise":
                raise NotOnManifoldError(invalid_message(space))
            return descend(
                space,
                lambda x, R: median_gradients(space, x, R),
                records,
                facts["center"],
                iterations=facts["iterations"],
                step=facts["step"],
                clip=1.0,
                noise_multiplier=plan.scale,
                center=facts["center"],
                radius=facts["radius"],
                rng=rng,
            )

        stand_in_rng = as_generator(None if is_secure(rng) else 0)
        deadline = timing_deadline(
            self.timing_safe,
            lambda records: private_part(records, stand_in_rng),
            lambda: ball_stand_ins(space, facts["center"], facts["radius"], plan.n_samples),
            key=deadline_key(plan, is_secure(rng), np.shape(data)) if self.timing_safe is True else None,
        )
        self.median_, self.withheld_warnings_, self.timing_overran_ = execute(
            plan, self.accountant, lambda: private_part(data, rng), deadline=deadline
        )
        self.timing_deadline_ = deadline
        self.n_samples_ = plan.n_samples
        self.privacy_report_ = with_deadline(plan.report, deadline, calibrated=self.timing_safe is True)
        return self
