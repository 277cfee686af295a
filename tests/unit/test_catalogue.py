"""The catalogue of figures: every entry resolves where the figures code writes it, comparisons
know which way is better, and a name it does not declare fails loudly."""

import copy
import json
from pathlib import Path

import pytest

from dbio import file_formats
from dbio.stats import catalogue, figures
from dbio import result as results
from tests.fixtures.rederive import window_of

FIXTURES = Path(__file__).parent.parent / "fixtures"
SCENARIOS = ("complete", "interrupted", "cached", "pg15")
REPORT_KINDS = {"text", "count", "us", "pct", "seconds", "rate"}  # what report/fmt.cell formats
# Newer than the recorded fixtures: PostgreSQL 18's per-session counters, checked on re-derived figures.
NOT_RECORDED = {"other_read_share_pct", "other_write_share_pct", "host_unsampled_pct",  # recorded before they were
                "cpu_wait_seconds", "cpu_wait_us_per_read", "cpu_wait_pct", "server_cpu_seconds", "kernel_cpu_seconds",
                "other_cpu_seconds", "other_cpu_pct", "io_worker_cpu_wait_seconds", "io_worker_cpu_wait_us_per_read",
                "server_cpu_throttled_seconds", "server_cpu_throttled_periods_pct", "device_read_bytes",
                "db_read_bytes",
                *(f.name for f in catalogue.FIGURES if f.path[:1] == ("shape",))}  # and the workload's shape
# Written beside the window's figures by a raw-device baseline (dbio run --baseline), not by figures.derive.
BASELINE = {f.name for f in catalogue.FIGURES if f.path[:1] == ("baseline",)}
# A hot standby's only (the recorded fixtures are primaries): checked on a window given a standby's counters.
STANDBY = {f.name for f in catalogue.FIGURES if f.path[:1] == ("replication",)}
# The read probe's (run/read_probe.py): derived from the probes' records a run keeps beside its readings, checked
# in test_single_reads.py and on the fake engine's runs.
PROBE = {f.name for f in catalogue.FIGURES if f.path[:2] == ("latency", "single_reads")}
# A multi-writer cluster node's (Galera's write-sets; the recorded fixtures are single servers): checked on a
# node's counters in test_galera_figures.py.
CLUSTER = {f.name for f in catalogue.FIGURES if f.path[:1] == ("writesets",)}
# A run's UPDATEs' own latency: only where the run made UPDATEs (one of the recorded scenarios did)
UPDATES = {f.name for f in catalogue.FIGURES if f.path[:3] == ("latency", "statements", "update")}
# an open loop's (--rate): none in a closed loop's window (tests/unit/test_rate.py derives them)
RATE = {f.name for f in catalogue.FIGURES if f.path[:1] == ("rate",)}


def load(name):
    return results.completed(json.loads((FIXTURES / f"result_{name}.json").read_text()))


def _present(mapping, path):
    for key in path:
        if not isinstance(mapping, dict) or key not in mapping:
            return False
        mapping = mapping[key]
    return True


def _with_own_sessions(doc):
    """The window of a recorded result, with the run's own sessions' counters (PostgreSQL 18)."""
    window = window_of(copy.deepcopy(doc))
    window["engine_begin"]["sessions"] = {"reads": 0, "writes": 0}
    window["engine_end"]["sessions"] = {"reads": 10, "writes": 1}
    return window


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_figure_resolves_on_the_recorded_results(scenario):
    doc = load(scenario)
    recorded = catalogue.figures_of(doc)
    derived = figures.derive(_with_own_sessions(doc))
    for fig in catalogue.FIGURES:
        for f in (recorded, derived):
            fig.value(f)  # never raises, whatever is missing
        if fig.path and fig.name not in BASELINE | STANDBY | PROBE | CLUSTER | UPDATES | RATE:
            assert _present(derived, fig.path), f"{fig.name}: figures.derive writes no {fig.ref}"
            if fig.name not in NOT_RECORDED:
                assert _present(recorded, fig.path), f"{fig.name}: result_{scenario}.json has no {fig.ref}"
    assert catalogue.value(recorded, "reads_per_s") == doc["figures"]["load_profile"]["physical_reads_per_s"]


def test_a_standby_s_replication_figures_come_from_its_counters():
    window = window_of(copy.deepcopy(load("complete")))
    assert figures.derive(window)["replication"] is None  # a primary has none
    mib = 1 << 20
    window["engine_begin"]["replication"] = {"wal_received_bytes": 100 * mib}
    window["engine_end"]["replication"] = {"wal_received_bytes": 100 * mib + 8 * mib * window["seconds"]}
    window["engine_end"]["gauges"] = {"replay_lag_bytes": 2 * mib, "replay_lag_seconds": 0.5}
    derived = figures.derive(window)
    for name in STANDBY:
        assert catalogue.value(derived, name) is not None, name
    assert catalogue.value(derived, "wal_received_mib_per_s") == pytest.approx(8.0)
    rows = [{"phase": "measured", "replay_lag_mib": 5.0, "replay_lag_seconds": 1.5},
            {"phase": "warmup", "replay_lag_mib": 50.0, "replay_lag_seconds": 9.0}]
    with_max = figures.lag_maxima(derived["replication"], rows)
    assert with_max["replay_lag_mib_max"] == 5.0 and with_max["replay_lag_seconds_max"] == 1.5  # warm-up left out
    assert with_max["replay_lag_mib_end"] == 2.0


def test_derived_figures_add_up():
    f = catalogue.figures_of(load("complete"))
    io, cpu = f["io_profile"], f["cpu"]
    assert catalogue.value(f, "io_mib_per_s") == pytest.approx(
        io["data_read_mib_per_s"] + io["data_write_mib_per_s"] + io["wal_write_mib_per_s"])
    own = cpu["dbio_client_cpu_seconds"] + cpu["dbio_monitor_cpu_seconds"]
    assert catalogue.value(f, "dbio_cpu_seconds") == pytest.approx(own)
    assert catalogue.value(f, "dbio_overhead_pct") == pytest.approx(100 * own / cpu["host"]["busy_seconds"])
    assert catalogue.figure("dbio_overhead_pct").ref == "cpu.dbio_overhead_pct"
    del f["cpu"]["host"]
    assert catalogue.value(f, "dbio_overhead_pct") is None  # no host CPU: no share, never a division by zero
    assert catalogue.value({}, "io_mib_per_s") is None and catalogue.value(None, "reads_per_s") is None


def test_compare_direction_follows_whether_more_is_better():
    base = {"load_profile": {"physical_reads_per_s": 1000.0, "physical_writes_per_s": 10.0},
            "latency": {"avg_read_us": 100.0}, "cpu": {"host": {"busy_pct": 40.0}}}
    other = {"load_profile": {"physical_reads_per_s": 1200.0, "physical_writes_per_s": 20.0},
             "latency": {"avg_read_us": 150.0}, "cpu": {"host": {"busy_pct": 50.0}}}
    reads = catalogue.figure("reads_per_s").change(base, other)
    assert reads.better is True and reads.pct == pytest.approx(20.0) and reads.headline == pytest.approx(20.0)
    latency = catalogue.figure("avg_read_us").change(base, other)
    assert latency.better is False and latency.pct == pytest.approx(50.0)  # higher latency is worse
    assert catalogue.figure("avg_read_us").change(other, base).better is True  # and lower is better
    assert catalogue.figure("writes_per_s").change(base, other).better is None  # neither: the load, not a score
    busy = catalogue.figure("host_busy_pct").change(base, other)
    assert busy.headline == pytest.approx(10.0) and busy.absolute_kind == "pct"  # percentage points
    assert catalogue.figure("reads_per_s").change(base, base).better is None
    assert catalogue.figure("reads_per_s").change(base, {}).better is None


def test_unknown_figure_fails_loudly():
    with pytest.raises(catalogue.UnknownFigure, match="unknown figure 'reads_per_sec'"):
        catalogue.value({}, "reads_per_sec")
    with pytest.raises(catalogue.UnknownFigure):
        catalogue.figures("reads_per_s", "nope")
    with pytest.raises(catalogue.UnknownFigure):
        catalogue.by_series("no_such_series")


def test_declarations_are_consistent():
    names = [f.name for f in catalogue.FIGURES]
    assert len(names) == len(set(names))
    labels = [f.label for f in catalogue.FIGURES]
    assert len(labels) == len(set(labels)), "two figures share a label"
    for fig in catalogue.FIGURES:
        assert fig.kind in REPORT_KINDS, fig.name
        assert fig.compare in (catalogue.RATIO, catalogue.DIFFERENCE, catalogue.POINTS), fig.name
        assert bool(fig.path) != bool(fig.derive), f"{fig.name}: a path or a derivation, not both"
        assert fig.unit != "%" or fig.compare == catalogue.POINTS, f"{fig.name}: a percentage compares in points"
        if fig.series:
            assert fig.series in file_formats._SERIES_FIGURES, f"{fig.name}: the series rows carry no {fig.series}"
            assert catalogue.by_series(fig.series) is fig
        assert not fig.noise or fig.series, f"{fig.name}: noise is judged on a series"
        if fig.phrase:
            assert fig.phrase.format(1234.5)


def test_groups_read_per_kind_figures():
    f = catalogue.figures_of(load("complete"))
    assert set(catalogue.statement_latency(f)) == {"select", "update", "scan"}
    assert catalogue.histogram(f, "select")[0]["bucket"]
    assert catalogue.histogram(f, "nothing") is None and catalogue.histogram({}, "select") is None
    assert catalogue.by_backend({}) == {} and catalogue.devices(None) == {}
    assert catalogue.measured(f) and not catalogue.measured({"window_seconds": 0})


@pytest.mark.parametrize("group, members", [
    (catalogue.STATEMENT_FIGURES, catalogue.statement_latency),
    (catalogue.BACKEND_FIGURES, catalogue.by_backend),
    (catalogue.DEVICE_FIGURES, catalogue.devices),
])
def test_every_group_figure_resolves_on_the_recorded_results(group, members):
    found = [m for s in SCENARIOS for m in members(catalogue.figures_of(load(s))).values()]
    assert found, "no recorded result has this group"
    for fig in group:
        assert all(fig.name in m for m in found), f"{fig.name} missing from a recorded member"
        assert catalogue.member(group, fig.name) is fig
    with pytest.raises(catalogue.UnknownFigure):
        catalogue.member(group, "nope")
