"""Figures belong to who they name: host CPU has one definition, the sessions' read latency is
theirs alone, and the time series' intervals are labelled after warm-up with partial ones marked."""

import copy
import json
from pathlib import Path

import pytest

from dbio.report import model as report_model
from dbio.stats import figures, host_cpu, series
from dbio import result as results
from tests.unit.test_figures import window_of
from dbio.result_records import of

FIXTURES = Path(__file__).parent.parent / "fixtures"


def load(name):
    return results.completed(json.loads((FIXTURES / f"result_{name}.json").read_text()))


# -- host CPU: what was neither idle, I/O wait nor stolen, over the real elapsed time -----------------

# /proc/stat deltas (seconds) recorded around the measured window of tests/fixtures/result_complete.json:
# 4.947 s on 2 CPUs, of which the kernel accounted 9.05 CPU-seconds: a tickless VM measures idle and
# I/O wait exactly and samples busy time at its tick, so 0.844 CPU-seconds of busy time went unsampled.
RECORDED = {"user": 1.32, "nice": 0.0, "system": 1.8, "idle": 3.16, "iowait": 2.5, "irq": 0.0, "softirq": 0.24,
            "steal": 0.03, "ctxt": 193965.0}


@pytest.mark.parametrize("stat, elapsed, cores, expected", [
    # user+nice, system+irq+softirq, each over CPUs x elapsed, not over the ticks the kernel counted;
    # busy adds the time no state accounted
    (RECORDED, 4.947, 2, {"user_pct": 100 * 1.32 / 9.894, "system_pct": 100 * 2.04 / 9.894,
                          "unsampled_pct": 100 * 0.844 / 9.894, "busy_pct": 100 * 4.204 / 9.894,
                          "busy_seconds": 4.204, "busy_cores": 4.204 / 4.947, "accounted_pct": 100 * 9.05 / 9.894}),
    # every second accounted (a CPU-bound span, or a kernel that ticks through idle): nothing unsampled
    ({"user": 1.0, "nice": 0.5, "system": 0.25, "irq": 0.05, "softirq": 0.2, "idle": 2.0}, 2.0, 2,
     {"user_pct": 37.5, "system_pct": 12.5, "unsampled_pct": 0.0, "busy_pct": 50.0, "busy_cores": 1.0,
      "idle_pct": 50.0, "accounted_pct": 100.0}),
    ({"user": 4.0, "idle": 0.0}, 2.0, 2, {"busy_pct": 100.0, "busy_cores": 2.0, "unsampled_pct": 0.0}),
    # readings whose ticks overshoot their timestamps: shares of what was counted, never negative nor above 100%
    ({"user": 2.5, "idle": 2.0}, 2.0, 2, {"busy_pct": 100 * 2.5 / 4.5, "unsampled_pct": 0.0,
                                          "idle_pct": 100 * 2.0 / 4.5, "busy_seconds": 4 * 2.5 / 4.5}),
    ({"user": 1.5, "system": 0.51, "idle": 0.0}, 1.0, 2, {"busy_pct": 100.0, "user_pct": 100 * 1.5 / 2.01}),
])
def test_host_cpu_busy_is_what_was_neither_idle_nor_waiting_over_real_elapsed_time(stat, elapsed, cores, expected):
    got = host_cpu.shares(stat, elapsed, cores)
    for key, value in expected.items():
        assert got[key] == pytest.approx(value), key
    assert got["user_pct"] + got["system_pct"] + got["unsampled_pct"] == pytest.approx(got["busy_pct"])
    assert got["busy_pct"] * cores / 100 == pytest.approx(got["busy_cores"])
    assert got["busy_method"] == "elapsed less idle"


@pytest.mark.parametrize("stat, elapsed, cores", [(None, 5.0, 2), ({}, 5.0, 2), (RECORDED, 0.0, 2),
                                                   (RECORDED, None, 2), (RECORDED, 5.0, None)])
def test_host_cpu_is_absent_without_its_inputs(stat, elapsed, cores):
    assert host_cpu.shares(stat, elapsed, cores) is None


def test_window_and_series_use_the_same_host_cpu_definition():
    doc = load("complete")
    cpu = figures.derive(window_of(doc))["cpu"]["host"]
    # the report's "User + System + Unsampled" of 2 CPUs is its "Busy CPUs"
    assert (cpu["user_pct"] + cpu["system_pct"] + cpu["unsampled_pct"]) * 2 / 100 == pytest.approx(cpu["busy_cores"])
    assert cpu["busy_pct"] > 100 * 3.36 / (2 * 4.947)  # more than the ticks' busy time: some went unsampled

    def sample(k, t, stat):
        return {"k": k, "phase": "measured", "engine": {"t": t, "data": {"reads": 0}}, "os": {"t": t, "stat": stat}}
    base = {key: 0.0 for key in RECORDED}
    end = {key: base[key] + RECORDED[key] for key in RECORDED}
    (row,) = series.per_interval([sample(3, 100.5, base), sample(4, 105.447, end)], {}, [1.0], 97.0, cores=2)
    assert row["host_busy_pct"] == pytest.approx(cpu["busy_pct"], rel=1e-3)
    parts = row["host_user_pct"] + row["host_system_pct"] + row["host_unsampled_pct"]
    assert parts == pytest.approx(row["host_busy_pct"])


# -- the sessions' read latency ----------------------------------------------------------------

def test_sessions_that_read_nothing_have_no_read_latency_of_their_own():
    doc = load("complete")
    w = copy.deepcopy(window_of(doc))
    w["engine_end"]["client"]["reads"] = w["engine_begin"]["client"]["reads"]
    w["engine_end"]["client"]["read_time_ms"] = w["engine_begin"]["client"]["read_time_ms"]
    lat = figures.derive(w)["latency"]
    assert lat["avg_read_us"] is None  # not autovacuum's, not the I/O workers'
    assert lat["avg_read_us_all_backends"] > 0
    doc["figures"] = figures.derive(w)
    m = report_model.build(of(doc))
    assert next(h for h in m["headline"] if h["label"] == "Avg physical read")["value"] is None
    averages = next(t for s in m["sections"] for t in s.get("tables", []) if t["id"] == "latency_averages")
    assert averages["rows"][0] == ["Physical read (sessions)", None]
    assert "avg read" not in m["headline_text"]


# -- time-series intervals ---------------------------------------------------------------------

def _rows(*pairs, phase="measured"):
    return [{"k": k, "since_start": t, "phase": phase} for k, t in pairs]


@pytest.mark.parametrize("rows, warmup, expected", [
    # 1 s intervals, warm-up 2 s: the first measured interval is 0-1 s; a run ending on time ends
    # with an off-grid reading half an interval after the last grid sample
    (_rows((1, 1.504), (2, 2.504), phase="warmup") + _rows((3, 3.504), (4, 4.505), (5, 5.002)), 2,
     [(-2, -1, False), (-1, 0, False), (0, 1, False), (1, 2, False), (2, 3, True)]),
    # the first row covers everything since the common start (sample k 0), e.g. after failed samples
    (_rows((3, 3.504), (4, 4.505)), 2, [(-2, 1, False), (1, 2, False)]),
    # 10 s intervals, no warm-up; a sample that failed makes one row span two intervals (not partial)
    (_rows((10, 10.5), (30, 30.5), (40, 35.1)), 0, [(0, 10, False), (10, 30, False), (30, 40, True)]),
    # a run stopped just after a grid sample: the last reading is 0.1 s after the one before
    (_rows((1, 1.5), (2, 2.5), (3, 2.6)), 0, [(0, 1, False), (1, 2, False), (2, 3, True)]),
])
def test_intervals_are_labelled_after_warmup_and_partial_ones_marked(rows, warmup, expected):
    got = series.labelled(rows, warmup)
    assert [(r["from_s"], r["to_s"], r["partial"]) for r in got] == expected


def test_a_partial_interval_is_left_out_of_the_statistics():
    rows = series.labelled([{**r, "x": x} for r, x in zip(_rows((1, 1.5), (2, 2.5), (3, 3.5), (4, 3.6)),
                                                            (10.0, 12.0, 14.0, 100.0))], 0)
    s = series.summary(rows, "x")
    assert s["n"] == 3 and s["max"] == 14.0  # a spike in the last tenth of a second is not the run's maximum
