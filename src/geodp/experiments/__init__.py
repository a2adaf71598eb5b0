"""Experiments on real data, one module per study; each returns table rows and can plot them."""

from geodp.experiments.cell_shapes import run_cell_shapes

__all__ = ["run_cell_shapes"]
