"""The DP-RiemOpt study: its data generators match their code's laws, the MH baseline samples the
metric's Gaussian (it is a fair baseline), and the outlier study's bound holds."""

import math

import numpy as np
import pytest

from geodp.experiments.private_gd_study import (
    PCA_NU,
    gen_z,
    mh_tangent_coordinates,
    outlier_shifts,
    run_pca_study,
    wishart_within_one,
)
from geodp.manifolds import SPD


def test_gen_z_has_their_eigenvalue_profile_and_rows_of_norm_at_most_one():
    Z = gen_z(300, np.random.default_rng(0))
    top = np.linalg.eigvalsh(Z.T @ Z)[::-1][:6]
    np.testing.assert_allclose(top, (1 - PCA_NU * np.array([0, 1, 1.1, 1.2, 1.3, 1.4])) ** 2, rtol=1e-10)
    assert np.max(np.linalg.norm(Z, axis=1)) <= 1.0 + 1e-12  # |z_i| ≤ ‖Z‖₂ = 1


def test_wishart_records_are_spd_and_within_distance_one_of_the_identity():
    X = wishart_within_one(200, np.random.default_rng(1))
    assert X.shape == (200, 2, 2)
    assert np.all(np.linalg.eigvalsh(X) > 0)
    assert np.all(SPD(2).dist(np.eye(2), X) < 1.0)


def test_the_mh_baseline_samples_the_metrics_gaussian():
    # Target exp(−vᵀGv/2σ²) with G = diag(1, 4, 0.25), σ = 1: coordinate variances 1, 1/4, 4.
    gram, rng = np.diag([1.0, 4.0, 0.25]), np.random.default_rng(2)
    draws = np.array([mh_tangent_coordinates(gram, 1.0, rng) for _ in range(60)])
    variances = np.mean(draws**2, axis=0)
    np.testing.assert_allclose(variances, [1.0, 0.25, 4.0], rtol=0.45)
    assert variances[2] / variances[1] > 8  # the metric shapes the noise (a ×1.5 error on one axis shows)


def test_pca_iterations_follow_their_formula_for_t():
    rows = run_pca_study([500], 1, methods=("their sigma, exact noise",))
    Z = gen_z(500, np.random.default_rng([0, 500, 0]))
    L0 = float(np.max(np.sum(Z**2, axis=1)))
    T = math.ceil(math.log(500**2 * 0.01 / (50 * L0**2 * math.log(1e3))))
    assert rows[0]["iterations"] == T >= 1


def test_one_far_outlier_moves_the_mean_with_it_and_the_median_gradient_by_at_most_two():
    rows = outlier_shifts([1.0, 100.0, 1e4], n=200)
    for row in rows:
        assert row["gradient_move"] <= 2.0 + 1e-12
        assert row["mean_shift"] == pytest.approx(row["distance"] / 200, rel=0.05, abs=0.02)
    assert rows[-1]["mean_shift"] > 40
    assert rows[-1]["median_shift"] == rows[1]["median_shift"] < 0.05  # clipped into the ball: the same release
