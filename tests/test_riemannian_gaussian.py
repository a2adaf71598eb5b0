"""The Riemannian Gaussian mechanism: exact samplers, its sound (ε, δ) curve, calibration, and
PrivateFrechetMean(mechanism="riemannian-gaussian") (docs/math.md §12).

References are computed here from closed forms, independently of the code under test: the
radial CDFs by quadrature of ``e^{−t²/2σ²} J(t)`` with the textbook ``J`` of each space (and the
modified Struve function for SPD(2)), the privacy integrals with mpmath at 20 digits, the exact
Euclidean δ from the Gaussian CDF.
"""

from __future__ import annotations

import math
import pickle

import mpmath
import numpy as np
import pytest
from scipy import integrate, special, stats

from geodp.accountant import BudgetAccountant
from geodp.distributions.riemannian_gaussian import RiemannianGaussian
from geodp.errors import AssumptionError, InvalidParameterError
from geodp.manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Sphere
from geodp.mechanisms import RiemannianGaussianMechanism
from geodp.mechanisms.riemannian_gaussian_curve import triangle_delta
from geodp.models import PrivateFrechetMean

# --------------------------------------------------------------------------- radial laws
# log J(t) of each space, written here from docs/math.md §1 (not from the space's hook)
_LOG_J = {
    "sphere2": (lambda t: np.log(np.sin(t)), math.pi),
    "sphere5": (lambda t: 4 * np.log(np.sin(t)), math.pi),
    "hyperbolic2": (lambda t: np.log(np.sinh(t)), math.inf),
    "hyperbolic4": (lambda t: 3 * np.log(np.sinh(t)), math.inf),
    "kendall4": (lambda t: 3 * np.log(np.sin(t)) + np.log(np.cos(t)), math.pi / 2),
    # SPD(2): ρ = |r|, r ∈ R² with density e^{−|r|²/2σ²} sinh(|r1 − r2|/2): in polar coordinates
    # ∫_0^{2π} sinh(ρ|cos φ|/√2) dφ = 2π L_0(ρ/√2) (modified Struve), times ρ
    "spd2": (lambda t: np.log(t) + np.log(special.modstruve(0, t / np.sqrt(2.0))), math.inf),
}
_SPACES = {
    "sphere2": Sphere(2),
    "sphere5": Sphere(5),
    "hyperbolic2": Hyperbolic(2),
    "hyperbolic4": Hyperbolic(4),
    "kendall4": KendallShape(4),
    "spd2": SPD(2),
}


def _radial_cdf(name, sigma):
    log_j, upper = _LOG_J[name]
    far = min(upper, 12.0 * sigma + 4.0 * sigma * sigma)

    def density(t):
        return float(np.exp(log_j(t) - t * t / (2 * sigma * sigma))) if 0 < t < upper else 0.0

    total = integrate.quad(density, 0.0, far, limit=200, epsabs=0, epsrel=1e-11)[0]
    grid = np.linspace(0.0, far, 201)
    steps = [integrate.quad(density, a, b, epsabs=0, epsrel=1e-11)[0] for a, b in zip(grid[:-1], grid[1:])]
    cum = np.concatenate([[0.0], np.cumsum(steps)]) / total
    return lambda t: np.interp(t, grid, cum)


def _radii(space, sigma, n, seed):
    center = space.reference_point()
    law = RiemannianGaussian(space, center, sigma)
    return np.asarray(space.dist(center, law.sample(n, rng=seed)))


@pytest.mark.parametrize("name", sorted(_SPACES))
@pytest.mark.parametrize("sigma", [0.15, 0.6])
def test_radii_follow_the_exact_radial_law_and_a_scale_mutant_is_caught(name, sigma):
    space, cdf = _SPACES[name], _radial_cdf(name, sigma)
    radii = _radii(space, sigma, 4000, seed=11)
    assert stats.kstest(radii, cdf).pvalue > 1e-3
    # the mutant: a law drawn at 1.5σ is told apart from the law at σ
    mutant = _radii(space, 1.5 * sigma, 4000, seed=12)
    assert stats.kstest(mutant, cdf).pvalue < 1e-6


def test_euclidean_radius_is_chi():
    sigma, dim = 0.7, 4
    mech = RiemannianGaussianMechanism(Euclidean(dim), epsilon=1.0, delta=1e-5, sensitivity=sigma / 3.0)
    y = mech.randomise(np.zeros(dim), rng=3, size=4000)
    radii = np.linalg.norm(y, axis=-1) / mech.scale
    assert stats.kstest(radii, stats.chi(dim).cdf).pvalue > 1e-3
    assert stats.kstest(radii / 1.5, stats.chi(dim).cdf).pvalue < 1e-6


def test_spd3_radius_follows_the_eigenvalue_law():
    """SPD(3): the radial density ∝ ρ^{d−1}... is not 1-D closed form; compute it from the law
    of r ∈ R³ (∝ e^{−|r|²/2σ²} Π sinh(|r_i − r_j|/2)) by a product Gauss–Legendre rule on S²."""
    sigma = 0.4
    x, w = np.polynomial.legendre.leggauss(48)
    phi = np.linspace(0.0, 2 * np.pi, 96, endpoint=False)
    cz, ph = np.meshgrid(x, phi, indexing="ij")
    sz = np.sqrt(1 - cz**2)
    u = np.stack([sz * np.cos(ph), sz * np.sin(ph), cz], axis=-1).reshape(-1, 3)
    weights = (w[:, None] * np.full(phi.shape, 2 * np.pi / len(phi))).ravel()
    t = np.linspace(1e-6, 8 * sigma + 2.0, 3001)
    gaps = np.abs(u[:, [0, 0, 1]] - u[:, [1, 2, 2]])
    angular = np.array([weights @ np.prod(np.sinh(s * gaps / 2.0), axis=1) for s in t])
    density = t**2 * np.exp(-(t**2) / (2 * sigma**2)) * angular
    cum = integrate.cumulative_trapezoid(density, t, initial=0.0)
    cdf = lambda s: np.interp(s, t, cum / cum[-1])
    assert stats.kstest(_radii(SPD(3), sigma, 4000, seed=5), cdf).pvalue > 1e-3
    assert stats.kstest(_radii(SPD(3), 1.5 * sigma, 4000, seed=6), cdf).pvalue < 1e-6


def test_directions_are_uniform():
    """The unit direction of log_x(y) is uniform on the unit sphere of T_x: on S² its angle in
    an orthonormal frame of T_x is uniform; on H³ at (1, 0, 0, 0), whose tangent space is the last
    three coordinates, each coordinate is Uniform(−1, 1) (Archimedes)."""
    sphere, x = Sphere(2), np.array([0.6, 0.0, 0.8])
    v = np.asarray(sphere.log(x, RiemannianGaussian(sphere, x, 0.5).sample(4000, rng=21)))
    e1, e2 = np.array([0.8, 0.0, -0.6]), np.array([0.0, 1.0, 0.0])
    angle = np.arctan2(v @ e2, v @ e1)
    assert stats.kstest(angle, stats.uniform(-np.pi, 2 * np.pi).cdf).pvalue > 1e-3
    assert stats.kstest(2 * angle % (2 * np.pi) - np.pi, stats.uniform(-np.pi, np.pi).cdf).pvalue < 1e-6  # mutant

    hyperbolic, o = Hyperbolic(3), np.array([1.0, 0.0, 0.0, 0.0])
    v = np.asarray(hyperbolic.log(o, RiemannianGaussian(hyperbolic, o, 0.5).sample(4000, rng=22)))
    v = v[:, 1:] / np.linalg.norm(v[:, 1:], axis=-1, keepdims=True)
    for k in range(3):
        assert stats.kstest(v[:, k], stats.uniform(-1, 2).cdf).pvalue > 1e-3


# --------------------------------------------------------------------- the privacy curve
def _mp_triangle_delta(log_j_mp, upper, sigma, epsilon, sensitivity):
    """E[(1 − e^{ε − U(t)})_+] at 20 digits, U(t) = (min(t + Δ, D)² − t²)/2σ²."""
    mpmath.mp.dps = 20
    s, e, d = mpmath.mpf(sigma), mpmath.mpf(epsilon), mpmath.mpf(sensitivity)
    D = mpmath.mpf(upper) if math.isfinite(upper) else mpmath.inf

    def dens(t):
        return mpmath.exp(log_j_mp(t) - t * t / (2 * s * s))

    def weight(t):
        loss = (min(t + d, D) ** 2 - t * t) / (2 * s * s)
        return 1 - mpmath.exp(e - loss) if loss > e else mpmath.mpf(0)

    end = D if math.isfinite(upper) else mpmath.mpf(40) * s + 4 * s * s * 10
    knots = [mpmath.mpf(0)] + [end * k / 16 for k in range(1, 16)] + [end]
    t_lo = (2 * s * s * e - d * d) / (2 * d)
    if 0 < t_lo < end:
        knots = sorted(set(knots + [t_lo]))
    num = mpmath.quad(lambda t: weight(t) * dens(t), knots)
    return float(num / mpmath.quad(dens, knots))


_MP_CASES = [
    (Sphere(2), lambda t: mpmath.log(mpmath.sin(t)), math.pi, 0.2, 1.0, 0.05),
    (Sphere(2), lambda t: mpmath.log(mpmath.sin(t)), math.pi, 1.2, 0.3, 2.0),  # the diameter cap binds
    (Hyperbolic(3), lambda t: 2 * mpmath.log(mpmath.sinh(t)), math.inf, 0.3, 0.5, 0.1),
    (KendallShape(5), lambda t: 5 * mpmath.log(mpmath.sin(t)) + mpmath.log(mpmath.cos(t)), math.pi / 2, 0.1, 1, 0.02),
]


@pytest.mark.parametrize("case", range(len(_MP_CASES)))
def test_quadrature_matches_mpmath(case):
    space, log_j, upper, sigma, epsilon, sensitivity = _MP_CASES[case]
    reference = _mp_triangle_delta(log_j, upper, sigma, epsilon, sensitivity)
    value = triangle_delta(space, sigma, epsilon, sensitivity)
    assert reference > 1e-12
    assert reference <= value <= reference * (1 + 1e-5)


def test_spd_bound_covers_the_exact_triangle_integral():
    """SPD(2): the survival-sandwich bound is ≥ the triangle integral over the exact radial law
    (Struve) and not much larger."""
    mpmath.mp.dps = 20
    for sigma, epsilon, sensitivity in [(0.5, 0.5, 0.2)]:
        reference = _mp_triangle_delta(
            lambda t: mpmath.log(t) + mpmath.log(mpmath.struvel(0, t / mpmath.sqrt(2))),
            math.inf,
            sigma,
            epsilon,
            sensitivity,
        )
        value = triangle_delta(SPD(2), sigma, epsilon, sensitivity)
        assert reference <= value <= 1.5 * reference


@pytest.mark.parametrize("dim", [1, 3, 10])
@pytest.mark.parametrize("sigma", [0.3, 1.0, 3.0])
def test_triangle_bound_dominates_the_exact_euclidean_delta(dim, sigma):
    sensitivity, epsilon = 0.5, 1.0
    exact = special.ndtr(sensitivity / (2 * sigma) - epsilon * sigma / sensitivity) - math.exp(epsilon) * special.ndtr(
        -sensitivity / (2 * sigma) - epsilon * sigma / sensitivity
    )
    bound = triangle_delta(Euclidean(dim), sigma, epsilon, sensitivity)
    assert bound >= exact
    if dim == 1 and 2 * sigma**2 * epsilon >= sensitivity**2:
        # in 1-D the bound counts the half-line where the loss exceeds ε twice (when it lies in t > 0)
        assert bound == pytest.approx(2 * exact, rel=1e-5)


def _empirical_delta(space, sigma, a, b, epsilon, n, seed):
    """Monte Carlo hockey-stick E_a[(1 − e^{ε − L})_+] with the exact loss (ρ_b² − ρ_a²)/2σ²
    (equal normalisers: homogeneous space), and its standard error."""
    y = RiemannianGaussian(space, a, sigma).sample(n, rng=seed)
    loss = (np.asarray(space.dist(b, y)) ** 2 - np.asarray(space.dist(a, y)) ** 2) / (2 * sigma**2)
    values = np.maximum(-np.expm1(epsilon - loss), 0.0)
    return values.mean(), values.std() / math.sqrt(n)


def _neighbours(space, radius, gap, rng):
    """a on the boundary of B_radius(reference point), b at geodesic distance ``gap`` from a
    along the radial geodesic (outward), the adversarial placement."""
    center = space.reference_point()
    v = space.random_unit_tangent(center, rng=rng)
    return space.exp(center, radius * v), space.exp(center, (radius + gap) * v)


@pytest.mark.parametrize("space", [Sphere(2), Hyperbolic(2), SPD(2)], ids=["sphere", "hyperbolic", "spd"])
def test_monte_carlo_privacy_loss_stays_below_the_bound(space):
    """Neighbours on the data ball's boundary along a geodesic, the distance between them
    taken as Δ/2 and Δ (on these homogeneous spaces the loss law depends on it alone): the
    empirical δ(ε) stays below the bound at σ; the bound computed for Δ/2 (a mutant) does not."""
    epsilon, delta, sensitivity = 0.5, 1e-2, 0.2
    mech = RiemannianGaussianMechanism(space, epsilon=epsilon, delta=delta, sensitivity=sensitivity)
    sigma, bound = mech.scale, mech.delta_for(epsilon)
    mutant = triangle_delta(space, sigma, epsilon, sensitivity / 2.0)
    rng = np.random.default_rng(0)
    worst = -1.0
    for gap in [sensitivity / 2, sensitivity]:
        a, b = _neighbours(space, 0.5, gap, rng)
        for first, second in ((a, b), (b, a)):
            value, err = _empirical_delta(space, sigma, first, second, epsilon, 30_000, seed=int(rng.integers(1e9)))
            assert value <= bound + 4 * err
            worst = max(worst, value - 4 * err)
    assert worst > mutant


# ---------------------------------------------------------------- mechanism and estimator
def test_calibration_is_the_smallest_sigma_and_sound():
    space, epsilon, delta, sensitivity = Sphere(3), 1.0, 1e-6, 0.05
    mech = RiemannianGaussianMechanism(space, epsilon=epsilon, delta=delta, sensitivity=sensitivity)
    assert mech.delta_for(epsilon) <= delta
    assert triangle_delta(space, mech.scale * (1 - 1e-3), epsilon, sensitivity) > delta
    g = mech.guarantee
    assert g.gdp_mu is None and g.delta == delta and g.exact


def test_flat_space_is_the_gaussian_mechanism_with_its_gdp_mu():
    from geodp.calibration import gaussian_sigma

    mech = RiemannianGaussianMechanism(Euclidean(3), epsilon=0.5, delta=1e-6, sensitivity=1.0)
    assert mech.scale == gaussian_sigma(0.5, 1e-6, 1.0)
    assert mech.guarantee.gdp_mu == pytest.approx(1.0 / mech.scale)
    assert mech.delta_for(0.5) <= 1e-6


def test_unsupported_space_is_refused():
    class NoPolarVolume(Sphere):  # a curved space that does not declare its polar volume
        def provides(self, hook):
            return hook != "radial_log_jacobian" and super().provides(hook)

    with pytest.raises(InvalidParameterError, match="no exact sampler"):
        RiemannianGaussianMechanism(NoPolarVolume(2), epsilon=1.0, delta=1e-5, sensitivity=0.1)


def test_private_frechet_mean_releases_and_charges():
    space = Sphere(2)
    center = np.array([0.0, 0.0, 1.0])
    rng = np.random.default_rng(4)
    X = space.exp(center, 0.3 * space.random_unit_tangent(center, size=40, rng=rng))
    budget = BudgetAccountant(epsilon=2.0, delta=1e-4)
    model = PrivateFrechetMean(
        space,
        epsilon=1.0,
        delta=1e-5,
        center=center,
        radius=0.4,
        mechanism="riemannian-gaussian",
        accountant=budget,
        random_state=0,
    ).fit(X)
    report = model.privacy_report_.to_dict()
    assert report["delta"] == 1e-5 and report["gdp_mu"] is None
    assert "Riemannian Gaussian" in str(model.privacy_report_)
    assert budget.total_spent == (1.0, 1e-5)
    assert bool(space.belongs(model.mean_))
    assert pickle.loads(pickle.dumps(model)).mean_.tolist() == model.mean_.tolist()
    # δ = 0 is refused before anything is charged
    with pytest.raises(InvalidParameterError):
        PrivateFrechetMean(
            space, epsilon=1.0, center=center, radius=0.4, mechanism="riemannian-gaussian", accountant=budget
        ).fit(X)
    assert budget.total_spent == (1.0, 1e-5)


def test_unreachable_target_is_refused_before_the_charge():
    """On H^10 the loss of the Riemannian Gaussian does not vanish as σ grows (its radius grows
    like 9σ²): at Δ = 0.5 no σ gives (1, 1e-5)-DP by the bound, and fit refuses before charging."""
    space = Hyperbolic(10)
    origin = np.eye(11)[0]
    X = space.exp(origin, 0.5 * space.random_unit_tangent(origin, size=4, rng=0))
    budget = BudgetAccountant(epsilon=5.0, delta=1e-3)
    model = PrivateFrechetMean(
        space, epsilon=1.0, delta=1e-5, center=origin, radius=1.0, mechanism="riemannian-gaussian", accountant=budget
    )
    with pytest.raises(AssumptionError, match="no scale"):
        model.fit(X)
    assert budget.total_spent == (0.0, 0.0)


def test_epsilon_audit_stays_below_the_claim_and_catches_the_halved_scale():
    from geodp.audit import audit_epsilon

    kwargs = dict(epsilon=1.0, delta=1e-3, n=5, radius=0.2, center=np.array([0.0, 0.0, 1.0]), n_samples=20_000, rng=0)
    real = audit_epsilon(Sphere(2), "riemannian-gaussian", **kwargs)
    mutant = audit_epsilon(Sphere(2), "riemannian-gaussian", mutant="halve-scale", **kwargs)
    assert real.epsilon_lower_bound <= 1.0 < mutant.epsilon_lower_bound


def test_a_large_affine_spd_is_refused_with_a_typed_error_not_an_overflow():
    """SPD(64), r = 10: the survival bound's envelope lies far above its peak (exp overflowed in
    the planning, a bare OverflowError); now no bound, and the usual AssumptionError."""
    from geodp.errors import AssumptionError
    from geodp.manifolds import SPD

    model = PrivateFrechetMean(
        SPD(64), epsilon=1.0, delta=1e-6, mechanism="riemannian-gaussian", center=np.eye(64), radius=10.0
    )
    with pytest.raises(AssumptionError, match="no scale"):
        model.plan(100)
