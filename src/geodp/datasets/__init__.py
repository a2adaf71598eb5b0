"""Real and synthetic data sets."""

from geodp.datasets.descriptors import (
    DigitDescriptors,
    covariance_descriptors,
    descriptor_radius,
    load_digit_descriptors,
)
from geodp.datasets.shapes import CellShapes, contour_landmarks, load_cell_shapes

__all__ = [
    "CellShapes",
    "DigitDescriptors",
    "contour_landmarks",
    "covariance_descriptors",
    "descriptor_radius",
    "load_cell_shapes",
    "load_digit_descriptors",
]
