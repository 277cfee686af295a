"""Stalls: stretches of the measured window in which nothing was measured or nothing moved (pure).

A window whose server froze (every process stopped, a hung device, a full disk) still has a
begin and an end snapshot, and its averages are true averages of a window in which nothing
happened for a while. A stall is named with its place in the window and its length, so the
report can say so in its first lines.
"""

from __future__ import annotations

from typing import Any, Iterable

STALL_SECONDS = 3.0  # at least this long (three slices) without a sample or any movement
MOVING = ("statements_per_s", "reads_per_s", "writes_per_s", "wal_mib_per_s")


def still(row: dict[str, Any]) -> bool:
    """A row in which no statement finished and no counter of the engine moved, or a late sample."""
    if row.get("missing"):
        return row["missing"] == "late"
    return not any(row.get(key) for key in MOVING)


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
