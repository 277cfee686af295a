"""The document a maintenance operation writes (dbio ops): result.json with format dbio-ops and
kind "ops", beside a run's results (a run's is format dbio-result). It echoes its inputs
(operation, configuration, places, host), keeps the readings its figures come from and the
operation's own record, and carries the figures (stats/ops.py). Reports read it and nothing else."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dbio import ops_records, readback, result as results
from dbio import file_formats
from dbio.ops_records import Operation

FORMAT = "dbio-ops"
FORMAT_VERSION = 1
KIND = "ops"


def is_ops(path: Path) -> bool:
    """Whether path (a directory or its result.json) holds an operation's result (a quick look:
    read() checks it properly)."""
    target = path / results.RESULT_FILE if path.is_dir() else path
    try:
        head = readback.read_bytes(target, readback.RESULT, follow=not path.is_dir(), head=4096)
    except (OSError, readback.Refused):  # read() says what is wrong with it
        return False
    return f'"format": "{FORMAT}"'.encode() in head or f'"format":"{FORMAT}"'.encode() in head



def read(path: Path) -> dict[str, Any]:
    """An operation's result.json (or its directory), checked; one line naming what is wrong otherwise."""
    target = path / results.RESULT_FILE if path.is_dir() else path
    return results.load_document(target, FORMAT, FORMAT_VERSION, file_formats.ops(FORMAT_VERSION),
                                 kind="operation result", limits=readback.RESULT, follow=not path.is_dir(),
                                 hints=("give a dbio ops directory or its result.json",
                                        "give the result.json dbio ops wrote", "render it with the dbio that wrote it",
                                        "run the operation again"))


def read_operation(path: Path) -> Operation:
    """An operation's result.json (or its directory), checked as read() does, as its reports read it."""
    return ops_records.of(read(path))


def write(directory: Path, document: dict[str, Any]) -> Path:
    return results.write(directory, document)
