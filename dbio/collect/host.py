"""Facts about this host and the storage under a path (read once per run)."""

from __future__ import annotations

import os
import platform
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

from dbio.collect import block
from dbio.filesystem import existing_ancestor


def _read(path: str | Path, default: str = "") -> str:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return default


def host_facts() -> dict[str, Any]:
    cpuinfo = _read("/proc/cpuinfo")
    model = next((ln.split(":", 1)[1].strip() for ln in cpuinfo.splitlines() if ln.startswith("model name")), "")
    flags = next((ln.split(":", 1)[1].split() for ln in cpuinfo.splitlines() if ln.startswith("flags")), [])
    meminfo = parse_meminfo(_read("/proc/meminfo"))
    os_release = dict(line.split("=", 1) for line in _read("/etc/os-release").splitlines() if "=" in line)
    return {
        "hostname": socket.gethostname(),
        "os": os_release.get("PRETTY_NAME", "").strip('"') or platform.system(),
        "kernel": platform.release(),
        "cpu_model": model or platform.processor(),
        "cpus": os.cpu_count(),
        "memory_bytes": meminfo.get("MemTotal"),
        "memory_available_bytes": meminfo.get("MemAvailable"),
        "virtualized": "hypervisor" in flags,
        "hypervisor_vendor": _read("/sys/class/dmi/id/sys_vendor") or None,
        "product": _read("/sys/class/dmi/id/product_name") or None,
        "python": sys.version.split()[0],
        **tuning(),
    }


def tuning(sys_root: Path = block.SYS) -> dict[str, Any]:
    """The CPU frequency governor(s) and transparent huge pages, where readable (None where not:
    a virtual machine often has no cpufreq)."""
    cpus = (sys_root / "devices/system/cpu").glob("cpu[0-9]*/cpufreq/scaling_governor")
    governors = sorted({block.read(p) for p in cpus} - {""})
    thp = sys_root / "kernel/mm/transparent_hugepage"
    return {"cpu_governor": ", ".join(governors) or None,
            "transparent_hugepages": block.bracketed(block.read(thp / "enabled")),
            "transparent_hugepages_defrag": block.bracketed(block.read(thp / "defrag"))}


def parse_meminfo(text: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            out[name] = int(parts[0]) * (1024 if len(parts) > 1 and parts[1] == "kB" else 1)
    return out


def pending_write_bytes(meminfo: dict[str, int]) -> int:
    """Data the OS still has to write to some device (pure): dirty pages and pages being written."""
    return meminfo.get("Dirty", 0) + meminfo.get("Writeback", 0)


def pending_writes() -> int:
    """Bytes the OS has yet to write to its devices now."""
    return pending_write_bytes(parse_meminfo(_read("/proc/meminfo")))


def flush_pending_writes(before: int, limit_seconds: float) -> dict[str, Any]:
    """Write out the OS's pending writes (sync; `before` bytes of them), waiting at most limit_seconds:
    what a setup or an installation left in the page cache would otherwise reach the device inside a
    measured window. Returns the bytes pending before and after, the seconds it took and whether it
    finished."""
    started = time.monotonic()
    flusher = threading.Thread(target=os.sync, name="dbio-sync", daemon=True)
    flusher.start()
    flusher.join(limit_seconds)
    return {"pending_bytes": before, "seconds": round(time.monotonic() - started, 3),
            "finished": not flusher.is_alive(),
            "left_bytes": pending_writes()}


def parse_mountinfo(text: str) -> list[dict[str, Any]]:  # the options may be None
    mounts = []
    for line in text.splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 2:
            continue
        mounts.append({"dev": fields[2], "mount_point": fields[4].replace("\\040", " "),
                       "fs_type": tail[0], "source": tail[1],
                       # the mount's own options, then the filesystem's (ext4's data=, xfs's logbsize=...)
                       "mount_options": fields[5] if len(fields) > 5 else None,
                       "fs_options": tail[2] if len(tail) > 2 else None})
    return mounts


LOOP_DEPTH = 3  # loop devices over files on loop devices... followed this deep


def storage_of(path: str | Path, sys_root: Path = block.SYS, mountinfo: str | None = None,
               depth: int = 0) -> dict[str, Any]:
    """The filesystem and block device a path lives on, its mount options, the queue settings of
    the device and of every device below it (a loop device's backing file and the storage under
    it included), and the device names /proc/diskstats uses."""
    target = Path(path)
    try:
        st = os.stat(target)
    except OSError as exc:
        return {"path": str(path), "error": str(exc)}
    major, minor = os.major(st.st_dev), os.minor(st.st_dev)
    text = _read("/proc/self/mountinfo") if mountinfo is None else mountinfo
    mount = _mount_of(str(target.resolve()), f"{major}:{minor}", parse_mountinfo(text))
    info: dict[str, Any] = {"path": str(path), "dev": f"{major}:{minor}"}
    info.update({k: mount.get(k) for k in ("mount_point", "fs_type", "source", "mount_options", "fs_options")})
    sys_dev = sys_root / f"dev/block/{major}:{minor}"
    if not sys_dev.exists():
        info["device"] = None  # e.g. tmpfs, overlay, network filesystems, btrfs (an anonymous st_dev)
        info["diskstats_devices"] = []
        if mount.get("fs_type") in block.MEMORY_FILESYSTEMS:
            info["in_memory"] = True
        elif mount.get("fs_type") == "btrfs" and mount.get("source"):
            info.update(_btrfs(mount["source"], sys_root, text, depth))
        return info
    real = sys_dev.resolve()
    disk = block.disk_of(real)
    stack = _with_backing(block.stack_under(real), sys_root, text, depth)
    info.update({
        "device": real.name,
        "disk": disk.name,
        "model": block.read(disk / "device/model") or None,
        "rotational": stack[0]["rotational"],
        "scheduler": stack[0]["scheduler"],
        "logical_block_size": stack[0]["logical_block_size"],
        "size_bytes": (_int(block.read(disk / "size")) or 0) * 512 or None,
        "dm_name": block.read(real / "dm/name") or None,
        "slaves": sorted(p.name for p in (real / "slaves").glob("*")) or None,
        "stack": stack,
        "diskstats_devices": [real.name],
    })
    return info


def _mount_of(resolved: str, dev: str, mounts: list[dict[str, Any]]) -> dict[str, Any]:
    """The mount a path is under: the deepest mount point above it with its st_dev; when none has it
    (a btrfs subvolume's files have an anonymous st_dev of their own), the deepest mount point above it."""
    def above(m: dict[str, Any]) -> bool:
        return resolved == m["mount_point"] or resolved.startswith(m["mount_point"].rstrip("/") + "/")
    same = [m for m in mounts if m["dev"] == dev and above(m)] or [m for m in mounts if above(m)]
    return max(same, key=lambda m: len(m["mount_point"]), default=None) or {}


def _btrfs(source: str, sys_root: Path, mountinfo: str, depth: int) -> dict[str, Any]:
    """A btrfs filesystem's member devices: its reads reach /proc/diskstats only there."""
    fs = block.btrfs_of(source, sys_root)
    if fs is None:
        return {}
    stack: list[dict[str, Any]] = []
    for member in fs["members"]:
        stack += [q for q in block.stack_under(member) if q not in stack]
    return {"members": [m.name for m in fs["members"]], "btrfs_profiles": fs["profiles"],
            "stack": _with_backing(stack, sys_root, mountinfo, depth),
            "diskstats_devices": [m.name for m in fs["members"]]}


def _with_backing(stack: list[dict[str, Any]], sys_root: Path, mountinfo: str, depth: int) -> list[dict[str, Any]]:
    """Each loop device's backing file's storage (its device or filesystem), and that device's queues
    after the stack's own: what a loop device's reads reach."""
    out = list(stack)
    for q in stack:
        loop = q.get("loop")
        if not loop or not loop.get("backing_file") or depth >= LOOP_DEPTH:
            continue
        below = storage_of(loop["backing_file"], sys_root, mountinfo, depth + 1)
        loop["backing"] = {k: below.get(k) for k in ("device", "fs_type", "mount_point", "in_memory", "error")
                           if below.get(k) is not None}
        out += [b for b in below.get("stack") or [] if b.get("disk") not in {o.get("disk") for o in out}]
    return out


def storage_under(data_directory: str | Path, wal_directory: str | Path | None) -> dict[str, Any]:
    """The storage of a server's data directory and of its WAL (when that exists), as results record it."""
    data = storage_of(data_directory)
    wal = storage_of(wal_directory) if wal_directory is not None and Path(wal_directory).exists() else None
    if wal and wal.get("dev") == data.get("dev"):
        wal = {**wal, "same_device_as_data": True}
    return {"data_directory": data, "wal": wal}


def _int(text: str) -> int | None:
    return int(text) if text.isdigit() else None


def supports_direct_io(path: Path) -> bool:
    """Whether the filesystem of path (or its nearest existing parent) accepts O_DIRECT opens."""
    current = existing_ancestor(path)
    if not current.is_dir():
        current = current.parent
    probe = current / f".dbio-direct-io-probe-{os.getpid()}"
    try:
        fd = os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_DIRECT", 0), 0o600)
    except OSError as exc:
        return exc.errno not in (22, 95)  # EINVAL, EOPNOTSUPP: no O_DIRECT; other errors are reported elsewhere
    os.close(fd)
    probe.unlink(missing_ok=True)
    return True


def clock_source() -> str | None:
    """The kernel's clock source (tsc, kvm-clock, ...): what this host's time is read from."""
    try:
        return Path("/sys/devices/system/clocksource/clocksource0/current_clocksource").read_text().strip() or None
    except OSError:
        return None
