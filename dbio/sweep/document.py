"""sweep.json: what a sweep runs, step by step, rewritten after every step (atomically)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from dbio.errors import UsageError

FORMAT = "dbio-sweep"
FORMAT_VERSION = 1
SWEEP_FILE = "sweep.json"
REPORT_FILE = "sweep.txt"
HTML_REPORT_FILE = "sweep.html"


def write(directory: Path, doc: dict[str, Any]) -> None:
    tmp = directory / (SWEEP_FILE + ".tmp")
    with tmp.open("w") as fh:
        json.dump(doc, fh, indent=1)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(directory / SWEEP_FILE)


def read(directory: Path) -> dict[str, Any]:
    path = directory / SWEEP_FILE if directory.is_dir() else directory
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        raise UsageError(f"{path} does not exist", "give the directory a dbio sweep wrote") from None
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path} cannot be read: {exc}", "give the directory a dbio sweep wrote") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise UsageError(f"{path} is not a dbio sweep", "give the directory a dbio sweep wrote")
    if doc.get("format_version", 0) > FORMAT_VERSION:
        raise UsageError(f"{path} has sweep format {doc.get('format_version')}; this dbio reads up to "
                         f"{FORMAT_VERSION}", "use a newer dbio")
    return doc


def is_sweep(path: Path) -> bool:
    return (path / SWEEP_FILE).exists() if path.is_dir() else path.name == SWEEP_FILE
