"""Every verdict rule, where it fires and where it does not (on recorded results)."""

import copy
import json
from pathlib import Path

import pytest

from dbio.report import conduct_findings, verdict
from dbio.stats import catalogue
from dbio import result as results
from dbio.result_records import of
from tests.result_builder import a_document, a_result

FIXTURES = Path(__file__).parent.parent / "fixtures"


def load(name):
    return results.completed(json.loads((FIXTURES / f"result_{name}.json").read_text()))


@pytest.fixture()
def doc():
    return load("complete")


def codes(r):
    return {f.code: f for f in verdict.findings(r)}


def test_the_recorded_complete_run_is_valid(doc):
    found = codes(of(doc))
    assert not [f for f in found.values() if f.level == "invalid"]
    assert set(found) <= {"overhead", "device_busy", "checkpoint", "small_data_set", "autovacuum"}


def test_status():
    assert "status" not in codes(a_result())
    f = codes(a_result(status="interrupted", status_reason="SIGINT received"))["status"]
    assert f.level == "warning" and "INTERRUPTED: SIGINT received" in f.message
    assert f.message.endswith("; the figures cover the part that ran")
    # a lost run's reason says what its figures cover: said once, not twice
    message = codes(a_result(status="lost", status_reason=(
        "the dbio process (vm:1) ended before the run finished; the figures cover the window up to its last sample "
        "(12:00:07)")))["status"].message
    assert message.count("the figures cover") == 1 and message.endswith("its last sample (12:00:07)"), message


def test_stalled():
    assert "stalled" not in codes(a_result())
    stalled = a_result(stalls=[{"offset": 12.4, "seconds": 20.2, "missing_samples": 20}], figures__window_seconds=30.0)
    f = codes(stalled)["stalled"]
    assert f.level == "warning" and f.value == 20.2
    assert "stalled at +12 s for 20 s (67% of the window)" in f.message
    assert verdict.findings(stalled)[0].code == "stalled"  # in the report's first lines
    damaged = a_result(stalls=[{"offset": None, "seconds": "20"}, "x"])  # a damaged result: nothing to name
    assert "stalled" not in codes(damaged)


def test_no_window():
    assert "no_window" not in codes(a_result())
    assert codes(a_result(figures={"window_seconds": None}))["no_window"].level == "invalid"


@pytest.mark.parametrize("name", ["complete", "cached", "format2", "pg15", "unnamed_session", "interrupted"])
def test_no_recorded_run_has_a_short_window(name):
    assert "short_window" not in codes(of(load(name)))


def test_a_window_much_shorter_than_asked_is_invalid_and_says_why():
    """Seen: a standby frozen in the warm-up held the window until its loss, past the deadline; the run said
    "complete, VALID: 978 physical reads/s" over 14 ms of the 4 s asked."""
    doc = load("format2")
    asked = doc["config"]["workload"]["run_time"]
    assert asked == 5.0 and not doc["config"]["workload"]["work_loop"]
    doc["figures"]["window_seconds"] = asked * conduct_findings.SHORT_WINDOW_SHARE  # half: short, still a rate
    assert "short_window" not in codes(of(doc))
    doc["figures"]["window_seconds"] = 0.014
    f = codes(of(doc))["short_window"]
    assert f.level == "invalid" and f.value == 0.014
    assert f.message.startswith("the measured window lasted 0.01 s of the 5 s asked; ")
    assert verdict.headline(of(doc)).startswith("not a storage result (INVALID): the measured window lasted 0.01 s")
    # why, when the result tells: the window opened late, a node was lost
    assert [e["kind"] for e in doc["events"]].count("window_open") == 1
    doc["events"] = [{**e, "since_start": 8.3} if e["kind"] == "window_open" else e for e in doc["events"]]
    doc["nodes"] = [*doc["nodes"], {"name": "node2", "stopped": {"since_start": 0.4, "reason": "it answered "
                                                                  "nothing for 8 s: frozen, or unreachable"}}]
    message = codes(of(doc))["short_window"].message
    assert "0.01 s of the 5 s asked: it opened +8.3 s after the start, not after the 2 s warm-up; node2 stopped " \
           "during the warm-up (it answered nothing for 8 s: frozen, or unreachable); " in message, message
    for change in ({"work_loop": 1000}, {"run_time": 0}):  # the run's end was not its run time
        other = copy.deepcopy(doc)
        other["config"]["workload"].update(change)
        assert "short_window" not in codes(of(other))
    doc["status"] = "interrupted"  # its status says it ended early
    assert "short_window" not in codes(of(doc))


def test_rows_from_cache():
    f = codes(a_result(figures__validity__blocks_read_per_row=0.2))["rows_from_cache"]
    assert f.level == "invalid" and f.value == 0.2 and "20% of the rows" in f.message
    assert "rows_from_cache" not in codes(a_result(figures__validity__blocks_read_per_row=0.97))
    assert codes(of(load("cached")))["rows_from_cache"].value == 0.0


def test_page_cache():
    assert "page_cache" not in codes(a_result())
    db_reads = a_document()["figures"]["validity"]["db_reads"]

    def device_read(share):
        return a_result(figures__validity__device_reads=share * db_reads, figures__validity__direct_io=False)
    f = codes(device_read(0.4))["page_cache"]
    assert f.level == "invalid" and "40.0%" in f.message and "page cache" in f.message
    assert codes(device_read(0.99))["page_cache"].level == "info"
    assert codes(of(load("pg15")))["page_cache"].level == "invalid"


def test_small_data_set():
    def data(size):
        return a_result(figures__validity__data_bytes=size, figures__validity__cache_bytes=1 << 30)
    assert "small_data_set" not in codes(data(8 << 30))
    assert codes(data(1536 << 20))["small_data_set"].level == "warning"
    assert codes(data(512 << 20))["small_data_set"].level == "invalid"
    # without direct I/O the available page cache counts as cache too
    pg15 = codes(of(load("pg15")))["small_data_set"]
    assert pg15.level == "invalid" and "page cache" in pg15.message


def test_cpu_saturated():
    assert codes(a_result(figures__cpu__host__busy_pct=97.0))["cpu_saturated"].value == 97.0
    assert "cpu_saturated" not in codes(a_result(figures__cpu__host__busy_pct=60.0))


def test_sessions_queue_for_cpu():
    f = codes(a_result(config__workload__sessions=16, waits__counts={"CPU": 50, "IO:DataFileRead": 50}))["cpu_queue"]
    assert f.level == "warning" and "16 sessions on 2 CPUs" in f.message and f.value == pytest.approx(8.0)
    assert "cpu_queue" not in codes(a_result(config__workload__sessions=16,
                                             waits__counts={"CPU": 5, "IO:DataFileRead": 95}))
    # no more sessions than CPUs
    assert "cpu_queue" not in codes(a_result(config__workload__sessions=2, waits__counts={"CPU": 100}))


def test_the_sessions_measured_wait_for_a_cpu_in_read_latency(doc):
    """The recorded run: 133 us a read, the device's own 80 us: up to 53 us of a read can be waiting for a CPU."""
    cpu, avg = doc["figures"]["cpu"], doc["figures"]["latency"]["avg_read_us"]
    doc["config"]["workload"]["sessions"] = 16
    doc["waits"]["counts"] = {"CPU": 50, "IO:DataFileRead": 50}  # sampled: 8 sessions a CPU
    cpu.update(cpu_wait_us_per_read=0.09 * avg, cpu_wait_pct=8.0)
    found = codes(of(doc))
    assert "cpu_wait" not in found  # under a tenth of the read and of the sessions' time
    assert "cpu_queue" not in found  # measured: the sampled rule gives way
    cpu.update(cpu_wait_us_per_read=0.3 * avg, cpu_wait_pct=8.0)
    f = codes(of(doc))["cpu_wait"]
    assert f.level == "warning" and f.figure == "cpu.cpu_wait_pct" and f.value == 8.0
    assert f.message == (f"the sessions waited for a CPU 8% of their time (on a run queue, ready to run), "
                         f"{0.3 * avg:,.0f} us of the {avg:,.0f} us the engine timed per read: read latency includes "
                         "waiting for this host's CPUs, not only the storage")
    # more than the read's time beyond the device's (after commits, between slices, in scans): placed nowhere
    cpu.update(cpu_wait_us_per_read=0.6 * avg, cpu_wait_pct=40.0)
    assert codes(of(doc))["cpu_wait"].message == ("the sessions waited for a CPU 40% of their time (on a run queue, "
                                              "ready to run): their latency and throughput include waiting for this "
                                              "host's CPUs")
    cpu.update(cpu_wait_us_per_read=0.6 * avg, cpu_wait_pct=8.0)  # neither a tenth of their time nor of a read's
    assert "cpu_wait" not in codes(of(doc))
    doc["figures"]["latency"]["avg_read_us"] = None  # reads not timed: the share of time alone
    cpu.update(cpu_wait_pct=12.0)
    assert codes(of(doc))["cpu_wait"].message.endswith(
        "12% of their time (on a run queue, ready to run): their latency and throughput include waiting for this "
        "host's CPUs")


def test_a_cpu_quota_that_ran_out_is_named_in_the_wait_for_a_cpu(doc):
    cpu = doc["figures"]["cpu"]
    cpu.update(cpu_wait_us_per_read=None, cpu_wait_pct=40.0, server_cpu_throttled_periods_pct=92.0)
    assert codes(of(doc))["cpu_wait"].message.endswith("include waiting for this host's CPUs or the server's CPU quota "
                                                   "(used up in 92% of its periods)")
    cpu.update(server_cpu_throttled_periods_pct=0.0)  # a quota that never ran out held nobody back
    assert codes(of(doc))["cpu_wait"].message.endswith("include waiting for this host's CPUs")


def test_the_io_workers_wait_for_a_cpu_is_within_the_reads_they_do(doc):
    """io_method = worker: a read waits for its worker to run; that wait counts with the sessions' own."""
    cpu, avg = doc["figures"]["cpu"], doc["figures"]["latency"]["avg_read_us"]
    cpu.update(cpu_wait_us_per_read=0.05 * avg, cpu_wait_pct=4.0, io_worker_cpu_wait_us_per_read=0.06 * avg)
    f = codes(of(doc))["cpu_wait"]  # neither alone is a tenth of the read: together they are
    assert f.message == (f"the sessions waited for a CPU 4% of their time (on a run queue, ready to run), "
                         f"{0.11 * avg:,.0f} us of the {avg:,.0f} us the engine timed per read ({0.06 * avg:,.0f} us "
                         "of it the I/O workers' doing the reads): read latency includes waiting for this host's "
                         "CPUs, not only the storage")
    cpu.update(cpu_wait_us_per_read=0.6 * avg, io_worker_cpu_wait_us_per_read=0.15 * avg)  # the sessions' is not
    assert f"{0.15 * avg:,.0f} us of the {avg:,.0f} us the engine timed per read (all of it the I/O workers'" \
        in codes(of(doc))["cpu_wait"].message  # within the read: the workers' alone still is
    cpu.update(io_worker_cpu_wait_us_per_read=0.05 * avg)  # under a tenth of the read, and 4% of the sessions' time
    assert "cpu_wait" not in codes(of(doc))
    cpu.update(io_worker_cpu_wait_us_per_read=0.15 * avg)
    doc["figures"]["devices"] = {}  # the device's own time unknown: a worker also waits for reads read ahead and
    assert "cpu_wait" not in codes(of(doc))  # done before a session needed them, so nothing is placed in the read


def test_other_work_on_the_host_s_cpus(doc):
    cpu, window = doc["figures"]["cpu"], doc["figures"]["window_seconds"]
    cpu.update(other_cpu_seconds=0.1 * window, other_cpu_pct=6.0)  # the kernel's own, on a quiet host
    assert "other_cpu" not in codes(of(doc))
    cpu.update(other_cpu_seconds=0.02 * window, other_cpu_pct=40.0)  # a large share of a nearly idle host
    assert "other_cpu" not in codes(of(doc))
    cpu.update(other_cpu_seconds=0.7 * window, other_cpu_pct=40.0)
    f = codes(of(doc))["other_cpu"]
    assert f.level == "warning" and f.figure == "cpu.other_cpu_pct" and f.value == 40.0
    assert f"other work used {0.7 * window:,.1f} CPU-seconds in the window, 40% of the host's busy CPU" in f.message


def test_checkpoint(doc):
    norm = doc["normalized"]
    norm["end"]["checkpoints"] = dict(norm["begin"]["checkpoints"])
    assert "checkpoint" not in codes(of(doc))
    norm["end"]["checkpoints"]["done"] += 1
    norm["end"]["checkpoints"]["buffers_written"] += 900
    f = codes(of(doc))["checkpoint"]
    assert "1 checkpoint(s)" in f.message and "900 buffers" in f.message and f.figure == "checkpoints.done"


def test_a_result_written_before_the_checkpoint_counters_has_them_from_its_writers():
    raw = json.loads((FIXTURES / "result_complete.json").read_text())
    for reading in ("begin", "end"):
        assert "checkpoints" not in raw["normalized"][reading]
        writers, done = raw["normalized"][reading]["writers"], doc_checkpoints(raw, reading)
        assert done == {"done": writers["checkpoints_timed"] + writers["checkpoints_requested"],
                        "buffers_written": writers["checkpoint_buffers_written"]}


def doc_checkpoints(raw, reading):
    return results.completed(raw)["normalized"][reading]["checkpoints"]


def test_the_engine_s_maintenance(doc):
    by_backend = doc["figures"]["io_profile"]["by_backend"]
    assert doc["capabilities"]["maintenance_process"] == "autovacuum worker"  # PostgreSQL's, filled in on reading
    by_backend.pop("autovacuum worker", None)
    assert "maintenance" not in codes(of(doc))
    total = doc["figures"]["io_profile"]["total_requests_per_s"]
    by_backend["autovacuum worker"] = {"read_requests_per_s": 3.0, "write_requests_per_s": 1.0}
    f = codes(of(doc))["maintenance"]
    assert f.value == 4.0 and f.level == "info" and total > 400  # its catalog checks: under 1%
    assert f.message.startswith("autovacuum did 4.0 I/O requests/s")
    by_backend["autovacuum worker"] = {"read_requests_per_s": total * 0.03, "write_requests_per_s": 0.0}
    f = codes(of(doc))["maintenance"]
    assert f.level == "warning" and "3.0% of all I/O requests" in f.message
    doc["capabilities"]["maintenance_process"] = None  # an engine without such a process kind
    assert "maintenance" not in codes(of(doc))


def test_device_busy(doc):
    for d in doc["figures"]["devices"].values():
        d["utilization_pct"] = 50.0
    assert "device_busy" not in codes(of(doc))
    next(iter(doc["figures"]["devices"].values()))["utilization_pct"] = 99.0
    assert codes(of(doc))["device_busy"].value == 99.0


def test_overhead():
    def client(seconds):
        return a_result(figures__cpu__host__busy_seconds=10.0, figures__cpu__dbio_client_cpu_seconds=seconds,
                        figures__cpu__dbio_monitor_cpu_seconds=0.1)
    found = codes(client(0.2))["overhead"]
    assert found.level == "info" and found.value == pytest.approx(3.0)
    assert codes(client(0.9))["overhead"].level == "warning"


def test_unavailable(doc):
    assert "unavailable" not in codes(of(doc))
    f = codes(of(load("pg15")))["unavailable"]
    assert "pg_stat_io" in f.message and "track_io_timing is off" in f.message


def test_cancelled_sessions_are_reported():
    events = [*a_document()["events"], {"kind": "cancelled", "message": "cancelled 2 session(s) still inside a slice"}]
    assert any("cancelled 2" in f.message for f in verdict.findings(a_result(events=events)))


def test_findings_are_ordered_by_severity():
    levels = [f.level for f in verdict.findings(of(load("pg15")))]
    assert levels == sorted(levels, key=["invalid", "warning", "info"].index)


def _with_device(doc, *, extra_reads=0.0, extra_write_mib=0.0, engine_reads=None, direct_io=True):
    """The recorded run, its figures derived again after another process used its device."""
    from dbio.stats import figures

    ob, oe = doc["snapshots"]["begin"]["os"], doc["snapshots"]["end"]["os"]
    begin, end = doc["normalized"]["begin"], doc["normalized"]["end"]
    if engine_reads is not None:  # a window in which the engine read this little, and the device as much
        end["data"]["reads"] = begin["data"]["reads"] + engine_reads
        oe["disks"]["vda"]["reads"] = ob["disks"]["vda"]["reads"] + engine_reads
    oe["disks"]["vda"]["reads"] += extra_reads
    oe["disks"]["vda"]["sectors_read"] += extra_reads * 16  # another process's 8 KiB reads
    oe["disks"]["vda"]["sectors_written"] += extra_write_mib * 2048
    doc["figures"] = figures.derive({
        "seconds": doc["timeline"]["window_seconds"], "engine_begin": begin, "engine_end": end,
        "totals": doc["totals"], "histograms": doc["histograms"], "os_begin": ob, "os_end": oe, "cores": 2,
        "cache_bytes": 16 << 20, "data_bytes": 64 << 20, "direct_io": direct_io, "work_unit": 8})
    return codes(of(doc))


@pytest.mark.parametrize("change, expected", [
    ({}, None),  # the recorded run: device reads = the engine's, writes 2.8% over (the journal, under its floor)
    # the recorded run's reads average 14.4 KiB (its scans' 128 KiB among single pages): judged by bytes
    ({"extra_reads": 0.885 * 42391}, ["the device read 149.2% of the engine's bytes",
                                      "device 888.6 MiB, engine 595.5 MiB: multi-block reads are judged by bytes"]),
    ({"extra_reads": 0.015 * 42391}, None),  # within 2%
    ({"engine_reads": 40, "extra_reads": 30}, None),  # 75% more, but 30 reads: noise in a tiny window
    ({"engine_reads": 0, "extra_reads": 5000}, ["the device did 5,000 read requests while the engine did 0"]),
    ({"extra_write_mib": 20}, ["the device wrote 124.2% of the bytes the engine wrote",
                               "(device 116.4 MiB, engine 93.8 MiB of data files, WAL and temporary files)"]),
    ({"extra_write_mib": 2}, None),  # 5% more, but under 1 MiB per second of the 4.9 s window
    ({"extra_reads": 21000, "direct_io": False},
     ["127.6%", "another process used the device (or, direct I/O being off, the kernel read ahead"]),
])
def test_shared_device(doc, change, expected):
    found = _with_device(doc, **change)
    if expected is None:
        assert "shared_device" not in found
        return
    f = found["shared_device"]
    assert f.level == "warning" and "another process used the device" in f.message
    for text in expected:
        assert text in f.message
    assert "page_cache" not in found  # no "direct I/O is off, yet N% reached the device" beside it


def test_shared_device_is_in_the_reports_first_lines(doc):
    from dbio import report

    _with_device(doc, extra_reads=0.885 * 42391)
    text = report.render(of(doc), "text").splitlines()
    assert text[0] == "VALID storage result" and text[3].startswith("WARNING: the device read 149.2% of the engine's "
                                                                   "bytes")
    md = report.render(of(doc), "md")
    assert md.index("**WARNING**: the device read 149.2%") < md.index("**Headline:**")
    html = report.render(of(doc), "html")
    assert html.index('<li class="warning"><b>warning</b>the device read 149.2%') < html.index('id="headline"')


@pytest.mark.parametrize("io, active, level, fragments", [
    (None, [], None, []),
    ({"reads": 0, "read_share_pct": 0.0, "writes": 0, "write_share_pct": None}, [], None, []),
    ({"reads": 500, "read_share_pct": 0.4, "writes": 0, "write_share_pct": None}, [(1, ["psql"])], "info",
     ["1 other session(s) (psql) active in 1 of", "0.4% of the client sessions' reads"]),
    ({"reads": 9000, "read_share_pct": 12.5, "writes": 10, "write_share_pct": 3.0}, [(2, ["pgbench", "psql"])] * 3,
     "warning", ["2 other session(s) (pgbench, psql) active in 3 of", "12.5% of the client sessions' reads",
                 "3.0% of the client sessions' writes", "include their I/O"]),
    ({"reads": 9000, "read_share_pct": 12.5, "writes": 0, "write_share_pct": None}, [], "warning",
     ["other sessions did 12.5%"]),
    (None, [(1, [])], "warning", ["1 other session(s) active in 1 of", "measured from PostgreSQL 18 on"]),
])
def test_other_sessions(doc, io, active, level, fragments):
    doc["figures"]["other_sessions"] = io
    measured = [r for r in doc["series"] if r.get("phase") == "measured"]
    for row, (count, names) in zip(measured, active):
        row["other_sessions_active"], row["other_session_names"] = count, names
    found = codes(of(doc)).get("other_sessions")
    if level is None:
        assert found is None
        return
    assert found.level == level
    for fragment in fragments:
        assert fragment in found.message, found.message


def test_writes_the_os_still_had_pending_when_the_window_opened_are_a_warning():
    import copy
    import json
    from pathlib import Path

    from dbio import result as results
    from dbio.collect import host

    fixture = Path(__file__).parent.parent / "fixtures" / "result_complete.json"
    doc = results.completed(json.loads(fixture.read_text()))
    assert host.pending_write_bytes(host.parse_meminfo("Dirty:  2048 kB\nWriteback:  1024 kB\nMemTotal: 1 kB")) \
        == 3 << 20
    late = copy.deepcopy(doc)
    late["events"].append({"t": 1.0, "kind": "pending_writes", "finished": False,
                           "message": "the OS had 300 MiB of writes pending and had not written them out"})
    assert [f.level for f in verdict.findings(of(late)) if f.code == "pending_writes"] == ["warning"]
    done = copy.deepcopy(doc)
    done["events"].append({"t": 1.0, "kind": "pending_writes", "finished": True, "message": "written out"})
    assert not [f for f in verdict.findings(of(done)) if f.code == "pending_writes"]


def test_the_headline_says_where_a_figure_is_partly_not_the_storage_s(doc):
    plain = verdict.headline(of(doc))
    assert "waiting for a CPU" not in plain and "other work" not in plain
    cpu, window = doc["figures"]["cpu"], doc["figures"]["window_seconds"]
    cpu.update(cpu_wait_us_per_read=40.0, cpu_wait_pct=20.0, other_cpu_seconds=0.5 * window, other_cpu_pct=35.0)
    line = verdict.headline(of(doc))  # the recorded read: 133 us, 80 us of it the device's own
    assert "133 us avg read (40 us of it waiting for a CPU)" in line
    assert "reads per host-CPU-second (35% of that CPU other work's)" in line


def test_a_merge_of_hosts_judges_each_host_s_cpu_on_its_own_node():
    """Several hosts' runs merged: the total has no host figures, each node has its host's."""
    from dbio import merge
    from tests.unit.test_merge_parts import OTHER_SERVER

    first = results.read(FIXTURES / "result_format2.json")
    second = copy.deepcopy(OTHER_SERVER)  # another host's run on its own server, at the same start
    window = second["figures"]["window_seconds"]
    second["nodes"][0]["figures"]["cpu"].update(other_cpu_seconds=0.8 * window, other_cpu_pct=45.0)
    merged = merge.merge([("app1", first), ("app2", second)], "two hosts")
    found = [f for f in verdict.findings(of(merged)) if f.code == "node_other_cpu"]
    assert [f.message.split(":")[0] for f in found] == ["app2"]
    assert "45% of the host's busy CPU" in found[0].message
    assert not [f for f in verdict.findings(of(first)) if f.code.startswith("node_")]  # one host, one node: none


def test_the_sessions_wait_that_fits_a_read_is_not_dropped_for_the_io_workers_that_do_not(doc):
    """io_method = worker: when the workers' wait is more than the read's time beyond the device's, the sessions'
    own that fits is still placed within the read (as without workers), and not called the workers'."""
    cpu, avg = doc["figures"]["cpu"], doc["figures"]["latency"]["avg_read_us"]
    cpu.update(cpu_wait_us_per_read=0.2 * avg, cpu_wait_pct=4.0, io_worker_cpu_wait_us_per_read=0.7 * avg)
    assert catalogue.value(doc["figures"], "cpu_wait_in_read_us") == pytest.approx(0.2 * avg)
    message = codes(of(doc))["cpu_wait"].message
    assert f"{0.2 * avg:,.0f} us of the {avg:,.0f} us the engine timed per read:" in message
    assert "I/O workers'" not in message


@pytest.mark.parametrize("data_mib, wal_bytes, level", [
    (0.0, 0.0, None),  # at rest: nothing written
    (0.0, 7000.0, None),  # the run's own control rows: under 0.1% of what it read
    (0.6, 5000.0, "warning"),  # 0.5%: said, with who wrote
    (1.4, 1.5e6, "invalid"),  # pages an earlier run's updates left, rewritten by its reads
])
def test_a_read_only_run_is_judged_by_what_it_wrote(doc, data_mib, wal_bytes, level):
    doc["config"]["workload"]["update_pct"] = 0
    io, load = doc["figures"]["io_profile"], doc["figures"]["load_profile"]
    io["data_write_mib_per_s"], load["wal_bytes_per_s"] = data_mib, wal_bytes
    io["by_backend"]["client backend"].update(write_mib_per_s=data_mib * 0.6, wal_write_mib_per_s=wal_bytes / 2**20)
    io["by_backend"]["background writer"].update(write_mib_per_s=data_mib * 0.4, wal_write_mib_per_s=0.0)
    found = codes(of(doc)).get("read_only_wrote")
    assert (found.level if found else None) == level
    if found is not None:
        read = io["data_read_mib_per_s"]
        share = 100 * (data_mib + wal_bytes / 2**20) / read
        assert f"{share:.1f}% of the {read:.1f} MiB/s it read" in found.message
        assert "client backend" in found.message and "background writer" in found.message
        assert ("not a read-only result" in found.message) == (level == "invalid")


def test_an_update_run_s_writes_are_its_own():
    update_run = a_result()
    assert update_run.config.workload["update_pct"] == 20 and "read_only_wrote" not in codes(update_run)


@pytest.mark.parametrize("request_excess, byte_excess, fires", [
    (0.06, 0.0, False),  # the scan: 34,502 device requests for 32,537 of 128 KiB, the same bytes
    (0.06, 0.5, True),  # half as many bytes again: someone else read the device
])
def test_multi_block_reads_are_checked_against_the_device_by_bytes(doc, request_excess, byte_excess, fires):
    ob, oe = doc["snapshots"]["begin"]["os"], doc["snapshots"]["end"]["os"]
    begin, end = doc["normalized"]["begin"], doc["normalized"]["end"]
    reads = end["data"]["reads"] - begin["data"]["reads"]
    end["data"]["read_bytes"] = begin["data"]["read_bytes"] + reads * 128 * 1024
    oe["disks"]["vda"]["reads"] = ob["disks"]["vda"]["reads"] + reads * (1 + request_excess)
    oe["disks"]["vda"]["sectors_read"] = ob["disks"]["vda"]["sectors_read"] + reads * 256 * (1 + byte_excess)
    found = _with_device(doc)
    assert ("shared_device" in found) == fires
    if fires:
        assert "the device read 150.0% of the engine's bytes" in found["shared_device"].message
        assert "multi-block reads are judged by bytes" in found["shared_device"].message


def test_single_block_reads_split_into_more_requests_are_still_found(doc):
    """Bytes would hide nothing here, but single-block reads are one request each: the request check stays."""
    ob, oe = doc["snapshots"]["begin"]["os"], doc["snapshots"]["end"]["os"]
    begin, end = doc["normalized"]["begin"], doc["normalized"]["end"]
    reads = end["data"]["reads"] - begin["data"]["reads"]
    end["data"]["read_bytes"] = begin["data"]["read_bytes"] + reads * 8192  # 8 KiB each: single-block
    oe["disks"]["vda"]["reads"] = ob["disks"]["vda"]["reads"] + reads * 1.06
    oe["disks"]["vda"]["sectors_read"] = ob["disks"]["vda"]["sectors_read"] + reads * 16
    found = _with_device(doc)
    assert "shared_device" in found and "106.0% of the engine's physical reads" in found["shared_device"].message


@pytest.mark.parametrize("per_row, frequency, invalid", [
    (0.44, 3, False),  # the hot-spot run: 44% from storage where 67% of the statements are cold
    (0.30, 3, True),  # under half the cold rows from storage
    (0.44, 1, True),  # every statement to the hot spot: nothing is meant to come from storage
])
def test_a_hot_spot_run_is_judged_on_its_cold_rows(per_row, frequency, invalid):
    def run(hotspot):
        return a_result(config__workload__hotspot=hotspot, config__workload__hotspot_frequency=frequency,
                        figures__validity__blocks_read_per_row=per_row)
    found = codes(run(True)).get("rows_from_cache")
    assert (found is not None) == invalid
    if invalid and frequency == 3:
        assert "where the hot spot (1 statement in 3, meant to be cached) leaves 67% to come from storage" \
            in found.message and "served 55% of the cold rows too" in found.message
    if frequency == 1:
        assert "every statement goes to the hot spot" in found.message and "measures memory" in found.message
    assert "rows_from_cache" in codes(run(False))  # the same figure without a hot spot: all rows are cold


@pytest.mark.parametrize("scan_share, expected", [
    (0.9, "the database's scans delivered 0.23 of the device's sequential bandwidth"),
    (0.2, "the database delivered"),  # mostly single-block reads: fio's random reads are their yardstick
])
def test_each_access_pattern_is_judged_against_its_own_raw_counterpart(doc, scan_share, expected):
    f = doc["figures"]
    read = f["io_profile"]["data_read_mib_per_s"]
    f.setdefault("shape", {})["scan_mib_per_s"] = scan_share * read
    f["baseline"] = {"reads_per_s": f["load_profile"]["physical_reads_per_s"] * 2.5,
                     "seq_read_mib_per_s": scan_share * read / 0.23}
    judged = [x for x in verdict.findings(of(doc)) if x.code in ("efficiency", "below_device", "beyond_device")]
    assert len(judged) == 1 and judged[0].message.startswith(expected), judged
    if scan_share > 0.5:
        assert judged[0].figure == "efficiency.scan_bandwidth_share" and "synchronous reads" not in judged[0].message


def test_a_ratio_in_the_thousands_of_percent_is_said_in_amounts(doc):
    """'the device wrote 7347903.1% of the bytes the engine wrote' says nothing a reader can use."""
    found = _with_device(doc, extra_write_mib=5000)
    message = found["shared_device"].message
    assert "the device wrote" in message and "while the engine wrote 93.8 MiB" in message and "%" not in \
        message.split(":")[0]


def test_a_compare_cell_too_large_to_mean_anything_says_times_as_much():
    from dbio.report.compare_model import plain_pct

    assert plain_pct(0.4, 1187.0, 296650.0) == {"value": "2,968 times as much", "kind": "text"}
    assert plain_pct(100.0, 157.0, 57.0) == 57.0 and plain_pct(0.0, 5.0, None) is None


def test_the_machine_readable_verdict_says_not_valid_with_one_reason_a_line():
    cached = load("cached")
    found = verdict.summary(of(cached))
    assert found["valid"] is False and len(found["reasons"]) == 2
    assert found["reasons"][0].startswith("only 0% of the rows") and "\n" not in "".join(found["reasons"])
    assert verdict.summary_line(found).startswith("NOT VALID: only 0% of the rows")
    assert verdict.summary(of(load("complete"))) == {"valid": True, "reasons": []}
