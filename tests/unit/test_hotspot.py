"""A hot-spot run's parts apart (stats/hotspot.py): the hot spot's SELECTs (memory) and the rest (storage)."""

import json
from pathlib import Path

import pytest

from dbio import file_formats
from dbio.jsondoc import Malformed
from dbio.stats import catalogue, hotspot

FIXTURES = Path(__file__).parent.parent / "fixtures"

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
    file_formats._figures(figures, "figures")
    with pytest.raises(Malformed):
        file_formats._figures({**figures, "hotspot": {"hot": {"mean_us": "fast"}, "cold": {}}}, "figures")


def _with_hot_spot(doc):
    """A recorded result as a hot-spot run would carry it: a third of its SELECTs timed as the hot kind."""
    import copy

    doc = copy.deepcopy(doc)
    hists, totals = doc["histograms"], doc["totals"]
    select = hists["select"]
    hot = [c // 3 for c in select["counts"]]
    hists["hot"] = {"counts": hot, "sum_us": select["sum_us"] / 30, "max_us": select["max_us"]}
    select["counts"] = [c - h for c, h in zip(select["counts"], hot)]
    totals["hot_rows"] = 8 * sum(hot)
    return doc


def test_a_merge_has_the_parts_only_when_every_input_has_them():
    from dbio import merge, result as results
    from tests.unit.test_merge_parts import OTHER_SERVER  # another host's run on its own server, at the same start

    first = _with_hot_spot(results.read(FIXTURES / "result_format2.json"))
    second = _with_hot_spot(OTHER_SERVER)
    merged = merge.merge([("app1", first), ("app2", second)], "two hosts")
    assert merged["totals"]["hot_rows"] == first["totals"]["hot_rows"] + second["totals"]["hot_rows"]
    assert merged["figures"]["hotspot"]["hot"]["rows"] == merged["totals"]["hot_rows"]
    older = OTHER_SERVER  # made before the hot kind
    mixed = merge.merge([("app1", first), ("app2", older)], "two hosts")
    assert "hot_rows" not in mixed["totals"] and mixed["figures"]["hotspot"] is None
