"""dbio history: every run and sweep under the given results directories, read as they are (no server), listed
in time order with what changed and whether it is beyond the runs' noise, and a trend page."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

from dbio import ops_result, output
from dbio import report as reports
from dbio import result as results
from dbio.errors import UsageError
from dbio.report import history_model, verdict
from dbio.stats import history
from dbio.sweep.document import SWEEP_FILE
from dbio.ui import UI

MAX_DEPTH = 3  # results/run, results/sweep/step, and one directory of results directories above them
# Directory entries looked at in all: a results directory holds about 7 a run (its entry, its files), so this
# is some 140,000 runs, found in about a second; far more is no results directory.
MAX_ENTRIES = 1_000_000


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
    for path in _result_files(directories, unreadable):
        run_dir = path.parent  # read as a directory's: a link at its result.json is not followed
        if ops_result.is_ops(run_dir):
            continue  # a maintenance operation's timing: no reads/s to trend
        try:
            result = results.read_result(run_dir)
        except UsageError as exc:
            unreadable.append(str(exc.args[0]) if exc.args else str(path))
            continue
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


class _Budget:
    """The directory entries history may still look at (MAX_ENTRIES in all)."""

    def __init__(self) -> None:
        self.left = MAX_ENTRIES


def _result_files(directories: list[Path], unreadable: list[str]) -> list[Path]:
    """Every result.json at most MAX_DEPTH directories down, links not followed (a results directory may hold
    links to anywhere). Each directory is read an entry at a time, and at most MAX_ENTRIES entries in all: one
    of millions of entries (another user's, say) is neither listed whole in memory nor walked to its end;
    unreadable then says where the looking stopped."""
    found: set[Path] = set()
    passed: dict[Path, str] = {}
    budget = _Budget()
    for top in directories:
        try:
            for kind, path in _walk(str(top.resolve()), 0, budget):
                if kind == _RESULT:
                    found.add(Path(path))
                else:
                    passed[Path(path)] = kind
        except _Exhausted as exc:
            unreadable.append(f"{top}: the looking stopped after {MAX_ENTRIES:,} directory entries (in {exc}); give "
                              "the results directories themselves")
            break
    for place, kind in sorted(passed.items()):  # named, never passed over without a word
        if kind == _LINK:
            unreadable.append(f"{place} is a link, not a plain file (a link found in a directory is never followed)")
        else:
            unreadable.append(str(results.unfinished_run(place)))
    return sorted(found)


_RESULT, _LINK, _UNFINISHED = "result", "link", "unfinished"  # what _walk finds: a result, a linked one, a run


class _Exhausted(Exception):
    """history's budget of directory entries is spent (where: the directory it was reading)."""


def _walk(here: str, depth: int, budget: _Budget) -> Iterator[tuple[str, str]]:
    """(_RESULT, a result.json), (_LINK, a result.json that is a link) and (_UNFINISHED, a run's directory with
    its manifest and no result: its dbio still runs, or was killed before writing it)."""
    try:
        entries = os.scandir(here)
    except OSError:
        return  # as os.walk: a directory that cannot be read holds nothing to list
    result = manifest = False
    with entries:
        for entry in entries:
            budget.left -= 1
            if budget.left < 0:
                raise _Exhausted(here)
            try:
                if entry.name == results.RESULT_FILE:
                    result = True
                    yield (_LINK if entry.is_symlink() else _RESULT), entry.path  # a FIFO: its reading says so
                elif entry.name == results.RUN_MANIFEST:
                    manifest = True
                elif depth < MAX_DEPTH and entry.is_dir(follow_symlinks=False):
                    yield from _walk(entry.path, depth + 1, budget)
            except OSError:
                continue
    if manifest and not result:
        yield _UNFINISHED, here
