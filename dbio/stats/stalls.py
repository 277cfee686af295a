"""Stalls: stretches of the measured window in which nothing was measured or nothing moved (pure).

A window whose server froze (every process stopped, a hung device, a full disk) still has a
begin and an end snapshot, and its averages are true averages of a window in which nothing
happened for a while. A stall is named with its place in the window and its length, so the
report can say so in its first lines.

Whether an interval was quiet is one judgement (quiet), made by the result's series (still) and the live
view's early finding alike. The engine's counters and the sessions' statements come as each slice ends
(stats/published.py): in an interval in which no session published, they cannot tell a statement in
progress (a scan of a large table) from sessions that wait on a lock or a hung device, and the read probe's
lookups move the engine's counters either way. What moves at once as the sessions work tells them apart:
their processes' CPU and the devices' reads.
"""

from __future__ import annotations

from typing import Any, Iterable

from dbio.stats import published

STALL_SECONDS = 3.0  # at least this long (three slices) without a sample or any movement
MOVING = ("statements_per_s", "reads_per_s", "writes_per_s", "wal_mib_per_s")
ENGINE_MOVING = MOVING[1:]  # the engine's counters' figures among them
# The sessions' processes' CPU a second (all of them) below which they are not working: one in a long statement
# uses far more (about 0.3 s a second reading 2 GiB at 240 MiB/s), one blocked (a lock, a hung device) none.
SESSIONS_WORKING_CPU = 0.05
# The devices' reads a second up to which they are idle: the read probe's lookups (run/read_probe.py, 25 a second,
# a block or two each) go on while the sessions wait; a statement in progress reads thousands.
DEVICE_IDLE_READS_PER_S = 50.0


def quiet(*, finished: bool, unpublished: str | None, engine_moved: bool, session_cpu_cores: float | None,
          device_reads_per_s: float | None) -> bool:
    """Whether an interval shows the sessions doing nothing. finished: a statement finished in it; unpublished:
    why its engine figures are absent (stats/published.py), None when they are there; engine_moved: the engine's
    counters moved in it; session_cpu_cores: the sessions' processes' CPU seconds a second (None: not measured,
    the server is elsewhere); device_reads_per_s: the devices' reads (None: not read).

    Nothing finished, no session published, the sessions' CPU and the devices idle. Where the counters hold the
    interval's work, they did not move either. Where no session published in it, the counters tell nothing (the
    probe's lookups move them, a statement in progress does not): quiet only where the CPU, measured, says so, so
    that a scan in progress is no stall, and sessions waiting on a lock or a hung device are one."""
    if finished or unpublished == published.IN_PART:  # some session's slice ended in it
        return False
    if engine_moved and unpublished != published.IN_PROGRESS:
        return False
    if session_cpu_cores is not None and session_cpu_cores >= SESSIONS_WORKING_CPU:
        return False
    if device_reads_per_s is not None and device_reads_per_s > DEVICE_IDLE_READS_PER_S:
        return False
    return unpublished != published.IN_PROGRESS or session_cpu_cores is not None


def still(row: dict[str, Any]) -> bool:
    """A row in which the sessions did nothing (quiet), or a late sample."""
    if row.get("missing"):
        return row["missing"] == "late"
    return quiet(finished=bool(row.get("statements_per_s")), unpublished=row.get("unpublished"),
                 engine_moved=any(row.get(key) for key in ENGINE_MOVING),
                 session_cpu_cores=row.get("db_cpu_cores"), device_reads_per_s=row.get("device_reads_per_s"))


def find(rows: Iterable[dict[str, Any]], window_offset: float, *, min_seconds: float = STALL_SECONDS,
         window_seconds: float | None = None) -> list[dict[str, Any]]:
    """The stalls of the measured rows of a series: each {"offset": seconds from the window's start,
    "seconds": length, "missing_samples": samples not taken on time}. A stall runs from the end of
    the last row that moved to the end of the last still row, or to when a late sample's answer
    came, whichever is later; never past the window's end (window_seconds), where its figures end (a
    window cut short at its last reading, whose server then stopped answering, is no longer for it)."""
    until = None if window_seconds is None else window_offset + window_seconds
    stalls: list[dict[str, Any]] = []
    since: float | None = None  # end of the last row that moved (seconds since the common start)
    current: dict[str, Any] | None = None
    for row in rows:
        if row.get("phase") != "measured":
            continue
        end = row["since_start"]
        if still(row):
            if current is None:
                begin = since if since is not None else window_offset
                current = {"begin": begin, "end": end, "missing_samples": 0}
            current["end"] = max(current["end"], end + (row.get("late_by") or 0.0))
            current["missing_samples"] += 1 if row.get("missing") else 0
            continue
        if row.get("missing"):
            continue  # a row without a baseline tells nothing either way
        _close(current, stalls, window_offset, min_seconds, until)
        current, since = None, end
    _close(current, stalls, window_offset, min_seconds, until)
    return stalls


def _close(current: dict[str, Any] | None, stalls: list[dict[str, Any]], window_offset: float,
           min_seconds: float, until: float | None) -> None:
    if current is None:
        return
    seconds = (current["end"] if until is None else min(current["end"], until)) - current["begin"]
    if seconds >= min_seconds:
        stalls.append({"offset": round(current["begin"] - window_offset, 3), "seconds": round(seconds, 3),
                       "missing_samples": current["missing_samples"]})
