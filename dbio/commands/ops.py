"""dbio ops OPERATION's options checked (and sweep --op's), and the lines it prints after; the operation
itself is timed and written by jobs/ops.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dbio import command_options, ops_records
from dbio.collect import fio
from dbio.errors import UsageError
from dbio.jobs import backup_destination
from dbio.jobs.ops import Request
from dbio.report import ops_model
from dbio.units import UnitError, parse_size

DEFAULT_WAL: int = command_options.default("ops", "wal")  # said once, in its row (and so in --help)
DEFAULT_DIRTY: int = command_options.default("ops", "dirty")


def request(operation: str, destination: Path | None, wal: str | None, dirty: str | None, baseline: bool,
            cold: bool = False, changes: int | None = None) -> Request:
    """The options of one operation, each refused in one line when it does not belong or is wrong."""
    given = {"--target": destination is not None, "--wal": wal is not None, "--dirty": dirty is not None,
             "--baseline": baseline, "--cold": cold, "--changes-per-block": changes is not None}
    belongs = {"backup": {"--target", "--baseline", "--cold"}, "recovery": {"--wal", "--changes-per-block"},
               "checkpoint": {"--dirty"}}
    stray = [flag for flag, on in given.items() if on and flag not in belongs.get(operation, set())]
    if stray:
        raise UsageError(f"dbio ops {operation} takes no {', '.join(stray)}",
                         "--target, --cold and --baseline are for backup, --wal and --changes-per-block for recovery, "
                         "--dirty for checkpoint")
    if baseline:
        fio.find()  # one line naming the package when it is missing, before anything runs
    if operation == "backup" and destination is None:
        raise UsageError("dbio ops backup needs --target DIR", "give an empty or new directory for the backup")
    return Request(operation, backup_destination.check_shape(destination) if destination is not None else None,
                   _size("--wal", wal, DEFAULT_WAL) if operation == "recovery" else None,
                   _size("--dirty", dirty, DEFAULT_DIRTY) if operation == "checkpoint" else None, baseline, cold,
                   changes or 1)


def _size(flag: str, text: str | None, default: int) -> int:
    if text is None:
        return default
    try:
        value = parse_size(text)
    except UnitError as exc:
        raise UsageError(f"{flag} {text}: {exc}", f"give a size such as {flag} 256MB") from None
    if value < (1 << 20):
        raise UsageError(f"{flag} {text} is less than 1 MiB", f"give a size such as {flag} 256MB")
    return value


SWEEPABLE = ("index", "recovery", "checkpoint")  # a backup's destination is one directory, a load replaces the data set


def sweep_op(text: str) -> dict[str, Any]:
    """sweep --op OPERATION[=SIZE] (recovery=256MB: its WAL, checkpoint=64MB: its dirty data), checked."""
    operation, _, size = text.partition("=")
    if operation not in SWEEPABLE:
        raise UsageError(f"--op {text}: a sweep runs {', '.join(SWEEPABLE)}", "e.g. --op recovery=256MB")
    if size and operation == "index":
        raise UsageError(f"--op {text}: index takes no size", "give --op index")
    req = request(operation, None, size or None if operation == "recovery" else None,
                  size or None if operation == "checkpoint" else None, False)
    return {"operation": operation, "wal_bytes": req.wal_bytes, "dirty_bytes": req.dirty_bytes}


def summary_lines(document: dict[str, Any]) -> list[str]:
    lines = [f"{document['status']}: {ops_model.headline(ops_records.of(document))}"]
    for name, device in sorted((document["figures"].get("devices") or {}).items()):
        lines.append(f"  {name} ({', '.join(device.get('roles') or []) or '-'}): "
                     f"read {_mib(device.get('read_mib_per_s'))} MiB/s, written {_mib(device.get('write_mib_per_s'))} "
                     f"MiB/s, {_mib(device.get('utilization_pct'))}% busy")
    if document.get("status_reason"):
        lines.append(f"  {document['status_reason']}")
    lines.append(f"result: {Path(document['directory']) / 'result.json'}")
    lines.extend(f"report: {line}" for line in document.get("unwritten") or [])
    return lines


def _mib(value: Any) -> str:
    return "-" if value is None else f"{value:,.1f}"
