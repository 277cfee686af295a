"""The engine-neutral counter record: what Engine.normalize returns for one raw snapshot.

Every engine fills it from its own views; figures, series and reports read only this. All
values are cumulative since some point of the server's life (a reading is differenced with
another of the same server), except "t" and the "gauges". A value the engine cannot measure is
None (inside a group) or the group is absent; Capabilities.missing says why, and reports show
the figure as absent, never as zero.
"""

from __future__ import annotations

from typing import Any, TypedDict


class IoCounters(TypedDict):
    """Data-file I/O of a set of processes (block I/O through the engine's buffer cache)."""

    reads: float  # read requests
    read_bytes: float | None
    read_time_ms: float | None  # time waited for reads, as the engine timed it (None: not timed)
    writes: float | None  # write requests
    write_bytes: float | None
    write_time_ms: float | None
    extends: float | None  # requests that grew a file
    extend_bytes: float | None
    hits: float | None  # block requests the buffer cache served
    evictions: float | None
    reuses: float | None
    fsyncs: float | None
    fsync_time_ms: float | None
    writebacks: float | None


class WalCounters(TypedDict):
    """The redo log (PostgreSQL's WAL, InnoDB's redo log)."""

    bytes: float  # generated
    records: float | None
    fpi: float | None  # full page images (PostgreSQL); None elsewhere
    buffers_full: float | None  # writes forced by a full log buffer
    writes: float | None  # write requests to the log files
    write_bytes: float | None
    write_time_ms: float | None
    syncs: float | None
    sync_time_ms: float | None


class DatabaseCounters(TypedDict, total=False):
    """Logical activity of the measured database."""

    commits: float
    rollbacks: float
    blks_read: float  # blocks read from storage
    blks_hit: float  # logical reads the cache served
    tup_returned: float
    tup_fetched: float
    tup_updated: float
    temp_bytes: float
    blk_read_time_ms: float
    blk_write_time_ms: float
    parallel_workers_to_launch: float  # parallel query workers its queries planned (absent: not counted)
    parallel_workers_launched: float  # ... and those that could be started


class CheckpointCounters(TypedDict):
    """Checkpoints: the engine writing its dirty cache to the data files (PostgreSQL's
    checkpointer, InnoDB's checkpoints)."""

    done: float  # checkpoints completed or started (each one that wrote)
    buffers_written: float | None  # blocks they wrote


class Counters(TypedDict, total=False):
    t: float  # server clock, epoch seconds, when the reading was taken (required)
    data: IoCounters  # every process's data-file I/O (required)
    client: IoCounters  # client sessions' data-file I/O, all of them (required)
    client_normal: IoCounters  # client sessions' single-block reads through the cache, not scans' (required)
    workers: IoCounters  # background workers' data-file I/O: the sessions' parallel query workers among them
    #                      (absent: the engine has none or cannot tell them apart)
    sessions: dict[str, float]  # the run's own sessions only (reads, read_bytes, writes, write_bytes, extends)
    by_backend: dict[str, dict[str, float]] | None  # per process kind, in the engine's own names
    wal: WalCounters  # (required)
    db: DatabaseCounters  # (required)
    checkpoints: CheckpointCounters  # absent: the engine cannot tell (no checkpoint finding then)
    writers: dict[str, float]  # the engine's buffer writers in its own names, kept for the record (no reader)
    gauges: dict[str, Any]  # point-in-time values, never differenced (other sessions active, replay lag...)
    replication: dict[str, float]  # a standby's: wal_received_bytes (its receive position)
    # a node of a multi-writer cluster (Galera): write-sets replicated (its own commits) and received (the
    # others'), their bytes, certification failures, brute-force aborts, replays, flow control (paused ns,
    # pauses sent and received); its queues are gauges (recv_queue, send_queue)
    writesets: dict[str, float | None]


def session_names(values: Any) -> list[str]:
    """The names of sessions as a server gave them, each once and in order (pure). A server may give
    NULL for any of them (a connection still authenticating has no user or application name yet):
    those read as UNNAMED, never as None among strings (which no report could sort or print)."""
    found = values if isinstance(values, (list, tuple)) else []
    return sorted({str(v) if v not in (None, "") else UNNAMED for v in found})


UNNAMED = "(no name yet)"

REQUIRED = ("t", "data", "client", "client_normal", "wal", "db")
_GROUPS = {"data": IoCounters, "client": IoCounters, "client_normal": IoCounters, "workers": IoCounters,
           "wal": WalCounters, "checkpoints": CheckpointCounters}


def problems(record: dict[str, Any]) -> list[str]:
    """What keeps a normalized reading from being a Counters record (pure; empty when it is one).
    An engine's tests run its normalize through this, so a new engine learns the shape here."""
    out = [f"{key} is missing" for key in REQUIRED if key not in record]
    unknown = set(record) - set(Counters.__annotations__)
    out += [f"{key} is not a counter group" for key in sorted(unknown)]
    for group, kind in _GROUPS.items():
        values = record.get(group)
        if not isinstance(values, dict):
            continue
        out += [f"{group}.{key} is missing" for key in kind.__annotations__ if key not in values]
        out += [f"{group}.{key} is {value!r}, not a number or None" for key, value in values.items()
                if value is not None and not isinstance(value, (int, float))]
    if "t" in record and not isinstance(record["t"], (int, float)):
        out.append("t is not a number")
    return out


def combine(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The total of several nodes' counter records (pure): numbers add up, a value one node cannot
    measure (None) makes the total None, lists (names) are joined; "t" is the first record's
    (the run's reference clock). One record is returned as it is."""
    if len(records) == 1:
        return records[0]
    total = _add(records)
    total["t"] = records[0]["t"]
    for group in OPEN_GROUPS:  # a kind one node does not list, that node did not have: the others' add up
        maps = [m for r in records if isinstance(m := r.get(group), dict)]
        if len(maps) == len(records):
            kinds = dict.fromkeys(k for m in maps for k in m)
            total[group] = {k: _add([m[k] for m in maps if k in m]) for k in kinds}
    return total


OPEN_GROUPS = ("by_backend", "writers")  # keyed by the engine's own names, which a node may not all have


def _add(values: list[Any]) -> Any:
    if any(v is None for v in values):
        return None
    if all(isinstance(v, dict) for v in values):
        keys = list(dict.fromkeys(k for v in values for k in v))
        return {k: _add([v[k] for v in values if k in v]) if all(k in v for v in values) else None for k in keys}
    if all(isinstance(v, list) for v in values):
        return [item for v in values for item in v]
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return sum(values)
    return None
