"""geodp.optim: exact tangent noise (KS, ×1.5 mutant), the clipped sum's bound against an optimised
neighbour, and the calibration against dp-accounting's composition of the same Gaussian events."""

import math

import dp_accounting
import numpy as np
import pytest
from scipy import optimize, stats

from geodp.accountant import BudgetAccountant
from geodp.composition import composed_epsilon, dp_event
from geodp.errors import InvalidParameterError, NotOnManifoldError
from geodp.manifolds import SPD, Euclidean, Sphere
from geodp.optim import (
    clipped_gradient_sum,
    descend,
    gd_guarantee,
    gd_noise_multiplier,
    noisy_gradient_sum,
    private_riemannian_gd,
    subsampled_noise_multiplier,
)

DRAWS = 2000


def _orthonormal_basis(space, x, seed=1):
    """An orthonormal basis of T_x M in the metric at x, by Gram–Schmidt with space.inner."""
    candidates = space.random_tangent(x, size=space.dim, rng=seed)
    basis = []
    for v in candidates:
        for e in basis:
            v = v - space.inner(x, v, e) * e
        basis.append(v / space.norm(x, v))
    return basis


def _standardised_coefficients(space, x, noise_multiplier, clip, declared):
    """Coefficients of the injected noise (zero gradients) in an orthonormal basis, over the
    declared std ``declared`` (should be N(0, 1) each)."""
    rng = np.random.default_rng(7)
    zero = np.zeros((3, *space.point_shape))
    draws = np.array([noisy_gradient_sum(space, x, zero, clip, noise_multiplier, rng) for _ in range(DRAWS)])
    basis = _orthonormal_basis(space, x)
    return np.stack([space.unchecked.inner(x, draws, e) for e in basis], axis=1) / declared


CASES = [
    (Sphere(2), np.array([0.6, 0.0, 0.8])),
    (SPD(2), np.array([[2.0, 0.5], [0.5, 1.0]])),
]


@pytest.mark.parametrize(("space", "x"), CASES, ids=["sphere", "spd-affine"])
def test_injected_noise_is_the_calibrated_tangent_gaussian_and_a_1_5_mutant_fails(space, x):
    sigma, clip = 3.0, 0.5
    exact = _standardised_coefficients(space, x, sigma, clip, declared=sigma * clip)
    mutant = _standardised_coefficients(space, x, 1.5 * sigma, clip, declared=sigma * clip)
    exact_p = [stats.kstest(exact[:, k], "norm").pvalue for k in range(space.dim)]
    mutant_p = [stats.kstest(mutant[:, k], "norm").pvalue for k in range(space.dim)]
    assert min(exact_p) > 1e-3
    assert max(mutant_p) < 1e-6
    # Independent coordinates: the sample covariance is the identity.
    assert np.allclose(np.cov(exact.T), np.eye(space.dim), atol=0.1)


def _median_gradients(space, x, X):
    logs = space.log(x, X)
    norms = space.norm(x, logs).reshape((-1,) + (1,) * len(space.point_shape))
    return -logs / norms


def test_clipped_sum_moves_by_at_most_2clip_against_an_optimised_neighbour():
    space, clip = Sphere(2), 0.7
    rng = np.random.default_rng(3)
    x = np.array([0.0, 0.0, 1.0])
    X = space.unchecked.exp(x, 0.8 * space.random_tangent(x, size=30, rng=rng))
    base = clipped_gradient_sum(space, x, 3.0 * _median_gradients(space, x, X), clip)

    def moved(angles):  # replace record 0 by the point at (polar, azimuth) angles
        polar, azimuth = angles
        y = np.array([np.sin(polar) * np.cos(azimuth), np.sin(polar) * np.sin(azimuth), np.cos(polar)])
        other = np.concatenate([y[None], X[1:]])
        return -space.norm(x, clipped_gradient_sum(space, x, 3.0 * _median_gradients(space, x, other), clip) - base)

    best = min(
        (optimize.minimize(moved, start, method="Nelder-Mead") for start in rng.uniform(0.1, 3.0, size=(8, 2))),
        key=lambda r: r.fun,
    )
    assert -best.fun <= 2 * clip * (1 + 1e-9)
    assert -best.fun > 2 * clip * 0.99  # the bound is attained (the replaced record points the other way)


def test_clipped_sum_bound_with_huge_and_non_finite_gradients():
    space, x, clip = Euclidean(3), np.zeros(3), 1.0
    g = np.random.default_rng(0).normal(size=(10, 3)) * 100
    h = g.copy()
    h[4] = -1e300 * g[4]
    assert np.linalg.norm(clipped_gradient_sum(space, x, g, clip) - clipped_gradient_sum(space, x, h, clip)) <= 2.0
    h[4] = np.nan
    diff = clipped_gradient_sum(space, x, g, clip) - clipped_gradient_sum(space, x, h, clip)
    assert np.linalg.norm(diff) == pytest.approx(1.0)  # a NaN gradient counts as zero


def test_the_normal_part_of_a_gradient_is_removed_before_noise_is_added():
    # A loss_grad returning ambient vectors: their normal part would get no noise on the sphere.
    space, x = Sphere(2), np.array([0.0, 0.6, 0.8])
    normal = np.tile(5.0 * x, (4, 1))
    assert np.allclose(clipped_gradient_sum(space, x, normal, 1.0), 0.0)
    mixed = normal + np.array([1.0, 0.0, 0.0])
    assert np.allclose(clipped_gradient_sum(space, x, mixed, 1.0), [4.0, 0.0, 0.0])


@pytest.mark.parametrize(("epsilon", "delta", "iterations"), [(1.0, 1e-5, 50), (0.3, 1e-3, 7)])
def test_composed_epsilon_equals_dp_accountings_for_the_same_gaussian_steps(epsilon, delta, iterations):
    sigma = gd_noise_multiplier(epsilon, delta, iterations)
    # Each step: sensitivity 2·clip, std σ·clip, i.e. dp-accounting's noise multiplier σ/2.
    step = dp_accounting.GaussianDpEvent(noise_multiplier=sigma / 2.0)
    reference = dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-4)
    reference.compose(dp_accounting.SelfComposedDpEvent(step, iterations))
    assert reference.get_epsilon(delta) == pytest.approx(epsilon, rel=2e-3)
    ours = BudgetAccountant(epsilon=10.0, delta=delta, composition="pld")
    ours.spend(
        gd_guarantee(
            Sphere(2),
            epsilon=epsilon,
            delta=delta,
            iterations=iterations,
            step=0.1,
            clip=1.0,
            center=np.array([0.0, 0.0, 1.0]),
            radius=1.0,
        )
    )
    assert ours.total_spent[0] == pytest.approx(reference.get_epsilon(delta), rel=2e-3)
    assert ours.total_spent[0] <= epsilon * (1 + 1e-6)
    # A noise multiplier 1.5× too small overspends by dp-accounting's own count.
    mutant = dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-4)
    mutant.compose(dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(sigma / 3.0), iterations))
    assert mutant.get_epsilon(delta) > 1.3 * epsilon


def test_private_gd_converges_to_the_mean_on_euclidean_data():
    X = np.random.default_rng(0).normal(loc=0.5, size=(2000, 2))
    result = private_riemannian_gd(
        Euclidean(2),
        lambda x, X: x - X,
        X,
        epsilon=1.0,
        delta=1e-5,
        iterations=30,
        step=0.5,
        clip=4.0,
        center=np.zeros(2),
        radius=3.0,
        random_state=0,
    )
    assert np.linalg.norm(result.point - X.mean(axis=0)) < 0.1
    assert result.guarantee.gdp_mu == pytest.approx(2 * math.sqrt(30) / (result.guarantee.scale / 4.0))


def test_refusals_before_and_after_the_charge():
    space, x = Sphere(2), np.array([0.0, 0.0, 1.0])
    settings = dict(epsilon=1.0, delta=1e-5, iterations=5, step=0.1, clip=1.0, center=x, radius=1.0)
    acc = BudgetAccountant(epsilon=5.0, delta=1e-5, composition="pld")
    with pytest.raises(InvalidParameterError, match="batch"):
        private_riemannian_gd(space, _median_gradients, np.tile(x, (4, 1)), batch=5, accountant=acc, **settings)
    with pytest.raises(InvalidParameterError, match="needs n"):
        gd_guarantee(space, batch=2, **settings)
    assert acc.charges == []
    with pytest.raises(NotOnManifoldError):
        private_riemannian_gd(
            space, lambda y, X: _median_gradients(space, y, X), np.ones((4, 3)), accountant=acc, **settings
        )
    assert len(acc.charges) == 1  # whether it raises depends on the data: charged first


# --- Poisson subsampling -------------------------------------------------------------------------------------------


def _subsampled_guarantee(epsilon, delta, iterations, batch, n):
    return gd_guarantee(
        Sphere(2),
        epsilon=epsilon,
        delta=delta,
        iterations=iterations,
        step=0.1,
        clip=1.0,
        center=np.array([0.0, 0.0, 1.0]),
        radius=1.0,
        batch=batch,
        n=n,
    )


@pytest.mark.parametrize(
    ("epsilon", "delta", "iterations", "batch", "n"), [(1.0, 1e-5, 100, 50, 1000), (0.5, 1e-3, 20, 3, 300)]
)
def test_subsampled_total_equals_dp_accountings_pld_and_rdp_for_the_same_events(epsilon, delta, iterations, batch, n):
    guarantee = _subsampled_guarantee(epsilon, delta, iterations, batch, n)
    q, sigma, count = guarantee.subsampled_gaussian
    assert (q, count, guarantee.scale) == (batch / n, iterations, sigma)
    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(batch / n, dp_accounting.GaussianDpEvent(sigma)), iterations
    )
    # PLD: dp-accounting's own accountant under REPLACE_ONE on the same event, at the same discretisation.
    reference = dp_accounting.pld.PLDAccountant(dp_accounting.NeighboringRelation.REPLACE_ONE, 1e-3)
    reference.compose(event)
    ours = BudgetAccountant(epsilon=10.0, delta=delta, composition="pld")
    ours.spend(guarantee)
    assert ours.total_spent[0] == pytest.approx(reference.get_epsilon(delta), rel=1e-9)
    assert ours.total_spent[0] <= epsilon
    # A finer discretisation agrees: σ is calibrated to ε, not to the grid.
    fine = dp_accounting.pld.PLDAccountant(dp_accounting.NeighboringRelation.REPLACE_ONE, 1e-4)
    fine.compose(event)
    assert fine.get_epsilon(delta) == pytest.approx(epsilon, rel=5e-3)
    # RDP: 2T add-or-remove steps of the same sampling with noise multiplier σ/2, in dp-accounting's accountant.
    rdp_reference = dp_accounting.rdp.RdpAccountant(
        neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE
    )
    rdp_reference.compose(
        dp_accounting.PoissonSampledDpEvent(batch / n, dp_accounting.GaussianDpEvent(sigma / 2.0)), 2 * iterations
    )
    # an accountant's total is min(this, Σε)
    by_rdp = composed_epsilon([dp_event(guarantee, neighboring="replace-one")], delta, "rdp")
    assert by_rdp == pytest.approx(rdp_reference.get_epsilon(delta), rel=1e-9)
    assert by_rdp >= ours.total_spent[0]  # the RDP route is a looser bound
    # A noise multiplier 1.5× too small overspends by dp-accounting's own count.
    mutant = dp_accounting.pld.PLDAccountant(dp_accounting.NeighboringRelation.REPLACE_ONE, 1e-3)
    mutant.compose(
        dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(batch / n, dp_accounting.GaussianDpEvent(sigma / 1.5)), iterations
        )
    )
    assert mutant.get_epsilon(delta) > 1.3 * epsilon


def test_subsampled_sigma_is_the_smallest_and_meets_full_batch_at_rate_one():
    sigma = subsampled_noise_multiplier(1.0, 1e-5, 40, 0.1)
    event = dp_accounting.PoissonSampledDpEvent(0.1, dp_accounting.GaussianDpEvent(sigma / (1 + 2e-3)))
    below = dp_accounting.pld.PLDAccountant(dp_accounting.NeighboringRelation.REPLACE_ONE, 1e-3)
    below.compose(event, 40)
    assert below.get_epsilon(1e-5) > 1.0  # 0.2 % less noise already overspends
    # q = 1: the replace-one pair is the Gaussian of sensitivity 2, the full-batch calibration.
    assert subsampled_noise_multiplier(1.0, 1e-5, 40, 1.0) == pytest.approx(
        gd_noise_multiplier(1.0, 1e-5, 40), rel=3e-3
    )


def _hockey_stick_2d(a, b, q, gamma, step=0.04, half_width=8.0):
    """H_γ(P_a ‖ P_b) of the Poisson-sampled pair P_c = (1−q)N(0, I₂) + qN(c, I₂), by a Riemann sum."""
    t = np.arange(-half_width, half_width, step) + step / 2
    z1, z2 = np.meshgrid(t, t, indexing="ij")

    def density(c):
        return ((1 - q) * np.exp(-(z1**2 + z2**2) / 2) + q * np.exp(-((z1 - c[0]) ** 2 + (z2 - c[1]) ** 2) / 2)) / (
            2 * np.pi
        )

    return float(np.sum(np.maximum(density(a) - gamma * density(b), 0.0)) * step**2)


def _antipodal_hockey_stick(q, gamma):
    """The same for dp-accounting's REPLACE_ONE pair (a = −b, |a| = 1), by 1-D quadrature."""
    from scipy import integrate

    def integrand(z):
        up = (1 - q) * stats.norm.pdf(z) + q * stats.norm.pdf(z + 1.0)
        low = (1 - q) * stats.norm.pdf(z) + q * stats.norm.pdf(z - 1.0)
        return max(up - gamma * low, 0.0)

    return integrate.quad(integrand, -12, 12, points=[0.0], limit=200, epsabs=1e-13)[0]


@pytest.mark.parametrize(("q", "gamma"), [(0.3, math.exp(0.3)), (0.05, math.exp(0.02)), (0.8, 1.0)])
def test_replace_one_pair_in_the_tangent_plane_is_dominated_by_the_antipodal_pair_against_optimised_records(q, gamma):
    """docs/math.md §13: any two records' clipped gradients a, b (|a|, |b| <= C) give a pair no more
    distinguishable than a = −b on a line; the neighbour (angle and both norms) is optimised."""
    bound = _antipodal_hockey_stick(q, gamma)

    def loss(p):
        r1, r2, angle = p
        return -_hockey_stick_2d([r1, 0.0], [r2 * math.cos(angle), r2 * math.sin(angle)], q, gamma)

    best = min(
        (
            optimize.minimize(loss, start, method="L-BFGS-B", bounds=[(0, 1), (0, 1), (0, math.pi)])
            for start in ([0.5, 0.5, 1.0], [1.0, 0.2, 2.5])
        ),
        key=lambda r: r.fun,
    )
    antipodal = _hockey_stick_2d([1.0, 0.0], [-1.0, 0.0], q, gamma)  # the same quadrature, at a = −b, |a| = C
    # The grid is not rotation invariant: rotated copies of one configuration differ by ~2e-5.
    assert -best.fun <= antipodal * (1 + 1e-4)
    assert -best.fun >= antipodal * (1 - 1e-3)  # attained there: the bound is tight
    assert antipodal == pytest.approx(bound, rel=1e-3)
    # The check has power: the add-or-remove pair (b = 0) would be a wrong bound, the optimum exceeds it.
    assert -best.fun > 1.05 * _hockey_stick_2d([1.0, 0.0], [0.0, 0.0], q, gamma)
    # The antipodal pair by quadrature agrees with dp-accounting's REPLACE_ONE PLD of one step.
    pld = dp_accounting.pld.privacy_loss_distribution.from_gaussian_mechanism(
        1.0,
        sampling_prob=q,
        neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE,
        value_discretization_interval=1e-4,
    )
    assert pld.get_delta_for_epsilon(math.log(gamma)) == pytest.approx(bound, rel=2e-3, abs=1e-7)


def test_subsampled_step_injects_the_calibrated_tangent_gaussian_and_a_1_5_mutant_fails():
    space, x = Sphere(2), np.array([0.6, 0.0, 0.8])
    n, batch, clip, step = 40, 4, 0.5, 1e-3
    guarantee = gd_guarantee(
        space, epsilon=1.0, delta=1e-5, iterations=1, step=step, clip=clip, center=x, radius=1.0, batch=batch, n=n
    )
    sigma = guarantee.scale / clip
    rng = np.random.default_rng(3)
    data = np.tile(x, (n, 1))
    zero = lambda x, X: np.zeros_like(X)  # noqa: E731
    ends = np.array(
        [
            descend(
                space,
                zero,
                data,
                x,
                iterations=1,
                step=step,
                clip=clip,
                noise_multiplier=sigma,
                center=x,
                radius=1.0,
                rng=rng,
                sampling_rate=batch / n,
            )
            for _ in range(DRAWS)
        ]
    )
    released = space.log(x, ends) / (-step / batch)  # G = Σ clip(g) + σ·C·Z with every g = 0
    basis = _orthonormal_basis(space, x)
    coefficients = np.stack([space.inner(x, released, e) for e in basis], axis=1)
    exact_p = [stats.kstest(coefficients[:, k] / guarantee.scale, "norm").pvalue for k in range(2)]
    mutant_p = [stats.kstest(coefficients[:, k] / (1.5 * guarantee.scale), "norm").pvalue for k in range(2)]
    assert min(exact_p) > 1e-3
    assert max(mutant_p) < 1e-6


def test_poisson_sample_includes_each_record_with_probability_batch_over_n():
    n, batch, iterations = 200, 10, 400
    seen = []

    def grad(x, X):
        seen.append(X[:, 0].copy())
        return np.zeros_like(X)

    data = np.column_stack([np.arange(n, dtype=float), np.zeros(n)])
    descend(
        Euclidean(2),
        grad,
        data,
        np.zeros(2),
        iterations=iterations,
        step=0.1,
        clip=1.0,
        noise_multiplier=0.0,
        center=np.zeros(2),
        radius=1.0,
        rng=np.random.default_rng(5),
        sampling_rate=batch / n,
    )
    counts = np.bincount(np.concatenate(seen).astype(int), minlength=n)
    total, expected = counts.sum(), n * iterations * batch / n
    sd = math.sqrt(n * iterations * (batch / n) * (1 - batch / n))
    assert abs(total - expected) < 4 * sd
    assert abs(total - 1.5 * expected) > 4 * sd  # a 1.5× rate would be caught
    # Each record separately Binomial(T, q): a chi-square test of the per-record counts.
    assert stats.chisquare(counts).pvalue > 1e-3


def test_subsampled_gd_converges_to_the_mean_on_euclidean_data():
    X = np.random.default_rng(0).normal(loc=0.5, size=(5000, 2))
    result = private_riemannian_gd(
        Euclidean(2),
        lambda x, X: x - X,
        X,
        epsilon=1.0,
        delta=1e-5,
        iterations=60,
        step=0.5,
        clip=4.0,
        center=np.zeros(2),
        radius=3.0,
        batch=500,
        random_state=0,
    )
    assert np.linalg.norm(result.point - X.mean(axis=0)) < 0.1
    assert result.guarantee.subsampled_gaussian[:2] == (0.1, result.guarantee.scale / 4.0)
    assert "q = 0.1" in result.guarantee.mechanism and "T = 60" in result.guarantee.mechanism


def test_a_plan_carrying_the_subsampled_guarantee_composes_as_its_poisson_sampled_event():
    from geodp.release import ReleasePlan

    guarantee = _subsampled_guarantee(1.0, 1e-5, 30, 20, 400)
    plan = ReleasePlan("Demo", 400, 1.0, 1e-5, 2.0, guarantee.scale, True, "exact", report="",
                       subsampled_gaussian=guarantee.subsampled_gaussian)  # fmt: skip
    assert plan.dp_event(neighboring="replace-one") == dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(0.05, dp_accounting.GaussianDpEvent(guarantee.scale)), 30
    )
    assert plan.dp_event() == dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(0.05, dp_accounting.GaussianDpEvent(guarantee.scale / 2.0)), 60
    )
    assert dp_event(guarantee) == plan.dp_event()


def test_a_setting_needing_less_noise_than_the_floor_gets_the_floor_and_spends_at_most_epsilon():
    from geodp.composition import subsampled_gaussian_event

    # q = 1e-6 < δ: a record is almost never sampled, so even σ = 0.1 meets ε = 1.
    sigma = subsampled_noise_multiplier(1.0, 1e-5, 1, 1e-6)
    assert sigma == 0.1
    assert composed_epsilon([subsampled_gaussian_event(1e-6, sigma, 1)], 1e-5, "pld") <= 1.0


def test_exported_subsampled_event_is_sound_under_dp_accountings_default_relation():
    """The auditor's case: a subsampled descent calibrated to ε = 1 under replace-one; its exported
    event, composed in dp-accounting's default (add-or-remove) PLD accountant, must not report
    less than the claim (the tight replace-one event read there gave 0.83)."""
    from geodp.composition import subsampled_gaussian_event

    rate, steps, delta = 0.01, 100, 1e-5
    sigma = subsampled_noise_multiplier(1.0, delta, steps, rate)
    guarantee = {"epsilon": 1.0, "delta": delta, "subsampled_gaussian": (rate, sigma, steps)}
    default = dp_accounting.pld.PLDAccountant()
    default.compose(dp_event(guarantee))
    assert default.get_epsilon(delta) >= 1.0
    tight = dp_accounting.pld.PLDAccountant(dp_accounting.NeighboringRelation.REPLACE_ONE)
    tight.compose(dp_event(guarantee, neighboring="replace-one"))
    assert tight.get_epsilon(delta) == pytest.approx(1.0, abs=0.01)
    assert dp_event(guarantee, neighboring="replace-one") == subsampled_gaussian_event(rate, sigma, steps)
    with pytest.raises(InvalidParameterError, match="neighboring"):
        dp_event(guarantee, neighboring="replace")


def test_a_loss_grad_returning_one_averaged_gradient_is_refused_before_the_charge():
    """The cold user's case: ``lambda x, X: (x - X).mean(axis=0)`` broadcast to every record let
    one record move the clipped sum n times further than the noise is calibrated for."""
    X = np.random.default_rng(0).normal(size=(100, 2))
    accountant = BudgetAccountant(epsilon=10.0, delta=1e-3)
    kwargs = dict(epsilon=1.0, delta=1e-5, iterations=5, step=0.5, clip=3.0, center=np.zeros(2), radius=3.0)
    with pytest.raises(InvalidParameterError, match="one Riemannian gradient per record"):
        private_riemannian_gd(
            Euclidean(2), lambda x, R: (x - R).mean(axis=0), X, accountant=accountant, random_state=0, **kwargs
        )
    assert accountant.total_spent == (0.0, 0.0)
    # a loss_grad whose shape changes with the batch is refused too (inside the descent)
    with pytest.raises(InvalidParameterError, match="one Riemannian gradient per record"):
        private_riemannian_gd(Euclidean(2), lambda x, R: (x - R)[:2], X, random_state=0, **kwargs)


def test_an_invalid_record_gets_one_fixed_message_whatever_its_fault():
    """The cold user's case: after the charge, a NaN record and an off-sphere record must be refused
    alike (the message is observable)."""
    space, north = Sphere(2), np.array([0.0, 0.0, 1.0])
    settings = dict(epsilon=1.0, delta=1e-5, iterations=2, step=0.1, clip=1.0, center=north, radius=0.5)
    X = np.tile(north, (5, 1))
    messages = []
    for bad in (np.array([np.nan, 0.0, 1.0]), np.array([0.0, 0.0, 2.0])):
        data = X.copy()
        data[2] = bad
        with pytest.raises(NotOnManifoldError) as info:
            private_riemannian_gd(space, lambda x, R: -space.log(x, R), data, random_state=0, **settings)
        messages.append((type(info.value), str(info.value)))
    assert messages[0] == messages[1]
