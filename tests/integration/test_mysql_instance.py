"""The mysql engine's managed instance (the machine's mariadbd), as users run it: lifecycle, setup
in both schema models with --verify (one row per leaf page) at 8 KiB and 16 KiB pages, runs at
update pct 0 and 20, scan pct, an interrupt, and a teardown that spares a user's own tables. They
skip with the reason when the machine has no MariaDB/MySQL server binaries (Debian package
mariadb-server)."""

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.integration.conftest import _base_dir, dbio, load_result, over, result_dir, wait_for
from tests.integration.rate_checks import assert_shared_schedule_served

pymysql = pytest.importorskip("pymysql")

SMALL = ["--scale", "32MiB", "--scan-table-size", "8MiB", "--allow-cached", "--warmup", "1s", "--run-time", "2s"]


def _binaries_or_skip():
    from dbio.engines.mysql.instance import binaries
    from dbio.errors import UsageError

    try:
        return binaries.locate()
    except UsageError as exc:
        pytest.skip(f"no usable MariaDB/MySQL server binaries: {exc}")


class Managed:
    """buffer_pool is given to every command, as dbio.toml would: the configuration is what the server gets."""

    def __init__(self, root: Path, page: str):
        self.data_dir, self.results, self.page = root / f"mysql-{page}", root / f"results-{page}", page

    def args(self, *extra: str) -> list[str]:
        return [*self.here(), "--buffer-pool", "8MiB", "--results-dir", str(self.results), *extra]

    def here(self, *extra: str) -> list[str]:
        """The options the instance commands take."""
        return ["--engine", "mysql", "--data-dir", str(self.data_dir), *extra]

    def connect(self, database: str | None = "dbio"):
        return pymysql.connect(unix_socket=str(self.data_dir / "socket" / "mysqld.sock"), user="root",
                               database=database, autocommit=True, connect_timeout=5)

    def query(self, sql: str, database: str | None = "dbio") -> list[tuple]:
        conn = self.connect(database)
        try:
            with conn.cursor() as cur:
                cur.execute(sql)
                return list(cur.fetchall())
        finally:
            conn.close()


@pytest.fixture(scope="module")
def managed():
    """One managed instance with 8 KiB pages (PostgreSQL's block size), removed at the end."""
    _binaries_or_skip()
    root = _base_dir()
    inst = Managed(root, "8k")
    done = dbio("instance", "init", *inst.here("--innodb-page-size", "8k", "--buffer-pool", "8MiB"))
    assert done.code == 0, done.text
    yield inst
    dbio("instance", "destroy", "--yes", *inst.here())
    assert not inst.data_dir.exists()
    shutil.rmtree(root, ignore_errors=True)


def _server_pid(data_dir: Path) -> int:
    return int((data_dir / "socket" / "mysqld.pid").read_text().split()[0])


def test_lifecycle_with_its_own_socket_no_tcp_and_an_unprivileged_server(tmp_path):
    _binaries_or_skip()
    root = _base_dir()
    inst = Managed(root, "16k")
    try:
        done = dbio("instance", "init", *inst.here("--buffer-pool", "8MiB"))
        assert done.code == 0, done.text
        assert "no TCP listener" in done.text and "16 KiB pages" in done.text
        pid = _server_pid(inst.data_dir)
        settings = dict(inst.query("SHOW GLOBAL VARIABLES WHERE Variable_name IN ('skip_networking', 'port', "
                                   "'innodb_flush_method', 'innodb_page_size', 'innodb_buffer_pool_size', "
                                   "'innodb_read_ahead_threshold', 'innodb_random_read_ahead', 'performance_schema')"))
        assert settings == {"skip_networking": "ON", "port": "0", "innodb_flush_method": "O_DIRECT",
                            "innodb_page_size": "16384", "innodb_buffer_pool_size": str(8 << 20),
                            "innodb_read_ahead_threshold": "0", "innodb_random_read_ahead": "OFF",
                            "performance_schema": "ON"}
        record = inst.data_dir / "dbio-mysql-instance.json"
        if os.geteuid() == 0:  # the server is 'dbio's; the record and the directory stay root's
            assert os.stat(f"/proc/{pid}").st_uid == os.stat(inst.data_dir / "data").st_uid != 0
            assert os.stat(record).st_uid == 0 and os.stat(inst.data_dir).st_uid == 0
        again = dbio("instance", "init", *inst.here("--buffer-pool", "8MiB"))
        assert again.code == 2 and "already exists" in again.err and _server_pid(inst.data_dir) == pid
        status = dbio("instance", "status", *inst.here())
        assert status.code == 0 and f"running (pid {pid})" in status.out and "MariaDB" in status.out
        done = dbio("setup", *inst.args(*SMALL, "--verify"))  # InnoDB's default 16 KiB pages: a row each too
        assert done.code == 0, done.text
        assert "ok   dbio_cf1_1 1 row per 16 KiB page: 4096 rows in" in done.out  # rows = leaf pages, proved
        assert "ok   dbio_cf2 1 row per 16 KiB page: 1024 rows in" in done.out
        assert "loaded 80 MiB (" in done.out  # 5,120 rows of a 16 KiB page each: what was written, not 8 KiB a row
        assert inst.query("SELECT DISTINCT rows_per_page, page_size FROM dbio_setup_tables") == [(1, 16384)]
        # its report sizes the data set as its verdict does (a 16 KiB page a row), and calls it managed
        ran = dbio("run", *inst.args(*SMALL))
        assert ran.code == 0, ran.text
        text = (result_dir(ran) / "report.txt").read_text()
        assert "data set 64 MiB = " in text and "64 MiB per schema x 1 = 64 MiB, 4,096 rows of a 16 KiB page" in text
        assert next(line for line in text.splitlines() if line.strip().startswith("Server ")).endswith("(managed)")
        kept = dbio("teardown", *inst.here())  # a loaded data set: not without --yes where no one can answer
        assert kept.code == 2 and "pass --yes" in kept.err and inst.query("SELECT count(*) FROM dbio_cf1_1")[0][0]
        assert dbio("instance", "stop", *inst.here()).code == 0
        assert not Path(f"/proc/{pid}").exists() or b"mariadbd" not in Path(f"/proc/{pid}/cmdline").read_bytes()
        assert dbio("instance", "status", *inst.here()).code == 3
        assert dbio("instance", "start", *inst.here("--buffer-pool", "8MiB")).code == 0
        assert _server_pid(inst.data_dir) != pid
        refused = dbio("instance", "start", *inst.here("--innodb-page-size", "8k"))
        assert refused.code == 2 and "fixed when an instance is created" in refused.err
        done = dbio("instance", "destroy", "--yes", *inst.here())
        assert done.code == 0, done.text
        assert "dbio: stopping the server of the instance in" in done.out and "dbio: removing " in done.out
        assert f"removed the instance in {inst.data_dir} (" in done.out
        assert not inst.data_dir.exists()
    finally:
        if inst.data_dir.exists():
            dbio("instance", "destroy", "--yes", *inst.here())
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("schemas, threads", [(2, 1), (1, 2)], ids=["multi-schema", "single-schema"])
def test_setup_verifies_rows_per_leaf_page_at_8k_pages(managed, schemas, threads):
    done = dbio("setup", *managed.args(*SMALL, "--schemas", str(schemas), "-t", str(threads), "--reload",
                                       "--verify"))
    assert done.code == 0, done.text
    assert "ok   dbio_cf1_1 1 row per 8 KiB page: 4096 rows in 4096 leaf pages" in done.out
    assert managed.query("SELECT DISTINCT rows_per_page, page_size FROM dbio_setup_tables") == [(1, 8192)]
    assert ("ok   dbio_cf1_2 rows" in done.out) == (schemas == 2)
    assert "ok   dbio_cf1_1 keys scattered" in done.out and "verified: all" in done.out


def test_setup_judges_the_buffer_pool_it_asks_for_not_the_one_running(managed):
    """A running managed server keeps its buffer pool until the load restarts it: the data set must be judged
    against the pool the command asks for (it was judged against the running 8 MiB, and loaded)."""
    assert dbio("instance", "start", *managed.here("--buffer-pool", "8MiB")).code == 0
    scale = ["--scale", "40MiB", "--scan-table-size", "0", "--reload"]
    refused = dbio("setup", *managed.here("--buffer-pool", "256MiB", "--results-dir", str(managed.results), *scale))
    assert refused.code == 2, refused.text
    assert "fits in innodb_buffer_pool_size (256 MiB)" in refused.err
    assert managed.query("SELECT @@innodb_buffer_pool_size") == [(8 << 20,)]  # nothing restarted or changed


def test_a_run_whose_buffer_pool_holds_the_load_is_refused_before_the_server_restarts(managed):
    """dbio run --buffer-pool 256MiB on a 32 MiB load restarted the managed server with it, remembered it
    for the next commands, and only then refused the run (the data set fits)."""
    assert dbio("setup", *managed.args(*SMALL)).code == 0  # SMALL's 32 MiB load (allowed cached)
    assert dbio("instance", "start", *managed.here("--buffer-pool", "8MiB")).code == 0
    refused = dbio("run", *managed.here("--buffer-pool", "256MiB", "--results-dir", str(managed.results),
                                        "--warmup", "1s", "--run-time", "2s"))
    assert refused.code == 2 and len(refused.err.strip().splitlines()) == 1, refused.text
    assert "the setup record: scale = 4096 blocks (32 MiB)" in refused.err  # the load's, not the default 1 GiB
    assert "fits in innodb_buffer_pool_size (256 MiB)" in refused.err
    assert managed.query("SELECT @@innodb_buffer_pool_size") == [(8 << 20,)]  # nothing restarted
    again = dbio("run", *managed.here("--results-dir", str(managed.results), "--warmup", "1s", "--run-time", "1s",
                                      "--allow-cached"))
    assert "buffer_pool 256 MiB" not in again.out, again.text  # nor remembered


@pytest.mark.parametrize("update_pct, scan_pct", [(0, 0), (20, 0), (0, 10)])
def test_runs_on_the_managed_instance(managed, update_pct, scan_pct):
    assert dbio("setup", *managed.args(*SMALL, "--reload")).code == 0
    label = f"u{update_pct}s{scan_pct}"
    done = dbio("run", *managed.args(*SMALL, "-t", "2", "--update-pct", str(update_pct), "--scan-pct",
                                     str(scan_pct), "--label", label))
    assert done.code == 0, done.text
    doc = load_result(result_dir(done))
    assert doc["status"] == "complete" and [s["state"] for s in doc["sessions"]] == ["done", "done"]
    totals = doc["totals"]
    statements = totals["selects"] + totals["updates"]
    assert statements > 50
    assert abs(totals["updates"] - statements * update_pct / 100) <= 2 * 2  # exact per 100, per session
    reads = totals["selects"] + totals["scans"]  # scan_pct counts scans among all reading statements
    assert abs(totals["scans"] - reads * scan_pct / 100) <= 2 * 2 and (totals["scans"] > 0) == (scan_pct > 0)
    shown = {k: v["setting"] for k, v in doc["settings"].items()} if "settings" in doc else None
    caps = doc["capabilities"]
    assert caps["engine"] == "mysql" and caps["direct_io"] and caps["local"]
    assert "skip_networking" in caps["settings_shown"] and "innodb_page_size" in caps["settings_shown"]
    assert shown is None or shown["innodb_page_size"] == "8192"
    server = {k: v["setting"] for k, v in doc["environment"]["server"]["settings"].items()}
    off = server["performance_schema_instruments_off"].split(", ")  # recorded: what the server did not time
    assert off and not any(c.startswith("wait/io/file") for c in off)
    assert caps["times_data_io"] and caps["can_see_waits"]
    assert server["innodb_checksum_algorithm"] and server["innodb_adaptive_hash_index"] == "OFF"
    assert doc["figures"]["load_profile"]["physical_reads_per_s"] > 0  # 32 MiB against an 8 MiB buffer pool
    if update_pct:
        assert doc["normalized"]["end"]["wal"]["bytes"] > doc["normalized"]["begin"]["wal"]["bytes"]


def test_a_rate_is_kept_on_its_schedule_in_the_loop_and_one_beyond_it_is_not_held(managed):
    """--rate in MariaDB's loop: a uniform rate kept, every statement timed from its intended start and its lag
    (kinds 5 and 6 of the loop's histogram string); one far beyond the loop's capacity not held, said first."""
    assert dbio("setup", *managed.args(*SMALL)).code == 0
    window = [*over([flag for flag in SMALL if flag != "--allow-cached"], "--run-time", "4s"), "--allow-cached"]
    done = dbio("run", *managed.args(*window, "-t", "2", "--rate", "200", "--rate-schedule", "uniform",
                                     "--latency-limit", "0.001ms", "--label", "rate-kept"))
    assert done.code == 0, done.text
    doc = load_result(result_dir(done))
    totals, hists, rate = doc["totals"], doc["histograms"], doc["figures"]["rate"]
    statements = totals["selects"] + totals["updates"] + totals["scans"]
    # over the span they were scheduled in (with those due in the warm-up, started in the window by a loop behind)
    assert statements - totals["due_before_window"] == pytest.approx(200 * rate["seconds"], rel=0.01)
    assert rate["seconds"] == pytest.approx(4.0, abs=0.01)
    assert doc["figures"]["window_seconds"] == pytest.approx(4.0, abs=0.5)
    assert sum(hists["intended"]["counts"]) == sum(hists["lag"]["counts"]) == statements
    assert hists["intended"]["sum_us"] == pytest.approx(hists["lag"]["sum_us"] + hists["select"]["sum_us"], rel=0.01)
    assert rate["held"] is True and rate["asked_per_s"] == 200 and totals["late"] == statements
    done = dbio("run", *managed.args(*window, "-t", "1", "--rate", "90000", "--label", "rate-over"))
    assert done.code == 0, done.text
    directory = result_dir(done)
    rate = load_result(directory)["figures"]["rate"]
    assert rate["held"] is False and rate["achieved_per_s"] < 0.5 * 90000
    assert rate["lag_last_us"] > rate["lag_first_us"]
    warnings = [ln for ln in (directory / "report.txt").read_text().splitlines() if ln.startswith("WARNING:")]
    assert warnings[0].startswith("WARNING: rate not held: asked 90,000 statements/s"), warnings


def test_single_reads_are_timed_by_innodb_beside_the_run(managed):
    """The read probe on the managed MariaDB: 32 MiB of rows against an 8 MiB buffer pool read with O_DIRECT, so
    lookups read pages, and those that read exactly one give InnoDB's own time for that read."""
    assert dbio("setup", *managed.args(*SMALL)).code == 0
    done = dbio("run", *managed.args(*SMALL, "-t", "3", "--label", "probe"))
    assert done.code == 0, done.text
    doc = load_result(result_dir(done))
    probe = doc["read_probe"]["node1"]
    assert probe["lookups"] > 10 and probe["errors"] == 0 and "why" not in probe, probe
    assert probe["lookups"] == probe["single"] + probe["cached"] + probe["multi"] + probe["untimed"]
    single = doc["figures"]["latency"]["single_reads"]
    assert single["count"] == probe["single"] > 0, single
    assert 0 < single["p50_us"] <= single["p99_us"] <= single["max_us"]
    assert "Single read latency" in (result_dir(done) / "report.txt").read_text()


def test_sessions_performance_schema_leaves_out_are_listed_as_not_measured_not_given_as_cpu_or_0_us(managed):
    """setup_actors that instrument no user (a server's administrator may keep performance_schema's
    cost off sessions): the data files' instrument and consumers are on, but no session's read is
    timed nor its waits seen."""
    assert dbio("setup", *managed.args(*SMALL)).code == 0
    managed.query("UPDATE performance_schema.setup_actors SET ENABLED = 'NO'", None)
    try:
        done = dbio("run", *managed.args(*SMALL, "-t", "2", "--label", "actors-off"))
    finally:
        managed.query("UPDATE performance_schema.setup_actors SET ENABLED = 'YES'", None)
    assert done.code == 0, done.text
    doc = load_result(result_dir(done))
    caps = doc["capabilities"]
    assert not caps["times_data_io"] and not caps["can_see_waits"]
    missing = {m["figure"]: m["why"] for m in caps["missing"]}
    assert "setup_actors" in missing["physical read and write latency"]
    assert "setup_actors" in missing["wait events of the sessions"]
    report = (result_dir(done) / "report.txt").read_text()
    assert "Physical read (all processes)     0 us" not in report
    assert "\n  CPU  " not in report  # samples of untimed sessions are not CPU


def _dbio_sessions(managed) -> list[tuple]:
    return [row for row in managed.query("SELECT ID, USER, COMMAND, INFO FROM information_schema.PROCESSLIST "
                                         "WHERE ID <> CONNECTION_ID() AND COMMAND <> 'Daemon'", None)
            if row[1] not in ("system user", "event_scheduler")]


def _measuring(managed, label: str) -> Path:
    """The directory of the run labelled label, once two samples of its measured window are written."""
    def found() -> Path | None:
        for directory in managed.results.glob(f"*-{label}") if managed.results.exists() else []:
            samples = directory / "samples.jsonl"
            if samples.exists() and samples.read_text().count('"phase":"measured"') >= 2:
                return directory
        return None
    return wait_for(found, what="the run's measured window")


def _long_run_measuring(managed, label: str):
    """A 2-session, 60 s run started in the background on the loaded instance, once its window is measuring."""
    assert dbio("setup", *managed.args(*SMALL)).code == 0
    proc = subprocess.Popen([sys.executable, "-m", "dbio", "run", *managed.args(*SMALL[:-2], "-t", "2", "--run-time",
                                                                                "60s", "--label", label)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "COLUMNS": "200"})
    return proc, _measuring(managed, label)


def test_sigint_mid_run_ends_within_seconds_keeps_a_marked_result_and_no_sessions(managed):
    proc, directory = _long_run_measuring(managed, "sigint")
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert time.monotonic() - sent < 10, "the run must end within seconds"
    assert proc.returncode == 130, out + err
    doc = load_result(directory)
    assert doc["status"] == "interrupted" and "SIGINT" in doc["status_reason"]
    assert "INTERRUPTED" in (directory / "report.txt").read_text()
    time.sleep(0.5)  # the server ends a session when its client's socket closes
    assert _dbio_sessions(managed) == []


def test_sigterm_while_sessions_connect_is_an_interrupt_not_a_failure(managed):
    """SIGTERM as soon as the sessions begin to connect: the ones already at the start barrier end
    without an error, and the run is interrupted (exit 143), not failed with "unknown error"."""
    assert dbio("setup", *managed.args(*SMALL)).code == 0
    proc = subprocess.Popen([sys.executable, "-m", "dbio", "run", *managed.args(*SMALL[:-2], "-t", "16", "--run-time",
                                                                                "60s", "--label", "early")],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "COLUMNS": "200"})
    for line in proc.stdout:
        if "connecting 16 sessions" in line:
            proc.send_signal(signal.SIGTERM)
            break
    out = proc.communicate(timeout=30)[0]
    assert proc.returncode == 143, out
    assert "failed" not in out and "unknown error" not in out
    time.sleep(0.5)
    assert _dbio_sessions(managed) == []


def test_a_session_killed_in_the_window_leaves_its_cpu_and_the_other_sessions_share_absent(managed):
    """KILL CONNECTION of a session inside the window: the sessions' CPU per read is absent (the thread cache keeps
    the killed session's thread for another client), and so is other sessions' share of the reads: the run's own
    reads are summed over its sessions' threads, and the killed one's went with its thread, which read as another
    client's ("other sessions did 94.2% of the client sessions' reads in the window")."""
    proc, directory = _long_run_measuring(managed, "killed")
    # a session's statement, not the read probe's (ANALYZE of a lookup in dbio_cf1 too, whose loss ends nothing)
    session = next(row[0] for row in _dbio_sessions(managed) if not (row[3] or "").lstrip().upper().startswith(
        "ANALYZE") and ("dbio_slice" in (row[3] or "") or "dbio_cf1" in (row[3] or "")))
    managed.query(f"KILL CONNECTION {int(session)}", None)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, out + err
    doc = load_result(directory)
    assert doc["status"] == "failed" and "failed" in [s["state"] for s in doc["sessions"]], doc["sessions"]
    figures = doc["figures"]
    assert figures["load_profile"]["physical_reads_per_s"] > 0 and figures["cpu"]["reads_per_host_cpu_second"]
    assert figures["cpu"]["db_cpu_us_per_read"] is None and figures["cpu"]["cpu_wait_us_per_read"] is None
    assert (figures["other_sessions"] or {}).get("read_share_pct") is None, figures["other_sessions"]
    assert "other sessions did" not in (directory / "report.txt").read_text()


def test_teardown_spares_a_users_own_tables(managed):
    assert dbio("setup", *managed.args(*SMALL)).code == 0
    managed.query("CREATE TABLE orders (id INT PRIMARY KEY)")
    managed.query("CREATE TABLE dbio_mine (id INT PRIMARY KEY) COMMENT 'dbio: looks like it'")
    done = dbio("teardown", "--yes", *managed.here())
    assert done.code == 0, done.text
    assert "dropped table dbio_cf1_1" in done.out and "dropped table dbio_setup" in done.out
    assert "left in place: table dbio_mine (not created by dbio" in done.text
    names = {r[0] for r in managed.query("SELECT TABLE_NAME FROM information_schema.TABLES "
                                         "WHERE TABLE_SCHEMA = 'dbio'")}
    assert names == {"orders", "dbio_mine"}
    managed.query("DROP TABLE orders, dbio_mine")


def test_an_account_that_may_not_create_procedures_or_read_performance_schema(managed):
    """A user's own account (a password from MYSQL_PWD) on a database it owns: without CREATE ROUTINE,
    setup is refused before it creates anything (the loop's procedure used to fail after the whole
    load); with it, and without SELECT on performance_schema, the run measures and lists what it cannot."""
    socket = managed.data_dir / "socket" / "mysqld.sock"
    common = ["--engine", "mysql", "--dsn", f"mysql://dbio_low@localhost/low?unix_socket={socket}",
              "--results-dir", str(managed.results), *SMALL]
    env = {"MYSQL_PWD": "Lx7-pass"}
    managed.query("CREATE DATABASE low", None)
    managed.query("CREATE USER dbio_low@localhost IDENTIFIED BY 'Lx7-pass'", None)
    try:
        managed.query("GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, ALTER, INDEX ON low.* TO dbio_low@localhost",
                      None)
        done = dbio("setup", *common, env=env)
        assert done.code == 2 and len(done.err.strip().splitlines()) == 1, done.text
        assert "lacks CREATE ROUTINE on database low" in done.err and "GRANT " in done.err
        assert managed.query("SHOW TABLES", "low") == []
        managed.query("GRANT CREATE ROUTINE ON low.* TO dbio_low@localhost", None)
        assert dbio("setup", *common, env=env).code == 0
        done = dbio("run", *common, "-t", "2", "--label", "no-pfs", env=env)
        assert done.code == 0, done.text
        missing = {m["figure"]: m["why"] for m in load_result(result_dir(done))["capabilities"]["missing"]}
        assert "may not read performance_schema" in missing["physical read and write latency"]
        # without PROCESS the processlist shows only its own sessions: another user's work could not be told
        assert "lacks the PROCESS privilege" in missing["other users' sessions on the server"]
        assert "Lx7-pass" not in done.text + (result_dir(done) / "result.json").read_text()
    finally:
        managed.query("DROP USER dbio_low@localhost", None)
        managed.query("DROP DATABASE low", None)


def _tables(managed) -> set[tuple]:
    return set(managed.query("SELECT TABLE_SCHEMA, TABLE_NAME, CREATE_TIME FROM information_schema.TABLES "
                             "WHERE TABLE_SCHEMA NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys')"))


def test_a_replica_or_a_read_only_server_is_refused_before_anything_is_written(managed):
    """A replica set up but not started (its source unreachable), then the server set read_only: both refused
    at once, with what the server is, and nothing created."""
    before = _tables(managed)
    managed.query("CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = 9, MASTER_USER = 'nobody'", None)
    try:
        done = dbio("setup", *managed.args(*SMALL))
        assert done.code == 2 and len(done.err.strip().splitlines()) == 1, done.text
        assert "is a replica of 127.0.0.1:9, and dbio would write its tables" in done.err
        assert "point --dsn at a server that takes writes (for a replica, its source" in done.err
    finally:
        managed.query("RESET SLAVE ALL", None)
    managed.query("SET GLOBAL read_only = ON", None)
    try:
        for command in (["setup", *managed.args(*SMALL)], ["run", *managed.args(*SMALL)], ["teardown",
                                                                                           *managed.here()]):
            done = dbio(*command)
            assert done.code == 2 and "is read-only (read_only = ON)" in done.err, (command, done.text)
    finally:
        managed.query("SET GLOBAL read_only = OFF", None)
    assert _tables(managed) == before


def _restart_with(managed, **changed: str) -> None:
    """The managed server restarted with its own profile and these settings changed (its start, as dbio's)."""
    from dbio.engines.mysql.instance import settings
    from dbio.engines.mysql.instance.managed import MysqlInstance
    from dbio.engines.mysql.engine_options import InstanceConfig

    instance = MysqlInstance(managed.data_dir)
    meta = instance.meta()
    wanted = {**settings.profile(InstanceConfig(data_dir=managed.data_dir, buffer_pool=8 << 20), meta.page_size,
                                 sessions=2), **changed}
    instance.stop(quiet=True)
    instance._start(wanted)


def test_a_server_on_a_thread_pool_is_still_this_host_s_and_its_sessions_cpu_is_not_measured(managed):
    """MariaDB's pool-of-threads serves sessions in turn: the processlist gives no thread of a session's own.
    The server is still found on this host (its device, the device/engine check), and DB CPU is absent
    with why, never a pool worker's CPU or a zero."""
    _restart_with(managed, thread_handling="pool-of-threads")
    try:
        assert dbio("setup", *managed.args(*SMALL)).code == 0
        dsn = f"mysql://root@localhost/dbio?unix_socket={managed.data_dir / 'socket' / 'mysqld.sock'}"
        done = dbio("run", "--engine", "mysql", "--dsn", dsn, "--results-dir", str(managed.results), *SMALL,
                    "-t", "2", "--label", "pool")
        assert done.code == 0, done.text
        doc = load_result(result_dir(done))
        caps, cpu = doc["capabilities"], doc["figures"]["cpu"]
        assert caps["local"] and not caps["has_backend_cpu"]
        assert {"figure": "DB CPU of the sessions", "why": "the server runs sessions on a pool of threads "
                "(thread_handling = pool-of-threads): no thread is one session's"} in caps["missing"]
        assert doc["figures"]["devices"] and doc["figures"]["validity"]["device_to_db_read_ratio"] is not None
        assert cpu["db_cpu_seconds"] is None and cpu["dbio_monitor_cpu_seconds"] is None
        assert all(s.get("db_cpu_cores") is None for s in doc["series"])
        assert cpu["reads_per_host_cpu_second"] > 0
    finally:
        _restart_with(managed)


_UPDATES = ["--update-pct", "50", "--redo-stress", "HEAVY", "--threads-per-schema", "2", "--run-time", "8s",
            "--warmup", "1s"]


@pytest.fixture()
def small_managed():
    """A managed instance (16 KiB pages) with 48 MiB loaded on a 460 MiB tmpfs of its own, removed at the end: its
    fresh ibdata1 (12 MiB) must grow for the undo of the first update run."""
    _binaries_or_skip()
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a small filesystem needs root")
    root = _base_dir()
    mount = root / "small"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=460m,mode=0755", "tmpfs", str(mount)], check=True)
    inst = Managed(mount, "16k")
    args = [*inst.here(), "--buffer-pool", "16MiB", "--results-dir", str(root / "results")]
    try:
        setup = dbio("setup", *args, "--scale", "48MiB", "--scan-table-size", "0", "--allow-cached")
        assert setup.code == 0, setup.text
        yield inst, mount, [*args, *_UPDATES, "--allow-cached"]
    finally:
        dbio("instance", "destroy", "--yes", *inst.here())
        subprocess.run(["umount", "-l", str(mount)], check=False)
        shutil.rmtree(root, ignore_errors=True)


def _leave_free(mount: Path, free: int) -> Path:
    """A file taking all of the filesystem's room but free bytes."""
    filler = mount / "filler"
    with filler.open("wb") as fh:
        os.posix_fallocate(fh.fileno(), 0, shutil.disk_usage(mount).free - free)
    return filler


def test_an_update_run_never_fills_the_disk_innodb_grows_its_tablespace_on(small_managed):
    """InnoDB grows its system tablespace (where MariaDB keeps undo) by innodb_autoextend_increment, 64 MiB at
    once: with a floor of 32 MiB the guard stopped a run on a small filesystem and InnoDB's next growth filled it
    ("The table is full"). The guard keeps that step free besides, and refuses a run that starts without it."""
    inst, mount, run = small_managed
    filler = _leave_free(mount, 100 << 20)  # not room for a 64 MiB growth and the 32 MiB floor and more
    refused = dbio("run", *run)
    assert refused.code == 2, refused.text
    assert "innodb_autoextend_increment lets the server grow a file by 64 MiB at once" in refused.err
    filler.unlink()
    ran = dbio("run", *run)
    assert ran.code == 0 or (ran.code == 1 and "stopped before the disk filled" in ran.text), ran.text
    log = (inst.data_dir / "log" / "error.log").read_text()
    assert "is full" not in log and "error 28" not in log, log[-2000:]
    assert shutil.disk_usage(mount).free > 32 << 20


def test_a_run_started_with_the_least_room_allowed_is_cancelled_at_once_and_keeps_its_floor(small_managed):
    """A fresh instance's first update run, started with the least room the start check allowed, grew ibdata1 by
    64 MiB, the guard stopped it with 65 MiB left, and ibdata1 grew 64 MiB again while the statements were being
    cancelled (1 MiB left, or "preallocating ... for file ./ibdata1 failed with error 28"). The floor keeps that
    second growth free, and the guard cancels the statements at once: in the warm-up nothing was cancelled until
    the sessions had ended their slices, 1.0-1.1 s after the stop."""
    from dbio.run import disk_guard

    inst, mount, run = small_managed
    _leave_free(mount, disk_guard.floor_of(64 << 20) + disk_guard.START_MARGIN + (2 << 20))
    faster = [*run[:-len(_UPDATES) - 1], *over(_UPDATES, "--update-pct", "100", "--threads-per-schema", "8"),
              "--allow-cached"]
    ran = dbio("run", *faster)  # undo as fast as this host makes it
    assert ran.code == 0 or (ran.code == 1 and "stopped before the disk filled" in ran.text), ran.text
    log = (inst.data_dir / "log" / "error.log").read_text()
    assert "is full" not in log and "error 28" not in log, log[-2000:]
    assert shutil.disk_usage(mount).free >= disk_guard.FLOOR, f"{shutil.disk_usage(mount).free >> 20} MiB left"


def test_a_read_only_run_after_updates_settles_purge_and_dirty_pages_first(managed):
    """An update run leaves undo to purge and dirty pages; the read-only run after it had them written
    inside its window. dbio settles first (and says what it did), and the run writes under 1% of its reads."""
    assert dbio("setup", *managed.args(*SMALL)).code == 0
    # a buffer pool that holds the updates' pages (at 8 MiB the page cleaners keep up by themselves)
    roomy = managed.here("--buffer-pool", "16MiB", "--results-dir", str(managed.results), *SMALL[:-2], "-t", "2")
    updates = dbio("run", *roomy, "--update-pct", "50", "--run-time", "3s")
    assert updates.code == 0, updates.text
    reads = dbio("run", *roomy, "--update-pct", "0", "--run-time", "3s")
    assert reads.code == 0, reads.text
    doc = load_result(result_dir(reads))
    settled = [e for e in doc["events"] if e["kind"] == "settled"]
    assert len(settled) == 1 and settled[0]["flushed"], doc["events"]
    assert "FLUSH TABLES ... FOR EXPORT wrote out dbio's tables' dirty pages" in reads.text
    io, load = doc["figures"]["io_profile"], doc["figures"]["load_profile"]
    written = io["data_write_mib_per_s"] + (load["wal_bytes_per_s"] or 0) / 2**20
    assert written < 0.01 * io["data_read_mib_per_s"], io


def test_a_node_s_sessions_share_one_schedule_so_a_free_session_serves_the_next_arrival(managed):
    """As PostgreSQL's (test_rate.py): the two sessions on schema 2 wait 1.5 s on a table lock inside the window
    while the two on schema 1 serve the one schedule; with one schedule per session, the held sessions' shares
    queued behind them and p95 from the intended start was about a second."""
    assert dbio("setup", *managed.args(*SMALL, "--schemas", "2", "--reload")).code == 0
    errors: list = []

    def hold() -> None:
        try:
            conn = managed.connect()
            try:
                cur = conn.cursor()
                deadline = time.monotonic() + 120
                while True:
                    # a session in its loop shows the loop's current statement, not its CALL
                    cur.execute("SELECT count(*) FROM information_schema.processlist "
                                "WHERE command = 'Query' AND id <> CONNECTION_ID() AND db = DATABASE()")
                    if cur.fetchone()[0] >= 4:
                        break
                    assert time.monotonic() < deadline, "the sessions never started"
                    time.sleep(0.05)
                time.sleep(2)
                cur.execute("LOCK TABLES dbio_cf1_2 READ")  # its UPDATEs wait, its reads do not
                time.sleep(1.5)
                cur.execute("UNLOCK TABLES")
            finally:
                conn.close()
        except Exception as e:  # noqa: BLE001 - the test's thread: its failure is the test's
            errors.append(e)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        window = [*over([flag for flag in SMALL if flag != "--allow-cached"], "--run-time", "5s"), "--allow-cached"]
        done = dbio("run", *managed.args(*window, "--schemas", "2", "-t", "2", "--update-pct", "100",
                                         "--rate", "60", "--rate-schedule", "uniform", "--label", "rate-shared"))
    finally:
        holder.join()
    assert not errors, errors
    assert done.code == 0, done.text
    assert_shared_schedule_served(load_result(result_dir(done)), 60)
