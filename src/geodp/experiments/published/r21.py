"""Published numbers of R21 (Reimherr, Bharath, Soto, NeurIPS 2021, arXiv version with supplement).

R21 quotes few numbers: Fig. 1 has no ε and no list of sample sizes, and its panels carry no
values in the text beyond those below.
"""

from geodp.experiments.published import PublishedValue

__all__ = ["NOTE", "VALUES"]

NOTE = (
    "R21 leaves ε and the n grid of Fig. 1 out: we use ε = 1 (as S22's supplement does for the same "
    "designs) and n = 10, 20, 40, 60, 80, 100; supp. Fig. 2 gives no radius range, we use (0, π/4)."
)

VALUES = (
    PublishedValue("fig1-repetitions", 1000.0, "R21 Fig. 1 caption: '1000 for each P(2) and S²_1'"),
    PublishedValue("fig1-spd-radius", 1.5, "R21 supp. A.2.1: 'we set r = 1.5 and df = 2'"),
    PublishedValue("fig1-sphere-radius", "π/8", "R21 §5.2: 'a ball of radius r = π/8'"),
    PublishedValue("fig1-spd-not-pd", 0.25, "R21 §5.1: 'about 25% not being in P(k) at sample sizes 20-40'"),
    PublishedValue(
        "fig1-sphere-noise-reduction",
        0.15,
        "R21 §5.2: 'our approach still produces about 15% less noise, with an average of 16.8% "
        "reduction in the smaller sample sizes and 12% reduction in the larger sample sizes'",
    ),
    PublishedValue("fig1-sphere-reduction-small-n", 0.168, "R21 §5.2 (same sentence): smaller sample sizes"),
    PublishedValue("fig1-sphere-reduction-large-n", 0.12, "R21 §5.2 (same sentence): larger sample sizes"),
    PublishedValue(
        "supp-fig2-order",
        "2r < max < 2r(2 − h)",
        "R21 supp. B.1: 'We see that 2r < max_{i,j} ‖exp⁻¹_{x1}(x_i) − exp⁻¹_{x1}(x_j)‖ < 2r(2 − h(r, κ))'",
    ),
)
