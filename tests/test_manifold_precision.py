"""Geometry at the edges of float64, checked against high-precision arithmetic (issue 8).

Numerics are privacy: a distance that loses precision far from the centre lets a record escape
clipping. References are computed with mpmath from the float64 inputs taken as exact numbers
(a hyperboloid point is the lift of its spatial coordinates, as ``Hyperbolic.project`` defines).

Item 3: hyperbolic distance/log far from and near to each other; sphere, Kendall and SPD
distances near 0 and near their maximum. Item 4: badly conditioned SPD records are points of the
space and are clipped into the ball. Item 9: typed errors from every public method of every
space; the underscore methods are the unvalidated fast path.
"""

import warnings

import numpy as np
import pytest

from geodp.errors import InvalidDataError, NotOnManifoldError, NumericalWarning
from geodp.manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Sphere
from geodp.manifolds import matrix_functions as mf

mp = pytest.importorskip("mpmath")

EPS = np.finfo(float).eps


# ----------------------------------------------------------------------------- mpmath references
def _mpf(values):
    return [mp.mpf(float(t)) for t in np.ravel(values)]


def hyperbolic_reference(x, y, radius=1.0):
    """(ρ, log_x y) for the lifts of the spatial coordinates of x and y, in high precision."""
    big = max(float(np.max(np.abs(x))), float(np.max(np.abs(y))), 1.0)
    with mp.workdps(60 + 2 * int(np.log10(big))):
        R = mp.mpf(radius)

        def lift(p):
            spatial = _mpf(p[1:])
            return [mp.sqrt(R**2 + sum(t * t for t in spatial))] + spatial

        a, b = lift(x), lift(y)
        mink = lambda u, v: -u[0] * v[0] + sum(p * q for p, q in zip(u[1:], v[1:]))  # noqa: E731
        q = -mink(a, b) / R**2
        diff = [p - r for p, r in zip(b, a)]
        c = q - 1 if q > 2 else max(mp.mpf(0), mink(diff, diff) / (2 * R**2))
        theta = 2 * mp.asinh(mp.sqrt(c / 2))
        if theta == 0:
            return 0.0, np.zeros(len(a))
        log = [R * theta / mp.sinh(theta) * (bi - mp.cosh(theta) * ai) / R for ai, bi in zip(a, b)]
        return float(R * theta), np.array([float(t) for t in log])


def sphere_reference(x, y):
    """Angle between the vectors x and y (any common norm)."""
    with mp.workdps(50):
        a, b = _mpf(x), _mpf(y)
        dot = sum(p * q for p, q in zip(a, b))
        cross2 = sum(p * p for p in a) * sum(q * q for q in b) - dot**2
        return float(mp.atan2(mp.sqrt(max(cross2, 0)), dot))


def kendall_reference(x, y):
    """arccos(|⟨z, w⟩|/(|z||w|)) for configurations x, y, evaluated with atan2."""
    with mp.workdps(50):
        z = [mp.mpc(*map(float, p)) for p in x]
        w = [mp.mpc(*map(float, p)) for p in y]
        h = abs(sum(mp.conj(p) * q for p, q in zip(z, w)))
        norms = mp.sqrt(sum(abs(p) ** 2 for p in z) * sum(abs(q) ** 2 for q in w))
        return float(mp.atan2(mp.sqrt(max(1 - (h / norms) ** 2, 0)), h / norms))


def _mp_matrix(a):
    return mp.matrix(np.asarray(a, dtype=float).tolist())


def _mp_logm(a):
    w, u = mp.eigsy((a + a.T) / 2)
    return u * mp.diag([mp.log(t) for t in w]) * u.T


def spd_reference(p, q, metric):
    """Affine-invariant or log-Euclidean distance of the float64 matrices p, q."""
    with mp.workdps(60):
        P, Q = _mp_matrix(p), _mp_matrix(q)
        if metric == "affine":
            inv = mp.inverse(mp.cholesky((P + P.T) / 2))
            m = inv * ((Q + Q.T) / 2) * inv.T
            w = mp.eigsy((m + m.T) / 2, eigvals_only=True)
            return float(mp.sqrt(sum(mp.log(t) ** 2 for t in w)))
        d = _mp_logm(P) - _mp_logm(Q)
        return float(mp.sqrt(sum(d[i, j] ** 2 for i in range(d.rows) for j in range(d.cols))))


def _point_at_distance(space, base_distance, seed):
    """A point of the hyperbolic space at the given distance from its origin."""
    direction = np.random.default_rng(seed).standard_normal(space.dim)
    direction /= np.linalg.norm(direction)
    return space._exp(space.origin, np.concatenate([[0.0], base_distance * direction]))


# ======================================================================= item 3: hyperbolic
HYPERBOLIC = [Hyperbolic(2), Hyperbolic(5, curvature=-0.25)]


@pytest.mark.parametrize("space", HYPERBOLIC, ids=repr)
@pytest.mark.parametrize("base_distance", [0.0, 1.0, 5.0])
def test_hyperbolic_distance_matches_high_precision_from_1e8_to_700(space, base_distance):
    # The Minkowski chord computed distance 40 as 0 and distance 36 with a 0.7% error; the
    # arccosh form loses everything below 1e-8. Measured worst relative error now: 3e-15.
    R = space.radius
    base = _point_at_distance(space, base_distance * R, seed=1)
    rng = np.random.default_rng(2)
    worst = 0.0
    for rho in np.logspace(-8, np.log10(700.0), 24) * R:
        u = space.random_unit_tangent(base, size=3, rng=rng)
        y = space._polar_exp(base, u, rho)
        d = space.dist(base, y)
        for di, yi in zip(d, y):
            ref, _ = hyperbolic_reference(base, yi, R)
            worst = max(worst, abs(di - ref) / ref)
    assert worst <= 1e-10


@pytest.mark.parametrize("base_distance", [10.0, 15.0, 20.0])
def test_hyperbolic_distance_error_far_from_the_origin_is_the_representation_error(base_distance):
    # Coordinates of a point at distance D hold it only to about eps·e^D: the computed distances
    # (near or far) stay within that bound (measured: 0.37·eps·e^D); the Minkowski chord erred by
    # up to e^(2D)·eps and the cross product −⟨x, y⟩_L by as much.
    space = Hyperbolic(3)
    base = _point_at_distance(space, base_distance, seed=3)
    rng = np.random.default_rng(4)
    worst = 0.0
    for rho in np.logspace(-6, np.log10(300.0), 12):
        y = space._polar_exp(base, space.random_unit_tangent(base, size=3, rng=rng), rho)
        for yi, di in zip(y, space.dist(base, y)):
            worst = max(worst, abs(di - hyperbolic_reference(base, yi)[0]))
    assert worst <= 2.0 * EPS * np.exp(base_distance)


@pytest.mark.parametrize("space", HYPERBOLIC, ids=repr)
@pytest.mark.parametrize("base_distance", [0.0, 5.0])
def test_hyperbolic_log_exp_and_transport_match_high_precision(space, base_distance):
    R = space.radius
    base = _point_at_distance(space, base_distance * R, seed=5)
    rng = np.random.default_rng(6)
    for rho in np.array([1e-8, 1e-4, 0.5, 3.0, 20.0, 40.0, 300.0, 700.0]) * R:
        y = space._polar_exp(base, space.random_unit_tangent(base, rng=rng), rho)
        ref_rho, ref_log = hyperbolic_reference(base, y, R)
        log = space.log(base, y)
        # measured: 2e-16 from the origin, 4e-11 from distance 5 (the transverse part, eps·e^(2D))
        np.testing.assert_allclose(log, ref_log, rtol=0, atol=1e-9 * np.linalg.norm(ref_log))
        np.testing.assert_allclose(space.norm(base, log), ref_rho, rtol=1e-10)
        if base_distance == 0.0 and rho < 709.0 * R:
            # exp inverts log: the point lands at the reference distance from the base
            back = space.exp(base, log)
            np.testing.assert_allclose(hyperbolic_reference(base, back, R)[0], ref_rho, rtol=1e-10)
        if rho <= 3.0 * R:
            # transport (built from the same cosh(ρ/R) − 1) is an isometry and maps log to −log;
            # tangent vectors at y, up to distance 8R from the origin, are resolved to eps·e^8
            w = space.random_tangent(base, rng=rng)
            moved = space.transport(base, y, w)
            np.testing.assert_allclose(space.inner(y, moved, moved), space.inner(base, w, w), rtol=1e-8)
            np.testing.assert_allclose(
                space.transport(base, y, log), -space.log(y, base), atol=1e-8 * max(rho, 1.0) * np.exp(rho / R)
            )


@pytest.mark.parametrize("radius", [1.0, 10.0])
@pytest.mark.parametrize("record_distance", [36.0, 40.0, 300.0, 700.0])
def test_far_hyperbolic_record_is_clipped_into_the_ball(radius, record_distance):
    # Issue 8, item 3: a valid record at distance 40 from the centre escaped clip_to_ball (its
    # distance computed as 0) and moved a private release by 40.
    space = Hyperbolic(2)
    center = space.origin
    angles = np.linspace(0.1, 6.2, 7)
    X = space.project(
        np.stack(
            [np.zeros(7), np.sinh(record_distance) * np.cos(angles), np.sinh(record_distance) * np.sin(angles)], axis=1
        )
    )
    clipped, mask = space.clip_to_ball(X, center, radius)
    assert np.all(mask)
    for record, point in zip(X, clipped):
        assert hyperbolic_reference(center, point)[0] <= radius + 1e-9
        # moved along the geodesic from the centre: same spatial direction
        unit = lambda v: (v / np.max(np.abs(v))) / np.linalg.norm(v / np.max(np.abs(v)))  # noqa: E731
        np.testing.assert_allclose(unit(point[1:]), unit(record[1:]), atol=1e-12)


def test_hyperbolic_distance_is_finite_for_every_representable_pair():
    # Coordinates up to 1e307: no square, product or cosh may overflow into inf or NaN (a NaN
    # distance compares False with the radius, i.e. a record that is never clipped).
    space = Hyperbolic(2)
    center = _point_at_distance(space, 5.0, seed=7)
    far = space.project(np.array([[0.0, 4e307, 0.0], [0.0, -4e307, 1.0], [0.0, 3e200, -3e200]]))
    assert np.all(space.belongs(far))
    d_center = space.dist(center, far)
    for p, dp in zip(far, d_center):
        np.testing.assert_allclose(dp, hyperbolic_reference(center, p)[0], rtol=1e-12)
    d_pair = space.dist(far[0], far[1])  # opposite sides: ≈ 2·709
    np.testing.assert_allclose(d_pair, hyperbolic_reference(far[0], far[1])[0], rtol=1e-12)
    assert np.all(np.isfinite(space.log(center, far)))
    assert np.all(space.dist(far, far) == 0.0) and np.all(space.dist(center, center) == 0.0)
    clipped, mask = space.clip_to_ball(far, center, 2.0)
    assert np.all(mask) and np.all(space.dist(center, clipped) <= 2.0)


def test_points_built_far_from_the_centre_belong():
    # belongs must accept what the library itself produces far out: hyperboloid points at
    # distance 30 (and 300, 700) from the origin, their exp/project, sphere and Kendall outputs.
    space = Hyperbolic(3)
    for distance in (30.0, 300.0, 700.0):
        x = _point_at_distance(space, distance, seed=8)
        assert space.belongs(x) and space.belongs(space.project(x))
        assert space.belongs(space.check_points(x))
    x30 = _point_at_distance(space, 30.0, seed=9)
    steps = space.random_tangent(x30, size=50, rng=10)
    assert np.all(space.belongs(space.exp(x30, steps)))
    assert np.all(space.belongs(space.polar_exp(x30, space.random_unit_tangent(x30, size=50, rng=11), 5.0)))

    sphere = Sphere(4, curvature=2.5)
    x = sphere.random_point(50, rng=12)
    long_steps = sphere.random_tangent(x, rng=13) * 1e3  # many turns round the sphere
    assert np.all(sphere.belongs(sphere.exp(x, long_steps)))
    assert np.all(sphere.belongs(sphere.project(np.array([[1e-150, 0, 0, 0, 1e-150], [1e150, 3e150, 0, 0, 0]]))))

    kendall = KendallShape(6)
    z = kendall.random_point(50, rng=14)
    assert np.all(kendall.belongs(kendall.exp(z, kendall.random_unit_tangent(z, rng=15) * (np.pi / 2 - 1e-9))))
    scales = np.array([1e150, 1e-150, 1.0])[:, None, None]
    huge = kendall.check_points((np.random.default_rng(16).standard_normal((3, 6, 2)) + 7.0) * scales)
    assert np.all(kendall.belongs(huge))


# ========================================================= item 3: sphere, Kendall, SPD distances
@pytest.mark.parametrize("space", [Sphere(2), Sphere(5, curvature=3.0)], ids=repr)
def test_sphere_distance_near_zero_and_near_pi_matches_high_precision(space):
    # Dividing the points by R before subtracting them erred by 6e-9 at ρ = 1e-8 R on a sphere
    # of curvature 3; measured now: 4e-16 over [1e-8, π − 1e-8].
    R = space.radius
    rng = np.random.default_rng(20)
    worst = 0.0
    for angle in (1e-8, 1e-6, 1e-3, 1.0, np.pi - 1e-3, np.pi - 1e-6, np.pi - 1e-8):
        x = space.random_point(10, rng=rng)
        y = space._polar_exp(x, space.random_unit_tangent(x, rng=rng), angle * R)
        for xi, yi, di in zip(x, y, space.dist(x, y)):
            ref = R * sphere_reference(xi, yi)
            worst = max(worst, abs(di - ref) / ref)
    assert worst <= 1e-10


@pytest.mark.parametrize("space", [KendallShape(3), KendallShape(8)], ids=repr)
def test_kendall_distance_near_zero_and_near_pi_over_two_matches_high_precision(space):
    rng = np.random.default_rng(21)
    worst_aligned = worst_rotated_abs = worst_far = 0.0
    for angle in (1e-8, 1e-6, 1e-3, 1.0, np.pi / 2 - 1e-3, np.pi / 2 - 1e-6, np.pi / 2 - 1e-8):
        x = space.random_point(10, rng=rng)
        y = space._polar_exp(x, space.random_unit_tangent(x, rng=rng), angle)  # aligned with x
        phi = rng.uniform(0, 2 * np.pi, size=10)
        rot = np.stack([np.stack([np.cos(phi), -np.sin(phi)], -1), np.stack([np.sin(phi), np.cos(phi)], -1)], -2)
        turned = np.einsum("nij,nkj->nki", rot, y)  # the same shapes, rotated
        for xi, yi, ti, da, dt in zip(x, y, turned, space.dist(x, y), space.dist(x, turned)):
            ref_a, ref_t = kendall_reference(xi, yi), kendall_reference(xi, ti)
            if angle < 1.0:
                worst_aligned = max(worst_aligned, abs(da - ref_a) / ref_a)
                worst_rotated_abs = max(worst_rotated_abs, abs(dt - ref_t))
            else:
                worst_far = max(worst_far, abs(da - ref_a) / ref_a, abs(dt - ref_t) / ref_t)
    # Aligned preshapes: relative 2e-16 (2e-9 before: the rotation was applied to y, not to the
    # small difference). Rotated copies: the rounding of the rotation itself, about eps absolute.
    assert worst_aligned <= 1e-10
    assert worst_rotated_abs <= 1e-15
    assert worst_far <= 1e-12


def _rotation(k, rng):
    q, r = np.linalg.qr(rng.standard_normal((k, k)))
    return q * np.sign(np.diag(r))


def _spd(k, log_eigenvalues, rng):
    return mf.from_eig(np.exp(np.asarray(log_eigenvalues, dtype=float)), _rotation(k, rng))


@pytest.mark.parametrize("metric", ["affine", "log-euclidean"])
@pytest.mark.parametrize("k", [2, 3, 8])
def test_spd_distances_of_well_separated_matrices_match_high_precision(metric, k):
    # Matrices of moderate condition (log-eigenvalues in [−2, 2]) scaled apart by e^s, s up to 30:
    # distances up to 30√k; measured relative error 2e-15.
    space = SPD(k, metric=metric)
    rng = np.random.default_rng(22)
    worst = 0.0
    for s in (-30.0, -10.0, -1.0, 1.0, 10.0, 30.0):
        p = _spd(k, rng.uniform(-2, 2, k), rng)
        q = np.exp(s) * _spd(k, rng.uniform(-2, 2, k), rng)
        ref = spd_reference(p, q, metric)
        worst = max(worst, abs(float(space.dist(p, q)) - ref) / ref)
    assert worst <= 1e-10


# ======================================================================= item 4: SPD extremes
SPREADS = [30.0, 45.0, 60.0]


@pytest.mark.parametrize("metric", ["affine", "log-euclidean"])
@pytest.mark.parametrize("k", [2, 3, 8])
def test_badly_conditioned_spd_records_are_points_while_their_eigenvalues_are_determined(metric, k):
    # Q diag(e^{−s/2}, …, e^{s/2}) Qᵀ with a random rotation. At s = 30 the smallest eigenvalue
    # is resolved (above the rounding level k·eps·max λ): a point, untouched. At s ≥ 45 eigh
    # returns a smallest eigenvalue of either sign at the rounding level: float64 does not hold
    # the matrix as PD, so every path refuses it (before, it was accepted and raised to the
    # rounding level, an arbitrary extreme point).
    space = SPD(k, metric=metric)
    rng = np.random.default_rng(23)
    for spread in SPREADS:
        X = np.stack([_spd(k, np.linspace(-spread / 2, spread / 2, k), rng) for _ in range(40)])
        if spread == 30.0:
            assert np.all(space.belongs(X)) and not np.any(space.invalid_records(X))
            np.testing.assert_array_equal(space.check_points(X), mf.sym(X))
        else:
            assert not np.any(space.belongs(X)) and np.all(space.invalid_records(X))
            with pytest.raises(NotOnManifoldError, match="regularise"):
                space.check_points(X)


def test_spd_singular_up_to_rounding_is_refused_and_regularise_makes_it_a_point():
    space = SPD(2)
    q = _rotation(2, np.random.default_rng(24))
    singular_looking = [np.diag([1.0, 0.0]), mf.from_eig(np.array([-1e-17, 1.0]), q), np.diag([1.0, 1e-17])]
    for x in singular_looking:
        assert not space.belongs(x)
        with pytest.raises(NotOnManifoldError):
            space.check_points(x)
        y = space.check_points(space.regularise(x, ridge=1e-6))
        np.testing.assert_allclose(y, mf.sym(x) + 1e-6 * np.eye(2), atol=1e-15)
    for x in (np.diag([1.0, -1e-6]), -np.eye(2), np.zeros((2, 2))):
        assert not space.belongs(x)
        with pytest.raises(NotOnManifoldError):
            space.check_points(x)
    # the criterion: smallest eigenvalue at least k·eps·max λ
    assert space.belongs(np.diag([1.0, 4 * 2 * EPS])) and not space.belongs(np.diag([1.0, 0.5 * 2 * EPS]))


def test_spd_project_does_not_change_positive_definite_matrices_in_a_batch():
    # Before, one non-PD matrix in the batch made project floor every matrix at 1e-10·max|λ|,
    # which moved Q diag(e^-15, e^15) Qᵀ by log(1e-10·e^30/e^-15) in log-eigenvalue.
    space = SPD(2)
    rng = np.random.default_rng(25)
    good = _spd(2, [-15.0, 15.0], rng)
    good8 = _spd(8, np.linspace(-15.0, 15.0, 8), rng)
    bad = np.diag([1.0, -0.5])
    out = space.project(np.stack([good, bad]))
    np.testing.assert_array_equal(out[0], mf.sym(good))
    assert np.linalg.eigvalsh(out[1])[0] > 0 and np.linalg.eigvalsh(out[1])[1] == pytest.approx(1.0)
    np.testing.assert_array_equal(SPD(8).project(good8), mf.sym(good8))


@pytest.mark.parametrize("metric", ["affine", "log-euclidean"])
@pytest.mark.parametrize("k", [2, 3, 8])
def test_badly_conditioned_spd_records_are_clipped_into_the_ball(metric, k):
    # _dist returns finite values and every clipped record lies in the ball, measured in high
    # precision (worst measured: r·(1 + 1e-11)). Before the clip was scaled by the norm of the
    # exponentiated vector, its distance and |log| came from different rounding and clipped
    # affine-invariant records landed up to 4.5% outside the ball.
    space = SPD(k, metric=metric)
    rng = np.random.default_rng(26)
    centers = [np.eye(k), _spd(k, rng.uniform(-1, 1, k), rng)]
    for spread in (30.0, 33.0):  # beyond ~35, float64 no longer holds them as PD: invalid records
        X = np.stack([_spd(k, np.linspace(-spread / 2, spread / 2, k), rng) for _ in range(2)] + [np.eye(k)])
        for center in centers:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", NumericalWarning)
                d = space.dist(center, X)
                assert np.all(np.isfinite(d))
                for radius in (0.5, 2.0, 10.0):
                    clipped, mask = space.clip_to_ball(X, center, radius)
                    assert np.all(mask[:2])
                    for point in clipped[mask]:
                        assert spd_reference(center, point, metric) <= radius * (1 + 1e-9)


def test_positive_eigenvalues_warning_does_not_depend_on_the_data():
    messages = []
    for w in (np.array([-1e-18, 1.0, 2.0]), np.array([-1e-18, -2e-18, 5.0])):
        with pytest.warns(NumericalWarning) as record:
            out = mf.positive_eigenvalues(w)
        messages.append(str(record[0].message))
        assert np.all(out > 0) and np.all(out[w > 0] == w[w > 0])
    assert messages[0] == messages[1]  # no count of the offending eigenvalues


# ================================================================= item 9: typed errors, fast path
SPACES = [Euclidean(3), Sphere(2), Hyperbolic(2), KendallShape(4), SPD(2), SPD(2, metric="log-euclidean")]


def _off_manifold(space):
    """A finite array of the right shape that is not a point (None for Euclidean space)."""
    if isinstance(space, Sphere):
        return np.array([1.0, 1.0, 0.0])  # norm √2
    if isinstance(space, Hyperbolic):
        return np.array([1.0, 0.5, 0.0])
    if isinstance(space, KendallShape):
        return np.ones((4, 2)) + np.arange(8).reshape(4, 2)  # not centred, not unit
    if isinstance(space, SPD):
        return np.array([[1.0, 0.5], [0.0, 1.0]])  # not symmetric
    return None


def _calls(space):
    """(name, call(x, y, v)) for every validated public method."""
    return [
        ("exp", lambda x, y, v: space.exp(x, v)),
        ("log", lambda x, y, v: space.log(x, y)),
        ("dist", lambda x, y, v: space.dist(x, y)),
        ("inner", lambda x, y, v: space.inner(x, v, v)),
        ("norm", lambda x, y, v: space.norm(x, v)),
        ("transport", lambda x, y, v: space.transport(x, y, v)),
        ("polar_exp", lambda x, y, v: space.polar_exp(x, v, 0.1)),
        ("clip_to_ball", lambda x, y, v: space.clip_to_ball(np.stack([y, y]), x, 0.1)),
        ("random_tangent", lambda x, y, v: space.random_tangent(x, rng=0)),
        ("random_unit_tangent", lambda x, y, v: space.random_unit_tangent(x, rng=0)),
    ]


def _valid(space):
    x, y = space.random_point(rng=30), space.random_point(rng=31)
    return x, y, space.random_unit_tangent(x, rng=32)


@pytest.mark.parametrize("space", SPACES, ids=repr)
def test_every_public_method_raises_typed_errors(space):
    x, y, v = _valid(space)
    off = _off_manifold(space)
    nan = np.full(space.point_shape, np.nan)
    wrong_shape = np.zeros(tuple(s + 1 for s in space.point_shape))
    for name, call in _calls(space):
        call(x, y, v)  # valid input works
        for bad in ("x", "y"):
            if name in ("random_tangent", "random_unit_tangent", "norm", "inner", "exp", "polar_exp") and bad == "y":
                continue
            args = dict(x=x, y=y, v=v)
            args[bad] = nan
            with pytest.raises(InvalidDataError, match="NaN"):
                call(**args)
            args[bad] = wrong_shape
            with pytest.raises(InvalidDataError, match="trailing shape"):
                call(**args)
            if off is not None:
                args[bad] = off
                with pytest.raises(NotOnManifoldError, match="not on"):
                    call(**args)
        if name in ("exp", "inner", "norm", "transport", "polar_exp"):
            with pytest.raises(InvalidDataError, match="NaN"):
                call(x, y, np.full(space.point_shape, np.nan))
            with pytest.raises(InvalidDataError, match="trailing shape"):
                call(x, y, wrong_shape)


def test_the_examples_of_the_issue_raise_typed_errors():
    with pytest.raises(NotOnManifoldError):
        Sphere(2).dist([1.0, 1.0, 0.0], [0.0, 0.0, 1.0])
    with pytest.raises(NotOnManifoldError):
        SPD(2).dist(np.array([[1.0, 2.0], [0.0, 1.0]]), np.eye(2))
    with pytest.raises(InvalidDataError, match="NaN"):
        Hyperbolic(2).dist([np.nan, 0.0, 0.0], [1.0, 0.0, 0.0])
    with pytest.raises(InvalidDataError, match="trailing shape"):
        SPD(2).dist(np.eye(3), np.eye(3))
    with pytest.raises(InvalidDataError, match="trailing shape"):
        Sphere(2).random_unit_tangent([0.0, 1.0])
    with pytest.raises(NotOnManifoldError):
        Sphere(2).random_tangent([0.0, 2.0, 0.0])  # before: silently returned a vector


@pytest.mark.parametrize("space", SPACES, ids=repr)
def test_the_fast_path_skips_validation(space, monkeypatch):
    x, y, v = _valid(space)
    X = np.stack([x, y])
    expected = dict(
        exp=space.exp(x, v),
        log=space.log(x, y),
        dist=space.dist(x, y),
        inner=space.inner(x, v, v),
        norm=space.norm(x, v),
        transport=space.transport(x, y, v),
        polar_exp=space.polar_exp(x, v, 0.3),
        clip=space.clip_to_ball(X, x, 0.1)[0],
        tangent=space.random_tangent(x, rng=1),
        unit=space.random_unit_tangent(x, rng=2),
    )

    def refuse(*args, **kwargs):
        raise AssertionError("the fast path must not validate")

    monkeypatch.setattr(space, "belongs", refuse)
    monkeypatch.setattr(space, "_checked_points", refuse)
    monkeypatch.setattr(space, "_checked_vectors", refuse)
    monkeypatch.setattr(space, "_checked_tangent", refuse)
    fast = space.unchecked  # the documented fast path
    got = dict(
        exp=fast.exp(x, v),
        log=fast.log(x, y),
        dist=fast.dist(x, y),
        inner=fast.inner(x, v, v),
        norm=fast.norm(x, v),
        transport=fast.transport(x, y, v),
        polar_exp=fast.polar_exp(x, v, 0.3),
        clip=fast.clip_to_ball(X, x, 0.1)[0],
        tangent=fast.random_tangent(x, rng=1),
        unit=fast.random_unit_tangent(x, rng=2),
    )
    for key, value in expected.items():
        np.testing.assert_allclose(got[key], value, rtol=1e-13, atol=1e-15, err_msg=key)
    # and it takes input the public methods refuse, without a word (garbage in, garbage out)
    off = _off_manifold(space)
    if off is not None:
        assert np.all(np.isfinite(np.asarray(space._dist(x, off))))
