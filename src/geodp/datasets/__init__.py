"""Real and synthetic data sets."""

from geodp.datasets.descriptors import (
    DigitDescriptors,
    covariance_descriptors,
    descriptor_radius,
    load_digit_descriptors,
)
from geodp.datasets.geomstats_sets import (
    Cities,
    Connectomes,
    EMGCovariances,
    OpticalNerves,
    load_cities,
    load_connectomes,
    load_emg_covariances,
    load_optical_nerves,
)
from geodp.datasets.shapes import CellShapes, contour_landmarks, load_cell_shapes
from geodp.datasets.synthetic import eigenvalue_design, polar_cap, wishart_in_ball

__all__ = [
    "CellShapes",
    "Cities",
    "Connectomes",
    "DigitDescriptors",
    "EMGCovariances",
    "OpticalNerves",
    "contour_landmarks",
    "eigenvalue_design",
    "covariance_descriptors",
    "descriptor_radius",
    "load_cell_shapes",
    "load_cities",
    "load_connectomes",
    "load_digit_descriptors",
    "load_emg_covariances",
    "load_optical_nerves",
    "polar_cap",
    "wishart_in_ball",
]
