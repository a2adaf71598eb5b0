"""geodp.audit.audit_epsilon: the certified bound stays below the claim for the real mechanisms and
exceeds it for the halved-scale mutants; the exact-loss oracle against independent formulas."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

import geodp.audit.epsilon as epsilon_module
from geodp.audit import audit_epsilon
from geodp.audit.defaults import MAX_KNG_N, MAX_N, default_center
from geodp.audit.epsilon import _mechanism, clopper_pearson_epsilon
from geodp.errors import InvalidParameterError
from geodp.manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Sphere
from geodp.models import PrivateFrechetMean

NORTH = np.array([0.0, 0.0, 1.0])
S2 = dict(n=5, radius=0.2, center=NORTH)


def test_sphere_laplace_real_and_mutant():
    real = audit_epsilon(Sphere(2), "laplace", epsilon=1.0, n_samples=20_000, rng=0, **S2)
    mutant = audit_epsilon(Sphere(2), "laplace", epsilon=1.0, n_samples=20_000, rng=0, mutant="halve-scale", **S2)
    assert 0.5 < real.epsilon_lower_bound <= 1.0 and not real.violated
    assert mutant.epsilon_lower_bound > 1.2 and mutant.violated
    # closed form: untruncated Laplace at σ = Δ/ε has exact loss Δ/σ = ε; halved σ doubles it
    assert real.exact_epsilon == pytest.approx(1.0, rel=1e-12)
    assert mutant.exact_epsilon == pytest.approx(2.0, rel=1e-12)
    assert mutant.scale == pytest.approx(real.scale / 2, rel=1e-9)
    assert "EXCEEDS claimed" in str(mutant) and "consistent" in str(real)


def _analytic_delta(eps, sigma, distance):
    """Balle & Wang's δ(ε), written with scipy's normal CDF (independent of geodp.calibration)."""
    a, b = distance / (2 * sigma), eps * sigma / distance
    return stats.norm.cdf(a - b) - math.exp(eps) * stats.norm.cdf(-a - b)


def test_log_euclidean_tangent_gaussian_real_and_mutant():
    space, delta = SPD(3, metric="log-euclidean"), 1e-5
    kwargs = dict(epsilon=1.0, delta=delta, n=5, radius=0.2, center=np.eye(3), n_samples=200_000, rng=1)
    real = audit_epsilon(space, "tangent-gaussian", **kwargs)
    mutant = audit_epsilon(space, "tangent-gaussian", mutant="halve-scale", **kwargs)
    assert real.epsilon_lower_bound <= 1.0 and mutant.epsilon_lower_bound > 1.1
    distance = 2 * 0.2 / 5  # the log-Euclidean sensitivity 2r/n
    for audit in (real, mutant):
        assert _analytic_delta(audit.exact_epsilon, audit.scale, distance) == pytest.approx(delta, rel=1e-6)
    assert real.exact_epsilon == pytest.approx(1.0, abs=1e-6)  # the calibration is tight
    assert mutant.exact_epsilon > 2.0


def _kng_sphere_oracle(scale, n, r, grid=300):
    """Exact loss of the audit's KNG pair on S² by scipy's dblquad (normalisers) and a polar grid
    (supremum), with the sphere's log map written out here."""
    e1 = np.array([1.0, 0.0, 0.0])
    b, b_opp = np.cos(r) * NORTH + np.sin(r) * e1, np.cos(r) * NORTH - np.sin(r) * e1
    datasets = [np.array([b] * n), np.array([b] * (n - 1) + [b_opp])]

    def point(t, phi):
        return np.cos(t)[..., None] * NORTH + np.sin(t)[..., None] * (
            np.cos(phi)[..., None] * e1 + np.sin(phi)[..., None] * np.array([0.0, 1.0, 0.0])
        )

    def grad_norm(x, data):
        c = np.clip(np.einsum("...k,nk->...n", x, data), -1, 1)
        theta = np.arccos(c)
        factor = np.where(theta > 1e-12, theta / np.sin(np.maximum(theta, 1e-300)), 1.0)
        logs = factor[..., None] * (data - c[..., None] * x[..., None, :])
        return np.linalg.norm(logs.mean(axis=-2), axis=-1)

    def log_z(data):
        def f(t, phi):
            return np.exp(-grad_norm(point(np.array(t), np.array(phi)), data) / scale) * np.sin(t)

        value, _ = integrate.dblquad(f, 0.0, 2 * np.pi, 0.0, r, epsabs=0, epsrel=1e-7)
        return math.log(value)

    shift = log_z(datasets[0]) - log_z(datasets[1])
    t, phi = np.meshgrid(np.linspace(0, r * (1 - 1e-9), grid), np.linspace(0, 2 * np.pi, 2 * grid))
    x = point(t, phi)
    loss = (grad_norm(x, datasets[1]) - grad_norm(x, datasets[0])) / scale - shift
    return float(np.max(np.abs(loss))), shift


def test_kng_sphere_real_and_mutant_with_quadrature_oracle():
    real = audit_epsilon(Sphere(2), "kng", epsilon=1.0, n_samples=20_000, rng=0, **S2)
    mutant = audit_epsilon(Sphere(2), "kng", epsilon=1.0, n_samples=150_000, rng=0, mutant="halve-scale", **S2)
    assert real.epsilon_lower_bound <= 1.0
    assert mutant.epsilon_lower_bound > 1.0  # a single threshold test is not enough in general
    # σ = 2Δ/ε with the gradient sensitivity Δ = 2r(2 − h)/n, h = 2r cot(2r) (S22, R21 Thm 2)
    h = 0.4 / math.tan(0.4)
    assert real.scale == pytest.approx(2 * (0.4 * (2 - h) / 5), rel=1e-12)
    epsilon, shift = _kng_sphere_oracle(mutant.scale, 5, 0.2, grid=200)
    assert mutant.log_normaliser_difference == pytest.approx(shift, abs=1e-6)
    assert mutant.exact_epsilon == pytest.approx(epsilon, abs=3e-3)
    assert real.exact_epsilon < 1.0 < mutant.exact_epsilon


@pytest.mark.parametrize(
    "space, center, radius",
    [
        (Euclidean(3), np.zeros(3), 1.0),
        (Hyperbolic(2), np.array([1.0, 0.0, 0.0]), 0.5),
        (SPD(2), np.eye(2), 0.5),
    ],
)
def test_laplace_on_other_spaces_stays_below_the_claim(space, center, radius):
    audit = audit_epsilon(space, "laplace", epsilon=1.0, n=5, radius=radius, center=center, n_samples=10_000, rng=2)
    assert audit.epsilon_lower_bound <= 1.0
    assert audit.epsilon_lower_bound > 0.3  # the test events still see most of the loss
    assert audit.exact_epsilon == pytest.approx(1.0, rel=1e-9)  # untruncated on these homogeneous spaces


def test_clopper_pearson_matches_scipy_exact_interval():
    alpha, n = 0.01, 10_000
    for k0, k1 in [(700, 120), (50, 3), (10_000, 0)]:
        low = stats.binomtest(k0, n).proportion_ci(confidence_level=1 - 2 * alpha, method="exact").low
        high = stats.binomtest(k1, n).proportion_ci(confidence_level=1 - 2 * alpha, method="exact").high
        for delta in (0.0, 1e-3):
            expected = math.log((low - delta) / high)
            assert float(clopper_pearson_epsilon(k0, k1, n, delta, alpha)) == pytest.approx(expected, rel=1e-9)
    assert float(clopper_pearson_epsilon(5, 0, n, 1e-3, alpha)) == -math.inf  # p0_low below δ


def test_report_and_dict():
    audit = audit_epsilon(Euclidean(2), "kng", epsilon=0.5, n=4, radius=1.0, center=np.zeros(2), n_samples=2_000, rng=3)
    record = audit.to_dict()
    assert record["epsilon_lower_bound"] == audit.epsilon_lower_bound
    assert {e["family"] for e in record["events"]} == {"distance", "projection", "likelihood-ratio"}
    assert record["exact_epsilon"] == pytest.approx(0.5, rel=1e-9)  # flat KNG: Laplace at the mean


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(mechanism="laplace", delta=1e-5), "pure"),
        (dict(mechanism="laplace", mutant="double-scale"), "mutant"),
        (dict(mechanism="gaussian"), "mechanism"),
        (dict(mechanism="laplace", confidence=1.0), r"confidence must be a number in \(0, 1\), got 1.0"),
        (dict(mechanism="laplace", confidence=0.0), r"confidence must be a number in \(0, 1\), got 0.0"),
        (dict(mechanism="laplace", n_samples=10), "n_samples must be >= 100"),
        (dict(mechanism="laplace", n=MAX_N + 1), "at most"),
        (dict(mechanism="laplace", n=10**23), "at most"),
        (dict(mechanism="kng", n=MAX_KNG_N + 1), "KNG"),
        (dict(mechanism="kng", radius=1e-12), "float64"),
    ],
)
def test_bad_parameters_are_refused(kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        audit_epsilon(Sphere(2), epsilon=1.0, **{**dict(n=5, radius=0.2, center=NORTH, n_samples=100), **kwargs})


@pytest.mark.parametrize(
    "space, center, mechanism, delta",
    [
        (Sphere(2), NORTH, "laplace", 0.0),
        (Sphere(2), NORTH, "kng", 0.0),
        (SPD(3), np.eye(3), "laplace", 0.0),
        (Hyperbolic(2), None, "kng", 0.0),
        (SPD(3, metric="log-euclidean"), None, "tangent-gaussian", 1e-5),
    ],
)
def test_mechanism_is_the_one_private_frechet_mean_fits(space, center, mechanism, delta):
    """Built from n without records, the audited mechanism is exactly the estimator's."""
    center = default_center(space) if center is None else center
    records = np.repeat(center[None], 5, axis=0)
    fitted = (
        PrivateFrechetMean(
            space, epsilon=0.7, delta=delta, center=center, radius=0.3, mechanism=mechanism, random_state=0
        )
        .fit(records)
        .mechanism_
    )
    built = _mechanism(space, mechanism, 0.7, delta, 5, 0.3, center)
    assert type(built) is type(fitted)
    assert built.sensitivity == fitted.sensitivity and built.scale == fitted.scale
    assert built.guarantee == fitted.guarantee


def test_huge_n_needs_no_records():
    # n = 10⁹ records would take 24 GB; the audit only needs the sensitivity ~ 1/n.
    audit = audit_epsilon(Sphere(2), epsilon=1.0, n=10**9, radius=0.2, center=NORTH, n_samples=2_000, rng=0)
    assert audit.exact_epsilon == pytest.approx(1.0, rel=1e-9) and audit.scale < 1e-9


@pytest.mark.parametrize("space, mechanism", [(Sphere(2), "laplace"), (Sphere(2), "kng"), (KendallShape(4), "laplace")])
def test_default_centre_is_canonical_and_warning_free(space, mechanism):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the random default centre gave a NaN internal release
        audit = audit_epsilon(space, mechanism, epsilon=1.0, n=5, radius=0.2, n_samples=500, rng=0)
    assert 0.0 <= audit.epsilon_lower_bound <= 1.0 and math.isfinite(audit.scale)
    np.testing.assert_allclose(default_center(Sphere(2)), NORTH)


def test_default_sample_count_fits_the_time_budget(monkeypatch):
    kwargs = dict(epsilon=1.0, n=5, radius=0.2, center=NORTH, rng=0)
    monkeypatch.setattr(epsilon_module, "DRAW_BUDGET", 0.02)
    audit = audit_epsilon(Sphere(2), **kwargs)  # n_samples left to the default
    assert 100 <= audit.n_samples < 200_000 and audit.seconds_per_draw > 0
    assert 4 * audit.n_samples * audit.seconds_per_draw <= 0.02 * 1.001
    assert "timed pilot" in str(audit)
    assert audit_epsilon(Sphere(2), n_samples=300, **kwargs).seconds_per_draw is None  # given: used as is
    monkeypatch.setattr(epsilon_module, "DRAW_BUDGET", 1e-6)
    with pytest.raises(InvalidParameterError, match="pass n_samples"):
        audit_epsilon(Sphere(2), **kwargs)


@pytest.mark.parametrize("shift, delta", [(None, 0.0), (0.0, 1e-5)])
def test_plot_draws_epsilon_lines_only_on_a_known_loss_axis(shift, delta, tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    import matplotlib.axes

    from geodp.audit import plot_loss
    from geodp.audit.epsilon import EpsilonAudit

    rng = np.random.default_rng(0)
    audit = EpsilonAudit(
        space="Sphere(2)",
        mechanism="kng",
        epsilon=1.0,
        delta=delta,
        epsilon_lower_bound=0.4,
        confidence=0.95,
        n_samples=500,
        events=(),
        exact_epsilon=None,
        mutant=None,
        pair="",
        scale=0.1,
        seconds=0.0,
        log_normaliser_difference=shift,
        loss_samples=(rng.normal(size=500), rng.normal(size=500)),
    )
    lines, titles = [], []
    monkeypatch.setattr(matplotlib.axes.Axes, "axvline", lambda self, x, **kw: lines.append(x))
    original_title = matplotlib.axes.Axes.set_title
    monkeypatch.setattr(
        matplotlib.axes.Axes,
        "set_title",
        lambda self, text, **kw: (titles.append(text), original_title(self, text, **kw))[1],
    )
    plot_loss(audit, tmp_path / "loss.png")
    assert (tmp_path / "loss.png").stat().st_size > 0
    # unknown normalisers: the histogram is ℓ0 − ℓ1, shifted by an unknown constant, so no ±ε line
    assert lines == ([] if shift is None else [1.0, -1.0, 0.4, -0.4])
    assert ("δ = 1e-05" in titles[0]) == (delta > 0)


def _truncated_h2_laplace_oracle(sigma, radius, rho0):
    """Exact loss of the ball-truncated Laplace on H² between footpoints at the centre and at
    distance ``rho0`` from it, by our own quadrature: normalisers in polar coordinates about the
    centre (dvol = sinh ρ dρ dθ), the loss maximised on a fine polar grid of the ball."""

    def dist(rho, th):  # to the footpoint at (rho0, 0), by the hyperbolic law of cosines
        c = np.cosh(rho) * np.cosh(rho0) - np.sinh(rho) * np.sinh(rho0) * np.cos(th)
        return np.arccosh(np.maximum(c, 1.0))

    log_z = [
        np.log(
            integrate.dblquad(
                lambda th, rho, f=f: np.exp(-f(rho, th) / sigma) * np.sinh(rho),
                0,
                radius,
                0,
                2 * np.pi,
                epsabs=1e-12,
                epsrel=1e-10,
            )[0]
        )
        for f in (lambda rho, th: rho, dist)
    ]
    rho, th = np.meshgrid(np.linspace(0, radius, 401), np.linspace(0, 2 * np.pi, 801))
    loss = (rho - dist(rho, th)) / sigma + log_z[0] - log_z[1]
    return max(loss.max(), -loss.min()), log_z[1] - log_z[0]


def test_truncated_laplace_pair_at_the_boundary_has_the_quadrature_loss_and_catches_the_mutant():
    # H², n = 2, r = 1: the truncated Laplace (σ = 2Δ/ε, footpoint-dependent normaliser) is
    # audited on footpoints at the centre and on the boundary (Δ = 1 apart)
    space = Hyperbolic(2)
    real = audit_epsilon(space, "laplace", epsilon=1.0, n=2, radius=1.0, n_samples=20_000, rng=0)
    assert "boundary" in real.pair
    exact, log_ratio = _truncated_h2_laplace_oracle(real.scale, 1.0, 1.0)
    assert real.exact_epsilon == pytest.approx(exact, abs=1e-5)
    assert abs(real.log_normaliser_difference) == pytest.approx(abs(log_ratio), abs=1e-6)
    assert real.epsilon_lower_bound <= 1.0 and exact <= 1.0
    mutant = audit_epsilon(
        space, "laplace", epsilon=1.0, n=2, radius=1.0, n_samples=150_000, mutant="halve-scale", rng=0
    )
    assert mutant.epsilon_lower_bound > 1.0
