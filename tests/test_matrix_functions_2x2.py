"""The closed-form 2 × 2 paths of ``matrix_functions`` against independent references.

Batches of at least ``CLOSED_FORM_BATCH`` 2 × 2 matrices take ``logm``, ``expm`` and
``sqrtm_and_invsqrtm`` from :func:`eig_2x2` and ``congruence`` elementwise. References: LAPACK's
``eigh`` (eigenvalues), ``scipy.linalg`` (``logm``, ``expm``, ``sqrtm``, one matrix at a time:
an algorithm of its own) and numpy's ``matmul``. Both decompositions are backward stable, so an
eigenvalue may differ by a few ``eps·max|λ|``; the matrix functions agree to 1e-12 relative
wherever the condition number leaves them determined to that precision.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

from geodp.manifolds import SPD
from geodp.manifolds import matrix_functions as mf

EPS = np.finfo(float).eps


def _spd_2x2(n, spread, rng):
    """n SPD(2) matrices with log-eigenvalues N(0, spread²) in uniformly random frames."""
    theta = rng.uniform(0.0, 2.0 * np.pi, n)
    c, s = np.cos(theta), np.sin(theta)
    u = np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)
    return mf.sym(mf.from_eig(np.exp(spread * rng.standard_normal((n, 2))), u))


def _edge_cases():
    """Multiples of I (r = 0), diagonal with either order, b ≠ 0 with p = q, negative and
    indefinite matrices, the zero matrix, entries near 1e±150, an eigenvalue at 1e-13."""
    return np.array(
        [
            np.eye(2),
            3.0 * np.eye(2),
            np.diag([1.0, 4.0]),
            np.diag([4.0, 1.0]),
            [[2.0, 1.0], [1.0, 2.0]],
            [[2.0, -1.0], [-1.0, 2.0]],
            -np.diag([1.0, 4.0]),
            [[1.0, 3.0], [3.0, -2.0]],
            np.zeros((2, 2)),
            1e-150 * np.array([[2.0, 1.0], [1.0, 3.0]]),
            1e150 * np.array([[2.0, 1.0], [1.0, 3.0]]),
            [[1.0, 1.0 - 5e-14], [1.0 - 5e-14, 1.0]],  # eigenvalues 5e-14 and 2
        ]
    )


def test_eig_2x2_eigenvalues_match_lapack():
    rng = np.random.default_rng(0)
    X = np.concatenate([_edge_cases()] + [_spd_2x2(2000, spread, rng) for spread in (0.01, 1.0, 5.0, 15.0)])
    w, cos2, sin2 = mf.eig_2x2(X)
    expected = np.linalg.eigh(X)[0]
    scale = np.max(np.abs(expected), axis=-1, keepdims=True)
    assert np.all(np.abs(w - expected) <= 4 * EPS * scale)
    np.testing.assert_allclose(cos2**2 + sin2**2, 1.0, rtol=4 * EPS)
    # the frame rebuilds the matrix: X = Σ λ P
    assert np.all(np.abs(mf.from_eig_2x2(w, cos2, sin2) - X) <= 8 * EPS * scale[:, :, None])
    for i in range(0, len(X), 7):  # one matrix at a time: the same formulas on Python floats
        one = mf.eig_2x2(X[i])
        assert np.all(np.abs(one[0] - expected[i]) <= 4 * EPS * scale[i])
        assert np.all(np.abs(mf.from_eig_2x2(*one) - X[i]) <= 8 * EPS * scale[i])


def test_one_matrix_edge_cases_do_not_raise():
    """Python floats raise on a division by zero: the zero matrix and multiples of I (r = 0),
    NaN and inf must come out as numpy's elementwise path has them."""
    cases = [
        np.zeros((2, 2)),
        2.0 * np.eye(2),
        np.full((2, 2), np.nan),
        np.full((2, 2), np.inf),
        np.diag([np.inf, 1.0]),
    ]
    with np.errstate(all="ignore"):
        batch = mf.eig_2x2(np.array(cases))
        for i, a in enumerate(cases):
            one = mf.eig_2x2(a)
            for x, y in zip(one, batch):
                np.testing.assert_array_equal(np.sort(x) if x.ndim else x, np.sort(y[i]) if y[i].ndim else y[i])
    assert mf.eig_2x2(np.zeros((2, 2)))[0].tolist() == [0.0, 0.0]


def _close(actual, expected, tol):
    """Every matrix within ``tol`` (relative to its Frobenius norm, at least 1) of ``expected``."""
    scale = np.maximum(1.0, np.linalg.norm(expected, axis=(-2, -1)))
    assert np.all(np.linalg.norm(actual - expected, axis=(-2, -1)) <= tol * scale)


def _via_lapack(f, X):
    """``f`` of each matrix through LAPACK's ``eigh`` (the path the closed form replaces)."""
    w, u = np.linalg.eigh(X)
    return (u * f(w)[..., None, :]) @ np.swapaxes(u, -1, -2)


@pytest.mark.parametrize("spread", [1e-3, 0.3, 1.0, 3.0])
def test_batched_functions_match_lapack_and_scipy(spread):
    rng = np.random.default_rng(1)
    X = _spd_2x2(mf.CLOSED_FORM_BATCH + 40, spread, rng)
    S = mf.sym(rng.standard_normal((len(X), 2, 2)) * 3.0 * spread)  # symmetric, either sign
    logs, exps = mf.logm(X), mf.expm(S)
    roots, inverse_roots = mf.sqrtm_and_invsqrtm(X)
    # a small eigenvalue carries a relative error of ~eps·κ (κ the condition number) either way
    w = np.linalg.eigvalsh(X)
    tol = 1e-13 + 8.0 * EPS * w[:, 1] / w[:, 0]
    _close(logs, _via_lapack(np.log, X), tol)
    _close(exps, _via_lapack(np.exp, S), 1e-13)
    _close(roots, _via_lapack(np.sqrt, X), 1e-13)
    _close(inverse_roots, _via_lapack(lambda w: 1.0 / np.sqrt(w), X), tol)
    for i in range(len(X)):  # and an algorithm of its own (scaling and squaring / Schur)
        _close(logs[i], scipy.linalg.logm(X[i]).real, tol[i])
        _close(exps[i], scipy.linalg.expm(S[i]), 1e-13 * (1.0 + np.linalg.norm(S[i])) ** 2)  # Padé
        _close(roots[i], scipy.linalg.sqrtm(X[i]).real, 1e-13)


def test_batch_and_one_matrix_paths_agree():
    """A batch (numpy, elementwise) and one matrix at a time (Python floats) agree to 1e-14
    relative (moderate condition)."""
    rng = np.random.default_rng(2)
    X = _spd_2x2(200, 1.0, rng)
    S = mf.sym(rng.standard_normal((200, 2, 2)))
    batched = (mf.logm(X), mf.expm(S), *mf.sqrtm_and_invsqrtm(X))
    for i in range(len(X)):
        alone = (mf.logm(X[i]), mf.expm(S[i]), *mf.sqrtm_and_invsqrtm(X[i]))
        for a, b in zip(alone, batched):
            np.testing.assert_allclose(b[i], a, rtol=0, atol=1e-14 * max(1.0, np.linalg.norm(a)))


def test_each_record_depends_on_itself_alone():
    """Elementwise closed forms: a record's result is the same bit for bit in any batch."""
    rng = np.random.default_rng(3)
    X = _spd_2x2(64, 2.0, rng)
    a = rng.standard_normal((2, 2))
    order = rng.permutation(64)
    for f in (mf.logm, mf.expm, lambda x: mf.sqrtm_and_invsqrtm(x)[1], lambda x: mf.congruence(a, x)):
        assert np.array_equal(f(X)[order], f(X[order]))
        assert np.array_equal(f(X)[:32], f(X[:32]))


def test_elementwise_congruence_matches_matmul():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((2, 2))
    X = rng.standard_normal((50, 2, 2))  # not even symmetric: the general a x aᵀ
    expected = np.einsum("ij,njk,lk->nil", a, X, a)
    scale = np.linalg.norm(a) ** 2 * np.linalg.norm(X, axis=(-2, -1))[:, None, None]
    assert np.all(np.abs(mf.congruence(a, X) - expected) <= 4 * EPS * scale)
    assert np.all(np.abs(mf.congruence(a, X[None])[0] - expected) <= 4 * EPS * scale)


def test_non_finite_records_stay_non_finite():
    bad = [np.full((2, 2), np.nan), np.full((2, 2), np.inf)]
    X = np.concatenate([_spd_2x2(20, 1.0, np.random.default_rng(5)), bad])
    with np.errstate(all="ignore"):
        logs = mf.logm(X)
    assert np.all(np.isfinite(logs[:20])) and not np.any(np.isfinite(logs[20:]).all(axis=(-2, -1)))


def test_affine_log_of_many_records_at_one_point():
    """The SPD(2) Log of a batch at one base point (the private-GD pass) is the Log of each
    record alone, and Exp inverts it."""
    space = SPD(2)
    rng = np.random.default_rng(6)
    W, X = _spd_2x2(1, 0.5, rng)[0], _spd_2x2(100, 0.7, rng)
    logs = space.log(W, X)
    for i in range(len(X)):
        np.testing.assert_allclose(logs[i], space.log(W, X[i]), rtol=0, atol=1e-13)
    np.testing.assert_allclose(space.exp(np.broadcast_to(W, X.shape), logs), X, rtol=1e-12, atol=0)
