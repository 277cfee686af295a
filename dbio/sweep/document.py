"""sweep.json: what a sweep runs, step by step, rewritten after every step (atomically); and the
results its steps wrote, read back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dbio import jsondoc, ops_result, readback, result, sweep_records
from dbio.errors import UsageError
from dbio.filesystem import write_whole
from dbio.sweep_records import FORMAT, FORMAT_VERSION, Sweep

__all__ = ["FORMAT", "FORMAT_VERSION", "Sweep", "read", "read_sweep", "is_sweep", "load_steps", "write"]
SWEEP_FILE = "sweep.json"
REPORT_FILE = "sweep.txt"
HTML_REPORT_FILE = "sweep.html"


def write(directory: Path, doc: dict[str, Any]) -> None:
    write_whole(directory / SWEEP_FILE, json.dumps(doc, indent=1) + "\n")


def read(directory: Path, *, trusted: bool = False) -> dict[str, Any]:
    """sweep.json as a document (read_sweep's, checked), for the commands that resume and rewrite it."""
    return read_sweep(directory, trusted=trusted).document


_GIVEN = "give the directory a dbio sweep wrote"


def read_sweep(directory: Path, *, trusted: bool = False) -> Sweep:
    """sweep.json, typed by sweep_records.load (checked against what resume and the reports read); one
    line naming the file and what is wrong otherwise. trusted: only a file of the user running dbio, or
    root (a resume runs the configuration it holds)."""
    path = directory / SWEEP_FILE if directory.is_dir() else directory
    document = result.load(path, _GIVEN, readback.SWEEP, follow=not directory.is_dir(), trusted=trusted)
    try:
        return sweep_records.load(document)
    except sweep_records.NotASweep:
        raise UsageError(f"{path} is not a dbio sweep", _GIVEN) from None
    except sweep_records.UnknownVersion as exc:
        raise UsageError(f"{path} {exc}", "use the dbio that wrote it") from None
    except jsondoc.Malformed as exc:
        raise UsageError(f"{path}: {exc}", "restore the sweep.json dbio wrote, or start a new sweep") from None


def is_sweep(path: Path) -> bool:
    return (path / SWEEP_FILE).exists() if path.is_dir() else path.name == SWEEP_FILE


def load_steps(directory: Path, sweep: sweep_records.Sweep) -> dict[str, dict[str, Any]]:
    """The result of every step that wrote one, by step name."""
    out = {}
    for step in sweep.steps:
        path = directory / step.name  # its directory: a link at its result.json is not followed
        if (path / result.RESULT_FILE).exists():
            try:
                out[step.name] = ops_result.read(path) if ops_result.is_ops(path) else result.read(path)
            except UsageError:
                continue
    return out
