"""The verdict's rules on the host's CPUs (pure): how busy they were, what the hypervisor took, how long the
sessions (and their I/O workers) waited for one, and who else used them: other work, dbio's own measuring."""

from __future__ import annotations

from typing import Any, Mapping

from dbio.report.finding import Finding, found as _found
from dbio.result_records import Result
from dbio.stats import catalogue
from dbio.stats.catalogue import value

CPU_BUSY_LIMIT = 90.0  # % host CPU
# % of the window's CPU time the hypervisor gave to other guests: beyond, latency includes waiting
# for a CPU the guest was promised (on this project's kind of VM steal reached 40%)
STEAL_LIMIT = 5.0
RUNNABLE_LIMIT = 1.0  # sessions wanting a CPU per CPU, on average
# The sessions' measured wait for a CPU per read, as a share of the engine's average read: beyond, a
# tenth of what the report calls read latency is this host's CPUs (8 sessions on 2 CPUs: 516 of 817 us)
CPU_WAIT_SHARE_LIMIT = 0.1
CPU_WAIT_TIME_LIMIT = 10.0  # % of the sessions' time spent waiting for a CPU, however it falls
OVERHEAD_LIMIT = 5.0  # % of the host's busy CPU used by dbio's own measuring
# The host's busy CPU used by neither the database servers, dbio nor the kernel's own interrupts and threads:
# beyond this share, and beyond a floor in CPUs that keeps a nearly idle host's noise out, other work shared
# the window.
OTHER_CPU_LIMIT = 15.0  # % of the host's busy CPU
OTHER_CPU_MIN_CORES = 0.05  # CPUs, on average over the window


def _window(r: Result) -> bool:
    return catalogue.measured(r.figures)


def other_cpu(r: Result) -> Finding | None:
    """Work outside the database server and dbio used the host's CPUs in the window: the reads' host-CPU cost
    counts it, and the sessions and the server competed with it for CPUs."""
    f = r.figures
    share, seconds = value(f, "other_cpu_pct"), value(f, "other_cpu_seconds")
    window = value(f, "window_seconds")
    if not _window(r) or share is None or share < OTHER_CPU_LIMIT or not window \
            or seconds / window < OTHER_CPU_MIN_CORES:
        return None
    return _found("warning", "other_cpu", f"other work used {seconds:,.1f} CPU-seconds in the window, {share:.0f}% "
                  "of the host's busy CPU (processes other than the database server and dbio; the kernel's own "
                  "interrupts and threads apart): reads per host-CPU-second count it, and the sessions competed with "
                  "it for CPUs", "other_cpu_pct", share)


def cpu_saturated(r: Result) -> Finding | None:
    busy = value(r.figures, "host_busy_pct")
    if not _window(r) or busy is None or busy <= CPU_BUSY_LIMIT or not r.caps.local:
        return None
    return _found("warning", "cpu_saturated", f"host CPU {busy:.0f}% busy: the result reflects CPU, not only storage",
                  "host_busy_pct", busy)


def cpu_stolen(r: Result) -> Finding | None:
    """The hypervisor ran other guests on this host's CPUs for a share of the window."""
    steal = value(r.figures, "host_steal_pct")
    if not _window(r) or steal is None or steal <= STEAL_LIMIT or not r.caps.local:
        return None
    return _found("warning", "cpu_steal", f"the hypervisor took {steal:.1f}% of this host's CPU time (steal) in the "
                  "window: sessions and the server waited for CPUs other guests used; latency and CPU figures "
                  "include it", "host_steal_pct", steal)


def large_wait_in_reads(f: Mapping[str, Any]) -> tuple[float, float] | None:
    """(the wait for a CPU within a read, the engine's average read) when that wait is a tenth of the read or
    more: the read latency is then partly this host's CPUs."""
    in_read, avg = value(f, "cpu_wait_in_read_us"), value(f, "avg_read_us")
    return (in_read, avg) if in_read is not None and avg and in_read >= CPU_WAIT_SHARE_LIMIT * avg else None


def workers_part(f: Mapping[str, Any], in_read: float) -> str:
    """The I/O workers' part of a read's wait for a CPU, where they did the reads (io_method = worker)."""
    placed, helpers = catalogue.cpu_wait_in_read_parts(f)
    if helpers is None or placed != in_read:
        return ""
    if catalogue.workers_wait_alone_in_read(f):
        return " (all of it the I/O workers' doing the reads)"
    return f" ({helpers:,.0f} us of it the I/O workers' doing the reads)"


def cpu_wait_in_latency(r: Result) -> Finding | None:
    """The measured wait for a CPU (the sessions', their I/O workers') is a large part of the sessions' time, or
    of a read's: latency and throughput are partly the host's CPUs."""
    f = r.figures
    share, large = value(f, "cpu_wait_pct"), large_wait_in_reads(f)
    if not _window(r) or share is None:
        return None
    if share < CPU_WAIT_TIME_LIMIT and large is None:
        return None
    held = value(f, "server_cpu_throttled_periods_pct")
    # a quota that ran out holds the sessions back too (cpu_limit says so first)
    whose = "this host's CPUs" if held is None or held < 1.0 else \
        f"this host's CPUs or the server's CPU quota (used up in {held:.0f}% of its periods)"
    told = f"the sessions waited for a CPU {share:.0f}% of their time (on a run queue, ready to run)"
    in_read = large[0] if large is not None else value(f, "cpu_wait_in_read_us")
    avg = value(f, "avg_read_us")
    if in_read is not None and avg is not None:
        told += (f", {in_read:,.0f} us of the {avg:,.0f} us the engine timed per read{workers_part(f, in_read)}: read "
                 f"latency includes waiting for {whose}, not only the storage")
    else:
        told += f": their latency and throughput include waiting for {whose}"
    return _found("warning", "cpu_wait", told, "cpu_wait_pct", share)


def sessions_queue_for_cpu(r: Result) -> Finding | None:
    """On average, more sessions wanted a CPU than the host has: CPU queueing inflates latency. Sampled: a
    result with the sessions' measured wait for a CPU is judged by cpu_wait_in_latency instead."""
    if value(r.figures, "cpu_wait_pct") is not None:
        return None
    counts = r.waits.counts
    samples = sum(counts.values())
    sessions = r.config.sessions
    cores = value(r.figures, "cores") or 0
    if not _window(r) or not samples or not cores or sessions <= cores:
        return None
    on_cpu = sessions * counts.get("CPU", 0) / samples
    if on_cpu / cores <= RUNNABLE_LIMIT:
        return None
    return Finding("warning", "cpu_queue", f"{sessions} sessions on {cores} CPUs: on average {on_cpu:.1f} sessions "
                                           "were on or waiting for a CPU; latency includes CPU queueing",
                   "waits.counts.CPU", on_cpu)


def overhead(r: Result) -> Finding | None:
    f = r.figures
    share = value(f, "dbio_overhead_pct")  # None without the host's busy CPU seconds
    if not _window(r) or share is None or not r.caps.local:
        return None
    level = "warning" if share > OVERHEAD_LIMIT else "info"
    return _found(level, "overhead", f"dbio's own measuring used {value(f, 'dbio_cpu_seconds'):.2f} CPU seconds, "
                                     f"{share:.1f}% of the host's busy CPU", "dbio_overhead_pct", share)


# The headline's caveats of these rules' warnings (report/verdict_rules.py): a few words beside the figure.

def cpu_saturated_caveat(r: Result, finding: Finding) -> str | None:
    return None if finding.value is None else f"host CPU {finding.value:.0f}% busy"


def cpu_wait_caveat(r: Result, finding: Finding) -> str:
    large = large_wait_in_reads(r.figures)
    if large is not None:
        return f"{large[0]:,.0f} us of it waiting for a CPU"
    return f"the sessions waited for a CPU {finding.value:.0f}% of their time" \
        if finding.value is not None else "the sessions waited for a CPU"


def cpu_steal_caveat(r: Result, finding: Finding) -> str | None:
    return None if finding.value is None else f"{finding.value:.1f}% of the CPU time stolen by the hypervisor"


def other_cpu_caveat(r: Result, finding: Finding) -> str:
    return f"{value(r.figures, 'other_cpu_pct'):.0f}% of that CPU other work's"
