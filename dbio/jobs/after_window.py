"""What follows a run's measured window, up to its result written, as one path that no signal cuts: the
external script's post call waited for, fio's run after the database's, the result assembled, then its
reports and result.json written (run_files.py).

From the window's opening on (jobs/run.py), SIGINT and SIGTERM are noted and never raised (signals.Received):
each cuts short the step it comes in, within bounded time, and the steps after it go on, so that a window
measured in full is always written as its run's result. The script's call is stopped SIGNAL_WAIT_SECONDS
after the first signal, at once after a second (its record in the result says so); fio's run after the
database's is not begun, or is stopped (the baseline's `after_skipped` says which); the HTML report, whose
charts take seconds, is left out and named (`dbio report` makes it); the result is assembled and written
whatever comes. The result's `signal` says which came, how many, and the step the first came in; the command
then exits 130 (SIGINT) or 143 (SIGTERM)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from dbio import faults, signals
from dbio.jobs import baseline as baselines
from dbio.jobs import external_script, run_files
from dbio.run import assemble
from dbio.run.monitor import SampleWriter
from dbio.run.readings import Normalize
from dbio.run.listeners import Listener, RunView
from dbio.run.outcome import RunOutcome
from dbio.run.phase import Phase
from dbio.ui import UI

# The steps, as the result's `signal.during` names the one its first signal came in; "run": the run's own
# handling had it (runner.py: in its window, which it then ended, or as its sessions ended after it).
STEPS = ("run", "post_call", "baseline_after", "result", "reports")

BaselineAfter = Callable[[signals.Received], None]  # fio's run after the database's, into the baseline's record


class Shield(Listener):
    """A listener of the run (run/listeners.py): from its window's opening, the signals its caller notes (came) are
    never raised, since from then on the run has a result to keep (its own handling ends the run)."""

    title = "the signals' shield"

    def __init__(self, came: signals.Received):
        self.came = came

    def phase(self, phase: Phase, run: RunView) -> None:
        if phase is Phase.WINDOW:
            self.came.shield()
            self.came.step("run")


def finish(came: signals.Received, outcome: RunOutcome, man: dict[str, Any], normalize: Normalize,
           samples: SampleWriter, directory: Path, hook: external_script.Hook, ui: UI, *,
           events: list[dict[str, Any]], baseline: dict[str, Any] | None = None,
           baseline_after: BaselineAfter | None = None) -> run_files.Written:
    """The run's result and reports written, from its outcome; came: the signals noted since its window opened,
    shielded (none raised). events: what happened before the run (settling, pending writes)."""
    if outcome.signal is not None:
        came.note(outcome.signal, during="run")
    if baseline_after is not None:  # beside the post call: the script's call runs in a thread
        came.step("baseline_after")
        baseline_after(came)
    came.step("post_call")
    hook.finish(came)
    came.step("result")
    document = assemble.build(man, outcome, normalize, samples.records, directory.name)
    document["events"] += events
    if baseline is not None:
        baselines.attach(document, baseline)
    called = hook.record()
    if called is not None:
        document["external_script"] = called
    faults.point("run.results")  # a test fills the results filesystem here, or sends a signal
    came.step("reports")
    # the reports the result names (assemble.py: report.html only when html_report asked for it)
    return run_files.write_result(directory, document, samples, ui, html="html" in document["files"], came=came)
