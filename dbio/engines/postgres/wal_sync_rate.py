"""The WAL device's sync-write rate, from the bundled pg_test_fsync: its first comparison (one 8 KiB
write and a sync per operation, each wal_sync_method), then it is stopped (the rest takes minutes)."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path
from typing import Any

from dbio.errors import DbioError

SCRATCH_NAME = "dbio-baseline-fsync.scratch"
_LINE = re.compile(r"^\s+(\w+)\s+([0-9.]+) ops/sec\s+([0-9]+) usecs/op")
FIRST_BLOCK_END = "using two 8kB writes"  # the heading of pg_test_fsync's second comparison


def parse_first_block(lines: list[str]) -> dict[str, dict[str, float]]:
    """method -> {syncs_per_s, avg_sync_us} of the one-write comparison (pure)."""
    found: dict[str, dict[str, float]] = {}
    for line in lines:
        if FIRST_BLOCK_END in line:
            break
        match = _LINE.match(line)
        if match:
            found[match.group(1)] = {"syncs_per_s": float(match.group(2)), "avg_sync_us": float(match.group(3))}
    return found


def redo_sync_rate(directory: str, seconds: int, method: str) -> dict[str, Any]:
    """pg_test_fsync with a scratch file in directory (removed), seconds per method; the
    figures of the server's wal_sync_method."""
    from dbio.engines.postgres.instance.binaries import wheel_binaries

    tool = wheel_binaries().tool("pg_test_fsync")
    scratch = Path(directory) / SCRATCH_NAME
    command = [str(tool), "-f", str(scratch), "-s", str(seconds)]
    lines: list[str] = []
    started = time.time()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        for line in proc.stdout or []:
            lines.append(line.rstrip("\n"))
            if FIRST_BLOCK_END in line or time.time() - started > 10 * seconds + 30:
                break
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        scratch.unlink(missing_ok=True)
    methods = parse_first_block(lines)
    if method not in methods:
        raise DbioError(f"pg_test_fsync gave no figure for wal_sync_method {method}",
                        f"run {' '.join(command)} by hand to see why")
    return {"tool": "pg_test_fsync", "command": command, "method": method, **methods[method], "methods": methods,
            "started_at": started, "ended_at": time.time()}
