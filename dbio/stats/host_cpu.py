"""Host CPU of a span of time, from two /proc/stat readings (pure): the one definition dbio uses.

Every share is CPU time (in seconds) over the span's real elapsed time times the CPUs, not over
the sum of what the kernel counted (unless that sum is the larger: 10 ms ticks over a second, and
readings a little apart from their timestamps, can count more than the span had). A tickless
kernel measures idle and I/O-wait time exactly (entering and leaving idle), but attributes busy time to user or system
by sampling at its tick,
and a CPU that serves synchronous reads runs in bursts of tens of microseconds between idle
periods, which the tick rarely sees: on this project's 2-core VM, user + system ticks counted
17.0 us per fio read while fio's own CPU alone was 21.0 us (bench/RESULTS.md, "How the CPU is
counted"). So busy time is the elapsed CPU time that was neither idle, I/O wait nor stolen: the
ticks' user + system, plus the time no tick accounted (`unsampled`). On a CPU-bound span both
agree; on a kernel that ticks through idle, nothing is unsampled.
"""

from __future__ import annotations

from typing import Any

from dbio.collect import procfs

# /proc/stat states, grouped as the report shows them: nice is user time, interrupts are system time.
USER = ("user", "nice")
SYSTEM = ("system", "irq", "softirq")
assert USER + SYSTEM == procfs.BUSY_STATES
BUSY_METHOD = "elapsed less idle"  # results before it summed the ticks only ("ticks")


def shares(stat_delta: dict[str, Any] | None, elapsed: float | None, cores: int | None) -> dict[str, Any] | None:
    """Shares (%) of the span's CPU time by state, busy CPU seconds and busy CPUs; None when the
    readings, the elapsed time or the CPU count are missing."""
    if not stat_delta or not elapsed or elapsed <= 0 or not cores:
        return None

    # ticks that overshoot the span (10 ms ticks, readings a little apart from their timestamps) are shares
    # of what the kernel counted, as busy_seconds takes them: no state above 100%
    capacity = max(elapsed * cores, procfs.seconds_in(stat_delta, procfs.COUNTED_STATES))

    def pct(*states: str) -> float:
        return 100.0 * procfs.seconds_in(stat_delta, states) / capacity

    busy = procfs.busy_seconds(stat_delta, elapsed, cores)
    unsampled = procfs.unsampled_seconds(stat_delta, elapsed, cores)
    return {
        "user_pct": pct(*USER), "system_pct": pct(*SYSTEM), "iowait_pct": pct("iowait"), "steal_pct": pct("steal"),
        "idle_pct": pct("idle"), "unsampled_pct": 100.0 * unsampled / capacity,
        "busy_pct": 100.0 * busy / (elapsed * cores),
        "busy_seconds": busy, "busy_cores": busy / elapsed, "busy_method": BUSY_METHOD,
        "accounted_pct": pct(*procfs.COUNTED_STATES),
        "context_switches_per_s": None if stat_delta.get("ctxt") is None else stat_delta["ctxt"] / elapsed,
    }
