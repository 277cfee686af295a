"""The mysql engine against the MariaDB (or MySQL) server this machine runs as a service: setup
with verify, runs at update pct 0 and 20, cancel, teardown that spares a user's own tables.

They use the server's default socket as root without a password (MYSQL_PWD or ~/.my.cnf when it
has one), in a database of their own (dbio_test_<pid>: two test runs on one machine never share it), created
here and dropped after; they skip
with the reason when no such server answers."""

import os
import threading
import time

import pytest

from tests.integration.conftest import dbio, load_result, result_dir

pymysql = pytest.importorskip("pymysql")

DATABASE = f"dbio_test_{os.getpid()}"
DSN = f"mysql://root@localhost/{DATABASE}"
SMALL = ["--scale", "32MiB", "--scan-table-size", "8MiB", "--allow-cached", "--warmup", "1s", "--run-time", "2s"]


def _server():
    from dbio.engines.mysql import dsn

    try:
        return pymysql.connect(unix_socket=dsn.socket_path(dsn.parse(DSN)), user="root", password=dsn.password() or "",
                               autocommit=True, connect_timeout=5)
    except pymysql.err.MySQLError as exc:
        pytest.skip(f"no MySQL/MariaDB server answers on the default socket as root: {exc.args[-1]}")


@pytest.fixture(scope="module")
def server():
    """The test database, made for these tests and dropped after (nothing else of the server is touched)."""
    conn = _server()
    with conn.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS {DATABASE}")
        cur.execute(f"CREATE DATABASE {DATABASE}")
    yield conn
    with conn.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS {DATABASE}")
    conn.close()


def args(tmp_path, *extra):
    return ["--engine", "mysql", "--dsn", DSN, "--results-dir", str(tmp_path / "results"), *SMALL, *extra]


def tables(server) -> set[str]:
    with server.cursor() as cur:
        cur.execute("SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s", (DATABASE,))
        return {r[0] for r in cur.fetchall()}


def test_setup_verifies_one_row_per_page_and_scattered_keys(server, tmp_path):
    done = dbio("setup", *args(tmp_path), "--verify")
    assert done.code == 0, done.text
    assert "verified: all 10 checks passed" in done.out
    with server.cursor() as cur:  # the service's page size: 16 KiB unless its configuration says otherwise
        cur.execute("SELECT @@innodb_page_size")
        page = int(cur.fetchone()[0])
        cur.execute(f"SELECT table_name, `rows`, rows_per_page, page_size FROM {DATABASE}.dbio_setup_tables "
                    "ORDER BY table_name")
        recorded = cur.fetchall()
    kib = page // 1024
    assert f"ok   dbio_cf1_1 1 row per {kib} KiB page: 4096 rows in" in done.out  # rows = leaf pages, proved
    assert f"ok   dbio_cf2 1 row per {kib} KiB page: 1024 rows in" in done.out
    assert recorded == (("dbio_cf1_1", 4096, 1, page), ("dbio_cf2", 1024, 1, page))
    assert "ok   dbio_cf1_1 keys scattered" in done.out
    again = dbio("setup", *args(tmp_path))
    assert again.code == 0 and "already loaded" in again.out
    assert {"dbio_setup", "dbio_cf1_1", "dbio_cf2"} <= tables(server)


@pytest.mark.parametrize("update_pct", [0, 20])
def test_a_short_run(server, tmp_path, update_pct):
    assert dbio("setup", *args(tmp_path)).code == 0
    done = dbio("run", *args(tmp_path, "-t", "2", "--update-pct", str(update_pct), "--label", f"u{update_pct}"))
    assert done.code == 0, done.text
    doc = load_result(result_dir(done))
    assert doc["status"] == "complete"
    assert [s["state"] for s in doc["sessions"]] == ["done", "done"]
    totals = doc["totals"]
    assert totals["rows"] == (totals["selects"] + totals["updates"]) * 8  # every range holds work_unit rows
    statements = totals["selects"] + totals["updates"]
    assert statements > 100
    assert abs(totals["updates"] - statements * update_pct / 100) <= 2 * 2  # exact per 100, per session
    caps = doc["capabilities"]
    assert caps["engine"] == "mysql" and caps["cache_name"] == "innodb_buffer_pool_size"
    assert caps["settings_shown"][0] == "innodb_buffer_pool_size"
    assert any(m["figure"] == "checkpoints" for m in caps["missing"])
    assert doc["plans"]["select"]["nodes"] == ["range on custid"]
    # the read probe ran beside the sessions, its lookups timed by InnoDB (ANALYZE FORMAT=JSON); the service's
    # buffer pool holds the load, so single reads are there only when it had evicted a page (else why)
    probe = doc["read_probe"]["node1"]
    assert probe["lookups"] > 0 and probe["errors"] == 0 and "why" not in probe, probe
    single = doc["figures"]["latency"]["single_reads"]
    assert single.get("count") == (probe["single"] or None) and "pages_read_time_ms" in single["method"]
    from dbio.engines import counters

    for when in ("begin", "end"):
        assert counters.problems(doc["normalized"][when]) == []
    f = doc["figures"]
    assert f["latency"]["statements"]["select"]["count"] == totals["selects"]
    if update_pct:  # the loop's string histogram counts every statement of its kind, as the counters do
        assert f["latency"]["statements"]["update"]["count"] == totals["updates"]
    _each_latency_sits_in_its_bucket(doc["histograms"])
    if update_pct:
        assert doc["normalized"]["end"]["wal"]["bytes"] > doc["normalized"]["begin"]["wal"]["bytes"]
    assert "password" not in (result_dir(done) / "result.json").read_text().lower()


def test_a_hot_spot_s_selects_are_timed_apart(server, tmp_path):
    """Every 3rd statement to the hot spot, a fifth of them UPDATEs: the hot spot's SELECTs are their own kind,
    counted in the SELECTs, their rows apart; its UPDATEs stay UPDATEs. (The service's buffer pool holds this
    small load whole: latencies are not compared here, the embedded PostgreSQL's test does.)"""
    assert dbio("setup", *args(tmp_path)).code == 0
    done = dbio("run", *args(tmp_path, "-t", "2", "--update-pct", "20", "--label", "hot", "--hotspot",
                             "--hotspot-size", "1MiB", "--hotspot-offset", "4MiB", "--hotspot-frequency", "3"))
    assert done.code == 0, done.text
    directory = result_dir(done)
    doc = load_result(directory)
    totals, statements = doc["totals"], doc["figures"]["latency"]["statements"]
    assert statements["hot"]["count"] + statements["select"]["count"] == totals["selects"]
    assert statements["update"]["count"] == totals["updates"]
    assert abs(statements["hot"]["count"] / totals["selects"] - 1 / 3) < 0.05
    assert totals["hot_rows"] == 8 * statements["hot"]["count"]
    assert totals["rows"] == (totals["selects"] + totals["updates"]) * 8
    _each_latency_sits_in_its_bucket(doc["histograms"])
    parts = doc["figures"]["hotspot"]
    assert parts["hot"]["mean_us"] == statements["hot"]["mean_us"]
    assert parts["cold"]["rows"] == totals["rows"] - totals["hot_rows"]
    assert "Hot spot: " in (directory / "report.txt").read_text()


def _each_latency_sits_in_its_bucket(hists):
    """The buckets' edges bound the loop's own sum of latencies: a latency counted in a wrong bucket
    (the loop finds buckets by arithmetic, histmap.py) would push the sum outside them."""
    bounds = hists["bounds_us"]
    assert sum(hists["select"]["counts"]) > 0
    for kind in ("select", "update", "hot"):
        h = hists.get(kind)
        if not h or not sum(h["counts"]):
            continue
        lows = [0.0, *bounds]
        highs = [*bounds, h["max_us"]]
        low = sum(c * lows[i] for i, c in enumerate(h["counts"]))
        high = sum(c * min(highs[i], h["max_us"]) for i, c in enumerate(h["counts"]))
        assert low <= h["sum_us"] * (1 + 1e-9) and h["sum_us"] <= high * (1 + 1e-9), kind


def test_kill_query_cancels_a_statement(server):
    from dbio.engines.mysql.engine import MysqlEngine

    engine = MysqlEngine()
    conn = engine.connect(DSN, application_name="dbio:test")
    errors = []

    def sleep():
        try:
            conn.query("SELECT SLEEP(30)")
        except Exception as exc:
            errors.append(exc)

    thread = threading.Thread(target=sleep)
    began = time.monotonic()
    thread.start()
    time.sleep(0.5)
    engine.cancel(conn)
    thread.join(10)
    assert time.monotonic() - began < 10
    assert not errors or engine.is_cancelled(errors[0])  # MariaDB ends a killed SLEEP quietly
    assert conn.one("SELECT 1") == (1,)  # KILL QUERY ends the statement, not the session
    engine.close(conn)


def test_a_session_s_server_thread_is_read_as_itself_at_the_window_s_end(server):
    """dbio reads each session's server thread (/proc/<server>/task/<tid>) at the window's ends: the same thread
    is read at both, with its start time kept from the first; another thread of the server found where the
    first was (as when Linux gives an ended thread's id to a new one) is refused, its figure absent."""
    from pathlib import Path

    from dbio.collect import procfs
    from dbio.engines.mysql.engine import MysqlEngine

    engine = MysqlEngine()
    first = engine.connect(DSN, application_name="dbio:test")
    try:
        if first.os_tid is None or not procfs.read_pid_cpu([first.os_tid]):
            pytest.skip("the server's threads are not this host's, or a thread pool serves its sessions")
        tid = first.os_tid
        tasks: dict = {}
        begin = procfs.read_pid_cpu([tid], tasks)
        task = tasks[tid]
        server_pid = next(line.split()[1] for line in Path(f"/proc/{tid}/status").read_text().splitlines()
                          if line.startswith("Tgid:"))
        assert task.stat == Path(f"/proc/{server_pid}/task/{tid}/stat")
        first.query("SELECT BENCHMARK(2000000, MD5('dbio'))")  # CPU in its own thread, inside the window
        end = procfs.read_pid_cpu([tid], tasks)
        assert end[tid] >= begin[tid] and tid in procfs.read_pid_run_delay([tid], tasks)
        # another of the server's threads, started at another clock tick (a second session's may be a cached
        # thread begun in the same tick as this one's: seen in CI), where this session's was
        def started(path: Path) -> int | None:
            try:
                return procfs.parse_start_time(path.read_text())
            except OSError:  # a thread that ended since the listing
                return None

        others = [path for path in Path(f"/proc/{server_pid}/task").glob("*/stat")
                  if path.parent.name != str(tid) and started(path) not in (None, task.started)]
        assert others, "every thread of the server started in the same clock tick as this session's"
        taken = {tid: procfs.Task(others[0], task.started)}
        assert procfs.read_pid_cpu([tid], taken) == {} and procfs.read_pid_run_delay([tid], taken) == {}
    finally:
        engine.close(first)


def test_teardown_spares_a_users_own_tables(server, tmp_path):
    assert dbio("setup", *args(tmp_path)).code == 0
    with server.cursor() as cur:
        cur.execute(f"CREATE TABLE {DATABASE}.orders (id INT PRIMARY KEY)")
        cur.execute(f"CREATE TABLE {DATABASE}.dbio_mine (id INT PRIMARY KEY) COMMENT 'dbio: looks like it'")
        # a user's copies of dbio's table carry its comment, dbio's tag with it: they are still the user's
        cur.execute(f"CREATE TABLE {DATABASE}.dbio_keep LIKE {DATABASE}.dbio_cf1_1")
        cur.execute(f"CREATE TABLE {DATABASE}.dbio_cf1_1_old LIKE {DATABASE}.dbio_cf1_1")
    done = dbio("teardown", "--yes", "--engine", "mysql", "--dsn", DSN)
    assert done.code == 0, done.text
    assert "dropped table dbio_cf1_1" in done.out and "dropped table dbio_setup" in done.out
    assert "left in place: table dbio_cf1_1_old (not created by dbio" in done.text
    assert "table dbio_keep (not created by dbio" in done.text and "table dbio_mine (not created by dbio" in done.text
    assert tables(server) == {"orders", "dbio_mine", "dbio_keep", "dbio_cf1_1_old"}
    with server.cursor() as cur:
        cur.execute("SELECT COUNT(*) FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = %s", (DATABASE,))
        assert cur.fetchone()[0] == 0
        cur.execute(f"DROP TABLE {DATABASE}.orders, {DATABASE}.dbio_mine, {DATABASE}.dbio_keep, "
                    f"{DATABASE}.dbio_cf1_1_old")


def test_teardown_spares_copies_named_like_the_loads_own_and_a_users_function(server, tmp_path):
    """A copy of dbio's table under a name dbio's tables have, but not this load's (one schema: dbio_cf1_1
    only), and a function or a procedure with dbio's name and tag, are the user's: they stay, with their
    data, and the teardown finishes; a user's trigger on dbio's table goes with it, and is named."""
    assert dbio("setup", *args(tmp_path)).code == 0
    with server.cursor() as cur:
        cur.execute("SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s "
                    "AND TABLE_NAME = 'dbio_cf1_1'", (DATABASE,))
        tag = cur.fetchone()[0]
        cur.execute(f"CREATE TABLE {DATABASE}.dbio_cf1_2 LIKE {DATABASE}.dbio_cf1_1")  # the tag comes with it
        cur.execute(f"INSERT INTO {DATABASE}.dbio_cf1_2 SELECT * FROM {DATABASE}.dbio_cf1_1 LIMIT 5")
        cur.execute(f"CREATE FUNCTION {DATABASE}.dbio_slice_2() RETURNS INT COMMENT %s RETURN 1", (tag,))
        cur.execute(f"CREATE PROCEDURE {DATABASE}.dbio_slice_3() COMMENT %s BEGIN END", (tag,))
        cur.execute(f"CREATE TRIGGER {DATABASE}.audit AFTER UPDATE ON {DATABASE}.dbio_cf1_1 FOR EACH ROW SET @n = 1")
    try:
        done = dbio("teardown", "--yes", "--engine", "mysql", "--dsn", DSN)
        assert done.code == 0, done.text
        assert "dropped table dbio_cf1_1" in done.out and "dropped table dbio_setup" in done.out
        assert "left in place: table dbio_cf1_2 (not created by dbio" in done.text
        assert "left in place: procedure dbio_slice_3 (not created by dbio)" in done.text
        assert "dropped trigger audit (not created by dbio), with table dbio_cf1_1" in done.err  # said, as PostgreSQL's
        assert tables(server) == {"dbio_cf1_2"}
        with server.cursor() as cur:
            cur.execute(f"SELECT COUNT(*) FROM {DATABASE}.dbio_cf1_2")
            assert cur.fetchone()[0] == 5
            cur.execute("SELECT ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = %s "
                        "ORDER BY 1", (DATABASE,))
            assert [r[0] for r in cur.fetchall()] == ["dbio_slice_2", "dbio_slice_3"]
    finally:
        with server.cursor() as cur:
            cur.execute(f"DROP TABLE IF EXISTS {DATABASE}.dbio_cf1_2")
            cur.execute(f"DROP FUNCTION IF EXISTS {DATABASE}.dbio_slice_2")
            cur.execute(f"DROP PROCEDURE IF EXISTS {DATABASE}.dbio_slice_3")


def test_a_password_on_the_command_line_is_refused_before_connecting(tmp_path):
    done = dbio("setup", "--engine", "mysql", "--dsn", "mysql://root:s3cret@localhost/dbio_test")
    assert done.code == 2 and "s3cret" not in done.text
    assert len(done.err.strip().splitlines()) == 1 and "MYSQL_PWD" in done.err


def test_a_socket_no_server_listens_on_is_named_in_one_line(tmp_path):
    done = dbio("setup", "--engine", "mysql", "--dsn", f"mysql://root@localhost/dbio?unix_socket={tmp_path}/none.sock")
    assert done.code == 2 and len(done.err.strip().splitlines()) == 1, done.text
    assert f"socket {tmp_path}/none.sock" in done.err and "check the socket" in done.err
    assert "host and port" not in done.err


def test_a_statement_that_always_returns_a_row_and_returned_none_is_named(server):
    from dbio.engines.mysql.connection import connect
    from dbio.errors import DbioError

    conn = connect(DSN, application_name="dbio:test")
    try:
        assert conn.one_row("SELECT 1, %s", ("two",)) == (1, "two")
        with pytest.raises(DbioError, match=r"always returns one: SELECT 1 FROM DUAL WHERE 1 = 0$"):
            conn.one_row("SELECT 1\n  FROM DUAL WHERE 1 = 0")
    finally:
        conn.close()


def test_a_connection_over_the_socket_makes_no_tls_context(server):
    """No TLS over a local socket: PyMySQL's "preferred" TLS built a context with the system's certificates for each
    connection (70 ms of the client's CPU on a 2-core host; 64 sessions' connects outlasted the node's liveness)."""
    from dbio.engines.mysql.connection import connect

    conn = connect(DSN, application_name="dbio:test")
    try:
        assert conn.raw.ssl is False and conn.one("SELECT 1") == (1,)
    finally:
        conn.close()


def test_a_slices_counters_in_one_text_column_read_back_as_their_own_columns(server):
    """slice.sql writes its numbers with CONCAT_WS inside the procedure (workload.slice_result reads them): each
    DOUBLE and BIGINT local the server writes there must read back exactly as the server writes it as a column."""
    values = [1796000000.123456, 1796000000.999999, 1 / 3, 123456.78901234567, 1e-7, 0.0, 2.5e300, 4012.75]
    with server.cursor() as cur:
        cur.execute(f"USE {DATABASE}")
        cur.execute("DROP PROCEDURE IF EXISTS dbio_test_packed")
        cur.execute("CREATE PROCEDURE dbio_test_packed(IN p DOUBLE, IN n BIGINT) BEGIN DECLARE v DOUBLE; "
                    "DECLARE c BIGINT; DECLARE d DOUBLE; SET v = p, c = n; "
                    "SELECT CONCAT_WS(',', v, c, (c > 5) OR (d IS NOT NULL AND d > 0), IFNULL(d, '')), v, c; END")
        try:
            for value in values:
                cur.execute("CALL dbio_test_packed(%s, %s)", (value, 9007199254740993))
                text, column, count = cur.fetchone()
                while cur.nextset():
                    pass
                text = text.decode() if isinstance(text, bytes) else text
                v, c, flag, empty = text.split(",")
                assert float(v) == float(column) == value and int(c) == int(count) == 9007199254740993
                assert (flag, empty) == ("1", "")
        finally:
            cur.execute("DROP PROCEDURE IF EXISTS dbio_test_packed")
