"""Covariance descriptors of images (U23 §6.2, A.5; docs/math.md §8) and the bundled digit data."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from geodp.errors import InvalidDataError
from geodp.validation import check_finite_array, check_positive

__all__ = ["covariance_descriptors", "descriptor_radius", "load_digit_descriptors", "DigitDescriptors"]

# U23 A.5: Sobel kernels divided by 4 and the 5×5 second-derivative kernels divided by 32.
_SOBEL_X = np.array([[1, 0, -1], [2, 0, -2], [1, 0, -1]], dtype=float) / 4.0
_SECOND_X = (
    np.array(
        [[1, 0, -2, 0, 1], [4, 0, -8, 0, 4], [6, 0, -12, 0, 6], [4, 0, -8, 0, 4], [1, 0, -2, 0, 1]],
        dtype=float,
    )
    / 32.0
)
# Squared feature bounds: x, y, I (per channel), |Ix|, |Iy|, |Ixx|, |Iyy| ≤ 1; gradient norm ≤ √2;
# angle ≤ π/2. Σ c_j² = 11.47 (grey) / 13.47 (RGB) ≤ 12 / 14 (U23 Lemma A.6).
_EIGENVALUE_BOUND = {1: 12.0, 3: 14.0}


def _filter(images: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    # Correlate each image (axes 1, 2) with zero padding: outputs stay within the kernel's l1 norm.
    return ndimage.correlate(images, kernel[None], mode="constant", cval=0.0)


def covariance_descriptors(images, eta: float = 1e-6) -> np.ndarray:
    """Covariance descriptors ``R_η(I)`` of a batch of images.

    Features at every pixel (U23 §6.2): ``[x, y, I (each channel), |I_x|, |I_y|, |I_xx|, |I_yy|,
    √(I_x² + I_y²), arctan(|I_x|/|I_y|)]`` with ``x, y ∈ [0, 1]``; derivatives are taken of the
    grey level (the channel mean) with U23's kernels and zero padding, and the angle is
    ``arctan2(|I_x|, |I_y|) ∈ [0, π/2]``. ``R_η = cov(features) + η I``.

    Parameters
    ----------
    images : array_like, shape (N, h, w) or (N, h, w, 3)
        Grey or RGB images with values in [0, 1].
    eta : float, default 1e-6
        Ridge η > 0.

    Returns
    -------
    numpy.ndarray, shape (N, 9, 9) (grey) or (N, 11, 11) (RGB)

    Examples
    --------
    >>> import numpy as np
    >>> covariance_descriptors(np.random.default_rng(0).random((2, 8, 8))).shape
    (2, 9, 9)
    """
    eta = check_positive(eta, "eta")
    imgs = check_finite_array(images, "images", min_ndim=3)
    if imgs.ndim == 3:
        imgs = imgs[..., None]
    if imgs.ndim != 4 or imgs.shape[-1] not in (1, 3):
        raise InvalidDataError(f"images must have shape (N, h, w) or (N, h, w, 3), got {np.shape(images)}.")
    if imgs.min() < 0 or imgs.max() > 1:
        raise InvalidDataError(
            f"image values must lie in [0, 1] (got range [{imgs.min():g}, {imgs.max():g}]); "
            "divide by the maximum possible intensity (e.g. 255) first."
        )
    n, h, w, c = imgs.shape
    if h < 2 or w < 2:
        raise InvalidDataError(f"images must be at least 2×2 pixels, got {h}×{w}.")
    grey = imgs.mean(axis=-1)
    ix = _filter(grey, _SOBEL_X)
    iy = _filter(grey, _SOBEL_X.T)
    ixx = _filter(grey, _SECOND_X)
    iyy = _filter(grey, _SECOND_X.T)
    rows, cols = np.meshgrid(np.arange(h) / (h - 1), np.arange(w) / (w - 1), indexing="ij")
    feats = [np.broadcast_to(cols, grey.shape), np.broadcast_to(rows, grey.shape)]
    feats += [imgs[..., j] for j in range(c)]
    feats += [np.abs(ix), np.abs(iy), np.abs(ixx), np.abs(iyy), np.hypot(ix, iy), np.arctan2(np.abs(ix), np.abs(iy))]
    phi = np.stack(feats, axis=-1).reshape(n, h * w, -1)
    centred = phi - phi.mean(axis=1, keepdims=True)
    cov = np.einsum("npi,npj->nij", centred, centred) / (h * w)
    return cov + eta * np.eye(cov.shape[-1])


def descriptor_radius(n_channels: int = 1, eta: float = 1e-6) -> float:
    """Public radius r with ``‖Log R_η(I)‖_F ≤ r`` for every image (U23 Thm A.7, docs/math.md §8).

    ``r = √k · max(|ln η|, |ln(L + η)|)`` with ``(k, L) = (9, 12)`` grey and ``(11, 14)`` RGB. The
    ball is centred at the identity, in the log-Euclidean (and affine-invariant) distance.

    Examples
    --------
    >>> round(descriptor_radius(1, 1e-6), 4)
    41.4465
    """
    eta = check_positive(eta, "eta")
    if n_channels not in _EIGENVALUE_BOUND:
        raise InvalidDataError(f"n_channels must be 1 (grey) or 3 (RGB), got {n_channels!r}.")
    k = 9 if n_channels == 1 else 11
    return math.sqrt(k) * max(abs(math.log(eta)), abs(math.log(_EIGENVALUE_BOUND[n_channels] + eta)))


@dataclass(frozen=True)
class DigitDescriptors:
    """Descriptors of scikit-learn's bundled handwritten digits.

    Attributes
    ----------
    descriptors : numpy.ndarray, shape (N, 9, 9)
    target : numpy.ndarray, shape (N,)
        Digit labels.
    radius : float
        Public data-independent radius of the ball around the identity (:func:`descriptor_radius`).
    eta : float
    """

    descriptors: np.ndarray
    target: np.ndarray
    radius: float
    eta: float


def load_digit_descriptors(eta: float = 1e-6, classes=None) -> DigitDescriptors:
    """Load the real 8×8 grey digit images bundled with scikit-learn as 9×9 SPD descriptors.

    The 1,797 images (UCI optical digits, intensities 0–16) are scaled to [0, 1] and mapped by
    :func:`covariance_descriptors`. Nothing is downloaded.

    Parameters
    ----------
    eta : float, default 1e-6
    classes : sequence of int, optional
        Keep only these digits.

    Examples
    --------
    >>> data = load_digit_descriptors(classes=[0, 1])
    >>> data.descriptors.shape[1:], sorted(set(data.target.tolist()))
    ((9, 9), [0, 1])
    """
    from sklearn.datasets import load_digits

    digits = load_digits()
    images, target = digits.images / 16.0, digits.target
    if classes is not None:
        keep = np.isin(target, np.asarray(classes))
        if not np.any(keep):
            raise InvalidDataError(f"classes={classes!r} selects no digit; use values in 0..9.")
        images, target = images[keep], target[keep]
    return DigitDescriptors(covariance_descriptors(images, eta), target, descriptor_radius(1, eta), float(eta))
