"""The affine-invariant Karcher flow far from its iterate: the accurate whitening path
(geodp.manifolds.spd_accurate) against 50-digit recomputation, and the private fit's use of it."""

import warnings

import numpy as np
import pytest

from geodp.audit.affine_flow import exact_gradient_norm
from geodp.frechet import frechet_mean, karcher_iteration_budget
from geodp.manifolds import SPD
from geodp.manifolds.spd_accurate import accurate_spd_eigh, accurate_whitening, whitened_eigensystems
from geodp.models import PrivateFrechetMean
from geodp.models.frechet_mean import release_sensitivity

mp = pytest.importorskip("mpmath")


@pytest.fixture(autouse=True)
def _fifty_digits():
    """mpmath's precision is process-wide, and other test modules in the same worker set theirs."""
    with mp.workdps(50):
        yield


def _rotation(theta):
    return np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])


def _record(logs, theta):
    r = _rotation(theta)
    x = r @ np.diag(np.exp(logs)) @ r.T
    return (x + x.T) / 2


def _exact_logs(matrix):
    """Sorted log-eigenvalues of a float matrix, in 50 digits."""
    return np.array(sorted(float(mp.log(e)) for e in mp.eigsy(mp.matrix(matrix.tolist()))[0]))


def test_the_frame_decomposition_has_relative_accuracy_where_eigh_has_not():
    rng = np.random.default_rng(3)
    q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    p = q @ np.diag(np.exp([14.0, 0.3, -14.0])) @ q.T
    p = (p + p.T) / 2
    exact = _exact_logs(p)
    values, vectors = accurate_spd_eigh(p)
    assert np.max(np.abs(np.log(values) - exact)) < 1e-13
    assert np.allclose(vectors.T @ vectors, np.eye(3), atol=1e-14)
    plain = np.log(np.linalg.eigvalsh(p))
    assert np.max(np.abs(plain - exact)) > 1e-9  # what the accurate path is for


@pytest.mark.parametrize(
    ("spread", "turn"),
    [(7.0, 1e-3), (14.0, 0.785)],  # nearly commuting; and far apart in a generic frame (needs the Jacobi SVD)
)
def test_whitened_records_far_from_the_iterate_keep_their_small_eigenvalues(spread, turn):
    """A record far from the iterate (whitened condition number e^{2·spread}), against 50 digits
    with the same frame: a dense eigh of the whitened matrix (formed densely, or even from the
    factors in the generic frame) loses its small eigenvalue."""
    p = _record([spread, -spread], 0.3)
    x = _record([-spread, spread], 0.3 + turn)
    values, vectors = accurate_spd_eigh(p)
    logs, u = whitened_eigensystems(values, vectors, x[None])
    frame = mp.matrix(vectors.tolist())
    inv_root = frame * mp.diag([1 / mp.sqrt(mp.mpf(float(v))) for v in values]) * frame.T
    s, v = np.linalg.eigh(x)
    canonical = mp.matrix(v.tolist()) * mp.diag([mp.mpf(float(e)) for e in s]) * mp.matrix(v.tolist()).T
    whitened = inv_root * canonical * inv_root
    exact = np.array(sorted(float(mp.log(e)) for e in mp.eigsy((whitened + whitened.T) / 2)[0]))
    assert np.max(np.abs(np.sort(logs[0]) - exact)) < 1e-12
    assert np.allclose(np.swapaxes(u, -1, -2) @ u, np.eye(2), atol=1e-12)
    dense_root = vectors @ np.diag(values**-0.5) @ vectors.T
    with np.errstate(divide="ignore", invalid="ignore"):  # its small eigenvalue may come out 0 or negative
        plain = np.log(np.linalg.eigvalsh(dense_root @ x @ dense_root))
    assert not np.max(np.abs(plain - exact)) <= 1e-6  # the dense path loses the small eigenvalue


ADVERSARIAL = (  # found by a search over near-commuting records on the radius-10 sphere around I
    [_record([-7.07106781, 7.07106781], -2.359946801889461), _record([-9.7621775, 2.16792309], -1.2125043303190717)],
    np.array([0.87513551, 0.12486449]),
)


def test_the_flow_meets_its_tolerance_exactly_on_adversarial_records():
    space, center, radius = SPD(2), np.eye(2), 10.0
    records, weights = np.stack(ADVERSARIAL[0]), ADVERSARIAL[1]
    tol = release_sensitivity(space, radius, 1_000, "laplace", center)[2]
    budget = karcher_iteration_budget(space, radius, tol)
    results = {}
    for accurate in (True, False):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with accurate_whitening(accurate):
                mean = frechet_mean(space, records, weights=weights, tol=tol, max_iter=budget)
        results[accurate] = exact_gradient_norm(mean, records, weights)
    assert space.needs_accurate_whitening(center, radius)
    assert results[True] <= tol
    assert results[False] > 3 * tol  # the dense path stops with the exact gradient far above tol


@pytest.mark.parametrize("radius", [14.15, 20.0])
def test_large_balls_reach_their_float64_floor(radius):
    """Records on the boundary, near-commuting, one far: the flow converges within its (raised)
    tolerance and the exact gradient is below it."""
    space, center = SPD(2), np.eye(2)
    a = radius / np.sqrt(2)
    records = np.stack([_record([a, -a], 0.2), _record([-a, a], 0.2 + 3e-3), _record([a, -a], 1.0)])
    weights = np.array([0.6, 0.1, 0.3])
    tol = release_sensitivity(space, radius, 1_000, "laplace", center)[2]
    assert tol >= space.flow_resolution(center, radius)
    with accurate_whitening(True):
        budget = karcher_iteration_budget(space, radius, tol)
        mean, info = frechet_mean(space, records, weights=weights, tol=tol, max_iter=budget, return_info=True)
    assert info.converged
    assert exact_gradient_norm(mean, records, weights) <= tol


def test_the_private_fit_reports_its_whitening_and_tolerance():
    space = SPD(2)
    X = np.stack([_record([5.0, -5.0], t) for t in np.linspace(0, 1, 20)])
    small = PrivateFrechetMean(space, epsilon=1.0, center=np.eye(2), radius=3.0, random_state=0).fit(X)
    large = PrivateFrechetMean(space, epsilon=1.0, center=np.eye(2), radius=10.0, random_state=0).fit(X)
    assert "decomposed by eigh" in str(small.privacy_report_)
    assert "high relative accuracy" in str(large.privacy_report_)
    assert np.all(np.isfinite(large.mean_))


def test_a_badly_conditioned_centre_counts_towards_the_checked_radius():
    """The notice beyond the checked range (said before the charge) looks at the effective radius
    (centre's condition number included), as the tolerance and the path do."""
    from geodp.errors import NumericalWarning

    space, center = SPD(2), np.diag(np.exp([7.0, -7.0]))
    assert space.effective_radius(center, 15.0) > 20.0
    far = PrivateFrechetMean(space, epsilon=1.0, center=center, radius=15.0).plan(100).notices
    assert any(kind is NumericalWarning and "effective ball radius" in text for kind, text in far)
    near = PrivateFrechetMean(space, epsilon=1.0, center=np.eye(2), radius=15.0).plan(100).notices
    assert not any(kind is NumericalWarning for kind, _ in near)


def test_a_frame_float64_does_not_hold_as_positive_definite_gives_nan_without_lapack_output(capfd):
    logs, _ = whitened_eigensystems(np.array([0.0, 1.0]), np.eye(2), np.eye(2)[None])
    assert np.isnan(logs).any()
    assert capfd.readouterr().out == ""


def test_the_log_euclidean_short_path_passes_an_empty_block_on():
    assert SPD(2, "log-euclidean")._eigen_records(np.zeros((0, 2, 2)))[3].shape == (0,)


def test_a_jacobi_svd_that_does_not_converge_keeps_the_batched_answer_and_raises_nothing(monkeypatch):
    """The whitening runs after the charge: a LAPACK failure must not become an exception there."""
    import geodp.manifolds.spd_accurate as accurate

    def fails(_):
        raise np.linalg.LinAlgError("no convergence")

    p, x = _record([7.0, -7.0], 0.3), _record([-7.0, 7.0], 1.0)
    values, vectors = accurate_spd_eigh(p)
    monkeypatch.setattr(accurate, "_jacobi_svd", fails)
    logs, u = whitened_eigensystems(values, vectors, x[None])
    assert logs.shape == (1, 2) and u.shape == (1, 2, 2)
