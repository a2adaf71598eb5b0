"""DP-RiemOpt's two settings beside geodp's private gradient descent, output perturbation and PGA,
and the outlier study of the geometric median.

DP-RiemOpt (Han, Mishra, Jawanpuria & Gao 2024; its MATLAB code) runs private Riemannian gradient
descent whose tangent Gaussian noise is drawn by Metropolis–Hastings (MATLAB's ``mhsample``: a
unit random-walk proposal on the tangent coordinates, 10,000 burn-in steps and thinning 10, so
10,010 steps per draw). Reimplemented here, in its two settings:

* **SPD(2) mean** (``mean_spd.m``): Wishart(I/2, 2) records kept within affine distance 1 of I,
  ε = 0.1, δ = 1e-3, T = n, step 0.01, L0 = 1, σ² = T·log(1/δ)·L0²/(n²ε²) on the mean gradient;
  excess risk |F(W) − F*|, F the mean squared distance. Baseline of theirs: the Riemannian
  Laplace with σ = 2/(nε); here geodp's ``PrivateFrechetMean`` (exact Laplace, sound Δ).
* **PCA on S^49** (``pca_sphere.m``): records z_i ∈ R^50 from their ``genZ`` (eigenvalues 1,
  1 − ν, …, 1 − 1.4ν and |N(0, 1)|/d, ν = 1e-3), A = Σ z_i z_iᵀ, the leading eigenvector by
  descent on the sphere from a uniform start, step 0.2, T = ⌈log(n²ε²/(d·L0²·log(1/δ)))⌉,
  σ² = T·log(1/δ)·L0²/(n²·2ε) as printed (``eps*2``), L0 = max_i |z_i|² read from the data;
  excess risk |wᵀAw − 1|. Their code draws this noise exactly (``normrnd``); the MH variant
  applies their SPD sampler, with the proposal scaled to σ (a unit step would never be accepted at
  σ ≈ 1e-3, and the chain would return no noise).

Their calibrations are not sound under replace-one adjacency (the SPD σ is 1.32× below the sound
one: ε ≈ 0.14 for the claimed 0.1; the PCA σ is for the mean gradient while A is a sum, and uses
2ε for ε²: ≈ 12·n times below the sound one): the "geodp" rows use the sound calibrations
(docs/math.md §13, §14), which is why they can have larger excess risk.
"""

from __future__ import annotations

import math
import time

import numpy as np
from scipy import stats

from geodp.frechet import frechet_mean
from geodp.manifolds import SPD, Euclidean, Sphere
from geodp.models import PrivateFrechetMean, PrivateGeometricMedian, PrivatePrincipalGeodesics
from geodp.optim import clipped_gradient_sum, descend, gd_guarantee, private_riemannian_gd

__all__ = [
    "BURN_IN",
    "DELTA",
    "EPSILON",
    "PCA_METHODS",
    "SPD_METHODS",
    "THIN",
    "gen_z",
    "mh_tangent_coordinates",
    "outlier_shifts",
    "run_pca_study",
    "run_spd_study",
    "wishart_within_one",
]

EPSILON, DELTA = 0.1, 1e-3
BURN_IN, THIN = 10_000, 10
SPD_STEP, PCA_STEP, PCA_DIM, PCA_NU = 0.01, 0.2, 50, 1e-3
_SPD, _IDENTITY = SPD(2), np.eye(2)
_SPHERE = Sphere(PCA_DIM - 1)

SPD_METHODS = ("their (MH noise)", "their sigma, exact noise", "geodp optim (sound sigma)", "geodp Laplace (output)")
PCA_METHODS = ("their (MH noise)", "their sigma, exact noise", "geodp optim (sound sigma)", "geodp PGA (Analyze Gauss)")


def mh_tangent_coordinates(gram, sigma, rng, *, proposal_scale=1.0) -> np.ndarray:
    """DP-RiemOpt's sampler: a random-walk Metropolis–Hastings chain from 0 on the tangent
    coordinates, target ``exp(−vᵀ·gram·v / 2σ²)`` (the metric's norm, ``gram`` its matrix in these
    coordinates), proposal ``v + proposal_scale·N(0, I)``, ``BURN_IN + THIN`` steps; the last
    state. Approximate: the chain's law after finitely many steps is not the target.

    Examples
    --------
    >>> import numpy as np
    >>> v = mh_tangent_coordinates(np.eye(3), 1.0, np.random.default_rng(0))
    >>> v.shape
    (3,)
    """
    dim = gram.shape[0]
    steps = proposal_scale * rng.standard_normal((BURN_IN + THIN, dim))
    logu = np.log(rng.uniform(size=BURN_IN + THIN))
    scale = 1.0 / (2.0 * sigma**2)
    v, energy = np.zeros(dim), 0.0
    for s, lu in zip(steps, logu):  # sequential by nature: one Python step per MH step
        w = v + s
        e = float(w @ gram @ w) * scale
        if lu < energy - e:
            v, energy = w, e
    return v


# ----------------------------------------------------------------------------- SPD(2) mean
def wishart_within_one(n, rng) -> np.ndarray:
    """n Wishart(I/2, 2) samples at affine distance < 1 from I (rejection, as ``mean_spd.m``).

    Examples
    --------
    >>> import numpy as np
    >>> wishart_within_one(3, np.random.default_rng(0)).shape
    (3, 2, 2)
    """
    law = stats.wishart(df=2, scale=_IDENTITY / 2)
    out: list = []
    while len(out) < n:
        draws = law.rvs(size=4 * n, random_state=rng)
        ok = np.all(np.linalg.eigvalsh(draws) > 0, axis=-1)
        draws = draws[ok]
        out.extend(draws[_SPD.unchecked.dist(_IDENTITY, draws) < 1.0])
    return np.array(out[:n])


def _sym2(c):
    """Their ``vec2mat``: coordinates (a, b, c) to [[a, b], [b, c]]."""
    return np.array([[c[0], c[1]], [c[1], c[2]]])


def _spd_gram(W):
    basis = [_sym2(e) for e in np.eye(3)]
    return np.array([[_SPD.unchecked.inner(W, a, b) for b in basis] for a in basis])


def _spd_risk(W, X):
    return float(np.mean(_SPD.unchecked.dist(W, X) ** 2))


def _their_spd(X, rng, noise):
    n, W = X.shape[0], _IDENTITY
    sigma = math.sqrt(n * math.log(1 / DELTA)) / (n * EPSILON)  # T = n, L0 = 1
    for _ in range(n):
        g = -np.mean(_SPD.unchecked.log(W, X), axis=0)  # as mean_spd.m: no clipping (records within 1 of I)
        if noise == "mh":
            z = _sym2(mh_tangent_coordinates(_spd_gram(W), sigma, rng))
        else:
            z = sigma * _SPD.unchecked.random_tangent(W, rng=rng)
        W = _SPD.unchecked.exp(W, -SPD_STEP * (g + z))
    return W


def _geodp_spd(X, rng):
    return private_riemannian_gd(
        _SPD, lambda W, R: -_SPD.unchecked.log(W, R), X, epsilon=EPSILON, delta=DELTA, iterations=X.shape[0],
        step=SPD_STEP, clip=1.0, center=_IDENTITY, radius=1.0, random_state=rng,
    ).point  # fmt: skip


def _laplace_spd(X, rng):
    model = PrivateFrechetMean(_SPD, epsilon=EPSILON, center=_IDENTITY, radius=1.0, project_to_ball=True,
                               random_state=rng)  # fmt: skip
    return model.fit(X).mean_


_SPD_FITS = {
    "their (MH noise)": lambda X, rng: _their_spd(X, rng, "mh"),
    "their sigma, exact noise": lambda X, rng: _their_spd(X, rng, "exact"),
    "geodp optim (sound sigma)": _geodp_spd,
    "geodp Laplace (output)": _laplace_spd,
}


def run_spd_study(sizes, reps, methods=SPD_METHODS, seed=0) -> list[dict]:
    """Rows ``{setting, n, rep, method, excess, seconds}``: each repetition draws one dataset and
    runs every method on it (interleaved), each with its own seeded generator.

    Examples
    --------
    >>> rows = run_spd_study([10], 1, methods=("geodp Laplace (output)",))
    >>> rows[0]["method"], rows[0]["excess"] >= 0
    ('geodp Laplace (output)', True)
    """
    rows = []
    for n in sizes:
        for rep in range(reps):
            X = wishart_within_one(n, np.random.default_rng([seed, n, rep]))
            best = _spd_risk(frechet_mean(_SPD, X), X)
            for i, method in enumerate(methods):
                start = time.perf_counter()
                W = _SPD_FITS[method](X, np.random.default_rng([seed, n, rep, i + 1]))
                seconds = time.perf_counter() - start
                rows.append(dict(setting="spd2", n=n, rep=rep, method=method, excess=abs(_spd_risk(W, X) - best),
                                 seconds=seconds))  # fmt: skip
    return rows


# ----------------------------------------------------------------------------- PCA on S^49
def gen_z(n, rng, d=PCA_DIM, nu=PCA_NU) -> np.ndarray:
    """Their ``genZ``: ``U·diag(D)·V``, U (n × d) and V (d × d) orthonormal, D the eigenvalue
    profile of the module docstring; the top eigenvalue of ``ZᵀZ`` is 1.

    Examples
    --------
    >>> import numpy as np
    >>> Z = gen_z(100, np.random.default_rng(0))
    >>> Z.shape, round(float(np.linalg.eigvalsh(Z.T @ Z)[-1]), 6)
    ((100, 50), 1.0)
    """
    top = 1.0 - nu * np.array([0.0, 1.0, 1.1, 1.2, 1.3, 1.4])
    D = np.concatenate([top, np.abs(rng.standard_normal(d - 6)) / d])
    U = np.linalg.qr(rng.standard_normal((n, d)))[0]
    V = np.linalg.qr(rng.standard_normal((d, d)))[0]
    return U @ (D[:, None] * V)


def _pca_schedule(Z):
    n, d = Z.shape
    L0 = float(np.max(np.sum(Z**2, axis=1)))
    T = max(1, math.ceil(math.log(n**2 * EPSILON**2 / (d * L0**2 * math.log(1 / DELTA)))))
    sigma = math.sqrt(T * math.log(1 / DELTA) * L0**2 / (n**2 * EPSILON * 2))
    return L0, T, sigma


def _their_pca(Z, rng, noise):
    A = Z.T @ Z
    _, T, sigma = _pca_schedule(Z)
    w = _SPHERE.random_point(rng=rng)
    for _ in range(T):
        g = _SPHERE.to_tangent(w, -2.0 * A @ w)
        if noise == "mh":  # coordinates in an orthonormal basis of T_w S^49 (their genbasis), MH-drawn
            basis = np.linalg.svd(w[None])[2][1:]
            z = mh_tangent_coordinates(np.eye(PCA_DIM - 1), sigma, rng, proposal_scale=2.4 * sigma / 7.0) @ basis
        else:
            z = sigma * _SPHERE.unchecked.random_tangent(w, rng=rng)
        w = _SPHERE.unchecked.exp(w, -PCA_STEP * (g + z))
    return w


def _geodp_pca_gd(Z, rng):
    """Private RGD on f_i(w) = −n(z_iᵀw)² (mean −wᵀAw), clip 2n·L0 (their L0), same T and step:
    :func:`~geodp.optim.descend` with the noise of :func:`~geodp.optim.gd_guarantee` (the records are
    vectors of R^50, not points of the sphere, so ``private_riemannian_gd``'s check does not apply)."""
    n = Z.shape[0]
    L0, T, _ = _pca_schedule(Z)
    start = _SPHERE.random_point(rng=rng)
    settings = dict(iterations=T, step=PCA_STEP, clip=2.0 * n * L0, center=start, radius=math.pi / 2)
    guarantee = gd_guarantee(_SPHERE, epsilon=EPSILON, delta=DELTA, **settings)
    gradients = lambda w, R: -2.0 * n * (R @ w)[:, None] * R  # noqa: E731
    return descend(_SPHERE, gradients, Z, start, noise_multiplier=guarantee.scale / settings["clip"], rng=rng,
                   **settings)  # fmt: skip


def _geodp_pga(Z, rng):
    """PrivatePrincipalGeodesics on R^50 at the public footpoint 0, ball radius √L0 (their L0)."""
    L0, _, _ = _pca_schedule(Z)
    model = PrivatePrincipalGeodesics(
        Euclidean(PCA_DIM), 1, epsilon=EPSILON, delta=DELTA, center=np.zeros(PCA_DIM), radius=math.sqrt(L0),
        footpoint=np.zeros(PCA_DIM), random_state=rng,
    ).fit(Z)  # fmt: skip
    return model.components_[0]


_PCA_FITS = {
    "their (MH noise)": lambda Z, rng: _their_pca(Z, rng, "mh"),
    "their sigma, exact noise": lambda Z, rng: _their_pca(Z, rng, "exact"),
    "geodp optim (sound sigma)": _geodp_pca_gd,
    "geodp PGA (Analyze Gauss)": _geodp_pga,
}


def run_pca_study(sizes, reps, methods=PCA_METHODS, seed=0) -> list[dict]:
    """Rows ``{setting, n, rep, method, excess, seconds, iterations}`` of the S^49 PCA setting,
    interleaved like :func:`run_spd_study`.

    Examples
    --------
    >>> rows = run_pca_study([100], 1, methods=("their sigma, exact noise",))
    >>> 0.0 <= rows[0]["excess"] <= 1.0
    True
    """
    rows = []
    for n in sizes:
        for rep in range(reps):
            Z = gen_z(n, np.random.default_rng([seed, n, rep]))
            A, T = Z.T @ Z, _pca_schedule(Z)[1]
            for i, method in enumerate(methods):
                start = time.perf_counter()
                w = _PCA_FITS[method](Z, np.random.default_rng([seed, n, rep, i + 1]))
                seconds = time.perf_counter() - start
                rows.append(dict(setting="pca-s49", n=n, rep=rep, method=method, excess=abs(float(w @ A @ w) - 1.0),
                                 seconds=seconds, iterations=T))  # fmt: skip
    return rows


# ----------------------------------------------------------------------------- outliers
def outlier_shifts(distances, *, n=200, seed=0) -> list[dict]:
    """Replace one of ``n`` standard-normal records of R² by a point at each distance: how far
    the Fréchet mean moves (it follows the outlier, by distance/n), how far the private geometric
    median moves (same seed: same noise; it stays within its bound), and the largest move of one
    step's clipped gradient sum (at the two released medians and the centre; at most 2, the stated
    sensitivity, however far the outlier).

    Examples
    --------
    >>> row = outlier_shifts([100.0], n=50)[0]
    >>> row["mean_shift"] > 1.0, row["gradient_move"] <= 2.0
    (True, True)
    """
    from geodp.models.geometric_median import median_gradients

    space, rng = Euclidean(2), np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    settings = dict(epsilon=1.0, delta=1e-5, center=np.zeros(2), radius=3.0, iterations=50)
    clean = PrivateGeometricMedian(space, **settings, random_state=seed).fit(X).median_
    rows = []
    for distance in distances:
        Y = X.copy()
        Y[0] = [distance, 0.0]
        median = PrivateGeometricMedian(space, **settings, random_state=seed).fit(Y).median_
        iterates = [clean, median, np.zeros(2)]
        moves = [
            np.linalg.norm(clipped_gradient_sum(space, x, median_gradients(space, x, X), 1.0)
                           - clipped_gradient_sum(space, x, median_gradients(space, x, Y), 1.0))
            for x in iterates
        ]  # fmt: skip
        mean_shift = float(np.linalg.norm(Y.mean(axis=0) - X.mean(axis=0)))
        median_shift = float(np.linalg.norm(median - clean))
        rows.append(dict(distance=float(distance), mean_shift=mean_shift, median_shift=median_shift,
                         gradient_move=float(max(moves))))  # fmt: skip
    return rows
