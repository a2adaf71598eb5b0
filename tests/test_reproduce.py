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
