"""Crash recovery, a superuser whose default schema would be dbio's, and teardown that spares what is not dbio's."""

import os
import signal

import psycopg

from tests.integration.conftest import SMALL, dbio, wait_for


def _refuses_connections(conninfo: str) -> bool:
    return psycopg.pq.PGconn.ping(conninfo.encode()) == psycopg.pq.Ping.REJECT


def test_a_command_after_a_killed_backend_waits_for_crash_recovery(instance):
    db = "recovery"
    assert dbio("setup", *instance.args(db, *SMALL)).code == 0
    stalled, victim = instance.connect(db), instance.connect(db)
    stalled_pid = stalled.info.backend_pid
    # A stopped backend cannot exit: the postmaster waits for it (5 s, then SIGKILL) before it
    # recovers, which keeps the server refusing connections long enough for dbio to start.
    os.kill(stalled_pid, signal.SIGSTOP)
    try:
        os.kill(victim.info.backend_pid, signal.SIGKILL)
        wait_for(lambda: _refuses_connections(instance.conninfo(db)), timeout=5, what="crash recovery to begin")
        done = dbio("setup", *instance.args(db, *SMALL), "--verify")
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
