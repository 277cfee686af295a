"""Linux counters from /proc: host CPU, block devices, per-process CPU. Parsers are pure."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, NamedTuple

CLK_TCK = os.sysconf("SC_CLK_TCK")
CPU_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
BUSY_STATES = ("user", "nice", "system", "irq", "softirq")  # what the kernel's tick attributes to work
COUNTED_STATES = (*BUSY_STATES, "iowait", "steal", "idle")  # every state the kernel counts time in


def seconds_in(stat_delta: dict[str, Any], states: tuple[str, ...]) -> float:
    """CPU seconds a span spent in these states (pure)."""
    return sum(stat_delta.get(s) or 0.0 for s in states)


def unsampled_seconds(stat_delta: dict[str, Any], elapsed: float, cores: int) -> float:
    """Busy CPU time no tick accounted (pure): elapsed x CPUs less every state the kernel counted, never
    below zero (readings a few microseconds from their timestamps can overshoot). A tickless kernel
    measures idle and I/O wait exactly but samples busy time at its tick, which misses the short
    bursts of a CPU serving synchronous reads (stats/host_cpu.py)."""
    return max(0.0, elapsed * cores - seconds_in(stat_delta, COUNTED_STATES))


def busy_seconds(stat_delta: dict[str, Any], elapsed: float, cores: int) -> float:
    """Busy CPU seconds of a span (pure): the ticks' busy states plus the time no tick accounted. When the
    kernel counted more time than the span had (over a second, its 10 ms ticks and readings a little apart
    from their timestamps: 100.5% busy), busy is the ticks' busy share of what was counted."""
    ticked, counted = seconds_in(stat_delta, BUSY_STATES), seconds_in(stat_delta, COUNTED_STATES)
    if counted > elapsed * cores:
        return ticked * elapsed * cores / counted
    return ticked + unsampled_seconds(stat_delta, elapsed, cores)


DISK_FIELDS = ("reads", "reads_merged", "sectors_read", "read_ms", "writes", "writes_merged", "sectors_written",
               "write_ms", "in_flight", "io_ms", "weighted_io_ms")
# The widths of a /proc/diskstats line (Documentation/admin-guide/iostats.rst): major, minor, name and the 11
# fields above until 4.17; 4.18 appended 4 discard fields, 5.5 2 flush fields. The 11 come first in each; a line
# of another width (2.6's 7-field partitions, a kernel's next layout) is read as none of them, never shifted.
DISKSTATS_WIDTHS = {14: "before 4.18", 18: "4.18 and later", 20: "5.5 and later"}
COUNTER_END = 2 ** 64  # the kernel's counters are unsigned longs: a field beyond is no counter (float: inf)
UNREAD = "disks_unread"  # a reading's devices whose line could not be read, and why: a named gap, not a figure


class Diskstats(NamedTuple):
    """The devices' counters (DISK_FIELDS) and the devices asked for whose figures are absent, with why."""

    counters: dict[str, dict[str, float]]
    unread: dict[str, str]


def read_proc(path: str | os.PathLike) -> str:
    """A /proc file's text, read with three system calls (os.open, os.read until its end, os.close) where Path's
    read_text makes seven and a text stream: each second's reading reads one file per session (64 sessions: 72
    files, 3.0 ms of the client's CPU with read_text, 1.0 ms so). Bytes that are no UTF-8 (a process's name) are
    kept as surrogates: the fields read are the numbers."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks = [os.read(fd, 65536)]
        while chunks[-1]:
            chunks.append(os.read(fd, 65536))
    finally:
        os.close(fd)
    return b"".join(chunks).decode("utf-8", "surrogateescape")


def parse_stat(text: str) -> dict[str, float]:
    """Host CPU seconds by state (first 'cpu' line of /proc/stat), plus context switches."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0] == "cpu":
            for name, value in zip(CPU_FIELDS, parts[1:]):
                out[name] = int(value) / CLK_TCK
        elif parts and parts[0] == "ctxt":
            out["ctxt"] = float(parts[1])
    return out


def parse_diskstats(text: str, devices: set[str] | None = None) -> Diskstats:
    """Each device's counters from /proc/diskstats (pure; devices: only those). A line of a width no kernel
    writes, or with a field that is not a counter, gives its device no counters but a reason, as does a device
    asked for that the file does not list."""
    out: dict[str, dict[str, float]] = {}
    unread: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 3 or (devices is not None and parts[2] not in devices):
            continue
        name, fields = parts[2], parts[3:]
        if len(parts) not in DISKSTATS_WIDTHS:
            unread[name] = (f"its /proc/diskstats line has {len(parts)} fields, a layout dbio does not know "
                            f"({', '.join(f'{n}: {k}' for n, k in DISKSTATS_WIDTHS.items())})")
        elif not all(field.isascii() and field.isdigit() and len(field) <= 20 and int(field) < COUNTER_END
                     for field in fields):  # counters: unsigned decimals, 64 bits at most
            unread[name] = "its /proc/diskstats line has a field that is not a counter (a whole number)"
        elif name in out or name in unread:  # one device, two lines: neither is known to be its
            out.pop(name, None)
            unread[name] = "listed twice in /proc/diskstats"
        else:
            out[name] = {field: float(v) for field, v in zip(DISK_FIELDS, fields)}
    for name in (devices or set()) - set(out) - set(unread):
        unread[name] = "not listed in /proc/diskstats"
    return Diskstats(out, unread)


def parse_pid_stat(text: str) -> tuple[float, float]:
    """(user, system) CPU seconds of one process from /proc/<pid>/stat."""
    rest = text.rsplit(")", 1)[1].split()
    return int(rest[11]) / CLK_TCK, int(rest[12]) / CLK_TCK


def parse_start_time(text: str) -> int:
    """When a process or thread started, in clock ticks after boot, from its stat (field 22; pure)."""
    return int(text.rsplit(")", 1)[1].split()[19])


def parse_tree_stat(text: str) -> tuple[int, float, float]:
    """(parent pid, own CPU seconds, CPU seconds of its children it has reaped) of one process from
    /proc/<pid>/stat (pure): a child's CPU moves into its parent's account when the parent waits for it."""
    rest = text.rsplit(")", 1)[1].split()
    return int(rest[1]), (int(rest[11]) + int(rest[12])) / CLK_TCK, (int(rest[13]) + int(rest[14])) / CLK_TCK


def server_roots(session_ids: list[int]) -> list[int]:
    """The server processes the sessions belong to: the process of a session that is a thread of it (a MySQL
    server), the parent of a session that is a process of its own (a PostgreSQL backend's postmaster). Never
    init: a session with no server parent gives none."""
    roots = set()
    for pid in session_ids:
        if not is_pid(pid):
            continue
        try:
            fields = dict(line.split(":", 1) for line in read_proc(f"/proc/{pid}/status").splitlines()
                          if ":" in line)
        except OSError:
            continue
        tgid, ppid = int(fields["Tgid"]), int(fields["PPid"])
        roots.add(tgid if tgid != pid else ppid)
    return sorted(r for r in roots if r > 1)


KTHREADD = 2  # the kernel's thread daemon: every kernel thread is its child


def read_trees_cpu(roots: list[int]) -> dict[int, float]:
    """CPU seconds of each root process and all its descendants, those alive and those that ended (parallel
    workers come and go; a helper's own children end too): each live member's own CPU and its reaped
    children's, from one reading of /proc. A root that is gone has no entry."""
    procs: dict[int, tuple[int, float]] = {}
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            parent, own, reaped = parse_tree_stat(read_proc(f"{entry.path}/stat"))
        except (OSError, IndexError, ValueError):
            continue  # ended meanwhile: its parent has it now, or will
        procs[int(entry.name)] = (parent, own + reaped)
        children.setdefault(parent, []).append(int(entry.name))
    out: dict[int, float] = {}
    for root in roots:
        if root not in procs:
            continue
        total, todo = 0.0, [root]
        while todo:
            pid = todo.pop()
            total += procs[pid][1]
            todo += children.get(pid, [])
        out[root] = total
    return out


def read_stat() -> dict[str, float]:
    return parse_stat(read_proc("/proc/stat"))


class HostBusy:
    """The host's busy CPU seconds from construction to .seconds() (busy_seconds over the span): fio's
    runs and the benches' peers are counted as dbio counts a run's window."""

    def __init__(self) -> None:
        self._stat, self._began = read_stat(), time.monotonic()

    def seconds(self) -> float:
        end, elapsed = read_stat(), time.monotonic() - self._began
        return busy_seconds({k: end.get(k, 0.0) - v for k, v in self._stat.items()}, elapsed, os.cpu_count() or 1)


def unread_over(begin: dict[str, Any] | None, end: dict[str, Any] | None) -> dict[str, str]:
    """The devices with no figure over the span between two readings, and why (pure): those either reading could
    not read (UNREAD), and those only one of them has (counts since boot are not the span's)."""
    out: dict[str, str] = {}
    for reading, at in ((begin, "start"), (end, "end")):
        for name, why in ((reading or {}).get(UNREAD) or {}).items():
            out.setdefault(str(name), f"at the {at}, {why}")
    first, last = (begin or {}).get("disks") or {}, (end or {}).get("disks") or {}
    for name in sorted(set(first) ^ set(last)):
        out.setdefault(name, f"read at the {'start' if name in first else 'end'} only")
    return out


def read_diskstats(devices: set[str]) -> Diskstats:
    if not devices:
        return Diskstats({}, {})
    return parse_diskstats(read_proc("/proc/diskstats"), devices)


def disk_reading(devices: set[str]) -> dict[str, Any]:
    """A reading's part for the devices: "disks" (their counters) and, where some could not be read, UNREAD."""
    read = read_diskstats(devices)
    return {"disks": read.counters, **({UNREAD: read.unread} if read.unread else {})}


@dataclass(frozen=True)
class Task:
    """A process or thread as first read: its stat file and when it started. Linux gives the id of one that
    ended to a later one (a session's backend or server thread, after it ended): that one started later, so
    its readings are refused, and the first one's figure is absent rather than another's."""

    stat: Path  # /proc/<pid>/stat, or /proc/<tgid>/task/<tid>/stat for a thread of another process
    started: int | None  # clock ticks after boot (stat field 22); None: it had ended when first asked for


class NotTheSame(ValueError):
    """The id names another process or thread than the one first read."""


def read_pid_cpu(pids: list[int], tasks: dict[int, Task] | None = None) -> dict[int, float]:
    """CPU seconds (user + system) of each process still alive; of the thread itself for the id of a
    thread of another process (a MySQL session's server thread), whose /proc/<id>/stat is its process's.
    tasks: each id's Task, kept from one reading to the next: the stat file found once (finding it reads
    /proc/<id>/status: 2,048 sessions read every second took 97 ms of CPU, 35 ms with it kept), and its
    start time, which the later readings must show (an id given to another task since is left out)."""

    def cpu(task: Task) -> float:
        text = read_proc(task.stat)
        _same(task, text)
        return sum(parse_pid_stat(text))

    return _read_each(pids, tasks, cpu)


def read_pid_run_delay(pids: list[int], tasks: dict[int, Task] | None = None) -> dict[int, float]:
    """Seconds each process (or a server's thread, as read_pid_cpu) has waited for a CPU; none where the
    kernel keeps no schedstat, or where the id is another task's than the one first read."""

    def waited(task: Task) -> float:
        value = parse_schedstat(read_proc(task.stat.with_name("schedstat")))
        _same(task, read_proc(task.stat))  # checked after it: a task that took the id before shows its start
        return value

    return _read_each(pids, tasks, waited)


def parse_schedstat(text: str) -> float:
    """Run delay of one task from /proc/<pid>/schedstat (pure): nanoseconds on a run queue, ready to run
    but not running (its second field; the first is the time it ran). A session woken by its read's
    completion waits there for a CPU before it goes on, so an engine's timed read includes that wait. A kernel
    that keeps no scheduler statistics writes "0 0 0": a session that ran had a run time, so that is no figure."""
    ran, waited = (int(field) for field in text.split()[:2])
    if not ran:
        raise ValueError("no scheduler statistics kept (schedstat reads 0 0 0)")
    return waited / 1e9


def is_pid(value: object) -> bool:
    """Whether value is a process id (pure). Ids come from a server's answers (pg_stat_activity), which a
    server dbio does not own may make anything: '../../home/x' would put a file of theirs in /proc's place."""
    return type(value) is int and value > 0


def _same(task: Task, stat_text: str) -> None:
    """Refuses a stat that is not the first-read task's (pure)."""
    started = parse_start_time(stat_text)
    if task.started is None or started != task.started:
        raise NotTheSame(f"{task.stat}: started at tick {started}, not {task.started}: another task has the id")


def _read_each(pids: list[int], tasks: dict[int, Task] | None, read: Callable[[Task], float]) -> dict[int, float]:
    """read(task) of each id whose files can still be read and are still the first-read task's (a process
    that ended, or whose id another has since, is left out)."""
    out: dict[int, float] = {}
    tasks = {} if tasks is None else tasks
    for pid in pids:
        if not is_pid(pid):
            continue
        try:
            task = tasks.get(pid) or tasks.setdefault(pid, _task(pid))
            out[pid] = read(task)
        except (OSError, IndexError, ValueError):
            continue
    return out


def _task(pid: int) -> Task:
    """The task the id names now; one that had ended is kept as such, so that no later task with its id is
    taken for it."""
    try:
        status = read_proc(f"/proc/{pid}/status")
    except FileNotFoundError:
        return Task(Path(f"/proc/{pid}/stat"), None)
    tgid = next((line.split()[1] for line in status.splitlines() if line.startswith("Tgid:")), str(pid))
    stat = Path(f"/proc/{pid}/stat") if tgid == str(pid) else Path(f"/proc/{tgid}/task/{pid}/stat")
    try:
        return Task(stat, parse_start_time(read_proc(stat)))
    except FileNotFoundError:  # it ended between the two reads
        return Task(stat, None)


def self_cpu() -> float:
    times = os.times()
    return times.user + times.system


def self_rss() -> int | None:
    """Resident memory of this process, bytes (sustained runs show it stays flat)."""
    try:
        for line in read_proc("/proc/self/status").splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None
