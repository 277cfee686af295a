"""dbio run: what it says after a run (quickstart says the same); the run itself is jobs/run.py's, and
run --repeat's commands/repeat.py's."""

from __future__ import annotations

from dbio import result as results
from dbio.jobs import run_files
from dbio.jobs.run import RunResult
from dbio.report import baseline_section, verdict, words


def summary_lines(result: RunResult) -> list[str]:
    doc = result.result
    judged = verdict.judge(doc)  # judged once for every line below
    valid = (doc.document.get("verdict") or judged.summary)["valid"]
    # a run that did not complete is not called VALID: its headline says what its figures cover
    said = "NOT VALID" if not valid else "VALID" if doc.status == "complete" else None
    lines = [f"{doc.status}{', ' + said if said else ''}: {judged.headline}"]
    efficiency = baseline_section.efficiency_line(doc)
    if efficiency is not None:
        lines.append(efficiency)
    for finding in judged.findings:
        if finding.level != "info":
            lines.append(f"{finding.level}: {words.say(doc, finding.message)}")
    lines.append(f"result: {result.directory / results.RESULT_FILE}")
    unwritten = {item.path: item for item in result.unwritten}
    for label, name in (("report:", results.REPORT_FILE), ("html:  ", results.HTML_REPORT_FILE)):
        path = result.directory / name
        if path in unwritten:
            lines.append(f"{label} {run_files.unwritten_line(unwritten[path])}")
        elif path.exists():
            lines.append(f"{label} {path}")
        else:
            lines.append(f"{label} not written (interrupted): {run_files.report_command(path)}")
    return lines
