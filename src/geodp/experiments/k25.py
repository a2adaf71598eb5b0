"""Reproductions of K25's figures and tables for ``geodp reproduce`` (filled in progressively)."""

from __future__ import annotations

import numpy as np  # noqa: F401

REPRODUCTIONS: tuple = ()
