"""Published numbers of K25 (Kulkarni & Soto, Differentially Private Geodesic and Linear Regression, 2024/25)."""

from geodp.experiments.published import PublishedValue

__all__ = ["NOTE", "VALUES"]

NOTE = (
    "K25 leaves the generating geodesic's length |ζ|, the data ball and the velocity bound out; "
    "geodp.experiments.k25 uses |ζ| = 0.8, a ball of radius 0.7 around the geodesic's midpoint and "
    "the model's defaults (V = 1.4, τ = 2.1). The Wine Quality data of Table 1 / Fig. 4 are not offline."
)

VALUES = (
    PublishedValue("fig2-footpoint-distance-mean", 0.01, "K25 §4.1, Fig. 2 left: 'a mean distance of 0.01'"),
    PublishedValue("fig2-footpoint-distance-sd", 0.01, "K25 §4.1, Fig. 2 left: 'standard deviation of 0.01'"),
    PublishedValue("fig2-angle-mean-deg", 0.10, "K25 §4.1, Fig. 2 right: 'a mean of 0.10 degrees'"),
    PublishedValue("fig2-angle-sd-deg", 5.47, "K25 §4.1, Fig. 2 right: 'a standard deviation of 5.47 degrees'"),
    PublishedValue("fig3-mae-nonprivate", 0.043, "K25 §4.1, Fig. 3: 'The MAE found by using (p̂, v̂) is 0.043'"),
    PublishedValue("fig3-mae-private-mean", 0.11, "K25 §4.1, Fig. 3: 'the mean of the histogram is 0.11'"),
    PublishedValue(
        "fig3-mae-private-sd", 0.00, "K25 §4.1, Fig. 3: 'standard deviation 0.00 (up to two decimal places)'"
    ),
    PublishedValue(
        "fig5-ratio-footpoint-mean", 3.12, "K25 App., Fig. 5 left: 'the mean of the histogram for r_p being 3.12'"
    ),
    PublishedValue("fig5-ratio-velocity-mean", 3.92, "K25 App., Fig. 5 right: 'the mean for r_v is 3.92'"),
    PublishedValue("fig5-ratio-min", 1.0, "K25 App., Fig. 5: 'ratios r_p, r_v are always greater than one'"),
    PublishedValue("table1-mse-nonprivate", 0.873, "K25 Table 1: Non-DP LR"),
    PublishedValue("table1-mse-dpgr", 0.954, "K25 Table 1: DPGR (ε = 2)"),
    PublishedValue("table1-mse-diffprivlib", 7.856, "K25 Table 1: IBM DP (diffprivlib, ε = 2)"),
    PublishedValue("table1-mse-opacus", 0.982, "K25 Table 1: OPACUS DP (ε = 2)"),
)
