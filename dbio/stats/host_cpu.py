"""Host CPU of a span of time, from two /proc/stat readings (pure): the one definition dbio uses.

Every share is CPU time (ticks, in seconds) over the span's real elapsed time times the CPUs,
never over the sum of the ticks: a virtual machine's kernel does not account every idle or
I/O-wait tick (on this project's 2-core VM, 9.05 of 9.89 CPU-seconds in an I/O-bound window),
and dividing by the ticks it did count inflates every share. So user + system = busy, and
busy % x CPUs = busy CPUs, exactly; the states may add up to less than 100%.
"""

from __future__ import annotations

from typing import Any

# /proc/stat states, grouped as the report shows them: nice is user time, interrupts are system time.
USER = ("user", "nice")
SYSTEM = ("system", "irq", "softirq")
BUSY = USER + SYSTEM


def shares(stat_delta: dict[str, Any] | None, elapsed: float | None, cores: int | None) -> dict[str, Any] | None:
    """Shares (%) of the span's CPU time by state, busy CPU seconds and busy CPUs; None when the
    readings, the elapsed time or the CPU count are missing."""
    if not stat_delta or not elapsed or elapsed <= 0 or not cores:
        return None

    def seconds(*states: str) -> float:
        return sum(stat_delta.get(s) or 0.0 for s in states)

    capacity = elapsed * cores

    def pct(*states: str) -> float:
        return 100.0 * seconds(*states) / capacity

    busy = seconds(*BUSY)
    return {
        "user_pct": pct(*USER), "system_pct": pct(*SYSTEM), "iowait_pct": pct("iowait"), "steal_pct": pct("steal"),
        "idle_pct": pct("idle"), "busy_pct": pct(*BUSY), "busy_seconds": busy, "busy_cores": busy / elapsed,
        "accounted_pct": pct(*BUSY, "iowait", "steal", "idle"),
        "context_switches_per_s": None if stat_delta.get("ctxt") is None else stat_delta["ctxt"] / elapsed,
    }
