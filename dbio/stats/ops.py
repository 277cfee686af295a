"""The figures of a timed maintenance operation (dbio ops), from its recorded readings (pure).

A reading is {"t": epoch, "stat": /proc/stat CPU seconds, "disks": /proc/diskstats per device, and
"disks_unread": the devices it could not read, with why};
the operation's window is the span between its begin and end readings, and every rate divides
by that real elapsed time. A figure that was not measured is None, never 0."""

from __future__ import annotations

from typing import Any

from dbio.collect import procfs
from dbio.stats import host_cpu
from dbio.stats.counters import delta, rate, ratio

SECTOR = 512
MIB = 1 << 20
GB = 1e9  # seconds per GB of WAL: decimal gigabytes, as the white paper and device makers count


def seconds_per_gb(seconds: float | None, nbytes: float | None) -> float | None:
    """Seconds per GB of work (recovery: of WAL replayed), so a time for any size can be estimated;
    None without a time or without bytes."""
    if seconds is None or not nbytes:
        return None
    return seconds / (nbytes / GB)


def estimate_seconds(per_gb: float | None, nbytes: float) -> float | None:
    """The time seconds_per_gb predicts for nbytes (a straight line through the origin)."""
    return None if per_gb is None else per_gb * nbytes / GB


def mb_per_s(nbytes: float | None, seconds: float | None) -> float | None:
    """Decimal MB/s (device makers' unit), None without bytes or time."""
    if nbytes is None or not seconds or seconds <= 0:
        return None
    return nbytes / 1e6 / seconds


def elapsed(begin: dict[str, Any] | None, end: dict[str, Any] | None) -> float | None:
    if not begin or not end or begin.get("t") is None or end.get("t") is None or end["t"] <= begin["t"]:
        return None
    return end["t"] - begin["t"]


def devices(begin: dict[str, Any], end: dict[str, Any], roles: dict[str, list[str]]) -> dict[str, dict[str, Any]]:
    """Per block device (roles: device -> what it holds, e.g. ["data", "target"]): requests/s, MiB/s
    and MB read and written, average latency and utilisation over the window."""
    seconds = elapsed(begin, end) or 0.0
    out: dict[str, dict[str, Any]] = {}
    first = begin.get("disks") or {}
    for name, last in (end.get("disks") or {}).items():
        if name not in first:  # unread at the start: its counts since boot are no figure of the timed part
            continue
        d = delta(first[name], last)
        if d is None or seconds <= 0:
            continue
        read_bytes = None if d.get("sectors_read") is None else d["sectors_read"] * SECTOR
        written = None if d.get("sectors_written") is None else d["sectors_written"] * SECTOR
        out[name] = {
            "roles": list(roles.get(name, [])),
            "reads_per_s": rate(d.get("reads"), seconds), "writes_per_s": rate(d.get("writes"), seconds),
            "read_mib_per_s": rate(None if read_bytes is None else read_bytes / MIB, seconds),
            "write_mib_per_s": rate(None if written is None else written / MIB, seconds),
            "read_bytes": read_bytes, "write_bytes": written,
            "avg_read_us": None if ratio(d.get("read_ms"), d.get("reads")) is None
            else 1000.0 * d["read_ms"] / d["reads"],
            "avg_write_us": None if ratio(d.get("write_ms"), d.get("writes")) is None
            else 1000.0 * d["write_ms"] / d["writes"],
            "utilization_pct": None if d.get("io_ms") is None else min(100.0, 100.0 * d["io_ms"] / (seconds * 1000)),
            "avg_queue": None if d.get("weighted_io_ms") is None else d["weighted_io_ms"] / (seconds * 1000),
        }
    return out


def window(begin: dict[str, Any] | None, end: dict[str, Any] | None, roles: dict[str, list[str]],
           cores: int | None) -> dict[str, Any]:
    """The window's own figures: its seconds, each device's, the host's CPU shares."""
    if not begin or not end:
        return {"seconds": None, "devices": {}, "cpu": {"host": None}}
    seconds = elapsed(begin, end)
    unread = procfs.unread_over(begin, end)  # named: the report says which device's figures are absent, and why
    return {"seconds": seconds, "devices": devices(begin, end, roles), **({"devices_unread": unread} if unread else {}),
            "cpu": {"host": host_cpu.shares(delta(begin.get("stat"), end.get("stat")), seconds, cores)}}


def share(measured: float | None, reference: float | None) -> float | None:
    """measured / reference (a backup's MB/s against the device's sequential read rate)."""
    return ratio(measured, reference)


def derive(operation: str, detail: dict[str, Any], begin: dict[str, Any] | None, end: dict[str, Any] | None,
           roles: dict[str, list[str]], cores: int | None, sequential_mb_per_s: float | None = None) -> dict[str, Any]:
    """An operation's figures (the catalogue's OPS_FIGURES read them): the window's devices and CPU,
    its time, the bytes it processed and their rate, and its own figures."""
    out = window(begin, end, roles, cores)
    out["window_seconds"] = out.pop("seconds")
    own = _OWN[operation](detail or {})
    seconds, nbytes = own.pop("seconds", None), own.pop("bytes", None)
    if seconds is None:
        seconds = out["window_seconds"]
    out.update({"seconds": seconds, "bytes": nbytes, "mb_per_s": mb_per_s(nbytes, seconds), operation: own})
    if operation == "backup":
        own["sequential_read_mb_per_s"] = sequential_mb_per_s
        own["share_of_sequential"] = share(out["mb_per_s"], sequential_mb_per_s)
    return out


def _load(d: dict[str, Any]) -> dict[str, Any]:
    return {"seconds": d.get("seconds"), "bytes": d.get("loaded_bytes"), "streams": d.get("streams"),
            "steps": d.get("steps") or {}}


def _index(d: dict[str, Any]) -> dict[str, Any]:
    indexes = d.get("indexes") or []
    return {"seconds": sum(i["seconds"] for i in indexes) if indexes else None, "bytes": d.get("table_bytes"),
            "indexes": len(indexes), "index_bytes": d.get("index_bytes")}


def _backup(d: dict[str, Any]) -> dict[str, Any]:
    return {"seconds": d.get("seconds"), "bytes": d.get("bytes"), "files": d.get("files")}


def _recovery(d: dict[str, Any]) -> dict[str, Any]:
    replayed, total, redo = d.get("wal_replayed_bytes"), d.get("recovery_seconds"), d.get("redo_seconds")
    log = d.get("log") or {}
    after = None if log.get("ready_at") is None or log.get("redo_done_at") is None \
        else max(0.0, log["ready_at"] - log["redo_done_at"])
    return {"seconds": total, "bytes": replayed, "wal_written_bytes": d.get("wal_written_bytes"),
            "after_redo_seconds": after,
            "wal_replayed_bytes": replayed, "recovery_seconds": total, "redo_seconds": redo,
            "start_wall_seconds": d.get("start_wall_seconds"), "seconds_per_gb": seconds_per_gb(total, replayed),
            "redo_seconds_per_gb": seconds_per_gb(redo, replayed), "checkpoints_during": d.get("checkpoints_during")}


def _checkpoint(d: dict[str, Any]) -> dict[str, Any]:
    buffers = d.get("buffers_written")
    written = None if buffers is None else buffers * 8192
    return {"seconds": d.get("seconds"), "bytes": written, "dirtied_bytes": d.get("dirtied_bytes"),
            "buffers_written": buffers, "write_ms": d.get("write_ms"), "sync_ms": d.get("sync_ms")}


_OWN = {"load": _load, "index": _index, "backup": _backup, "recovery": _recovery, "checkpoint": _checkpoint}
OPERATIONS = tuple(_OWN)


def fit_line(points: list[tuple[float, float]]) -> tuple[float, float] | None:
    """Least squares seconds = fixed + per_gb x GB over (GB, seconds) points: a recovery's fixed cost
    (start, end-of-recovery checkpoint) apart from its cost per GB of WAL; None with fewer than two
    distinct sizes."""
    if len({x for x, _ in points}) < 2:
        return None
    n = len(points)
    mean_x, mean_y = sum(x for x, _ in points) / n, sum(y for _, y in points) / n
    slope = sum((x - mean_x) * (y - mean_y) for x, y in points) / sum((x - mean_x) ** 2 for x, _ in points)
    return mean_y - slope * mean_x, slope
