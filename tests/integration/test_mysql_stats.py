"""The mysql engine's counters, wait samples and CPU against a real server with performance_schema
on (a throwaway mariadbd, bench/scratch_mariadbd.py: own data directory and socket, O_DIRECT, a
16 MiB buffer pool, removed after), and sweeps and compare on MySQL results against the MariaDB
service of the machine (tests/integration/test_mysql.py's database). They skip with the reason
when mariadbd or the service is missing."""

import json
import os
import sys
import uuid
from pathlib import Path

import pytest

from tests.integration.conftest import dbio, load_result, result_dir
from tests.integration.test_mysql import _server as service_connection

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import scratch_mariadbd  # noqa: E402

pytest.importorskip("pymysql")
SCALE = ["--scale", "96MiB", "--scan-table-size", "0"]  # 6x the scratch server's buffer pool
SERVICE_DATABASE = f"dbio_test_stats_{os.getpid()}"  # never shared by two test runs
SERVICE_DSN = f"mysql://root@localhost/{SERVICE_DATABASE}"


@pytest.fixture(scope="module")
def service():
    """A database of the MariaDB service made for these tests and dropped after (nothing else touched)."""
    conn = service_connection()
    with conn.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS {SERVICE_DATABASE}")
        cur.execute(f"CREATE DATABASE {SERVICE_DATABASE}")
    yield conn
    with conn.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS {SERVICE_DATABASE}")
    conn.close()


@pytest.fixture(scope="module")
def scratch():
    why = scratch_mariadbd.binaries_present()
    if why:
        pytest.skip(why)
    base = Path(f"/var/tmp/dbio-tests-mysqlstat-{uuid.uuid4().hex[:8]}")
    try:
        started = scratch_mariadbd.start(base, buffer_pool="16M")
    except RuntimeError as exc:
        pytest.skip(f"no throwaway mariadbd could start here: {exc}")
    yield started
    started.stop()


def test_performance_schema_gives_read_latency_waits_and_own_sessions(scratch, tmp_path):
    common = ["--engine", "mysql", "--dsn", scratch.dsn(), "--results-dir", str(tmp_path), *SCALE]
    assert dbio("setup", *common).code == 0
    done = dbio("run", *common, "-t", "2", "--run-time", "4s", "--warmup", "1s")
    assert done.code == 0, done.text
    doc = load_result(result_dir(done))
    caps = doc["capabilities"]
    assert caps["times_data_io"] and caps["can_see_waits"] and not caps["times_redo_io"]  # MariaDB: no redo file
    assert (caps["redo_name"], caps["block_name"], caps["page_bytes"]) == ("redo log", "page", 16384)
    missing = {m["figure"] for m in caps["missing"]}
    assert "physical read and write latency" not in missing and "wait events of the sessions" not in missing
    assert "other users' sessions on the server" not in missing  # root holds PROCESS
    assert "redo log write and sync latency" in missing
    f = doc["figures"]
    assert 10 < f["latency"]["avg_read_us"] < 100_000  # timed by performance_schema, in microseconds
    assert f["latency"]["avg_wal_sync_us"] is None  # not instrumented: absent, never 0
    # the run's own sessions did the client sessions' reads (nobody else worked on this server)
    assert f["other_sessions"]["reads"] <= 0.01 * doc["normalized"]["end"]["client"]["reads"]
    # each row of a range cost about one page read: the rows are scattered, the index cached
    assert 0.6 < f["validity"]["blocks_read_per_row"] < 1.3
    labels = doc["waits"]["counts"]
    assert labels.get("IO:innodb_data_file read", 0) > 0, labels
    assert not any(k.startswith("Active") for k in labels)  # wait events, not processlist states
    # the sessions' server threads' own CPU (/proc/<pid>/task/<tid>), never the whole server's
    cpu = f["cpu"]
    assert 0 < cpu["db_cpu_seconds"] <= 2 * f["window_seconds"] * 1.05
    assert len(doc["snapshots"]["end"]["os"]["session_run_delay"]) == 2  # the same threads' wait for a CPU
    assert cpu["cpu_wait_us_per_read"] >= 0 and 0 <= cpu["cpu_wait_pct"] <= 100
    # the server process, every thread of it (read a few milliseconds apart, in 10 ms ticks)
    assert cpu["server_cpu_seconds"] >= cpu["db_cpu_seconds"] - 0.05
    assert 0 <= cpu["other_cpu_seconds"] <= cpu["host"]["busy_seconds"]
    report = (result_dir(done) / "report.txt").read_text()
    assert "Redo log sync" in report and "WAL" not in report.split("Storage stack")[0]
    assert "pages read per row" in report


def test_the_samplers_statements_leave_no_temporary_table_on_the_server(scratch):
    """The monitor's reading and the wait sampler's, as a run takes them every second and twice a second: none
    fills an internal temporary table on disk (information_schema.PROCESSLIST did, in Aria, per query; SHOW
    GLOBAL STATUS fills one in memory, as the status reading of this test does too)."""
    from dbio.engines.mysql import connection, sqlfiles, stats

    conn = connection.connect(scratch.dsn(), application_name="dbio:test sampler")
    try:
        def created() -> int:
            return int(conn.one_row("SHOW GLOBAL STATUS LIKE 'Created_tmp_disk_tables'")[1])

        before = created()
        for _ in range(5):
            stats.read(conn, {conn.thread_id}, True)
            waits = conn.query(sqlfiles.statement("session_waits.sql") + f" ({conn.thread_id})")
            rows = stats.state_rows(stats.processlist(conn), waits, [conn.thread_id])
            assert stats.session_labels(rows, [conn.thread_id], waits_seen=True) != ["Unknown"]
        after = created()
        conn.query("SELECT COUNT(*) FROM information_schema.PROCESSLIST")  # the counters do see one
        seen = created()
    finally:
        conn.close()
    assert after == before
    assert seen == after + 1


def test_a_sweep_and_a_compare_on_mysql_results(service, tmp_path):
    common = ["--engine", "mysql", "--dsn", SERVICE_DSN, "--results-dir", str(tmp_path), "--scale", "32MiB",
              "--scan-table-size", "8MiB", "--allow-cached", "--warmup", "0", "--run-time", "1s"]
    assert dbio("setup", *common).code == 0
    swept = dbio("sweep", *common, "--sessions", "1,2", "--label", "mysql-sweep")
    assert swept.code == 0, swept.text
    line = next(ln for ln in swept.out.splitlines() if ln.startswith("sweep: "))
    directory = Path(line.split(": ", 1)[1]).parent
    sweep = json.loads((directory / "sweep.json").read_text())
    assert [s["status"] for s in sweep["steps"]] == ["complete", "complete"]
    text = (directory / "sweep.txt").read_text()
    assert "Summary" in text and "innodb_buffer_pool_size" in text
    steps = [directory / s["name"] for s in sweep["steps"]]
    compared = dbio("compare", str(steps[0]), str(steps[1]))
    assert compared.code == 0, compared.text
    assert "workload.threads_per_schema" in compared.out.split("Headline figures")[0]
    assert "reads/s" in compared.out
    assert dbio("report", str(directory), "--format", "md").code == 0
