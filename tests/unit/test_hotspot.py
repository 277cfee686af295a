"""A hot-spot run's parts apart (stats/hotspot.py): the hot spot's SELECTs (memory) and the rest (storage)."""

import json
from pathlib import Path

import pytest

from dbio import shapes
from dbio.jsondoc import Malformed
from dbio.stats import catalogue, hotspot

TOTALS = {"selects": 900, "updates": 100, "scans": 0, "rows": 10_000, "hot_rows": 3_000}
STATEMENTS = {"select": {"count": 600, "mean_us": 400.0, "p99_us": 2_000.0},
              "update": {"count": 100, "mean_us": 900.0, "p99_us": 4_000.0},
              "hot": {"count": 300, "mean_us": 8.0, "p99_us": 20.0}}


def test_the_parts_add_up_to_the_run():
    parts = hotspot.derive(TOTALS, STATEMENTS, 1_500.0, 350.0, 10.0)
    hot, cold = parts["hot"], parts["cold"]
    assert hot["statements"] == 300 and hot["share_pct"] == pytest.approx(30.0)  # of 1,000 statements
    assert hot["statements_per_s"] == pytest.approx(30.0) and hot["rows_per_s"] == pytest.approx(300.0)
    assert hot["mean_us"] == 8.0 and hot["p99_us"] == 20.0
    assert cold["statements"] + hot["statements"] == 1_000 and cold["rows"] + hot["rows"] == TOTALS["rows"]
    assert cold["selects"] == 600 and cold["mean_us"] == 400.0 and cold["p99_us"] == 2_000.0
    assert cold["reads_per_s"] == 1_500.0 and cold["avg_read_us"] == 350.0


def test_no_hot_spot_or_an_older_result_has_no_parts():
    assert hotspot.derive(TOTALS, {k: v for k, v in STATEMENTS.items() if k != "hot"}, 1.0, 1.0, 1.0) is None
    older = {k: v for k, v in TOTALS.items() if k != "hot_rows"}  # a result from before the hot kind
    assert hotspot.derive(older, STATEMENTS, 1.0, 1.0, 1.0) is None
    assert hotspot.line(None) is None


def test_the_report_line_says_memory_then_storage():
    parts = hotspot.derive(TOTALS, STATEMENTS, 1_500.0, 350.0, 10.0)
    assert hotspot.line(parts) == ("Hot spot: 30% of statements, avg 8.0 us (memory); cold rows: avg 400 us a "
                                   "SELECT, p99 2,000 us, 1,500 reads/s at 350 us")
    every = hotspot.derive({**TOTALS, "selects": 300, "updates": 0}, {"hot": STATEMENTS["hot"]}, None, None, 10.0)
    assert hotspot.line(every).endswith("(memory); no cold SELECT ran")


def test_the_catalogue_reads_the_parts_and_the_shape_checks_them():
    f = {"hotspot": hotspot.derive(TOTALS, STATEMENTS, 1_500.0, 350.0, 10.0)}
    assert catalogue.value(f, "hot_mean_us") == 8.0 and catalogue.value(f, "cold_p99_us") == 2_000.0
    assert catalogue.value(f, "hot_share_pct") == pytest.approx(30.0)
    assert catalogue.value({}, "cold_mean_us") is None  # no hot spot: absent
    recorded = json.loads((Path(__file__).parent.parent / "fixtures" / "result_complete.json").read_text())
    figures = {**{k: v for k, v in recorded["figures"].items() if k != "validity"}, **f}
    shapes._figures(figures, "figures")
    with pytest.raises(Malformed):
        shapes._figures({**figures, "hotspot": {"hot": {"mean_us": "fast"}, "cold": {}}}, "figures")
