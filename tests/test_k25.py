"""K25 reproductions at small repetitions: published bounds against observed sensitivities."""

import math

import numpy as np
import pytest

from geodp.errors import InvalidParameterError, PrivacyLeakWarning
from geodp.experiments import k25
from geodp.experiments.k25 import sensitivity_ratios, setting
from geodp.experiments.k25.releases import k25_two_stage, signed_angle_deg
from geodp.experiments.k25.sensitivity_ratios import run_fig5
from geodp.experiments.published import published


def test_fig5_published_footpoint_bound_broken_sound_bound_tight():
    res = run_fig5(10, np.random.default_rng(0), lambda it, **kw: it)
    adv = res.data[-1]
    assert adv["r_p_k25"] == pytest.approx(math.cos(1.0), abs=1e-9)  # docs/math.md §10: ratio cos 1 < 1
    assert adv["r_p_sound"] == pytest.approx(1.0, abs=1e-9)
    rand = [d for d in res.data if d["kind"] != sensitivity_ratios.ADVERSARIAL]
    assert min(d["r_p_sound"] for d in rand) >= 1.0 and min(d["r_v_sound"] for d in rand) >= 1.0
    assert published("K25", "fig5-ratio-min").value == 1.0  # K25 claims every ratio exceeds one


def test_fig5_draws_k25s_adjacent_pairs_beside_the_other_curve_swap():
    # K25 App. B: n + 1 points on one curve, D drops the first and D' the last (issue 21, item 6).
    (t, Y), (t2, Y2) = sensitivity_ratios.k25_adjacent_pair(20, np.random.default_rng(4))
    assert len(t) == len(t2) == 20 and np.array_equal(Y[:-1], Y2[1:]) and not np.array_equal(Y[-1], Y2[0])
    res = run_fig5(6, np.random.default_rng(0), lambda it, **kw: it)
    kinds = [d["kind"] for d in res.data]
    assert kinds.count(sensitivity_ratios.K25_PAIRS) == 6 and kinds.count(sensitivity_ratios.OTHER_CURVE_PAIRS) == 6
    # Both constructions in the table, each mean with its 95% interval and a generated verdict.
    k25_rows = [r for r in res.rows if sensitivity_ratios.K25_PAIRS in r.setting]
    assert len(k25_rows) == 2 and all("±" in r.ours and "95% interval" in r.note for r in k25_rows)


def test_sphere_data_design():
    t, Y, c = setting.k25_sphere_data(rng=3)
    assert Y.shape == (20, 3) and np.allclose(np.linalg.norm(Y, axis=1), 1.0)
    from geodp.manifolds import Sphere

    assert Sphere(2).dist(c, Y).max() < setting.RADIUS  # the chosen public ball holds the data


def test_k25_two_stage_release_matches_published_fig2():
    # K25's release as the paper runs it (Thm 3.4 scale, τ = the largest residual, no clipping),
    # 12 releases: K25 Fig. 2 reports a footpoint distance of 0.01 ± 0.01 and angles of 0.10° ± 5.47°.
    from geodp.manifolds import Sphere

    space = Sphere(2)
    rng = np.random.default_rng(1)
    t, Y, c = setting.k25_sphere_data(rng=rng)
    with pytest.raises(InvalidParameterError, match="as_published=True"):
        k25_two_stage(space, t, Y, c, 12, rng)
    with pytest.warns(PrivacyLeakWarning, match="not differentially private"):
        p, v, tau = k25_two_stage(space, t, Y, c, 12, rng, as_published=True)
    from geodp.regression import geodesic_regression

    p_hat, v_hat = geodesic_regression(space, t[:, None], Y)
    dist = space.dist(p_hat, p)
    angle = signed_angle_deg(
        p, space.transport(np.broadcast_to(p_hat, p.shape), p, np.broadcast_to(v_hat[0], v.shape)), v
    )
    assert 0.02 < tau < 0.2  # the data's largest residual (noise sd √0.001 per coordinate)
    assert 0.002 < dist.mean() < 3 * published("K25", "fig2-footpoint-distance-mean").value
    assert np.std(angle) < 3 * published("K25", "fig2-angle-sd-deg").value


def test_sound_law_flat_beyond_the_clip_explains_the_gap():
    # The sound release clips residuals at τ: far from the fit every residual is clipped,
    # ‖∇E‖ ≤ τ·√(1 + ¼), and the clipped residuals partly cancel, so the log-density there is only a
    # few nats below the fit's, over a support far larger than the fit's neighbourhood
    # (docs/reproduction.md, K25 Figs. 2–3).
    from geodp.manifolds import Sphere
    from geodp.models.geodesic_sampling import joint_gradient_norm

    space = Sphere(2)
    t, Y, c = setting.k25_sphere_data(rng=np.random.default_rng(2))
    xs = (t - 0.5)[:, None]
    far_p = space.exp(c, 0.5 * space.random_tangent(c, rng=0) / np.linalg.norm(space.random_tangent(c, rng=0)))
    far_v = space.random_tangent(far_p, rng=3)[None]
    far_v *= 1.3 / np.linalg.norm(far_v)
    residuals = space.dist(space.exp(np.broadcast_to(far_p, Y.shape), xs * far_v[0]), Y)
    assert residuals.min() > setting.TAU  # every residual clipped: the plateau of the sound law
    g = float(joint_gradient_norm(space, far_p, far_v, xs, Y, setting.TAU))
    assert g <= setting.TAU * math.sqrt(1.25) + 1e-12
    sigma = 2 * setting.TAU * 2 / 20 * math.sqrt(1.25) / setting.EPSILON  # 2Δ/ε
    assert g / sigma < 0.25 * 20 * setting.EPSILON + 1e-9  # ≤ 10 nats below the fit (where ∇E = 0)
    assert g < 0.8 * setting.TAU * math.sqrt(1.25)  # the clipped residuals cancel in part (6.6 nats here)


def test_registry_statuses():
    by_name = {r.name: r for r in k25.REPRODUCTIONS}
    assert by_name["k25-table1"].status == "stand-in data" and by_name["k25-fig7"].run is None
    assert all(by_name[n].status == "reproduced" for n in ("k25-fig1", "k25-fig2", "k25-fig3", "k25-fig5", "k25-fig6"))
    assert by_name["k25-fig3"].stream == by_name["k25-fig2"].stream
    assert {"k25-fig1", "k25-fig2", "k25-fig3", "k25-fig4", "k25-fig5", "k25-fig6", "k25-fig7", "k25-table1"} == set(
        by_name
    )


def test_fig1_and_fig6_rows_carry_intervals_and_computed_verdicts(monkeypatch):
    # Issue 21, item 9: K25 Figs. 1 and 6 compared numbers without intervals (Table 1's medians and
    # intervals: tests/test_k25_table1.py).
    from geodp.experiments.k25 import sphere_figures
    from geodp.experiments.reproduce import make_progress

    quiet = make_progress(False)
    fig1 = sphere_figures.run_fig1(3, np.random.default_rng(0), quiet)
    assert all(" ± " in r.ours and "95% interval" in r.note for r in fig1.rows if "drawn releases" in r.setting)
    monkeypatch.setattr(sphere_figures, "N_GRID", (10, 20))
    fig6 = sphere_figures.run_fig6(3, np.random.default_rng(0), quiet)
    change = [r for r in fig6.rows if "minus" in r.setting]
    assert len(change) == 2 and all("95% interval" in r.note and "decrease" in r.note for r in change)
