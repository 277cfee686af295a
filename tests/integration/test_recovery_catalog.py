"""Crash recovery, a superuser whose default schema would be dbio's, and teardown that spares what is not dbio's."""

import os
import signal

import psycopg
import pytest

from tests.integration.conftest import BRIEF, SMALL, dbio, over, wait_for


def _refuses_connections(conninfo: str) -> bool:
    return psycopg.pq.PGconn.ping(conninfo.encode()) == psycopg.pq.Ping.REJECT


@pytest.mark.parametrize("through", ["embedded", "dsn"])
def test_a_command_after_a_killed_backend_waits_for_crash_recovery(instance, through):
    db = f"recovery_{through}"
    instance.create_database(db)
    args = instance.args(db, *SMALL) if through == "embedded" else \
        ["--dsn", instance.conninfo(db), "--results-dir", str(instance.results), *SMALL]
    assert dbio("setup", *args).code == 0
    stalled, victim = instance.connect(db), instance.connect(db)
    stalled_pid = stalled.info.backend_pid
    # A stopped backend cannot exit: the postmaster waits for it (5 s, then SIGKILL) before it
    # recovers, which keeps the server refusing connections long enough for dbio to start.
    os.kill(stalled_pid, signal.SIGSTOP)
    try:
        os.kill(victim.info.backend_pid, signal.SIGKILL)
        wait_for(lambda: _refuses_connections(instance.conninfo(db)), timeout=5, what="crash recovery to begin")
        done = dbio("setup", *args, "--verify")
    finally:
        try:
            os.kill(stalled_pid, signal.SIGCONT)
        except ProcessLookupError:
            pass
        stalled.close()
        victim.close()
    assert done.code == 0, done.text
    assert "the server is recovering from a crash; waiting up to 300 s" in done.out
    assert "verified: all" in done.out


def _extension_schema(conn, name):
    row = conn.execute("SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = %s",
                       (name,)).fetchone()
    return None if row is None else row[0]


def test_an_extension_the_superuser_creates_stays_out_of_dbios_schema(instance):
    db = "amcheck"
    assert dbio("setup", *instance.args(db, *SMALL)).code == 0
    with instance.connect(db) as conn:
        conn.execute("CREATE EXTENSION amcheck")  # no schema named: the superuser's default one
        assert _extension_schema(conn, "amcheck") == "public"
    reload = dbio("setup", *instance.args(db, *over(SMALL, "--scale", "40MiB")), "--reload")
    assert reload.code == 0, reload.text
    down = dbio("teardown", "--yes", *instance.server_args(db))
    assert down.code == 0, down.text
    assert "dropped schema dbio" in down.out and "left in place" not in down.err
    again = dbio("setup", *instance.args(db, *SMALL))
    assert again.code == 0, again.text
    with instance.connect(db) as conn:
        assert _extension_schema(conn, "amcheck") == "public"
        conn.execute("SELECT public.bt_index_check('dbio_1.cf1_custid')")


def test_a_users_objects_in_dbios_schemas_are_named_and_left_alone(instance):
    """A role named dbio on a server reached with --dsn creates what it names without a schema in
    dbio's schema dbio; a user may also leave a table with a comment that looks like dbio's."""
    db = "guests"
    instance.create_database(db)
    with instance.connect() as conn:  # as on a server dbio does not own: the role's default search_path
        pinned = conn.execute("SELECT rolconfig FROM pg_roles WHERE rolname = 'dbio'").fetchone()[0]
        conn.execute("ALTER ROLE dbio RESET search_path")
    try:
        _guests(instance, db)
    finally:
        if pinned:
            with instance.connect() as conn:
                conn.execute("ALTER ROLE dbio SET search_path = public")


def _guests(instance, db):
    common = ["--dsn", instance.conninfo(db), "--results-dir", str(instance.results), *SMALL]
    first = dbio("setup", *common)
    assert first.code == 0, first.text
    assert "role dbio has dbio's schema dbio as its default schema" in first.err
    with instance.connect(db) as conn:
        conn.execute("CREATE EXTENSION amcheck")
        assert _extension_schema(conn, "amcheck") == "dbio"
        conn.execute("CREATE TABLE dbio_1.scratch (x int)")
        conn.execute("COMMENT ON TABLE dbio_1.scratch IS "
                     "'dbio: created by dbio for my tests; dbio teardown removes it'")
    reload = dbio("setup", *over(common, "--scale", "40MiB"), "--reload")
    assert reload.code == 0, reload.text
    with instance.connect(db) as conn:
        conn.execute("CREATE INDEX users_c2 ON dbio_1.cf1 (c2)")
        conn.execute("CREATE STATISTICS users_st ON custid, c2 FROM dbio_1.cf1")  # lands in schema dbio
    down = dbio("teardown", "--yes", "--dsn", instance.conninfo(db))
    assert down.code == 0, down.text
    assert "dropped table dbio_1.cf1" in down.out and "dropped table dbio.pool" in down.out
    assert "dropped index dbio_1.users_c2 (not created by dbio), with table dbio_1.cf1" in down.err
    assert "dropped statistics object dbio.users_st (not created by dbio), with table dbio_1.cf1" in down.err
    # dbio's own constraints and column defaults are dbio's: nothing else is named as not created by dbio
    assert down.err.count("(not created by dbio), with table") == 2, down.err
    assert "left in place: schema dbio_1 (it holds objects dbio did not create: table dbio_1.scratch)" in down.err
    assert "left in place: schema dbio with an empty setup record (it holds objects dbio did not create: " \
           "extension amcheck;" in down.err
    with instance.connect(db) as conn:
        assert conn.execute("SELECT to_regclass('dbio_1.scratch') IS NOT NULL").fetchone()[0]
        assert _extension_schema(conn, "amcheck") == "dbio"
        conn.execute("DROP TABLE dbio_1.scratch")
    again = dbio("setup", *common, "--verify")  # the schemas teardown kept are dbio's again
    assert again.code == 0 and "verified: all" in again.out, again.text
    last = dbio("teardown", "--yes", "--dsn", instance.conninfo(db))
    assert last.code == 0 and "dropped schema dbio_1" in last.out, last.text
    with instance.connect(db) as conn:
        assert _extension_schema(conn, "amcheck") == "dbio"
        conn.execute("SELECT dbio.bt_index_check('pg_class_oid_index')")


def test_a_load_and_run_of_the_previous_version_are_torn_down(instance):
    """The previous version tagged its objects for their setup already, but its work loop with a fixed comment."""
    db = "previous"
    assert dbio("setup", *instance.args(db, *SMALL)).code == 0
    assert dbio("run", *instance.args(db, *over(SMALL, *BRIEF), "--label", "previous")).code == 0
    with instance.connect(db) as conn:
        signature = conn.execute("SELECT 'dbio.slice'::regproc::regprocedure::text").fetchone()[0]
        conn.execute(f"COMMENT ON PROCEDURE {signature} IS "
                     "'dbio: the work loop (created by dbio; dbio teardown removes it)'")
    down = dbio("teardown", "--yes", *instance.server_args(db))
    assert down.code == 0, down.text
    assert "dropped procedure dbio.slice" in down.out and "dropped schema dbio" in down.out
    assert "left in place" not in down.err
