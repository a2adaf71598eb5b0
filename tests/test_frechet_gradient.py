"""PrivateFrechetMean(mechanism="gradient"): DP-RGD on ½ρ² (issue 26, item 2). Its noise is the exact
tangent Gaussian (KS, ×1.5 mutant), its per-record gradients never exceed the clip inside the ball
(so the clipped sum moves by at most 2·clip), its charge is dp-accounting's, and δ = 0 is refused
before the charge."""

import json

import dp_accounting
import jsonschema
import numpy as np
import pytest
from scipy import stats

from geodp.accountant import BudgetAccountant
from geodp.calibration import gaussian_sigma
from geodp.cli import guarantee_schema
from geodp.errors import InvalidParameterError
from geodp.frechet import frechet_mean
from geodp.manifolds import SPD, Sphere
from geodp.models import PrivateFrechetMean
from geodp.models.frechet_mean import GRADIENT_ITERATIONS, GRADIENT_STEP
from geodp.optim import clipped_gradient_sum

NORTH = np.array([0.0, 0.0, 1.0])


def _model(**kwargs):
    settings = dict(epsilon=1.0, delta=1e-5, center=NORTH, radius=0.5, mechanism="gradient") | kwargs
    return PrivateFrechetMean(Sphere(2), **settings)


def test_injected_noise_is_the_calibrated_tangent_gaussian_and_a_1_5_mutant_fails():
    n = 400
    X = np.tile(NORTH, (n, 1))  # every gradient −Log_c(x_i) is 0: the release is Exp_c(−(η/n)·σC·Z)
    rng = np.random.default_rng(11)
    releases, scale = [], None
    for _ in range(1000):
        model = _model(random_state=rng).fit(X)
        releases.append(model.mean_)
        scale = model.privacy_report_.to_dict()["scale"]
    assert GRADIENT_ITERATIONS == 1  # one step from the centre: the noise is read off the release
    steps = Sphere(2).log(NORTH, np.array(releases)) * (-n / GRADIENT_STEP)
    coefficients = steps[:, :2]  # (1, 0, 0) and (0, 1, 0): an orthonormal basis of T_c S²
    exact_p = [stats.kstest(coefficients[:, k] / scale, "norm").pvalue for k in range(2)]
    mutant_p = [stats.kstest(coefficients[:, k] / (1.5 * scale), "norm").pvalue for k in range(2)]
    assert min(exact_p) > 1e-3
    assert max(mutant_p) < 1e-6
    assert scale == pytest.approx(2.0 * GRADIENT_ITERATIONS**0.5 * gaussian_sigma(1.0, 1e-5, 1.0) * 2 * 0.5)


@pytest.mark.parametrize(("space", "center", "radius"), [(Sphere(2), NORTH, 0.7), (SPD(2), np.eye(2), 1.5)])
def test_gradients_stay_within_the_clip_and_the_sum_moves_by_at_most_2clip_against_far_neighbours(
    space, center, radius
):
    """Iterate and records anywhere in the ball, including opposite boundary points: ‖Log_x(x_i)‖ <= 2r,
    so clipping at 2r is never active, and replacing one record moves the clipped sum by <= 4r."""
    clip = 2.0 * radius
    directions = space.random_unit_tangent(center, size=400, rng=0)
    boundary = space.exp(center, radius * directions)
    inside = space.exp(
        center, radius * np.random.default_rng(1).uniform(size=(400,) + (1,) * len(space.point_shape)) * directions
    )
    worst_norm, worst_move = 0.0, 0.0
    for k in range(0, 400, 40):
        x = boundary[k]
        records = np.concatenate([boundary, inside])
        norms = space.norm(x, space.log(x, records))
        worst_norm = max(worst_norm, float(np.max(norms)))
        data = records[:10]
        base = clipped_gradient_sum(space, x, -space.log(x, data), clip)
        for far in (space.exp(center, -radius * space.log(center, x) / max(float(space.dist(center, x)), 1e-300)),):
            other = data.copy()
            other[0] = far  # the record replaced by the boundary point opposite the iterate
            moved = clipped_gradient_sum(space, x, -space.log(x, other), clip) - base
            worst_move = max(worst_move, float(space.norm(x, moved)))
    assert worst_norm <= 2.0 * radius * (1 + 1e-9)
    assert worst_norm >= 1.9 * radius  # the bound is nearly attained by opposite boundary points
    assert worst_move <= 2.0 * clip * (1 + 1e-9)


def test_the_charge_is_dp_accountings_gaussian_composition_and_delta_zero_is_refused_first():
    X = Sphere(2).exp(NORTH, 0.3 * Sphere(2).random_unit_tangent(NORTH, size=200, rng=0))
    accountant = BudgetAccountant(epsilon=3.0, delta=1e-5, composition="pld")
    with pytest.raises(InvalidParameterError, match="delta"):
        _model(delta=0.0, accountant=accountant).fit(X)
    assert accountant.charges == []
    model = _model(accountant=accountant, random_state=0).fit(X)
    report = model.privacy_report_.to_dict()
    # Per step: sensitivity 2·clip, std σ·clip, i.e. dp-accounting's noise multiplier σ/2; T steps.
    multiplier = report["scale"] / report["sensitivity"]
    reference = dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-4)
    reference.compose(dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(multiplier), GRADIENT_ITERATIONS))
    assert accountant.total_spent[0] == pytest.approx(reference.get_epsilon(1e-5), rel=2e-3)
    assert model.plan(X).dp_event() == dp_accounting.GaussianDpEvent(1.0 / report["gdp_mu"])
    assert f"T = {GRADIENT_ITERATIONS}, step = {GRADIENT_STEP!r}, clip = 1.0" in report["mechanism"]
    schema = guarantee_schema()
    jsonschema.validate(json.loads(json.dumps(report)), {"$defs": schema["$defs"], **schema["$defs"]["report"]})


def test_gradient_release_is_close_to_the_frechet_mean_and_stays_in_the_ball():
    space = SPD(2)
    X = space.exp(np.eye(2), 0.4 * space.random_unit_tangent(np.eye(2), size=3000, rng=2))
    model = PrivateFrechetMean(
        space, epsilon=2.0, delta=1e-5, center=np.eye(2), radius=1.0, mechanism="gradient", random_state=0
    ).fit(X)
    assert float(space.dist(model.mean_, frechet_mean(space, X))) < 0.05
    assert float(space.dist(model.mean_, np.eye(2))) <= 1.0
