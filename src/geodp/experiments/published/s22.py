"""Published numbers of S22 (Soto, Bharath, Reimherr, Slavković, NeurIPS 2022; supplement only)."""

from geodp.experiments.published import PublishedValue

__all__ = ["NOTE", "VALUES"]

NOTE = "Only the supplement is available offline; filled in with geodp.experiments.s22."

VALUES: tuple[PublishedValue, ...] = ()
