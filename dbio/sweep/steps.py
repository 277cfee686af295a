"""A sweep's pending steps run in order, each its own run (or maintenance operation) recorded in
sweep.json as it goes; then the sweep's reports, its closing lines, and how it ended."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from dbio import ops_records, report, sweep_records
from dbio.jobs import baseline as baselines
from dbio.jobs import run_files
from dbio.jobs import run as run_job
from dbio.sweep import layout as sweep_layout
from dbio.sweep.growth import next_doubling, objective_of, probe_record, search_next
from dbio.sweep.step_config import step_config
from dbio.config import Config
from dbio.errors import DbioError, Interrupted, Terminated
from dbio.filesystem import write_whole
from dbio.report import sweep_model
from dbio.run.identity import client_id
from dbio.stats import catalogue
from dbio.sweep import document, plan
from dbio.ui import UI
from dbio.units import format_duration


def execute(directory: Path, doc: dict[str, Any], ui: UI, dsn: str | None,
             baseline: baselines.Request | None = None) -> Path:
    """Run the pending steps in order; `dsn` is the connection string this process runs with (the
    one in sweep.json has no password)."""
    started = time.monotonic()
    doc["client"] = client_id()
    wall_before = doc.get("wall_seconds") or 0.0
    durations: list[float] = []
    stopped_by: str | None = None  # the signal that interrupted a step
    try:
        while True:
            pending = [s for s in doc["steps"] if s["status"] == "pending"]
            if not pending and doc.get("search") and search_next(doc, ui, dsn):
                continue  # resumed after a probe the sweep did not decide on
            if not pending:
                break
            outcome = _run_step(directory, doc, pending[0], ui, dsn, durations, baseline)
            if outcome.status != "complete" or outcome.signal:  # a signal may come after a whole step (its baseline)
                doc["status"] = "interrupted" if outcome.signal else outcome.status
                stopped_by = outcome.signal
                break
            if doc.get("until_peak"):
                next_doubling(doc, pending[0], ui, dsn)
            if doc.get("search"):
                search_next(doc, ui, dsn)
            document.write(directory, doc)
        if doc["status"] == "running":
            doc["status"] = "complete"
    except (KeyboardInterrupt, Interrupted) as exc:  # Interrupted: a signal between a step's parts (its baseline)
        doc["status"] = "interrupted"
        stopped_by = "SIGTERM" if isinstance(exc, Terminated) else stopped_by
    except BaseException:
        doc["status"] = "failed"
        raise
    finally:
        for step in doc["steps"]:
            if step["status"] == "running":
                step["status"] = "interrupted"
        doc["wall_seconds"] = round(wall_before + time.monotonic() - started, 3)
        try:
            document.write(directory, doc)
        except OSError as exc:  # a full disk: said in one line (the steps' own results are kept)
            raise DbioError(f"{directory / document.SWEEP_FILE} could not be written ({exc.strerror or exc})",
                            f"free some space there, then dbio sweep --resume {directory}") from None
        unwritten = _write_reports(directory, doc)
    return _finish(directory, doc, ui, stopped_by, unwritten)


def _run_step(directory: Path, doc: dict[str, Any], step: dict[str, Any], ui: UI, dsn: str | None,
              durations: list[float], baseline: baselines.Request | None) -> run_job.RunResult:
    """One step: its own run directory inside the sweep's; the step's record updated as it goes."""
    done = sum(1 for s in doc["steps"] if s["status"] == "complete")
    left = sum(1 for s in doc["steps"] if s["status"] == "pending")
    eta = f", about {format_duration(sum(durations) / len(durations) * left)} left" if durations else ""
    grows = doc.get("until_peak") or doc.get("search")
    ui.say(f"[{done + 1}/{len(doc['steps'])}{'+' if grows else ''}] step {step['name']}{eta}")
    config = step_config(doc["base"], step["values"], Path.cwd(), dsn)
    t0 = time.monotonic()
    step["started_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    step["status"] = "running"
    document.write(directory, doc)
    try:
        if any(plan.Vary(key, tuple(values)).layout for key, values in doc.get("vary") or []):
            sweep_layout.prepare(config, ui)
        if doc.get("op"):
            return _op_step(directory, doc, step, ui, config, durations, t0)
        outcome = run_job.run(config, ui, directory=directory / step["name"], baseline=baseline,
                              step_label=step["name"])
    except Interrupted:
        step["status"] = "interrupted"
        raise
    except DbioError as exc:
        step["status"], step["error"] = "failed", str(exc)
        raise
    durations.append(time.monotonic() - t0)
    step["status"] = outcome.status
    if outcome.status == "failed" and outcome.document.get("status_reason"):
        step["error"] = outcome.document["status_reason"]  # the sweep's last line says why it stopped
    step["seconds"] = round(durations[-1], 3)
    step["window_seconds"] = catalogue.value(catalogue.figures_of(outcome.document), "window_seconds")
    step["headline"] = step_headline(outcome.document)
    if doc.get("search") and outcome.status == "complete":
        step["probe"] = probe_record(outcome.document, objective_of(doc))
    ui.say(f"    {outcome.status}: {report.verdict.headline(outcome.result)}")
    return outcome


def _op_step(directory: Path, doc: dict[str, Any], step: dict[str, Any], ui: UI, config: Config,
             durations: list[float], t0: float) -> Any:
    """A step of a sweep of a maintenance operation (dbio ops), recorded as a run's step is."""
    from dbio.jobs import ops as ops_job
    from dbio.report import ops_model

    outcome = ops_job.step(config, ui, doc["op"], directory / step["name"])
    durations.append(time.monotonic() - t0)
    step.update(status=outcome.status, seconds=round(durations[-1], 3),
                window_seconds=outcome.document["figures"].get("window_seconds"))
    ui.say(f"    {outcome.status}: {ops_model.headline(ops_records.of(outcome.document))}")
    return outcome


def _finish(directory: Path, doc: dict[str, Any], ui: UI, stopped_by: str | None,
            unwritten: list[run_files.Unwritten] | None = None) -> Path:
    """The sweep's summary and files; an interrupted or failed sweep raises, saying how to resume, and so
    does one whose reports a full disk kept out, saying how to write them."""
    sweep = sweep_records.of(doc)
    for line in sweep_model.summary_lines(sweep_model.build(sweep, document.load_steps(directory, sweep))):
        ui.say(line)
    ui.say(f"sweep: {directory / document.SWEEP_FILE}")
    unwritten = unwritten or []
    missing = {item.path: item for item in unwritten}
    for label, name in (("report:", document.REPORT_FILE), ("html:  ", document.HTML_REPORT_FILE)):
        path = directory / name
        ui.say(f"{label} {run_files.unwritten_line(missing[path]) if path in missing else path}")
    if doc["status"] == "interrupted":
        error = Terminated if stopped_by == "SIGTERM" else Interrupted
        raise error(f"sweep interrupted after {_count(doc, 'complete')} of {len(doc['steps'])} steps",
                    f"finish it with dbio sweep --resume {directory}")
    if doc["status"] != "complete":
        failed = next((s for s in doc["steps"] if s["status"] == "failed" and s.get("error")), None)
        why = f": step {failed['name']} {failed['error']}" if failed else ""
        raise DbioError(f"sweep {doc['status']} after {_count(doc, 'complete')} of {len(doc['steps'])} steps{why}",
                        f"see the step's result; finish it with dbio sweep --resume {directory}")
    if unwritten:
        raise DbioError(f"the sweep is complete, but {len(unwritten)} of its reports could not be written "
                        f"({unwritten[0].reason})", "see above how to write them once there is room")
    return directory


def _count(doc: dict[str, Any], status: str) -> int:
    return sum(1 for s in doc["steps"] if s["status"] == status)


# What sweep.json keeps of each step (by catalogue name): --until-peak reads it to decide the next doubling.
STEP_HEADLINE = ("reads_per_s", "avg_read_us")


def step_headline(doc: dict[str, Any]) -> dict[str, Any]:
    return catalogue.values(catalogue.figures_of(doc), STEP_HEADLINE)


def _write_reports(directory: Path, doc: dict[str, Any]) -> list[run_files.Unwritten]:
    """sweep.txt and sweep.html, each whole or absent (a full disk): those that could not be written."""
    sweep = sweep_records.of(doc)
    model = sweep_model.build(sweep, document.load_steps(directory, sweep))
    unwritten = []
    for name, form in ((document.REPORT_FILE, "text"), (document.HTML_REPORT_FILE, "html")):
        try:
            write_whole(directory / name, report.render_model(model, form))
        except OSError as exc:
            unwritten.append(run_files.Unwritten(directory / name, exc.strerror or str(exc)))
    return unwritten

