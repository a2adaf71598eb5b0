"""Composition that users can trust (issue 23, item 4): DpEvents of releases, and the sequential,
RDP and PLD rules of BudgetAccountant, checked against dp-accounting's own accountants and against
exact privacy profiles computed here in closed form."""

import copy
import json
import math
import pickle

import dp_accounting
import numpy as np
import pytest
from dp_accounting.pld import pld_privacy_accountant
from scipy.special import expit
from scipy.stats import binom, norm

from geodp.accountant import BudgetAccountant
from geodp.calibration import analytic_gaussian_delta
from geodp.cli import main
from geodp.cli.common import CommandError
from geodp.cli.ledger import open_ledger
from geodp.composition import EpsilonDeltaDpEvent, composed_epsilon, dp_event
from geodp.errors import BudgetExceededError, InvalidParameterError, InvalidTypeError, NotOnManifoldError
from geodp.manifolds import SPD, Euclidean
from geodp.mechanisms import LaplaceMechanism, TangentGaussianMechanism
from geodp.models import PrivateFrechetMean, PrivateMDM
from geodp.release import ReleasePlan, execute

MU = 0.3
TARGET = 1e-5


def _gaussian_guarantee(mu=MU, per_release_delta=TARGET / 100):
    """The guarantee of a real Gaussian release whose μ is ``mu`` (to the calibration's padding):
    calibrated at the ε that the Gaussian of μ has at ``per_release_delta``."""
    epsilon = dp_accounting.gaussian_mechanism.get_epsilon_gaussian(1.0 / mu, per_release_delta)
    return TangentGaussianMechanism(
        epsilon=epsilon, delta=per_release_delta, sensitivity=1.0, space=Euclidean(3)
    ).guarantee


def _gaussian_hockey_stick(mu, log_gamma):
    """∫(p − γq)₊ for p = N(μ, 1), q = N(0, 1), any γ > 0 (the privacy loss is μx − μ²/2)."""
    gamma = np.exp(log_gamma)
    return norm.cdf(-log_gamma / mu + mu / 2) - gamma * norm.cdf(-log_gamma / mu - mu / 2)


def _mixed_delta(epsilon, mu, pure_epsilon, k, approximate=None):
    """Exact δ(ε) of the product of the Gaussian pair of μ, k binary randomised-response pairs of
    ε₀ and optionally one Kairouz–Oh–Viswanath pair of (ε₁, δ₁): the sum over the outcomes of the
    discrete pairs (their privacy loss L under P) of P(o)·H_{e^{ε − L}}(Gaussian)."""
    j = np.arange(k + 1)
    weights = binom.pmf(j, k, expit(pure_epsilon))
    losses = (2 * j - k) * pure_epsilon
    if approximate is not None:
        e1, d1 = approximate
        p_plus = (1 - d1) * expit(e1)
        weights = np.concatenate([weights * p_plus, weights * (1 - d1 - p_plus)])
        losses = np.concatenate([losses + e1, losses - e1])
        return d1 + float(np.sum(weights * _gaussian_hockey_stick(mu, epsilon - losses)))
    return float(np.sum(weights * _gaussian_hockey_stick(mu, epsilon - losses)))


# --- the event of a release --------------------------------------------------------------------


def test_dp_event_of_each_kind_of_guarantee():
    gaussian = TangentGaussianMechanism(epsilon=1.0, delta=1e-6, sensitivity=0.2, space=Euclidean(2))
    assert dp_event(gaussian.guarantee) == dp_accounting.GaussianDpEvent(noise_multiplier=1.0 / (0.2 / gaussian.scale))
    assert dp_event(gaussian.guarantee).noise_multiplier == pytest.approx(gaussian.scale / 0.2, rel=1e-12)
    laplace = LaplaceMechanism(Euclidean(2), epsilon=0.7, sensitivity=0.2)
    assert dp_event(laplace.guarantee) == EpsilonDeltaDpEvent(0.7, 0.0)
    # secure mode's grid noise is the discrete Gaussian: ρ-zCDP with ρ = Δ'²/(2σ_u²), Δ' = Δ/g + √d
    # (CKS20 Thm 14), recomputed here from the public grid and scale; never a GaussianDpEvent
    secure = gaussian.guarantee_for("secure")
    sigma2_units = round((secure.scale / secure.grid) ** 2)
    rho = (0.2 / secure.grid + math.sqrt(2)) ** 2 / (2 * sigma2_units)
    assert secure.gdp_mu is None and secure.zcdp_rho == pytest.approx(rho, rel=1e-9)
    assert dp_event(secure) == dp_accounting.ZCDpEvent(rho=secure.zcdp_rho)
    assert dp_event(secure.to_dict()) == dp_event(secure)
    assert LaplaceMechanism(Euclidean(2), epsilon=0.7, sensitivity=0.2).guarantee_for("secure").zcdp_rho is None
    assert dp_event(gaussian.guarantee.to_dict()) == dp_event(gaussian.guarantee)
    with pytest.raises(InvalidTypeError, match="needs epsilon and delta"):
        dp_event({"delta": 0.1})
    with pytest.raises(InvalidParameterError, match="gdp_mu must be > 0"):
        dp_event({"epsilon": 1.0, "delta": 1e-6, "gdp_mu": -1.0})


def test_fitted_report_plan_and_mechanism_agree_on_the_event():
    space = SPD(2, metric="log-euclidean")
    X = space.random_point(20, rng=np.random.default_rng(0))
    model = PrivateFrechetMean(
        space, epsilon=1.0, delta=1e-6, center=np.eye(2), radius=3.0, mechanism="tangent-gaussian", random_state=0
    )
    plan = model.plan(X)
    model.fit(X)
    event = model.privacy_report_.dp_event()
    assert isinstance(event, dp_accounting.GaussianDpEvent)
    assert event == plan.dp_event() == dp_event(plan.mechanism.guarantee)
    assert event.noise_multiplier == pytest.approx(plan.scale / plan.sensitivity, rel=1e-12)
    laplace = PrivateFrechetMean(space, epsilon=1.0, center=np.eye(2), radius=3.0, random_state=0).fit(X)
    assert laplace.privacy_report_.dp_event() == EpsilonDeltaDpEvent(1.0, 0.0)


def test_every_estimators_plan_and_report_give_the_same_event():
    from geodp.manifolds import Sphere
    from geodp.models import PrivateGeodesicRegression, PrivateLinearRegression

    plans = [
        PrivateLinearRegression(epsilon=0.7, bounds_X=(0, 10), bounds_y=(-4, 8)).plan(np.zeros((50, 2)), np.zeros(50)),
        PrivateGeodesicRegression(
            Sphere(2), epsilon=0.6, center=np.array([0.0, 0.0, 1.0]), radius=0.5, x_bounds=(0, 1)
        ).plan(np.zeros(100), np.zeros((100, 3))),
    ]
    for plan, epsilon in zip(plans, (0.7, 0.6)):
        assert plan.dp_event() == plan.report.dp_event() == EpsilonDeltaDpEvent(epsilon, 0.0)


def test_dp_accountings_own_accountants_refuse_geodps_event_and_read_its_randomized_response():
    event = EpsilonDeltaDpEvent(1.0, 1e-6)
    assert not pld_privacy_accountant.PLDAccountant().supports(event)
    assert not dp_accounting.rdp.RdpAccountant().supports(event)
    with pytest.raises(InvalidParameterError, match="only a pure event"):
        event.randomized_response()
    # binary randomised response of ε: total variation tanh(ε/2), and ε at δ → 0 (its curve)
    relation = dp_accounting.NeighboringRelation.REPLACE_ONE
    accountant = pld_privacy_accountant.PLDAccountant(relation)
    accountant.compose(EpsilonDeltaDpEvent(1.0).randomized_response())
    assert accountant.get_delta(0.0) == pytest.approx(math.tanh(0.5), rel=1e-9)
    assert accountant.get_epsilon(1e-12) == pytest.approx(1.0, abs=2e-3)


# --- the bar: 100 Gaussian releases ------------------------------------------------------------


@pytest.fixture(scope="module")
def hundred_gaussian():
    guarantee = _gaussian_guarantee()
    budgets = {rule: BudgetAccountant(200.0, TARGET, composition=rule) for rule in ("sequential", "rdp", "pld")}
    for budget in budgets.values():
        for _ in range(100):
            budget.spend(guarantee)
    return guarantee, {rule: budget.total_spent for rule, budget in budgets.items()}


def test_pld_of_100_gaussian_releases_matches_dp_accountings_pld_accountant(hundred_gaussian):
    guarantee, spent = hundred_gaussian
    reference = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-3)
    reference.compose(dp_accounting.GaussianDpEvent(1.0 / guarantee.gdp_mu), 100)
    epsilon, delta = spent["pld"]
    assert delta == TARGET
    assert epsilon == pytest.approx(reference.get_epsilon(TARGET), abs=1e-4)
    # and against the exact curve of N(0, 1) vs N(√100·μ, 1) (Balle & Wang; geodp's calibration):
    # sound at the reported ε, and tight (1e-6 less is not)
    sigma = 1.0 / (10.0 * guarantee.gdp_mu)
    assert analytic_gaussian_delta(sigma, epsilon, 1.0) <= TARGET
    assert analytic_gaussian_delta(sigma, epsilon - 1e-6, 1.0) > TARGET


def test_pld_costs_less_than_a_third_of_sequential_and_rdp_lies_between(hundred_gaussian):
    guarantee, spent = hundred_gaussian
    # the honest sequential cost: each release's own (ε, δ) at δ/100, so that the δ's add to δ
    assert spent["sequential"][0] == pytest.approx(100 * guarantee.epsilon, rel=1e-12)
    assert spent["sequential"][1] == pytest.approx(TARGET, rel=1e-9)
    assert spent["pld"][0] < spent["sequential"][0] / 3
    assert spent["pld"][0] <= spent["rdp"][0] <= spent["sequential"][0]
    assert spent["rdp"][0] < spent["sequential"][0] / 3


# --- heterogeneous releases compose soundly ----------------------------------------------------


@pytest.mark.parametrize("rule", ["rdp", "pld"])
def test_pure_and_gaussian_releases_compose_soundly_against_the_exact_profile(rule):
    mu, pure_epsilon, k = 0.8, 0.3, 6
    events = [dp_accounting.GaussianDpEvent(1.0 / mu)] + [EpsilonDeltaDpEvent(pure_epsilon)] * k
    epsilon = composed_epsilon(events, TARGET, rule)
    assert _mixed_delta(epsilon, mu, pure_epsilon, k) <= TARGET  # sound: the worst pair's δ at that ε
    assert _mixed_delta(epsilon * 0.9, mu, pure_epsilon, k) > TARGET  # and not loose by 10%
    # the oracle itself: the pure pairs alone at δ(Σε) = 0, the Gaussian alone matches Balle & Wang
    assert _mixed_delta(50.0, 1e-9, pure_epsilon, k) < 1e-12
    assert _gaussian_hockey_stick(mu, 1.0) == pytest.approx(analytic_gaussian_delta(1.0 / mu, 1.0, 1.0), rel=1e-9)


@pytest.mark.parametrize("rule", ["rdp", "pld"])
def test_a_composed_event_composes_as_its_parts_soundly(rule):
    """A ComposedDpEvent (a release made of several, as PrivatePrincipalGeodesics' footpoint and
    covariance), nested too, is composed part by part: sound against the exact profile, and as
    tight as the parts charged one by one."""
    mu, pure = 0.8, EpsilonDeltaDpEvent(0.3)
    gaussian = dp_accounting.GaussianDpEvent(1.0 / mu)
    nested = dp_accounting.ComposedDpEvent([pure, dp_accounting.ComposedDpEvent([gaussian, pure])])
    budget = BudgetAccountant(10.0, TARGET, composition=rule)
    budget.spend(nested)
    assert budget.charges[0][:2] == (math.inf, 0.0)  # a Gaussian part: a curve, no declared pair
    assert _mixed_delta(budget.total_spent[0], mu, 0.3, 2) <= TARGET
    one_by_one = BudgetAccountant(10.0, TARGET, composition=rule)
    for event in (pure, gaussian, pure):
        one_by_one.spend(event)
    assert budget.total_spent == one_by_one.total_spent
    guarantee = {"epsilon": 0.8, "delta": 1e-6, "composed_of": [{"epsilon": 0.3}, {"epsilon": 0.5, "gdp_mu": mu}]}
    assert dp_event(guarantee) == dp_accounting.ComposedDpEvent([pure, gaussian])


def test_sequential_composition_adds_a_composed_events_declared_pairs_and_refuses_a_curve():
    budget = BudgetAccountant(1.0, TARGET)
    budget.spend(dp_accounting.ComposedDpEvent([EpsilonDeltaDpEvent(0.3), EpsilonDeltaDpEvent(0.2, 1e-7)]))
    assert budget.total_spent == (0.5, 1e-7)
    budget.spend({"epsilon": 0.25, "delta": 1e-6, "composed_of": [{"epsilon": 0.05}, {"epsilon": 0.2, "gdp_mu": 0.5}]})
    assert budget.total_spent == (0.75, 1e-7 + 1e-6)  # a guarantee's declared total
    with pytest.raises(InvalidParameterError, match="sequential"):
        budget.spend(dp_accounting.ComposedDpEvent([dp_accounting.GaussianDpEvent(2.0)]))
    with pytest.raises(InvalidTypeError, match="ComposedDpEvent"):
        budget.spend(dp_accounting.ComposedDpEvent([dp_accounting.LaplaceDpEvent(1.0)]))
    assert len(budget.charges) == 2


@pytest.mark.parametrize("rule", ["sequential", "rdp", "pld"])
def test_an_approximate_release_with_gaussians_composes_soundly(rule):
    mu, approximate = 0.8, (0.5, 2e-6)
    events = [EpsilonDeltaDpEvent(*approximate)]
    budget = BudgetAccountant(100.0, TARGET, composition=rule)
    budget.spend(*approximate)
    if rule != "sequential":
        events.append(dp_accounting.GaussianDpEvent(1.0 / mu))
        budget.spend(events[-1])
        assert budget.total_spent[0] == composed_epsilon(events, TARGET, rule)
        assert _mixed_delta(budget.total_spent[0], mu, 0.3, 0, approximate) <= TARGET
    else:
        assert budget.total_spent == approximate


def test_composed_never_exceeds_sequential_and_pure_budgets_spend_exactly():
    # at δ = 0 a PLD or RDP bound of pure releases is infinite (truncated tails): the sequential
    # sum, also a bound, is used — a pure budget is spent exactly as sequentially
    for rule in ("rdp", "pld"):
        budget = BudgetAccountant(1.0, 0.0, composition=rule)
        budget.spend(0.5)
        budget.spend(0.5)
        assert budget.total_spent == (1.0, 0.0)
        with pytest.raises(BudgetExceededError, match="composition"):
            budget.spend(0.01)
    # a Gaussian release has no bound at δ = 0
    with pytest.raises(BudgetExceededError):
        BudgetAccountant(1e6, 0.0, composition="pld").spend(_gaussian_guarantee())


# --- refusing before anything is released ------------------------------------------------------


@pytest.mark.parametrize("rule", ["rdp", "pld"])
def test_overspending_is_refused_before_the_private_part_runs(rule):
    guarantee = _gaussian_guarantee(per_release_delta=1e-7)
    plan = ReleasePlan(
        "Fake", 10, guarantee.epsilon, guarantee.delta, 1.0, 1.0, True, "exact", report="", gdp_mu=guarantee.gdp_mu
    )
    budget = BudgetAccountant(6.0, TARGET, composition=rule)
    released = 0
    while True:
        charged = list(budget.charges)
        try:
            execute(plan, budget, lambda: "released")
        except BudgetExceededError:
            break
        released += 1
    assert budget.charges == charged  # the refused release charged nothing
    assert released > 6.0 // guarantee.epsilon  # more than adding the releases' ε would allow
    with pytest.raises(BudgetExceededError):
        execute(plan, budget, lambda: pytest.fail("the private part ran on an exhausted budget"))
    assert budget.total_spent[0] <= 6.0


def test_an_estimator_on_an_exhausted_budget_reads_no_record():
    space = SPD(2, metric="log-euclidean")
    budget = BudgetAccountant(3.0, TARGET, composition="pld")
    model = PrivateFrechetMean(
        space,
        epsilon=1.0,
        delta=1e-7,
        center=np.eye(2),
        radius=2.0,
        mechanism="tangent-gaussian",
        accountant=budget,
        random_state=0,  # the continuous Gaussian (μ-GDP); secure mode's grid noise composes as zCDP
    )
    bad = np.full((10, 2, 2), np.nan)  # reading any record raises NotOnManifoldError
    fits = 0
    with pytest.raises(BudgetExceededError):
        while True:
            with pytest.raises(NotOnManifoldError):
                model.fit(bad)  # charged, then the records are read
            fits += 1
    # sequential would stop after 3; PLD of the same releases lets more through at the same δ
    assert fits > 3
    assert len(budget.charges) == fits


# --- secure mode: the discrete Gaussian composes as zCDP ---------------------------------------


def _zcdp_epsilon_cks(rho, delta):
    """ε at δ of ρ-zCDP by Canonne, Kamath & Steinke (2020, Cor. 13), minimised over α on a fine
    grid (written out here, independent of geodp and dp-accounting):
    ε = αρ + (log(1/δ) + (α−1)·log(1−1/α) − log α)/(α−1)."""

    def eps(u):  # α = 1 + e^u
        alpha = 1.0 + np.exp(u)
        return alpha * rho + (np.log(1 / delta) + (alpha - 1) * np.log1p(-1 / alpha) - np.log(alpha)) / (alpha - 1)

    coarse = np.linspace(np.log(1e-4), np.log(1e4), 2001)
    best = coarse[np.argmin(eps(coarse))]
    return float(eps(np.linspace(best - 0.02, best + 0.02, 4001)).min())


@pytest.fixture(scope="module")
def monthly_secure_fits():
    """Fits of 50+ monthly secure (default random_state) tangent-gaussian releases on log-Euclidean
    SPD(8), ε = 1, δ = 1e-8 each, against a budget of (10, 1e-5), per rule: (fits that went
    through, the accountant, the last fit's report)."""
    space = SPD(8, metric="log-euclidean")
    X = space.random_point(30, rng=np.random.default_rng(0))
    out = {}
    for rule in ("sequential", "rdp", "pld"):
        budget = BudgetAccountant(10.0, TARGET, composition=rule)
        model = PrivateFrechetMean(
            space,
            epsilon=1.0,
            delta=1e-8,
            center=np.eye(8),
            radius=3.0,
            mechanism="tangent-gaussian",
            accountant=budget,
        )
        fits = 0
        with pytest.raises(BudgetExceededError):
            while fits < 500:
                model.fit(X)
                fits += 1
        out[rule] = (fits, budget, model.privacy_report_)
    return out


def test_secure_gaussian_releases_keep_their_composition_gain(monthly_secure_fits):
    fits, budget, report = monthly_secure_fits["sequential"]
    assert fits == 10 and budget.total_spent[0] == pytest.approx(10.0)  # sequential: as before
    rho = report.to_dict()["zcdp_rho"]
    assert report.to_dict()["floating_point_safe"] and report.to_dict()["gdp_mu"] is None
    assert report.dp_event() == dp_accounting.ZCDpEvent(rho=rho)
    for rule in ("rdp", "pld"):
        fits, budget, _ = monthly_secure_fits[rule]
        assert fits >= 50  # 103 measured; the (ε, δ) events of before fit 10
        events = [c.event for c in budget.charges]
        epsilon = composed_epsilon(events[:50], TARGET, rule)
        exact = _zcdp_epsilon_cks(50 * rho, TARGET)
        # sound: never below the best zCDP conversion of the total ρ, nor below the ε of the continuous
        # Gaussian of μ² = 2·Σρ (a ρ-zCDP mechanism itself, so any bound from ρ alone must cover it)
        assert epsilon >= exact
        assert epsilon >= dp_accounting.gaussian_mechanism.get_epsilon_gaussian(1.0 / math.sqrt(100 * rho), TARGET)
        assert epsilon <= exact * 1.02  # and tight: within 2% of the conversion
        # as many fits as the conversion allows (never more: that would be unsound), to 2 fits
        allowed = next(k for k in range(1, 500) if _zcdp_epsilon_cks((k + 1) * rho, TARGET) > 10.0)
        assert allowed - 2 <= fits <= allowed


@pytest.mark.parametrize("rule", ["rdp", "pld"])
def test_pure_zcdp_and_gaussian_releases_compose_soundly(rule):
    mu, rho, pure_epsilon, k = 0.6, 0.1, 0.3, 4
    zcdp = [dp_accounting.ZCDpEvent(rho=rho)] * 3
    events = [dp_accounting.GaussianDpEvent(1.0 / mu), *zcdp, *[EpsilonDeltaDpEvent(pure_epsilon)] * k]
    epsilon = composed_epsilon(events, TARGET, rule)
    # the continuous Gaussian of μ² = 2ρ is ρ-zCDP: a sound bound covers the product with it in the
    # zCDP releases' place, whose exact δ(ε) is computed here in closed form
    assert _mixed_delta(epsilon, math.sqrt(mu**2 + 6 * rho), pure_epsilon, k) <= TARGET
    # the zCDP releases cost something: more than the rest alone, less than sequential (ε, δ) pairs
    assert epsilon > composed_epsilon(events[:1] + events[4:], TARGET, rule)
    assert epsilon < composed_epsilon(events[:1] + events[4:], TARGET / 2, rule) + 3 * 4.0
    # order does not matter, and "pld" is never worse than "rdp"
    assert composed_epsilon(events[::-1], TARGET, rule) == epsilon
    assert composed_epsilon(events, TARGET, "pld") <= composed_epsilon(events, TARGET, "rdp")


def test_zcdp_events_refuse_sequential_and_zero_delta():
    event = dp_accounting.ZCDpEvent(rho=0.05)
    with pytest.raises(InvalidParameterError, match="ZCDpEvent has a curve"):
        composed_epsilon([event], TARGET, "sequential")
    with pytest.raises(InvalidParameterError, match="ZCDpEvent has a curve"):
        BudgetAccountant(1.0, TARGET).spend(event)
    assert composed_epsilon([event], 0.0, "pld") == math.inf == composed_epsilon([event], 0.0, "rdp")
    with pytest.raises(InvalidParameterError, match="zcdp_rho must be > 0"):
        dp_event({"epsilon": 1.0, "delta": 1e-6, "zcdp_rho": 0.0})


# --- parallel composition in PrivateMDM ----------------------------------------------------------


@pytest.mark.parametrize(
    ("random_state", "field", "event"),
    [(0, "gdp_mu", lambda mu: dp_accounting.GaussianDpEvent(1.0 / mu)), (None, "zcdp_rho", dp_accounting.ZCDpEvent)],
)
def test_mdm_charges_once_the_event_of_its_least_private_class(random_state, field, event):
    space = SPD(2, metric="log-euclidean")
    rng = np.random.default_rng(1)
    X = space.random_point(30, rng=rng)
    y = np.repeat([0, 1], [10, 20])  # unequal classes: different sensitivities
    budget = BudgetAccountant(10.0, TARGET, composition="pld")
    model = PrivateMDM(
        space,
        epsilon=1.0,
        delta=1e-6,
        center=np.eye(2),
        radius=3.0,
        mechanism="tangent-gaussian",
        accountant=budget,
        random_state=random_state,  # 0: float Gaussian, μ-GDP; None: secure discrete Gaussian, ρ-zCDP
    ).fit(X, y)
    per_class = [entry[field] for entry in model.privacy_report_.to_dict()["per_class"]]
    assert len(budget.charges) == 1 and None not in per_class
    assert budget.charges[0].event == event(max(per_class))
    assert model.privacy_report_.dp_event() == budget.charges[0].event
    assert field.split("_")[0] in model.privacy_report_.to_dict()["composition"].replace("-", "_").lower()
    laplace = PrivateMDM(space, epsilon=1.0, center=np.eye(2), radius=3.0, random_state=0)
    assert laplace.plan(X, y).dp_event() == EpsilonDeltaDpEvent(1.0, 0.0)


# --- copies, inputs ------------------------------------------------------------------------------


def test_deepcopy_shares_and_pickle_snapshots_a_composed_accountant():
    budget = BudgetAccountant(5.0, TARGET, composition="pld")
    budget.spend(_gaussian_guarantee())
    assert copy.deepcopy(budget) is budget and copy.copy(budget) is budget
    snapshot = pickle.loads(pickle.dumps(budget))
    assert (snapshot.composition, snapshot.charges, snapshot.total_spent) == (
        "pld",
        budget.charges,
        budget.total_spent,
    )
    snapshot.spend(0.1)
    assert len(budget.charges) == 1


def test_bad_inputs_are_refused_with_typed_errors():
    with pytest.raises(InvalidParameterError, match="composition must be one of"):
        BudgetAccountant(1.0, composition="advanced")
    with pytest.raises(InvalidParameterError, match="bare GaussianDpEvent"):
        BudgetAccountant(1.0).spend(dp_accounting.GaussianDpEvent(2.0))
    with pytest.raises(InvalidTypeError, match="LaplaceDpEvent"):
        BudgetAccountant(1.0, 1e-6, composition="pld").spend(dp_accounting.LaplaceDpEvent(1.0))
    with pytest.raises(InvalidParameterError, match="with a number epsilon only"):
        BudgetAccountant(1.0).spend({"epsilon": 0.1, "delta": 0.0}, 0.0)
    with pytest.raises(InvalidParameterError, match="epsilon must be > 0"):
        BudgetAccountant(1.0).spend(0.0)


# --- the ledger of geodp release -----------------------------------------------------------------


def test_a_pld_ledger_records_events_and_composes_like_the_accountant(tmp_path):
    path = tmp_path / "budget.json"
    path.write_text(json.dumps({"epsilon": 20.0, "delta": TARGET, "composition": "pld"}))
    guarantee = _gaussian_guarantee()
    for _ in range(2):
        with open_ledger(path, {"output": "x.npy"}) as ledger:
            for _ in range(50):
                ledger.spend(guarantee)
    spends = json.loads(path.read_text())["spends"]
    assert len(spends) == 100 and {s["gdp_mu"] for s in spends} == {guarantee.gdp_mu}
    memory = BudgetAccountant(20.0, TARGET, composition="pld")
    for _ in range(100):
        memory.spend(guarantee)
    with open_ledger(path, {}) as ledger:
        assert ledger.total_spent == memory.total_spent
        assert ledger.charges == memory.charges
        with pytest.raises(BudgetExceededError, match="Nothing was released"):
            ledger.spend(19.0)


def test_an_old_ledger_reads_as_sequential_and_a_bad_composition_is_refused(tmp_path):
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"epsilon": 1.0, "spends": [{"epsilon": 0.25, "delta": 0.0}]}))
    with open_ledger(path, {}) as ledger:
        assert (ledger.composition, ledger.total_spent) == ("sequential", (0.25, 0.0))
    path.write_text(json.dumps({"epsilon": 1.0, "composition": "advanced"}))
    with pytest.raises(CommandError, match='"composition" must be one of'), open_ledger(path, {}):
        pass
    path.write_text(json.dumps({"epsilon": 1.0, "spends": [{"epsilon": 0.25, "delta": 0.0, "gdp_mu": -1}]}))
    with pytest.raises(CommandError, match='"gdp_mu" must be null'), open_ledger(path, {}):
        pass


@pytest.mark.parametrize(("mode", "field"), [(["--seed", "1"], "gdp_mu"), (["--secure"], "zcdp_rho")])
def test_geodp_release_charges_its_gaussian_event_to_a_pld_ledger(tmp_path, capsys, mode, field):
    space = SPD(2, metric="log-euclidean")
    np.save(tmp_path / "covs.npy", space.random_point(20, rng=np.random.default_rng(2)))
    ledger = tmp_path / "budget.json"
    ledger.write_text(json.dumps({"epsilon": 3.0, "delta": TARGET, "composition": "pld"}))
    argv = ["release", str(tmp_path / "covs.npy"), "--space", "spd:2:log-euclidean", "--center", "identity"]
    argv += ["--radius", "2.0", "--epsilon", "1.0", "--delta", "1e-7", "--mechanism", "tangent-gaussian"]
    argv += [*mode, "--budget-file", str(ledger)]
    codes = [
        main([*argv, "--output", str(tmp_path / f"m{i}.npy"), "--guarantee", str(tmp_path / f"m{i}.json")])
        for i in range(4)
    ]
    spends = json.loads(ledger.read_text())["spends"]
    guarantee = json.loads((tmp_path / "m0.json").read_text())["report"]
    assert codes == [0, 0, 0, 0]  # four releases of ε = 1 in a budget of ε = 3: composed, not added
    assert guarantee[field] is not None  # μ-GDP when seeded, ρ-zCDP in secure mode (the other is null)
    assert [s[field] for s in spends] == [guarantee[field]] * 4
    assert "composition 'pld'" in capsys.readouterr().out
    # the ledger, read again, composes the same events as the releases' guarantees
    with open_ledger(ledger, {}) as reread:
        assert reread.total_spent[0] == composed_epsilon([dp_event(guarantee)] * 4, TARGET, "pld") < 3.0
