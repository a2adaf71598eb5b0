"""Messages a new user meets: the Poincaré-ball hint of a hyperboloid shape error, the δ_t share
of a refused timing-safe charge, and geodp release's refusal of bad records (one text, the detail
for the curator only)."""

import json

import numpy as np
import pytest

from geodp.accountant import BudgetAccountant
from geodp.cli import main
from geodp.errors import BudgetExceededError, InvalidDataError
from geodp.manifolds import Euclidean, Hyperbolic, Sphere
from geodp.models import PrivateFrechetMean, PrivateMDM, PrivatePrincipalGeodesics

POINCARE = np.random.default_rng(0).uniform(-0.3, 0.3, (10, 2))  # (n, d) points of the Poincaré disc


@pytest.mark.parametrize(
    "call",
    [
        lambda H: H.check_points(POINCARE),
        lambda H: H.invalid_records(POINCARE),
        lambda H: PrivateFrechetMean(H, epsilon=1.0, center=H.origin, radius=1.0).fit(POINCARE),
        lambda H: PrivateFrechetMean(H, epsilon=1.0, center=[0.0, 0.0], radius=1.0).fit(H.from_poincare(POINCARE)),
    ],
    ids=["check_points", "invalid_records", "fit", "center"],
)
def test_poincare_points_for_a_hyperboloid_get_the_converter_hint(call):
    with pytest.raises(InvalidDataError, match=r"Poincaré ball: convert them with Hyperbolic\(2\)\.from_poincare\(P\)"):
        call(Hyperbolic(2))


def test_the_hint_names_a_converter_that_exists_and_fixes_the_input():
    space = Hyperbolic(2)
    X = space.from_poincare(POINCARE)
    assert X.shape == (10, 3) and space.belongs(X).all()


@pytest.mark.parametrize(
    "call",
    [lambda: Hyperbolic(2).check_points(np.zeros((3, 4))), lambda: Sphere(2).check_points(POINCARE)],
    ids=["other-width", "sphere"],
)
def test_no_poincare_hint_where_it_would_mislead(call):
    with pytest.raises(InvalidDataError) as err:
        call()
    assert "from_poincare" not in str(err.value)


def test_the_cli_gives_the_hint_for_a_file_of_poincare_points(tmp_path, capsys):
    np.save(tmp_path / "disc.npy", POINCARE)
    argv = ["release", str(tmp_path / "disc.npy"), "--space", "hyperbolic:2", "--center", "origin"]
    argv += ["--radius", "1", "--epsilon", "1", "--output", str(tmp_path / "m.npy")]
    argv += ["--guarantee", str(tmp_path / "m.json")]
    assert main(argv) == 2
    assert "convert them with Hyperbolic(2).from_poincare(P)" in capsys.readouterr().err


# ------------------------------------------------ a refused timing-safe charge names δ_t
E2, ORIGIN = Euclidean(2), np.zeros(2)
XE = np.random.default_rng(1).uniform(-0.3, 0.3, (20, 2))


def _gaussian_mean(delta, accountant):
    return PrivateFrechetMean(
        E2, epsilon=1.0, delta=delta, center=ORIGIN, radius=0.5, mechanism="tangent-gaussian",
        accountant=accountant, timing_safe=0.01,
    )  # fmt: skip


def test_a_delta_t_collision_says_which_part_of_delta_does_not_fit():
    budget = BudgetAccountant(epsilon=5.0, delta=1e-6)
    with pytest.raises(BudgetExceededError) as err:
        _gaussian_mean(1e-6, budget).fit(XE)
    message = str(err.value)
    assert "the release's own delta = 1e-06 plus the timing-safe mode's delta_t = 1e-10" in message
    assert "own delta fits the delta left, 1e-06, but not with delta_t" in message
    assert "give the release delta <= 9.999e-07" in message and "epsilon left" not in message
    assert budget.charges == []  # refused before anything is charged
    _gaussian_mean(9.999e-07, budget).fit(XE)  # the advice fits exactly
    assert budget.total_spent[1] <= 1e-6


def test_a_refusal_says_when_the_release_delta_alone_or_epsilon_is_too_much():
    with pytest.raises(BudgetExceededError, match=r"own delta already exceeds the delta left, 1e-07\."):
        _gaussian_mean(1e-6, BudgetAccountant(epsilon=5.0, delta=1e-7)).fit(XE)
    with pytest.raises(BudgetExceededError, match=r"the delta fits; its epsilon = 1.0 exceeds the epsilon left, 0.5\."):
        _gaussian_mean(1e-6, BudgetAccountant(epsilon=0.5, delta=1e-5)).fit(XE)


def test_without_the_mode_a_refusal_says_nothing_of_delta_t():
    with pytest.raises(BudgetExceededError) as err:
        _gaussian_mean(1e-6, BudgetAccountant(epsilon=5.0, delta=1e-7)).set_params(timing_safe=False).fit(XE)
    assert "delta_t" not in str(err.value)


@pytest.mark.parametrize(
    "fit",
    [
        lambda budget: PrivateMDM(
            E2, epsilon=1.0, delta=1e-6, center=ORIGIN, radius=0.5, mechanism="tangent-gaussian",
            accountant=budget, timing_safe=0.01,
        ).fit(XE, np.repeat([0, 1], 10)),
        lambda budget: PrivatePrincipalGeodesics(
            E2, 1, epsilon=1.0, delta=1e-6, center=ORIGIN, radius=0.5, accountant=budget, timing_safe=0.01
        ).fit(XE),
    ],
    ids=["mdm", "principal-geodesics"],
)  # fmt: skip
def test_composed_releases_name_delta_t_too(fit):
    budget = BudgetAccountant(epsilon=5.0, delta=1e-6)
    with pytest.raises(BudgetExceededError, match=r"timing-safe mode's delta_t = 1e-10"):
        fit(budget)
    assert budget.charges == []


def test_the_cli_ledger_refusal_names_delta_t(tmp_path, capsys):
    np.save(tmp_path / "points.npy", XE)
    ledger = tmp_path / "budget.json"
    ledger.write_text('{"epsilon": 5.0, "delta": 1e-6}')
    argv = ["release", str(tmp_path / "points.npy"), "--space", "euclidean:2", "--center", "origin"]
    argv += ["--radius", "0.5", "--epsilon", "1", "--delta", "1e-6", "--mechanism", "tangent-gaussian"]
    argv += ["--output", str(tmp_path / "m.npy"), "--guarantee", str(tmp_path / "m.json")]
    argv += ["--budget-file", str(ledger), "--timing-safe", "0.01"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Nothing was released." in err and "delta_t = 1e-10" in err
    assert ledger.read_text() == '{"epsilon": 5.0, "delta": 1e-6}' and not list(tmp_path.glob("*.lock"))


# ------------------------------------------------ the CLI's refusal of records neither locates nor counts
def _bad_files():
    space = Sphere(2)
    north = np.array([0.0, 0.0, 1.0])
    X = space.exp(north, 0.1 * space.random_tangent(north, size=20, rng=3))
    one_nan, two_inf, off = X.copy(), X.copy(), X.copy()
    one_nan[3, 1] = np.nan
    two_inf[[7, 12], 0] = np.inf
    off[0] *= 1.01  # off the sphere
    return [one_nan, two_inf, off]


def test_the_cli_refusal_is_one_text_whichever_records_are_bad_and_however_many(tmp_path, capsys):
    """SECURITY.md counts the command's messages as visible: neighbouring files (another bad
    record, another count, another fault) must be refused with the same message."""
    messages = set()
    for X in _bad_files():
        np.save(tmp_path / "points.npy", X)
        argv = ["release", str(tmp_path / "points.npy"), "--space", "sphere:2", "--center", "north"]
        argv += ["--radius", "0.5", "--epsilon", "1", "--output", str(tmp_path / "m.npy")]
        argv += ["--guarantee", str(tmp_path / "m.json")]
        assert main(argv) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and captured.err.count("\n") == 1
        messages.add(captured.err)
    assert len(messages) == 1, messages
    (message,) = messages
    assert "holds records that are not points of sphere:2" in message
    assert "pass --diagnostics CURATOR.json to have them written there" in message


def test_the_cli_writes_the_refused_records_detail_to_the_curator_file_only(tmp_path, capsys):
    details = []
    for i, X in enumerate(_bad_files()):
        np.save(tmp_path / "points.npy", X)
        curator = tmp_path / f"curator{i}.json"
        argv = ["release", str(tmp_path / "points.npy"), "--space", "sphere:2", "--center", "north"]
        argv += ["--radius", "0.5", "--epsilon", "1", "--output", str(tmp_path / "m.npy")]
        argv += ["--guarantee", str(tmp_path / "m.json"), "--diagnostics", str(curator)]
        assert main(argv) == 2
        assert "written to the --diagnostics file" in capsys.readouterr().err
        details.append(json.loads(curator.read_text())["refused"])
    assert "record 3 holds NaN or inf (1 of the 20 records is not a point of sphere:2)" in details[0]
    assert "record 7 holds NaN or inf (2 of the 20 records are not points of sphere:2)" in details[1]
    assert "record 0 does not have Euclidean norm 1" in details[2]
    assert not (tmp_path / "m.npy").exists() and not (tmp_path / "m.json").exists()


def test_a_budget_without_delta_never_advises_a_negative_delta():
    from geodp.accountant import BudgetAccountant
    from geodp.errors import BudgetExceededError
    from geodp.manifolds import Euclidean
    from geodp.models import PrivateFrechetMean

    X = np.random.default_rng(0).uniform(-0.3, 0.3, (20, 2))
    model = PrivateFrechetMean(
        Euclidean(2), epsilon=1.0, center=np.zeros(2), radius=0.5, timing_safe=2.5, accountant=BudgetAccountant(5.0)
    )
    with pytest.raises(BudgetExceededError) as err:
        model.fit(X)
    assert "<= -" not in str(err.value)
    assert "cannot pay delta_t itself" in str(err.value)
