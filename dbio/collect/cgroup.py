"""The resource limits a process runs under: its control groups' CPU quota and I/O limits, and its CPU
affinity. A server held to 1.5 CPUs, or to 1,000 reads a second on its disk, gives figures of that
limit, not of the platform; the report says so first (report/limit_findings.py).

Both cgroup versions: v1's controllers each mounted apart (cpu, blkio), v2's one hierarchy, or both
at once (a hybrid host). A limit set on any ancestor of the process's cgroup applies: the smallest
binds. Parsing is pure; the readers take a root, so that tests run on recorded trees.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

V1_CONTROLLERS = ("cpu", "blkio")
UNIFIED = ""  # the v2 hierarchy's key in a membership and a mount table
V1_IO_FILES = {"read_iops": "blkio.throttle.read_iops_device", "read_bps": "blkio.throttle.read_bps_device",
               "write_iops": "blkio.throttle.write_iops_device", "write_bps": "blkio.throttle.write_bps_device"}
V2_IO_KEYS = {"riops": "read_iops", "rbps": "read_bps", "wiops": "write_iops", "wbps": "write_bps"}

Read = Callable[[Path], str]


def _read(path: Path) -> str:
    return path.read_text()


def parse_membership(text: str) -> dict[str, str]:
    """/proc/<pid>/cgroup (pure): controller -> the process's cgroup path; the v2 hierarchy under UNIFIED."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if not controllers:
            out[UNIFIED] = path
        for name in controllers.split(","):
            if name:
                out[name] = path
    return out


def parse_mounts(mountinfo: str) -> dict[str, tuple[str, str]]:
    """/proc/self/mountinfo (pure): controller -> (mount point, the hierarchy's path mounted there), for v1's
    cpu and blkio and the v2 hierarchy (UNIFIED)."""
    out: dict[str, tuple[str, str]] = {}
    for line in mountinfo.splitlines():
        ours, sep, theirs = line.partition(" - ")
        fields, rest = ours.split(), theirs.split()
        if not sep or len(fields) < 5 or len(rest) < 3:
            continue
        root, point = fields[3], fields[4].replace("\\040", " ")
        if rest[0] == "cgroup2":
            out.setdefault(UNIFIED, (point, root))
        elif rest[0] == "cgroup":
            for option in rest[2].split(","):
                if option in V1_CONTROLLERS:
                    out.setdefault(option, (point, root))
    return out


def _directories(mounts: dict[str, tuple[str, str]], membership: dict[str, str], controller: str) -> list[Path]:
    """The process's cgroup directory for a controller and every ancestor's up to the mount, innermost first."""
    if controller not in mounts or controller not in membership:
        return []
    point, root = mounts[controller]
    path = membership[controller]
    if root != "/":  # the mount shows a part of the hierarchy: the process's cgroup must be in it
        if path != root and not path.startswith(root.rstrip("/") + "/"):
            return []  # another part's (/docker/abcdef is not under /docker/abc)
        path = path[len(root):]
    if ".." in path.split("/"):  # outside this cgroup namespace's root: not under the mount
        return []
    here = Path(point, path.lstrip("/"))
    out = [here]
    while here != Path(point) and here.parent != here:
        here = here.parent
        out.append(here)
    return out


def _relative(directory: Path, mounts: dict[str, tuple[str, str]], controller: str) -> str:
    return "/" + str(directory.relative_to(mounts[controller][0])).strip(".")


def parse_cpu_max(text: str) -> float | None:
    """v2 cpu.max (pure): CPUs of quota ("150000 100000" -> 1.5); None for "max"."""
    parts = text.split()
    if len(parts) < 1 or parts[0] == "max":
        return None
    period = int(parts[1]) if len(parts) > 1 else 100000
    return int(parts[0]) / period if period > 0 else None


def parse_cpu_stat(text: str) -> dict[str, float]:
    """cpu.stat of either version (pure): periods, periods throttled, and seconds throttled."""
    values = {k: int(v) for k, v in (line.split()[:2] for line in text.splitlines() if len(line.split()) >= 2)
              if v.lstrip("-").isdigit()}
    seconds = values["throttled_usec"] / 1e6 if "throttled_usec" in values else \
        values["throttled_time"] / 1e9 if "throttled_time" in values else None
    if "nr_periods" not in values or "nr_throttled" not in values or seconds is None:
        raise ValueError("cpu.stat without nr_periods, nr_throttled and throttled time")
    return {"periods": values["nr_periods"], "throttled_periods": values["nr_throttled"],
            "throttled_seconds": seconds}


def parse_io_max(text: str) -> dict[str, dict[str, int]]:
    """v2 io.max (pure): "MAJ:MIN" -> its finite limits, e.g. {"8:0": {"read_iops": 1000}}."""
    out: dict[str, dict[str, int]] = {}
    for line in text.splitlines():
        fields = line.split()
        if not fields:
            continue
        limits = {V2_IO_KEYS[k]: int(v) for k, _, v in (f.partition("=") for f in fields[1:])
                  if k in V2_IO_KEYS and v.isdigit()}
        if limits:
            out[fields[0]] = limits
    return out


def parse_v1_throttle(text: str) -> dict[str, int]:
    """One of v1's blkio.throttle.*_device files (pure): "MAJ:MIN" -> its limit."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) == 2 and fields[1].isdigit() and int(fields[1]) > 0:
            out[fields[0]] = int(fields[1])
    return out


def cpu_limit(mounts: dict[str, tuple[str, str]], membership: dict[str, str],
              read: Read = _read) -> dict[str, Any] | None:
    """The smallest CPU quota over the process's cgroup and its ancestors: {"cpus", "cgroup", "stat"} (the
    stat file of the cgroup whose quota binds), None when no quota is set or none can be read."""
    found: list[tuple[float, str, Path]] = []
    for directory in _directories(mounts, membership, UNIFIED):
        try:
            cpus = parse_cpu_max(read(directory / "cpu.max"))
        except (OSError, ValueError):
            continue
        if cpus is not None:
            found.append((cpus, "v2 " + _relative(directory, mounts, UNIFIED), directory / "cpu.stat"))
    for directory in _directories(mounts, membership, "cpu"):
        try:
            quota, period = int(read(directory / "cpu.cfs_quota_us")), int(read(directory / "cpu.cfs_period_us"))
        except (OSError, ValueError):
            continue
        if quota > 0 and period > 0:
            found.append((quota / period, "v1 " + _relative(directory, mounts, "cpu"), directory / "cpu.stat"))
    if not found:
        return None
    cpus, cgroup, stat = min(found, key=lambda f: f[0])
    return {"cpus": cpus, "cgroup": cgroup, "stat": str(stat)}


def io_limits(mounts: dict[str, tuple[str, str]], membership: dict[str, str],
              read: Read = _read) -> list[dict[str, Any]]:
    """Every finite I/O limit over the process's cgroup and its ancestors, per device and cgroup:
    [{"device": "8:0", "cgroup": ..., "read_iops": 1000, ...}]."""
    out: list[dict[str, Any]] = []
    for directory in _directories(mounts, membership, UNIFIED):
        try:
            limits = parse_io_max(read(directory / "io.max"))
        except (OSError, ValueError):
            continue
        out += [{"device": device, "cgroup": "v2 " + _relative(directory, mounts, UNIFIED), **values}
                for device, values in limits.items()]
    for directory in _directories(mounts, membership, "blkio"):
        per_device: dict[str, dict[str, int]] = {}
        for name, file in V1_IO_FILES.items():
            try:
                for device, value in parse_v1_throttle(read(directory / file)).items():
                    per_device.setdefault(device, {})[name] = value
            except (OSError, ValueError):
                continue
        out += [{"device": device, "cgroup": "v1 " + _relative(directory, mounts, "blkio"), **values}
                for device, values in per_device.items()]
    return out


def device_name(number: str, sys_root: Path = Path("/sys")) -> str | None:
    """The kernel's name of a block device "MAJ:MIN" (8:0 -> sda), None when it has none here."""
    try:
        return os.path.basename(os.readlink(sys_root / "dev/block" / number))
    except OSError:
        return None


def limits_of(pids: list[int], proc: Path = Path("/proc"), read: Read = _read) -> list[dict[str, Any]]:
    """The limits of each distinct cgroup membership among these processes (a server's and its sessions'),
    with its CPU affinity: [{"pids": n, "cpu_limit": ..., "io_limits": [...], "cpus_allowed": n}].
    Memberships without any limit are left out; processes gone meanwhile are skipped."""
    try:
        mounts = parse_mounts(read(proc / "self/mountinfo"))
    except OSError:
        return []
    groups: dict[tuple[tuple[str, str], ...], list[int]] = {}
    for pid in pids:
        try:
            membership = parse_membership(read(proc / str(pid) / "cgroup"))
        except OSError:
            continue
        key = tuple(sorted((k, v) for k, v in membership.items() if k in (UNIFIED, *V1_CONTROLLERS)))
        groups.setdefault(key, []).append(pid)
    total = os.cpu_count() or 0
    out = []
    for key, members in groups.items():
        membership = dict(key)
        limit = cpu_limit(mounts, membership, read)
        ios = io_limits(mounts, membership, read)
        for entry in ios:
            entry["name"] = device_name(entry["device"])
        try:
            allowed = len(os.sched_getaffinity(members[0]))
        except OSError:
            allowed = None
        if limit is None and not ios and (allowed is None or allowed >= total):
            continue
        out.append({"pids": len(members), "cpu_limit": limit, "io_limits": ios, "cpus_allowed": allowed,
                    "cpus": total})
    return out


def throttling(limits: list[dict[str, Any]], read: Read = _read) -> dict[str, Any] | None:
    """The CPU quotas' periods and throttling so far, summed over the distinct cgroups whose quota binds (named
    under "cgroups": a window's two readings are compared only when they summed the same); None when there is
    none, or one cannot be read (no figure rather than a part)."""
    stats = sorted({entry["cpu_limit"]["stat"] for entry in limits if entry.get("cpu_limit")})
    if not stats:
        return None
    total: dict[str, Any] = {"periods": 0.0, "throttled_periods": 0.0, "throttled_seconds": 0.0}
    for stat in stats:
        try:
            values = parse_cpu_stat(read(Path(stat)))
        except (OSError, ValueError):
            return None
        for name in values:
            total[name] += values[name]
    total["cgroups"] = stats
    return total
