"""K25 reproductions at small repetitions: published bounds against observed sensitivities."""

import math

import numpy as np
import pytest

from geodp.experiments import k25
from geodp.experiments.published import published


def test_fig5_published_footpoint_bound_broken_sound_bound_tight():
    res = k25._run_fig5(10, np.random.default_rng(0), lambda it, **kw: it)
    adv = res.data[-1]
    assert adv["r_p_k25"] == pytest.approx(math.cos(1.0), abs=1e-9)  # docs/math.md §10: ratio cos 1 < 1
    assert adv["r_p_sound"] == pytest.approx(1.0, abs=1e-9)
    rand = [d for d in res.data if d["kind"] == "random"]
    assert min(d["r_p_sound"] for d in rand) >= 1.0 and min(d["r_v_sound"] for d in rand) >= 1.0
    assert published("K25", "fig5-ratio-min").value == 1.0  # K25 claims every ratio exceeds one


def test_sphere_data_design():
    t, Y, c = k25.k25_sphere_data(rng=3)
    assert Y.shape == (20, 3) and np.allclose(np.linalg.norm(Y, axis=1), 1.0)
    from geodp.manifolds import Sphere

    assert Sphere(2).dist(c, Y).max() < k25.RADIUS  # the chosen public ball holds the data


def test_registry_statuses():
    by_name = {r.name: r for r in k25.REPRODUCTIONS}
    assert by_name["k25-table1"].status == "partial" and by_name["k25-fig7"].run is None
    assert {"k25-fig1", "k25-fig2", "k25-fig3", "k25-fig4", "k25-fig5", "k25-fig6", "k25-fig7", "k25-table1"} == set(by_name)
