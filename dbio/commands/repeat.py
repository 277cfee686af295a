"""dbio run --repeat N: the same run N times, one after the other, each an ordinary run directory (r1 .. rN)
inside the set's, and repeat.json tying them together with each headline figure's run-to-run spread.

Each repeat is judged like any run (a read-only run after an update run settles first: Engine.settle).
A repeat that fails or is interrupted ends the set: the spread then covers the runs that completed."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from dbio import __version__, repeat_set, results_dir
from dbio.jobs import baseline as baselines
from dbio.jobs import run as run_job
from dbio.config import Config
from dbio.errors import Interrupted, UsageError
from dbio.report import fmt, verdict
from dbio.stats import catalogue
from dbio.ui import UI


def check(repeat: int | None, config: Config) -> int:
    """--repeat: a whole number of runs, at least 1; runs that open their window at one agreed instant
    (--start-at) cannot be repeated. Refused before anything is changed."""
    if repeat is None:
        return 1
    if repeat < 1:
        raise UsageError(f"--repeat {repeat}: a run is repeated at least once", "give --repeat 1 or more (e.g. 3)")
    if repeat > 1 and config.run.start_at is not None:
        raise UsageError("--repeat runs one window after another; --start-at opens one run's window at one instant",
                         "drop --repeat, or --start-at")
    return repeat


@dataclass(frozen=True)
class RepeatResult:
    directory: Path
    document: dict[str, Any]  # repeat.json
    runs: tuple[run_job.RunResult, ...]

    @property
    def status(self) -> str:
        return self.document["status"]

    @property
    def signal(self) -> str | None:
        return next((r.signal for r in self.runs if r.signal), None)

    @property
    def unwritten(self) -> tuple[Any, ...]:
        return tuple(item for r in self.runs for item in r.unwritten)


RunOne = Callable[[Path], run_job.RunResult]  # one run, into the directory given


def run(config: Config, ui: UI, repeat: int, *, baseline: baselines.Request | None = None,
        run_one: RunOne | None = None) -> RepeatResult:
    """run_one: how each run is made (by default run_job.run on the configured target)."""
    if run_one is None:
        def run_one(member: Path) -> run_job.RunResult:
            return run_job.run(config, ui, directory=member, baseline=baseline)
    results_dir.check(config.run.results_dir)
    directory = results_dir.claim(config.run.results_dir / results_dir.run_name(config.run.label, "repeat"),
                                  "the repeat set")
    doc = repeat_set.document(config.run.label, repeat,
                              datetime.now(timezone.utc).isoformat(timespec="seconds"), __version__)
    repeat_set.write(directory, doc)
    ui.say(f"{repeat} runs, one after the other, in {directory}")
    runs: list[run_job.RunResult] = []
    try:
        for member in doc["members"]:
            ui.say(f"[{len(runs) + 1}/{repeat}] run {member['name']}")
            member["status"] = "running"
            repeat_set.write(directory, doc)
            outcome = run_one(directory / member["name"])
            runs.append(outcome)
            member["status"] = outcome.status
            ui.say(f"    {outcome.status}: {verdict.headline(outcome.result)}")
            if outcome.status != "complete" or outcome.signal:
                break
        statuses = {m["status"] for m in doc["members"]}
        doc["status"] = "complete" if statuses == {"complete"} else \
            "interrupted" if "interrupted" in statuses or any(r.signal for r in runs) else "failed"
    except BaseException as exc:
        interrupted = isinstance(exc, (KeyboardInterrupt, Interrupted))
        for member in doc["members"]:
            if member["status"] == "running":
                member["status"] = "interrupted" if interrupted else "failed"
        doc["status"] = "interrupted" if interrupted else "failed"
        if not runs and not (directory / doc["members"][0]["name"]).exists():  # nothing ran: leave nothing
            shutil.rmtree(directory, ignore_errors=True)
        raise
    finally:
        if directory.exists():
            doc["spread"] = repeat_set.summary([r.document for r in runs])
            repeat_set.write(directory, doc)
    return RepeatResult(directory, doc, tuple(runs))


def summary_lines(result: RepeatResult) -> list[str]:
    """Each run's headline, then each figure's median and spread over the runs that completed."""
    doc = result.document
    done = sum(1 for m in doc["members"] if m["status"] == "complete")
    lines = [f"{doc['status']}: {done} of {doc['repeat']} runs complete"]
    lines += spread_lines(doc["spread"])
    lines.append(f"repeat set: {result.directory / repeat_set.REPEAT_FILE}")
    lines += [f"run {r.directory.name}: {r.directory}" for r in result.runs]
    return lines


def spread_lines(spread: dict[str, dict[str, Any]]) -> list[str]:
    out = []
    for name in ("reads_per_s", "avg_read_us"):
        s = spread.get(name)
        if not s:
            continue
        fig = catalogue.figure(name)
        pct = f", {s['spread_pct']:.1f}% apart" if s.get("spread_pct") is not None else ""
        out.append(f"{fig.label}: median of {s['n']} runs {fmt.cell(s['median'], fig.kind)} "
                   f"(min {fmt.cell(s['min'], fig.kind)}, max {fmt.cell(s['max'], fig.kind)}{pct})")
    return out
