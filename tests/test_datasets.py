import numpy as np
import pytest
from scipy import signal

from geodp.datasets import covariance_descriptors, descriptor_radius, load_digit_descriptors
from geodp.errors import InvalidDataError
from geodp.manifolds import SPD


def descriptor_by_loops(img, eta):
    """Independent per-pixel implementation of U23 §6.2 (grey) for cross-checking."""
    h, w = img.shape
    sob = np.array([[1, 0, -1], [2, 0, -2], [1, 0, -1]]) / 4.0
    sec = np.outer([1, 4, 6, 4, 1], [1, 0, -2, 0, 1]) / 32.0
    corr = lambda k: signal.correlate2d(img, k, mode="same", boundary="fill")
    ix, iy, ixx, iyy = corr(sob), corr(sob.T), corr(sec), corr(sec.T)
    feats = []
    for r in range(h):
        for c in range(w):
            gx, gy = abs(ix[r, c]), abs(iy[r, c])
            angle = np.pi / 2 if gy == 0 and gx > 0 else (0.0 if gx == 0 else np.arctan(gx / gy))
            feats.append(
                [c / (w - 1), r / (h - 1), img[r, c], gx, gy, abs(ixx[r, c]), abs(iyy[r, c]), np.hypot(gx, gy), angle]
            )
    return np.cov(np.array(feats).T, bias=True) + eta * np.eye(9)


def test_descriptors_match_a_per_pixel_implementation():
    imgs = np.random.default_rng(0).random((3, 7, 9))
    ours = covariance_descriptors(imgs, eta=1e-3)
    for img, d in zip(imgs, ours):
        np.testing.assert_allclose(d, descriptor_by_loops(img, 1e-3), rtol=1e-12, atol=1e-14)


def adversarial_images(h=8, w=8):
    yy, xx = np.mgrid[:h, :w]
    rng = np.random.default_rng(1)
    yield from (rng.integers(0, 2, size=(h, w)).astype(float) for _ in range(200))
    yield ((xx + yy) % 2).astype(float)  # checkerboard: maximal gradients everywhere
    yield (xx % 2).astype(float)
    yield (yy % 2).astype(float)
    yield np.zeros((h, w))
    yield np.ones((h, w))
    single = np.zeros((h, w))
    single[h // 2, w // 2] = 1.0
    yield single


@pytest.mark.parametrize("eta", [1e-6, 1e-2, 1.0])
def test_radius_bound_holds_on_real_and_adversarial_images(eta):
    space = SPD(9, metric="log-euclidean")
    imgs = np.stack(list(adversarial_images()))
    r = descriptor_radius(1, eta)
    for X in (covariance_descriptors(imgs, eta), load_digit_descriptors(eta).descriptors):
        assert np.all(space.dist(np.eye(9), X) <= r)
        # the eigenvalue bounds behind it (U23 Lemma A.6 and Weyl)
        w = np.linalg.eigvalsh(X)
        assert w.min() >= eta * (1 - 1e-9) and w.max() <= 12 + eta


def test_rgb_descriptors_and_radius():
    imgs = np.random.default_rng(2).integers(0, 2, size=(50, 6, 6, 3)).astype(float)
    X = covariance_descriptors(imgs, eta=1e-6)
    assert X.shape == (50, 11, 11)
    assert np.all(SPD(11, metric="log-euclidean").dist(np.eye(11), X) <= descriptor_radius(3, 1e-6))
    assert np.linalg.eigvalsh(X).max() <= 14 + 1e-6


def test_digits_loader():
    data = load_digit_descriptors(classes=[0, 3])
    assert set(np.unique(data.target)) == {0, 3}
    assert np.all(SPD(9).belongs(data.descriptors))
    assert data.radius == descriptor_radius(1, 1e-6)


@pytest.mark.parametrize(
    "images,match",
    [
        (np.full((2, 4, 4), 2.0), r"\[0, 1\]"),
        (np.zeros((2, 4, 4, 2)), "shape"),
        (np.zeros((2, 1, 4)), "2×2"),
        (np.zeros((4, 4)), "axes"),
    ],
)
def test_bad_images(images, match):
    with pytest.raises(InvalidDataError, match=match):
        covariance_descriptors(images)


def test_bad_loader_classes():
    with pytest.raises(InvalidDataError, match="classes"):
        load_digit_descriptors(classes=[11])
