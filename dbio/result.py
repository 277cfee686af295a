"""The versioned result document: result.json (and samples.jsonl beside it).

A result echoes its inputs (config, setup, environment, server settings), keeps the raw
counters it was computed from, and carries the derived figures. Reports are pure functions
of this document, so a newer dbio can render an older result again.
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from dbio.errors import UsageError

FORMAT = "dbio-result"
FORMAT_VERSION = 1
RESULT_FILE = "result.json"
SAMPLES_FILE = "samples.jsonl"
REPORT_FILE = "report.txt"
HTML_REPORT_FILE = "report.html"


def iso(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    return datetime.fromtimestamp(epoch, timezone.utc).isoformat(timespec="milliseconds")


def write(directory: Path, document: dict[str, Any]) -> Path:
    """Atomically: a reader never sees half a result.json."""
    path = directory / RESULT_FILE
    tmp = directory / (RESULT_FILE + ".tmp")
    with tmp.open("w") as fh:
        json.dump(document, fh, indent=1, default=_json_default)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(path)
    return path


def _json_default(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (set, tuple)):
        return list(value)
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def read(path: Path) -> dict[str, Any]:
    """A result.json (or the directory holding one); refuses what it cannot read, clearly."""
    target = path / RESULT_FILE if path.is_dir() else path
    try:
        text = target.read_text()
    except FileNotFoundError:
        raise UsageError(f"{target} does not exist", "give a run directory or its result.json") from None
    except OSError as exc:
        raise UsageError(f"{target} cannot be read: {exc.strerror}", "check the path and its permissions") from None
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"{target} is not valid JSON ({exc.msg} at line {exc.lineno}); it may be truncated",
                         "re-run, or render another result") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise UsageError(f"{target} is not a dbio result", "give the result.json a dbio run wrote")
    version = document.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise UsageError(f"{target} has result format {version!r}; this dbio reads up to {FORMAT_VERSION}",
                         "render it with a newer dbio")
    missing = [k for k in ("status", "config", "figures") if k not in document]
    if missing:
        raise UsageError(f"{target} lacks {', '.join(missing)}; it is incomplete", "re-run to get a complete result")
    return document


def read_samples(path: Path) -> list[dict[str, Any]]:
    """samples.jsonl; a last line cut short by a crash is skipped."""
    return list(iter_samples(path))


def iter_samples(path: Path) -> Iterator[dict[str, Any]]:
    """samples.jsonl one record at a time (a sustained run's file can be large)."""
    try:
        with path.open() as fh:
            for line in fh:
                try:
                    yield json.loads(line)
                except ValueError:
                    continue
    except FileNotFoundError:
        return
