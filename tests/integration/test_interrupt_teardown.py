"""Interrupts, a dying session, teardown that spares what is not dbio's, and an existing server via --dsn."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from tests.integration.conftest import (BRIEF, SMALL, dbio, dbio_backends, load_result, over, result_dir,
                                       wait_for, within_seconds)


def start_run(instance, db, label, *extra):
    args = [sys.executable, "-m", "dbio", "run", *instance.args(db, *over(SMALL, "--run-time", "60s"), "--label", label,
                                                                *extra)]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "COLUMNS": "200"})


def wait_for_window(instance, label, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        dirs = [p for p in instance.results.iterdir() if p.name.endswith(label)] if instance.results.exists() else []
        if dirs and (dirs[0] / "samples.jsonl").exists() and (dirs[0] / "samples.jsonl").read_text().count(
                '"phase":"measured"') >= 2:
            return dirs[0]
        time.sleep(0.2)
    raise AssertionError("the run never reached its measured window")


@pytest.mark.parametrize("sig, name, code", [(signal.SIGINT, "SIGINT", 130), (signal.SIGTERM, "SIGTERM", 143)])
def test_signal_stops_every_session_and_keeps_the_result(instance, loaded_db, sig, name, code):
    launched = time.monotonic()
    proc = start_run(instance, loaded_db, f"sig{name}", "-t", "3")
    directory = wait_for_window(instance, f"sig{name}")
    sent = time.monotonic()
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=30)
    seconds, reached = time.monotonic() - sent, sent - launched
    assert within_seconds(seconds, reached, 10), f"the run must end within seconds: {seconds:.1f} s"
    assert proc.returncode == code, out + err
    doc = load_result(directory)
    assert doc["status"] == "interrupted" and name in doc["status_reason"]
    assert doc["figures"]["window_seconds"] > 0 and doc["figures"]["load_profile"]["physical_reads_per_s"] > 0
    assert any(e["kind"] == "interrupt" for e in doc["events"])
    assert "INTERRUPTED" in (directory / "report.txt").read_text()
    assert dbio_backends(instance) == []


def test_a_session_that_dies_ends_the_run_and_is_reported(instance, loaded_db):
    proc = start_run(instance, loaded_db, "victim", "-t", "2")
    directory = wait_for_window(instance, "victim")
    with instance.connect() as conn:
        killed = conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                              "WHERE application_name LIKE 'dbio:%:2'").fetchall()
    assert killed == [(True,)]
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 1, out + err
    doc = load_result(directory)
    assert doc["status"] == "failed" and "session 2" in doc["status_reason"]
    assert [s["state"] for s in doc["sessions"]].count("failed") == 1
    assert "session 2" in err
    assert dbio_backends(instance) == []


def test_teardown_drops_only_what_dbio_created(instance):
    db = "shared"
    dbio("setup", *instance.args(db, *SMALL))
    with instance.connect(db) as conn:
        conn.execute("CREATE TABLE public.customer_orders (id int)")
        conn.execute("INSERT INTO public.customer_orders VALUES (42)")
        conn.execute("CREATE SCHEMA dbio_99")  # looks like dbio's, is not
        conn.execute("CREATE TABLE dbio_99.cf1 (x int)")
        conn.execute("CREATE TABLE dbio_1.notes (x int)")  # someone else's table inside dbio's schema
        conn.execute("DROP ROLE IF EXISTS app_reader")
        conn.execute("CREATE ROLE app_reader")
    # a loaded data set is dropped only once confirmed, as dbio instance destroy asks: no terminal, no --yes
    kept = dbio("teardown", *instance.server_args(db))
    assert kept.code == 2 and len(kept.err.strip().splitlines()) == 1, kept.text
    assert kept.err.startswith("dbio: not confirmed: the data set in PostgreSQL") and kept.err.endswith(
        " stays; answer y at the prompt, or pass --yes (scripts must)\n"), kept.err
    with instance.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM dbio_1.cf1").fetchone()[0] > 0
    done = dbio("teardown", "--yes", *instance.server_args(db))
    assert done.code == 0, done.text
    assert "dropped table dbio_1.cf1" in done.out and "dropped table dbio.run_control" in done.out
    assert "left in place: schema dbio_1 (it holds objects dbio did not create: table dbio_1.notes)" in done.err
    assert "left in place: schema dbio with an empty setup record (schema dbio_1 stays;" in done.err
    assert "left in place: schema dbio_99 (not created by dbio" in done.err
    with instance.connect(db) as conn:
        assert conn.execute("SELECT id FROM public.customer_orders").fetchall() == [(42,)]
        assert conn.execute("SELECT to_regclass('dbio_99.cf1') IS NOT NULL").fetchone()[0]
        assert conn.execute("SELECT to_regclass('dbio_1.notes') IS NOT NULL").fetchone()[0]
        assert conn.execute("SELECT to_regclass('dbio_1.cf1')").fetchone()[0] is None
        assert conn.execute("SELECT count(*) FROM dbio.setup").fetchone()[0] == 0  # kept so that dbio_1 stays dbio's
        assert conn.execute("SELECT count(*) FROM pg_roles WHERE rolname = 'app_reader'").fetchone()[0] == 1
        conn.execute("DROP ROLE app_reader")
    second = dbio("setup", *instance.args(db, *SMALL))  # dbio's own schemas, kept for its guest, are reused
    assert second.code == 0, second.text
    with instance.connect(db) as conn:
        assert conn.execute("SELECT to_regclass('dbio_1.notes') IS NOT NULL").fetchone()[0]


def test_a_tablespace_that_only_looks_like_dbios_is_never_dropped(instance):
    """A tablespace is the whole server's: one with dbio's name and mark that no load in the database torn
    down made (the user's own, or another database's load) stays, whatever database is torn down."""
    import pwd

    place = instance.root / "lookalike-place" / "dbio-tablespace"
    place.mkdir(parents=True)
    if os.geteuid() == 0:  # the server's own directory, as dbio makes one
        server = pwd.getpwnam(instance.meta["server_user"])
        os.chown(place, server.pw_uid, server.pw_gid)
    instance.create_database("lookalike")
    with instance.connect() as conn:
        conn.execute(f"CREATE TABLESPACE dbio_ts_9 LOCATION '{place}'")
        conn.execute("COMMENT ON TABLESPACE dbio_ts_9 IS 'dbio tablespace'")
    try:
        done = dbio("teardown", "--yes", *instance.server_args("lookalike"))
        assert done.code == 0, done.text
        assert f"left in place: tablespace dbio_ts_9 at {place} (not made by this database's load" in done.err
        with instance.connect() as conn:
            assert conn.execute("SELECT count(*) FROM pg_tablespace WHERE spcname = 'dbio_ts_9'").fetchone()[0] == 1
    finally:
        with instance.connect() as conn:
            conn.execute("DROP TABLESPACE IF EXISTS dbio_ts_9")


def test_a_name_dbio_uses_but_does_not_own_is_refused(instance):
    db = "foreign"
    instance.create_database(db)
    with instance.connect(db) as conn:
        conn.execute("CREATE SCHEMA IF NOT EXISTS dbio")
        conn.execute("CREATE TABLE IF NOT EXISTS dbio.setup (their_data text)")
    done = dbio("setup", *instance.args(db, *SMALL))
    assert done.code == 2 and "schema named 'dbio' that dbio did not create" in done.err
    with instance.connect(db) as conn:
        assert conn.execute("SELECT to_regclass('dbio.setup') IS NOT NULL").fetchone()[0]


def test_existing_server_through_dsn(instance):
    db = "existing"
    instance.create_database(db)
    dsn = instance.conninfo(db)
    common = ["--dsn", dsn, "--results-dir", str(instance.results), *SMALL]
    done = dbio("setup", *common)
    assert done.code == 0, done.text
    run = dbio("run", *over(common, *BRIEF), "--label", "dsn")
    assert run.code == 0, run.text
    doc = load_result(result_dir(run))
    assert doc["config"]["connection"]["embedded"] is False
    assert doc["capabilities"]["local"] is True and doc["capabilities"]["has_io_view"] is True
    assert doc["figures"]["load_profile"]["physical_reads_per_s"] > 0
    bad = dbio("run", "--dsn", f"host={instance.data_dir / 'socket'} port=1 dbname=x", *SMALL)
    assert bad.code == 2 and "cannot connect" in bad.err and len(bad.err.strip().splitlines()) == 1


PG15_SOCKET = Path("/var/run/postgresql")
OLD_SERVER_DB = f"dbio_test_oldserver_{os.getpid()}"  # never shared by two test runs on one machine


@pytest.mark.skipif(not (PG15_SOCKET / ".s.PGSQL.5432").exists(), reason="no local PostgreSQL service on port 5432")
def test_server_without_pg_stat_io_reports_what_is_missing(instance):
    admin = f"host={PG15_SOCKET} port=5432 user=postgres dbname=postgres"
    try:
        with psycopg.connect(admin, autocommit=True) as conn:
            version = int(conn.execute("SHOW server_version_num").fetchone()[0])
            conn.execute(f"DROP DATABASE IF EXISTS {OLD_SERVER_DB}")
            conn.execute(f"CREATE DATABASE {OLD_SERVER_DB}")
    except psycopg.OperationalError as exc:
        pytest.skip(f"local PostgreSQL not usable: {exc}")
    if version >= 160000:
        pytest.skip("the local server has pg_stat_io")
    try:
        place = ["--dsn", admin.replace("dbname=postgres", f"dbname={OLD_SERVER_DB}"),
                 "--results-dir", str(instance.results)]
        assert dbio("setup", *place, *SMALL, "--allow-cached").code == 0
        run = dbio("run", *place, *over(SMALL, *BRIEF), "--allow-cached", "--label", "pg15")
        assert run.code == 0, run.text
        doc = load_result(result_dir(run))
        missing = {m["figure"] for m in doc["capabilities"]["missing"]}
        assert "I/O by backend type (pg_stat_io)" in missing
        assert doc["figures"]["io_profile"]["by_backend"] is None
        assert doc["figures"]["load_profile"]["logical_reads_per_s"] > 0
        assert "not measured: I/O by backend type (pg_stat_io)" in (result_dir(run) / "report.txt").read_text()
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {OLD_SERVER_DB} WITH (FORCE)")


def test_ctrl_c_during_load_keeps_finished_tables_and_resumes(instance):
    db = "loadstop"
    instance.create_database(db)
    args = instance.args(db, "--scale", "96MiB", "--scan-table-size", "8MiB", "--schemas", "4",
                         "--load-parallel-degree", "1")
    # one table at a time; the second one stops before it is created, however fast the storage is
    marker = instance.root / "loadstop.marker"
    proc = subprocess.Popen([sys.executable, "-m", "dbio", "setup", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "COLUMNS": "200", "DBIO_FAULT": "load.create",
                                 "DBIO_FAULT_AFTER": "1", "DBIO_FAULT_MARKER": str(marker)})
    wait_for(marker.exists, what="the load to reach its second table")
    with instance.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM dbio.setup_tables").fetchone()[0] == 1
    assert proc.poll() is None, "the load finished before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, out + err
    assert "load interrupted" in err and "tables are complete and kept" in err and "dbio setup again" in err
    assert dbio_backends(instance) == []
    with instance.connect(db) as conn:
        status, kept = conn.execute("SELECT (SELECT status FROM dbio.setup), count(*) "
                                    "FROM dbio.setup_tables").fetchone()
    assert status == "loading" and kept == 1
    resumed = dbio("setup", *args, "--verify")
    assert resumed.code == 0, resumed.text
    assert "resuming the interrupted load" in resumed.out and "verified: all" in resumed.out
