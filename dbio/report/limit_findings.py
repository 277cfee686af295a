"""The verdict's rules about limits the database server ran under (pure): a cgroup's CPU quota or CPU
affinity narrower than the host, and a cgroup's I/O limits on the devices the run used. Figures
measured under such a limit are the limit's, not the platform's: the report says so first.
"""

from __future__ import annotations

from typing import Any, Mapping

from dbio.report.finding import Finding
from dbio.result_records import Result
from dbio.stats.catalogue import value
from dbio.units import format_bytes

IO_LIMITS = (  # field, how it reads
    ("read_iops", lambda v: f"{v:,} reads/s"), ("read_bps", lambda v: f"{format_bytes(v)}/s read"),
    ("write_iops", lambda v: f"{v:,} writes/s"), ("write_bps", lambda v: f"{format_bytes(v)}/s written"),
)


def _limits(r: Result, client: bool = False) -> tuple[Mapping[str, Any], ...]:
    """The server's limits, or dbio's own (client)."""
    return r.environment.client_limits if client else r.environment.limits


def cpu_limit(r: Result) -> Finding | None:
    """A CPU quota below the host's CPUs, or an affinity to fewer of them: the server had less CPU than the host."""
    host_cpus = r.environment.host.get("cpus")
    parts: list[str] = []
    for entry in _limits(r):
        cpus = entry.get("cpus") or host_cpus  # its own host's (a merge's entries are several hosts')
        on = f", on {entry['node']}" if entry.get("node") else ""
        quota = entry.get("cpu_limit") or {}
        if quota.get("cpus") is not None and (not cpus or quota["cpus"] < cpus):
            parts.append(f"may use at most {quota['cpus']:g} CPUs of this host's {cpus or '?'} (the CPU quota "
                         f"of cgroup {quota.get('cgroup') or '?'}{on})")
        allowed = entry.get("cpus_allowed")
        if allowed is not None and cpus and allowed < cpus:
            parts.append(f"may run on only {allowed} of this host's {cpus} CPUs (its CPU affinity{on})")
    if not parts:
        return None
    used_up = value(r.figures, "server_cpu_throttled_periods_pct")
    told = "the database server " + "; and ".join(dict.fromkeys(parts))
    if used_up is not None:
        told += f"; it ran out of its quota in {used_up:.0f}% of the quota's periods in the window"
    level = "info" if used_up is not None and used_up < 1.0 else "warning"
    return Finding(level, "cpu_limit", told + ": reads/s, latency and CPU per read are those of this limit, not of "
                   "the host's CPUs", "server_cpu_throttled_periods_pct", used_up)


def _run_devices(r: Result) -> set[str]:
    """Every device under the run's places: diskstats' (a partition, a dm device) and the disks below them, on
    which alone a cgroup's I/O limit can be set (io.max and blkio.throttle refuse a partition)."""
    out: set[str] = set()
    for _, s in r.environment.storage.places():
        out.update(d for d in s.get("diskstats_devices") or [] if d)
        out.update(d for d in (s.get("disk"), s.get("device")) if d)
        for q in s.get("stack") or []:
            if isinstance(q, dict):
                out.update(d for d in (q.get("device"), q.get("disk")) if d)
    return out


def io_limit(r: Result) -> Finding | None:
    """A cgroup's I/O limit on a device the run used: the device could serve more than the server was let ask."""
    used = _run_devices(r)
    parts: list[str] = []
    for entry in _limits(r):
        for limit in entry.get("io_limits") or []:
            name = limit.get("name")
            if used and name not in used:
                continue  # a limit on a device the run did not use
            said = ", ".join(word(limit[field]) for field, word in IO_LIMITS if limit.get(field))
            on = f", on {entry['node']}" if entry.get("node") else ""
            if said:
                parts.append(f"{name or 'device'} ({limit.get('device')}): {said} (cgroup {limit.get('cgroup')}{on})")
    if not parts:
        return None
    return Finding("warning", "io_limit", "the database server's I/O is limited by its cgroup on "
                   + "; ".join(dict.fromkeys(parts)) + ": reads/s and writes/s measure this limit, not the device, "
                   "and a request's wait for the limit is in the engine's latency but not in the device's")


def baseline_outside_limits(r: Result) -> Finding | None:
    """A raw-device baseline whose fio (dbio's child) ran under other limits than the server: its efficiency
    compares the server held by its limits with the device held by others, or by none."""
    if r.baseline is None:
        return None
    server, fio = summary(r), summary(r, client=True)
    if server == fio:
        return None
    return Finding("warning", "baseline_outside_limits", f"the raw-device baseline's fio ran under dbio's limits "
                   f"({fio}), not the server's ({server}): the efficiency figures compare the two under different "
                   "limits; for a like-for-like baseline, start it from a shell in the server's cgroup (or lift the "
                   "limits)")


def summary(doc: Result, client: bool = False) -> str:
    """The server's limits (or dbio's own: client) in a few words, for a comparison's context ("none" without any)."""
    parts: list[str] = []
    for entry in _limits(doc, client):
        on = f"{entry['node']}: " if entry.get("node") else ""  # a merge's: each host's
        quota = entry.get("cpu_limit") or {}
        if quota.get("cpus") is not None:
            parts.append(f"{on}CPU quota {quota['cpus']:g} ({quota.get('cgroup')})")
        if entry.get("cpus_allowed") and entry.get("cpus") and entry["cpus_allowed"] < entry["cpus"]:
            parts.append(f"{on}{entry['cpus_allowed']} CPUs allowed")
        for limit in entry.get("io_limits") or []:
            said = ", ".join(word(limit[field]) for field, word in IO_LIMITS if limit.get(field))
            parts.append(f"{on}{limit.get('name') or limit.get('device')}: {said}")
    return "; ".join(dict.fromkeys(parts)) or "none"
