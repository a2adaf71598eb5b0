"""Hyperbolic space ``H^d_κ`` in the hyperboloid model (docs/math.md §1).

Points satisfy ``⟨x, x⟩_L = −R²`` with ``x_0 > 0``, ``⟨a, b⟩_L = −a_0 b_0 + Σ a_i b_i`` and
``R = |κ|^(-1/2)``. Tangent frames come from the Lorentz boost that carries the origin to the
base point, so unit directions stay unit far from the origin (docs/math.md §1, numerics).
Distances are computed from ``cosh(ρ/R) − 1`` formed without cancellation for near and far
points alike (see :class:`Hyperbolic`, Notes, for the precision that float64 coordinates allow).
"""

from __future__ import annotations

import math
from operator import mul

import numpy as np

from geodp.errors import AssumptionError, InvalidDataError, InvalidParameterError, NotOnManifoldError
from geodp.manifolds.base import Manifold
from geodp.manifolds.jacobi import constant_curvature_adjoints, sinhc
from geodp.manifolds.pass_products import ONE_THREAD, pass_dot, pass_matvec, pass_max, pass_min
from geodp.validation import as_generator, check_finite_array, check_positive_integer
from geodp.work import count, fixed_work

__all__ = ["Hyperbolic"]


_EPS = float(np.finfo(float).eps)


def minkowski(a, b):
    """Minkowski inner product over the last axis."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return np.einsum("...i,...i->...", a[..., 1:], b[..., 1:]) - a[..., 0] * b[..., 0]


def _dot(a, b):
    """Inner product over the last axis (``einsum``: reductions over a short last axis are slow,
    and unlike BLAS it raises no floating-point warning, which would depend on the data)."""
    return np.einsum("...i,...i->...", a, b)


def _sq(a):
    return _dot(a, a)


def _amax(a):
    """``max |a_i|`` over the last axis."""
    if a.shape[-1] == 0:
        return np.zeros(a.shape[:-1])
    return np.abs(a).max(axis=-1)


def _pow2_scale(*arrays):
    """Per-point power of two ``m ≥ 1`` with ``|entries|/m ≤ 1``: dividing by it is exact and
    squares of the scaled entries cannot overflow."""
    m = 1.0
    for a in arrays:
        m = np.maximum(m, _amax(a))
    return np.ldexp(1.0, np.frexp(m)[1])


def _two_sum(a, b):
    """``(s, e)`` with ``s = fl(a + b)`` and ``a + b = s + e`` exactly (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _two_prod(a, b):
    """``(p, e)`` with ``p = fl(a·b)`` and ``a·b = p + e`` exactly (Dekker's split)."""
    p = a * b
    split = 134217729.0  # 2^27 + 1
    ah = split * a
    ah = ah - (ah - a)
    al = a - ah
    bh = split * b
    bh = bh - (bh - b)
    bl = b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _dd_gap(radius, p):
    """``R² − |p|²`` in double-double arithmetic over the last axis: ``(hi, lo)``."""
    hi, lo = _two_prod(np.float64(radius), np.float64(radius))
    hi = np.broadcast_to(hi, p.shape[:-1]).astype(float)
    lo = np.broadcast_to(lo, p.shape[:-1]).astype(float)
    for i in range(p.shape[-1]):
        sq, sq_err = _two_prod(p[..., i], p[..., i])
        hi, err = _two_sum(hi, -sq)
        lo = lo + err - sq_err
    return _two_sum(hi, lo)


def _lift(spatial, radius):
    """``√(R² + |x_s|²)`` without overflow: the time coordinate of the point with these spatial
    coordinates."""
    s2 = _sq(spatial)
    if (s2 < 1e300).all() and 1e-150 < radius < 1e150:  # no square over- or underflows
        return np.sqrt(radius * radius + s2)
    m = _pow2_scale(spatial)
    return m * np.sqrt((radius / m) ** 2 + _sq(spatial / m[..., None]))


def _radial_frame(xs):
    """``(√(1 + |x_s|²), x_s/|x_s|)`` for the spatial part ``x_s`` of points of the unit hyperboloid
    (the direction 0 at the origin); squares scaled where they would overflow. A single point's
    scalars are Python floats (the same correctly rounded operations, without numpy's per-call cost)."""
    if xs.ndim == 1:
        n2 = float(_sq(xs))
        if n2 < 1e300:
            n = math.sqrt(n2)
            return math.sqrt(1.0 + n2), xs / (n if n > 0 else 1.0)
    n2 = _sq(xs)
    if (n2 < 1e300).all():
        x0, n = np.sqrt(1.0 + n2), np.sqrt(n2)
    else:  # scaled so that no square overflows (or NaN)
        x0, xs = _lift(xs, 1.0), xs / _pow2_scale(xs)[..., None]
        n = np.sqrt(_sq(xs))
    return x0, xs / np.where(n > 0, n, 1.0)[..., None]


# The Karcher pass takes the cross form where its first-order rounding-error bound on
# c = cosh θ − 1 is at most _CROSS_BOUND·eps·max(½, c): an absolute 16 eps for near pairs (c < ½,
# as before), a relative 32 eps from c = ½ (θ ≈ 0.96) on, which the bound 16 eps·max(1, c) of
# the previous rule already allowed at c = ½ (it sent records at θ ≈ 1.3 with bounds 16.1–17.4
# through the exact forms, which returned the cross form's value to the last bit or two).
_CROSS_BOUND = 32.0
_FEW = 16  # single points with at most this many spatial coordinates: Python floats, not numpy calls


def _tangent_sq_one(xs, us, vs=None):
    """:meth:`Hyperbolic._tangent_sq` of one point of the unit hyperboloid (spatial part ``xs``)
    and its tangent vectors (spatial parts ``us``, ``vs``; ``vs=None``: ``vs = us``), lists of
    floats: the same operations in Python floats (which overflow to inf silently, as ``einsum``
    does). None where ``|x_s|²`` is not below 1e300 (the batched form then scales)."""
    n2 = math.fsum(map(mul, xs, xs))  # map(mul, ...): the same products as a generator, in half the time
    if not n2 < 1e300:
        return None
    n = math.sqrt(n2)
    x0, inv = math.sqrt(1.0 + n2), 1.0 / n if n > 0 else 1.0
    unit = [t * inv for t in xs]
    au = math.fsum(map(mul, unit, us))
    pu = [q - au * p for p, q in zip(unit, us)]
    if vs is None:
        return math.fsum(map(mul, pu, pu)) + (au / x0) * (au / x0)
    av = math.fsum(map(mul, unit, vs))
    return math.fsum(p * (q - av * e) for p, q, e in zip(pu, vs, unit)) + (au / x0) * (av / x0)


def _tangent_parts(x_s, v_s, scaled=False):
    """Split ``v_s`` into its component along ``x̂_s = x_s/|x_s|`` and the rest (0 at the origin).
    ``scaled``: the entries of ``x_s`` are known to be at most 2 (no overflow guard needed)."""
    if not scaled:
        x_s = x_s / _pow2_scale(x_s)[..., None]
    n = np.sqrt(_sq(x_s))[..., None]
    unit = x_s / np.where(n > 0, n, 1.0)  # 0 where x_s = 0
    along = _dot(unit, v_s)
    return along, v_s - along[..., None] * unit


def _cosh_minus_one_scaled(a_s, b_s, d, a0, b0, a2, b2, im2, chord_ok):
    """``(cosh θ − 1)/m²`` for unit-hyperboloid points with scaled spatial parts ``a_s = x_s/m``,
    ``b_s = y_s/m``, ``d = (y_s − x_s)/m``, time parts ``a0, b0`` (also divided by ``m``),
    ``a2 = |a_s|²``, ``b2 = |b_s|²``, ``im2 = 1/m²``; the forms are those of
    :meth:`Hyperbolic._separation`. The cross form is tried first; the chord forms only for the
    pairs whose error bound exceeds 16 eps (and where ``chord_ok``)."""
    eps = np.finfo(float).eps
    shape = a0.shape
    n = a_s.shape[-1]
    a_s, b_s, d = (v.reshape(-1, n) for v in (a_s, b_s, d))
    a0, b0, a2, b2, im2, chord_ok = (v.reshape(-1) for v in np.broadcast_arrays(a0, b0, a2, b2, im2, chord_ok))
    dot = _dot(a_s, b_s)
    c = a0 * b0 - dot - im2  # −⟨a, b⟩_L/m² − 1/m²
    err = (a0 * b0 + np.abs(dot) + im2) / c  # relative, in units of eps
    err = np.where(err >= 0, err, np.inf)
    fixed = fixed_work() is not None  # timing-safe: every form for every pair, the same choice
    needed = (err > 16.0) & chord_ok
    todo = np.flatnonzero(chord_ok if fixed else needed)
    if todo.size:
        # chord: c = (4|d|² + |d ∧ s|²)/(2(2 + 2a_0 b_0 + 2a_s·b_s)), s = a_s + b_s
        at, bt, dt = a_s[todo], b_s[todo], d[todo]
        p0, i2, dotp = a0[todo] * b0[todo], im2[todo], dot[todo]
        den = 2.0 * i2 + 2.0 * p0 + 2.0 * dotp
        den_err = (2.0 * i2 + 2.0 * p0 + 2.0 * np.abs(dotp)) / den
        d2 = _sq(dt)
        s = at + bt
        _, perp = _tangent_parts(s, dt, scaled=True)
        s2, p2 = _sq(s), _sq(perp)
        num = 4.0 * i2 * d2 + s2 * p2
        err_d = s2 * (2.0 * np.sqrt(p2 * d2) + eps * d2) / num + den_err
        err_d = np.where(d2 == 0, 0.0, np.where(err_d >= 0, err_d, np.inf))  # d = 0: exactly 0
        better = (err_d < err[todo]) & needed[todo]
        c[todo] = np.where(better, num / (2.0 * den), c[todo])
        err[todo] = np.where(better, err_d, err[todo])
        again = (err[todo] > 16.0) & needed[todo]
        if fixed:
            again = np.ones_like(again)
        if again.any():
            # |d ∧ s| = 2|a_s ∧ b_s| = 2|L|·|S ⊥ L|, L the longer of a_s, b_s
            sel = todo[again]
            a_longer = (a2[sel] >= b2[sel])[:, None]
            long_ = np.where(a_longer, a_s[sel], b_s[sel])
            short = np.where(a_longer, b_s[sel], a_s[sel])
            _, short_perp = _tangent_parts(long_, short, scaled=True)
            l2, q2, r2 = np.maximum(a2[sel], b2[sel]), np.minimum(a2[sel], b2[sel]), _sq(short_perp)
            num_ab = 4.0 * im2[sel] * d2[again] + 4.0 * l2 * r2
            err_ab = 4.0 * l2 * (2.0 * np.sqrt(r2 * q2) + eps * q2) / num_ab + den_err[again]
            err_ab = np.where(err_ab >= 0, err_ab, np.inf)
            better = (err_ab < err[sel]) & (err[sel] > 16.0) & needed[sel]
            c[sel] = np.where(better, num_ab / (2.0 * den[again]), c[sel])
    return np.maximum(c, 0.0).reshape(shape)


def _length(v):
    """The Euclidean norm of a short vector as a float (``math.hypot``: no overflow), of a long
    one through ``einsum`` (NaN and inf propagate)."""
    return math.hypot(*v.tolist()) if v.size <= _FEW else math.sqrt(float(_sq(v)))


def _on_sheet(X, radius):
    """Whether every record's time coordinate is within 4 ulp of the lift of its spatial part
    (then ``x_0 > 0`` and ``|⟨x, x⟩_L + R²| = |x_0 − lift|·(x_0 + lift) ≤ 9 eps·lift²``, far
    inside the records' tolerance): the common case of :meth:`Hyperbolic._checked_records`, in
    one n-vector. The lift is ``hypot`` of ``R`` and the spatial coordinates for up to three of
    them (no square overflows or underflows), ``√(R² + |x_s|²)`` otherwise; NaN, inf and a time
    coordinate of either sign off the lift fail (the deviation is taken relative to ``x_0``)."""
    if not 1e-149 <= radius <= 1e149:
        return False
    if X.shape[1] <= 4:
        lift = np.hypot(X[:, 1], radius) if X.shape[1] == 2 else np.hypot(X[:, 1], X[:, 2])
        for j in range(3 if X.shape[1] > 2 else 2, X.shape[1]):
            np.hypot(lift, X[:, j], out=lift)
        if X.shape[1] > 2:
            np.hypot(lift, radius, out=lift)
    else:
        lift = np.einsum("ij,ij->i", X[:, 1:], X[:, 1:])
        lift += radius * radius
        np.sqrt(lift, out=lift)
    lift -= X[:, 0]
    lift /= X[:, 0]
    np.abs(lift, out=lift)
    return bool(pass_max(lift) <= 4.0 * _EPS)  # NaN fails


def _moderate(x, X, radius):
    """Whether no value of a Karcher pass at ``x`` over the block ``X`` can overflow (nor be
    NaN): every coordinate of ``X`` and ``x`` below 1e100 in size and ``R`` within 1e±20, so
    that the products ``−⟨x, x_i⟩_L/R²`` stay below 1e300 and the angles below 700. Then no
    floating-point warning can arise and the pass needs no ``np.errstate``, which holds ~0.4 KB
    through it (0.17× the input at n = 100, d = 2). ``argmax``/``argmin``: no reduction's
    iterator (:func:`~geodp.manifolds.pass_products.pass_max`); NaN and inf fail."""
    top = max(X.item(X.argmax()), -X.item(X.argmin()))  # both NaN if X holds one (item: no flat iterator)
    return top < 1e100 and _length(x) < 1e100 and 1e-20 < radius < 1e20


def _slow_records(head, X, cosh):
    """Indices of the records whose cross-form bound (in units of eps), ``x_0 x_i0/R² +
    |x_s·x_is|/R² + 1 = max(2 x_0 x_i0/R² − cosh θ_i, cosh θ_i) + 1``, exceeds
    ``32 eps·max(½, cosh θ_i − 1)`` (:data:`_CROSS_BOUND`), or is not finite (NaN and inf fail
    the test); ``head`` is ``x_0/R²``, ``cosh`` holds ``−⟨x, x_i⟩_L/R²``. One n-vector and one mask."""
    bound = np.multiply(X[:, 0], 2.0 * head)  # 2 x_0 x_i0/R² (head = x_0/R²): exact doubling
    bound -= cosh
    np.maximum(bound, cosh, out=bound)
    bound += 1.0
    bound *= 1.0 / _CROSS_BOUND  # exact: a power of two
    fast = bound <= 0.5
    bound += 1.0
    # bound/32 + 1 ≤ cosh θ (up to the rounding of the sum) where their rounded difference is
    # at most 0 (its sign is exact); inf − inf is NaN: an infinite bound fails against an infinite cosh.
    bound -= cosh
    np.putmask(bound, fast, -1.0)
    np.less_equal(bound, 0.0, out=fast)
    return np.logical_not(fast, out=fast).nonzero()[0]  # (np.flatnonzero holds ~0.2 KB more)


class Hyperbolic(Manifold):
    """Hyperbolic space of constant curvature ``κ < 0`` (hyperboloid model in ``R^(dim+1)``).

    Parameters
    ----------
    dim : int
        Intrinsic dimension, at least 1.
    curvature : float, default -1.0
        Sectional curvature κ < 0; ``R = 1/√(−κ)``.

    Notes
    -----
    Isotropic with radial volume ``(R sinh(t/R))^(dim−1)``, which grows like
    ``e^((dim−1)t/R)``: the Laplace law ``∝ exp(−ρ/σ)`` is normalisable only when
    ``1/σ > (dim − 1)/R`` (``volume_growth_rate``).

    **Precision.** A point at distance ``D`` from the origin has coordinates of size
    ``R e^(D/R)/2``; it is determined by its spatial coordinates ``x[1:]`` (``x_0`` is their lift,
    see :meth:`project`), and rounding them moves it by up to about ``eps·e^(D/R)`` (``eps`` =
    2.2e-16). That representation error is inherent to float64 hyperboloid coordinates, and the
    geometry adds no more than it to distances:

    * from a point within distance ~1 of the origin (a public centre at the origin, say),
      distances are accurate to about 1e-15 relative for every ``ρ`` from 1e-8 up to the overflow
      of ``cosh`` at ``ρ ≈ 709 R``; from a base point at distance ``D ≤ 5`` the measured relative
      error is below 3e-15 over the same range;
    * between two points at distances ``D_x, D_y`` from the origin the absolute error is about
      ``0.4·eps·e^(min(D_x, D_y)/R)`` (measured up to ``D = 30``): 1e-11 at ``D = 15``, 1e-3 at 30,
      nothing is left beyond ``D ≈ 36 R``;
    * a tangent vector at distance ``D`` is resolved to a relative ``eps·e^(D/R)`` (norms, ``exp``
      and ``transport`` there), and the components of ``log`` orthogonal to the radial
      direction to about ``eps·e^(2D/R)`` (4e-11 at ``D = 5``).

    ``dist`` and ``log`` stay finite for every pair of representable points (coordinates up to
    1e308, distances up to ≈ 1418 R).

    Examples
    --------
    >>> import numpy as np
    >>> space = Hyperbolic(2)
    >>> origin = np.array([1.0, 0.0, 0.0])
    >>> x = space.exp(origin, [0.0, 1.0, 0.0])
    >>> round(float(space.dist(origin, x)), 12)
    1.0
    """

    is_homogeneous = True
    injectivity_radius = math.inf
    cut_radius = math.inf

    def __init__(self, dim: int, curvature: float = -1.0):
        dim = check_positive_integer(dim, "dim")
        curvature = float(curvature)
        if not (math.isfinite(curvature) and curvature < 0):
            raise InvalidParameterError(f"curvature must be a finite negative number, got {curvature!r}.")
        self.dim = int(dim)
        self.curvature = curvature
        self.radius = 1.0 / math.sqrt(-curvature)
        self.point_shape = (self.dim + 1,)
        self.curvature_bounds = (curvature, curvature)
        self.max_representable_radius = 300.0 * self.radius  # coordinates up to e^300
        self.volume_growth_rate = (self.dim - 1) / self.radius

    def __repr__(self) -> str:
        return (
            f"Hyperbolic({self.dim})"
            if self.curvature == -1.0
            else f"Hyperbolic({self.dim}, curvature={self.curvature!r})"
        )

    @property
    def origin(self) -> np.ndarray:
        """The point ``(R, 0, …, 0)``."""
        o = np.zeros(self.point_shape)
        o[0] = self.radius
        return o

    # ------------------------------------------------------------ other models
    def from_poincare(self, P):
        """Points of the Poincaré ball of radius ``R = 1/sqrt(-curvature)`` on the hyperboloid.

        ``x_s = 2R² p/(R² − |p|²)``, ``x_0 = √(R² + |x_s|²)`` (the ball of radius ``R`` is the
        convention of geoopt's ``PoincareBall(c)``, ``c = −curvature``; for a unit-ball embedding
        at curvature −1, ``R = 1``). ``R² − |p|²`` is formed in double-double arithmetic from the
        float64 coordinates, so the result is accurate to ~1e-15 relative even within 1e-12 of
        the boundary, where ``1 − |p|²`` in float64 loses all but 4 digits. A per-record map:
        apply it to the records before ``fit``.

        Parameters
        ----------
        P : array_like, shape (..., dim)
            Points with ``|p| < R``.

        Returns
        -------
        numpy.ndarray, shape (..., dim + 1)

        Raises
        ------
        InvalidDataError
            Wrong trailing shape, NaN or inf.
        NotOnManifoldError
            Some point is not strictly inside the ball.

        Examples
        --------
        >>> space = Hyperbolic(2)
        >>> space.from_poincare([0.5, 0.0]).tolist()
        [1.6666666666666667, 1.3333333333333333, 0.0]
        >>> round(float(space.dist(space.origin, space.from_poincare([1 - 1e-12, 0.0]))), 6)
        28.32419
        """
        p = check_finite_array(P, "P", min_ndim=1)
        if p.shape[-1] != self.dim:
            raise InvalidDataError(f"P must have trailing shape ({self.dim},) for {self!r}, got shape {p.shape}.")
        R = self.radius
        gap_hi, gap_lo = _dd_gap(R, p)  # R² − |p|² as an unevaluated sum
        if not np.all(gap_hi > 0):
            raise NotOnManifoldError(
                f"{int(np.count_nonzero(~(gap_hi > 0)))} point(s) of P are not strictly inside the Poincaré "
                f"ball of radius R = {R!r}."
            )
        gap = gap_hi + gap_lo
        spatial = (2.0 * R * R) * p / gap[..., None]
        return np.concatenate([_lift(spatial, R)[..., None], spatial], axis=-1)

    def to_poincare(self, X):
        """Points of the hyperboloid in the Poincaré ball of radius ``R``: ``p = R x_s/(R + x_0)``.

        The inverse of :meth:`from_poincare` (``x_0`` is taken as the lift of ``x_s``, as
        :meth:`project` does; no cancellation: each coordinate is accurate to ~1e-16 relative).

        Examples
        --------
        >>> space = Hyperbolic(2)
        >>> space.to_poincare(space.from_poincare([0.5, -0.25])).round(15).tolist()
        [0.5, -0.25]
        """
        x = self.check_points(X, "X")
        R = self.radius
        return R * x[..., 1:] / (R + _lift(x[..., 1:], R))[..., None]

    # ----------------------------------------------------------------- geometry
    # Numerics. A point is determined by its spatial coordinates x_s (x_0 = √(R² + |x_s|²), the
    # lift that ``project`` applies), and a tangent vector at x by its spatial part (v_0 =
    # x_s·v_s/x_0). Minkowski quantities are formed from spatial coordinates as sums of squares
    # wherever the difference of the huge products x_0 y_0 and x_s·y_s would cancel: the plain
    # Minkowski chord computed distance 40 as 0 and let a record escape clipping (issue 8).
    def _separation(self, x, y, direction=True):
        """Geodesic data of ``x`` and ``y``: ``(a, b, theta, c, u)`` (only ``theta`` if not
        ``direction``) with ``a = x/R``, ``b = y/R``
        (lifted), ``theta = ρ/R``, ``c = cosh θ − 1`` (``inf`` if it overflows; ``theta`` stays
        finite) and ``u`` the Minkowski-unit direction of ``log_x y`` (0 where ``x = y``).

        On the unit hyperboloid ``c = ½⟨b − a, b − a⟩_L = −⟨a, b⟩_L − 1``. Three exact forms:

        * chord: with ``d = b_s − a_s`` and ``s = a_s + b_s``,
          ``c = (4|d|² + |d ∧ s|²) / (2(2 + 2a_0 b_0 + 2a_s·b_s))`` (Lagrange's identity: a sum
          of squares), with ``|d ∧ s|`` taken either as ``|s|·|d ⊥ s|`` (accurate for near
          points anywhere) or as ``2|a_s ∧ b_s| = 2|L|·|S ⊥ L|`` (``L``, ``S`` the longer and the
          shorter of ``a_s``, ``b_s``; accurate for far points seen from nearer the origin);
        * cross: ``c = a_0 b_0 − a_s·b_s − 1`` (accurate on opposite sides of the origin).

        The cross form is used where its first-order rounding-error bound is at most 16 eps,
        otherwise the form with the smallest bound. Coordinates are scaled by a power of two so
        that no square overflows, which keeps ``theta`` finite for every pair of representable
        points.
        """
        R = self.radius
        x, y = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
        xs, ys = x[..., 1:] / R, y[..., 1:] / R
        m = _pow2_scale(xs, ys)
        inv = 1.0 / m
        a_s, b_s = xs * inv[..., None], ys * inv[..., None]
        d = (ys - xs) * inv[..., None]
        im2 = inv * inv
        a2, b2 = _sq(a_s), _sq(b_s)
        if (m <= 2.0**500).all():
            a0, b0 = np.sqrt(im2 + a2), np.sqrt(im2 + b2)
        else:  # 1/m² may underflow; the lifts do not
            a0, b0 = _lift(xs, 1.0) * inv, _lift(ys, 1.0) * inv
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            c_scaled = _cosh_minus_one_scaled(a_s, b_s, d, a0, b0, a2, b2, im2, m <= 2.0**500)
            c = c_scaled * m * m
            theta = 2.0 * np.arcsinh(np.sqrt(0.5 * c))
            huge = ~(c < 1e300)
            if huge.any():  # θ = arccosh(1 + c) = log(2c) to double precision
                theta = np.where(huge, math.log(2.0) + np.log(c_scaled) + 2.0 * np.log(m), theta)
        if not direction:
            return theta
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            # The direction ((b − a) − c a)/sinh θ from scaled coordinates, b_0 − a_0 = d·s/(a_0 + b_0).
            a_scaled = np.concatenate([a0[..., None], a_s], axis=-1)
            b_scaled = np.concatenate([b0[..., None], b_s], axis=-1)
            d_full = np.concatenate([(_dot(d, a_s + b_s) / (a0 + b0))[..., None], d], axis=-1)
            sinh = np.sinh(theta)
            safe = np.where(sinh > 0, sinh, 1.0)[..., None]
            u = m[..., None] * ((d_full - c[..., None] * a_scaled) / safe)
            bad = ~np.isfinite(u).all(axis=-1)
            if bad.any():
                # c·a or sinh θ overflow: u = b/sinh θ − a/tanh θ, b/sinh θ = b'·exp(log m − log sinh θ)
                log_sinh = theta + np.log1p(-np.exp(-2.0 * theta)) - math.log(2.0)
                far = (
                    b_scaled * np.exp(np.log(m) - log_sinh)[..., None]
                    - (m[..., None] * a_scaled) / np.tanh(np.where(theta > 0, theta, 1.0))[..., None]
                )
                u = np.where(bad[..., None], far, u)
        u = np.where((theta > 0)[..., None], u, 0.0)
        return m[..., None] * a_scaled, m[..., None] * b_scaled, theta, c, u

    def _dist(self, x, y):
        """``R arccosh(−⟨x, y⟩_L/R²)``, computed as ``2R asinh(√(c/2))`` with
        ``c = cosh(ρ/R) − 1`` formed without cancellation (see :meth:`_separation`)."""
        return self.radius * self._separation(x, y, direction=False)

    def _log(self, x, y):
        """``ρ (y − cosh(ρ/R) x)/(R sinh(ρ/R))`` = ``R θ/sinh θ ((b − a) − c a)`` with ``a = x/R``,
        ``b = y/R``, ``θ = ρ/R`` and ``c = cosh θ − 1`` from :meth:`_separation`."""
        _, _, theta, _, u = self._separation(x, y)
        return (self.radius * theta)[..., None] * u

    def _tangent_sq(self, x, u, v):
        """``⟨u, v⟩_L`` for tangent vectors at ``x``, from their spatial parts:
        ``u_⊥·v_⊥ + (α_u/x̃_0)(α_v/x̃_0)``, ``α = x̂_s·v_s``, ``x̃ = x/R`` (no cancellation, unlike
        ``u_s·v_s − u_0 v_0`` far from the origin)."""
        xs = np.asarray(x, dtype=float)[..., 1:]
        if self.radius != 1.0:  # dividing by 1 is exact: skipped, not changed
            xs = xs / self.radius
        if xs.ndim == 1 and np.ndim(u) == np.ndim(v) == 1 and xs.size <= _FEW:
            out = _tangent_sq_one(xs.tolist(), u[1:].tolist(), None if v is u else v[1:].tolist())
            if out is not None:
                return out
        x0, unit = _radial_frame(xs)
        us = np.asarray(u, dtype=float)[..., 1:]
        au = _dot(unit, us)
        pu = us - au[..., None] * unit
        if v is u:
            return _sq(pu) + (au / x0) ** 2
        vs = np.asarray(v, dtype=float)[..., 1:]
        av = _dot(unit, vs)
        pv = vs - av[..., None] * unit
        return _dot(pu, pv) + (au / x0) * (av / x0)

    def _exp(self, x, v):
        """``cosh(|v|/R) x + R sinh(|v|/R) v/|v|``; ``|v|`` from :meth:`_inner`, and the time
        coordinate of the result is the lift of its spatial part."""
        x, v = np.asarray(x, dtype=float), np.asarray(v, dtype=float)
        n = np.sqrt(np.maximum(self._tangent_sq(x, v, v), 0.0)) / self.radius
        out = np.cosh(n)[..., None] * x + sinhc(n)[..., None] * v
        return self._lifted(out)

    def _exp_with_velocity(self, x, v):
        """For one point ``x`` and one tangent vector ``v`` (the Karcher flow's step; its scalars
        in Python floats): :meth:`_exp` (on the sheet, as :meth:`project` leaves it) and the
        velocity there of ``t ↦ exp_x(t v)``, ``cosh(a) v + a sinh(a) x``, ``a = |v|/R``."""
        x, v = np.asarray(x, dtype=float), np.asarray(v, dtype=float)
        a = math.sqrt(max(self._point_tangent_sq(x, v), 0.0)) / self.radius
        if a < 710.0 and x.size <= _FEW + 1 and 1e-150 < self.radius < 1e150:
            # A short point in Python floats: the same products and sums as the arrays below.
            cosh, sinh = math.cosh(a), math.sinh(a)
            scale, grow = (sinh / a if a > 0 else 1.0), a * sinh
            xl, vl = x.tolist(), v.tolist()
            end = [cosh * p + scale * q for p, q in zip(xl, vl)]
            s2 = sum(map(mul, end[1:], end[1:]))  # non-negative terms: inf at worst, never NaN
            if s2 < 1e300:
                end[0] = math.sqrt(self.radius * self.radius + s2)
                return np.array(end), np.array([cosh * q + grow * p for p, q in zip(xl, vl)])
        if a < 710.0:
            cosh, sinh = math.cosh(a), math.sinh(a)
        else:  # inf (or NaN) as numpy gives them in _exp, where math.cosh would raise
            with np.errstate(over="ignore"):
                cosh, sinh = float(np.cosh(a)), float(np.sinh(a))
        end = cosh * x + (sinh / a if a > 0 else 1.0) * v
        s2 = float(_sq(end[1:]))  # einsum: silent if it overflows
        if s2 < 1e300 and 1e-150 < self.radius < 1e150:  # _lift's test, on floats
            end[0] = math.sqrt(self.radius * self.radius + s2)
        else:
            end = self._lifted(end)
        return end, cosh * v + (a * sinh) * x

    def _polar_exp(self, x, direction, t):
        """``cosh(t/R) x + R sinh(t/R) u`` for unit ``u``, without re-measuring ``|u|``."""
        t = np.asarray(t, dtype=float)[..., None] / self.radius
        return np.cosh(t) * np.asarray(x, dtype=float) + self.radius * np.sinh(t) * np.asarray(direction, dtype=float)

    def _inner(self, x, u, v):
        """Minkowski product of tangent vectors at ``x``, computed from their spatial parts
        (``x`` broadcasts)."""
        out = self._tangent_sq(x, u, v)
        batch = np.shape(x)[:-1]
        if not batch or batch == np.shape(out):  # nothing to broadcast (a single base point)
            return out
        return np.broadcast_to(out, np.broadcast_shapes(out.shape, batch))

    def _transport(self, x, y, v):
        """``w + ⟨w, u⟩_L((cosh θ − 1) u + sinh θ a) = w + ⟨w, u⟩_L tanh(θ/2)(a + b)``, ``u`` the
        unit direction of ``log_x y``, ``a = x/R``, ``b = y/R``, ``θ = ρ/R`` (from :meth:`_separation`)."""
        v = np.asarray(v, dtype=float)
        a, b, theta, _, u = self._separation(x, y)
        coef = self._tangent_sq(x, v, u) * np.tanh(0.5 * theta)
        return v + coef[..., None] * (a + b)

    def to_tangent(self, x, v):
        """A tangent vector is determined by its spatial part: set ``v_0 = x_s·v_s / x_0``."""
        x, v = np.asarray(x, dtype=float), np.asarray(v, dtype=float)
        v0 = np.einsum("...i,...i->...", x[..., 1:], v[..., 1:]) / x[..., 0]
        v0 = np.broadcast_to(v0, v.shape[:-1])
        return np.concatenate([v0[..., None], v[..., 1:]], axis=-1)

    def _adjoint_exp_derivatives(self, p, u, w, y=None):
        return constant_curvature_adjoints(self, p, u, w, y)

    def reference_point(self):
        """The origin ``(R, 0, …, 0)``."""
        return self.origin

    def _isometry_to_reference(self, center):
        """The Lorentz boost that maps ``center`` to the origin (and back); refused beyond
        ``RECENTRING_LIMIT`` curvature radii (re-audit: at 15 the image of the centre was 2.4e-4
        from the origin, at 20 about 3)."""
        center = np.asarray(center, dtype=float)
        reach = float(self._dist(self.origin, center)) / self.radius
        if reach > self.RECENTRING_LIMIT:
            raise AssumptionError(
                f"the center is {reach:.4g} curvature radii from the origin of {self!r}: beyond "
                f"{self.RECENTRING_LIMIT:g}, float64 cannot move the data to it accurately. Express the data "
                "in coordinates whose origin is nearer (apply a Lorentz boost to data and centre)."
            )
        a = center / self.radius

        def boost(w, sign):
            w0, ws = w[..., :1], w[..., 1:]
            a_s = sign * a[1:]
            dot = np.sum(ws * a_s, axis=-1, keepdims=True)
            return np.concatenate([a[0] * w0 + dot, ws + a_s * w0 + a_s * (dot / (1.0 + a[0]))], axis=-1)

        return (lambda Y: self.project(boost(Y, -1.0))), (lambda p, v: (self.project(boost(p, 1.0)), boost(v, 1.0)))

    def boost(self, x, xi):
        """Carry frame coefficients ``ξ ∈ R^dim`` at the origin to a tangent vector at ``x`` by
        the Lorentz boost that maps the origin to ``x`` (an isometry: ``|result|_L = |ξ|``)."""
        a = np.asarray(x, dtype=float) / self.radius
        xi = np.asarray(xi, dtype=float)
        a0, a_s = a[..., :1], a[..., 1:]
        proj = np.sum(a_s * xi, axis=-1, keepdims=True)
        return np.concatenate([proj, xi + a_s * (proj / (1.0 + a0))], axis=-1)

    # --------------------------------------------------------------- membership
    # Records (and public points given as data) within a relative 1e-4 of the hyperboloid
    # (|−x0² + |x_rest|² + R²| ≤ 1e-4·(|x|² + R²)) are accepted and lifted onto it from their
    # spatial part (a per-record map): coordinates written with 6 decimals; the geometry keeps
    # the strict default.
    record_rtol = 1e-4

    def _belongs(self, x, rtol):
        # Scaled by a power of two so that points far from the origin (|x| up to 1e308) do not
        # overflow; the tolerance is relative to |x|² + R².
        m = _pow2_scale(x, np.full(x.shape[:-1] + (1,), self.radius))[..., None]
        xn, r = x / m, self.radius / m[..., 0]
        scale = _sq(xn) + r**2
        return (np.abs(minkowski(xn, xn) + r**2) <= rtol * scale) & (x[..., 0] > 0)

    _membership_hint = (
        "Hyperboloid points satisfy -x0² + |x_rest|² = -R² with x0 > 0; space.project(x) lifts "
        "the spatial coordinates x[..., 1:] onto the upper sheet."
    )

    def _shape_hint(self, shape: tuple) -> str:
        if tuple(shape[-1:]) != (self.dim,):
            return ""
        return (
            f" Points of {self!r} are hyperboloid points of {self.dim + 1} coordinates; {self.dim} coordinates "
            f"look like points of the Poincaré ball: convert them with {self!r}.from_poincare(P)."
        )

    def project(self, x):
        """Lift onto the upper sheet: keep ``x[..., 1:]``, set ``x_0 = √(R² + |x_rest|²)``."""
        return self._lifted(np.array(x, dtype=float))

    def _lifted(self, x):
        x = np.array(x, dtype=float)
        x[..., 0] = _lift(x[..., 1:], self.radius)
        return x

    def _canonical(self, x):
        return self.project(x)

    # ------------------------------------------------------------ Fréchet mean
    # A pass keeps two n-vectors (products then angles, coefficients); the records that need the
    # exact forms of _separation go through it in sub-blocks of _EXACT_VALUES values.
    _karcher_row_values = 64
    _EXACT_VALUES = 2**13

    def _karcher_start(self, weighted_sum):
        """The extrinsic mean ``m = Σ w_i x_i`` (a future timelike vector) scaled onto the sheet,
        ``R m/√(−⟨m, m⟩_L)`` (the point of the sheet on the ray of ``m``: the Lorentzian centroid,
        near the Fréchet mean), then lifted by its spatial part. Lifting ``m`` itself kept its
        spatial part, which ``|⟨m, m⟩_L| > R²`` makes too long: on data of radius 2.5 about a
        point 1 from the origin it started 2.2 from the origin, with 32 of 100 records needing
        the exact forms in the first pass. Where ``−⟨m, m⟩_L`` is not a positive normal float
        (data far from the origin, where it cancels), ``m`` is lifted as before."""
        m = np.asarray(weighted_sum, dtype=float)
        if m.size <= _FEW + 1 and 1e-150 < self.radius < 1e150:  # Python floats (overflow to inf silently)
            values = m.tolist()
            head = values[0] * values[0]
            square = head - sum(map(mul, values[1:], values[1:]))  # −⟨m, m⟩_L
            if 64.0 * _EPS * head < square < math.inf:  # no heavy cancellation (NaN, inf fail)
                scale = self.radius / math.sqrt(square)
                values = [t * scale for t in values]
            s2 = sum(map(mul, values[1:], values[1:]))
            if s2 < 1e300:  # _lift's test
                values[0] = math.sqrt(self.radius * self.radius + s2)
                return np.array(values)
        with np.errstate(all="ignore"):  # squares that overflow fail the test below
            head = float(m[0] * m[0])
            square = float(head - _sq(m[1:]))  # −⟨m, m⟩_L
        if 64.0 * _EPS * head < square < math.inf:  # no heavy cancellation (NaN, inf fail)
            m = m * (self.radius / math.sqrt(square))
        return self._lifted(m)

    def _checked_records(self, X):
        """One product per record (``|x|²``) decides membership as :meth:`_belongs` does, for
        records of moderate size clearly within (half) the records' tolerance; a block whose time
        coordinates are within 4 ulp of the lift comes back as it is, without a copy, the others
        lifted as :meth:`check_points` lifts them. Anything else goes through :meth:`check_points`."""
        r2 = self.radius**2
        with np.errstate(all="ignore"):
            if _on_sheet(X, self.radius):
                return X
            lift = np.sqrt(r2 + np.einsum("ij,ij->i", X[:, 1:], X[:, 1:]))
            norm2 = np.einsum("ij,ij->i", X, X)  # NaN/inf propagate and fail the test below
            time = X[:, 0]
            spatial2 = norm2 - time * time
            gap = np.abs(spatial2 - time * time + r2)  # |⟨x, x⟩_L + R²|
            clear = (norm2 < 1e300) & (time > 0) & (gap <= 0.5 * self.record_rtol * (norm2 + r2))
            if not np.all(clear):
                return super()._checked_records(X)
        if np.all(np.abs(time - lift) <= 4.0 * _EPS * lift):
            return X
        return self._lifted(X)

    def _karcher_direction(self, x, X, weights):
        """``Σ w_i θ_i/sinh θ_i (x_i − cosh θ_i x)`` (``θ_i = ρ(x, x_i)/R``) as
        ``Xᵀa − (Σ a_i cosh θ_i) x``, with ``cosh θ_i = −⟨x, x_i⟩_L/R²`` from one matrix–vector
        product (the cross form of :meth:`_separation`), for the records whose rounding-error bound
        on ``cosh θ_i − 1``, ``eps(x_0 x_i0 + |x_s·x_is| + R²)/R²``, is at most
        ``32 eps·max(½, cosh θ_i − 1)`` (:data:`_CROSS_BOUND`): every record when data and ``x``
        lie within ~1.7 of the origin. The others (near pairs far from the origin, where the cross
        form cancels, or products that overflow) take the exact forms of :meth:`_separation`, in
        sub-blocks (:meth:`_exact_part`).

        The common case is decided from extremes, without a per-record bound: ``|x_s·x_is| ≤
        x_0 x_i0`` (both on the sheet) and ``x_i0 ≤ x_0 cosh θ_i + |x_s| sinh θ_i`` (the triangle
        inequality through the origin), so ``2 x_0 (x_0 + |x_s|) max_i cosh θ_i/R² + 1`` bounds
        every record's bound, and when it is at most ``32 max(½, min_i cosh θ_i − 1)`` every
        record takes the cross form (the per-record test would send none to the exact forms);
        two extremes of the products, no pass over the time coordinates. The pass holds two
        n-vectors, reused in place: the products become the angles (then ``cosh θ_i``, recomputed
        from them), the other holds ``w_i θ_i``, then the coefficients ``a_i``; no
        ``n × (dim+1)`` temporary."""
        if fixed_work() is not None:  # timing-safe: the exact forms for every record, whatever they are
            return self._exact_karcher_direction(x, X, weights)
        if X.size <= ONE_THREAD and _moderate(x, X, self.radius):
            direction, objective, far = self._cross_pass(x, X, weights)  # no value can overflow: no warning
        else:
            with np.errstate(all="ignore"):  # overflowing products are found and redone in the pass
                direction, objective, far = self._cross_pass(x, X, weights)
        if self.radius == 1.0:
            return direction, objective, far
        return direction, self.radius**2 * objective, self.radius * far

    def _cross_pass(self, x, X, weights):
        """:meth:`_karcher_direction` outside fixed work, before the scaling by ``R``: ``(Σ w_i
        log_x x_i, ½ Σ w_i θ_i², max θ_i)``. At its peak it holds the two n-vectors (the angles
        and the coefficients' buffer) and a few scalars; the angles are dropped before the
        direction's products."""
        reflected = -x  # x with its time coordinate negated, over R²: −⟨x, x_i⟩_L/R² = X·reflected
        reflected[0] = x[0]
        if self.radius != 1.0:  # dividing by 1 is exact: skipped, not changed
            reflected /= self.radius**2
        theta = pass_matvec(X, reflected)  # cosh θ_i, then c = cosh θ_i − 1, then θ_i = 2 asinh √(c/2)
        c_min = pass_min(theta) - 1.0
        # ≥ every record's bound: x_i0 ≤ x_0 cosh θ_i + |x_s| sinh θ_i (triangle inequality
        # through the origin), for x within ~7 radii of the origin (growth ≤ 1e6, so that the
        # rounding of the products cannot matter to the bound); NaN fails the comparisons.
        head = float(reflected[0])  # x_0/R²
        del reflected
        growth = 2.0 * head * (float(x[0]) + _length(x[1:]))
        cheap = growth * pass_max(theta) + 1.0 if growth <= 1e6 else math.inf
        fast = cheap <= _CROSS_BOUND * max(c_min, 0.5) and cheap < math.inf
        slow = None if fast else _slow_records(head, X, theta)
        theta -= 1.0
        np.maximum(theta, 0.0, out=theta)
        if slow is not None:
            theta[slow] = 0.0
        theta *= 0.5
        np.sqrt(theta, out=theta)
        np.arcsinh(theta, out=theta)
        theta *= 2.0
        exact = None if slow is None else self._exact_part(x, X, weights, theta, slow)
        far = pass_max(theta)
        a = np.multiply(theta, weights)  # no product with the weights themselves: uniform ones have stride 0
        objective = 0.5 * pass_dot(a, theta)
        np.sinh(theta, out=a)  # then a_i = w_i θ_i/sinh θ_i (1 at θ = 0), in place
        if c_min > 0.0 and slow is None:  # no θ is 0
            np.divide(theta, a, out=a)
        else:
            zero = a == 0.0
            np.putmask(a, zero, 1.0)
            np.divide(theta, a, out=a)
            np.putmask(a, zero, 1.0)
        a *= weights
        np.cosh(theta, out=theta)
        if slow is not None:
            a[slow] = 0.0
            theta[slow] = 1.0  # their cosh may overflow; a_i = 0 leaves them out of Σ a_i cosh θ_i
        cosh_sum = pass_dot(a, theta)
        del theta
        direction = pass_matvec(X.T, a)
        direction -= cosh_sum * x
        if exact is not None:
            direction += exact
        return direction, objective, far

    def _exact_part(self, x, X, weights, theta, slow=None):
        """``Σ w_i log_x x_i`` over the records ``slow`` (indices; None: every record, in row
        slices), from the exact forms of :meth:`_separation` in sub-blocks of
        :data:`_EXACT_VALUES` values; their angles ``ρ_i/R`` are written into ``theta``."""
        part = np.zeros_like(x)
        rows = max(1, self._EXACT_VALUES // X.shape[1])
        for start in range(0, len(X) if slow is None else slow.size, rows):
            chunk = slice(start, start + rows) if slow is None else slow[start : start + rows]
            _, _, angles, _, u = self._separation(x, X[chunk])
            count("exact distances", len(angles))
            theta[chunk] = angles
            part += (weights[chunk] * (self.radius * angles)) @ u
        return part

    def _exact_karcher_direction(self, x, X, weights):
        """:meth:`_karcher_direction` from the exact forms of :meth:`_separation` for every
        record (in sub-blocks): the same work whatever the records' positions, for fixed work."""
        dists = np.empty(len(X))
        direction = self._exact_part(x, X, weights, dists)
        dists *= self.radius
        return direction, 0.5 * pass_dot(weights, dists * dists), float(dists.max())

    def _karcher_grad_norm(self, x, direction):
        """``|direction|_L`` at the point ``x``, from the spatial parts (:meth:`_tangent_sq`)."""
        return math.sqrt(max(self._point_tangent_sq(x, direction), 0.0))

    def _point_tangent_sq(self, x, v):
        """``⟨v, v⟩_L`` for one point and one tangent vector there (1-d arrays), as a float: the
        flow's short path to :func:`_tangent_sq_one` (no shape checks, one list per vector)."""
        if x.size <= _FEW + 1:
            xs = x[1:] if self.radius == 1.0 else x[1:] / self.radius
            out = _tangent_sq_one(xs.tolist(), v[1:].tolist())
            if out is not None:
                return out
        return float(self._tangent_sq(x, v, v))

    # --------------------------------------------------------------- randomness
    def _random_tangent(self, x, size=None, rng=None):
        """Standard Gaussian tangent vectors, built in a boosted orthonormal frame."""
        x = np.asarray(x, dtype=float)
        xi = as_generator(rng).standard_normal(self._batch_size(x, size) + (self.dim,))
        return self.boost(x, xi)

    def _random_unit_tangent(self, x, size=None, rng=None):
        """Uniform unit tangent vectors; unit by construction (no Minkowski norm is taken)."""
        x = np.asarray(x, dtype=float)
        xi = as_generator(rng).standard_normal(self._batch_size(x, size) + (self.dim,))
        return self.boost(x, xi / np.linalg.norm(xi, axis=-1, keepdims=True))

    def random_point(self, size=None, rng=None):
        """Points with standard Gaussian spatial coordinates, lifted onto the hyperboloid."""
        shape = self._batch_size(np.zeros(self.point_shape), size) + self.point_shape
        return self.project(as_generator(rng).standard_normal(shape))

    # ------------------------------------------------------------ polar volume
    def radial_log_jacobian(self, t):
        """``(dim − 1) log(R sinh(t/R))``."""
        t = np.asarray(t, dtype=float)
        if self.dim == 1:
            return np.zeros_like(t)
        z = t / self.radius
        with np.errstate(divide="ignore"):
            # log sinh z = z + log1p(−e^(−2z)) − log 2, finite for every z > 0.
            return (self.dim - 1) * (math.log(self.radius / 2.0) + z + np.log1p(-np.exp(-2.0 * z)))
