import copy
import json
from pathlib import Path

import pytest

from dbio.stats import figures, series
from dbio.stats.counters import get
from dbio import result as results

FIXTURES = Path(__file__).parent.parent / "fixtures"


@pytest.fixture(scope="module")
def doc():
    return results.completed(json.loads((FIXTURES / "result_complete.json").read_text()))


def window_of(doc):
    return {
        "seconds": doc["timeline"]["window_seconds"],
        "engine_begin": doc["normalized"]["begin"], "engine_end": doc["normalized"]["end"],
        "totals": doc["totals"], "histograms": doc["histograms"],
        "os_begin": doc["snapshots"]["begin"]["os"], "os_end": doc["snapshots"]["end"]["os"],
        "cores": doc["environment"]["host"]["cpus"],
        "cache_bytes": doc["figures"]["validity"]["cache_bytes"],
        "data_bytes": doc["figures"]["validity"]["data_bytes"], "direct_io": True,
    }


def test_rates_come_from_the_window_deltas(doc):
    w = window_of(doc)
    f = figures.derive(w)
    b, e, s = w["engine_begin"], w["engine_end"], w["seconds"]
    assert f["load_profile"]["physical_reads_per_s"] == pytest.approx((e["data"]["reads"] - b["data"]["reads"]) / s)
    assert f["load_profile"]["server_commits_per_s"] == pytest.approx((e["db"]["commits"] - b["db"]["commits"]) / s)
    t = doc["totals"]
    assert f["load_profile"]["commits_per_s"] == pytest.approx(t["updates"] / s)  # one per UPDATE
    assert f["load_profile"]["statements_per_s"] == pytest.approx((t["selects"] + t["updates"] + t["scans"]) / s)
    reads = e["client"]["reads"] - b["client"]["reads"]
    read_ms = e["client"]["read_time_ms"] - b["client"]["read_time_ms"]
    assert f["latency"]["avg_read_us"] == pytest.approx(1000 * read_ms / reads)


def test_recorded_headline_figures_are_what_derive_gives(doc):
    # A newer dbio re-derives figures from the recorded counters and finds the recorded headline.
    f, stored = figures.derive(window_of(doc)), doc["figures"]
    for path in (("load_profile", "physical_reads_per_s"), ("latency", "avg_read_us"),
                 ("cpu", "reads_per_db_cpu_second"), ("validity", "device_to_db_read_ratio")):
        assert get(f, *path) == pytest.approx(get(stored, *path))


def test_latency_is_unavailable_without_io_timing(doc):
    w = window_of(doc)
    w["io_timing"] = False
    w["wal_io_timing"] = False
    lat = figures.derive(w)["latency"]
    assert lat["avg_read_us"] is None and lat["avg_write_us"] is None and lat["avg_wal_sync_us"] is None
    assert lat["statements"]["select"]["p99_us"] > 0  # dbio's own statement timing does not need it


def test_device_counter_going_backwards_is_unavailable_not_a_crash(doc):
    w = copy.deepcopy(window_of(doc))
    for name in w["os_end"]["disks"]:
        w["os_end"]["disks"][name]["read_ms"] = 0.0
    d = figures.derive(w)["devices"]
    assert all(v["avg_read_us"] is None for v in d.values())


def test_statement_latency_counts_match_the_sessions(doc):
    f = figures.derive(window_of(doc))
    st = f["latency"]["statements"]
    assert st["select"]["count"] == doc["totals"]["selects"]
    assert st["update"]["count"] == doc["totals"]["updates"]
    assert st["select"]["p50_us"] <= st["select"]["p90_us"] <= st["select"]["p99_us"] <= st["select"]["max_us"]
    assert sum(b["count"] for b in st["select"]["awr_buckets"]) == st["select"]["count"]


def test_cpu_per_read_uses_session_cpu(doc):
    w = window_of(doc)
    f = figures.derive(w)
    begin, end = w["os_begin"]["session_cpu"], w["os_end"]["session_cpu"]
    cpu = sum(end[p] - begin[p] for p in end if p in begin)
    reads = w["engine_end"]["data"]["reads"] - w["engine_begin"]["data"]["reads"]
    assert f["cpu"]["db_cpu_seconds"] == pytest.approx(cpu)
    assert f["cpu"]["reads_per_db_cpu_second"] == pytest.approx(reads / cpu)
    assert 0 <= f["cpu"]["host"]["busy_pct"] <= 100


def test_the_sessions_wait_for_a_cpu_is_per_read_and_a_share_of_their_time(doc):
    w = copy.deepcopy(window_of(doc))
    assert figures.derive(w)["cpu"]["cpu_wait_us_per_read"] is None  # recorded before it was read: not measured
    pids = list(w["os_end"]["session_cpu"])
    w["os_begin"]["session_run_delay"] = {pid: 1.0 for pid in pids}
    w["os_end"]["session_run_delay"] = {pid: 1.25 for pid in pids} | {"999999": 5.0}  # a session only at the end
    f = figures.derive(w)["cpu"]
    own = w["engine_end"]["client"]["reads"] - w["engine_begin"]["client"]["reads"]  # the sessions' reads
    elapsed = w["os_end"]["t"] - w["os_begin"]["t"]
    assert f["cpu_wait_seconds"] == pytest.approx(0.25 * len(pids))
    assert f["cpu_wait_us_per_read"] == pytest.approx(1e6 * 0.25 * len(pids) / own)
    assert f["cpu_wait_pct"] == pytest.approx(100 * 0.25 / elapsed)
    for end in ("engine_begin", "engine_end"):  # an engine without the sessions' own reads: every process's
        w[end] = {k: v for k, v in w[end].items() if k != "client"}
    reads = w["engine_end"]["data"]["reads"] - w["engine_begin"]["data"]["reads"]
    assert figures.derive(w)["cpu"]["cpu_wait_us_per_read"] == pytest.approx(1e6 * 0.25 * len(pids) / reads)


def test_the_io_workers_wait_for_a_cpu_is_per_read_of_every_process(doc):
    w = copy.deepcopy(window_of(doc))
    f = figures.derive(w)["cpu"]
    assert f["io_worker_cpu_wait_seconds"] is None and f["io_worker_cpu_wait_us_per_read"] is None  # none read
    w["os_begin"]["read_helper_run_delay"] = {"501": 2.0, "502": 3.0, "503": 1.0}
    w["os_end"]["read_helper_run_delay"] = {"501": 2.5, "502": 3.25}  # a worker gone by the end: not counted
    f = figures.derive(w)["cpu"]
    reads = w["engine_end"]["data"]["reads"] - w["engine_begin"]["data"]["reads"]  # they do every process's reads
    assert f["io_worker_cpu_wait_seconds"] == pytest.approx(0.75)
    assert f["io_worker_cpu_wait_us_per_read"] == pytest.approx(1e6 * 0.75 / reads)


def test_other_work_s_cpu_is_the_host_s_busy_cpu_less_the_servers_and_dbio_s(doc):
    w = copy.deepcopy(window_of(doc))
    assert figures.derive(w)["cpu"]["other_cpu_seconds"] is None  # recorded before the servers' CPU was read
    w["os_begin"]["server_cpu_total"], w["os_end"]["server_cpu_total"] = 100.0, 104.0
    w["os_begin"]["kernel_threads_cpu_total"], w["os_end"]["kernel_threads_cpu_total"] = 50.0, 50.25
    f = figures.derive(w)["cpu"]
    busy, client = f["host"]["busy_seconds"], w["os_end"]["client_cpu"] - w["os_begin"]["client_cpu"]
    interrupts = sum(w["os_end"]["stat"][k] - w["os_begin"]["stat"][k] for k in ("irq", "softirq"))
    assert f["server_cpu_seconds"] == pytest.approx(4.0)
    assert f["kernel_cpu_seconds"] == pytest.approx(interrupts + 0.25)
    assert f["other_cpu_seconds"] == pytest.approx(max(0.0, busy - 4.0 - client - interrupts - 0.25))
    assert f["other_cpu_pct"] == pytest.approx(100 * f["other_cpu_seconds"] / busy)
    w["local"] = False  # the host's CPU is not the server's host's: nothing to tell
    assert figures.derive(w)["cpu"]["other_cpu_seconds"] is None


def test_direct_io_run_reads_reach_the_device(doc):
    f = figures.derive(window_of(doc))
    assert f["validity"]["device_to_db_read_ratio"] == pytest.approx(1.0, abs=0.03)


def test_missing_os_readings_give_none_not_guesses(doc):
    w = window_of(doc)
    w["os_begin"] = w["os_end"] = None
    f = figures.derive(w)
    assert f["cpu"]["host"] is None and f["cpu"]["db_cpu_seconds"] is None
    assert f["devices"] == {} and f["validity"]["device_to_db_read_ratio"] is None


def test_zero_reads_do_not_divide_by_zero(doc):
    w = copy.deepcopy(window_of(doc))
    w["engine_end"] = copy.deepcopy(w["engine_begin"])
    f = figures.derive(w)
    assert f["load_profile"]["physical_reads_per_s"] == 0
    assert f["latency"]["avg_read_us"] is None
    assert f["cpu"]["reads_per_db_cpu_second"] == 0


def test_series_rates_use_the_real_time_of_the_work_between_samples():
    def sample(k, reads, t, published_to=None):
        return {"k": k, "phase": "measured", "t": t, **({"published_to": published_to} if published_to else {}),
                "engine": {"t": t, "data": {"reads": reads, "read_bytes": reads * 8192},
                           "client": {"reads": reads, "read_time_ms": reads * 0.1}, "wal": {"bytes": 0}}, "os": {}}
    # sampled 0.99 s and then 1.61 s apart, holding the slices that ended at 101.0, 102.0 and 104.0
    samples = [sample(1, 1000, 101.5, 101.0), sample(2, 3000, 102.49, 102.0), sample(4, 7000, 104.1, 104.0)]
    statements = {2: {"selects": 50, "updates": 0, "scans": 0}}
    rows = series.per_interval(samples, statements, [1.0, 2.0], 100.0)
    assert [r["k"] for r in rows] == [2, 4]
    assert [r["seconds"] for r in rows] == [1.0, 2.0]
    assert rows[0]["reads_per_s"] == 2000 and rows[1]["reads_per_s"] == 2000
    assert rows[0]["statements_per_s"] == 50 and rows[1]["statements_per_s"] == 0
    assert rows[0]["avg_read_us"] == pytest.approx(100.0)
    # records of an older dbio (no published_to): the engine snapshots' own times, never the grid's
    rows = series.per_interval([sample(1, 1000, 101.5), sample(2, 1400, 101.9)], {}, [1.0], 100.0)
    assert rows[0]["seconds"] == pytest.approx(0.4) and rows[0]["reads_per_s"] == pytest.approx(1000)


@pytest.mark.parametrize("prev, cur, seconds", [
    ({"published_to": 10.0, "engine": {"t": 10.5}}, {"published_to": 11.0, "engine": {"t": 11.49}}, 1.0),
    ({"published_to": 10.0, "engine": {"t": 10.5}}, {"published_to": 10.3, "engine": {"t": 10.9}}, 0.3),
    # nothing was published in between (every session stuck): the snapshots' own times
    ({"published_to": 10.0, "engine": {"t": 10.5}}, {"published_to": 10.0, "engine": {"t": 11.5}}, 1.0),
    ({"engine": {"t": 10.5}}, {"engine": {"t": 10.9}}, 0.4),
])
def test_elapsed_is_real_time(prev, cur, seconds):
    assert series.elapsed(prev, cur) == pytest.approx(seconds)


def test_a_sample_not_taken_on_time_is_a_gap_and_so_is_the_row_after_it():
    def sample(k, reads):
        return {"k": k, "phase": "measured", "t": k + 0.5, "published_to": float(k),
                "engine": {"t": k + 0.5, "data": {"reads": reads, "read_bytes": 0}, "client": {}, "wal": {}},
                "os": {}}
    # recorded around a frozen server: sample 3 was asked on time and answered 3.1 s late, 4 and 5
    # could not be asked in time, 6 is on time but has no sample before it to be compared with
    samples = [sample(1, 100), sample(2, 200),
               {"k": 3, "phase": "measured", "t": 3.5, "due": 3.5, "asked": 3.5, "answered": 6.6, "missing": True},
               {"k": 4, "phase": "measured", "t": 4.5, "due": 4.5, "asked": 6.6, "answered": 6.6, "missing": True},
               {"k": 5, "phase": "measured", "t": 5.5, "due": 5.5, "asked": 6.6, "answered": 6.6, "missing": True},
               sample(6, 900), sample(7, 1000)]
    rows = series.per_interval(samples, {}, [1.0], 0.0)
    assert [(r["k"], r.get("missing")) for r in rows] == [
        (2, None), (3, "late"), (4, "late"), (5, "late"), (6, "no baseline"), (7, None)]
    assert [r.get("late_by") for r in rows[1:4]] == [3.1, 2.1, 1.1]
    assert all(r.get("reads_per_s") is None and r.get("seconds") is None for r in rows[1:5])
    assert rows[-1]["reads_per_s"] == 100 and rows[-1]["seconds"] == 1.0


def test_series_summary():
    rows = [{"phase": "measured", "x": v} for v in (10.0, 12.0, 14.0)] + [{"phase": "warmup", "x": 100.0}]
    s = series.summary(rows, "x")
    assert s["n"] == 3 and s["mean"] == 12.0 and s["stdev"] == pytest.approx(2.0)
    assert s["cv_pct"] == pytest.approx(100 * 2 / 12) and s["min"] == 10.0 and s["max"] == 14.0


def test_series_counts_every_interval_a_row_spans_and_a_short_last_interval():
    def sample(k, reads, t, **extra):
        return {"k": k, "phase": "measured", **extra,
                "engine": {"t": t, "data": {"reads": reads, "read_bytes": reads * 8192},
                           "client": {"reads": reads, "read_time_ms": 0.0}, "wal": {"bytes": 0}}, "os": {}}
    # interval 10 s; the sample at k=20 failed, so the row from 10 to 30 spans two intervals;
    # the run stopped at +35 s: the last sample is keyed 40 but holds the work up to 35 only.
    samples = [sample(10, 0, 10.5, published_to=10.0), sample(30, 40_000, 30.5, published_to=30.0),
               sample(40, 50_000, 35.1, covers_to=35, published_to=35.0)]
    statements = {20: {"selects": 100, "updates": 0, "scans": 0}, 30: {"selects": 100, "updates": 0, "scans": 0},
                  40: {"selects": 50, "updates": 0, "scans": 0}}
    rows = series.per_interval(samples, statements, [1.0], 0.0)
    assert rows[0]["reads_per_s"] == 2000 and rows[0]["statements_per_s"] == 10.0  # 200 statements in 20 s
    assert rows[1]["reads_per_s"] == 2000 and rows[1]["statements_per_s"] == 10.0  # 50 in the 5 s that ran


def test_host_readings_that_do_not_span_the_window_give_no_host_or_device_figure():
    """A lone server frozen to the end: its window closed at its last answer (2 s), the host's end reading
    came at the run's end, 11 s after its begin: 5.5x the device's reads/s and 21.5 busy CPU-seconds in
    2 s were quoted. Such readings are no figure of the window."""
    import copy
    import json
    from pathlib import Path

    from dbio import result as results
    from dbio.stats import figures as figure_math

    doc = results.completed(json.loads((Path(__file__).parent.parent / "fixtures" / "result_complete.json")
                                       .read_text()))
    seconds = doc["timeline"]["window_seconds"]
    window = {"seconds": seconds, "engine_begin": doc["normalized"]["begin"], "engine_end": doc["normalized"]["end"],
              "totals": doc["totals"], "histograms": doc["histograms"], "os_begin": doc["snapshots"]["begin"]["os"],
              "os_end": copy.deepcopy(doc["snapshots"]["end"]["os"]), "cores": 2, "work_unit": 8}
    assert figure_math.derive(window)["devices"]  # the recorded readings span the window
    window["os_end"]["t"] += 9.0
    late = figure_math.derive(window)
    assert late["devices"] == {} and late["validity"]["device_reads"] is None
    assert late["load_profile"]["physical_reads_per_s"] > 0  # the engine's own figures stand
