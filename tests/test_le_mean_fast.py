"""The log-Euclidean mean's fast path (issue 24): the short validation path answers only where the
general path would give the same arrays, the closed form keeps its convergence certificate, and
the mean stays pyRiemann's to rounding."""

import math

import mpmath
import numpy as np
import pytest

from geodp import frechet_mean
from geodp.manifolds import SPD
from geodp.manifolds import matrix_functions as mf
from geodp.manifolds import spd as spd_module
from geodp.manifolds.frechet_hooks import FrechetFlowHooks
from geodp.manifolds.spd_numerics import CLEAR_FACTOR

EPS = np.finfo(float).eps


def _rotated(eigenvalues, seed):
    """``q diag(λ) qᵀ`` for a random rotation ``q``, exactly symmetric."""
    k = len(eigenvalues)
    q = np.linalg.qr(np.random.default_rng(seed).normal(size=(k, k)))[0]
    x = (q * np.asarray(eigenvalues, dtype=float)) @ q.T
    return np.triu(x) + np.triu(x, 1).T


def _general(space, X, monkeypatch):
    with monkeypatch.context() as patch:
        patch.setattr(spd_module, "_common_eigen_records", lambda X: None)
        return space._eigen_records(X)


def _edge_records(k):
    """``{kind: (record, verdict)}``: records on both sides of every bound of the short path
    ("answer": it must take them, "decline": it must leave them to the general path, "either":
    rounding decides) and where the general path changes the record (norm² beyond [1e-250, 1e250]:
    scaled; asymmetry beyond rounding: symmetrised), NaN and inf in either triangle."""

    def scaled_identity(norm2):  # a·I with k·a² = norm2
        return math.sqrt(norm2 / k) * np.eye(k)

    high, low = spd_module._HIGH_NORM2, spd_module._LOW_NORM2
    ratio = CLEAR_FACTOR * k * EPS * (1.0 + 1e-6)
    diagonal = np.linspace(1.0, 2.0, k)
    skew = np.zeros((k, k))
    skew[0, 1] = 1.0
    # diag(1..2) has zero off-diagonal entries, so x + t·skew has ‖x − xᵀ‖²_F = 2t² exactly.
    t = math.sqrt(16.0 * EPS**2 * (1.0 - 1e-6) * np.sum(diagonal**2) / 2.0)
    nan_upper = np.triu(np.full((k, k), np.nan), 1)
    inf_lower = np.tril(np.full((k, k), np.inf), -1)
    return {
        "norm² inside the high bound": (scaled_identity(high * (1 - 1e-9)), "answer"),
        "norm² over the high bound": (scaled_identity(high * (1 + 1e-9)), "decline"),
        "norm² just over 1e250 (scaled)": (scaled_identity(1e250 * (1 + 1e-9)), "decline"),
        "norm² inside the low bound": (scaled_identity(low * (1 + 1e-9)), "answer"),
        "norm² under the low bound": (scaled_identity(low * (1 - 1e-9)), "decline"),
        "norm² just under 1e-250 (scaled)": (scaled_identity(1e-250 * (1 - 1e-9)), "decline"),
        "λ_min/λ_max 1.5× the margin": (_rotated(np.r_[1.5 * ratio, np.linspace(0.5, 1.0, k - 1)], 2), "answer"),
        "λ_min/λ_max at the margin": (_rotated(np.r_[ratio, np.linspace(0.5, 1.0, k - 1)], 2), "either"),
        "λ_min/λ_max 0.5× the margin": (_rotated(np.r_[0.5 * ratio, np.linspace(0.5, 1.0, k - 1)], 2), "decline"),
        "negative definite": (-_rotated(diagonal, 3), "decline"),
        "asymmetry inside 4 eps ‖x‖": (np.diag(diagonal) + t * (1 - 1e-3) * skew, "answer"),
        "asymmetry outside 4 eps ‖x‖": (np.diag(diagonal) + t * (1 + 1e-3) * skew, "decline"),
        "asymmetry 1e-10 (symmetrised)": (np.diag(diagonal) + 1e-10 * skew, "decline"),
        "NaN in the upper triangle": (_rotated(diagonal, 4) + nan_upper, "decline"),
        "inf in the lower triangle": (_rotated(diagonal, 5) + inf_lower, "decline"),
    }


@pytest.mark.parametrize("k", [2, 3, 10])
def test_short_path_answers_only_where_the_general_path_gives_the_same_arrays(k, monkeypatch):
    """Each edge record alone and after ordinary records: where the short path answers, its
    arrays are the general path's bit for bit, every record valid and none raised."""
    space = SPD(k, metric="log-euclidean")
    ordinary = np.stack([_rotated(np.linspace(0.3, 3.0, k), 10 + i) for i in range(4)])
    for kind, (record, verdict) in _edge_records(k).items():
        for X in (record[None], np.concatenate([ordinary, record[None]])):
            short = spd_module._common_eigen_records(X)
            assert (short is not None) == (verdict == "answer") or verdict == "either", kind
            if short is not None:
                general = _general(space, X, monkeypatch)
                for a, b in zip(short[:4], general[:4]):
                    assert a.dtype == b.dtype and np.array_equal(a, b), kind
                assert general[3].all() and general[4] is True, kind


@pytest.mark.parametrize("k", [64, 128])
def test_products_at_large_k_stay_on_the_short_path(k):
    """Records made by matrix products are asymmetric by rounding that grows with k (beyond
    4 eps λ_max at k = 128, not beyond 4 eps ‖x‖_F): the short path takes them (a bound against
    λ_max sent every block of them through a second eigh on the general path)."""
    rng = np.random.default_rng(k)
    q = np.linalg.qr(rng.normal(size=(4, k, k)))[0]
    X = (q * np.exp(rng.uniform(-1.5, 1.5, size=(4, 1, k)))) @ np.swapaxes(q, -1, -2)
    assert not np.array_equal(X, np.swapaxes(X, -1, -2))
    assert spd_module._common_eigen_records(X) is not None


def _mp_log_residual(mean, total):
    """``‖Log(mean) − S‖_F`` with the logarithm of the float matrix ``mean`` in 50 digits."""
    with mpmath.workdps(50):
        w, u = mpmath.eigsy(mpmath.matrix(mf.sym(mean).tolist()))
        log = u * mpmath.diag([mpmath.log(x) for x in w]) * u.T
        return float(mpmath.mnorm(log - mpmath.matrix(total.tolist()), "f"))


def test_closed_form_mean_is_the_chart_round_trip_to_rounding():
    """The matrix-form closed form against the generic one on ``vecd`` coordinates (``Exp`` of the
    coordinates, then ``Log`` of the result): the same mean, size and (rounding-level) residual."""
    space = SPD(5, metric="log-euclidean")
    total = mf.sym(np.random.default_rng(7).normal(size=(5, 5)))
    mean, residual, size = space._closed_form_mean(total)
    generic = FrechetFlowHooks._closed_form_mean(space, mf.vecd(total))
    np.testing.assert_allclose(mean, generic[0], rtol=0, atol=1e-14 * np.abs(mean).max())
    assert size == pytest.approx(generic[2], rel=1e-15)
    assert residual < 1e-13 and generic[1] < 1e-13


def test_certificate_measures_the_returned_matrix():
    """A mean whose float matrix does not hold its logarithm (log-eigenvalues ±15: the small
    eigenvalue keeps a few digits) is reported with a residual at least of the size 50-digit
    arithmetic finds on the returned matrix (float64's ``eigh`` of it errs by more, upwards
    here), and as not converged. (A certificate computed from the decomposition that built the
    mean, not from the mean, would report ~1e-15.)"""
    space = SPD(3, metric="log-euclidean")
    total = _rotated([-15.0, 0.0, 15.0], 8)
    mean, residual, _ = space._closed_form_mean(total)
    truth = _mp_log_residual(mean, total)
    assert truth > 1e-6 and residual > 0.5 * truth
    X = space._closed_form_mean(total)[0][None]  # that matrix as a one-record dataset
    _, info = frechet_mean(space, X, return_info=True)
    assert not info.converged and info.grad_norm > 1e-6


@pytest.mark.parametrize("k, n", [(3, 5000), (10, 700), (32, 60)])
def test_log_euclidean_mean_is_pyriemanns_to_rounding(k, n):
    """Several slices of the sum (k = 32: 8 records a slice), weighted and not."""
    pyriemann = pytest.importorskip("pyriemann.geometry.mean")
    rng = np.random.default_rng(k)
    dim = k * (k + 1) // 2
    X = mf.expm(mf.invvecd(2.0 / math.sqrt(dim) * rng.standard_normal((n, dim)), k))
    space = SPD(k, metric="log-euclidean")
    for weights in (None, rng.uniform(size=n)):
        ours, info = frechet_mean(space, X, weights=weights, return_info=True)
        theirs = pyriemann.mean_logeuclid(X, sample_weight=weights)
        assert np.linalg.norm(ours - theirs) <= 1e-12 * np.linalg.norm(theirs)
        assert info.converged and info.grad_norm < 1e-13


def test_eigh_one_is_numpys_eigh():
    rng = np.random.default_rng(9)
    for k in (1, 2, 3, 16, 17):  # 17: through numpy
        a = rng.normal(size=(k, k))  # not symmetric: both read the lower triangle
        w, u = mf.eigh_one(a)
        w_np, u_np = np.linalg.eigh(a)
        np.testing.assert_allclose(w, w_np, rtol=0, atol=1e-14 * np.abs(w_np).max())
        np.testing.assert_allclose(np.abs(u), np.abs(u_np), rtol=0, atol=1e-12)
    for k in (3, 17):
        with pytest.raises(np.linalg.LinAlgError):
            mf.eigh_one(np.full((k, k), np.nan))
