"""Kendall's space of planar shapes ``Σ^k_2`` (docs/math.md §1; S22 §2.5).

A configuration of ``k`` landmarks in the plane (a ``k × 2`` array) is centred and scaled to unit
Frobenius norm: its *preshape*, a point of the unit sphere in the centred configurations. Two
preshapes that differ by a rotation are the same shape. geodp stores preshapes (``k × 2`` real
arrays) and computes every quantity on the quotient: distances and logarithms first rotate the
second argument onto the first (Procrustes), and tangent vectors are horizontal (orthogonal to the
rotation orbit). Viewing a preshape as ``z ∈ C^k``, ``⟨z, w⟩ = zᴴ w``.
"""

from __future__ import annotations

import math

import numpy as np

from geodp.errors import InvalidDataError, InvalidParameterError, NotOnManifoldError
from geodp.manifolds.base import Manifold
from geodp.manifolds.sphere import sphere_angle_parts, sphere_exp_unit, sphere_log_parts
from geodp.validation import as_generator, check_finite_array

__all__ = ["KendallShape"]

_AXES = (-2, -1)


def _contiguous(a, dtype):
    """``a`` as a C-contiguous array of ``dtype`` (0-d stays 0-d, unlike ``np.ascontiguousarray``)."""
    a = np.asarray(a, dtype=dtype)
    return a if a.flags.c_contiguous else a.copy()


def to_complex(x):
    """Planar landmarks ``(..., k, 2)`` as complex numbers ``(..., k)``: a read-only view of a
    C-contiguous float64 input (the layout of ``complex128``), no copy.

    Examples
    --------
    >>> to_complex([[1.0, 2.0]]).tolist()
    [(1+2j)]
    """
    z = _contiguous(x, np.float64).view(np.complex128)[..., 0]
    z.flags.writeable = False
    return z


def to_real(z):
    """Complex landmarks ``(..., k)`` as planar ones ``(..., k, 2)`` (inverse of :func:`to_complex`;
    a view of a C-contiguous ``complex128`` input).

    Examples
    --------
    >>> to_real(np.array([1 + 2j])).tolist()
    [[1.0, 2.0]]
    """
    return _contiguous(z, np.complex128)[..., None].view(np.float64)


def _turned(v):
    """``i·v`` in the real layout: each landmark ``(a, b)`` becomes ``(−b, a)``."""
    return np.stack([-v[..., 1], v[..., 0]], axis=-1)


def _hermitian(z, w):
    """``zᴴ w`` over the landmark axis."""
    return np.sum(np.conj(z) * w, axis=-1)


def _unit_phase(c):
    """``c/|c|``, with 1 where ``c = 0`` (the cut locus, where every rotation is optimal)."""
    a = np.abs(c)
    return np.where(a > 0, c / np.where(a > 0, a, 1.0), 1.0)


def _unit_phase_minus_one(c):
    """``c/|c| − 1`` without cancellation near phase 0 (0 where ``c = 0``):
    ``Re = −Im(c)²/(|c|(|c| + Re c))`` when ``Re c ≥ 0``."""
    a = np.abs(c)
    safe = np.where(a > 0, a, 1.0)
    re_pos = -(c.imag**2) / (safe * np.where(a + c.real > 0, a + c.real, 1.0))
    re = np.where(c.real >= 0, re_pos, (c.real - a) / safe)
    return np.where(a > 0, re + 1j * (c.imag / safe), 0.0)


class KendallShape(Manifold):
    """Kendall's shape space of ``n_landmarks`` planar landmarks (``≅ CP^(k−2)``).

    Parameters
    ----------
    n_landmarks : int
        Number of landmarks ``k ≥ 3``.

    Notes
    -----
    Real dimension ``2k − 4``; sectional curvature in ``[1, 4]``; injectivity radius ``π/2``.
    Isotropic: the volume in geodesic polar coordinates is ``sin(t)^(2k−5) cos(t)`` on
    ``[0, π/2)``. For ``k = 3`` it is the sphere of radius ½.

    Precision (against 50-digit arithmetic): distances near ``π/2`` and between preshapes that
    are already aligned (as :meth:`align` and :meth:`exp` return them) are accurate to ~2e-16
    relative down to 1e-8; between arbitrarily rotated preshapes the rotation itself is rounded,
    an absolute error of about 1e-16.

    Examples
    --------
    >>> import numpy as np
    >>> space = KendallShape(3)
    >>> triangle = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    >>> turned = triangle @ np.array([[0.0, 1.0], [-1.0, 0.0]]) * 5.0 + 2.0
    >>> x, y = space.project(triangle), space.project(turned)
    >>> round(float(space.dist(x, y)), 12)  # rotated, scaled, moved: the same shape
    0.0
    >>> space.project(triangle).sum(axis=0).round(12).tolist()  # preshapes are centred
    [0.0, 0.0]
    """

    is_homogeneous = True
    curvature_bounds = (1.0, 4.0)
    injectivity_radius = math.pi / 2
    cut_radius = math.pi / 2
    volume_growth_rate = 0.0
    closed_forms = frozenset({"kendall-shape-directions"})

    def __init__(self, n_landmarks: int):
        if isinstance(n_landmarks, bool) or not isinstance(n_landmarks, (int, np.integer)) or n_landmarks < 3:
            raise InvalidParameterError(f"n_landmarks must be an integer >= 3, got {n_landmarks!r}.")
        self.n_landmarks = int(n_landmarks)
        self.point_shape = (self.n_landmarks, 2)
        self.dim = 2 * self.n_landmarks - 4

    def __repr__(self) -> str:
        return f"KendallShape({self.n_landmarks})"

    # ----------------------------------------------------------------- geometry
    def align(self, x, y):
        """Rotate preshape ``y`` onto ``x`` (optimal Procrustes rotation; ``⟨x, y'⟩`` real ≥ 0)."""
        z, w = to_complex(x), to_complex(y)
        return to_real(w * np.conj(_unit_phase(_hermitian(z, w)))[..., None])

    def _aligned_parts(self, x, y):
        """``(y' − x, y' + x)`` for ``y' = align(x, y) = e^{−iφ} y``, formed as
        ``e^{−iφ}((y − x) − (e^{iφ} − 1) x)``: when ``y`` is already nearly aligned the small
        difference is not swamped by the rounding of the rotation."""
        z, w = to_complex(x), to_complex(y)
        h = _hermitian(z, w)
        back = np.conj(_unit_phase(h))[..., None]
        pm1 = _unit_phase_minus_one(h)[..., None]
        diff = back * ((w - z) - pm1 * z)
        total = back * ((w + z) + pm1 * z)
        return to_real(diff), to_real(total)

    def _dist(self, x, y):
        """``arccos |⟨x, y⟩|``, computed as the sphere angle ``2·atan2(|y' − x|, |y' + x|)``
        between ``x`` and aligned ``y'`` (see :meth:`_aligned_parts`)."""
        return sphere_angle_parts(*self._aligned_parts(x, y), _AXES)

    def _log(self, x, y):
        """Sphere logarithm from ``x`` to aligned ``y``: horizontal, norm ``ρ(x, y)``."""
        x = np.asarray(x, dtype=float)
        return sphere_log_parts(x, *self._aligned_parts(x, y), _AXES)

    def _exp(self, x, v):
        """``cos|v| x + sin|v| v/|v|`` for a horizontal ``v``."""
        return sphere_exp_unit(np.asarray(x, dtype=float), np.asarray(v, dtype=float), _AXES)

    def _polar_exp(self, x, direction, t):
        """``cos(t) x + sin(t) u`` for a unit horizontal ``u``."""
        t = np.asarray(t, dtype=float)[..., None, None]
        return np.cos(t) * np.asarray(x, dtype=float) + np.sin(t) * np.asarray(direction, dtype=float)

    def _inner(self, x, u, v):
        """Real part of ``uᴴ v`` (the Frobenius product of the ``k × 2`` arrays)."""
        out = np.sum(np.asarray(u, dtype=float) * np.asarray(v, dtype=float), axis=_AXES)
        return np.broadcast_to(out, np.broadcast_shapes(out.shape, np.shape(x)[:-2]))

    def _transport(self, x, y, v):
        """Parallel transport of a horizontal ``v`` along the geodesic from ``x`` to ``y``.

        With ``u`` the unit direction and ``ρ`` the length, the complex-linear part along ``u``
        (spanned by ``u`` and ``iu``) turns with the geodesic and the rest is constant:
        ``v + ⟨u, v⟩((cos ρ − 1) u − sin ρ x)``; the result is then rotated with ``y``'s
        representative (``CP^n`` has parallel complex structure).
        """
        x, y, v = (np.asarray(a, dtype=float) for a in (x, y, v))
        z, vc = to_complex(x), to_complex(v)
        phase = _unit_phase(_hermitian(z, to_complex(y)))
        log = to_complex(self._log(x, y))
        rho = np.sqrt(np.sum(np.abs(log) ** 2, axis=-1))[..., None]
        u = np.where(rho > 0, log / np.where(rho > 0, rho, 1.0), 0.0)
        moved = vc + _hermitian(u, vc)[..., None] * ((np.cos(rho) - 1.0) * u - np.sin(rho) * z)
        return to_real(moved * phase[..., None])

    def to_tangent(self, x, v):
        """Horizontal projection of a configuration-space vector: centre it, remove ``⟨x, v⟩ x``."""
        vc = to_complex(v)
        vc = vc - vc.mean(axis=-1, keepdims=True)
        z = to_complex(x)
        return to_real(vc - _hermitian(z, vc)[..., None] * z)

    def reference_point(self):
        """The preshape of the regular ``k``-gon (landmarks ``(cos 2πj/k, sin 2πj/k)``)."""
        angles = 2.0 * math.pi * np.arange(self.n_landmarks) / self.n_landmarks
        return self.project(np.stack([np.cos(angles), np.sin(angles)], axis=1))

    # ------------------------------------------------------------ Fréchet mean
    _karcher_exact_distances = True  # angles from |⟨x, x_i⟩|: π/2 at the cut locus, never a zero log

    def _log_sums(self, xs, data, weights):
        """``(Σ_i w_i log_x(y_i), ρ(x, y_i))`` for each point ``x`` of ``xs`` (``m × k × 2``), from
        two real matrix products and no ``m × n × k`` temporary.

        With ``⟨x, y_i⟩_C = cos θ_i·e^{iφ_i}``, ``log_x(y_i) = (θ_i/sin θ_i)(e^{−iφ_i} y_i − cos θ_i·x)``,
        so the sum is ``Σ_i c_i y_i − (Σ_i a_i cos θ_i) x`` with ``a_i = w_i θ_i/sin θ_i`` and
        ``c_i = a_i e^{−iφ_i}``. In the real layout ``⟨x, y⟩_C = x·y + i (ix)·y`` and
        ``c y = Re c·y + Im c·(iy)``, so both products are real (BLAS is ~10× faster there than on
        complex arrays). As on the sphere, ``sin θ = √((1 − cos θ)(1 + cos θ))`` and
        ``θ = atan2(sin θ, cos θ)``: the rounding of ``cos θ`` costs ``θ`` ~1e-8 near 0 but barely
        moves ``θ/sin θ``, so the sum is accurate to rounding in absolute terms."""
        m, n = len(xs), len(data)
        y = data.reshape(n, -1)
        x = xs.reshape(m, -1)
        products = np.concatenate([x, _turned(xs).reshape(m, -1)]) @ y.T
        re, im = products[:m], products[m:]
        modulus = np.hypot(re, im)
        cos = np.minimum(modulus, 1.0)
        sin = np.sqrt((1.0 - cos) * (1.0 + cos))
        theta = np.arctan2(sin, cos)
        a = weights * np.where(sin > 0, theta / np.where(sin > 0, sin, 1.0), 1.0)
        # e^{−iφ} = conj⟨x, y⟩/|⟨x, y⟩|, and 1 at the cut locus (every rotation is optimal there).
        safe = np.where(modulus > 0, modulus, 1.0)
        c_re = np.where(modulus > 0, a * re / safe, a)
        c_im = np.where(modulus > 0, -a * im / safe, 0.0)
        sums = np.concatenate([c_re, c_im]) @ y
        total = sums[:m] + _turned(sums[m:].reshape(xs.shape)).reshape(m, -1) - np.sum(a * cos, axis=1)[:, None] * x
        return total.reshape(xs.shape), theta

    def _karcher_direction(self, x, X, weights):
        """``Σ w_i log_x x_i`` by :meth:`_log_sums` (two matrix products per pass)."""
        direction, theta = self._log_sums(np.asarray(x, dtype=float)[None], X, weights)
        return direction[0], 0.5 * float(np.sum(weights * theta[0] ** 2)), float(np.max(theta))

    def _mean_log_norms(self, xs, data):
        """``‖∇F_D(x)‖ = ‖(1/n) Σ_i log_x(y_i)‖`` for each point of ``xs``, by :meth:`_log_sums`."""
        grad, _ = self._log_sums(xs, data, np.full(len(data), 1.0 / len(data)))
        return np.sqrt(np.sum(grad * grad, axis=_AXES))

    def _adjoint_exp_derivatives(self, p, u, w, y=None):
        """Kendall planar shapes (CP^(k−2), holomorphic curvature 4), in the horizontal lift.

        The geodesic lifts to ``γ(t) = cos(tL) z + sin(tL) û``; a horizontal ``w`` at ``y`` splits
        as ``w = c T + r`` with ``T = −sin(L) z + cos(L) û``, ``c = Tᴴw ∈ C`` and ``r``
        complex-orthogonal to ``z`` and ``û`` (constant under parallel transport). Back at ``z``:
        ``Re(c) û`` (curvature eigenvalue 0), ``Im(c) iû`` (eigenvalue 4: ``cos 2L``,
        ``sin 2L/2L``) and ``r`` (eigenvalue 1: ``cos L``, ``sin L/L``). See docs/math.md §9.
        """
        z, uc, wc = to_complex(p), to_complex(u), to_complex(w)
        length = np.sqrt(np.sum(np.abs(uc) ** 2, axis=-1))
        unit = np.where(length[..., None] > 0, uc / np.where(length > 0, length, 1.0)[..., None], 0.0)
        lc = length[..., None]
        velocity = -np.sin(lc) * z + np.cos(lc) * unit
        c = np.sum(np.conj(velocity) * wc, axis=-1)[..., None]
        rest = wc - c * velocity
        along, across = c.real * unit, c.imag * (1j * unit)
        dp = along + np.cos(2.0 * lc) * across + np.cos(lc) * rest
        du = along + np.sinc(2.0 * lc / np.pi) * across + np.sinc(lc / np.pi) * rest
        return to_real(dp), to_real(du)

    def _most_curved_partner(self, x, v):
        """``i·v``: on CP^(k−2) the plane of ``v`` and its complex rotation has the holomorphic
        curvature 4, the largest (horizontal: ``zᴴ(i v) = i zᴴv = 0``)."""
        return to_real(1j * to_complex(v))

    # --------------------------------------------------------------- membership
    def _belongs(self, x, rtol):
        centred = np.linalg.norm(x.sum(axis=-2), axis=-1) <= rtol
        unit = np.abs(np.linalg.norm(x, axis=_AXES) - 1.0) <= rtol
        return centred & unit

    def project(self, x):
        """Preshape of a configuration: subtract the centroid and scale to unit norm.

        Raises
        ------
        NotOnManifoldError
            A configuration whose landmarks all coincide has no shape.
        """
        x = np.asarray(x, dtype=float)
        x = _rescaled(x, np.max(np.abs(x), axis=_AXES))
        centred = x - x.mean(axis=-2, keepdims=True)
        size = np.linalg.norm(centred, axis=_AXES)
        scale = np.maximum(np.max(np.abs(x), axis=_AXES), np.finfo(float).tiny)
        degenerate = ~(size > 1e-12 * scale)
        if np.any(degenerate):
            where = (
                f"; first at batch index {tuple(int(i) for i in np.argwhere(degenerate)[0])}" if degenerate.ndim else ""
            )
            raise NotOnManifoldError(
                f"{int(np.count_nonzero(degenerate))} configuration(s) are degenerate (all landmarks "
                f"equal{where}): a shape needs at least two distinct landmarks."
            )
        return centred / size[..., None, None]

    def invalid_records(self, X) -> np.ndarray:
        """Configurations that have no shape: NaN/inf, or all landmarks (numerically) equal.

        Examples
        --------
        >>> import numpy as np
        >>> space = KendallShape(3)
        >>> space.invalid_records([[[0, 0], [1, 0], [0, 1]], [[2, 2], [2, 2], [2, 2]]]).tolist()
        [False, True]
        """
        arr = self._dataset_array(X, "X")
        finite = np.all(np.isfinite(arr), axis=_AXES)
        safe = np.where(finite[:, None, None], arr, 0.0)
        with np.errstate(all="ignore"):  # the caller's np.seterr must not make one record raise
            scale = np.maximum(np.max(np.abs(safe), axis=_AXES), np.finfo(float).tiny)
            safe = _rescaled(safe, scale)  # coordinates near float64's limit would overflow the norm
            centred = safe - safe.mean(axis=-2, keepdims=True)
            size = np.linalg.norm(centred, axis=_AXES)
            scale = np.maximum(np.max(np.abs(safe), axis=_AXES), np.finfo(float).tiny)
            return ~(finite & np.isfinite(size) & (size > 1e-12 * scale))

    def _canonical_records(self, X):
        # Any non-degenerate configuration is a valid record: its preshape is the point.
        return self.project(X)

    def check_points(self, X, name: str = "X", *, batch_ndim: int | None = None) -> np.ndarray:
        """Validate ``k × 2`` landmark configurations and return their preshapes.

        Any non-degenerate configuration is a valid shape: it is centred and scaled here.

        Raises
        ------
        InvalidDataError
            NaN/inf, or a landmark count or dimension that does not match the space.
        NotOnManifoldError
            A degenerate configuration (all landmarks equal).
        """
        arr = check_finite_array(X, name, min_ndim=2)
        if arr.shape[-2:] != self.point_shape:
            raise InvalidDataError(
                f"{name} must have trailing shape ({self.n_landmarks}, 2) for {self!r} "
                f"(n_landmarks={self.n_landmarks} planar landmarks), got shape {arr.shape}."
            )
        try:
            preshapes = self.project(arr)
        except NotOnManifoldError as err:
            raise NotOnManifoldError(f"{name}: {err}") from None
        return self._check_batch_ndim(preshapes, name, batch_ndim)

    # --------------------------------------------------------------- randomness
    def _random_tangent(self, x, size=None, rng=None):
        """Standard Gaussian horizontal tangent vectors (``2k − 4`` real dimensions)."""
        x = np.asarray(x, dtype=float)
        g = as_generator(rng).standard_normal(self._batch_size(x, size) + self.point_shape)
        return self.to_tangent(x, g)

    def random_point(self, size=None, rng=None):
        """Preshapes of i.i.d. Gaussian configurations (uniform on the shape space)."""
        shape = self._batch_size(np.zeros(self.point_shape), size) + self.point_shape
        return self.project(as_generator(rng).standard_normal(shape))

    # ------------------------------------------------------------ polar volume
    def radial_log_jacobian(self, t):
        """``(2k − 5) log sin t + log cos t`` on ``[0, π/2)``."""
        t = np.asarray(t, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            return (self.dim - 1) * np.log(np.sin(t)) + np.log(np.cos(t))

    def uniform_radius(self, size, rng=None):
        """Exact draws of ``ρ(η, X)`` for uniform ``X``: ``sin²ρ ~ Beta(k − 2, 1)``."""
        b = as_generator(rng).beta(self.n_landmarks - 2, 1.0, size=size)
        return np.arcsin(np.sqrt(b))


# Configurations whose largest coordinate exceeds this are divided by it first (a shape does not
# depend on scale): their centring and norm would overflow float64. Others keep their rounding.
_RESCALE_ABOVE = 1e150


def _rescaled(x, scale):
    """``x`` with each configuration whose largest |coordinate| (``scale``) exceeds
    ``_RESCALE_ABOVE`` divided by it."""
    big = np.asarray(scale) > _RESCALE_ABOVE
    if not np.any(big):
        return x
    return np.where(big[..., None, None], x / np.where(big, scale, 1.0)[..., None, None], x)
