"""repeat.json: a run repeated N times (run --repeat N), its members and the spread of each headline figure.

The members are ordinary runs in the set's directory (r1 .. rN), each with its own result and reports.
The set records them and, per figure, the median, min, max and relative spread over the members that
completed: nothing is averaged into a new headline, and a median says it is one of N runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dbio import readback, result as results
from dbio.errors import UsageError
from dbio.filesystem import write_whole
from dbio.result_records import Result
from dbio.stats import catalogue, spread

FORMAT = "dbio-repeat"
FORMAT_VERSION = 1
REPEAT_FILE = "repeat.json"
# The figures whose spread the set records and compare judges (catalogue names).
FIGURES = ("reads_per_s", "avg_read_us", "read_mib_per_s", "writes_per_s", "statements_per_s", "select_p50_us",
           "select_p99_us", "reads_per_host_cpu_second", "host_busy_pct")


def member_name(round_: int) -> str:
    return f"r{round_}"


def summary(docs: list[dict[str, Any] | None]) -> dict[str, Any]:
    """Each figure's spread over the completed members (pure): {name: {n, median, min, max, spread_pct}}."""
    done = [catalogue.figures_of(doc) for doc in docs if doc and doc.get("status") == "complete"]
    out = {}
    for name in FIGURES:
        found = spread.spread([catalogue.value(f, name) for f in done])
        if found is not None:
            out[name] = found.to_dict()
    return out


def document(label: str, repeat: int, created_at: str, version: str) -> dict[str, Any]:
    return {"format": FORMAT, "format_version": FORMAT_VERSION, "dbio_version": version, "created_at": created_at,
            "label": label, "status": "running", "repeat": repeat,
            "members": [{"name": member_name(i), "status": "pending"} for i in range(1, repeat + 1)],
            "spread": {}}


def write(directory: Path, doc: dict[str, Any]) -> None:
    write_whole(directory / REPEAT_FILE, json.dumps(doc, indent=1) + "\n")


def is_repeat_set(path: Path) -> bool:
    return (path / REPEAT_FILE).exists() if path.is_dir() else path.name == REPEAT_FILE


def read(path: Path) -> dict[str, Any]:
    from dbio import file_formats

    target = path / REPEAT_FILE if path.is_dir() else path
    given = "give the directory dbio run --repeat wrote"
    return results.load_document(target, FORMAT, FORMAT_VERSION, file_formats.repeat_set(FORMAT_VERSION),
                                 kind="repeat set", limits=readback.REPEAT, follow=not path.is_dir(),
                                 hints=(given, given, "use the dbio that wrote it",
                                        "restore the repeat.json dbio wrote"))


def members(path: Path) -> list[tuple[str, Result]]:
    """The members that wrote a result, by name, in their order; one line when none did."""
    directory = path if path.is_dir() else path.parent
    doc = read(directory)
    out = []
    for member in doc["members"]:
        if (directory / member["name"] / results.RESULT_FILE).exists():  # its directory: a link there is not followed
            out.append((member["name"], results.read_result(directory / member["name"])))
    if not out:
        raise UsageError(f"{directory}: none of its {len(doc['members'])} runs wrote a result",
                         "run it again (dbio run --repeat N)")
    return out
