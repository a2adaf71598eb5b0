"""Reproductions of U23 (Utpala, Vepakomma, Miolane, TMLR 2023), Figs. 1–4, for ``geodp reproduce``.

The space is SPD(k) with the log-Euclidean metric: flat, so every mechanism here is noise in the
isometric chart ``vecd∘Log`` and its error law does not depend on the data (docs/math.md §1, §4):
the Riemannian Laplace at scale σ has ``ρ_LE = σ·Gamma(d, 1)``, the tangent Gaussian
``ρ_LE = σ·χ_d``, ``d = k(k+1)/2``.

**U23's Laplace scale.** On this flat, homogeneous space the untruncated Laplace needs only
``σ = Δ/ε`` (R21 Thm 1; docs/math.md §4). U23's Rie-Laplace curves are twice ours in every panel,
consistent with ``σ = 2Δ/ε`` (the truncated-law rule). Each figure draws both: ours (``Δ/ε``, the
library's :class:`~geodp.mechanisms.LaplaceMechanism`) and U23's as-published variant (``2Δ/ε``:
the same mechanism run at ε/2, labelled "as published" in every figure). The factor 2 costs
utility but not privacy, so that variant needs no
:class:`~geodp.errors.PrivacyLeakWarning`; the extrinsic baseline "as published" (noise on the
Fréchet mean) does warn.

**Sampling.** U23 samples the Laplace with a 50,000-step MCMC (B.1); we draw it exactly. Fig. 4
runs a U23-style Metropolis–Hastings (:func:`~geodp.experiments.u23.baselines.u23_mcmc_laplace`)
as the timing baseline.

One module per idea: :mod:`~geodp.experiments.u23.baselines` (U23's mechanisms and closed forms),
:mod:`~geodp.experiments.u23.setting` (the grids, mechanisms and plot style the figures share),
:mod:`~geodp.experiments.u23.synthetic` (Fig. 1), :mod:`~geodp.experiments.u23.descriptors`
(Figs. 2–3) and :mod:`~geodp.experiments.u23.timing` (Fig. 4); this module lists them as
``REPRODUCTIONS``.
"""

from __future__ import annotations

from geodp.experiments.reproduce import Reproduction
from geodp.experiments.u23.descriptors import run_fig2, run_fig3
from geodp.experiments.u23.synthetic import run_fig1
from geodp.experiments.u23.timing import FIG4_FULL, run_fig4

__all__ = ["REPRODUCTIONS"]

REPRODUCTIONS = (
    Reproduction(
        "u23-fig1",
        "U23",
        "Fig. 1: synthetic SPD(k) k sweep — Laplace vs tangent Gaussian (top), δ (middle), extrinsic Gaussian (bottom)",
        "reproduced",
        (2, 10),
        run_fig1,
        "U23's Rie-Laplace (σ = 2Δ/ε) drawn beside ours (Δ/ε, enough on the flat log-Euclidean space); "
        "both sampled exactly instead of by U23's 50,000-step MCMC.",
    ),
    Reproduction(
        "u23-fig2",
        "U23",
        "Fig. 2: private Fréchet means of image descriptors vs ε (MedMNIST)",
        "stand-in data",
        (3, 10),
        run_fig2,
        "PathMNIST/OctoMNIST are not offline: stand-ins are 16×16 RGB patches of scikit-learn's two photos "
        "(left/right halves) and its 8×8 digits 0–3; the table compares the noise law at the paper's N.",
    ),
    Reproduction(
        "u23-fig3",
        "U23",
        "Fig. 3: private Fréchet means of image descriptors vs ε (MNIST, KMNIST, CIFAR10, FashionMNIST)",
        "stand-in data",
        (3, 10),
        run_fig3,
        "stand-ins: digits 4–7; digits 8, 9 and grey 16×16 photo patches; 8×8 RGB patches of the photos' "
        "quadrants; the table compares the noise law at the paper's N.",
    ),
    Reproduction(
        "u23-fig4",
        "U23",
        "Fig. 4: (a) time and (b) utility vs a U23-style MCMC; (c) Thm-5 radius ratio",
        "stand-in data",
        (3, FIG4_FULL),
        run_fig4,
        "(a, b) a U23-style MH (log-Gaussian proposal, matrix Exp/Log per step) at ε = 0.1 (Fig. 4b's ε is "
        "not stated): 2,000 timed steps (quick 500) extrapolated linearly to each burn-in; the utility "
        "runs the same chain in the chart for the full burn-ins. (c) on the digits and "
        "photo patches instead of MedMNIST.",
    ),
    Reproduction(
        "u23-table1",
        "U23",
        "Table 1: differences between R21's and U23's mechanisms (text)",
        "not reproducible",
        (0, 0),
        None,
        "a table of text, no numbers to compute",
    ),
    Reproduction(
        "u23-table2",
        "U23",
        "Table 2: operations on SPD(k) (text)",
        "not reproducible",
        (0, 0),
        None,
        "a table of formulas; geodp implements them (docs/math.md §1)",
    ),
)
