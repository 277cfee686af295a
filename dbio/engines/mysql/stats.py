"""InnoDB's counters: one reading of the server's global status, and its translation to dbio's terms.

snapshot() returns the raw status values (recorded as they are in the result); normalize() is
a pure function from one raw snapshot to the engine-neutral counters (engines/counters.py).
InnoDB counts server-wide: it does not split I/O by thread kind or session, nor count checkpoints;
what it cannot tell is None or absent (the probe's Capabilities.missing says why).
"""

from __future__ import annotations

from typing import Any

from dbio.engines.mysql import sqlfiles
from dbio.engines.mysql.connection import Connection

STATUS = ("Innodb_data_reads", "Innodb_data_read", "Innodb_data_writes", "Innodb_data_written", "Innodb_data_fsyncs",
          "Innodb_buffer_pool_reads", "Innodb_buffer_pool_read_requests", "Innodb_buffer_pool_read_ahead",
          "Innodb_buffer_pool_read_ahead_rnd", "Innodb_buffer_pool_write_requests", "Innodb_buffer_pool_pages_flushed",
          "Innodb_buffer_pool_wait_free", "Innodb_pages_read", "Innodb_pages_written", "Innodb_pages_created",
          "Innodb_log_writes", "Innodb_log_write_requests", "Innodb_log_waits", "Innodb_os_log_written",
          "Innodb_os_log_fsyncs", "Innodb_lsn_current", "Innodb_dblwr_pages_written", "Innodb_dblwr_writes",
          "Innodb_page_size", "Handler_commit", "Handler_rollback", "Handler_update", "Handler_read_key",
          "Handler_read_next", "Handler_read_rnd_next", "Rows_read", "Innodb_rows_read", "Innodb_rows_updated",
          "Com_commit", "Uptime")


def read(conn: Connection, own_ids: set[int]) -> dict[str, Any]:
    """One reading: the server clock, global status, and the other sessions at work (a gauge)."""
    marks = ", ".join(["%s"] * len(STATUS))
    t = float(conn.one("SELECT UNIX_TIMESTAMP(SYSDATE(6))")[0])
    status = dict(conn.query(f"SHOW GLOBAL STATUS WHERE Variable_name IN ({marks})", STATUS))
    others = [(i, user) for i, user, _ in conn.query(sqlfiles.statement("others.sql")) if int(i) not in own_ids]
    return {"t": t, "status": {k.lower(): _number(v) for k, v in status.items()},
            "others": {"active": len(others), "names": sorted({str(u) for _, u in others})}}


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
    data = _io(reads=_num(s, "Innodb_data_reads"), read_bytes=_num(s, "Innodb_data_read"),
               writes=_get(s, "Innodb_data_writes"), write_bytes=_get(s, "Innodb_data_written"), hits=hits,
               fsyncs=_get(s, "Innodb_data_fsyncs"))
    # InnoDB has no per-thread I/O: the sessions' reads are the buffer pool's misses (and read-ahead
    # their scans asked for); page writes are the page cleaners', never the sessions'.
    client = _io(reads=misses + ahead, read_bytes=(misses + ahead) * page, writes=None, write_bytes=None, hits=hits,
                 fsyncs=None)
    client_normal = _io(reads=misses, read_bytes=misses * page, writes=None, write_bytes=None, hits=hits, fsyncs=None)
    lsn = _get(s, "Innodb_lsn_current")
    wal = {"bytes": lsn if lsn is not None else _num(s, "Innodb_os_log_written"), "records": None, "fpi": None,
           "buffers_full": _get(s, "Innodb_log_waits"), "writes": _get(s, "Innodb_log_writes"),
           "write_bytes": _get(s, "Innodb_os_log_written"), "write_time_ms": None,
           "syncs": _get(s, "Innodb_os_log_fsyncs"), "sync_time_ms": None}
    rows_read = _get(s, "Innodb_rows_read")
    db = {"commits": _num(s, "Handler_commit"), "rollbacks": _num(s, "Handler_rollback"), "blks_read": misses + ahead,
          "blks_hit": hits, "tup_returned": rows_read if rows_read is not None else _num(s, "Rows_read"),
          "tup_updated": _get(s, "Innodb_rows_updated") or _num(s, "Handler_update")}
    out: dict[str, Any] = {"t": float(raw["t"]), "data": data, "client": client, "client_normal": client_normal,
                           "by_backend": None, "wal": wal, "db": db,
                           "writers": {"pages_flushed": _num(s, "Innodb_buffer_pool_pages_flushed"),
                                       "doublewrite_pages": _num(s, "Innodb_dblwr_pages_written"),
                                       "wait_free": _num(s, "Innodb_buffer_pool_wait_free")}}
    others = raw.get("others")
    if isinstance(others, dict):
        out["gauges"] = {"other_sessions_active": float(others.get("active") or 0),
                         "other_session_names": list(others.get("names") or [])}
    return out


def _io(*, reads: float, read_bytes: float, writes: float | None, write_bytes: float | None, hits: float,
        fsyncs: float | None) -> dict[str, Any]:
    return {"reads": reads, "read_bytes": read_bytes, "read_time_ms": None, "writes": writes,
            "write_bytes": write_bytes, "write_time_ms": None, "extends": None, "extend_bytes": None, "hits": hits,
            "evictions": None, "reuses": None, "fsyncs": fsyncs, "fsync_time_ms": None, "writebacks": None}


def session_state(command: str | None, state: str | None) -> str:
    """One label per sample of a session (pure), from the processlist (no wait events)."""
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
    return f"Active:{text}" if text else "Active"
