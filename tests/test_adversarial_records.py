"""One record, whatever it holds, never makes the membership test raise (audit: a subnormal matrix
made ``eigvalsh`` fail after the budget was charged, so one record decided whether a release
happened)."""

import numpy as np
import pytest

from geodp.accountant import BudgetAccountant
from geodp.manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Sphere
from geodp.models import PrivateFrechetMean

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
        model = PrivateFrechetMean(space, epsilon=1.0, center=np.eye(3), radius=3.0, on_invalid="center",
                                   accountant=budget, random_state=0).fit(X)
        assert model.mean_.shape == (3, 3) and budget.total_spent == (1.0, 0.0)


def test_the_callers_floating_point_errors_setting_changes_nothing():
    # under np.seterr(all="raise"), Kendall's invalid_records raised on a subnormal record and
    # every release on Hyperbolic raised while building its mechanism (re-audit)
    shapes = KendallShape(5).random_point(4, rng=0)
    shapes[1] = 5e-324
    with np.errstate(all="raise"):
        assert KendallShape(5).invalid_records(shapes).tolist() == [False, True, False, False]
        space = Hyperbolic(2)
        model = PrivateFrechetMean(space, epsilon=1.0, center=np.array([1.0, 0.0, 0.0]), radius=1.0,
                                   random_state=0).fit(space.random_point(20, rng=0))
    assert model.mean_.shape == (3,)
