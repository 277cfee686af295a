"""Counters that go back inside the window, and readings no counter can be (issue 26, item 10): the
run is marked not valid with the reason, no figure is built on such a counter, a reading with NaN, an
infinity or a negative number is refused where it is read, and the result stays one dbio reads.

The pure parts on recorded snapshots; the whole pipeline on the fake engine, whose counters are reset
and which answers NaN once, inside the window."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from dbio import report
from dbio import result as results
from dbio.engines.postgres import stats as pg_stats
from dbio.report import verdict
from dbio.run.readings import normalized, refused
from dbio.stats import figures, resets, series
from tests.virtual_time import VirtualTime
from tests.fake_engine import FakeEngine
from tests.unit.test_figures import window_of
from tests.fake_runs import run_loaded as _run
from dbio.result_records import of

FIXTURES = Path(__file__).parent.parent / "fixtures"


def pg18(**changes):
    raw = json.loads((FIXTURES / "pg18_snapshot.json").read_text())
    raw["database"].update(changes)
    return raw


def reading(raw, t):
    return normalized({"nodes": {"node1": {**raw, "t": t}}}, lambda _node, r: pg_stats.normalize(r))


def test_a_counter_lower_than_before_is_named_with_both_values():
    before, after = pg_stats.normalize(pg18()), pg_stats.normalize(pg18(blks_read=3, xact_commit=0))
    back = {path: (b, a) for path, b, a in resets.went_back(before, after)}
    assert back["db.blks_read"] == (float(pg18()["database"]["blks_read"]), 3.0)
    assert "db.commits" in back
    assert not list(resets.went_back(before, before))


def test_gauges_and_the_clock_are_no_counters():
    before = {"t": 10.0, "gauges": {"other_sessions_active": 3.0}, "data": {"reads": 5.0}}
    after = {"t": 9.0, "gauges": {"other_sessions_active": 0.0}, "data": {"reads": 6.0}}
    assert list(resets.went_back(before, after)) == []


def test_pg_stat_reset_inside_the_window_is_found_once_per_counter_and_node():
    watch = resets.Watch(window_start=100.0)
    assert watch.see(reading(pg18(), 100.0)) == []
    assert "db.blks_read" in watch.see(reading(pg18(blks_read=2), 101.0))  # pg_stat_reset(): from zero again
    assert watch.see(reading(pg18(blks_read=9), 102.0)) == []  # counting again: no new reset
    assert "db.blks_read" in watch.see(reading(pg18(blks_read=1), 103.0))  # a second reset
    found = [r for r in watch.found if r["counter"] == "db.blks_read"]
    assert found == [{"node": "node1", "counter": "db.blks_read", "since_start": 1.0,
                      "before": float(pg18()["database"]["blks_read"]), "after": 2.0}]
    assert "db.blks_read" in watch.counters("node1") and watch.counters("node2") == []


def test_a_counter_that_went_back_and_came_past_its_begin_gives_no_figure():
    """Reset and counted past its value at the window's start: end - begin is positive, and wrong."""
    window = window_of(results.completed(json.loads((FIXTURES / "result_complete.json").read_text())))
    clean = figures.derive(window)
    after_reset = figures.derive({**window, "reset_counters": ["data.reads", "data.read_bytes"]})
    assert clean["load_profile"]["physical_reads_per_s"] > 0
    assert after_reset["load_profile"]["physical_reads_per_s"] is None
    assert after_reset["io_profile"]["data_read_mib_per_s"] is None
    assert after_reset["load_profile"]["statements_per_s"] == clean["load_profile"]["statements_per_s"]


def test_without_takes_out_paths_at_any_depth():
    values = {"data": {"reads": 5.0, "writes": 2.0}, "db": {"commits": 1.0}}
    assert resets.without(values, ["data.reads", "db"]) == {"data": {"reads": None, "writes": 2.0}, "db": None}
    assert values["data"]["reads"] == 5.0  # a copy


def test_an_interval_over_a_reset_has_no_rate_of_it_even_in_a_total_that_grew():
    """Two nodes: one reset, the other counted more: their total grew, and is no rate of anything."""
    rows = series.per_interval([
        {"k": 1, "engine": {"t": 1.0, "data": {"reads": 1000.0}}},
        {"k": 2, "engine": {"t": 2.0, "data": {"reads": 1500.0}}, "reset_counters": ["data.reads"]},
        {"k": 3, "engine": {"t": 3.0, "data": {"reads": 1600.0}}}], {}, [], 0.0)
    assert [r["reads_per_s"] for r in rows] == [None, pytest.approx(100.0)]


@pytest.mark.parametrize("change, fragment", [
    ({"database": {"blks_read": float("nan")}}, "database.blks_read is nan"),
    ({"database": {"blks_read": float("inf")}}, "database.blks_read is inf"),
    ({"database": {"blks_read": -5}}, "database.blks_read is -5, expected a count"),
    ({"database": {"blks_read": "NaN"}}, "db.blks_read is nan"),  # a string its engine makes a number of
    ({"database": {"blks_read": "many"}}, "cannot be read from it (ValueError"),
    ({"t": None}, "t is null, expected a number"),
])
def test_a_snapshot_no_counter_can_be_is_refused_at_reading(change, fragment):
    raw = pg18()
    for key, value in change.items():
        if isinstance(value, dict):
            raw[key].update(value)
        else:
            raw[key] = value
    why = refused(raw, pg_stats.normalize)
    assert why is not None and fragment in why, why
    assert refused(pg18(), pg_stats.normalize) is None


class _Hostile(FakeEngine):
    """The fake engine whose statistics are reset 1.2 s into the window, and which answers NaN once (in virtual
    time: dbio/run/clock.py)."""

    def __init__(self):
        super().__init__(time=VirtualTime())
        self.reset_done = self.nan_done = False

    async def snapshot(self, conn, info, run_id=None):
        run = next(iter(self.server.runs.values()), None)
        opened = run.window_open if run is not None else None
        if opened is not None and not self.reset_done and self.time.wall() > opened + 1.2:
            with self.server.lock:  # pg_stat_reset(): every counter from zero
                self.server.counters = {k: 0.0 for k in self.server.counters}
            self.reset_done = True
        raw = await super().snapshot(conn, info, run_id)
        if opened is not None and self.reset_done and not self.nan_done and self.time.wall() > opened + 2.2:
            self.nan_done = True
            return {**raw, "reads": float("nan")}
        return raw


def test_a_run_whose_counters_are_reset_and_read_as_nan_is_not_valid_and_reads_back(tmp_path):
    engine = _Hostile()
    outcome = _run(tmp_path, engine)
    assert engine.reset_done and engine.nan_done
    document = results.read(outcome.directory)  # no NaN: dbio reads its own result
    resets_found = {r["counter"] for r in document["counter_resets"]}
    assert {"data.reads", "client.reads", "db.blks_read"} <= resets_found
    invalid = verdict.invalid(of(document))
    assert [f.code for f in invalid] == ["counter_reset"]
    assert "data.reads" in invalid[0].message and "reset" in invalid[0].message
    assert verdict.headline(of(document)).startswith("not a storage result (INVALID): the engine's counters went back")
    assert document["figures"]["load_profile"]["physical_reads_per_s"] is None  # no figure on a reset counter
    for row in document["series"]:
        assert all(v is None or v >= 0 for k, v in row.items() if k.endswith("_per_s")), row
    refusals = [e for e in document["events"] if e["kind"] == "readings_refused"]
    assert len(refusals) == 1 and "reads is nan" in refusals[0]["message"]
    assert "readings_refused" in {f.code for f in verdict.findings(of(document))}
    samples = (outcome.directory / results.SAMPLES_FILE).read_text()
    assert '"refused"' in samples and "NaN" not in samples
    for form in report.FORMATS:
        report.render(of(document), form)
    text = (outcome.directory / results.REPORT_FILE).read_text()
    assert "INVALID" in text and "went back inside the window" in text


def test_the_result_file_never_holds_what_its_reader_refuses(tmp_path):
    """The last guard: a figure no reader would take (NaN, an infinity) is written as absent."""
    doc = copy.deepcopy(results.read(FIXTURES / "result_format2.json"))
    doc["figures"]["load_profile"]["physical_reads_per_s"] = float("nan")
    doc["figures"]["latency"]["avg_read_us"] = float("inf")
    results.write(tmp_path, doc)
    back = results.read(tmp_path)
    assert back["figures"]["load_profile"]["physical_reads_per_s"] is None
    assert back["figures"]["latency"]["avg_read_us"] is None


def test_a_merge_keeps_an_input_s_reset_and_builds_no_total_on_it():
    from dbio import merge

    from tests.unit.test_merge_parts import OTHER_SERVER

    first = results.read(FIXTURES / "result_format2.json")
    second = copy.deepcopy(OTHER_SERVER)  # another host's run on its own server, at the same start
    second["counter_resets"] = [{"node": "node1", "counter": "data.reads", "since_start": 1.0, "before": 9e5,
                                 "after": 10.0}]
    merged = merge.merge([("app1", first), ("app2", second)], "two hosts")
    assert merged["counter_resets"][0]["node"] == "app2"
    assert merged["figures"]["load_profile"]["physical_reads_per_s"] is None
    assert "data.reads of app2 at +1.0 s" in verdict.invalid(of(merged))[0].message


def test_the_run_s_own_connections_ending_is_no_reset_but_gives_no_figure():
    """PostgreSQL 18's per-backend I/O of dbio's own connections is a sum over those alive: one that ends
    takes its counts with it. No statistics were reset (the run stays valid); no figure is built on it."""
    raw = pg18()
    raw["sessions"] = {"reads": 500, "read_bytes": 500 * 8192, "writes": 0, "write_bytes": 0, "extends": 0}
    fewer = {**raw, "sessions": {**raw["sessions"], "reads": 200, "read_bytes": 200 * 8192}}
    watch = resets.Watch(window_start=100.0)
    watch.see(reading(raw, 100.0))
    assert watch.see(reading(fewer, 101.0)) == ["sessions.read_bytes", "sessions.reads"]
    assert watch.found == []
    assert watch.counters() == ["sessions.read_bytes", "sessions.reads"]


@pytest.mark.parametrize("name, engine", [("pg18_snapshot.json", "postgres"), ("pg15_snapshot.json", "postgres"),
                                          ("mysql/snapshot_mariadb_10_11_pfs.json", "mysql"),
                                          ("mysql/snapshot_mariadb_10_11.json", "mysql")])
def test_every_recorded_snapshot_is_a_reading(name, engine):
    from dbio.engines.mysql import stats as mysql_stats

    normalize = pg_stats.normalize if engine == "postgres" else mysql_stats.normalize
    assert refused(json.loads((FIXTURES / name).read_text()), normalize) is None
