"""What shapes the figures below the database, in one short block (pure): the filesystem and mount
options under the data and WAL directories, each device's queue settings, the CPU governor and
transparent huge pages. Shared by the report and `dbio instance status`."""

from __future__ import annotations

from typing import Any, Mapping

from dbio.result_context import Storage

KIB = 1024
ROTATION: dict[Any, str] = {True: "rotational", False: "non-rotational"}  # a device's, unknown: not said
LOOP_DIRECT_IO: dict[Any, str] = {True: "direct I/O",
                                  False: "no direct I/O: its reads can be the page cache's of that file"}


def pairs(storage: Storage, host: Mapping[str, Any]) -> list[list[str]]:
    """[label, text] rows; a result recorded before these facts existed shows what it has."""
    data, wal, spaces = storage.data_directory, storage.wal, storage.tablespaces
    rows = [["Data", _where(data, "data directory")]]
    # the tables' own places (data_dirs): each may be on another stack than the data directory
    rows += [[f"Tablespace {n}", _where(s, "directory")] for n, s in enumerate(spaces, start=1)]
    if wal:
        same = wal.get("same_device_as_data") or (wal.get("dev") and wal.get("dev") == data.get("dev"))
        rows.append(["WAL", f"same device as data, {wal.get('path')}" if same else _where(wal, "WAL directory")])
    queues: list[Mapping[str, Any]] = []
    for place in (data, *spaces, wal):
        queues += [q for q in _queues(place) if q not in queues]
    if queues:
        rows.append(["Devices", "; ".join(_queue(q) for q in queues)])
    tuning = _tuning(host)
    if tuning:
        rows.append(["Host", tuning])
    return rows


def _where(s: Mapping[str, Any], what: str) -> str:
    if s.get("error"):
        return f"{s.get('path')}: {s['error']}"
    options = ", ".join(o for o in (s.get("mount_options"), _fs_only(s)) if o)
    return (f"{s.get('source') or s.get('device') or '-'} ({s.get('fs_type') or '-'}"
            + (f", {s['model']}" if s.get("model") else "") + f") mounted at {s.get('mount_point') or '-'}"
            + (f" ({options})" if options else "") + f", {what} {s.get('path') or '-'}" + _below(s))


def _below(s: Mapping[str, Any]) -> str:
    """What holds a place's blocks when it is not one device: memory, a multi-device filesystem's
    members, or nothing dbio can read (a result recorded before these facts were says nothing)."""
    if s.get("in_memory"):
        return "; in memory, no block device"
    if s.get("members"):
        profiles = s.get("btrfs_profiles") or {}
        kinds = ", ".join(f"{kind} {'+'.join(p)}" for kind, p in profiles.items() if p)
        return f"; on devices {', '.join(s['members'])}" + (f" ({kinds})" if kinds else "")
    if "device" in s and not s.get("device") and "members" not in s and s.get("fs_type") and not s.get("error"):
        return "; no block device dbio can read: its I/O is in no device figure"
    return ""


def _fs_only(s: Mapping[str, Any]) -> str:
    """The filesystem's own options, without the read-write flag the mount options already give."""
    return ",".join(o for o in (s.get("fs_options") or "").split(",") if o and o not in ("rw", "ro"))


def _queues(s: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    if s.get("stack"):
        return [q for q in s["stack"] if isinstance(q, dict)]
    if not s.get("device"):
        return []
    # recorded before the whole stack was: the device's own facts only
    return [{"disk": s.get("disk") or s["device"], "scheduler": _chosen(s.get("scheduler")),
             "rotational": s.get("rotational"), "logical_block_size": s.get("logical_block_size")}]


def _chosen(scheduler: Any) -> str | None:
    words = str(scheduler or "").split()
    return next((w[1:-1] for w in words if w.startswith("[")), words[0] if len(words) == 1 else None)


def _queue(q: Mapping[str, Any]) -> str:
    parts = [f"scheduler {q['scheduler']}" if q.get("scheduler") else None,
             f"nr_requests {q['nr_requests']}" if q.get("nr_requests") is not None else None,
             f"read-ahead {_kib(q['read_ahead_kb'])}" if q.get("read_ahead_kb") is not None else None,
             ROTATION.get(q.get("rotational")),
             _blocks(q),
             f"max request {_kib(q['max_sectors_kb'])}" if q.get("max_sectors_kb") else None]
    return f"{q.get('disk')}{_what(q)}: " + ", ".join(p for p in parts if p)


def _what(q: Mapping[str, Any]) -> str:
    """' (in memory)', ' (loop over FILE on DEVICE, ...)': what a device's reads really reach."""
    if q.get("in_memory"):
        return " (in memory)"
    loop = q.get("loop")
    if not isinstance(loop, dict):
        return ""
    backing = loop.get("backing") or {}
    on = backing.get("device") or backing.get("fs_type")
    dio = LOOP_DIRECT_IO.get(loop.get("direct_io"), "direct I/O unknown")
    return f" (loop over {loop.get('backing_file') or 'an unknown file'}" + (f" on {on}" if on else "") + f", {dio})"


def _kib(kib: int) -> str:
    """A kernel setting in KiB, exactly as set: whole MiB as MiB (1280 KiB stays 1280 KiB, not 1.2 MiB)."""
    return f"{kib // KIB} MiB" if kib and kib % KIB == 0 else f"{kib} KiB"


def _blocks(q: Mapping[str, Any]) -> str | None:
    logical, physical = q.get("logical_block_size"), q.get("physical_block_size")
    if not logical:
        return None
    return f"blocks {logical} B" + (f" logical, {physical} B physical" if physical else "")


def _tuning(host: Mapping[str, Any]) -> str:
    if not any(k in host for k in ("cpu_governor", "transparent_hugepages")):
        return ""  # recorded before dbio read them
    thp = host.get("transparent_hugepages")
    defrag = host.get("transparent_hugepages_defrag")
    return (f"CPU frequency governor {host.get('cpu_governor') or 'not readable (no cpufreq)'}, transparent huge "
            f"pages {thp or 'not readable'}" + (f" (defrag {defrag})" if thp and defrag else ""))
