"""dbio merge: the runs of several hosts (one storage, one agreed start) as one result."""

from __future__ import annotations

import contextlib
from pathlib import Path

from dbio import merge as merging
from dbio import report as reports
from dbio import result as results
from dbio import result_records, trust
from dbio.jobs import run_files
from dbio.jobs.inputs import input_names, printable
from dbio.option_table import MAX_LABEL
from dbio.errors import DbioError, UsageError
from dbio.report import verdict
from dbio.ui import UI


def merge(paths: list[Path], names: list[str] | None, out: Path, label: str | None, ui: UI) -> Path:
    """Read every input (one line and exit 2 for a bad one), merge, write a run directory at out."""
    if label is not None:
        printable("--label", label)
        if len(label) > MAX_LABEL:
            raise UsageError(f"--label is {len(label)} characters long, longer than {MAX_LABEL}",
                             f"give a label of at most {MAX_LABEL} characters")
    if out.exists():
        raise UsageError(f"--out {out} already exists", "give a new directory for the merged result")
    problem = trust.path_problem(out.parent) if out.parent.exists() else None
    if problem:  # such a user could plant links that the merged files would be written through
        raise UsageError(f"--out {out}: {problem}", "choose a directory only you (or root) can write, all the way up")
    labels = input_names(paths, names)
    inputs = [(name, results.read(path)) for name, path in zip(labels, paths)]
    try:
        document = merging.merge(inputs, label or f"merge of {', '.join(labels)}")
    except merging.NotMergeable as exc:
        raise UsageError(f"cannot merge: {exc}", "merge runs of the same workload that measured the same seconds") \
            from None
    trust.make_private_directory(out, "the merged result")
    try:
        # mypy cannot type a lambda whose default binds the loop's variable
        written = run_files.write(out, document, [(key, name, lambda doc, form=form: reports.render(  # type: ignore[misc]
            result_records.of(results.with_nodes(doc)), form)) for key, name, form in MERGED_REPORTS])
    except OSError as exc:
        with contextlib.suppress(OSError):
            out.rmdir()  # nothing in it: the same --out can be given again
        raise DbioError(f"{out / results.RESULT_FILE} could not be written ({exc.strerror or exc})",
                        "free some space there, or give --out on another filesystem") from None
    ui.say(f"{document['status']}: {verdict.headline(results.read_result(out))}")
    for event in written.document["events"]:
        ui.say(event["message"])
    ui.say(f"result: {out / results.RESULT_FILE}")
    if written.unwritten:
        raise DbioError(f"the merged result is in {out}, but " + "; ".join(map(run_files.unwritten_line,
                                                                              written.unwritten)))
    ui.say(f"report: {out / results.REPORT_FILE}")
    return out


MERGED_REPORTS = (("report", results.REPORT_FILE, "text"), ("html", results.HTML_REPORT_FILE, "html"))
