"""The reproduction framework: registry, table, cached runs writing PNG/CSV/JSON."""

import io
import json

import pytest

from geodp.errors import InvalidParameterError
from geodp.experiments.published import PublishedValue, published, published_values
from geodp.experiments.reproduce import (
    STATUSES,
    Reproduction,
    Row,
    format_list,
    format_table,
    get_reproduction,
    reproductions,
    run_reproduction,
)


def test_registry_names_r21_and_s22_items_with_valid_statuses():
    items = {item.name: item for item in reproductions()}
    for name in ("r21-fig1", "r21-supp-fig2", "s22-sims", "s22-shapes"):
        assert name in items
    for item in items.values():
        assert item.status in STATUSES
        assert item.paper in ("R21", "U23", "S22", "K25")
        assert (item.run is None) == (item.status in ("pending", "not reproducible"))
    assert len(items) == len(reproductions())  # names are unique


def test_reproduction_refuses_bad_status_and_missing_run():
    with pytest.raises(InvalidParameterError):
        Reproduction("x", "R21", "t", "done", (1, 2), None)
    with pytest.raises(InvalidParameterError):
        Reproduction("x", "R21", "t", "reproduced", (1, 2), None)
    with pytest.raises(InvalidParameterError):
        get_reproduction("no-such-item")


def test_format_table_aligns_columns():
    text = format_table([Row("a", "1", "22", "n"), Row("bbb", "333", "4")])
    lines = text.splitlines()
    assert lines[0].startswith("setting | ours | published")
    assert lines[2].index("|") == lines[3].index("|") == len("setting ")


def test_published_values_have_sources():
    for paper in ("R21", "S22"):
        values = published_values(paper)
        assert values and all(isinstance(v, PublishedValue) and v.source for v in values)
    assert published("R21", "fig1-spd-not-pd").value == 0.25
    with pytest.raises(InvalidParameterError):
        published("R21", "nothing")


def test_run_writes_png_csv_and_reads_the_cache(tmp_path):
    out = io.StringIO()
    first = run_reproduction("r21-supp-fig2", quick=True, output_dir=tmp_path, out=out, progress=False)[0]
    assert not first.cached and first.png_path.stat().st_size > 10_000
    header = first.csv_path.read_text().splitlines()[0]
    assert "b1_fixed_footpoint" in header and "lemma1" in header
    record = json.loads((tmp_path / "r21-supp-fig2.json").read_text())
    assert record["settings"]["repetitions"] == 1 and record["seconds"] > 0
    again = run_reproduction("r21-supp-fig2", quick=True, output_dir=tmp_path, out=out, progress=False)[0]
    assert again.cached and again.rows == first.rows
    assert any(
        line.split() == ["setting", "|", "ours", "|", "published", "|", "note"] for line in out.getvalue().splitlines()
    )


def test_list_names_every_figure_and_table_of_the_four_papers():
    # The papers' captions: R21 Figs. 1 and (supp.) 2; U23 Figs. 1-4, Tables 1-2; S22's supplement
    # (no numbered figures: its two simulation designs); K25 Figs. 1-7 and Table 1.
    expected = {
        "r21-fig1",
        "r21-supp-fig2",
        "u23-fig1",
        "u23-fig2",
        "u23-fig3",
        "u23-fig4",
        "u23-table1",
        "u23-table2",
        "s22-sims",
        "s22-shapes",
        "k25-table1",
    } | {f"k25-fig{i}" for i in range(1, 8)}
    items = {item.name: item for item in reproductions()}
    assert set(items) == expected
    assert not [name for name, item in items.items() if item.status == "pending"]
    listing = format_list()
    assert all(name in listing for name in expected)


def test_items_sharing_a_stream_draw_the_same_numbers():
    a, b = get_reproduction("k25-fig2"), get_reproduction("k25-fig3")
    assert a.stream is not None and a.stream == b.stream


def test_cache_is_keyed_on_the_code_and_published_numbers_go_to_csv(tmp_path):
    # Issue 21, items 8–9: a code change reruns an item (the version string did not change with
    # edits); the published numbers an item compares with are written beside its CSV.
    from geodp.experiments.reproduce import code_digest

    first = run_reproduction("r21-supp-fig2", quick=True, output_dir=tmp_path, out=io.StringIO(), progress=False)[0]
    meta_path = tmp_path / "r21-supp-fig2.json"
    record = json.loads(meta_path.read_text())
    assert record["settings"]["code"] == code_digest() and "geodp" not in record["settings"]
    published_csv = (tmp_path / "r21-supp-fig2-published.csv").read_text()
    assert published_csv.splitlines()[0] == "paper,key,value,source" and "supp-fig2-order" in published_csv
    record["settings"]["code"] = "0" * 16  # a record made by other code
    meta_path.write_text(json.dumps(record))
    again = run_reproduction("r21-supp-fig2", quick=True, output_dir=tmp_path, out=io.StringIO(), progress=False)[0]
    assert not again.cached and again.rows == first.rows


def test_docs_tables_are_the_quick_run_of_this_code():
    # docs/reproduction.md's tables are generated (python -m geodp.experiments.reproduction_docs) from
    # a quick run; the JSON it writes carries the digest of the code that ran. After a code change,
    # rerun the generator.
    from pathlib import Path

    from geodp.experiments.reproduce import code_digest
    from geodp.experiments.reproduction_docs import RESULTS, generated_section, render

    root = Path(__file__).resolve().parent.parent
    results = json.loads((root / RESULTS).read_text())
    runnable = {item.name for item in reproductions() if item.run is not None}
    assert set(results["items"]) == runnable
    assert generated_section((root / "docs" / "reproduction.md").read_text()) == render(results)
    assert results["code"] == code_digest(), "the code changed: rerun python -m geodp.experiments.reproduction_docs"


def test_items_sharing_a_run_draw_their_own_figures(monkeypatch):
    # k25-fig3 was a byte copy of k25-fig2 (issue 21, item 9); k25-table1 has its own run now
    # (tests/test_k25_table1.py).
    import numpy as np

    from geodp.experiments.k25 import sphere_figures
    from geodp.experiments.k25.setting import AS_PUBLISHED, SOUND

    rng = np.random.default_rng(0)
    sphere = [
        dict(release=label, footpoint_distance=d, angle_deg=a, mae=m, clipped_share=0.1, sigma=0.01)
        for label in (SOUND, AS_PUBLISHED)
        for d, a, m in zip(rng.uniform(0.01, 0.5, 5), rng.normal(0, 5, 5), rng.uniform(0.03, 0.4, 5))
    ]
    monkeypatch.setattr(sphere_figures, "_fig23_draws", lambda *a: (sphere, 0.04))
    fig2, fig3 = sphere_figures.run_fig2(5, None, None), sphere_figures.run_fig3(5, None, None)
    titles2 = [ax.get_title() for ax in fig2.figure.axes]
    titles3 = [ax.get_title() for ax in fig3.figure.axes]
    assert any("Fig. 2" in t for t in titles2) and not any("Fig. 3" in t for t in titles2)
    assert len(titles3) == 1 and "Fig. 3" in titles3[0]
    legend3 = [t.get_text() for t in fig3.figure.axes[0].get_legend().get_texts()]
    assert any("published" in t and "0.11" in t for t in legend3)


def test_mdm_docs_tables_are_the_quick_run_of_this_code():
    # Issue 21, item 8: docs/mdm.md's tables and observations were typed by hand. They are generated
    # (python -m geodp.experiments.mdm_docs) from a `geodp mdm --quick` run whose JSON carries the
    # code digest. After a code change, rerun the generator.
    from pathlib import Path

    from geodp.experiments.mdm_docs import RESULTS, generated_section, render
    from geodp.experiments.mdm_study import QUICK_EPSILONS, QUICK_REPEATS
    from geodp.experiments.reproduce import code_digest

    root = Path(__file__).resolve().parent.parent
    results = json.loads((root / RESULTS).read_text())
    for name, grid in QUICK_EPSILONS.items():
        assert sorted({r["epsilon"] for r in results["rows"] if r["dataset"] == name}) == sorted(grid)
    assert results["quick"] and {r["repeats"] for r in results["rows"]} == {QUICK_REPEATS} == {results["repeats"]}
    text = (root / "docs" / "mdm.md").read_text()
    assert generated_section(text) == render(results)
    outside = text.replace(generated_section(text), "")
    assert "|---|---|---|" not in outside.split("| train / test |")[1], "accuracy tables outside the generated part"
    assert results["code"] == code_digest(), "the code changed: rerun python -m geodp.experiments.mdm_docs"


def _mdm_row(eps, accuracy, *, se=0.01, repeats=3, exact=True, mechanism="laplace"):
    return dict(
        dataset="connectomes",
        metric="log-euclidean",
        mechanism=mechanism,
        epsilon=eps,
        repeats=repeats,
        accuracy=accuracy,
        accuracy_se=se,
        non_private=0.72,
        chance=0.55,
        exact=exact,
        seconds_per_fit=0.1,
    )


def test_mdm_docs_observations_are_computed_from_the_rows():
    from geodp.experiments.mdm_docs import render

    def results(rows):
        sizes = {"connectomes": 29}
        return dict(code="x", seed=0, quick=True, repeats=rows[0]["repeats"], seconds=1.0, test_sizes=sizes, rows=rows)

    rows = [_mdm_row(10.0, 0.55, exact=False), _mdm_row(1e4, 0.71), _mdm_row(1e4, 0.60, mechanism="kng")]
    rows.append(_mdm_row(10.0, 0.50, mechanism="kng"))
    text = render(results(rows))
    assert "| log-euclidean | laplace | 0.55 ± 0.02† | 0.71 ± 0.02 | 0.72 |" in text
    assert "ε = 10⁴: +0.01 to +0.12 (1 of 2 intervals hold the non-private accuracy" in text
    assert "Sampled by MCMC (†, DP only approximately): log-euclidean laplace at ε = 10" in text
    assert "Most accurate at the smallest ε (10): log-euclidean laplace (0.55" in text
    rows = [dict(r, exact=True, repeats=1, accuracy_se=None) for r in rows]
    text = render(results(rows))
    assert "Every release was exact" in text and "†" not in text.split("all others are exact")[1]
    assert "one test record moves an accuracy by 0.034" in text and "intervals hold" not in text
