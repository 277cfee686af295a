"""The MySQL engine's counters, waits and report words without a server: a recorded snapshot of a
MariaDB 10.11 with performance_schema on (tests/fixtures/mysql/), its setup and wait rows."""

import json
from pathlib import Path

import pytest

from dbio.collect import fio
from dbio.engines import counters
from dbio.engines.mysql import pfs, stats
from dbio.report import words
from dbio.result_records import of
from dbio.stats import figures

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "mysql"


def _raw(name="snapshot_mariadb_10_11_pfs.json"):
    return json.loads((FIXTURES / name).read_text())


def test_performance_schema_times_the_data_files_and_names_the_sessions_reads():
    raw = _raw()
    out = stats.normalize(raw)
    assert counters.problems(out) == []
    data_file, waits, own = raw["pfs"]["files"]["innodb_data_file"], raw["pfs"]["client_waits"], raw["pfs"]["own_waits"]
    page = raw["status"]["innodb_page_size"]
    assert out["data"]["reads"] == raw["status"]["innodb_data_reads"]  # counts from the status, as without it
    assert out["data"]["read_time_ms"] == pytest.approx(data_file["sum_timer_read"] / 1e9)  # picoseconds
    assert out["data"]["write_time_ms"] == pytest.approx(data_file["sum_timer_write"] / 1e9)
    assert (out["client"]["reads"], out["client"]["read_bytes"]) == (waits["count"], waits["count"] * page)
    assert out["client"]["read_time_ms"] == pytest.approx(waits["timer"] / 1e9)
    assert out["sessions"] == {"reads": own["count"], "read_bytes": own["count"] * page}
    # the buffer pool's misses stay the rows' reads (pages read per row)
    assert out["client_normal"]["reads"] == raw["status"]["innodb_buffer_pool_reads"]
    # performance_schema counts the same reads as the status (recorded together)
    assert data_file["count_read"] == pytest.approx(raw["status"]["innodb_data_reads"], rel=0.01)
    assert waits["count"] == pytest.approx(raw["status"]["innodb_buffer_pool_reads"], rel=0.02)
    # MariaDB 10.8+ does not instrument its redo log: no redo timing, never a zero
    assert out["wal"]["write_time_ms"] is None and out["wal"]["sync_time_ms"] is None


def test_without_performance_schema_the_sessions_reads_are_the_buffer_pools_misses():
    raw = {k: v for k, v in _raw().items() if k != "pfs"}
    out = stats.normalize(raw)
    s = raw["status"]
    assert out["client"]["reads"] == s["innodb_buffer_pool_reads"] + s["innodb_buffer_pool_read_ahead"] + \
        s["innodb_buffer_pool_read_ahead_rnd"]
    assert out["client"]["read_time_ms"] is None and out["data"]["read_time_ms"] is None and "sessions" not in out


def test_mysql_8_redo_files_give_write_and_sync_latency():
    raw = _raw()
    raw["status"]["innodb_os_log_fsyncs"] = 400.0
    raw["pfs"]["files"]["innodb_log_file"] = {"count_read": 0, "sum_timer_read": 0, "bytes_read": 0,
                                              "count_write": 500, "sum_timer_write": 2.5e10, "bytes_write": 1e6,
                                              "count_misc": 402, "sum_timer_misc": 8e11}
    wal = stats.normalize(raw)["wal"]
    assert wal["write_time_ms"] == pytest.approx(25.0) and wal["sync_time_ms"] == pytest.approx(800.0)
    del raw["status"]["innodb_os_log_fsyncs"]  # no sync count to divide by: no sync time either
    assert stats.normalize(raw)["wal"]["sync_time_ms"] is None


def test_what_performance_schema_allows_is_read_from_its_setup():
    rows = json.loads((FIXTURES / "pfs_rows_mariadb_10_11.json").read_text())["pfs_setup"]
    seen = pfs.instrumented([tuple(r) for r in rows], True, "MariaDB 10.11.19")
    assert (seen.data_io, seen.redo_io, seen.waits) == (True, False, True)
    assert seen.why_not_redo == "MariaDB 10.11.19 does not instrument its redo log file in performance_schema"
    off = pfs.instrumented([], False, "MariaDB 10.11.19")
    assert not (off.data_io or off.redo_io or off.waits) and "performance_schema is off" in off.why_not_data
    untimed = [("instrument:" + pfs.DATA_FILE, "YES/NO")] + [tuple(r) for r in rows if r[0].startswith("consumer")]
    assert "not enabled and timed" in pfs.instrumented(untimed, True, "MySQL 8.0.40").why_not_data
    no_threads = [tuple(r) for r in rows if r[0] != "consumer:thread_instrumentation"]
    seen = pfs.instrumented(no_threads, True, "MySQL 8.0.40")
    assert not seen.data_io and not seen.waits and "consumer is off" in seen.why_not_data
    # setup_actors leaves some users out, or a thread is not instrumented: some reads untimed, some waits unseen
    for left_out in ("actors:every user", "threads:every thread"):
        some = [(k, "NO" if k == left_out else v) for k, v in (tuple(r) for r in rows)]
        seen = pfs.instrumented(some, True, "MariaDB 10.11.19")
        assert not seen.data_io and not seen.waits and "setup_actors" in seen.why_not_data
        assert "setup_actors" in seen.why_not_waits


def test_the_instrument_classes_all_off_are_named():
    rows = [("idle", 0, 1), ("memory/innodb", 0, 120), ("memory/performance_schema", 80, 80),
            ("wait/io/file", 50, 52), ("wait/io/table", 0, 1), ("wait/synch/mutex", 0, 300)]
    assert pfs.classes_off(rows) == "idle, memory/innodb, wait/io/table, wait/synch/mutex"
    assert pfs.classes_off([("wait/io/file", 1, 52)]) == "none"


@pytest.mark.parametrize("row, label", [
    (("Query", "Sending data", "wait/io/file/innodb/innodb_data_file", "read", 1), "IO:innodb_data_file read"),
    (("Query", "Sending data", "wait/io/file/innodb/innodb_data_file", "read", 0), "CPU"),  # ended: working
    (("Query", "Sending data", None, None, None), "CPU"),
    (("Query", "Sending data", "wait/io/table/sql/handler", "fetch", 1), "CPU"),  # a handler call, not a wait
    (("Query", "Sending data", "wait/synch/mutex/innodb/buf_pool_mutex", "lock", 1), "Synch:buf_pool_mutex"),
    (("Query", "Sending data", "wait/lock/table/sql/handler", "read", 1), "Lock:table"),
    (("Query", "User lock", "wait/synch/cond/sql/Item_func_get_lock::cond", "wait", 1), "Lock:barrier"),
    (("Sleep", "", "idle", "idle", 1), "Client:between slices"),
    ((None, None, None, None, None), "Unknown")])
def test_wait_samples_take_postgresqls_form(row, label):
    assert stats.session_state(*row, waits_seen=True) == label


def test_recorded_wait_rows_label_the_sessions():
    # recorded as one join of the processlist and the waits: its two halves as the sampler now reads them
    joined = [tuple(r) for r in json.loads((FIXTURES / "pfs_rows_mariadb_10_11.json").read_text())["session_waits"]]
    connections = [(r[0], "root", r[1], r[2], "") for r in joined] + [(5, "system user", "Daemon", "", "")]
    waits = [(r[0], *r[3:7]) for r in joined]
    ids = [r[0] for r in joined] + [999]
    rows = stats.state_rows(connections, waits, ids)
    assert rows == joined
    labels = stats.session_labels(rows, ids, waits_seen=True)
    assert labels == ["Client:between slices", "CPU", "Unknown"]  # the monitor's wait had ended; 999 is gone


def test_a_connection_without_wait_events_keeps_its_state_and_the_idle_and_our_own_are_not_at_work():
    connections = [(7, "dbio", "Query", "User sleep", "CALL dbio_slice_1(...)"), (8, "dbio", "Sleep", "", ""),
                   (9, "app", "Query", "Sending data", "SELECT 1"), (1, "system user", "Query", "", ""),
                   (2, "event_scheduler", "Daemon", "Waiting on empty queue", ""), (10, "app", "Killed", "", "")]
    assert stats.state_rows(connections, [], [7, 8]) == [(7, "Query", "User sleep", None, None, None, None),
                                                         (8, "Sleep", "", None, None, None, None)]
    assert stats.session_labels(stats.state_rows(connections, [], [7, 8, 3]), [7, 8, 3], waits_seen=False) == \
        ["Timeout:think time", "Client:between slices", "Unknown"]
    assert [c[0] for c in stats.working(connections, {7})] == [9]


def test_the_innermost_wait_still_waiting_names_the_session():
    rows = [(7, "Query", "Sending data", "wait/io/table/sql/handler", "fetch", 1, 10),
            (7, "Query", "Sending data", "wait/io/file/innodb/innodb_data_file", "read", 1, 11),
            (8, "Query", "Sending data", "wait/io/table/sql/handler", "fetch", 1, 20),
            (8, "Query", "Sending data", "wait/synch/mutex/innodb/buf_pool_mutex", "lock", 0, 21)]
    assert stats.session_labels(rows, [7, 8], waits_seen=True) == ["IO:innodb_data_file read", "CPU"]
    plain = [(7, "Query", "Sending data", None, None, None, None)]
    assert stats.session_labels(plain, [7], waits_seen=False) == ["Active:Sending data"]


def test_the_baseline_reads_the_engines_page():
    assert "--bs=8k" in fio.Job("x", ("/f",), 1, 5).options()
    assert "--bs=16k" in fio.Job("x", ("/f",), 1, 5, block=16384).options()


def _window(page_bytes, misses, selects, work_unit=8):
    begin = stats.normalize(_raw())
    end = json.loads(json.dumps(begin))
    end["client_normal"]["reads"] += misses
    end["client_normal"]["read_bytes"] += misses * page_bytes
    return {"seconds": 10.0, "engine_begin": begin, "engine_end": end,
            "totals": {"selects": selects, "updates": 0, "scans": 0, "rows": selects * work_unit},
            "histograms": {"bounds_us": [1.0]}, "page_bytes": page_bytes, "work_unit": work_unit}


def test_pages_read_per_row_counts_the_engines_pages():
    # 16 KiB pages: 8,000 misses for 1,000 ranges of 8 rows is one page read per row
    assert figures.derive(_window(16384, 8000, 1000))["validity"]["blocks_read_per_row"] == pytest.approx(1.0)
    assert figures.derive(_window(16384, 12000, 1000))["validity"]["blocks_read_per_row"] == pytest.approx(1.5)
    no_page = _window(8192, 8000, 1000)
    del no_page["page_bytes"]  # older windows: PostgreSQL's 8 KiB blocks
    assert figures.derive(no_page)["validity"]["blocks_read_per_row"] == pytest.approx(1.0)


def test_reports_speak_innodbs_words_and_leave_the_kernels_alone():
    assert words.translator({"redo_name": "WAL", "block_name": "block", "cache_name": "shared_buffers"}) is None
    say = words.translator({"redo_name": "redo log", "block_name": "page", "cache_name": "innodb_buffer_pool_size"})
    assert say("WAL sync") == "Redo log sync"
    assert say("data files, WAL and temporary files") == "data files, redo log and temporary files"
    assert say("Physical read blocks") == "Physical read pages" and say("Blocks read per row") == "Pages read per row"
    assert say("The block device under the data directory") == "The block device under the data directory"
    assert say("22.5% of block requests missed shared buffers") == \
        "22.5% of page requests missed innodb_buffer_pool_size"


def test_the_page_cleaners_flushing_inside_the_window_is_named():
    from dbio.engines.mysql import facts
    from dbio.report import conduct_findings

    window = _window(16384, 8000, 1000)
    end = stats.normalize({**_raw(), "status": {**_raw()["status"], "innodb_buffer_pool_pages_flushed":
                                                _raw()["status"]["innodb_buffer_pool_pages_flushed"] + 5000}})
    window["engine_end"]["by_backend"] = end["by_backend"]
    f = figures.derive(window)
    assert f["io_profile"]["by_backend"]["page cleaner"]["write_requests_per_s"] == pytest.approx(500.0)
    caps = facts.capability_facts({}, local=True)
    found = conduct_findings.maintenance_in_window(of({"figures": f, "capabilities": caps}))
    assert found is not None and found.level == "warning"
    assert found.message.startswith("InnoDB's page cleaner (flushing dirty pages) worked inside the window")
    quiet = figures.derive(_window(16384, 8000, 1000))  # nothing flushed: nothing said
    assert conduct_findings.maintenance_in_window(of({"figures": quiet, "capabilities": caps})) is None


def test_a_mysql_result_reports_in_innodbs_words_and_older_ones_are_completed():
    from dbio import report
    from dbio.engines import registry

    doc = json.loads((FIXTURES / "result_mariadb_10_11_pfs.json").read_text())
    text = report.render(of(doc), "text")
    engine_part = text.split("Storage stack")[0] + text.split("Load Profile")[1]
    assert "WAL" not in engine_part and "Redo log sync" in text and "pages read per row" in text
    assert "Physical read pages" in text and "block devices under the data directory" in text  # the kernel's word
    assert "IO:innodb_data_file read" in text  # wait events, as PostgreSQL's
    older = json.loads(json.dumps(doc))
    for key in ("redo_name", "block_name", "page_bytes"):
        del older["capabilities"][key]
    assert "WAL sync" in report.render(of(older), "text")  # without the facts: PostgreSQL's words
    completed = registry.entry("mysql").complete_result(older)
    assert completed["capabilities"]["page_bytes"] == 16384
    assert report.render(of(completed), "text") == text


def test_a_finding_printed_by_run_is_in_the_engines_words():
    doc = json.loads((FIXTURES / "result_mariadb_10_11_pfs.json").read_text())
    text = "engine 32 KiB of data files, WAL and temporary files"
    assert words.say(of(doc), text) == "engine 32 KiB of data files, redo log and temporary files"
    assert words.say(of({"capabilities": {}}), text) == text


def test_the_workload_shape_says_how_its_figures_are_made_in_the_engines_words():
    from dbio.report import access_section

    doc = json.loads((FIXTURES / "result_mariadb_10_11_pfs.json").read_text())
    figures = {"shape": {"reads_per_statement": 8.5, "intended_reads_per_statement": 8.0,
                         "reads_per_statement_ratio": 1.06, "data_writes_per_commit": 8.7,
                         "wal_writes_per_commit": 1.03}}
    model = words.in_engine_words({"sections": [access_section.section(figures)]}, doc["capabilities"])
    rows = model["sections"][0]["tables"][0]["rows"]
    text = " ".join(str(cell) for row in rows for cell in row)
    assert "WAL" not in text and "block" not in text
    assert "redo log writes per commit" in text.lower() and "one page each" in text


def test_a_session_without_a_user_is_named_as_such():
    """The processlist's USER of a connection not yet authenticated may be NULL (issue 26, item 9)."""
    raw = json.loads((FIXTURES / "snapshot_mariadb_10_11_pfs.json").read_text())
    raw["others"] = {"active": 2, "names": [None, "app"]}
    assert stats.normalize(raw)["gauges"]["other_session_names"] == ["(no name yet)", "app"]


def test_the_barrier_s_waiters_are_the_connections_in_its_user_lock():
    from dbio.engines.mysql.workload import barrier_waiters

    lock = "dbio:run:test:42"
    rows = [(11, "dbio", "Query", "User lock", f"SELECT GET_LOCK('{lock}', 10)"),
            (12, "dbio", "Query", "User lock", f"SELECT GET_LOCK('{lock}', 10)"),
            (13, "app", "Query", "User lock", "SELECT GET_LOCK('theirs', 10)"),
            (14, "dbio", "Query", "Sending data", f"SELECT '{lock}'"),
            (15, "dbio", "Query", "User lock", f"SELECT GET_LOCK('{lock}', 10)"),
            (16, "dbio", "Sleep", "", "")]
    assert barrier_waiters(rows, lock, own_id=15) == 2
