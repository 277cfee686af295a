"""A result and its reports written into their directory: each file whole or absent, one result per run.

The reports go first and the result last, each whole (filesystem.write_whole). A report that cannot
be written (a full disk), or that a signal left out (the HTML, whose charts take seconds), is absent
and named in the result: its entry in `files` is None and an event says why. When the result itself
cannot be written, the reports just written are removed (they would show a result that is not there):
a run's result is then rescued whole into a directory of dbio's own, and its run directory says where,
so that no later command rebuilds a second one."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from dbio import report
from dbio import result as results
from dbio import faults, result_records, results_dir, signals, trust
from dbio.report import verdict
from dbio.errors import DbioError
from dbio.filesystem import free_bytes, write_whole
from dbio.run import abandoned
from dbio.run.monitor import SampleWriter
from dbio.ui import UI


@dataclass(frozen=True)
class Unwritten:
    """A report that could not be written, and why (the system's words: 'No space left on device')."""

    path: Path
    reason: str


@dataclass(frozen=True)
class Written:
    directory: Path
    document: dict[str, Any]  # as written: a report that could not be written is named in it
    unwritten: tuple[Unwritten, ...] = ()


class LeftOut(Exception):
    """A report not made, on purpose, and why (a signal came: dbio ends within seconds, `dbio report` makes it)."""


Render = Callable[[dict[str, Any]], str]  # may raise LeftOut
Report = tuple[str, str, Render]  # its key in the result's `files`, its file name, how it is rendered


def run_reports(html: bool = True, came: signals.Received | None = None) -> list[Report]:
    """A run's reports, in the order the room left beside its result goes to them: the text, then the HTML.
    came: the signals noted since the run's window; once one came the HTML, whose charts take seconds, is
    left out, also when it comes while the HTML is being made."""
    def html_report(doc: dict[str, Any]) -> str:
        return report.render(result_records.of(doc), "html")

    return [("report", results.REPORT_FILE, lambda doc: report.render(result_records.of(doc), "text"))] + \
        ([("html", results.HTML_REPORT_FILE, html_report if came is None else _unless_signalled(html_report, came))]
         if html else [])


def _unless_signalled(render: Render, came: signals.Received) -> Render:
    """render made in a thread of its own, given up (LeftOut) as soon as a signal is noted: a rendering cannot
    be stopped, and this one is left behind (it ends with the process) rather than waited for."""
    def made(document: dict[str, Any]) -> str:
        if came.first:
            raise LeftOut(f"{came.first} came before it was made")
        out: dict[str, Any] = {}

        def make() -> None:
            try:
                faults.point("run.html")  # a test signals dbio while it makes the HTML report
                out["text"] = render(document)
            except BaseException as exc:  # given to the caller
                out["error"] = exc

        thread = threading.Thread(target=make, name="dbio-html-report", daemon=True)
        thread.start()
        while thread.is_alive():
            if came.first:
                raise LeftOut(f"{came.first} came while it was made")
            thread.join(signals.POLL_SECONDS)
        if "error" in out:
            raise out["error"]
        return out["text"]

    return made


def write(directory: Path, document: dict[str, Any], reports: list[Report],
          store: Callable[[Path, dict[str, Any]], Path] = results.write,
          came: signals.Received | None = None) -> Written:
    """The reports, then the result (store), each whole; raises OSError when the result cannot be written,
    leaving none of these files behind. The result comes first for the room there is, then the reports in
    their order: one the free space could not hold beside them is not begun, one a signal left out (LeftOut)
    is named. came: the signals noted since the run's window, recorded in the result as it is stored."""
    document = dict(document)  # the caller's is left as it was (a rescue writes it again, elsewhere)
    if document.get("format") == "dbio-result":  # the verdict, machine-readable, as the reports state it
        document["verdict"] = verdict.summary(result_records.of(document))
    written: list[Path] = []
    unwritten: list[Unwritten] = []
    made = [(key, name, render, _made(document, key, directory / name, render)) for key, name, render in reports]
    reports = [(key, name, render) for key, name, render, text in made if text is not None]
    texts = [text for _, _, _, text in made if text is not None]
    room = fitting(free_bytes(directory), _block(directory), len(results.serialized(document).encode()),
                   [len(text.encode()) for text in texts])
    for (key, name, _), fits in zip(reports, room):
        if not fits:
            unwritten.append(_missing(document, key, directory / name, os.strerror(errno.ENOSPC)))
    if unwritten:  # the reports that are written name those left out
        texts = [(_made(document, key, directory / name, render) if fits else None) or ""
                 for (key, name, render), fits in zip(reports, room)]
        room = [fits and bool(text) for fits, text in zip(room, texts)]
    for (key, name, _), text, fits in zip(reports, texts, room):
        if not fits:
            continue
        try:
            write_whole(directory / name, text)
        except OSError as exc:
            unwritten.append(_missing(document, key, directory / name, exc.strerror or str(exc)))
        else:
            written.append(directory / name)
    if came is not None and came.names:  # a signal after the window: which, how many, in which step
        document["signal"] = came.record()
    try:
        store(directory, document)
    except OSError:
        for path in written:
            with contextlib.suppress(OSError):
                path.unlink()
        raise
    return Written(directory, document, tuple(unwritten))


def _made(document: dict[str, Any], key: str, path: Path, render: Render) -> str | None:
    """A report's text, or None when it is left out (named in the document: its file null, an event why)."""
    try:
        return render(document)
    except LeftOut as why:
        document["files"] = {**(document.get("files") or {}), key: None}
        document["events"] = [*(document.get("events") or []), {
            "t": time.time(), "kind": "report_left_out", "file": path.name,
            "message": f"{path} was left out ({why}: dbio ends within seconds of a signal); {report_command(path)} "
                       "makes it"}]
        return None


def _missing(document: dict[str, Any], key: str, path: Path, reason: str) -> Unwritten:
    """A report that could not be written, named in the document: its file null, an event saying why."""
    document["files"] = {**(document.get("files") or {}), key: None}
    document["events"] = [*(document.get("events") or []), {
        "t": time.time(), "kind": "report_unwritten", "file": path.name,
        "message": f"{path} could not be written ({reason}); {rerender(path)}"}]
    return Unwritten(path, reason)


def fitting(free: int, block: int, result: int, reports: list[int]) -> list[bool]:
    """Which reports (their sizes, in the order of priority) fit in free bytes beside the result, each
    file taking whole blocks and one more for its own keeping (pure)."""
    def need(size: int) -> int:
        return (-(-size // block) + 1) * block

    left = free - need(result + 4096)  # and the events that name a report left out
    out = []
    for size in reports:
        out.append(need(size) <= left)
        left -= need(size) if out[-1] else 0
    return out


def _block(directory: Path) -> int:
    return os.statvfs(directory).f_frsize or 4096


def report_command(path: Path) -> str:
    """The command that writes a run's report at path (one not written: interrupted, or a full disk)."""
    form = "html" if path.suffix == ".html" else "text"
    return f"dbio report {path.parent} --format {form} --out {path}"


def rerender(path: Path) -> str:
    return f"once there is room: {report_command(path)}"


def unwritten_line(item: Unwritten) -> str:
    return f"{item.path} could not be written ({item.reason}); {rerender(item.path)}"


def write_result(directory: Path, document: dict[str, Any], samples: SampleWriter | None, ui: UI, *,
                 html: bool = True, came: signals.Received | None = None) -> Written:
    """A run's result.json and reports in its directory, or, when its result cannot be written there, in a
    rescue directory that the message names (with the samples the run directory could not take). came: as in
    run_reports and write."""
    try:
        return write(directory, document, run_reports(html, came), came=came)
    except OSError as exc:
        return _rescue(directory, document, samples, ui, html, exc.strerror or str(exc), came)


RESCUE_FAILED = "free some space; the next dbio run with this --results-dir rebuilds the run from what it wrote " \
                "(marked lost)"


def _rescue(directory: Path, document: dict[str, Any], samples: SampleWriter | None, ui: UI, html: bool,
            reason: str, came: signals.Received | None = None) -> Written:
    try:
        rescue = results_dir.claim(rescue_directory(directory.name), "the rescued result")
    except OSError as exc:
        raise DbioError(f"the result could not be written to {directory} ({reason}) nor to a rescue directory "
                        f"({exc.strerror or exc})", RESCUE_FAILED) from None
    document = {**document, "events": [*document["events"], {
        "t": time.time(), "kind": "rescued",
        "message": f"{directory} could not be written ({reason}); the result was written to {rescue}"}]}
    if document["status"] == "complete":
        document["status"], document["status_reason"] = "failed", f"results directory unwritable: {reason}"
    try:
        if samples is not None:
            with (rescue / results.SAMPLES_FILE).open("w") as fh:
                for record in samples.records():
                    fh.write(json.dumps(record, separators=(",", ":")) + "\n")
        written = write(rescue, document, run_reports(html, came), came=came)
        write_whole(rescue / abandoned.RESCUE_MARK, f"{directory}\n")  # last: a run rescued whole is not "recovered"
    except OSError as exc:  # nothing half rescued: the next run rebuilds the run from its own directory (lost)
        shutil.rmtree(rescue, ignore_errors=True)
        raise DbioError(f"the result could not be written to {directory} ({reason}) nor to {rescue} "
                        f"({exc.strerror or exc})", RESCUE_FAILED) from None
    _mark_rescued(directory, rescue)
    ui.warn(f"{directory} could not be written ({reason}): the result is in {rescue}")
    return written


def _mark_rescued(directory: Path, rescue: Path) -> None:
    """The run directory names where its result went, as far as its full disk lets it: the file alone
    (which takes no data block) tells a later command not to rebuild the run as lost."""
    try:
        fd = os.open(directory / abandoned.RESCUED_TO, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    except OSError:
        return  # the rescue directory's mark still says it
    try:
        os.write(fd, f"{rescue}\n".encode())
    except OSError:
        pass
    finally:
        os.close(fd)


def rescue_directory(name: str) -> Path:
    bases = abandoned.rescue_bases()
    for base in bases:
        try:
            base.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        if trust.path_problem(base) is None:  # never a shared temporary directory someone else made
            return base / f"{name}-{int(time.time())}"
    return bases[0] / f"{name}-{int(time.time())}"
