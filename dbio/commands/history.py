"""dbio history: every run and sweep under the given results directories, read as they are (no server), listed
in time order with what changed and whether it is beyond the runs' noise, and a trend page."""

from __future__ import annotations

import os
from pathlib import Path

from dbio import ops_result, output
from dbio import report as reports
from dbio import result as results
from dbio.errors import UsageError
from dbio.report import history_model, verdict
from dbio.stats import history
from dbio.sweep.document import SWEEP_FILE
from dbio.ui import UI

MAX_DEPTH = 3  # results/run, results/sweep/step, and one directory of results directories above them


def history_of(directories: list[Path], form: str, out: Path | None, ui: UI) -> None:
    for directory in directories:
        if not directory.is_dir():
            raise UsageError(f"{directory} is not a directory", "give the results directories dbio run and sweep wrote")
    entries, unreadable = read_all(directories)
    if not entries:
        raise UsageError(f"no dbio results under {', '.join(map(str, directories))}"
                         + (f" ({len(unreadable)} could not be read: {unreadable[0]})" if unreadable else ""),
                         "give the results directories dbio run and sweep wrote")
    model = history_model.build(entries, [str(d) for d in directories], unreadable)
    output.deliver(reports.render_model(model, form), out, ui)


def read_all(directories: list[Path]) -> tuple[list[history.Entry], list[str]]:
    """Each run's entry, and each sweep's from its steps; what could not be read, in one line each."""
    runs: list[history.Entry] = []
    steps: dict[Path, list[history.Entry]] = {}
    unreadable: list[str] = []
    for path in _result_files(directories):
        if ops_result.is_ops(path):
            continue  # a maintenance operation's timing: no reads/s to trend
        try:
            result = results.read_result(path)
        except UsageError as exc:
            unreadable.append(str(exc.args[0]) if exc.args else str(path))
            continue
        run_dir = path.parent
        found = history.entry(result, str(run_dir), result.verdict or verdict.summary(result))
        sweep = run_dir.parent
        if (sweep / SWEEP_FILE).is_file():
            steps.setdefault(sweep, []).append(found)
        else:
            runs.append(found)
    for sweep, members in steps.items():
        label = sweep.name.split("-sweep-", 1)[-1] if "-sweep-" in sweep.name else sweep.name
        runs.append(history.sweep_entry(str(sweep), label, members))
    return runs, unreadable


def _result_files(directories: list[Path]) -> list[Path]:
    """Every result.json at most MAX_DEPTH directories down, links not followed (a results directory may hold
    links to anywhere)."""
    found: set[Path] = set()
    for top in directories:
        top_depth = len(top.resolve().parts)
        for root, dirs, files in os.walk(top.resolve(), followlinks=False):
            here = Path(root)
            if len(here.parts) - top_depth >= MAX_DEPTH:
                dirs[:] = []
            if results.RESULT_FILE in files and not (here / results.RESULT_FILE).is_symlink():
                found.add(here / results.RESULT_FILE)
    return sorted(found)
