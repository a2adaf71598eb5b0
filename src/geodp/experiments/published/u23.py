"""Published numbers of U23 (Utpala, Vepakomma, Miolane, TMLR 2023).

The figures' curves are not printed as numbers; the text extraction of the PDF keeps the y-axis
tick labels, so several values below are the **top tick of a panel's y axis**. Matplotlib puts
the axis limit about 5% above the highest plotted value (here the top of the Rie-Laplace band,
mean + 2 sd) and labels only ticks below that limit, so the top tick sits within a tick step
below the highest curve: read these as "the Rie-Laplace curve ends near this value", ±15% (one
tick step).
"""

from geodp.experiments.published import PublishedValue

__all__ = ["NOTE", "VALUES", "FIG2_PANELS", "FIG3_PANELS"]

NOTE = (
    "U23's image sets (MedMNIST, MNIST, KMNIST, CIFAR10, FashionMNIST) cannot be had offline: "
    "geodp.experiments.u23 uses scikit-learn's digits and its two bundled photos as stand-ins and "
    "compares the noise law at the paper's N (data-independent on a flat space). Fig. 4b's ε is not "
    "stated; its y axis (top 50 at k = 30) matches Fig. 1's ε = 0.1 panel, which we use."
)

_TOP = "top tick of the y axis (text extraction of the PDF; the Rie-Laplace curve is the highest), ±15%"

VALUES = (
    PublishedValue("fig1-rie-laplace-k30-eps0.1", 50.0, "axis reading of Fig. 1 (top), panel ε = 0.1: " + _TOP),
    PublishedValue("fig1-rie-laplace-k30-eps0.2", 25.0, "axis reading of Fig. 1 (top), panel ε = 0.2: " + _TOP),
    PublishedValue("fig1-rie-laplace-k30-eps0.3", 17.5, "axis reading of Fig. 1 (top), panel ε = 0.3: " + _TOP),
    PublishedValue("fig1-rie-laplace-k30-eps0.4", 14.0, "axis reading of Fig. 1 (top), panel ε = 0.4: " + _TOP),
    PublishedValue(
        "fig1-improvement-large-k",
        10.0,
        "U23 §6.1: 'The tangent Gaussian mechanisms (ours) yield almost ×10 utility improvement "
        "for larger k, for each ϵ' (Rie-Laplace error / TanG error at k = 30)",
    ),
    PublishedValue(
        "fig1-extg-k30-eps0.1",
        10.0,
        "axis reading of Fig. 1 (bottom), panel ε = 0.1: top tick, ExtG the highest curve, ±20%",
    ),
    PublishedValue("fig1-extg-k30-eps0.2", 8.0, "axis reading of Fig. 1 (bottom), panel ε = 0.2: top tick, ±25%"),
    PublishedValue("fig1-extg-k30-eps0.3", 8.0, "axis reading of Fig. 1 (bottom), panel ε = 0.3: top tick, ±12%"),
    PublishedValue("fig1-extg-k30-eps0.4", 8.0, "axis reading of Fig. 1 (bottom), panel ε = 0.4: top tick, ±12%"),
    PublishedValue(
        "fig4-mcmc-seconds-k30-burnin10000",
        14.0,
        "U23 B.2: 'Riemannian Laplace mechanism takes 14sec (burn-in 10000)' at k = 30",
    ),
    PublishedValue("fig4-mcmc-seconds-k30-burnin30000", 36.0, "U23 B.2: '36sec (burn-in 30000)' at k = 30"),
    PublishedValue("fig4-mcmc-seconds-k30-burnin50000", 73.0, "U23 B.2: '73sec (burn-in 50000)' at k = 30"),
    PublishedValue(
        "fig4-tang-seconds-k30", 1.3e-6, "U23 B.2: 'our tangent Gaussian (Analytic) mechanism takes 1.3microsec'"
    ),
    PublishedValue(
        "fig4-mcmc-acceptance",
        "50% to 65%",
        "U23 B.1: 'using the log Gaussian distribution as proposal yields a stable acceptance ratio of 50% to 65%'",
    ),
    PublishedValue("fig4b-rie-laplace-k30", 50.0, "axis reading of Fig. 4 (b): " + _TOP),
    PublishedValue(
        "fig4c-ratio-min",
        1.2,
        "axis reading of Fig. 4 (c): lowest y tick of 'radius predicted / radius obtained', ±0.05",
    ),
    PublishedValue("fig4c-ratio-max", 1.8, "axis reading of Fig. 4 (c): highest y tick, ±0.05"),
)

# (dataset, N, channels, top tick of the panel's y axis) per panel, as in the PDF (Fig. 2: rows
# PathMNIST (RGB), OctoMNIST (grey); Fig. 3: MNIST, KMNIST (grey), CIFAR10, FashionMNIST (the
# caption says RGB; FashionMNIST is grey, and the axes fit the 9×9 grey bound)).
FIG2_PANELS = (
    ("PathMNIST", 10704, 3, 14.0),
    ("PathMNIST", 10356, 3, 14.0),
    ("PathMNIST", 10699, 3, 14.0),
    ("PathMNIST", 11035, 3, 14.0),
    ("OctoMNIST", 33734, 1, 3.5),
    ("OctoMNIST", 10463, 1, 8.0),
    ("OctoMNIST", 8004, 1, 10.0),
    ("OctoMNIST", 46276, 1, 2.0),
)
FIG3_PANELS = (
    ("MNIST", 6903, 1, 14.0),
    ("MNIST", 7877, 1, 12.0),
    ("MNIST", 6990, 1, 14.0),
    ("MNIST", 7141, 1, 14.0),
    ("KMNIST", 7000, 1, 14.0),
    ("KMNIST", 7000, 1, 14.0),
    ("KMNIST", 7000, 1, 12.0),
    ("KMNIST", 7000, 1, 14.0),
    ("CIFAR10", 6000, 3, 20.0),
    ("CIFAR10", 6000, 3, 25.0),
    ("CIFAR10", 6000, 3, 20.0),
    ("CIFAR10", 6000, 3, 20.0),
    ("FashionMNIST", 7000, 1, 12.0),
    ("FashionMNIST", 7000, 1, 12.0),
    ("FashionMNIST", 7000, 1, 12.0),
    ("FashionMNIST", 7000, 1, 16.0),
)

# Each panel's axis top as a published value (looked up by the run, so it goes to the CSV).
VALUES += tuple(
    PublishedValue(
        f"{fig}-panel{i + 1}-axis-top",
        top,
        f"axis reading of Fig. {fig[-1]}, panel {i + 1} ({name}, N = {n}): " + _TOP,
    )
    for fig, panels in (("fig2", FIG2_PANELS), ("fig3", FIG3_PANELS))
    for i, (name, n, _, top) in enumerate(panels)
)
