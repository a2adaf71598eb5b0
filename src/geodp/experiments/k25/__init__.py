"""Reproductions of K25 (Kulkarni & Soto, 2024/25) for ``geodp reproduce``: the sphere experiment
and the Euclidean case.

K25 releases the geodesic-regression footpoint and velocity in two KNG stages with its Thm 3.4
bounds; the footpoint bound ``2τ cos(1)/n`` is too small (a record at ``x = 0`` moves the
gradient by ``2τ/n``) and each stage conditions on the non-private other parameter
(docs/math.md §9–10). geodp's sound default is a joint KNG on ``(p, v)`` with ``σ = 2Δ/ε``
(:class:`~geodp.models.PrivateGeodesicRegression`). On the sphere (Figs. 1–3, 6) K25's release is
redone as the paper runs it (App. A: two MH stages, τ the fit's largest residual inside σ only, no
residual clipping), vectorised over releases; the Euclidean Table 1 uses the model's
``as_published=True`` (a :class:`~geodp.errors.PrivacyLeakWarning`, caught here on purpose). Both
are drawn beside the sound release, compared at ``x = 0`` as in K25.
"""

from __future__ import annotations

from geodp.experiments.k25.euclidean import run_fig4
from geodp.experiments.k25.sensitivity_ratios import run_fig5
from geodp.experiments.k25.sphere_figures import run_fig1, run_fig2, run_fig3, run_fig6
from geodp.experiments.k25.table1 import run_table1
from geodp.experiments.reproduce import Reproduction

__all__ = ["REPRODUCTIONS"]

REPRODUCTIONS = (
    Reproduction(
        "k25-fig1",
        "K25",
        "Fig. 1: twenty points on S², non-private and private geodesics",
        "reproduced",
        (3, 5),
        run_fig1,
        "a few sound and as-published releases drawn on the sphere (K25 draws one)",
    ),
    Reproduction(
        "k25-fig2",
        "K25",
        "Figs. 2–3: footpoint distance, velocity angle and MAE over private releases on S²",
        "reproduced",
        (10, 200),
        run_fig2,
        "K25's two-stage release as the paper runs it (Thm 3.4 scale, τ = the largest residual, no clipping) "
        "matches Fig. 2; the sound joint KNG (public τ = 0.1, ball radius 0.7, |v| ≤ 1.4, |ζ| = 0.8 chosen) is "
        "far worse at n = 20 (the ratio of the footpoint errors is a row of the table): with residuals clipped "
        "at τ the gradient stays small far from the fit (the "
        "clipped residuals cancel), so most of the law's mass lies there (not a mixing failure: 10× longer "
        "chains and starts at the fit give the same spread); one release per MH chain, K25 pairs m footpoints "
        "with m velocities",
        stream="k25-fig2",
    ),
    Reproduction(
        "k25-fig3",
        "K25",
        "Fig. 3: histogram of the private MAE",
        "reproduced",
        (10, 200),
        run_fig3,
        "the MAE histogram of the releases of k25-fig2 (same random stream; computed once within `all`)",
        stream="k25-fig2",
    ),
    Reproduction(
        "k25-fig4",
        "K25",
        "Fig. 4: regression lines on Wine Quality (4 features)",
        "partial",
        (5, 50),
        run_fig4,
        "Wine Quality is not offline: scikit-learn's diabetes data (first 100 rows, 4 features) stand in",
    ),
    Reproduction(
        "k25-fig5",
        "K25",
        "Fig. 5: theoretical / observed sensitivity ratios on adjacent pairs",
        "reproduced",
        (30, 100),
        run_fig5,
        "adds the adversarial pair (x = 0, opposite residuals) that breaks K25's footpoint bound",
    ),
    Reproduction(
        "k25-fig6",
        "K25",
        "Fig. 6: mean MAE vs n (11 replicates)",
        "reproduced",
        (3, 11),
        run_fig6,
        "n ∈ {10, 20, 50, 100, 200} chosen (K25 gives no grid); one data set per n; K25's release follows "
        "the non-private MAE; the sound release's draws sit far from the fit at small n (the rows below "
        "give the MAE with its interval at each n; k25-fig2 shows the spread)",
    ),
    Reproduction(
        "k25-fig7",
        "K25",
        "Fig. 7: parallel transport along two curves (diagram)",
        "not reproducible",
        (0, 0),
        None,
        "a diagram of curvature, no data",
    ),
    Reproduction(
        "k25-table1",
        "K25",
        "Table 1: MSE of non-DP LR, DPGR, diffprivlib, Opacus (ε = 2)",
        "stand-in data",
        (5, 50),
        run_table1,
        "Wine Quality is not offline: RAND, Fair and diabetes stand in (ratios to OLS); diffprivlib and Opacus "
        "run in their own virtualenv (pip on first use; without network their rows say not run); AdaSSP as a "
        "fifth column",
    ),
)
