"""InnoDB's counters: one reading of the server's global status (and of performance_schema's file
I/O summaries where the server keeps them), and its translation to dbio's terms.

snapshot() returns the raw values (recorded as they are in the result); normalize() is a pure
function from one raw snapshot to the engine-neutral counters (engines/counters.py). Global status
counts server-wide and untimed; performance_schema adds the wait time of data-file and redo-file
I/O and which threads waited (client sessions, dbio's own). InnoDB does not count checkpoints;
what it cannot tell is None or absent (the probe's Capabilities.missing says why).
"""

from __future__ import annotations

from typing import Any

from dbio.engines.counters import session_names
from dbio.engines.mysql import pfs, sqlfiles, wsrep
from dbio.engines.mysql.connection import Connection

STATUS = ("Innodb_data_reads", "Innodb_data_read", "Innodb_data_writes", "Innodb_data_written", "Innodb_data_fsyncs",
          "Innodb_buffer_pool_reads", "Innodb_buffer_pool_read_requests", "Innodb_buffer_pool_read_ahead",
          "Innodb_buffer_pool_read_ahead_rnd", "Innodb_buffer_pool_write_requests", "Innodb_buffer_pool_pages_flushed",
          "Innodb_buffer_pool_wait_free", "Innodb_pages_read", "Innodb_pages_written", "Innodb_pages_created",
          "Innodb_log_writes", "Innodb_log_write_requests", "Innodb_log_waits", "Innodb_os_log_written",
          "Innodb_os_log_fsyncs", "Innodb_lsn_current", "Innodb_dblwr_pages_written", "Innodb_dblwr_writes",
          "Innodb_page_size", "Handler_commit", "Handler_rollback", "Handler_update", "Handler_read_key",
          "Handler_read_next", "Handler_read_rnd_next", "Rows_read", "Innodb_rows_read", "Innodb_rows_updated",
          "Com_commit", "Uptime") + wsrep.STATUS


def read(conn: Connection, own_ids: set[int], file_io: bool = False) -> dict[str, Any]:
    """One reading: the server clock, global status, the other sessions at work (a gauge), and with
    file_io performance_schema's file I/O summaries."""
    marks = ", ".join(["%s"] * len(STATUS))
    t = float(conn.one_row("SELECT UNIX_TIMESTAMP(SYSDATE(6))")[0])
    status = dict(conn.query(f"SHOW GLOBAL STATUS WHERE Variable_name IN ({marks})", STATUS))
    others = [(c[0], c[1]) for c in working(processlist(conn), own_ids | {conn.thread_id})]
    out = {"t": t, "status": {k.lower(): _number(v) for k, v in status.items()},
           "others": {"active": len(others), "names": session_names([u for _, u in others])}}
    if file_io:
        out["pfs"] = pfs.read(conn, own_ids)
    return out


def _number(value: Any) -> float | str:
    try:
        return float(value)
    except (TypeError, ValueError):
        return str(value)


def _get(status: dict[str, Any], name: str) -> float | None:
    value = status.get(name.lower())
    return float(value) if isinstance(value, (int, float)) else None


def _num(status: dict[str, Any], name: str) -> float:
    return _get(status, name) or 0.0


def normalize(raw: dict[str, Any]) -> dict[str, Any]:
    """Engine-neutral cumulative counters from one raw snapshot (pure)."""
    s = raw["status"]
    page = _get(s, "Innodb_page_size") or 16384.0
    misses = _num(s, "Innodb_buffer_pool_reads")  # single-page reads a session waited for
    ahead = _num(s, "Innodb_buffer_pool_read_ahead") + _num(s, "Innodb_buffer_pool_read_ahead_rnd")
    hits = max(_num(s, "Innodb_buffer_pool_read_requests") - misses, 0.0)
    files = _pfs(raw, "files") or {}
    data_file, log_file = files.get("innodb_data_file"), files.get("innodb_log_file")
    data = _io(reads=_num(s, "Innodb_data_reads"), read_bytes=_num(s, "Innodb_data_read"),
               writes=_get(s, "Innodb_data_writes"), write_bytes=_get(s, "Innodb_data_written"), hits=hits,
               fsyncs=_get(s, "Innodb_data_fsyncs"))
    if data_file:
        data.update(read_time_ms=pfs.ms(data_file["sum_timer_read"]),
                    write_time_ms=pfs.ms(data_file["sum_timer_write"]))
    out: dict[str, Any] = {"t": float(raw["t"]), "data": data, "client": _client(raw, misses, ahead, page, hits),
                           "client_normal": _io(reads=misses, read_bytes=misses * page, writes=None, write_bytes=None,
                                                hits=hits, fsyncs=None),
                           "by_backend": _by_backend(s, page), "wal": _wal(s, log_file),
                           "db": _db(s, misses + ahead, hits),
                           "writers": {"pages_flushed": _num(s, "Innodb_buffer_pool_pages_flushed"),
                                       "doublewrite_pages": _num(s, "Innodb_dblwr_pages_written"),
                                       "wait_free": _num(s, "Innodb_buffer_pool_wait_free")}}
    own = _pfs(raw, "own_waits")
    if own:  # the run's own connections' data-file waits: what other client sessions did is the rest
        out["sessions"] = {"reads": own["count"], "read_bytes": own["count"] * page}
    others = raw.get("others")
    if isinstance(others, dict):
        out["gauges"] = {"other_sessions_active": float(others.get("active") or 0),
                         "other_session_names": session_names(others.get("names"))}
    writesets = wsrep.writesets(s)
    if writesets is not None:
        out["writesets"], gauges = writesets
        out.setdefault("gauges", {}).update(gauges)
    return out


def _by_backend(s: dict[str, Any], page: float) -> dict[str, dict[str, float]]:
    """The one kind of InnoDB thread its status counts apart: the page cleaners, which write every
    flushed page (and its doublewrite copy, in batches), never read. Their writes inside a window are
    InnoDB's flushing, the maintenance work a verdict names."""
    flushed, doublewrite = _num(s, "Innodb_buffer_pool_pages_flushed"), _num(s, "Innodb_dblwr_pages_written")
    return {"page cleaner": {"reads": 0.0, "read_bytes": 0.0, "writes": flushed + _num(s, "Innodb_dblwr_writes"),
                             "write_bytes": (flushed + doublewrite) * page}}


def _pfs(raw: dict[str, Any], key: str) -> dict[str, Any] | None:
    section = raw.get("pfs")
    value = section.get(key) if isinstance(section, dict) else None
    return value if isinstance(value, dict) else None


def _client(raw: dict[str, Any], misses: float, ahead: float, page: float, hits: float) -> dict[str, Any]:
    """The client sessions' data-file I/O. With performance_schema, their own data-file waits, counted
    and timed per thread (a session's buffer-pool miss is a synchronous read it waits for; page
    writes are the page cleaners'); without, the buffer pool's misses and the read-ahead they caused."""
    waits = _pfs(raw, "client_waits")
    if waits:
        out = _io(reads=waits["count"], read_bytes=waits["count"] * page, writes=None, write_bytes=None, hits=hits,
                  fsyncs=None)
        out["read_time_ms"] = pfs.ms(waits["timer"])
        return out
    return _io(reads=misses + ahead, read_bytes=(misses + ahead) * page, writes=None, write_bytes=None, hits=hits,
               fsyncs=None)


def _wal(s: dict[str, Any], log_file: dict[str, float] | None) -> dict[str, Any]:
    lsn = _get(s, "Innodb_lsn_current")
    syncs = _get(s, "Innodb_os_log_fsyncs")
    # The redo files stay open: what performance_schema counts as neither read nor write on them
    # is their fsyncs, timed (only where the status counts the syncs to divide by).
    sync_ms = pfs.ms(log_file["sum_timer_misc"]) if log_file and syncs is not None else None
    return {"bytes": lsn if lsn is not None else _num(s, "Innodb_os_log_written"), "records": None, "fpi": None,
            "buffers_full": _get(s, "Innodb_log_waits"), "writes": _get(s, "Innodb_log_writes"),
            "write_bytes": _get(s, "Innodb_os_log_written"),
            "write_time_ms": pfs.ms(log_file["sum_timer_write"]) if log_file else None,
            "syncs": syncs, "sync_time_ms": sync_ms}


def _db(s: dict[str, Any], blocks_read: float, hits: float) -> dict[str, Any]:
    rows_read = _get(s, "Innodb_rows_read")
    return {"commits": _num(s, "Handler_commit"), "rollbacks": _num(s, "Handler_rollback"), "blks_read": blocks_read,
            "blks_hit": hits, "tup_returned": rows_read if rows_read is not None else _num(s, "Rows_read"),
            "tup_updated": _get(s, "Innodb_rows_updated") or _num(s, "Handler_update")}


def _io(*, reads: float, read_bytes: float, writes: float | None, write_bytes: float | None, hits: float,
        fsyncs: float | None) -> dict[str, Any]:
    return {"reads": reads, "read_bytes": read_bytes, "read_time_ms": None, "writes": writes,
            "write_bytes": write_bytes, "write_time_ms": None, "extends": None, "extend_bytes": None, "hits": hits,
            "evictions": None, "reuses": None, "fsyncs": fsyncs, "fsync_time_ms": None, "writebacks": None}


IDLE_COMMANDS = ("Sleep", "Daemon", "Binlog Dump", "Killed")  # a connection in one of these is not at work


Process = tuple[int, str, str, str, str]  # a connection of the server: id, user, command, state, statement


def processlist(conn: Connection, *, full: bool = False) -> list[Process]:
    """Every connection of the server (processlist.sql; full: with whole statements, not their first 100
    characters). SHOW PROCESSLIST's columns: Id, User, Host, db, Command, Time, State, Info (and MariaDB's Progress)."""
    rows = conn.query(sqlfiles.statement("processlist_full.sql" if full else "processlist.sql"))
    return [(int(r[0]), str(r[1]), str(r[4]), r[6] or "", r[7] or "") for r in rows]


def working(connections: list[Process], leave_out: set[int]) -> list[Process]:
    """The connections at work (pure): not idle, not the server's own threads, none of leave_out (dbio's own)."""
    return [c for c in connections
            if c[2] not in IDLE_COMMANDS and c[1] != "system user" and c[0] not in leave_out]


def state_rows(connections: list[Process], waits: list[tuple], ids: list[int]) -> list[tuple]:
    """session_labels' rows (pure): each of ids' connections (id, command, state) with each of its wait events
    (session_waits.sql's rows: id, event, operation, still waiting, event id), or none (a row of Nones)."""
    wanted = set(ids)
    events: dict[int, list[tuple]] = {}
    for row in waits:
        events.setdefault(int(row[0]), []).append(tuple(row[1:5]))
    return [(i, command, state, *event) for i, _, command, state, _ in connections if i in wanted
            for event in events.get(i) or [(None, None, None, None)]]


def session_labels(rows: list[tuple], ids: list[int], *, waits_seen: bool) -> list[str]:
    """One label per session id, from state_rows() (the processlist with or without its waits), pure: a
    session has a row per wait event of its current nest; the innermost one still waiting names it."""
    found: dict[int, tuple] = {}
    for row in sorted(rows, key=lambda r: r[6] or 0):  # by EVENT_ID: a nested event comes after its parent
        if int(row[0]) not in found or row[5]:
            found[int(row[0])] = tuple(row[1:6])
    return [session_state(*found.get(i, (None,) * 5), waits_seen=waits_seen) for i in ids]


def session_state(command: str | None, state: str | None, event: str | None = None, operation: str | None = None,
                  waiting: Any = None, *, waits_seen: bool = False) -> str:
    """One label per sample of a session (pure), in the form of PostgreSQL's: CPU, Class:Event, or
    what dbio itself is doing. waits_seen: performance_schema gave the session's current wait event
    (event, operation, waiting: the event has not ended); otherwise only the processlist's state."""
    if command is None:
        return "Unknown"
    if command == "Sleep":
        return "Client:between slices"
    text = (state or "").strip()
    lowered = text.lower()
    if "user lock" in lowered:
        return "Lock:barrier"
    if "user sleep" in lowered:
        return "Timeout:think time"
    if waits_seen:
        label = wait_label(event, operation) if waiting else None
        return label or "CPU"
    return f"Active:{text}" if text else "Active"


def wait_label(event: str | None, operation: str | None) -> str | None:
    """Class:Event of a performance_schema wait event (pure); None for events that are not waits
    (table I/O is a handler call, timed around the work it does, file I/O nested in it)."""
    if not event:
        return None
    parts = event.split("/")
    name = parts[-1]
    if event.startswith("wait/io/file/"):
        return f"IO:{name} {operation}" if operation else f"IO:{name}"
    if event.startswith("wait/io/table/"):
        return None
    if event.startswith("wait/io/socket/"):
        return "Client:socket"
    if event.startswith("wait/synch/"):
        return f"Synch:{name}"
    if event.startswith("wait/lock/"):
        return f"Lock:{parts[2] if len(parts) > 2 else name}"
    return f"Other:{name}"
