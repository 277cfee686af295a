"""The block layer under a device, read from sysfs: the queue settings that shape I/O below the
filesystem (scheduler, queue depth, read-ahead, block and request sizes), for the device and for
every device below it (a device-mapper or md device's members), what a loop device reads (its
backing file, with or without direct I/O) and the devices of a multi-device btrfs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

SYS = Path("/sys")
# queue attributes recorded as numbers, as sysfs names them
QUEUE_NUMBERS = ("nr_requests", "read_ahead_kb", "logical_block_size", "physical_block_size", "max_sectors_kb")
# Filesystems in memory, with no device: every "physical" read from them is a read of memory.
MEMORY_FILESYSTEMS = ("tmpfs", "ramfs")
MAX_DEPTH = 8  # devices stacked deeper than this are not followed (a loop in a damaged tree)


def read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def number(text: str) -> int | None:
    return int(text) if text.isdigit() else None


def bracketed(text: str) -> str | None:
    """The chosen value of a sysfs choice list ("always [madvise] never" -> "madvise"); a list
    without brackets holds one value (or none)."""
    words = text.split()
    chosen = [w[1:-1] for w in words if w.startswith("[") and w.endswith("]")]
    if chosen:
        return chosen[0]
    return words[0] if len(words) == 1 else None


def disk_of(device: Path) -> Path:
    """A partition's disk (its parent in sysfs), or the device itself: queues belong to disks."""
    return device.parent if (device / "partition").exists() else device


def queue_of(device: Path) -> dict[str, Any]:
    """The queue settings of the disk a sysfs device directory belongs to."""
    disk = disk_of(device)
    queue = disk / "queue"
    rotational = read(queue / "rotational")
    out: dict[str, Any] = {
        "device": device.name, "disk": disk.name,
        "scheduler": bracketed(read(queue / "scheduler")),
        "rotational": None if rotational not in ("0", "1") else rotational == "1",
    }
    out.update({name: number(read(queue / name)) for name in QUEUE_NUMBERS})
    loop = loop_of(device)
    if loop is not None:
        out["loop"] = loop
    if (disk / "comp_algorithm").exists():  # zram: a compressed RAM disk, its reads are memory's
        out["in_memory"] = True
    return out


def loop_of(device: Path) -> dict[str, Any] | None:
    """A loop device's backing file and whether the loop reads it with direct I/O (sysfs loop/dio).
    Without direct I/O the loop's reads go through the page cache of that file: /proc/diskstats counts
    them on the loop device whether or not any disk below was read. None: not a loop device."""
    loop = disk_of(device) / "loop"
    if not loop.is_dir():
        return None
    dio = read(loop / "dio")
    return {"backing_file": read(loop / "backing_file") or None,
            "direct_io": None if dio not in ("0", "1") else dio == "1"}


def btrfs_of(source: str, sys_root: Path = SYS) -> dict[str, Any] | None:
    """The btrfs filesystem whose devices include the mount's source device (/sys/fs/btrfs/<fsid>):
    its member devices' sysfs directories and its data and metadata profiles (raid0, raid1, dup,
    single...). A btrfs file's st_dev is an anonymous device no block device answers to, so its reads
    are counted only on these members. None: no btrfs there has that device."""
    name = Path(source).resolve().name if source.startswith("/") else source  # /dev/mapper/x -> dm-N
    for fs in sorted((sys_root / "fs/btrfs").glob("*/devices")):
        members = sorted(fs.glob("*"))
        if name not in {m.name for m in members}:
            continue
        allocation = fs.parent / "allocation"
        return {"fsid": fs.parent.name, "members": [m.resolve() for m in members],
                "profiles": {kind: sorted(p.name for p in (allocation / kind).glob("*") if p.is_dir()) or None
                             for kind in ("data", "metadata")}}
    return None


def stack_under(device: Path) -> list[dict[str, Any]]:
    """The device's queue, then each member's below it (breadth first, each disk once)."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    level = [device]
    for _ in range(MAX_DEPTH):
        below: list[Path] = []
        for current in level:
            disk = disk_of(current)
            if disk.name in seen:
                continue
            seen.add(disk.name)
            out.append(queue_of(current))
            members = list((current / "slaves").glob("*")) + list((disk / "slaves").glob("*"))
            below.extend(sorted({m.resolve() for m in members}))
        if not below:
            break
        level = below
    return out
