"""Exponential-wrapped mechanisms: the exact tangent law (KS, against ×1.5 mutants), the
Lipschitz constant of Log at the centre (adversarial search), the tangent sensitivity of the
mean under adversarial neighbours, the estimators and the audit."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from geodp.accountant import BudgetAccountant
from geodp.audit import audit_epsilon
from geodp.audit.epsilon import MIN_SAMPLES
from geodp.errors import AssumptionError, InvalidDataError, InvalidParameterError
from geodp.manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Sphere
from geodp.mechanisms import WrappedGaussianMechanism, WrappedLaplaceMechanism
from geodp.models import PrivateFrechetMean, PrivateMDM
from geodp.sensitivity import frechet_mean_sensitivity, log_lipschitz_constant

N_DRAWS = 4000
P_PASS = 1e-3  # the real mechanism: every KS p-value above this
P_MUTANT = 1e-6  # the ×1.5 mutant: some KS p-value below this


def orthonormal_frame(space, p, seed=0):
    """An orthonormal basis of T_p M in the metric: ambient Gaussians projected onto the tangent
    space, Gram–Schmidt (twice) in ``space.inner`` (independent of the samplers under test)."""
    rng = np.random.default_rng(seed)
    candidates = space.to_tangent(p, rng.standard_normal((3 * space.dim + 3,) + space.point_shape))
    frame = []
    for v in candidates:
        for _ in range(2):
            for e in frame:
                v = v - space.inner(p, v, e) * e
        norm = float(space.norm(p, v))
        if norm > 1e-3:
            frame.append(v / norm)
        if len(frame) == space.dim:
            return np.stack(frame)
    raise AssertionError("no orthonormal frame")  # pragma: no cover


def _point_at(space, p, distance, seed):
    """A point at ``distance`` from ``p`` in a fixed random direction."""
    v = space.random_tangent(p, rng=seed)
    return space.exp(p, distance * v / float(space.norm(p, v)))


def _hyperbolic_far():
    space = Hyperbolic(3)
    return space, _point_at(space, space.reference_point(), 2.0, 7)


def _spd_center(metric):
    space = SPD(3, metric=metric)
    return space, np.array([[2.0, 0.3, 0.0], [0.3, 1.0, -0.2], [0.0, -0.2, 0.5]])


# (space, centre p0, ball radius, noise scale σ): σ small on the sphere and the shape space, so
# that Log_{p0} recovers u + Z (no draw wraps past the cut locus, probability < 1e-6).
CASES = {
    "euclidean": (Euclidean(3), np.array([1.0, -2.0, 0.5]), 1.5, 0.5),
    "sphere": (Sphere(2), np.array([0.0, 0.6, 0.8]), 0.7, 0.1),
    "sphere4": (Sphere(4), Sphere(4).reference_point(), 0.7, 0.08),
    "hyperbolic": (*_hyperbolic_far(), 1.5, 0.4),
    "spd-affine": (*_spd_center("affine"), 1.5, 0.3),
    "spd-log-euclidean": (*_spd_center("log-euclidean"), 1.5, 0.3),
    "kendall": (KendallShape(5), KendallShape(5).reference_point(), 0.3, 0.04),
}


def _mechanism(kind, space, center, radius, scale):
    """A wrapped mechanism with noise scale ``scale`` exactly (sensitivity chosen for it)."""
    lipschitz, _ = log_lipschitz_constant(space, radius)
    if kind == "laplace":
        return WrappedLaplaceMechanism(space, epsilon=1.0, sensitivity=scale / lipschitz, center=center, radius=radius)
    unit = WrappedGaussianMechanism(space, epsilon=1.0, delta=1e-5, sensitivity=1.0, center=center, radius=radius)
    return WrappedGaussianMechanism(
        space, epsilon=1.0, delta=1e-5, sensitivity=scale / unit.scale, center=center, radius=radius
    )


def tangent_law_pvalues(space, center, footpoint, draws, kind, scale):
    """KS p-values of the released tangent offsets ``Log_{p0}(y) − Log_{p0}(x̄)`` against the
    exact law with scale ``scale``: Gaussian coordinates and χ² squared norm, or (ℓ2 Laplace)
    Gamma(d, σ) norm and the Beta((d−1)/2, (d−1)/2) law of a coordinate of the direction."""
    frame = orthonormal_frame(space, center)
    offsets = space.log(center, draws) - space.log(center, footpoint)
    coords = np.stack([space.inner(center, offsets, e) for e in frame], axis=-1)
    assert np.allclose(np.linalg.norm(coords, axis=-1), space.norm(center, offsets), rtol=1e-8, atol=1e-10)
    assert np.allclose(space.to_tangent(center, offsets), offsets, atol=1e-8 * (1 + np.abs(offsets).max()))
    d, norms = space.dim, np.linalg.norm(coords, axis=-1)
    if kind == "gaussian":
        return [
            stats.kstest(coords.ravel() / scale, "norm").pvalue,
            stats.kstest(norms**2 / scale**2, "chi2", args=(d,)).pvalue,
        ]
    half = (d - 1) / 2.0
    return [
        stats.kstest(norms, "gamma", args=(d, 0.0, scale)).pvalue,
        stats.kstest((1.0 + coords[:, 0] / norms) / 2.0, "beta", args=(half, half)).pvalue,
    ]


@pytest.mark.parametrize("kind", ["laplace", "gaussian"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_tangent_noise_follows_the_exact_law_and_catches_a_scale_mutant(case, kind):
    space, center, radius, scale = CASES[case]
    mech = _mechanism(kind, space, center, radius, scale)
    assert math.isclose(mech.scale, scale, rel_tol=1e-6)
    for seed, footpoint in enumerate([center, _point_at(space, center, 0.95 * radius, 3)]):
        draws = mech.randomise(footpoint, rng=100 + seed, size=N_DRAWS)
        assert draws.shape == (N_DRAWS,) + space.point_shape
        assert np.all(space.belongs(draws))
        assert min(tangent_law_pvalues(space, center, footpoint, draws, kind, scale)) > P_PASS
        # the same check must reject a mechanism whose noise is 1.5 times too large
        mutant = mech.rescaled(1.5).randomise(footpoint, rng=200 + seed, size=N_DRAWS)
        assert min(tangent_law_pvalues(space, center, footpoint, mutant, kind, scale)) < P_MUTANT


# ------------------------------------------------------------------ Lipschitz constant of Log
def _ball_points(space, center, frame, radius, c):
    """``Exp_{p0}`` of frame coordinates ``c`` (shape (m, d)) squashed into the open ball."""
    norm = np.maximum(np.linalg.norm(c, axis=-1, keepdims=True), 1e-300)
    t = radius * np.tanh(norm) / norm
    return space.unchecked.exp(center, np.tensordot(t * c, frame, axes=1))


def _pair_ratios(space, center, frame, radius, z):
    """``‖Log_{p0}x − Log_{p0}y‖ / ρ(x, y)`` for pairs ``z = (coords of x, coords of y)``, shape
    (m, 2d); pairs closer than 1e-6 (where rounding dominates) count as 0."""
    fast, d = space.unchecked, space.dim
    x = _ball_points(space, center, frame, radius, z[:, :d])
    y = _ball_points(space, center, frame, radius, z[:, d:])
    gap = np.asarray(fast.dist(x, y))
    stretch = np.asarray(fast.norm(center, fast.log(center, x) - fast.log(center, y)))
    return np.where(gap > 1e-6, stretch / np.maximum(gap, 1e-300), 0.0)


def _local_search(objective, starts, step, shrink, rng, iterations=100):
    """Batched random local search maximising ``objective`` (rows of ``starts`` -> values): each
    start moves by Gaussian steps of a shrinking size and keeps every improvement."""
    starts = starts.copy()
    values = objective(starts)
    for _ in range(iterations):
        trial = starts + step * rng.normal(size=starts.shape)
        trial_values = objective(trial)
        better = trial_values > values
        starts[better], values[better] = trial[better], trial_values[better]
        step = max(step * shrink, 1e-4)
    return starts, values


def _worst_ratio(space, center, radius, seed=0):
    """max over x, y in B_r(p0) of ‖Log_{p0}x − Log_{p0}y‖ / ρ(x, y): 400 starts (random pairs,
    and nearby pairs close to the boundary, where the stretch is largest) improved together by a
    batched random local search, then the best three polished by Nelder–Mead (scipy)."""
    frame = orthonormal_frame(space, center, seed=1)
    d, rng = space.dim, np.random.default_rng(seed)
    a = rng.normal(size=(200, d))
    a *= rng.uniform(0.5, 4.0, size=(200, 1)) / np.linalg.norm(a, axis=1, keepdims=True)
    starts = np.concatenate([rng.normal(size=(200, 2 * d)), np.hstack([a, a + 0.05 * rng.normal(size=(200, d))])])
    starts, values = _local_search(lambda z: _pair_ratios(space, center, frame, radius, z), starts, 0.3, 0.97, rng)
    best = float(values.max())
    for z0 in starts[np.argsort(values)[-2:]]:
        res = optimize.minimize(
            lambda z: -float(_pair_ratios(space, center, frame, radius, z[None])[0]),
            z0,
            method="Nelder-Mead",
            options=dict(maxiter=400, xatol=1e-10, fatol=1e-12),
        )
        best = max(best, -res.fun)
    return best


@pytest.mark.parametrize(
    "space,radius",
    [
        (Sphere(2), 0.3),
        (Sphere(2), math.pi / 4),
        (Sphere(2), 1.2),
        (Sphere(3, curvature=4.0), 0.4),
        (KendallShape(4), 0.2),
        (KendallShape(4), math.pi / 8 - 1e-3),
        (Hyperbolic(2), 2.0),
        (SPD(2), 1.5),
    ],
    ids=["S2-0.3", "S2-pi/4", "S2-1.2", "S3k4-0.4", "K4-0.2", "K4-r*", "H2-2", "SPD2-1.5"],
)
def test_log_lipschitz_constant_is_never_exceeded_and_is_tight(space, radius):
    lipschitz, reason = log_lipschitz_constant(space, radius)
    center = space.reference_point()
    worst = _worst_ratio(space, center, radius)
    assert worst <= lipschitz * (1.0 + 1e-6), (worst, lipschitz)
    if lipschitz == 1.0:
        assert "<= 0" in reason
        assert worst > 0.999  # radial pairs attain 1
    else:
        assert "Rauch" in reason
        assert worst - 1.0 >= 0.9 * (lipschitz - 1.0), (worst, lipschitz)  # L is not loose by 10 %


def test_log_lipschitz_constant_closed_forms_and_refusals():
    assert math.isclose(log_lipschitz_constant(Sphere(2), 1.0)[0], 1.0 / math.sin(1.0))
    assert math.isclose(log_lipschitz_constant(Sphere(2, curvature=4.0), 0.5)[0], 1.0 / math.sin(1.0))
    assert math.isclose(log_lipschitz_constant(KendallShape(6), 0.3)[0], 0.6 / math.sin(0.6))
    assert log_lipschitz_constant(SPD(3, metric="log-euclidean"), 50.0)[0] == 1.0
    with pytest.raises(AssumptionError, match="strongly convex"):
        log_lipschitz_constant(Sphere(2), math.pi / 2)  # two close points are joined outside the ball
    with pytest.raises(AssumptionError, match="strongly convex"):
        log_lipschitz_constant(KendallShape(4), math.pi / 4)
    with pytest.raises(InvalidParameterError):
        log_lipschitz_constant(Sphere(2), -1.0)


def _midpoint_shift(space, center, frame, radius, z):
    """Neighbouring datasets of n = 2 records, {s, a} and {s, a'} in the ball (coordinates ``z``,
    shape (m, 3d)): their Fréchet means are geodesic midpoints; return ``‖Log_{p0} m − Log_{p0} m'‖``."""
    fast, d = space.unchecked, space.dim
    s, a, b = (_ball_points(space, center, frame, radius, z[:, i * d : (i + 1) * d]) for i in range(3))
    means = [fast.exp(s, 0.5 * fast.log(s, p)) for p in (a, b)]
    return np.asarray(fast.norm(center, fast.log(center, means[0]) - fast.log(center, means[1])))


@pytest.mark.parametrize("space,radius", [(Sphere(2), 0.3), (KendallShape(4), 0.2), (Hyperbolic(2), 1.5)])
def test_tangent_sensitivity_of_the_mean_holds_under_adversarial_neighbours(space, radius):
    """The released tangent vector moves by at most L·Δ between neighbours, however they are
    chosen (batched local search from 300 random neighbouring pairs of datasets)."""
    center = space.reference_point()
    frame = orthonormal_frame(space, center, seed=2)
    bound = log_lipschitz_constant(space, radius)[0] * frechet_mean_sensitivity(space, radius, 2)
    rng = np.random.default_rng(5)
    z = rng.normal(size=(300, 3 * space.dim)) * 2.0
    _, values = _local_search(lambda z: _midpoint_shift(space, center, frame, radius, z), z, 0.5, 0.96, rng)
    worst = float(values.max())
    assert worst <= bound, (worst, bound)
    # the search finds the near-worst case: a and a' opposite on the boundary move the mean by ~r
    assert worst >= 0.98 * radius, (worst, radius)


# ------------------------------------------------------------------------------ mechanisms
def test_gaussian_privacy_curves():
    mech = WrappedGaussianMechanism(
        Sphere(2), epsilon=0.8, delta=1e-6, sensitivity=0.05, center=[0.0, 0.0, 1.0], radius=0.5
    )
    lipschitz = 0.5 / math.sin(0.5)
    assert math.isclose(mech.tangent_sensitivity, 0.05 * lipschitz)
    assert math.isclose(mech.gdp_mu, 0.05 * lipschitz / mech.scale)
    assert math.isclose(mech.guarantee.gdp_mu, mech.gdp_mu)
    assert math.isclose(mech.zcdp_rho, mech.gdp_mu**2 / 2)
    assert np.allclose(mech.rdp_epsilon([1.5, 8.0]), np.array([1.5, 8.0]) * mech.gdp_mu**2 / 2)
    with pytest.raises(InvalidParameterError):
        mech.rdp_epsilon(1.0)
    # calibration on the tangent sensitivity: the classical and analytic σ for Δ_T = L·Δ
    classical = WrappedGaussianMechanism(
        Sphere(2),
        epsilon=0.8,
        delta=1e-6,
        sensitivity=0.05,
        center=[0.0, 0.0, 1.0],
        radius=0.5,
        calibration="classical",
    )
    assert math.isclose(classical.scale, 0.05 * lipschitz * math.sqrt(2 * math.log(1.25 / 1e-6)) / 0.8)
    assert mech.scale < classical.scale


def test_value_outside_the_ball_is_refused_without_numbers():
    mech = WrappedLaplaceMechanism(Sphere(2), epsilon=1.0, sensitivity=0.1, center=[0.0, 0.0, 1.0], radius=0.5)
    with pytest.raises(InvalidDataError, match="outside the public ball") as info:
        mech.randomise(np.array([1.0, 0.0, 0.0]), rng=0)
    assert not any(ch.isdigit() for ch in str(info.value).split("B_0.5")[1])


def test_secure_mode():
    curved = WrappedGaussianMechanism(
        Hyperbolic(2), epsilon=1.0, delta=1e-5, sensitivity=0.1, center=[1.0, 0.0, 0.0], radius=1.0
    )
    assert curved.randomise(np.array([1.0, 0.0, 0.0]), rng="secure").shape == (3,)
    g = curved.guarantee_for("secure")
    assert g.floating_point_safe is False and "secure generator" in g.construction and g.gdp_mu is not None
    flat = WrappedLaplaceMechanism(
        SPD(2, metric="log-euclidean"), epsilon=1.0, sensitivity=0.1, center=np.eye(2), radius=1.0
    )
    g = flat.guarantee_for("secure", value=np.eye(2))
    assert g.floating_point_safe is True and g.grid is not None
    release = flat.randomise_chart(np.zeros(3), rng="secure")
    assert np.allclose(release / g.grid, np.round(release / g.grid))


# ------------------------------------------------------------------------------ estimators
def _data(space, center, radius, n, seed):
    X = space.random_point(n, rng=seed)
    return space.clip_to_ball(X, center, radius)[0]


@pytest.mark.parametrize("mechanism", ["wrapped-laplace", "wrapped-gaussian"])
@pytest.mark.parametrize(
    "space,radius",
    [(Sphere(2), 0.5), (KendallShape(5), 0.3), (SPD(2), 1.5), (SPD(2, metric="log-euclidean"), 1.5)],
    ids=["sphere", "kendall", "spd-affine", "spd-le"],
)
def test_private_frechet_mean_charges_and_reports(space, radius, mechanism):
    center = space.reference_point()
    X = _data(space, center, radius, 30, 0)
    delta = 1e-6 if mechanism == "wrapped-gaussian" else 0.0
    accountant = BudgetAccountant(epsilon=2.0, delta=1e-5)
    model = PrivateFrechetMean(
        space,
        epsilon=0.5,
        delta=delta,
        center=center,
        radius=radius,
        mechanism=mechanism,
        accountant=accountant,
        random_state=0,
    ).fit(X)
    assert accountant.total_spent == (0.5, delta)
    assert np.all(space.belongs(model.mean_))
    lipschitz = 1.0 if space.curvature_bounds[1] <= 0 else log_lipschitz_constant(space, radius)[0]
    sqrt_k = math.sqrt(max(space.curvature_bounds[1], 0.0))
    if sqrt_k:
        assert math.isclose(lipschitz, sqrt_k * radius / math.sin(sqrt_k * radius))
    report = model.privacy_report_.to_dict()
    assert math.isclose(report["lipschitz"], lipschitz)
    assert math.isclose(report["tangent_sensitivity"], lipschitz * model.sensitivity_)
    assert report["delta"] == delta
    text = str(model.privacy_report_)
    assert "tangent space at the public centre" in text
    assert ("Rauch" in text) and (("<= 0" in text) == (lipschitz == 1.0))
    if mechanism == "wrapped-gaussian":
        assert math.isclose(report["gdp_mu"], model.mechanism_.gdp_mu)
    else:
        assert math.isclose(model.mechanism_.scale, lipschitz * model.sensitivity_ / 0.5)


def test_wrapped_gaussian_needs_delta_and_refuses_before_charging():
    accountant = BudgetAccountant(epsilon=1.0, delta=1e-5)
    model = PrivateFrechetMean(
        Sphere(2), epsilon=0.5, center=[0.0, 0.0, 1.0], radius=0.5, mechanism="wrapped-gaussian", accountant=accountant
    )
    with pytest.raises(InvalidParameterError):
        model.fit(_data(Sphere(2), np.array([0.0, 0.0, 1.0]), 0.5, 10, 1))
    assert accountant.total_spent == (0.0, 0.0)


def test_wrapped_gaussian_is_the_tangent_gaussian_on_flat_spaces():
    space = SPD(2, metric="log-euclidean")
    X = _data(space, np.eye(2), 2.0, 25, 2)
    fits = [
        PrivateFrechetMean(
            space, epsilon=1.0, delta=1e-5, center=np.eye(2), radius=2.0, mechanism=m, random_state=4
        ).fit(X)
        for m in ("tangent-gaussian", "wrapped-gaussian")
    ]
    assert fits[0].mechanism_.scale == fits[1].mechanism_.scale
    assert np.allclose(fits[0].mean_coordinates_, fits[1].mean_coordinates_)


def test_private_mdm_with_wrapped_gaussian():
    space = SPD(2)
    rng = np.random.default_rng(3)
    centres = [np.eye(2) * s for s in (0.5, 2.0)]
    X = np.concatenate([space.exp(c, 0.2 * space.random_tangent(c, 30, rng=rng)) for c in centres])
    y = np.repeat([0, 1], 30)
    accountant = BudgetAccountant(epsilon=5.0, delta=1e-5)
    clf = PrivateMDM(
        space,
        epsilon=4.0,
        delta=1e-6,
        center=np.eye(2),
        radius=2.0,
        mechanism="wrapped-gaussian",
        accountant=accountant,
        random_state=0,
    ).fit(X, y)
    assert accountant.total_spent == (4.0, 1e-6)
    assert clf.privacy_report_.to_dict()["mechanism"] == "wrapped-gaussian"
    assert clf.score(X, y) > 0.9


# ------------------------------------------------------------------------------ audit
@pytest.mark.parametrize(
    "space,mechanism,delta,radius",
    [
        (Sphere(2), "wrapped-laplace", 0.0, 0.6),
        (Hyperbolic(2), "wrapped-gaussian", 1e-5, 1.0),
    ],
)
def test_audit_epsilon_knows_the_wrapped_mechanisms(space, mechanism, delta, radius):
    kwargs = dict(epsilon=1.0, delta=delta, n=10, radius=radius, n_samples=20_000, rng=0)
    real = audit_epsilon(space, mechanism, **kwargs)
    assert real.epsilon_lower_bound <= 1.0
    # the radial pair (L = 1) attains the claim; the tangential one (L > 1) nearly
    assert 0.99 <= real.exact_epsilon <= 1.0 + 1e-9
    mutant = audit_epsilon(space, mechanism, mutant="halve-scale", **kwargs)
    assert mutant.epsilon_lower_bound > 1.0


@pytest.mark.parametrize("space,radius", [(Sphere(2), 0.78), (KendallShape(5), 0.39)])
def test_audit_epsilon_pair_shows_a_wrong_lipschitz_constant(space, radius):
    """Where L > 1 the audited pair is tangential on the boundary: the stretch of Log between its
    two points is nearly L (not 1, as on the radial pair), so a release calibrated with L = 1 has
    an exact ε above its claim while the real one stays at it."""
    kwargs = dict(epsilon=1.0, n=1000, radius=radius, n_samples=MIN_SAMPLES, rng=0)
    real = audit_epsilon(space, "wrapped-laplace", **kwargs)
    mutant = audit_epsilon(space, "wrapped-laplace", mutant="unit-lipschitz", **kwargs)
    lipschitz = radius * math.sqrt(4.0 if isinstance(space, KendallShape) else 1.0)
    lipschitz /= math.sin(lipschitz)
    assert 0.99 * lipschitz <= mutant.exact_epsilon <= lipschitz
    assert 0.99 <= real.exact_epsilon <= 1.0
    assert "(calibrated with L = 1, not L)" in str(mutant)


def test_audit_epsilon_certifies_a_wrong_lipschitz_constant():
    kwargs = dict(epsilon=1.0, n=1000, radius=0.78, n_samples=100_000, rng=1)
    assert audit_epsilon(Sphere(2), "wrapped-laplace", mutant="unit-lipschitz", **kwargs).epsilon_lower_bound > 1.0


def test_unit_lipschitz_mutant_needs_a_stretch():
    with pytest.raises(InvalidParameterError, match="positively curved"):
        audit_epsilon(Hyperbolic(2), "wrapped-laplace", epsilon=1.0, n=100, radius=1.0, mutant="unit-lipschitz")
