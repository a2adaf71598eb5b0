"""K25 Fig. 5: the published and the sound sensitivity bounds over the observed change of the
gradient on adjacent pairs, with the adversarial pair that breaks K25's footpoint bound.

Two constructions of the random pairs, both drawn:

* **K25's** (App. B): ``n + 1`` points on one curve (K25 §4.1's generator), ``D`` without the first
  point and ``D'`` without the last, so the two data sets differ by one record of the same curve;
* **another curve's point**: one record of ``D`` replaced by the record of a second, unrelated
  curve (a larger change of the gradient, so smaller ratios).
"""

from __future__ import annotations

import numpy as np

from geodp.experiments.k25.releases import k25_published_bounds
from geodp.experiments.k25.setting import (
    N_SPHERE,
    k25_sphere_data,
)
from geodp.experiments.plotting import agg_pyplot
from geodp.experiments.published import published
from geodp.experiments.reproduce import Result, Row, interval_text
from geodp.manifolds import Sphere
from geodp.regression import geodesic_regression, unchecked_regression_gradient
from geodp.sensitivity import geodesic_regression_sensitivity

__all__ = ["K25_PAIRS", "OTHER_CURVE_PAIRS", "k25_adjacent_pair", "run_fig5"]

K25_PAIRS = "K25's pairs (n + 1 points on one curve, first / last dropped)"
OTHER_CURVE_PAIRS = "one record swapped for another curve's"
ADVERSARIAL = "adversarial (x = 0, opposite residuals)"


def k25_adjacent_pair(n, rng):
    """K25 App. B's adjacent data sets: ``n + 1`` points of one K25 §4.1 curve, ``D`` drops the
    first and ``D'`` the last; returns ``(t, Y), (t', Y')`` (they share the ``n − 1`` middle points).

    Examples
    --------
    >>> (t, Y), (t2, Y2) = k25_adjacent_pair(20, np.random.default_rng(0))
    >>> t.shape, bool(np.array_equal(t[:-1], t2[1:])), bool(np.array_equal(Y[:-1], Y2[1:]))
    ((20,), True, True)
    """
    t, Y, _ = k25_sphere_data(n + 1, rng=rng)
    return (t[1:], Y[1:]), (t[:-1], Y[:-1])


def _other_curve_pair(n, rng):
    t, Y, _ = k25_sphere_data(n, rng=rng)
    t2, Y2, _ = k25_sphere_data(n, rng=rng)
    j = int(rng.integers(n))
    t_adj, Y_adj = t.copy(), Y.copy()
    t_adj[j], Y_adj[j] = t2[j], Y2[j]
    return (t, Y), (t_adj, Y_adj)


def _ratios(space, n, first, second):
    (t, Y), (t2, Y2) = first, second
    x, x2 = t[:, None], t2[:, None]
    p, v = geodesic_regression(space, x, Y)  # gradients at the fit of D, as K25's Δ^exp
    gp, gv = unchecked_regression_gradient(space, p, v, x, Y)
    gp2, gv2 = unchecked_regression_gradient(space, p, v, x2, Y2)
    fitted = space.exp(np.broadcast_to(p, Y.shape), x * v)
    fitted2 = space.exp(np.broadcast_to(p, Y2.shape), x2 * v)
    tau = max(float(space.dist(fitted, Y).max()), float(space.dist(fitted2, Y2).max()))
    exp_p, exp_v = float(np.linalg.norm(gp - gp2)), float(np.linalg.norm(gv - gv2))
    k25 = k25_published_bounds(space, n, tau)
    sound = geodesic_regression_sensitivity(space, n, residual_bound=tau, x_bound=1.0)
    return dict(
        r_p_k25=k25.footpoint / exp_p,
        r_v_k25=k25.velocity / exp_v,
        r_p_sound=sound.footpoint / exp_p,
        r_v_sound=sound.velocity / exp_v,
    )


def run_fig5(repetitions, rng, progress):
    """K25 Fig. 5, the sensitivity ratios of neighbouring datasets on S² (K25's adjacent pairs and the other-curve
    swap). ``repetitions`` releases per setting are drawn from ``rng``; ``progress`` wraps the loop (a tqdm-like
    callable). Returns the rows the item's table and figure are made of; run it through ``geodp reproduce
    k25-fig5``."""
    space = Sphere(2)
    data = []
    n = N_SPHERE
    for rep in progress(range(repetitions), total=repetitions, desc="K25 Fig. 5"):
        for kind, make in ((K25_PAIRS, k25_adjacent_pair), (OTHER_CURVE_PAIRS, _other_curve_pair)):
            data.append(dict(pair=rep, kind=kind, **_ratios(space, n, *make(n, rng))))
    # The adversarial pair of docs/math.md §10: one record at x = 0 with opposite residuals of norm τ.
    t, Y, _ = k25_sphere_data(rng=rng)
    x = t[:, None]
    p, v = geodesic_regression(space, x, Y)
    u = space.random_tangent(p, rng=rng)
    u /= np.linalg.norm(u)
    tau = 0.3
    x_a, x_b, Y_a, Y_b = x.copy(), x.copy(), Y.copy(), Y.copy()
    x_a[0] = x_b[0] = 0.0
    Y_a[0], Y_b[0] = space.exp(p, tau * u), space.exp(p, -tau * u)
    gp_a, gv_a = unchecked_regression_gradient(space, p, v, x_a, Y_a, residual_bound=tau)
    gp_b, gv_b = unchecked_regression_gradient(space, p, v, x_b, Y_b, residual_bound=tau)
    exp_p = float(np.linalg.norm(gp_a - gp_b))
    k25 = k25_published_bounds(space, n, tau)
    sound = geodesic_regression_sensitivity(space, n, residual_bound=tau, x_bound=1.0)
    data.append(
        dict(
            pair=repetitions,
            kind=ADVERSARIAL,
            r_p_k25=k25.footpoint / exp_p,
            r_v_k25=float("nan"),
            r_p_sound=sound.footpoint / exp_p,
            r_v_sound=float("nan"),
        )
    )
    published_mean = {
        "p": published("K25", "fig5-ratio-footpoint-mean").value,
        "v": published("K25", "fig5-ratio-velocity-mean").value,
    }
    plt = agg_pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(12, 8.4), sharex="col")
    for row, kind in enumerate((K25_PAIRS, OTHER_CURVE_PAIRS)):
        pairs = [d for d in data if d["kind"] == kind]
        for col, (which, title) in enumerate(
            (
                ("p", "footpoint: r_p = Δ_p(theory) / Δ_p(observed)"),
                ("v", "velocity: r_v = Δ_v(theory) / Δ_v(observed)"),
            )
        ):
            ax = axes[row, col]
            for j, (tag, label) in enumerate(
                (("k25", "K25 Thm 3.4 bound (as published)"), ("sound", "sound bound 2τ/n"))
            ):
                vals = np.array([d[f"r_{which}_{tag}"] for d in pairs])
                ax.hist(np.log10(vals), bins=20, alpha=0.55, color=f"C{j}", label=f"{label}: mean {vals.mean():.2f}")
            ax.axvline(0.0, color="k", ls=":", label="ratio 1 (bound = observed)")
            ax.axvline(
                np.log10(published_mean[which]),
                color="k",
                ls="--",
                label=f"K25's published mean {published_mean[which]}",
            )
            if which == "p":
                ax.axvline(np.log10(data[-1]["r_p_k25"]), color="C3", lw=2, label="K25 bound, adversarial pair")
            ax.set_ylabel("number of adjacent pairs")
            ax.set_title(f"{title}\n{kind}", fontsize=9)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
            if row == 1:
                ax.set_xlabel("log10 of the ratio")
    fig.suptitle(f"K25 Fig. 5: {repetitions} adjacent pairs of each kind, n = {n} on S², gradients at (p̂, v̂)")
    fig.tight_layout()
    rows = []
    for kind in (K25_PAIRS, OTHER_CURVE_PAIRS):
        pairs = [d for d in data if d["kind"] == kind]
        for which in ("p", "v"):
            k25_vals = np.array([d[f"r_{which}_k25"] for d in pairs])
            snd = np.array([d[f"r_{which}_sound"] for d in pairs])
            text, note = interval_text(k25_vals, published_mean[which])
            rows.append(
                Row(
                    f"Fig. 5, r_{which} with K25's bound, mean ± 95% (min; pairs below 1), {kind}",
                    f"{text} ({k25_vals.min():.2f}; {np.sum(k25_vals < 1)}/{k25_vals.size}); "
                    f"sound bound {snd.mean():.2f} ({snd.min():.2f}; {np.sum(snd < 1)}/{snd.size})",
                    f"{published_mean[which]} (all > 1)",
                    note + ("" if kind == K25_PAIRS else "; not K25's construction"),
                )
            )
    adv = data[-1]["r_p_k25"]
    rows.append(
        Row(
            "Fig. 5, r_p on the adversarial pair",
            f"K25 bound {adv:.3f}; sound {data[-1]['r_p_sound']:.3f}",
            "> 1 claimed",
            f"K25's footpoint bound is violated: only ≈ {1 / adv:.2f}ε-DP"
            if adv < 1
            else "K25's footpoint bound holds on this pair",
        )
    )
    return Result(fig, data, rows)
