"""sweep.json: what a sweep runs, step by step, rewritten after every step (atomically); and the
results its steps wrote, read back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dbio import ops_result, result, file_formats
from dbio.errors import UsageError
from dbio.filesystem import write_whole


FORMAT = "dbio-sweep"
FORMAT_VERSION = 1
SWEEP_FILE = "sweep.json"
REPORT_FILE = "sweep.txt"
HTML_REPORT_FILE = "sweep.html"


def write(directory: Path, doc: dict[str, Any]) -> None:
    write_whole(directory / SWEEP_FILE, json.dumps(doc, indent=1) + "\n")


def read(directory: Path, *, trusted: bool = False) -> dict[str, Any]:
    """sweep.json, checked against what resume and the reports read; one line naming the file and
    what is wrong otherwise. trusted: only a file of the user running dbio, or root (a resume runs
    the configuration it holds)."""
    path = directory / SWEEP_FILE if directory.is_dir() else directory
    given = "give the directory a dbio sweep wrote"
    return result.load_document(path, FORMAT, FORMAT_VERSION, file_formats.sweep(FORMAT_VERSION), kind="sweep",
                                hints=(given, given, "use the dbio that wrote it",
                                       "restore the sweep.json dbio wrote, or start a new sweep"), trusted=trusted)


def is_sweep(path: Path) -> bool:
    return (path / SWEEP_FILE).exists() if path.is_dir() else path.name == SWEEP_FILE


def load_steps(directory: Path, doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The result of every step that wrote one, by step name."""
    out = {}
    for step in doc["steps"]:
        path = directory / step["name"] / result.RESULT_FILE
        if path.exists():
            try:
                out[step["name"]] = ops_result.read(path) if ops_result.is_ops(path) else result.read(path)
            except UsageError:
                continue
    return out
