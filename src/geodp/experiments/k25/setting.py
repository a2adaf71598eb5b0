"""K25 §4.1's setting on the unit sphere S²: the data, the public ball and residual clip of the sound
release, the budget, and the labels of the two releases."""

from __future__ import annotations

import math

import numpy as np

from geodp.manifolds import Sphere
from geodp.validation import as_generator

__all__ = [
    "AS_PUBLISHED",
    "EPSILON",
    "N_GRID",
    "N_SPHERE",
    "RADIUS",
    "SOUND",
    "TAU",
    "VELOCITY",
    "ZETA",
    "k25_sphere_data",
]


N_SPHERE = 20
N_GRID = (10, 20, 50, 100, 200)  # K25 Fig. 6 does not give its n values
EPSILON = 2.0  # K25: ε = 1 per stage, 2 in total
RADIUS = 0.7
VELOCITY = 2.0 * RADIUS
TAU = 0.1  # public residual clip of the sound release (K25's data have residuals ≈ 0.04)
ZETA = 0.8
SOUND = "sound (joint KNG, σ = 2Δ/ε)"
AS_PUBLISHED = "K25 as published (two-stage, Thm 3.4)"


def k25_sphere_data(n: int = N_SPHERE, *, rng=None):
    """K25 §4.1's data on the unit sphere S²: points on a geodesic plus N(0, 0.001 I₃), normalised.

    ``q0`` uniform on S², ``ζ`` a uniform tangent direction of length 0.8 (K25 does not give
    it), ``t_i`` uniform on [0, 1], ``y_i = normalise(Exp(q0, t_i ζ) + N(0, 0.001 I₃))``.

    Returns
    -------
    t : numpy.ndarray, shape (n,)
    Y : numpy.ndarray, shape (n, 3)
    center : numpy.ndarray, shape (3,)
        The geodesic's midpoint ``Exp(q0, ζ/2)`` (a public design value: the data ball's centre).

    Examples
    --------
    >>> t, Y, c = k25_sphere_data(rng=0)
    >>> t.shape, Y.shape, bool(np.allclose(np.linalg.norm(Y, axis=1), 1.0))
    ((20,), (20, 3), True)
    """
    rng = as_generator(rng)
    space = Sphere(2)
    q0 = rng.standard_normal(3)
    q0 /= np.linalg.norm(q0)
    zeta = space.random_tangent(q0, rng=rng)
    zeta *= ZETA / np.linalg.norm(zeta)
    t = rng.uniform(0.0, 1.0, n)
    Y = space.exp(q0, t[:, None] * zeta) + rng.normal(0.0, math.sqrt(0.001), (n, 3))
    Y /= np.linalg.norm(Y, axis=1, keepdims=True)
    return t, Y, space.exp(q0, 0.5 * zeta)
