"""The versioned result document: result.json (and samples.jsonl beside it).

A result echoes its inputs (config, setup, environment, server settings), keeps the raw
counters it was computed from, and carries the derived figures. Reports are pure functions
of this document, so a newer dbio can render an older result again.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

from dbio import jsondoc, readback, result_records, file_formats
from dbio.errors import UsageError
from dbio.filesystem import write_whole
from dbio.result_records import FORMAT, FORMAT_VERSION, ONLY_NODE, Result, completed, with_nodes

__all__ = ["FORMAT", "FORMAT_VERSION", "ONLY_NODE", "Result", "completed", "read", "read_result", "with_nodes"]
RESULT_FILE = "result.json"
SAMPLES_FILE = "samples.jsonl"
REPORT_FILE = "report.txt"
HTML_REPORT_FILE = "report.html"


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
    against what the reports read); refuses anything else with one line naming the file and what is wrong.
    A result.json found in a directory is read only when it is no link (readback.opened)."""
    target = path / RESULT_FILE if path.is_dir() else path
    if path.is_dir() and not target.exists() and (path / RUN_MANIFEST).exists():
        raise unfinished_run(path)
    document = load(target, _HINTS["missing"], readback.RESULT, follow=not path.is_dir())
    try:
        return result_records.load(document)
    except result_records.NotAResult:
        raise UsageError(f"{target} is not a dbio result", _HINTS["not_ours"]) from None
    except result_records.UnknownVersion as exc:
        raise UsageError(f"{target} {exc}", _HINTS["version"]) from None
    except jsondoc.Malformed as exc:
        raise UsageError(f"{target}: {exc}", _HINTS["malformed"]) from None


RUN_MANIFEST = "run.json"  # what a run writes first, and its result last
RESCUED_TO = "rescued-to"  # in a run directory its result could not be written to: where it went (run/abandoned.py)


def unfinished_run(directory: Path) -> UsageError:
    """The refusal of a run directory that has no result yet: its dbio still runs, or was killed."""
    from dbio.run.identity import client_alive

    try:
        client = readback.load_json(directory / RUN_MANIFEST, readback.MANIFEST, follow=False).get("client")
    except (OSError, ValueError, AttributeError):  # readback.Refused and jsondoc.Malformed are ValueErrors
        client = None
    if isinstance(client, str) and client_alive(client):
        return UsageError(f"{directory} is a run still going (dbio process {client}): it has no result yet",
                          "wait for it to end, then render it")
    if (directory / RESCUED_TO).exists():  # no run rebuilds it (abandoned.abandoned): its result is elsewhere
        try:  # the mark may be empty: its full disk kept even the path out
            where = readback.read_bytes(directory / RESCUED_TO, readback.MARK, follow=False).decode(
                errors="replace").strip()
        except (OSError, ValueError):  # readback.Refused is a ValueError
            where = ""
        return UsageError(f"{directory} could not take its result (a full disk, say): it was written to "
                          + (where or "dbio's rescue directory"),
                          f"render it from there: dbio report {where}" if where else
                          "find it under ~/.local/state/dbio/rescued or the temporary directory's dbio-rescued")
    parent = directory.resolve().parent
    results_dir = parent.parent if (parent / "sweep.json").exists() else parent  # a sweep's step is one level down
    return UsageError(f"{directory} is a run whose dbio process ended before writing its result",
                      f"the next dbio run with --results-dir {results_dir} rebuilds it from what it wrote "
                      "(marked lost); then render it")


def load_document(target: Path, form: str, version: int, shape: Any, *, kind: str, hints: tuple[str, str, str, str],
                  limits: readback.Kind, follow: bool, trusted: bool = False,
                  complete: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> dict[str, Any]:
    """A versioned document of dbio's (a result, a sweep): loaded strictly, then its format, its
    version and its shape checked, each refusal one line. hints: what to do when the file cannot
    be loaded, is not this kind of document, has a version this dbio does not read, is malformed.
    limits, follow: as load's. complete: what fills in an older document's missing facts, before its
    shape is checked."""
    missing, not_ours, other_version, malformed = hints
    document = load(target, missing, limits, follow=follow, trusted=trusted)
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


def load(target: Path, what: str, limits: readback.Kind, *, follow: bool, trusted: bool = False) -> Any:
    """One of dbio's JSON files, parsed strictly (jsondoc.loads), or one line saying why not. limits: the
    file's kind, what bounds its reading (readback.py); follow: whether a link at target is followed (the
    file the user named), or refused (one found in a directory). trusted: read only a file of the user
    running dbio or root (see trust.read_trusted)."""
    from dbio import trust

    try:
        return readback.load_json(target, limits, trust.read_trusted(target, limits) if trusted else None,
                                  follow=follow)
    except trust.UntrustedFile as exc:
        raise UsageError(f"refusing to use {target}: it {exc.problem}", "use only a file of your own (chown, "
                                                                          "chmod go-w)") from None
    except readback.Refused as exc:
        raise UsageError(str(exc), what) from None
    except FileNotFoundError:
        raise UsageError(f"{target} does not exist", what) from None
    except IsADirectoryError:
        raise UsageError(f"{target} is a directory without the file dbio looks for", what) from None
    except OSError as exc:
        raise UsageError(f"{target} cannot be read: {exc.strerror}", "check the path and its permissions") from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"{target} is not UTF-8 text (byte {exc.start})", what) from None
    except jsondoc.Malformed as exc:
        raise UsageError(f"{target} {exc}", what) from None


def read_samples(path: Path, skipped: list[str] | None = None) -> list[dict[str, Any]]:
    """samples.jsonl as a list (see iter_samples)."""
    return list(iter_samples(path, skipped))


def iter_samples(path: Path, skipped: list[str] | None = None) -> Iterator[dict[str, Any]]:
    """samples.jsonl one record at a time (a sustained run's file can be large), read as readback.lines reads
    a file of its kind (readback.SAMPLES: no link, a bounded line at a time, at most its limit in all). A line
    that is not a sample (cut short by a crash, damaged, not UTF-8, too long) is skipped; `skipped` gets one
    line for each. A file that is no plain file, or larger than any samples.jsonl, is refused
    (readback.Refused)."""
    try:
        for number, raw in readback.lines(path, readback.SAMPLES, skipped, follow=False):
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
