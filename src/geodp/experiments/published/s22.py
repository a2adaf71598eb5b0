"""Published settings of S22 (Soto, Bharath, Reimherr, Slavković, NeurIPS 2022; supplement only).

The offline copy is the supplement: it gives the designs but no error values (those are in the
main text's figures), so the reproductions compare designs and scales, not errors.
"""

from geodp.experiments.published import PublishedValue

__all__ = ["NOTE", "VALUES"]

NOTE = (
    "Only the supplement is available offline: no published error values. S22 gives no n grid and no "
    "number of repetitions: we use n = 10, 20, 40, 60, 80, 100 and 100 data sets per n; for the shapes, "
    "ε = 0.5, 1, 2, 4 on geomstats cell contours (stand-in for the corpus callosa)."
)

VALUES = (
    PublishedValue("spd-radius", 1.5, "S22 supp. §2.3.1: 'For the simulations we set k = 2 and r = 1.5'"),
    PublishedValue("spd-kng-scale", "σ = 2Δ/ε = 4r/n", "S22 supp. §2.3.2: 'Here σ = 2Δ/ε = 4r/n since ε = 1'"),
    PublishedValue("sphere-radius", "π/8", "S22 supp. §2.4.1: 'set r = π/8'"),
    PublishedValue(
        "sphere-kng-scale", "σ = Δ/ε", "S22 supp. §2.4.2: 'Here σ = Δ/ε where Δ = 2r(2 − h(r, κ))/n and ε = 1'"
    ),
    PublishedValue("epsilon", 1.0, "S22 supp. §2.3.2 and §2.4.2: 'ε = 1'"),
    PublishedValue(
        "kendall-radius",
        "r = max_i ρ(x̄, x_i)",
        "S22 supp. §2.5.1: 'We set r = max_i ρ(x̄, x_i) the maximum shape distance from the Fréchet mean'",
    ),
    PublishedValue("kendall-kappa-max", 4.0, "S22 supp. §2.5.1: 'we set κ_max = 4'"),
    PublishedValue(
        "pointwise-scale",
        "σ = Δ/(ε/2k) = 4rk/n",
        "S22 supp. §2.5.2: ranges d_x,j, d_y,j 'the maximal distance from x̄_j' in the data",
    ),
)
