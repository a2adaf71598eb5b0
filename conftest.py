"""Suite-wide configuration: the geomstats oracle and the fast subset.

geomstats 2.8 does not import with numpy >= 2.4, so it is not in the ``test`` extra (which would
otherwise hold the whole suite back on an older numpy). The doctests that need it are skipped
where it does not import, like the tests, which use ``pytest.importorskip``; ``.ci/run`` runs
all of them in a virtualenv of its own with the ``geomstats`` extra (:data:`GEOMSTATS_PATHS`).

``-m "not slow"`` deselects the tests listed in ``tests/slow_tests.txt`` (the statistical sampler
checks and the end-to-end runs, measured with ``--durations``); the rest still takes minutes
(README.md, "Quickstart", gives measured times).
"""

from __future__ import annotations

import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent
# Doctests that load geomstats' data or wrap its spaces.
GEOMSTATS_DOCTESTS = (
    "src/geodp/cli/common.py",
    "src/geodp/datasets/geomstats_sets.py",
    "src/geodp/datasets/shapes.py",
    "src/geodp/experiments/cell_shapes.py",
    "src/geodp/experiments/mdm_gaussian_study.py",
    "src/geodp/experiments/mdm_study.py",
    "src/geodp/manifolds/geomstats_adapter.py",
    "docs/guide.md",
)
# What .ci/run runs in the geomstats virtualenv: those doctests and the test files that import it.
GEOMSTATS_PATHS = GEOMSTATS_DOCTESTS + (
    "tests/test_from_geomstats.py",
    "tests/test_geomstats_datasets.py",
    "tests/test_mdm_study.py",
    "tests/test_manifolds.py",
    "tests/test_regression.py",
    "tests/test_frechet.py",
    "tests/test_cli.py",
    "tests/test_s22.py",
    "tests/test_shapes.py",
)


def _geomstats_imports() -> bool:
    try:
        import geomstats  # noqa: F401
    except Exception:  # geomstats 2.8 raises more than ImportError under numpy 2.4
        return False
    return True


def _slow_ids() -> set[str]:
    path = ROOT / "tests" / "slow_tests.txt"
    if not path.exists():
        return set()
    lines = (line.split("#")[0].strip() for line in path.read_text(encoding="utf-8").splitlines())
    return {line for line in lines if line}


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: a statistical or end-to-end test (deselect with -m 'not slow')")


def pytest_collection_modifyitems(config, items):
    have_geomstats = _geomstats_imports()
    skip = pytest.mark.skip(reason="geomstats does not import here (pip install -e '.[geomstats]')")
    slow = _slow_ids()
    for item in items:
        relative = pathlib.Path(str(item.path)).resolve().relative_to(ROOT).as_posix()
        if not have_geomstats and relative in GEOMSTATS_DOCTESTS and type(item).__name__ == "DoctestItem":
            item.add_marker(skip)
        node = item.nodeid.split("[")[0]
        if item.nodeid in slow or node in slow or relative in slow:
            item.add_marker(pytest.mark.slow)
