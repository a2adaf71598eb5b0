import math

import numpy as np
import pytest
from scipy import integrate, stats

from geodp.calibration import analytic_gaussian_delta, gaussian_sigma, laplace_scale
from geodp.errors import InvalidParameterError, InvalidTypeError


def hockey_stick_delta(sigma, epsilon, sensitivity):
    """Independent oracle: sup_S P[N(0,σ²) ∈ S] − e^ε P[N(Δ,σ²) ∈ S], by numerical integration."""
    p, q = stats.norm(0.0, sigma), stats.norm(sensitivity, sigma)
    f = lambda x: max(p.pdf(x) - math.exp(epsilon) * q.pdf(x), 0.0)
    # the integrand is positive only left of the crossing point
    cross = sensitivity / 2 - epsilon * sigma**2 / sensitivity
    val, _ = integrate.quad(f, -np.inf, cross, epsabs=1e-15, epsrel=1e-12, limit=500)
    return val


@pytest.mark.parametrize("epsilon,expected,classical", [(0.1, 36.30, 52.99), (0.5, 8.058, 10.60), (0.9, 4.659, 5.888)])
def test_gaussian_sigma_matches_published_checks(epsilon, expected, classical):
    # values from docs/math.md §4, checked there against the exact hockey-stick divergence
    assert gaussian_sigma(epsilon, 1e-6, 1.0) == pytest.approx(expected, rel=5e-4)
    assert gaussian_sigma(epsilon, 1e-6, 1.0, method="classical") == pytest.approx(classical, rel=5e-4)


@pytest.mark.parametrize("epsilon", [0.05, 0.3, 1.0, 3.0, 10.0])
@pytest.mark.parametrize("delta", [1e-10, 1e-6, 1e-3])
@pytest.mark.parametrize("sensitivity", [0.01, 1.0, 7.0])
def test_analytic_sigma_is_tight_and_sound(epsilon, delta, sensitivity):
    sigma = gaussian_sigma(epsilon, delta, sensitivity)
    achieved = analytic_gaussian_delta(sigma, epsilon, sensitivity)
    assert achieved <= delta  # sound: rounded up
    assert delta - achieved <= 1e-12  # tight to 1e-12
    # smaller σ (by 1e-9 relative) violates δ: it really is the smallest
    assert analytic_gaussian_delta(sigma * (1 - 1e-9), epsilon, sensitivity) > delta


@pytest.mark.parametrize("epsilon,delta", [(0.1, 1e-6), (0.5, 1e-5), (2.0, 1e-6), (5.0, 1e-3)])
def test_analytic_delta_formula_matches_hockey_stick_integral(epsilon, delta):
    sigma = gaussian_sigma(epsilon, delta, 1.0)
    assert hockey_stick_delta(sigma, epsilon, 1.0) == pytest.approx(delta, rel=1e-6)


def test_wrong_sign_in_second_argument_would_be_caught():
    # U23 Thm 2.2 prints +Δ/2σ in both arguments (docs/math.md §10.3): that δ differs from the exact one.
    sigma, eps = 4.0, 0.5
    wrong = stats.norm.cdf(1 / (2 * sigma) - eps * sigma) - math.exp(eps) * stats.norm.cdf(1 / (2 * sigma) - eps * sigma)
    assert abs(wrong - hockey_stick_delta(sigma, eps, 1.0)) > 1e-3
    assert analytic_gaussian_delta(sigma, eps, 1.0) == pytest.approx(hockey_stick_delta(sigma, eps, 1.0), rel=1e-6)


@pytest.mark.parametrize("epsilon", [0.01, 0.2, 0.5, 0.99])
def test_analytic_is_below_classical(epsilon):
    assert gaussian_sigma(epsilon, 1e-6, 1.0) < gaussian_sigma(epsilon, 1e-6, 1.0, method="classical")


def test_classical_refuses_epsilon_at_least_one():
    with pytest.raises(InvalidParameterError, match="epsilon < 1.*analytic"):
        gaussian_sigma(1.0, 1e-6, 1.0, method="classical")


@pytest.mark.parametrize(
    "kwargs,error,match",
    [
        (dict(epsilon=0.0, delta=1e-6, sensitivity=1.0), InvalidParameterError, "epsilon must be > 0"),
        (dict(epsilon=-1.0, delta=1e-6, sensitivity=1.0), InvalidParameterError, "epsilon"),
        (dict(epsilon=1.0, delta=0.0, sensitivity=1.0), InvalidParameterError, r"delta must lie in \(0, 1\)"),
        (dict(epsilon=1.0, delta=1.0, sensitivity=1.0), InvalidParameterError, "delta"),
        (dict(epsilon=1.0, delta=1e-6, sensitivity=0.0), InvalidParameterError, "sensitivity must be > 0"),
        (dict(epsilon=float("nan"), delta=1e-6, sensitivity=1.0), InvalidParameterError, "finite"),
        (dict(epsilon="1", delta=1e-6, sensitivity=1.0), InvalidTypeError, "real number"),
        (dict(epsilon=1.0, delta=1e-6, sensitivity=1.0, method="rdp"), InvalidParameterError, "method"),
    ],
)
def test_gaussian_sigma_bad_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        gaussian_sigma(**kwargs)


def test_laplace_scale_factor_one_or_two():
    assert laplace_scale(0.5, 0.2, footpoint_invariant=True) == pytest.approx(0.4)
    assert laplace_scale(0.5, 0.2, footpoint_invariant=False) == pytest.approx(0.8)
    with pytest.raises(InvalidParameterError):
        laplace_scale(0.5, 0.2, footpoint_invariant="yes")
    with pytest.raises(ValueError):
        laplace_scale(-0.5, 0.2, footpoint_invariant=True)


from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=60, deadline=None)
@given(
    epsilon=st.floats(1e-3, 20.0),
    log_delta=st.floats(-14.0, -1.0),
    sensitivity=st.floats(1e-4, 1e3),
)
def test_analytic_sigma_property(epsilon, log_delta, sensitivity):
    # for any (ε, δ, Δ): sound (δ(σ) ≤ δ), tight (1e-12), and never above the classical σ when ε < 1
    delta = 10.0**log_delta
    sigma = gaussian_sigma(epsilon, delta, sensitivity)
    achieved = analytic_gaussian_delta(sigma, epsilon, sensitivity)
    assert achieved <= delta and delta - achieved <= 1e-12
    if epsilon < 1:
        assert sigma <= gaussian_sigma(epsilon, delta, sensitivity, method="classical")
