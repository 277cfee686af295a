"""The verdict's rules about the storage stack under the run's places (pure): a place in memory, a
loop device that reads its file through the page cache, a place no block device dbio reads holds.
Each says which place, so that a figure the device did not give is not read as the storage's."""

from __future__ import annotations

from typing import Any, Mapping

from dbio.collect.block import MEMORY_FILESYSTEMS  # a result recorded before in_memory was
from dbio.report.finding import Finding
from dbio.result_records import Result

WAL = "WAL"


def _data_places(r: Result) -> list[tuple[str, Mapping[str, Any]]]:
    """The places the tables are read from (data directory, tablespaces), with their storage facts."""
    return [(role, s) for role, s in r.environment.storage.places() if role != WAL]


def _named(role: str, s: Mapping[str, Any]) -> str:
    return f"the {role} {s.get('path') or '-'} ({s.get('fs_type') or '-'})"


def _memory(s: Mapping[str, Any]) -> bool:
    return (bool(s.get("in_memory")) or s.get("fs_type") in MEMORY_FILESYSTEMS
            or any(q.get("in_memory") for q in _stack(s)))


def _stack(s: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [q for q in s.get("stack") or [] if isinstance(q, dict)]


def unmeasured(s: Mapping[str, Any]) -> bool:
    """A place recorded with no device /proc/diskstats counts its I/O on (an older result, which did
    not record diskstats_devices, is not judged)."""
    return "diskstats_devices" in s and not s.get("diskstats_devices") and not s.get("error")


def uncovered_data(r: Result) -> bool:
    """Some of the tables' reads reach no device dbio watched: the devices' reads are a part of the
    engine's, so comparing the two says nothing about a page cache or another process."""
    return any(unmeasured(s) for _, s in _data_places(r))


def in_memory(r: Result) -> Finding | None:
    """A data place in memory (tmpfs, ramfs, zram): its reads are memory's, whatever the engine calls them."""
    found = [_named(role, s) for role, s in _data_places(r) if _memory(s)]
    if found:
        return Finding("invalid", "data_in_memory", f"{' and '.join(found)} is in memory, not on storage: the "
                                                    "engine's physical reads from it are reads of memory")
    wal = r.environment.storage.wal
    if wal and _memory(wal):
        return Finding("warning", "wal_in_memory", f"{_named(WAL, wal)} is in memory, not on storage: its writes "
                                                   "and syncs, and the commits that wait for them, reached no device")
    return None


def loop_page_cache(r: Result) -> Finding | None:
    """A loop device without direct I/O under a data place: its reads are reads of its backing file
    through the OS page cache, which /proc/diskstats counts on the loop device as device reads."""
    found = []
    for role, s in _data_places(r):
        for q in _stack(s):
            loop = q.get("loop")
            if isinstance(loop, dict) and loop.get("direct_io") is False:
                found.append(f"{_named(role, s)} is on {q.get('disk') or q.get('device')}, a loop device over the "
                             f"file {loop.get('backing_file') or '-'} without direct I/O")
    if not found:
        return None
    return Finding("invalid", "loop_page_cache", "; ".join(found) + ": its reads go through the page cache of that "
                   "file, so the device's reads (and the engine's physical reads) need not have reached any disk; "
                   "set the loop's direct I/O on (losetup --direct-io=on)")


def no_device(r: Result) -> Finding | None:
    """A place with no block device dbio reads (a network or FUSE filesystem, overlay, a btrfs whose
    devices were not found): its I/O is in no device figure."""
    data = [_named(role, s) for role, s in _data_places(r) if unmeasured(s) and not _memory(s)]
    if data:
        return Finding("warning", "no_device", f"{' and '.join(data)} has no block device dbio can read: its "
                       "reads are in no device figure, so the device's reads are not compared with the engine's")
    wal = r.environment.storage.wal
    if wal and unmeasured(wal) and not _memory(wal):
        return Finding("info", "no_device", f"{_named(WAL, wal)} has no block device dbio can read: its writes "
                                            "are in no device figure")
    return None
