"""The fast paths of SPD means and fits against the code they stand for.

Log-Euclidean: one ``eigh`` per block decides membership and gives the logs; every record's
result must be what it is when the record is alone in its block (bit for bit), whatever its
neighbours (rounding-level asymmetry, exact symmetry, asymmetry, NaN/inf, entries near the
float64 limits). Affine-invariant fits: membership, canonical form and clipping come from one
``eigvalsh`` and the clipping's pass, and must equal the three generic steps they replace.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

from geodp.manifolds import SPD
from geodp.manifolds import matrix_functions as mf
from geodp.manifolds.spd import AffineInvariantSPD
from geodp.manifolds.spd_numerics import SLICE_VALUES, weighted_eig_sum
from geodp.models import PrivateFrechetMean


def _mixed_block(k, seed=0):
    """One block holding a record of every kind; ``kinds`` names them."""
    rng = np.random.default_rng(seed)
    product = mf.expm(mf.invvecd(0.7 * rng.standard_normal((3, k * (k + 1) // 2)), k))
    q, _ = np.linalg.qr(rng.standard_normal((k, k)))
    one_ulp = mf.sym(product[0])
    one_ulp[0, 1] = np.nextafter(one_ulp[0, 1], np.inf)  # as a product of matrices leaves it
    records = {
        "rounding-level asymmetry": one_ulp,
        "exactly symmetric": mf.sym(product[1]),
        "asymmetry 1e-12 (valid)": product[2] + np.triu(np.full((k, k), 1e-12), 1),
        "asymmetry 1e-6 (invalid)": product[2] + np.triu(np.full((k, k), 1e-6), 1),
        "NaN": np.where(np.eye(k, dtype=bool), np.nan, product[1]),
        "inf": np.full((k, k), np.inf),
        "1e-200": 1e-200 * product[1],
        "1e200": 1e200 * product[1],
        "8e149 I (scaled, valid)": 8e149 * np.eye(k),
        "negative definite": -product[1],
        "eigenvalue 1e-17 (singular up to rounding)": (q * np.r_[1e-17, np.linspace(1.0, 2.0, k - 1)]) @ q.T,
        "singular diagonal": np.diag(np.r_[np.ones(k - 1), 0.0]),
        "eigenvalue 1e-13 (resolved)": (q * np.r_[1e-13, np.linspace(1.0, 2.0, k - 1)]) @ q.T,
    }
    return np.array(list(records.values())), list(records)


@pytest.mark.parametrize("k", [2, 4, 10])
def test_log_euclidean_records_depend_on_themselves_alone(k):
    space = SPD(k, metric="log-euclidean")
    X, kinds = _mixed_block(k)
    together = space._eigen_records(X)
    for i, kind in enumerate(kinds):
        alone = space._eigen_records(X[i : i + 1])
        for name, a, b in zip(("w", "u", "log w", "valid"), alone[:4], together[:4]):
            assert np.array_equal(a[0], b[i], equal_nan=True), (kind, name)
    # Membership as belongs decides it, by its own code path.
    np.testing.assert_array_equal(together[3], space.belongs(X))
    assert together[3].tolist() == [
        True,
        True,
        True,
        False,
        False,
        False,
        False,
        False,
        True,
        False,
        False,
        False,
        True,
    ]
    assert together[4] is False  # not as_is: invalid records and eigenvalues to raise


def test_exactly_symmetric_blocks_take_the_short_path_to_the_same_records():
    space = SPD(5, metric="log-euclidean")
    X, _ = _mixed_block(5)
    exact = X[[1, 8, 11]]  # exactly symmetric records only: no asymmetry pass
    short = space._eigen_records(exact)
    mixed = space._eigen_records(np.concatenate([X[:1], exact]))  # first record asymmetric
    for a, b in zip(short[:4], mixed[:4]):
        assert np.array_equal(a, b[1:])


@pytest.mark.parametrize("k, n", [(3, 3 * (SLICE_VALUES // 9) + 7), (10, 1000), (16, 200)])
def testweighted_eig_sum_over_slices(k, n):
    rng = np.random.default_rng(k)
    u = np.linalg.qr(rng.standard_normal((n, k, k)))[0]
    logw = rng.standard_normal((n, k))
    weights = rng.uniform(size=n)
    expected = np.einsum("nij,nj,nkj->ik", u, weights[:, None] * logw, u)
    np.testing.assert_allclose(
        weighted_eig_sum(weights, logw, u), expected, rtol=0, atol=1e-12 * np.abs(expected).max()
    )


def test_log_euclidean_coordinate_sum_is_the_weighted_sum_of_logs():
    space = SPD(4, metric="log-euclidean")
    X = _mixed_block(4)[0][:-1]  # scipy's logm is not accurate enough for the resolved 1e-13 record
    weights = np.linspace(0.5, 1.5, len(X))
    total, n_invalid = space._coordinate_sum(X, weights)
    valid = space.belongs(X)
    expected = sum(w * scipy.linalg.logm(mf.sym(x)).real for w, x, ok in zip(weights, X, valid) if ok)
    assert n_invalid == int(np.count_nonzero(~valid)) == 8  # singular records are invalid
    np.testing.assert_allclose(total, expected, rtol=1e-11, atol=1e-11)


def _generic_preparation(space, block, center, radius):
    """The three generic steps the affine-invariant fast path folds: validity, canonical form, clipping."""
    invalid = space.invalid_records(block)
    records = np.array(block, dtype=np.float64)
    records[invalid] = center
    clipped, was_clipped = space._clip_to_ball(space._canonical_records(records), center, radius)
    return clipped, invalid, was_clipped


@pytest.mark.filterwarnings("ignore::geodp.errors.NumericalWarning")
@pytest.mark.parametrize("k", [3, 6])
@pytest.mark.parametrize("centre", ["identity", "general"])
def test_affine_preparation_equals_the_generic_steps(k, centre):
    space = SPD(k)
    X, _ = _mixed_block(k, seed=k)
    rng = np.random.default_rng(1)
    inside = space.random_point(8, rng=rng)  # some inside the ball, some clipped
    X = np.concatenate([X, inside, 1e-140 * inside[:1], 1e140 * inside[:1]])
    center = np.eye(k) if centre == "identity" else space.random_point(rng=rng)
    center = space.check_points(center, "center", batch_ndim=0)
    folded = space._prepared_records(X, center, 1.5)
    generic = _generic_preparation(space, X, center, 1.5)
    for a, b in zip(folded, generic):
        assert np.array_equal(a, b)
    assert 0 < np.count_nonzero(generic[2]) < len(X) and np.count_nonzero(generic[1]) == 8
    for i in range(len(X)):  # and each record as it is alone
        alone = space._prepared_records(X[i : i + 1], center, 1.5)
        assert all(np.array_equal(a[0], b[i]) for a, b in zip(alone, folded)), i


@pytest.mark.filterwarnings("ignore::geodp.errors.NumericalWarning")
def test_affine_fit_is_the_fit_through_the_generic_steps(monkeypatch):
    space = SPD(4)
    X, _ = _mixed_block(4)
    X = np.concatenate([X, space.random_point(40, rng=2)])

    def fit():
        model = PrivateFrechetMean(
            space, epsilon=1.0, center=np.eye(4), radius=1.0, on_invalid="center", random_state=3
        ).fit(X)
        return model.mean_, model.curator_diagnostics_

    fast, fast_diagnostics = fit()
    monkeypatch.setattr(AffineInvariantSPD, "_prepared_records", lambda self, *args: None)  # the generic steps
    slow, slow_diagnostics = fit()
    assert np.array_equal(fast, slow)
    assert str(fast_diagnostics) == str(slow_diagnostics)
    assert fast_diagnostics.n_invalid == 8 and fast_diagnostics.n_clipped > 0


@pytest.mark.parametrize("k", [3, 10, 32, 64, 70])
def test_weighted_eig_sum_over_thread_sized_slices(k):
    """The slices (m·k³ ≤ 2^18 multiply-adds, one record per product from k = 64 on) add up to
    the sum computed record by record (n = 37 leaves a partial last slice)."""
    rng = np.random.default_rng(k)
    n = 37
    u = np.linalg.qr(rng.standard_normal((n, k, k)))[0]
    logw, weights = rng.standard_normal((n, k)), rng.uniform(size=n)
    expected = np.einsum("i,iab,ib,icb->ac", weights, u, logw, u)
    np.testing.assert_allclose(weighted_eig_sum(weights, logw, u), expected, rtol=1e-12, atol=1e-12 * k)
