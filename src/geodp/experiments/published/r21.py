"""Published numbers of R21 (Reimherr, Bharath, Soto, NeurIPS 2021, arXiv version with supplement).

Filled in with the R21 reproductions (:mod:`geodp.experiments.r21`).
"""

from geodp.experiments.published import PublishedValue

__all__ = ["NOTE", "VALUES"]

NOTE = "R21 leaves the ε and n grids of Fig. 1 out; geodp.experiments.r21 says what we chose."

VALUES = (
    PublishedValue("fig1-sphere-noise-reduction", 0.15,
                   "R21 §5.2: 'our approach still produces about 15% less noise, with an average of 16.8% "
                   "reduction in the smaller sample sizes and 12% reduction in the larger sample sizes'"),
)
