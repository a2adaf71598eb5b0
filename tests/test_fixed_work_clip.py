"""Clipping into the public ball under fixed work (timing-safe releases): every record goes through
the clip's computation whether or not it is outside (counted, not timed), and the clipped records
are those of the default path (to rounding)."""

import numpy as np
import pytest

from geodp.manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Sphere
from geodp.work import counting, fixed_work_section

SPACES = [
    (Sphere(2), np.array([0.0, 0.0, 1.0]), 0.5),
    (Hyperbolic(3), Hyperbolic(3).reference_point(), 1.0),
    (SPD(2), np.eye(2), 0.5),
    (KendallShape(5), KendallShape(5).reference_point(), 0.2),
    (Euclidean(3), np.zeros(3), 1.0),
]


def _records(space, center, radius, n_outside, seed):
    """20 records: n_outside beyond the ball (some far), one at the centre, the rest inside."""
    directions = space.random_unit_tangent(center, size=20, rng=seed)
    lengths = np.full(20, 0.5 * radius)
    lengths[:n_outside] = np.linspace(1.01, 3.0, n_outside) * radius
    lengths[-1] = 0.0
    return space.exp(center, lengths.reshape((20,) + (1,) * (directions.ndim - 1)) * directions)


@pytest.mark.parametrize(("space", "center", "radius"), SPACES, ids=lambda c: repr(c))
@pytest.mark.parametrize("last_resort", ["center", "keep"])
def test_the_fixed_clip_computes_every_record_and_clips_as_the_default(space, center, radius, last_resort):
    works = []
    for n_outside in (0, 1, 7):
        X = _records(space, center, radius, n_outside, seed=n_outside)
        with counting() as default_work:
            default, default_mask = space.unchecked.clip_to_ball(X, center, radius, last_resort=last_resort)
        with fixed_work_section(1e-10), counting() as fixed_work:
            fixed, fixed_mask = space.unchecked.clip_to_ball(X, center, radius, last_resort=last_resort)
        np.testing.assert_array_equal(fixed_mask, default_mask)
        # equal up to rounding: a batch of one SPD(2) matrix takes a closed form, a batch of 20 LAPACK
        np.testing.assert_allclose(fixed, default, rtol=1e-12, atol=1e-14)
        assert int(default_mask.sum()) == n_outside and default_work["clip"] == n_outside  # the default: data
        works.append(dict(fixed_work))
    assert works[0] == works[1] == works[2] == {"clip": 20}
