"""Sensitivity bounds against adversarial neighbouring datasets (not only random ones)."""

import math

import numpy as np
import pytest
from scipy import optimize

from geodp import frechet_mean
from geodp.errors import AssumptionError, InvalidParameterError
from geodp.manifolds import SPD, Euclidean
from geodp.manifolds import matrix_functions as mf
from geodp.sensitivity import (
    curvature_factor,
    extrinsic_mean_sensitivity,
    extrinsic_radius,
    frechet_mean_sensitivity,
    max_radius,
)

K, N, R = 3, 8, 1.5
SPACE = SPD(K, metric="log-euclidean")
CENTER = mf.expm(mf.invvecd(np.array([0.3, -0.2, 0.1, 0.2, 0.0, -0.1]), K))


def released_mean(data, clip=True):
    if clip:
        data, _ = SPACE.clip_to_ball(data, CENTER, R)
    return frechet_mean(SPACE, data)


def neighbour_gap(z, base, clip=True):
    """Distance between the means of D and D' that differ in record 0; z parametrises x_0, x_0'."""
    d = SPACE.dim
    # records anywhere up to 8r from the centre (far outside the ball, still well-conditioned)
    cap = lambda v: v * min(1.0, 8 * R / max(np.linalg.norm(v), 1e-300))
    a = SPACE.from_coordinates(SPACE.to_coordinates(CENTER) + cap(z[:d]))
    b = SPACE.from_coordinates(SPACE.to_coordinates(CENTER) + cap(z[d:]))
    D, Dp = base.copy(), base.copy()
    D[0], Dp[0] = a, b
    return float(SPACE.dist(released_mean(D, clip), released_mean(Dp, clip)))


def adversarial_ratio(clip=True, seeds=range(4)):
    bound = frechet_mean_sensitivity(SPACE, R, N)
    best = 0.0
    for seed in seeds:
        rng = np.random.default_rng(seed)
        base = SPACE.from_coordinates(SPACE.to_coordinates(CENTER) + rng.normal(scale=2.0, size=(N, SPACE.dim)))
        z0 = rng.normal(scale=3.0, size=2 * SPACE.dim)
        res = optimize.minimize(
            lambda z: -neighbour_gap(z, base, clip),  # noqa: B023
            z0,
            method="Nelder-Mead",
            options=dict(maxiter=1500, xatol=1e-10, fatol=1e-12),
        )
        best = max(best, -res.fun / bound)
    return best


def test_log_euclidean_mean_sensitivity_survives_adversarial_search():
    ratio = adversarial_ratio(clip=True)
    assert ratio <= 1.0 + 1e-9  # the bound holds ...
    assert ratio > 0.99  # ... and the search reaches it (2r/n is tight), so it has the power to fail


def test_the_adversarial_pair_catches_a_pipeline_without_clipping():
    # records 5r from the centre on opposite sides: without clipping the means move 10r/n
    u = np.zeros(SPACE.dim)
    u[0] = 1.0
    base = np.repeat(CENTER[None], N, axis=0)
    z = np.concatenate([5 * R * u, -5 * R * u])
    bound = frechet_mean_sensitivity(SPACE, R, N)
    assert neighbour_gap(z, base, clip=False) / bound == pytest.approx(5.0, rel=1e-9)
    assert neighbour_gap(z, base, clip=True) / bound <= 1.0 + 1e-9


def test_antipodal_boundary_records_attain_2r_over_n():
    u = np.zeros(SPACE.dim)
    u[1] = 1.0
    base = np.repeat(CENTER[None], N, axis=0)
    gap = neighbour_gap(np.concatenate([R * u, -R * u]), base)
    assert gap == pytest.approx(2 * R / N, rel=1e-9)


def test_extrinsic_radius_contains_the_ball_adversarially():
    r = 1.2
    # maximise ‖X − I‖_F over log-eigenvalues s with |s| = r (the ball's boundary around I)
    f = lambda s: -np.sqrt(np.sum(np.expm1(r * s / np.linalg.norm(s)) ** 2))
    worst = max(
        -optimize.minimize(f, np.random.default_rng(i).normal(size=4), method="Nelder-Mead").fun for i in range(10)
    )
    assert worst <= extrinsic_radius(SPD(4), r) * (1 + 1e-12)
    assert worst > 0.999 * extrinsic_radius(SPD(4), r)
    # and random SPD points inside the ball (random eigenvectors too)
    X = SPD(4).random_point(2000, rng=3)
    d = SPD(4).dist(np.eye(4), X)
    inside = X[d <= r]
    assert np.all(np.linalg.norm(inside - np.eye(4), axis=(-2, -1)) <= extrinsic_radius(SPD(4), r))
    assert extrinsic_mean_sensitivity(SPD(4), r, 10) == pytest.approx(2 * math.expm1(r) / 10)


def test_curvature_factor_and_max_radius():
    assert curvature_factor(0.3, 0.0) == 1.0 and curvature_factor(0.3, -1.0) == 1.0
    assert curvature_factor(0.25, 1.0) == pytest.approx(0.5 / math.tan(0.5))
    with pytest.raises(AssumptionError, match="radius"):
        curvature_factor(math.pi / 4, 1.0)
    assert max_radius(SPD(3)) == math.inf and max_radius(Euclidean(2)) == math.inf


def test_frechet_mean_sensitivity_flat_and_bad_input():
    assert frechet_mean_sensitivity(SPACE, 2.0, 50) == pytest.approx(2 * 2.0 / 50)
    assert frechet_mean_sensitivity(SPD(3), 2.0, 50) == pytest.approx(2 * 2.0 / 50)  # κ ≤ 0: h = 1
    with pytest.raises(InvalidParameterError):
        frechet_mean_sensitivity(SPACE, 0.0, 50)
    with pytest.raises(InvalidParameterError):
        frechet_mean_sensitivity(SPACE, 1.0, 0)
    with pytest.raises(InvalidParameterError, match="mechanism"):
        frechet_mean_sensitivity(SPACE, 1.0, 5, mechanism="exponential")
