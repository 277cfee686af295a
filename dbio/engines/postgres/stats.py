"""PostgreSQL counters: one consistent snapshot per call, and its translation to dbio's terms.

snapshot() returns the server's raw cumulative counters (recorded as they are in the result);
normalize() is a pure function from a raw snapshot to the engine-neutral counters the
figures and reports use. Which views exist depends on the version: 15 has no pg_stat_io,
16-17 count pg_stat_io in op_bytes units, 18 adds byte counters and WAL rows.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from dbio.engines.base import HELPERS
from dbio.engines.counters import session_names
from dbio.engines.postgres import sqlfiles


@cache  # asked once a second during a run
def snapshot_sql(version_num: int, sessions_prefix: str | None = None, standby: bool = False) -> str:
    """sessions_prefix: the application_name prefix of the run's sessions (their own I/O, 18+);
    standby: the server is a hot standby (its replication is read too)."""
    parts = {"database": "stats/database_18.sql" if version_num >= 180000 else "stats/database.sql",
             "wal": "stats/wal_18.sql" if version_num >= 180000 else "stats/wal_15.sql",
             "writers": "stats/writers_17.sql" if version_num >= 170000 else "stats/writers_15.sql",
             "others": "stats/others.sql"}
    if standby:
        parts["replication"] = "stats/replication.sql"
    if version_num >= 180000:
        parts["io"] = "stats/io_18.sql"
    elif version_num >= 160000:
        parts["io"] = "stats/io_16.sql"
    texts = {name: _strip(sqlfiles.text(path)) for name, path in parts.items()}
    texts["others"] = texts["others"].replace("{this_run}", this_run(sessions_prefix))
    if version_num >= 180000 and sessions_prefix is not None:
        if not re.fullmatch(r"[a-z]+:[0-9]+:", sessions_prefix):
            raise ValueError(f"unexpected session prefix {sessions_prefix!r}")
        like = "'" + sessions_prefix + "%'"
        short = sessions_prefix.split(":")[1]
        helpers = ", ".join(f"'dbio:{helper}:{short}'" for helper in HELPERS)  # helper_application_name's
        texts["sessions"] = _strip(sqlfiles.text("stats/sessions_io_18.sql")).replace(
            "{sessions_like}", like).replace("{helpers}", helpers)
    fields = ", ".join(f"'{name}', ({text})" for name, text in texts.items())
    return ("SELECT json_build_object('t', date_part('epoch', clock_timestamp()), "
            f"'version_num', current_setting('server_version_num')::int, {fields})")


def this_run(sessions_prefix: str | None) -> str:
    """The condition on pg_stat_activity's application_name of the connections the run counts as its own: every
    dbio connection without a prefix; with one, dbio's that carry no run's number (a lock holder, a settle, an
    event's) and this run's sessions and helpers, so that another run's on the same server is other work."""
    name = "coalesce(application_name, '')"
    if sessions_prefix is None:
        return f"{name} LIKE 'dbio:%'"
    if not re.fullmatch(r"[a-z]+:[0-9]+:", sessions_prefix):
        raise ValueError(f"unexpected session prefix {sessions_prefix!r}")
    short = sessions_prefix.split(":")[1]
    helpers = ", ".join(f"'dbio:{helper}:{short}'" for helper in HELPERS)  # helper_application_name's
    numbered = "'^dbio:([0-9]+:|(" + "|".join(HELPERS) + "):[0-9]+$)'"
    return (f"({name} LIKE 'dbio:%' AND {name} !~ {numbered}) OR {name} LIKE '{sessions_prefix}%' "
            f"OR {name} IN ({helpers})")


def _strip(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--")).strip()


def _num(value: Any) -> float:
    return 0.0 if value is None else float(value)


_IO_FIELDS = ("reads", "read_bytes", "read_time", "writes", "write_bytes", "write_time", "extends",
              "extend_bytes", "hits", "evictions", "reuses", "fsyncs", "fsync_time", "writebacks")


def _sum_io(rows: list[dict[str, Any]]) -> dict[str, float]:
    total = {k: 0.0 for k in _IO_FIELDS}
    for row in rows:
        for k in _IO_FIELDS:
            total[k] += _num(row.get(k))
    return {"reads": total["reads"], "read_bytes": total["read_bytes"], "read_time_ms": total["read_time"],
            "writes": total["writes"], "write_bytes": total["write_bytes"], "write_time_ms": total["write_time"],
            "extends": total["extends"], "extend_bytes": total["extend_bytes"], "hits": total["hits"],
            "evictions": total["evictions"], "reuses": total["reuses"], "fsyncs": total["fsyncs"],
            "fsync_time_ms": total["fsync_time"], "writebacks": total["writebacks"]}


def normalize(raw: dict[str, Any]) -> dict[str, Any]:
    """Engine-neutral cumulative counters from one raw snapshot (pure)."""
    db = raw.get("database") or {}
    wal = raw.get("wal") or {}
    writers = raw.get("writers") or {}
    out: dict[str, Any] = {"t": float(raw["t"])}
    out["db"] = {
        "commits": _num(db.get("xact_commit")), "rollbacks": _num(db.get("xact_rollback")),
        "blks_read": _num(db.get("blks_read")), "blks_hit": _num(db.get("blks_hit")),
        "tup_returned": _num(db.get("tup_returned")), "tup_fetched": _num(db.get("tup_fetched")),
        "tup_updated": _num(db.get("tup_updated")), "temp_bytes": _num(db.get("temp_bytes")),
        "blk_read_time_ms": _num(db.get("blk_read_time")), "blk_write_time_ms": _num(db.get("blk_write_time")),
    }
    for key in ("parallel_workers_to_launch", "parallel_workers_launched"):  # PostgreSQL 18 on
        if key in db:
            out["db"][key] = _num(db.get(key))
    out["writers"] = {k: _num(v) for k, v in writers.items()}
    if writers:
        out["checkpoints"] = checkpoints(out["writers"])
    io = raw.get("io")
    if io is not None:
        relation = [r for r in io if r["object"] == "relation"]
        out["data"] = _sum_io(relation)
        out["client"] = _sum_io([r for r in relation if r["backend_type"] == "client backend"])
        # Reads of single blocks through shared buffers (index scans), apart from scans' ring-buffer reads.
        out["client_normal"] = _sum_io([r for r in relation
                                        if r["backend_type"] == "client backend" and r["context"] == "normal"])
        # Parallel query workers are background workers (pg_activity says "parallel worker"): a parallel
        # scan's reads are partly theirs.
        out["workers"] = _sum_io([r for r in relation if r["backend_type"] == "background worker"])
        by_backend: dict[str, dict[str, float]] = {}
        for btype in sorted({r["backend_type"] for r in io if r["backend_type"] is not None}):
            rel = _sum_io([r for r in relation if r["backend_type"] == btype])
            walrows = _sum_io([r for r in io if r["backend_type"] == btype and r["object"] == "wal"])
            by_backend[btype] = {**rel, "wal_writes": walrows["writes"], "wal_write_bytes": walrows["write_bytes"],
                                 "wal_fsyncs": walrows["fsyncs"]}
        out["by_backend"] = by_backend
    else:
        # PostgreSQL 15: pg_stat_database (this database only) and the buffer writers stand in.
        written = sum(_num(writers.get(k)) for k in
                      ("checkpoint_buffers_written", "bgwriter_buffers_clean", "backend_buffers_written"))
        out["data"] = {"reads": out["db"]["blks_read"], "read_bytes": out["db"]["blks_read"] * 8192,
                       "read_time_ms": out["db"]["blk_read_time_ms"], "writes": written, "write_bytes": written * 8192,
                       "write_time_ms": None, "extends": None, "extend_bytes": None, "hits": out["db"]["blks_hit"],
                       "evictions": None, "reuses": None, "fsyncs": None, "fsync_time_ms": None, "writebacks": None}
        out["client"] = {"reads": out["db"]["blks_read"], "read_bytes": out["db"]["blks_read"] * 8192,
                         "read_time_ms": out["db"]["blk_read_time_ms"], "hits": out["db"]["blks_hit"],
                         "writes": _num(writers.get("backend_buffers_written")),
                         "write_bytes": _num(writers.get("backend_buffers_written")) * 8192, "write_time_ms": None,
                         "extends": None, "extend_bytes": None, "evictions": None, "reuses": None, "fsyncs": None,
                         "fsync_time_ms": None, "writebacks": None}
        out["client_normal"] = out["client"]  # no context split before pg_stat_io
        out["by_backend"] = None
    out["wal"] = _wal(raw, wal)
    sessions = raw.get("sessions")
    if sessions is not None:  # PostgreSQL 18: the run's own sessions' relation I/O
        out["sessions"] = {k: _num(sessions.get(k)) for k in ("reads", "read_bytes", "writes", "write_bytes",
                                                              "extends")}
    others = raw.get("others")
    if others is not None:  # a point count, not a counter: never differenced (see gauges())
        out["gauges"] = {"other_sessions_active": _num(others.get("active")),
                         "other_session_names": session_names(others.get("names"))}
    replication = raw.get("replication")
    if replication is not None:  # a hot standby
        out.update(_replication(replication, out.get("gauges") or {}))
    return out


def _replication(rep: dict[str, Any], gauges: dict[str, Any]) -> dict[str, Any]:
    """A standby's WAL received (a position: differenced, it is the WAL received in between) and its
    replay lag (gauges: bytes received not yet replayed, and seconds)."""
    received, replayed = rep.get("received_bytes"), rep.get("replayed_bytes")
    lag = None if received is None or replayed is None else max(0.0, float(received) - float(replayed))
    seconds = rep.get("replay_lag_seconds")
    return {"replication": {"wal_received_bytes": None if received is None else float(received)},
            "gauges": {**gauges, "replay_lag_bytes": lag,
                       "replay_lag_seconds": None if seconds is None else max(0.0, float(seconds))}}


def checkpoints(writers: dict[str, Any]) -> dict[str, float]:
    """The neutral checkpoint counters from the buffer writers' (pg_stat_checkpointer, or
    pg_stat_bgwriter before 17): timed and requested checkpoints both count."""
    return {"done": _num(writers.get("checkpoints_timed")) + _num(writers.get("checkpoints_requested")),
            "buffers_written": _num(writers.get("checkpoint_buffers_written"))}


def _wal(raw: dict[str, Any], wal: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {"bytes": _num(wal.get("wal_bytes")), "records": _num(wal.get("wal_records")),
                              "fpi": _num(wal.get("wal_fpi")), "buffers_full": _num(wal.get("wal_buffers_full"))}
    io = raw.get("io")
    wal_rows = [r for r in io if r["object"] == "wal"] if io is not None else []
    if wal_rows:
        total = _sum_io(wal_rows)
        result.update({"writes": total["writes"], "write_bytes": total["write_bytes"],
                       "write_time_ms": total["write_time_ms"], "syncs": total["fsyncs"],
                       "sync_time_ms": total["fsync_time_ms"]})
    else:
        result.update({"writes": _num(wal.get("wal_write")), "write_bytes": None,
                       "write_time_ms": _num(wal.get("wal_write_time")), "syncs": _num(wal.get("wal_sync")),
                       "sync_time_ms": _num(wal.get("wal_sync_time"))})
    return result


def session_state(state: str | None, wait_type: str | None, wait_event: str | None) -> str:
    """One label per sample of a session (pure): CPU, Class:Event, or what dbio itself is doing."""
    if state == "active":
        return f"{wait_type}:{wait_event or 'unknown'}" if wait_type else "CPU"
    if state == "idle":
        return "Client:between slices"
    if state is None:
        return "Unknown"
    return f"Client:{state}"
