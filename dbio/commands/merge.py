"""dbio merge: the runs of several hosts (one storage, one agreed start) as one result."""

from __future__ import annotations

from pathlib import Path

from dbio import merge as merging
from dbio import report as reports
from dbio import result as results
from dbio import trust
from dbio.commands.compare import input_names
from dbio.errors import UsageError
from dbio.report import verdict
from dbio.ui import UI


def merge(paths: list[Path], names: list[str] | None, out: Path, label: str | None, ui: UI) -> Path:
    """Read every input (one line and exit 2 for a bad one), merge, write a run directory at out."""
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
    results.write(out, document)
    (out / results.REPORT_FILE).write_text(reports.render(results.read(out), "text"))
    (out / results.HTML_REPORT_FILE).write_text(reports.render(results.read(out), "html"))
    ui.say(f"{document['status']}: {verdict.headline(results.read(out))}")
    for event in document["events"]:
        ui.say(event["message"])
    ui.say(f"result: {out / results.RESULT_FILE}")
    ui.say(f"report: {out / results.REPORT_FILE}")
    return out
