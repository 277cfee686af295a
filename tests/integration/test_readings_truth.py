"""What a server answers during a real run on the embedded PostgreSQL, and what the result then says
(issue 26, items 9 and 10): a connection that has no name yet, and statistics reset inside the window."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

from tests.integration.conftest import SMALL, dbio, load_result, wait_for


def start(instance, db, *extra):
    args = [sys.executable, "-m", "dbio", "run", *instance.args(db, *SMALL, *extra)]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "COLUMNS": "200"})


def measuring(results: Path, label: str):
    def check():
        for d in results.glob(f"*{label}"):
            samples = d / "samples.jsonl"
            if samples.exists() and samples.read_text().count('"phase":"measured"') >= 1:
                return d
        return None
    return check


def finish(proc, timeout=60.0):
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out + err


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
    proc = start(instance, loaded_db, "--warmup", "0", "--run-time", "4s", "--label", "unnamed")
    directory = wait_for(measuring(instance.results, "unnamed"), what="the measured window")
    conn = authenticating(instance, roles["password"])
    try:
        code, text = finish(proc)
    finally:
        conn.close()
    assert code == 0, text
    assert "internal error" not in text
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
    proc = start(instance, loaded_db, "--warmup", "0", "--run-time", "4s", "--label", "reset")
    directory = wait_for(measuring(instance.results, "reset"), what="the measured window")
    with instance.connect(loaded_db) as conn:
        conn.execute("SELECT pg_stat_reset()")
        conn.execute("SELECT pg_stat_reset_shared('io')")
    code, text = finish(proc)
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
    assert again.code == 0 and "invalid: the engine's counters went back inside the window" in again.out, again.text
