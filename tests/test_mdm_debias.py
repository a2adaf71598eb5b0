"""PrivateMDM's debiased prediction: the offsets are the noise laws' second moments (checked
against samples of the mechanisms), a function of public parameters only (post-processing), and
the rule they give is neither biased towards the larger class nor towards the smaller one."""

from __future__ import annotations

import math

import numpy as np
import pytest

from geodp.calibration import gaussian_sigma
from geodp.errors import InvalidTypeError
from geodp.manifolds import SPD, Euclidean, Hyperbolic, Sphere
from geodp.mechanisms import LaplaceMechanism, TangentGaussianMechanism
from geodp.mechanisms.wrapped import WrappedGaussianMechanism, WrappedLaplaceMechanism
from geodp.models import PrivateMDM

ORIGIN = np.array([1.0, 0.0, 0.0, 0.0])  # of the hyperboloid H^3


def _squared_noise(mechanism, space, value, size, seed):
    """‖Z‖² of ``size`` releases of ``value``, read back in the chart / the tangent space at the
    public centre ``value`` (where Exp is a global diffeomorphism, so Log inverts it exactly)."""
    released = mechanism.randomise(value, rng=seed, size=size)
    if space.is_flat:
        offsets = space.to_coordinates(released) - space.to_coordinates(value)
        return np.sum(offsets**2, axis=-1)
    return space.norm(value, space.log(value, released)) ** 2


def _mechanisms():
    h3 = Hyperbolic(3)
    le = SPD(2, metric="log-euclidean")
    return [
        ("laplace, Euclidean(4)", Euclidean(4), LaplaceMechanism(Euclidean(4), epsilon=1.0, sensitivity=0.3), None),
        ("tangent-gaussian, LE-SPD(2)", le,
         TangentGaussianMechanism(epsilon=1.0, delta=1e-5, sensitivity=0.2, space=le), None),
        ("wrapped-laplace, H^3", h3,
         WrappedLaplaceMechanism(h3, epsilon=1.0, sensitivity=0.2, center=ORIGIN, radius=1.0), ORIGIN),
        ("wrapped-gaussian, H^3", h3,
         WrappedGaussianMechanism(h3, epsilon=1.0, delta=1e-5, sensitivity=0.2, center=ORIGIN, radius=1.0), ORIGIN),
    ]  # fmt: skip


@pytest.mark.parametrize("name, space, mechanism, center", _mechanisms(), ids=[m[0] for m in _mechanisms()])
def test_second_moment_matches_the_mechanisms_samples_and_catches_a_scale_mutant(name, space, mechanism, center):
    value = center if center is not None else (np.eye(2) if isinstance(space, SPD) else np.zeros(space.dim))
    draws = _squared_noise(mechanism, space, value, 40000, seed=3)
    claimed = mechanism.noise_second_moment(space.dim)
    se = draws.std() / math.sqrt(draws.size)
    assert abs(draws.mean() - claimed) < 4 * se, (name, draws.mean(), claimed)
    # A ×1.5 error in the noise scale is a ×2.25 error in the moment: far outside the sampling error.
    mutant = mechanism.rescaled(1.5).noise_second_moment(space.dim)
    assert abs(draws.mean() - mutant) > 50 * se


def test_curved_riemannian_laws_have_no_offset():
    assert LaplaceMechanism(Sphere(2), epsilon=1.0, sensitivity=0.1).noise_second_moment(2) is None


def _two_classes(dim, n_large, n_small, seed=0):
    """Two classes with the same law (all records near the centre): any systematic preference
    for one class is the prediction rule's bias, not signal."""
    rng = np.random.default_rng(seed)
    X = 0.05 * rng.normal(size=(n_large + n_small, dim))
    y = np.repeat([0, 1], [n_large, n_small])
    return X, y


def test_offsets_are_the_closed_forms_of_public_parameters():
    """E‖Z_c‖² = d·σ_c², σ_c the analytic Gaussian's at Δ = 2r/n_c (Euclidean mean), by a formula
    written here from the calibration module, not read from the model."""
    space, dim, radius = Euclidean(30), 30, 2.0
    X, y = _two_classes(dim, 60, 15)
    model = PrivateMDM(space, epsilon=2.0, delta=1e-5, mechanism="tangent-gaussian", center=np.zeros(dim),
                       radius=radius, debias=True, random_state=0).fit(X, y)  # fmt: skip
    expected = [dim * gaussian_sigma(2.0, 1e-5, 2 * radius / n) ** 2 for n in (60, 15)]
    np.testing.assert_allclose(model.noise_offsets_, expected, rtol=1e-6)


def test_offsets_do_not_depend_on_the_records():
    """Adversarial neighbours: every record at the centre against every record on the boundary
    (and beyond it, clipped): the offsets are identical, so the rule is post-processing."""
    space, dim = Euclidean(10), 10
    y = np.repeat([0, 1], [40, 10])
    inside = np.zeros((50, dim))
    boundary = np.tile(np.eye(dim)[0] * 3.0, (50, 1))
    beyond = np.tile(np.eye(dim)[1] * 1e6, (50, 1))
    kwargs = dict(epsilon=1.0, delta=1e-5, center=np.zeros(dim), radius=3.0, debias=True)
    for mechanism in ("laplace", "tangent-gaussian", "wrapped-gaussian", "wrapped-laplace"):
        offsets = [PrivateMDM(space, mechanism=mechanism, random_state=s, **kwargs).fit(X, y).noise_offsets_
                   for s, X in enumerate((inside, boundary, beyond))]  # fmt: skip
        assert offsets[0][0] > 0 and offsets[0][1] > offsets[0][0]  # the smaller class is noisier
        assert all(np.array_equal(offsets[0], o) for o in offsets[1:]), mechanism


def test_predictions_are_computed_from_the_releases_and_public_offsets_only():
    space, dim = Euclidean(8), 8
    X, y = _two_classes(dim, 30, 10, seed=1)
    model = PrivateMDM(space, epsilon=1.0, delta=1e-5, mechanism="tangent-gaussian", center=np.zeros(dim),
                       radius=1.0, debias=True, random_state=2).fit(X, y)  # fmt: skip
    tests = np.random.default_rng(5).normal(size=(200, dim))
    squared = np.sum((tests[:, None] - model.covmeans_[None]) ** 2, axis=-1)
    np.testing.assert_array_equal(model.predict(tests), np.argmin(squared - model.noise_offsets_, axis=1))
    proba = np.exp(-(squared - model.noise_offsets_))
    np.testing.assert_allclose(model.predict_proba(tests), proba / proba.sum(axis=1, keepdims=True), rtol=1e-9)
    np.testing.assert_allclose(model.transform(tests), np.sqrt(squared), rtol=1e-9)  # transform: not debiased


def _shares_of_small_class(model_kwargs, scales, fits=150, dim=100):
    """Over many fits on two classes with the same law (n = 200 and 20), the mean share of test
    points given to the small (noisier) class, with the offsets multiplied by each of ``scales``
    (0 is pyRiemann's rule; other values than 1 are mutants)."""
    space = Euclidean(dim)
    X, y = _two_classes(dim, 200, 20)
    tests = _two_classes(dim, 100, 0, seed=9)[0]
    shares = {scale: [] for scale in scales}
    for seed in range(fits):
        model = PrivateMDM(space, center=np.zeros(dim), radius=1.0, random_state=seed, **model_kwargs).fit(X, y)
        squared = model.transform(tests) ** 2
        for scale in scales:
            shares[scale].append(np.mean(np.argmin(squared - scale * model.noise_offsets_, axis=1) == 1))
        if seed == 0:  # predict is the rule at scale 1
            np.testing.assert_array_equal(model.predict(tests), np.argmin(squared - model.noise_offsets_, axis=1))
    return {scale: float(np.mean(v)) for scale, v in shares.items()}


@pytest.mark.parametrize("mechanism", ["tangent-gaussian", "laplace"])
def test_debiased_rule_is_unbiased_and_catches_mutant_offsets(mechanism):
    shares = _shares_of_small_class(
        dict(epsilon=0.5, delta=1e-5, mechanism=mechanism, debias=True), (1.0, 0.0, 1.5, 1 / 1.5)
    )
    assert 0.35 < shares[1.0] < 0.65  # no systematic preference (150 fits: s.e. ≈ 0.04)
    assert shares[0.0] < 0.05  # pyRiemann's rule: the larger class
    assert shares[1.5] > 0.95  # an offset ×1.5 too large: the noisier class
    assert shares[1 / 1.5] < 0.05  # ×1/1.5: the larger class again


def test_default_projection_and_debias_false_keep_pyriemanns_rule():
    space, dim = Euclidean(6), 6
    X, y = _two_classes(dim, 30, 10)
    kwargs = dict(epsilon=1.0, delta=1e-5, mechanism="tangent-gaussian", center=np.zeros(dim), radius=1.0)
    assert not PrivateMDM(space, random_state=0, **kwargs).fit(X, y).noise_offsets_.any()  # the default
    assert PrivateMDM(space, debias=True, random_state=0, **kwargs).fit(X, y).noise_offsets_.all()
    assert (
        not PrivateMDM(space, debias=True, project_to_ball=True, random_state=0, **kwargs)
        .fit(X, y)
        .noise_offsets_.any()
    )
    with pytest.raises(InvalidTypeError, match="debias"):
        PrivateMDM(space, debias="yes", **kwargs).fit(X, y)


def test_debias_says_when_it_does_nothing():
    """The cold user's case: affine-invariant SPD with the Laplace has no closed-form second moment,
    so debias=True left every offset at 0 silently."""
    rng = np.random.default_rng(0)
    X = np.stack([np.eye(2) + 0.1 * np.diag(rng.uniform(size=2)) for _ in range(40)])
    y = np.repeat([0, 1], 20)
    with pytest.warns(UserWarning, match="debias=True has no effect"):
        model = PrivateMDM(SPD(2), epsilon=1.0, center=np.eye(2), radius=1.0, debias=True, random_state=0).fit(X, y)
    assert np.all(model.noise_offsets_ == 0.0)
