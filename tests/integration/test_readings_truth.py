"""What a server answers during a real run on the embedded PostgreSQL, and what the result then says
(issue 26, items 9 and 10): a connection that has no name yet, and statistics reset inside the window."""

from __future__ import annotations

import socket
import struct

from tests.integration.conftest import dbio, load_result, wait_for
from tests.integration.test_faults import finish, measuring, start


def authenticating(instance, user: str) -> socket.socket:
    """A connection left in authentication: its startup packet sent, the password the server asks for
    never given (pg_stat_activity shows it 'starting', with no application name nor user)."""
    conn = socket.socket(socket.AF_UNIX)
    conn.connect(str(instance.data_dir / "socket" / f".s.PGSQL.{instance.meta['port']}"))
    params = b"user\0" + user.encode() + b"\0database\0postgres\0\0"
    body = struct.pack("!I", 196608) + params
    conn.sendall(struct.pack("!I", len(body) + 4) + body)
    assert conn.recv(1)[:1] == b"R"  # an authentication request: it waits for our answer
    return conn


def test_a_client_authenticating_during_the_run_is_named_and_the_report_renders(instance, loaded_db, roles):
    proc = start(instance, "run", loaded_db, "--warmup", "0", "--run-time", "5s", "--label", "unnamed")
    directory = wait_for(measuring(instance.results, "unnamed"), what="the measured window")
    conn = authenticating(instance, roles["password"])
    try:
        code, out, err, _ = finish(proc)
    finally:
        conn.close()
    assert code == 0, out + err
    assert "internal error" not in err
    doc = load_result(directory)
    names = {n for row in doc["series"] for n in row.get("other_session_names") or []}
    assert names and all(isinstance(n, str) for n in names), names
    assert any(n.startswith("pid ") and n.endswith("(starting)") for n in names), names
    again = dbio("report", str(directory))
    assert again.code == 0 and "other session(s) (pid " in again.out, again.text


def test_statistics_reset_inside_the_window_make_the_run_not_valid(instance, loaded_db):
    """pg_stat_reset() (the database's counters) and pg_stat_reset_shared('io') (pg_stat_io) during a real
    run: the result names the counters that went back, builds no figure on them, says it is no storage
    result, and reads back in dbio's own report."""
    proc = start(instance, "run", loaded_db, "--warmup", "0", "--run-time", "5s", "--label", "reset")
    directory = wait_for(measuring(instance.results, "reset"), what="the measured window")
    with instance.connect(loaded_db) as conn:
        conn.execute("SELECT pg_stat_reset()")
        conn.execute("SELECT pg_stat_reset_shared('io')")
    code, out, err, _ = finish(proc)
    text = out + err
    assert code == 0, text  # the run ran to its end: its verdict, not its status, says what it is worth
    assert "not a storage result (INVALID): the engine's counters went back inside the window" in text
    doc = load_result(directory)
    counters = {r["counter"] for r in doc["counter_resets"]}
    assert {"data.reads", "db.blks_read"} <= counters, counters
    assert doc["figures"]["load_profile"]["physical_reads_per_s"] is None
    assert doc["figures"]["validity"]["buffer_hit_pct"] is None
    for row in doc["series"]:
        assert all(v is None or v >= 0 for k, v in row.items() if k.endswith("_per_s")), row
    again = dbio("report", str(directory))
    assert again.code == 0 and again.out.startswith("NOT VALID: the engine's counters went back inside the window"), \
        again.text
