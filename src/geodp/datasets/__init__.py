"""Real and synthetic data sets."""

from geodp.datasets.descriptors import (
    DigitDescriptors,
    covariance_descriptors,
    descriptor_radius,
    load_digit_descriptors,
)

__all__ = ["DigitDescriptors", "covariance_descriptors", "descriptor_radius", "load_digit_descriptors"]
