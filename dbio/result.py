"""The versioned result document: result.json (and samples.jsonl beside it).

A result echoes its inputs (config, setup, environment, server settings), keeps the raw
counters it was computed from, and carries the derived figures. Reports are pure functions
of this document, so a newer dbio can render an older result again.
"""

from __future__ import annotations

import json
import os
import stat
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

from dbio import jsondoc, result_records, file_formats
from dbio.errors import UsageError
from dbio.filesystem import write_whole
from dbio.result_records import FORMAT, FORMAT_VERSION, ONLY_NODE, Result, completed, with_nodes

__all__ = ["FORMAT", "FORMAT_VERSION", "ONLY_NODE", "Result", "completed", "read", "read_result", "with_nodes"]
RESULT_FILE = "result.json"
SAMPLES_FILE = "samples.jsonl"
REPORT_FILE = "report.txt"
HTML_REPORT_FILE = "report.html"
# Far above any result: an 8-hour run sampled each second is tens of MiB.
MAX_DOCUMENT_BYTES = 1024 ** 3


def iso(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    return datetime.fromtimestamp(epoch, timezone.utc).isoformat(timespec="milliseconds")


def write(directory: Path, document: dict[str, Any]) -> Path:
    """Whole (filesystem.write_whole): a reader never sees half a result.json, nor does a full disk leave one."""
    path = directory / RESULT_FILE
    write_whole(path, serialized(document))
    return path


def serialized(document: dict[str, Any]) -> str:
    """The text of a result.json."""
    # the last guard of what is refused at reading: a number no reader would take is written as absent
    return json.dumps(jsondoc.real_or_none(document), indent=1, default=_json_default, allow_nan=False) + "\n"


def _json_default(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (set, tuple)):
        return list(value)
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def read(path: Path) -> dict[str, Any]:
    """A result.json (or the directory holding one) as a document (read_result's, migrated and checked)."""
    return dict(read_result(path).document)


_HINTS = {"missing": "give a run directory or its result.json", "not_ours": "give the result.json a dbio run wrote",
          "version": "render it with the dbio that wrote it", "malformed": "re-run, or render another result"}


def read_result(path: Path) -> Result:
    """A result.json (or the directory holding one), typed by result_records.load (migrated and checked
    against what the reports read); refuses anything else with one line naming the file and what is wrong."""
    target = path / RESULT_FILE if path.is_dir() else path
    if path.is_dir() and not target.exists() and (path / RUN_MANIFEST).exists():
        raise unfinished_run(path)
    document = load(target, _HINTS["missing"])
    try:
        return result_records.load(document)
    except result_records.NotAResult:
        raise UsageError(f"{target} is not a dbio result", _HINTS["not_ours"]) from None
    except result_records.UnknownVersion as exc:
        raise UsageError(f"{target} {exc}", _HINTS["version"]) from None
    except jsondoc.Malformed as exc:
        raise UsageError(f"{target}: {exc}", _HINTS["malformed"]) from None


RUN_MANIFEST = "run.json"  # what a run writes first, and its result last


def unfinished_run(directory: Path) -> UsageError:
    """The refusal of a run directory that has no result yet: its dbio still runs, or was killed."""
    from dbio.run.identity import client_alive

    try:
        client = jsondoc.loads((directory / RUN_MANIFEST).read_bytes().decode()).get("client")
    except (OSError, ValueError, AttributeError):
        client = None
    if isinstance(client, str) and client_alive(client):
        return UsageError(f"{directory} is a run still going (dbio process {client}): it has no result yet",
                          "wait for it to end, then render it")
    parent = directory.resolve().parent
    results_dir = parent.parent if (parent / "sweep.json").exists() else parent  # a sweep's step is one level down
    return UsageError(f"{directory} is a run whose dbio process ended before writing its result",
                      f"the next dbio run with --results-dir {results_dir} rebuilds it from what it wrote "
                      "(marked lost); then render it")


def load_document(target: Path, form: str, version: int, shape: Any, *, kind: str, hints: tuple[str, str, str, str],
                  trusted: bool = False,
                  complete: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> dict[str, Any]:
    """A versioned document of dbio's (a result, a sweep): loaded strictly, then its format, its
    version and its shape checked, each refusal one line. hints: what to do when the file cannot
    be loaded, is not this kind of document, has a version this dbio does not read, is malformed.
    complete: what fills in an older document's missing facts, before its shape is checked."""
    missing, not_ours, other_version, malformed = hints
    document = load(target, missing, trusted=trusted)
    try:
        file_formats.check_header(document, form, version, kind)
    except file_formats.OtherKind:
        raise UsageError(f"{target} is not a dbio {kind}", not_ours) from None
    except file_formats.UnknownVersion as exc:
        raise UsageError(f"{target} {exc}", other_version) from None
    if complete is not None:
        document = complete(document)
    try:
        jsondoc.check(document, shape)
    except jsondoc.Malformed as exc:
        raise UsageError(f"{target}: {exc}", malformed) from None
    return document


def load(target: Path, what: str, *, trusted: bool = False) -> Any:
    """One of dbio's JSON files, parsed strictly (jsondoc.loads), or one line saying why not.
    trusted: read only a file of the user running dbio or root (see trust.read_trusted)."""
    from dbio import trust

    try:
        data = trust.read_trusted(target) if trusted else read_plain(target, what)
    except trust.UntrustedFile as exc:
        raise UsageError(f"refusing to use {target}: it {exc.problem}", "use only a file of your own (chown, "
                                                                          "chmod go-w)") from None
    except FileNotFoundError:
        raise UsageError(f"{target} does not exist", what) from None
    except IsADirectoryError:
        raise UsageError(f"{target} is a directory without the file dbio looks for", what) from None
    except OSError as exc:
        raise UsageError(f"{target} cannot be read: {exc.strerror}", "check the path and its permissions") from None
    try:
        return jsondoc.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise UsageError(f"{target} is not UTF-8 text (byte {exc.start})", what) from None
    except jsondoc.Malformed as exc:
        raise UsageError(f"{target} {exc}", what) from None


def read_plain(target: Path, what: str, head: int | None = None) -> bytes:
    """A document's bytes (its first head bytes), only from a plain file of a believable size: a FIFO
    or a device (a link another user planted) would block or never end, a sparse file of terabytes
    would fill memory. what: how to fix it, for the one line."""
    fd = os.open(target, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(target)
        if not stat.S_ISREG(st.st_mode):
            raise UsageError(f"{target} is not a plain file (a FIFO, a device or a socket)", what)
        if st.st_size > MAX_DOCUMENT_BYTES:
            raise UsageError(f"{target} is larger than any document dbio writes "
                             f"({st.st_size:,} bytes, at most {MAX_DOCUMENT_BYTES:,})", what)
        return fh.read(MAX_DOCUMENT_BYTES + 1 if head is None else head)


def read_samples(path: Path, skipped: list[str] | None = None) -> list[dict[str, Any]]:
    """samples.jsonl as a list (see iter_samples)."""
    return list(iter_samples(path, skipped))


def iter_samples(path: Path, skipped: list[str] | None = None) -> Iterator[dict[str, Any]]:
    """samples.jsonl one record at a time (a sustained run's file can be large). A line that is not
    a sample (cut short by a crash, damaged, not UTF-8) is skipped; `skipped` gets one line for each."""
    try:
        with path.open("rb") as fh:
            for number, raw in enumerate(fh, 1):
                try:
                    record = jsondoc.loads(raw.decode("utf-8"))
                    jsondoc.check(record, file_formats.SAMPLE)
                except UnicodeDecodeError:
                    problem = "is not UTF-8 text"
                except jsondoc.Malformed as exc:
                    problem = str(exc)
                else:
                    yield record
                    continue
                if skipped is not None:
                    skipped.append(f"line {number} {problem}")
    except FileNotFoundError:
        return
