"""--external-script (slob.conf's EXTERNAL_SCRIPT): a program of the user's called with `pre` when the
measured window opens and with `post` when it closes, as SLOB's users rely on it to bracket the window,
e.g. to take the storage array's own statistics for the same seconds.

Each call runs in a thread of its own, so the sessions run on while it runs and a slow script delays
neither the window's end nor anything else; the run waits for it at its very end, up to TIMEOUT_SECONDS
from its start, SIGNAL_WAIT_SECONDS after a signal and not at all after a second one: then it is stopped,
its record says why, and the window's result is written all the same (after_window.py). It gets the phase
and the run directory; its output goes to external-<phase>.log there, its exit status and times (and their
offset from the window's opening or closing) into result.json. dbio runs it only when it is trusted as a
configuration file is: owned by the user running dbio or root, and changeable by nobody else, all the way up."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import threading
import time
from pathlib import Path
from typing import IO, Any

from dbio import signals, trust
from dbio.errors import UsageError
from dbio.run.listeners import Listener, RunView
from dbio.run.phase import Phase
from dbio.ui import UI

TIMEOUT_SECONDS = 600  # a hung script must not hold the run (or its result) forever


def check(path_text: str | None, what: str = "--external-script") -> Path | None:
    """The script to run, refused in one line when it is missing, not a program, or not trusted. what: how the
    user gave it (--external-script; --event's exec:)."""
    if not path_text:
        return None
    path = Path(path_text).expanduser().resolve()
    try:
        st = os.stat(path)
    except OSError as exc:
        raise UsageError(f"{what} {path_text}: {exc.strerror}", "give the path of an existing program")
    if not stat.S_ISREG(st.st_mode) or not os.access(path, os.X_OK):
        raise UsageError(f"{what} {path_text} is not an executable file", "chmod u+x it, or give another")
    problem = trust.path_problem(path) or trust.entry_problem(st, trust.trusted_uids())
    if problem:
        raise UsageError(f"refusing to run {what} {path}: {problem}, so another user could change what "
                         "dbio runs", "make it (and its directories) yours and not writable by others")
    return path


PHASES = {"open": "pre", "close": "post"}  # the window's event -> the phase SLOB's scripts know
SIGNAL_WAIT_SECONDS = 5.0  # after a signal, what a script still running gets before it is stopped
STOP_SECONDS = 2.0  # between SIGTERM and SIGKILL of the script's process group


class Hook(Listener):
    """Calls the script at each of the window's events, each in a thread, and keeps what each call did. A listener of
    the run (run/listeners.py): pre as the window opens, post as it closes, or as the run cleans up after a window
    that opened and did not close (a failure); its calls outlive the run (finish), so the result gets their record
    once they ended (record), not in the outcome."""

    title = "the external script"

    def __init__(self, path: Path | None, directory: Path, ui: UI):
        self.path, self.directory, self.ui = path, directory, ui
        self.calls: list[dict[str, Any]] = []
        self._threads: list[threading.Thread] = []
        self._running: dict[str, subprocess.Popen] = {}
        self._window_at: dict[str, float] = {}  # phase -> when dbio opened or closed the window (this host)

    def phase(self, phase: Phase, run: RunView) -> None:
        if phase is Phase.WINDOW:
            self.window("open")
        elif phase is Phase.CLEAN_UP:
            if run.window.closed is not None:
                self.window("close")
            elif self.started("pre"):  # its post all the same
                self.start("post")

    def window(self, event: str) -> None:
        """The run's window opened or closed: start the script's call for it, and return at once."""
        self._window_at.setdefault(PHASES[event], time.time())
        self.start(PHASES[event])

    def started(self, phase: str) -> bool:
        return any(call["phase"] == phase for call in self.calls)

    def start(self, phase: str) -> None:
        if self.path is None or self.started(phase):
            return
        call: dict[str, Any] = {"phase": phase, "started": time.time(), "ended": None, "seconds": None,
                                "exit_status": None, "output": f"external-{phase}.log"}
        self.calls.append(call)
        thread = threading.Thread(target=self._call, args=(call,), name=f"dbio-external-{phase}", daemon=True)
        self._threads.append(thread)
        thread.start()

    def _call(self, call: dict[str, Any]) -> None:
        began = time.monotonic()
        try:
            with (self.directory / call["output"]).open("w") as out:
                self._run(call, out)
        except OSError as exc:  # its log cannot be written (a full or vanished results directory)
            call["output"] = None
            call["error"] = f"{exc.strerror or exc}"
        call["ended"] = time.time()
        call["seconds"] = round(time.monotonic() - began, 3)

    def _run(self, call: dict[str, Any], out: IO[str]) -> None:
        try:  # a session of its own: a Ctrl-C at the terminal is dbio's to handle, and a stop ends its children
            process = subprocess.Popen([str(self.path), call["phase"], str(self.directory)],
                                       stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                       cwd=self.directory, start_new_session=True)
        except OSError as exc:
            call["error"] = f"{exc.strerror or exc}"
            return
        self._running[call["phase"]] = process
        try:
            call["exit_status"] = process.wait(timeout=TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            call["stopped"] = f"still running after {TIMEOUT_SECONDS} s"
            stop_group(process)
        self._running.pop(call["phase"], None)

    def finish(self, came: signals.Received | None = None, *, interrupted: bool = False) -> None:
        """Wait for every call to end, each within TIMEOUT_SECONDS of its start. After a signal (one came noted,
        before or while waiting; or interrupted: the run was), within SIGNAL_WAIT_SECONDS of it, and at a second
        one at once: then it is stopped. Every wait is bounded."""
        began = time.monotonic()
        try:
            while any(thread.is_alive() for thread in self._threads):
                until = _wait_until(came, began if interrupted else None)
                if until is not None and time.monotonic() >= until:
                    break
                if came is None:
                    next(t for t in self._threads if t.is_alive()).join(signals.POLL_SECONDS)
                else:
                    came.wait(signals.POLL_SECONDS if until is None else min(signals.POLL_SECONDS,
                                                                              until - time.monotonic()))
        finally:  # a signal, or a second Ctrl-C while waiting: no script outlives the run
            for phase, process in list(self._running.items()):
                if process.poll() is None:
                    call = next(c for c in self.calls if c["phase"] == phase)
                    call["stopped"] = _why_stopped(came)
                    if came is not None and came.first:
                        call["signal"] = came.first
                    stop_group(process)
            for thread in self._threads:
                thread.join(STOP_SECONDS + 1)
        for call in self.calls:
            if "stopped" in call:
                what = f"was stopped ({call['stopped']})"
            elif call["exit_status"] is None:
                what = f"could not start ({call.get('error')})"
            elif call["exit_status"] != 0:
                what = f"exited with status {call['exit_status']}"
            else:
                continue
            where = f": see {self.directory / call['output']}" if call["output"] else ""
            self.ui.warn(f"the external script {what} at {call['phase']}{where}")

    def record(self) -> dict[str, Any] | None:
        """What each call did. Its offset_s runs from the moment dbio opened (pre) or closed (post) the
        window to the call's start, both on this host's clock, so it is exact: the window's ends in the
        timeline are the server's readings, whose clock this host knows only to within a round trip.
        None: the window never closed (a failed run's post)."""
        if self.path is None:
            return None
        calls = [{**call, "window": {"pre": "opened", "post": "closed"}[call["phase"]],
                  "offset_s": None if call["phase"] not in self._window_at
                  else round(call["started"] - self._window_at[call["phase"]], 3)}
                 for call in self.calls]
        return {"path": str(self.path), "calls": calls}


def _wait_until(came: signals.Received | None, interrupted_at: float | None) -> float | None:
    """When a call still running is stopped (monotonic), None while no signal came: SIGNAL_WAIT_SECONDS after
    the first signal (or the run's interruption), at once after a second."""
    if came is not None and len(came.names) > 1:
        return 0.0
    at = came.first_at if came is not None and came.first_at is not None else interrupted_at
    return None if at is None else at + SIGNAL_WAIT_SECONDS


def _why_stopped(came: signals.Received | None) -> str:
    if came is None or not came.first:
        return "the run was interrupted"
    if len(came.names) > 1:
        return f"{came.names[1]} came after {came.first}: stopped at once"
    return f"still running {SIGNAL_WAIT_SECONDS:g} s after {came.first}"


def stop_group(process: subprocess.Popen) -> None:
    """The script and whatever it started: SIGTERM to its process group, then SIGKILL."""
    for sig, wait in ((signal.SIGTERM, STOP_SECONDS), (signal.SIGKILL, None)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            pass
