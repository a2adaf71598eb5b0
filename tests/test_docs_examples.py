"""The example scripts of docs/ run and return sane numbers (quick settings, short MH chains)."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "docs" / "examples"


def _load(name):
    spec = importlib.util.spec_from_file_location(f"docs_example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def short_chains(monkeypatch):
    """Short MH runs: this test checks that the script runs and its numbers are sane, not the
    sampler's law (tests/test_geodesic_regression_model.py does that with the full chains)."""
    import geodp.models.geodesic_sampling as module

    monkeypatch.setattr(module, "BURN_IN", 1500)
    monkeypatch.setattr(module, "THINNING", 300)


def test_sphere_regression_quick(short_chains):
    pytest.importorskip("matplotlib")
    script = _load("sphere_regression")
    tracked = EXAMPLES.parent / "images" / "sphere_regression.png"
    before = tracked.read_bytes()
    result = script.main(quick=True, progress=False)  # no out_dir: --quick must not touch docs/images

    png = result["png"]
    assert tracked.read_bytes() == before and png.resolve().parent != tracked.resolve().parent
    assert png.stat().st_size > 10_000
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    # The synthetic data: nothing outside the public ball; the non-private fit finds the truth
    # to within the noise (0.06 rad per axis over 60 records).
    assert result["records_outside_ball"] == 0
    footpoint, velocity = result["nonprivate_vs_truth"]
    assert footpoint < 0.05 and velocity < 0.2
    assert result["true_speed"] == pytest.approx(0.5)

    # The releases: σ = 2Δ/ε from public quantities only; errors finite and inside what the
    # support allows (footpoint within the ball of radius 0.6, ‖v‖ ≤ 1.2 so errors ≤ 2.4).
    scales = result["noise_scale"]
    assert set(scales) == {1.0, 5.0}
    delta = 2 * script.RESIDUAL_BOUND / result["n"] * math.sqrt(1.25)
    for eps, scale in scales.items():
        assert scale == pytest.approx(2 * delta / eps, rel=1e-9)
    for eps, (fp, vel) in result["median_errors"].items():
        assert 0.0 <= fp <= 1.2 and 0.0 <= vel <= 2.4, (eps, fp, vel)
    # At ε = 5 the law is narrow (σ ≈ 0.0045): the release lands near the non-private fit.
    fp5, vel5 = result["median_errors"][5.0]
    assert fp5 < 0.1 and vel5 < 0.8
    assert any("Metropolis" in note for note in result["warnings"])
