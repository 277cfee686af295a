"""Parts of one run on MariaDB: three `dbio run --part i/3` processes against one managed MariaDB
instance (the machine's mariadbd, performance_schema on, reached through --dsn as three hosts would
reach one server) at one --start-at. The server admits the three and refuses an unrelated run
meanwhile; each part counts its own sessions' data-file reads (performance_schema, per thread), and
`dbio merge` adds them and takes the server's counters once: the two agree, and agree with the
server's own Innodb_data_reads read by this test over the agreed window. Skipped with the reason when
the machine has no MariaDB/MySQL server binaries (Debian package mariadb-server)."""

from __future__ import annotations

import os
import shutil
import threading
import time
from datetime import datetime, timezone

import pytest

from tests import forked_dbio
from tests.integration.conftest import (_base_dir, assert_other_runs_refused, dbio, finished_parts, kill_left,
                                       launch_margin, load_result, wait_for)
from tests.integration.test_mysql_instance import Managed, _binaries_or_skip

pymysql = pytest.importorskip("pymysql")

PARTS = 3
WARMUP, SECONDS = 1.0, 6
RUN = ["--scale", "32MiB", "--scan-table-size", "0", "--allow-cached", "-t", "1", "--warmup", f"{WARMUP:g}s",
       "--run-time", f"{SECONDS}s"]
STATUS = ("Innodb_data_reads", "Innodb_buffer_pool_reads")


@pytest.fixture(scope="module")
def managed():
    _binaries_or_skip()
    root = _base_dir()
    inst = Managed(root, "parts")
    try:
        done = dbio("instance", "init", *inst.here("--buffer-pool", "8MiB"))
        assert done.code == 0, done.text
        done = dbio("setup", *inst.args(*RUN))
        assert done.code == 0, done.text
        yield inst
    finally:
        dbio("instance", "destroy", "--yes", *inst.here())
        shutil.rmtree(root, ignore_errors=True)
    assert not inst.data_dir.exists()


def _dsn(inst: Managed) -> str:
    return f"mysql://root@localhost/dbio?unix_socket={inst.data_dir / 'socket' / 'mysqld.sock'}&auth=socket"


def _args(inst: Managed, stamp: str, *extra: str) -> list[str]:
    return ["run", "--engine", "mysql", "--dsn", _dsn(inst), "--results-dir", str(inst.results), *RUN,
            "--start-at", stamp, *extra]


def _status(inst: Managed) -> tuple[float, dict[str, float]]:
    rows = inst.query("SHOW GLOBAL STATUS WHERE Variable_name IN ('" + "', '".join(STATUS) + "')")
    return time.time(), {name: float(value) for name, value in rows}


def _watch(inst: Managed, opens: float, closes: float, out: dict) -> None:
    """The server's own counters at the agreed window's opening and once its sessions have stopped."""
    time.sleep(max(0.0, opens - time.time()))
    out["begin"] = _status(inst)
    time.sleep(max(0.0, closes - time.time()))
    out["end"] = _status(inst)


def _parts_holding(inst: Managed) -> int:
    from dbio.engines.mysql import exclusive

    names = [f"{exclusive.slot_prefix('dbio')}{i}" for i in range(1, PARTS + 1)]
    row = inst.query("SELECT " + ", ".join(f"IS_USED_LOCK('{n}') IS NOT NULL" for n in names))[0]
    return sum(int(v) for v in row)


def test_three_parts_share_one_server_and_merge_counting_each_read_once(managed, tmp_path):
    window_at = time.time() + WARMUP + 10 + launch_margin(lambda stamp: _args(managed, stamp))
    stamp = datetime.fromtimestamp(window_at, timezone.utc).isoformat()
    later = datetime.fromtimestamp(window_at + 60, timezone.utc).isoformat()  # a start no part has
    watched: dict = {}
    watcher = threading.Thread(target=_watch, args=(managed, window_at, window_at + SECONDS + 1.5, watched))
    watcher.start()
    procs = [forked_dbio.start(_args(managed, stamp, "--part", f"{i}/{PARTS}", "--label", f"p{i}"),
                               env={**os.environ, "COLUMNS": "200"}) for i in range(1, PARTS + 1)]
    try:
        # all three hold the database: this run's part 2 a second time is refused meanwhile (first: it names
        # their start, so it must ask before they connect), and so are an unrelated run (by the managed
        # instance's lock, which the parts share) and another run's part, both naming a later start
        wait_for(lambda: _parts_holding(managed) == PARTS, timeout=60, what="three parts holding the database")
        assert_other_runs_refused(lambda *given: _args(managed, *given), stamp, later, PARTS)
        docs, dirs = finished_parts(procs)
    finally:
        kill_left(procs)
        watcher.join()
    assert [d["status"] for d in docs] == ["complete"] * PARTS
    assert [d["part"]["index"] for d in docs] == [1, 2, 3] and len({d["part"]["run"] for d in docs}) == 1
    identities = {n["server"]["identity"] for d in docs for n in d["nodes"]}
    assert len(identities) == 1 and None not in identities
    uid, started = identities.pop().split(":")[:2]
    assert uid != "?" and abs(int(started) - (time.time() - _uptime(managed))) <= 2

    out = tmp_path / "merged"
    merged = dbio("merge", *map(str, dirs), "--out", str(out))
    assert merged.code == 0, merged.text
    doc = load_result(out)
    ends = [d["nodes"][0]["normalized"] for d in docs]
    first, last = max(ends, key=lambda n: n["begin"]["t"]), max(ends, key=lambda n: n["end"]["t"])
    server_reads = last["end"]["data"]["reads"] - first["begin"]["data"]["reads"]  # Innodb_data_reads, once
    own_reads = sum(n["end"]["sessions"]["reads"] - n["begin"]["sessions"]["reads"] for n in ends)
    assert server_reads > 100 * PARTS
    assert own_reads == pytest.approx(server_reads, rel=0.02)
    [counted] = doc["counting"]
    assert counted["compared"] == "counts" and counted["agree"] is True, counted
    interval = last["end"]["t"] - first["begin"]["t"]
    assert counted["own_reads_per_s"] * interval == pytest.approx(own_reads, rel=1e-6), counted
    # the server's own counters, read by this test at the agreed window's opening and after its end: the
    # sessions stop at the deadline, so only the opening reading's lateness (a busy host) can move them: the
    # reads of those late seconds are the sessions' but not in this count (0.5 s late: 3.7% at a load of 4)
    (read_at, begin), (_, end) = watched["begin"], watched["end"]
    missed = own_reads / SECONDS * max(0.0, read_at - window_at)
    for name in STATUS:
        counted = end[name] - begin[name]
        assert counted / 1.02 <= own_reads <= (counted + missed) * 1.02, (name, own_reads, missed, begin, end)
    assert 0 <= doc["timeline"]["start_skew_seconds"] < 1.0
    assert doc["parts"]["missing"] == [] and doc["parts"]["incomplete"] == []
    assert "they agree" in merged.out


def _uptime(inst: Managed) -> float:
    return float(inst.query("SHOW GLOBAL STATUS LIKE 'Uptime'")[0][1])


def test_the_database_admits_one_runs_parts_and_refuses_everything_else(managed):
    """The named locks themselves, as parts on several hosts take them (no instance lock in between)."""
    from dbio.engines.mysql import dsn as dsns
    from dbio.engines.mysql.exclusive import exclusive
    from dbio.errors import UsageError
    from dbio.parts import Part

    text = _dsn(managed)
    dsn = dsns.parse(text)

    def refused(part: Part | None) -> str:
        with pytest.raises(UsageError) as caught:
            with exclusive(text, dsn, "run", part):
                pass
        return caught.value.message

    with exclusive(text, dsn, "run", Part(1, 3, "r1")), exclusive(text, dsn, "run", Part(3, 3, "r1")):
        assert "is in use by dbio run part 1 of a run in 2 running part(s)" in refused(None)
        assert "in use by another run's parts: dbio run part 1" in refused(Part(2, 3, "r2"))
        assert "in use by another run's parts" in refused(Part(2, 2, "r1"))  # the same id, another part count
        assert "part 3/3 of run r1 already runs" in refused(Part(3, 3, "r1"))
        with exclusive(text, dsn, "run", Part(2, 3, "r1")):
            pass
    with exclusive(text, dsn, "setup"):
        assert "is in use by another dbio command" in refused(Part(1, 3, "r1"))
        assert "is in use by another dbio command" in refused(None)
    with exclusive(text, dsn, "run", Part(2, 3, "r2")):  # all let go: another run may come
        pass


def test_the_loop_is_left_alone_when_current_and_installed_again_when_not(managed):
    """Parts starting at once each install the loop: a current one is left as it is (dropping it would
    fail another part's sessions' CALLs), another one is replaced."""
    from dbio.engines.mysql import catalog, workload
    from dbio.engines.mysql.connection import connect

    conn = connect(_dsn(managed), application_name="test")
    try:
        def created() -> dict:
            return dict(conn.query("SELECT ROUTINE_NAME, CREATED FROM information_schema.ROUTINES "
                                   "WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_NAME LIKE 'dbio\\_slice%'"))

        workload.install(conn)
        before = created()
        time.sleep(1.1)  # CREATED counts whole seconds
        workload.install(conn)
        assert created() == before  # current: untouched
        name = catalog.procedure(1)
        tag, = conn.one("SELECT ROUTINE_COMMENT FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE() "
                        "AND ROUTINE_NAME = %s", (name,))
        conn.execute(f"DROP PROCEDURE {name}")
        conn.execute(f"CREATE PROCEDURE {name}() COMMENT {catalog.literal(conn, tag)} BEGIN SELECT 1; END")
        time.sleep(1.1)
        workload.install(conn)
        after = created()
        assert after[name] != before[name] and len(after) == len(before)
        body, = conn.one("SELECT ROUTINE_DEFINITION FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = "
                         "DATABASE() AND ROUTINE_NAME = %s", (name,))
        assert "SELECT 1" not in body and "dbio_cf1_1" in body
    finally:
        conn.close()
