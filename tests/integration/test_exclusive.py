"""One dbio command at a time changes or measures an instance, or a database (issue: trust, items 5-7)."""

import os
import subprocess
import sys
import threading
import time

import pytest

from tests.integration.conftest import BRIEF, SMALL, dbio, load_result, over, result_dir, wait_for


def _start(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "dbio", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "COLUMNS": "200"})


def _measuring(proc: subprocess.Popen, instance, db: str) -> bool:
    assert proc.poll() is None, proc.communicate()
    with instance.connect(db) as conn:
        return bool(conn.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name ~ '^dbio:[0-9]+:'")
                    .fetchone()[0])


def test_a_second_command_on_a_busy_instance_is_refused_at_once(instance, loaded_db):
    db = loaded_db
    first = _start("run", *instance.args(db, *over(SMALL, "--run-time", "30s"), "--label", "first"))
    try:
        wait_for(lambda: _measuring(first, instance, db), timeout=60, what="the first run to start")
        for command in (["run", *instance.args(db, *SMALL)], ["setup", "--reload", *instance.args(db, *SMALL)],
                        ["instance", "stop", "--data-dir", str(instance.data_dir)],
                        ["instance", "destroy", "--yes", "--data-dir", str(instance.data_dir)],
                        ["teardown", *instance.server_args(db)],
                        # through the instance's socket as an existing server: the same instance
                        ["run", "--dsn", instance.conninfo(db), "--results-dir", str(instance.results), *SMALL]):
            t0 = time.monotonic()
            done = dbio(*command)
            assert done.code == 2, (command, done.text)
            assert f"is in use by dbio run (pid {first.pid}, since " in done.err, done.err
            assert len(done.err.strip().splitlines()) == 1
            assert time.monotonic() - t0 < 10  # refused at once, not after waiting
        status = dbio("instance", "status", "--data-dir", str(instance.data_dir))
        assert status.code == 0 and "running" in status.out  # read-only commands never wait
    finally:
        first.terminate()
        first.communicate(timeout=60)
    assert instance.data_dir.exists()
    assert dbio("run", *instance.args(db, *over(SMALL, *BRIEF), "--label", "after")).code == 0  # free again


def test_a_second_run_on_one_database_of_a_server_is_refused(instance):
    """Another dbio (here in this process) holds the database's advisory lock: a run through --dsn
    is refused, naming it."""
    from dbio.engines.postgres.exclusive import exclusive as database_exclusive

    db = "busy_dsn"
    instance.create_database(db)
    dsn = instance.conninfo(db)
    common = ["--dsn", dsn, "--results-dir", str(instance.results), *SMALL]
    assert dbio("setup", *common).code == 0
    with database_exclusive(dsn, "sweep", lambda _: None):
        done = dbio("run", *common)
    assert done.code == 2, done.text
    assert f"is in use by dbio sweep pid {os.getpid()} since " in done.err, done.err
    assert len(done.err.strip().splitlines()) == 1
    assert dbio("run", *over(common, *BRIEF)).code == 0  # released with its session


def test_destroy_asks_first_and_keeps_a_directory_it_did_not_create(workdir):
    mount = workdir / "mountpoint"
    mount.mkdir(mode=0o750)
    mount.chmod(0o750)
    (mount / "lost+found").mkdir()
    args = ["--data-dir", str(mount), "--shared-buffers", "16MiB"]
    assert dbio("instance", "init", *args).code == 0
    unconfirmed = dbio("instance", "destroy", "--data-dir", str(mount))  # no terminal to ask on, no --yes
    assert unconfirmed.code == 2 and "--yes" in unconfirmed.err
    assert (mount / "pgdata").exists()
    done = dbio("instance", "destroy", "--yes", "--data-dir", str(mount))
    assert done.code == 0, done.text
    assert sorted(p.name for p in mount.iterdir()) == ["lost+found"]
    assert oct(mount.stat().st_mode & 0o7777) == oct(0o750)
    if os.geteuid() == 0:
        assert "left in place: the system user 'dbio'" in done.out and "userdel dbio" in done.out


@pytest.mark.parametrize("name", ["someone-else", "dbio:99999:1"])  # a user's session; another dbio run's
def test_another_session_reading_during_the_window_is_a_warning_with_its_share(instance, loaded_db, name):
    """Another run's sessions on the same server (another database: the lock allows it) are other work too: its
    sessions' names carry its number, which is not this run's (they were left out as dbio's before)."""
    db = loaded_db
    stop = threading.Event()

    with instance.connect(db) as conn:
        table = conn.execute("SELECT n.nspname || '.' || c.relname FROM pg_class c JOIN pg_namespace n "
                             "ON n.oid = c.relnamespace WHERE n.nspname LIKE 'dbio%' AND c.relkind = 'r' "
                             "ORDER BY c.relpages DESC LIMIT 1").fetchone()[0]
    worker = threading.Thread(target=lambda: _scan(instance, db, table, stop, name))
    worker.start()
    try:
        done = dbio("run", *instance.args(db, *SMALL, "--label", "shared-window"))
    finally:
        stop.set()
        worker.join()
    assert done.code == 0, done.text
    doc = load_result(result_dir(done))
    share = doc["figures"]["other_sessions"]["read_share_pct"]
    assert share and share > 1.0
    text = (result_dir(done) / "report.txt").read_text()
    head = text.split("Load Profile")[0]
    assert "WARNING" in head and f"other session(s) ({name}) active in" in head, head


def _scan(instance, db: str, table: str, stop: threading.Event, name: str) -> None:
    with instance.connect(db) as conn:
        conn.execute("SELECT set_config('application_name', %s, false)", (name,))
        while not stop.is_set():
            conn.execute(f"SELECT count(c2) FROM {table}")  # reads the heap, not only the index
