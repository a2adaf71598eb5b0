"""A public convex domain for :class:`~geodp.distributions.affine_kng.AffineKNG`: a product of
weighted l1 balls (the coefficients of a linear model whose every prediction over a box stays in
a range), with the structure its sampler uses — the support function, uniform draws, the
Euclidean projection and the constrained least-squares minimiser (a lasso solution path).
"""

from __future__ import annotations

import math

import numpy as np

from geodp.errors import InvalidParameterError

__all__ = ["CrossPolytopeDomain"]

# Accelerated projected-gradient iterations for θ* before the active-set polish.
_FISTA_ITERATIONS = 400


class CrossPolytopeDomain:
    """A product of weighted l1 balls, one per column: ``Σ_i w_i |θ_ik − c_ik| ≤ r_k`` for all k.

    A public convex domain for :class:`AffineKNG` whose structure the sampler can use (its
    support function, uniform draws, projections). Calling it tests membership, so it is also a
    plain ``in_domain`` callable.

    Parameters
    ----------
    weights : array_like, shape (q,)
        ``w_i > 0``.
    center : array_like, shape (q, d)
    radius : array_like, shape (d,)
        ``r_k > 0``.

    Examples
    --------
    >>> import numpy as np
    >>> dom = CrossPolytopeDomain([1.0, 0.5], np.zeros((2, 1)), [1.0])
    >>> dom(np.array([[[0.5], [0.9]], [[0.5], [1.1]]])).tolist()
    [True, False]
    >>> dom.uniform(4, np.random.default_rng(0)).shape
    (4, 2, 1)
    """

    def __init__(self, weights, center, radius):
        self.weights = np.asarray(weights, dtype=float)
        self.center = np.asarray(center, dtype=float)
        self.radius = np.asarray(radius, dtype=float).reshape(-1)
        q, d = self.center.shape if self.center.ndim == 2 else (0, 0)
        if self.weights.shape != (q,) or self.radius.shape != (d,) or q < 1 or d < 1:
            raise InvalidParameterError(
                f"CrossPolytopeDomain needs weights (q,), center (q, d), radius (d,); got shapes "
                f"{self.weights.shape}, {self.center.shape}, {self.radius.shape}."
            )
        if not (np.all(self.weights > 0) and np.all(self.radius > 0) and np.all(np.isfinite(self.center))):
            raise InvalidParameterError("CrossPolytopeDomain needs positive weights and radii and a finite center.")

    def __repr__(self) -> str:
        return f"CrossPolytopeDomain(q={len(self.weights)}, d={len(self.radius)})"

    def norms(self, theta) -> np.ndarray:
        """``Σ_i w_i |θ_ik − c_ik|`` for ``theta`` of shape (N, q, d): shape (N, d)."""
        return np.einsum("i,nik->nk", self.weights, np.abs(theta - self.center))

    def __call__(self, theta) -> np.ndarray:
        return np.all(self.norms(theta) <= self.radius, axis=1)

    def minimise_linear(self, direction):
        """``(argmin, min)`` of ``⟨direction, θ⟩`` over the domain (its support function)."""
        ratio = np.abs(direction) / self.weights[:, None]
        best = np.argmax(ratio, axis=0)
        cols = np.arange(direction.shape[1])
        vertex = self.center.copy()
        vertex[best, cols] -= self.radius * np.sign(direction[best, cols]) / self.weights[best]
        value = float(np.sum(direction * self.center) - np.sum(self.radius * ratio[best, cols]))
        return vertex, value

    def bounding_ball(self):
        """``(center, radius)`` of a Frobenius ball containing the domain: per column,
        ``‖θ_k − c_k‖_2 ≤ ‖θ_k − c_k‖_1 ≤ r_k / min_i w_i``."""
        return self.center, float(np.linalg.norm(self.radius / np.min(self.weights)))

    def uniform(self, m: int, rng) -> np.ndarray:
        """``m`` uniform draws, shape (m, q, d): per column, Dirichlet(1, …, 1) magnitudes with
        random signs fill the unit l1 ball uniformly; then scale by ``r_k / w_i``."""
        q, d = self.center.shape
        e = rng.exponential(size=(m, q + 1, d))
        u = e[:, :q] / e.sum(axis=1, keepdims=True)
        u *= rng.choice((-1.0, 1.0), size=u.shape)
        return self.center + u * (self.radius / self.weights[:, None])

    def project(self, theta) -> np.ndarray:
        """Euclidean projection of one point (q, d) onto the domain, column by column."""
        out = theta.copy()
        w = self.weights
        for k in range(theta.shape[1]):
            v = theta[:, k] - self.center[:, k]
            if w @ np.abs(v) <= self.radius[k]:
                continue
            t = np.abs(v) / w
            order = np.argsort(-t)
            cw = np.cumsum((w * np.abs(v))[order])
            cw2 = np.cumsum((w * w)[order])
            lam = (cw - self.radius[k]) / cw2
            j = int(np.flatnonzero(lam < t[order])[-1])
            shrink = np.maximum(np.abs(v) - lam[j] * w, 0.0)
            out[:, k] = self.center[:, k] + np.sign(v) * shrink
        return out

    def minimise_quadratic(self, gram, target) -> np.ndarray:
        """An approximate minimiser of ``‖Aθ − B‖_F`` over the domain.

        Column by column (the domain is a product and ``‖·‖_F²`` separates), the exact solution
        path of the weighted lasso (homotopy in its penalty, as LARS) until the constraint is
        met; accelerated projected gradient with an active-set polish if the path fails. Any
        answer is usable by :class:`AffineKNG` (its bounds are certified separately).
        """
        hessian = gram @ gram
        linear = gram @ target
        out = self.center.copy()
        for k in range(target.shape[1]):
            g = linear[:, k] - hessian @ self.center[:, k]
            try:
                out[:, k] += _lasso_path_to_radius(hessian, g, self.weights, float(self.radius[k]))
            except (np.linalg.LinAlgError, RuntimeError):
                out[:, k] = self._projected_gradient(hessian, linear)[:, k]
        return self.project(out)

    def _projected_gradient(self, hessian, linear):
        """Accelerated projected gradient with restarts, then an active-set polish."""
        step = 1.0 / np.linalg.eigvalsh(hessian)[-1]
        theta = self.center.copy()
        previous, momentum_point, t = theta, theta, 1.0
        value = np.inf
        for _ in range(_FISTA_ITERATIONS):
            theta = self.project(momentum_point - step * (hessian @ momentum_point - linear))
            new_value = 0.5 * np.sum(theta * (hessian @ theta)) - np.sum(theta * linear)
            if new_value > value:  # restart the momentum
                t, momentum_point, value = 1.0, theta, new_value
                continue
            t_next = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
            momentum_point = theta + ((t - 1.0) / t_next) * (theta - previous)
            previous, t, value = theta, t_next, new_value
        return self._polish(theta, hessian, linear)

    def _polish(self, theta, hessian, linear):
        """Solve the KKT system on the support and signs of ``theta`` for each column whose
        constraint is active; keep the solution where its signs agree."""
        out = theta.copy()
        w = self.weights
        for k in range(theta.shape[1]):
            u = theta[:, k] - self.center[:, k]
            if w @ np.abs(u) < self.radius[k] * (1 - 1e-9):
                continue  # inactive constraint: the column is (near) the unconstrained optimum
            support = np.flatnonzero(np.abs(u) > 1e-12 * max(1.0, float(np.max(np.abs(u)))))
            if support.size == 0:
                continue
            s = np.sign(u[support])
            ws = w[support] * s
            h = hessian[np.ix_(support, support)]
            g = linear[support, k] - hessian[support] @ self.center[:, k]
            size = support.size
            kkt = np.zeros((size + 1, size + 1))
            kkt[:size, :size] = h
            kkt[:size, size] = ws
            kkt[size, :size] = ws
            rhs = np.concatenate([g, [self.radius[k]]])
            try:
                sol = np.linalg.solve(kkt, rhs)
            except np.linalg.LinAlgError:
                continue
            if np.all(np.sign(sol[:size]) == s) and sol[size] >= 0:
                out[:, k] = self.center[:, k]
                out[support, k] += sol[:size]
        return self.project(out)


def _lasso_path_to_radius(hessian, g, w, radius):
    """``argmin ½uᵀHu − gᵀu`` subject to ``Σ w_i|u_i| ≤ radius``, by following the solution path
    of ``½uᵀHu − gᵀu + μ Σ w_i|u_i|`` from ``μ = max|g_i|/w_i`` (u = 0) down until the
    constraint binds (or μ = 0: the unconstrained optimum is feasible). Exact up to rounding;
    raises RuntimeError if the path does not end within its step budget."""
    q = len(g)
    u = np.zeros(q)
    if float(np.max(np.abs(g) / w)) == 0.0:
        return u
    mu = float(np.max(np.abs(g) / w))
    first = int(np.argmax(np.abs(g) / w))
    active, signs = [first], {first: float(np.sign(g[first]))}
    just_joined, just_left = first, None
    for _ in range(20 * q + 20):
        S = np.array(active)
        s = np.array([signs[i] for i in active])
        ws = w[S] * s
        h = hessian[np.ix_(S, S)]
        u = np.zeros(q)
        u[S] = np.linalg.solve(h, g[S] - mu * ws)
        direction = np.zeros(q)
        direction[S] = -np.linalg.solve(h, ws)  # du/dμ on the segment
        corr = g - hessian @ u
        slope = hessian @ direction  # as μ falls by t, corr grows by t·slope
        value = float(w @ np.abs(u))
        rate = -float(ws @ direction[S])  # dV/d(−μ) > 0
        steps = {"constraint": (radius - value) / rate if rate > 0 else np.inf, "bottom": mu}
        inactive = np.setdiff1d(np.arange(q), S)
        join_t, join_i, join_s = np.inf, None, 0.0
        for i in inactive:
            if i == just_left:  # it left at this μ: it cannot rejoin at once
                continue
            for sign, denominator, numerator in (
                (1.0, slope[i] + w[i], mu * w[i] - corr[i]),
                (-1.0, w[i] - slope[i], mu * w[i] + corr[i]),
            ):
                if denominator > 0:
                    t = max(numerator / denominator, 0.0)
                    if t < join_t:
                        join_t, join_i, join_s = t, int(i), sign
        steps["join"] = join_t
        leave_t, leave_i = np.inf, None
        for i in active:
            # only a coefficient shrinking towards 0 from its own sign leaves (not a fresh joiner)
            if i != just_joined and signs[i] * direction[i] > 0:
                t = max(u[i] / direction[i], 0.0)
                if t < leave_t:
                    leave_t, leave_i = t, i
        steps["leave"] = leave_t
        event = min(steps, key=steps.get)
        t = max(float(steps[event]), 0.0)
        mu_next = mu - t
        if event in ("constraint", "bottom"):
            u_final = np.zeros(q)
            u_final[S] = np.linalg.solve(h, g[S] - max(mu_next, 0.0) * ws)
            return u_final
        mu = mu_next
        just_joined = just_left = None
        if event == "join":
            active.append(join_i)
            signs[join_i] = join_s
            just_joined = join_i
        else:
            just_left = leave_i
            active.remove(leave_i)
            del signs[leave_i]
            if not active:
                raise RuntimeError("lasso path emptied its active set")
    raise RuntimeError("lasso path did not end within its step budget")
