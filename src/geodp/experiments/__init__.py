"""Experiments on real data, one module per study; each returns table rows and can plot them."""

from geodp.experiments.cell_shapes import run_cell_shapes
from geodp.experiments.demo_study import run_demo
from geodp.experiments.mdm_study import run_mdm_study

__all__ = ["run_cell_shapes", "run_demo", "run_mdm_study"]
