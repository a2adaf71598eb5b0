"""One record, whatever it holds, never makes the membership test raise (audit: a subnormal matrix
made ``eigvalsh`` fail after the budget was charged, so one record decided whether a release
happened)."""

from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import geodp.errors as geodp_errors
from geodp.accountant import BudgetAccountant
from geodp.manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Sphere
from geodp.models import PrivateFrechetMean, PrivateGeodesicRegression, PrivateLinearRegression, PrivateMDM
from geodp.validation import as_real_array, finite_real_or_nan

SPACES = [SPD(3), SPD(3, metric="log-euclidean"), Sphere(2), Hyperbolic(2), KendallShape(4), Euclidean(3)]
FILLS = [1e-320, -1e-320, 5e-324, 1e-200, 1e200, 1e308, -1e308, 0.0]


@pytest.mark.parametrize("space", SPACES, ids=repr)
@pytest.mark.parametrize("fill", FILLS)
def test_membership_is_total(space, fill):
    X = space.random_point(6, rng=0)
    X[2] = fill * (np.eye(3) if isinstance(space, SPD) else np.ones(space.point_shape))
    X[4] = fill  # every entry
    invalid = space.invalid_records(X)
    assert invalid.dtype == bool and invalid.shape == (6,)
    assert not invalid[[0, 1, 3, 5]].any()


@pytest.mark.parametrize("metric", ["affine", "log-euclidean"])
def test_center_policy_releases_whatever_one_record_holds(metric):
    space = SPD(3, metric=metric)
    X = space.random_point(40, rng=0)
    for fill in FILLS:
        X[7] = fill * np.eye(3)
        budget = BudgetAccountant(epsilon=1.0)
        model = PrivateFrechetMean(
            space, epsilon=1.0, center=np.eye(3), radius=3.0, on_invalid="center", accountant=budget, random_state=0
        ).fit(X)
        assert model.mean_.shape == (3, 3) and budget.total_spent == (1.0, 0.0)


def test_the_callers_floating_point_errors_setting_changes_nothing():
    # under np.seterr(all="raise"), Kendall's invalid_records raised on a subnormal record and
    # every release on Hyperbolic raised while building its mechanism (re-audit)
    shapes = KendallShape(5).random_point(4, rng=0)
    shapes[1] = 5e-324
    with np.errstate(all="raise"):
        assert KendallShape(5).invalid_records(shapes).tolist() == [False, True, False, False]
        space = Hyperbolic(2)
        model = PrivateFrechetMean(
            space, epsilon=1.0, center=np.array([1.0, 0.0, 0.0]), radius=1.0, random_state=0
        ).fit(space.random_point(20, rng=0))
    assert model.mean_.shape == (3,)


# ------------------------------------------------ every entry type goes through one coercion


ODD_ENTRIES = [
    2**1100,
    -(2**1024),
    np.longdouble("1e400"),
    Fraction(10**400, 3),
    Decimal("1e400"),
    Decimal("sNaN"),
    True,
    "0.5",
    None,
    float("nan"),
    object(),
]


def _fit_all(entry):
    """Each estimator with on_invalid="center" on data whose record 3 holds ``entry`` in one
    coordinate (an object array, as a pandas object column gives); returns the reports."""
    space = Euclidean(2)
    X = np.random.default_rng(0).uniform(-0.5, 0.5, (30, 2)).astype(object)
    X[3, 1] = entry
    x = np.linspace(0, 1, 30).astype(object)
    x[5] = entry
    spd = SPD(2).random_point(30, rng=1).astype(object)
    spd[3, 0, 1] = spd[3, 1, 0] = entry
    labels = np.repeat([0, 1], 15)
    mean = PrivateFrechetMean(
        space, epsilon=1.0, center=np.zeros(2), radius=1.0, on_invalid="center", random_state=0
    ).fit(X)
    mdm = PrivateMDM(SPD(2), epsilon=1.0, center=np.eye(2), radius=3.0, on_invalid="center", random_state=0).fit(
        spd, labels
    )
    regression = PrivateGeodesicRegression(
        space, epsilon=50.0, center=np.zeros(2), radius=1.0, x_bounds=(0, 1), on_invalid="center", random_state=0
    ).fit(x, X)
    return str(mean.privacy_report_), str(mdm.privacy_report_), str(regression.privacy_report_)


def test_an_odd_entry_in_one_record_changes_no_report_and_raises_and_warns_nothing():
    """The audit: a Python int >= 2**1024 made fit raise OverflowError in PrivateFrechetMean,
    PrivateMDM and PrivateGeodesicRegression where the neighbour with 0.5 released; a longdouble
    1e400 let numpy's RuntimeWarning reach the caller."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", geodp_errors.ApproximateSamplerWarning)  # public, same on both sides
        reference = _fit_all(0.5)
        for entry in ODD_ENTRIES:
            assert _fit_all(entry) == reference, entry


def test_a_longdouble_array_beyond_float64_warns_nothing():
    import warnings

    X = np.zeros((5, 2), dtype=np.longdouble)
    X[1, 0] = np.longdouble("1e400")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert Euclidean(2).invalid_records(X).tolist() == [False, True, False, False, False]


@pytest.mark.parametrize("entry", ODD_ENTRIES[:6], ids=repr)
def test_one_coercion_maps_every_non_finite_or_overflowing_real_to_nan(entry):
    assert np.isnan(finite_real_or_nan(entry))
    assert finite_real_or_nan(Decimal("0.25")) == 0.25 and finite_real_or_nan(Fraction(1, 8)) == 0.125


def test_linear_regression_refuses_a_bad_entry_with_one_text_whichever_of_x_or_y_holds_it():
    X = np.random.default_rng(0).uniform(0, 1, (50, 2))
    y = X.sum(axis=1)
    messages = set()
    for bad_x in (True, False):
        Xb, yb = X.astype(object), y.astype(object)
        if bad_x:
            Xb[4, 0] = 2**1100
        else:
            yb[4] = None
        with pytest.raises(geodp_errors.InvalidDataError) as info:
            PrivateLinearRegression(epsilon=1.0, bounds_X=(0, 1), bounds_y=(0, 2), random_state=0).fit(Xb, yb)
        messages.add(str(info.value))
    assert len(messages) == 1


def test_kendall_records_near_the_float64_limit_are_shapes_not_silently_clipped():
    """Coordinates of 1e308 overflowed the centring: the record was neither flagged invalid nor a
    shape (NaN preshape), and was silently replaced. It is a valid shape (scale does not matter)."""
    space = KendallShape(3)
    X = np.array([[[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]], [[1e308, 0.0], [-1e308, 0.0], [0.0, 1e308]]])
    assert space.invalid_records(X).tolist() == [False, False]
    preshapes = space.project(X)
    assert np.all(np.isfinite(preshapes))
    np.testing.assert_allclose(preshapes[1], space.project(X[1] / 1e308), atol=1e-15)


_entries = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(2**1100), max_value=2**1100),
    st.fractions(),
    st.decimals(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.text(max_size=3),
    st.none(),
    st.just(np.longdouble("1e400")),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_entries, min_size=4, max_size=4))
def test_property_any_object_entries_release_with_the_same_report_and_no_warning(entries):
    """With on_invalid="center", whatever the object entries of a dataset hold, fit raises nothing,
    warns nothing and publishes the same report as on ordinary data."""
    import warnings

    space = Euclidean(2)
    X = np.random.default_rng(1).uniform(-0.5, 0.5, (12, 2)).astype(object)
    X[[2, 2, 7, 9], [0, 1, 1, 0]] = entries
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = PrivateFrechetMean(
            space, epsilon=1.0, center=np.zeros(2), radius=1.0, on_invalid="center", random_state=0
        ).fit(X)
        assert as_real_array(X, "X").dtype == np.float64
    assert str(model.privacy_report_) == _ORDINARY_REPORT


_ORDINARY_REPORT = str(
    PrivateFrechetMean(Euclidean(2), epsilon=1.0, center=np.zeros(2), radius=1.0, on_invalid="center", random_state=0)
    .fit(np.zeros((12, 2)))
    .privacy_report_
)


@pytest.mark.parametrize("odd", ["x", 1j, [0.5], b"1"], ids=repr)
def test_a_list_with_one_odd_entry_releases_like_its_neighbour(odd):
    """Audit: numpy picks a list's dtype from its entries, so one text, complex or nested entry made
    the whole list text, complex or ragged and fit refused it before the charge (a neighbour with
    a float released). Lists are read entry by entry now: only that record is invalid."""
    import warnings

    rows = [[float(a), float(b)] for a, b in np.random.default_rng(3).uniform(-0.5, 0.5, (20, 2))]
    odd_rows = [list(r) for r in rows]
    odd_rows[4][1] = odd
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reports = [
            str(
                PrivateFrechetMean(
                    Euclidean(2), epsilon=1.0, center=np.zeros(2), radius=1.0, on_invalid="center", random_state=0
                )
                .fit(data)
                .privacy_report_
            )
            for data in (rows, odd_rows)
        ]
    assert reports[0] == reports[1]
    assert np.isnan(as_real_array(odd_rows, "X")[4, 1])


@pytest.mark.parametrize("odd", ["x", "0.5", 1j, [0.5]], ids=repr)
def test_one_odd_covariate_in_a_list_is_one_invalid_record(odd):
    """Audit of the release plan: a list of covariates with one text, complex or nested entry made
    numpy pick the dtype of the whole list, and plan/fit refused it before the charge."""
    import warnings

    x = list(np.linspace(0, 1, 30))
    odd_x = list(x)
    odd_x[4] = odd
    Y = np.random.default_rng(0).uniform(-0.5, 0.5, (30, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", geodp_errors.ApproximateSamplerWarning)
        reports = [
            str(
                PrivateGeodesicRegression(
                    Euclidean(2),
                    epsilon=1.0,
                    center=np.zeros(2),
                    radius=1.0,
                    x_bounds=(0, 1),
                    on_invalid="center",
                    random_state=0,
                )
                .fit(data, Y)
                .privacy_report_
            )
            for data in (x, odd_x)
        ]
    assert reports[0] == reports[1]
