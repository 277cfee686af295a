"""What a PostgreSQL server log says about one crash recovery (pure): when the server started,
where redo started and ended, how long redo took, and when it accepted connections again.

dbio's embedded instance logs with PostgreSQL's default prefix (`%m [%p] `: a timestamp with
milliseconds) and English messages (lc_messages = 'C'), so these lines are stable to parse."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

_STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?) (\S+) \[\d+\] (\w+):\s+(.*)$")
_LSN = r"([0-9A-Fa-f]+/[0-9A-Fa-f]+)"
_REDO_START = re.compile(rf"redo starts at {_LSN}")
_REDO_DONE = re.compile(rf"redo done at {_LSN}")
_ELAPSED = re.compile(r"elapsed: ([0-9.]+) s")


def lsn_bytes(lsn: str) -> int:
    """A WAL position as PostgreSQL prints it ('1/A2B3C4D0') in bytes from the start of WAL."""
    high, low = lsn.split("/")
    return (int(high, 16) << 32) + int(low, 16)


def _epoch(stamp: str) -> float:
    return datetime.fromisoformat(stamp + "+00:00").timestamp()  # the instance logs in UTC (TZ=UTC)


def recovery(lines: list[str]) -> dict[str, Any]:
    """The last start in lines (a log read from before that start) and its crash recovery: epoch
    seconds of the start, redo start and ready, the redo's LSNs and the WAL between them, and the
    redo's own elapsed seconds; a figure the log does not give is None."""
    out: dict[str, Any] = {"started_at": None, "redo_start_lsn": None, "redo_done_lsn": None, "redo_started_at": None,
                           "redo_done_at": None, "redo_seconds": None, "ready_at": None, "crash_recovery": False,
                           "lines": []}
    for line in lines:
        match = _STAMP.match(line)
        if not match:
            continue
        when, message = _epoch(match.group(1)), match.group(4)
        if message.startswith("starting PostgreSQL"):
            out.update({k: None for k in out if k not in ("lines", "crash_recovery")}, crash_recovery=False, lines=[])
            out["started_at"] = when
        elif "automatic recovery in progress" in message:
            out["crash_recovery"] = True
        elif redo_start := _REDO_START.search(message):
            out["redo_start_lsn"], out["redo_started_at"] = redo_start.group(1), when
        elif redo_done := _REDO_DONE.search(message):
            out["redo_done_lsn"], out["redo_done_at"] = redo_done.group(1), when
            elapsed = _ELAPSED.search(message)
            out["redo_seconds"] = float(elapsed.group(1)) if elapsed else None
        elif "ready to accept connections" in message:
            out["ready_at"] = when
        else:
            continue
        out["lines"].append(line.rstrip("\n"))
    return out


def replayed_bytes(found: dict[str, Any]) -> int | None:
    """WAL bytes redo replayed: from its start to its end position; None when the log lacks one."""
    if not found.get("redo_start_lsn") or not found.get("redo_done_lsn"):
        return None
    return max(0, lsn_bytes(found["redo_done_lsn"]) - lsn_bytes(found["redo_start_lsn"]))


def recovery_seconds(found: dict[str, Any]) -> float | None:
    """From the server's start to its accepting connections, by the log's own clock."""
    if found.get("started_at") is None or found.get("ready_at") is None:
        return None
    return max(0.0, found["ready_at"] - found["started_at"])
