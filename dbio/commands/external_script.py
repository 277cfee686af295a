"""--external-script: a program of the user's run before a run (`pre`) and after it (`post`), as
SLOB's EXTERNAL_SCRIPT is, e.g. to collect the storage array's own statistics for the window.

It gets the phase and the run directory; its output goes to external-<phase>.log there and its
exit status into result.json. dbio runs it only when it is trusted as a configuration file is:
owned by the user running dbio or root, and changeable by nobody else, all the way up."""

from __future__ import annotations

import os
import stat
import subprocess
import time
from pathlib import Path
from typing import Any

from dbio import trust
from dbio.errors import UsageError
from dbio.ui import UI

TIMEOUT_SECONDS = 600  # a hung script must not hold the run (or its result) forever


def check(path_text: str | None) -> Path | None:
    """The script to run, refused in one line when it is missing, not a program, or not trusted."""
    if not path_text:
        return None
    path = Path(path_text).expanduser().resolve()
    try:
        st = os.stat(path)
    except OSError as exc:
        raise UsageError(f"--external-script {path_text}: {exc.strerror}", "give the path of an existing program")
    if not stat.S_ISREG(st.st_mode) or not os.access(path, os.X_OK):
        raise UsageError(f"--external-script {path_text} is not an executable file", "chmod u+x it, or give another")
    problem = trust.path_problem(path) or trust.entry_problem(st, trust.trusted_uids())
    if problem:
        raise UsageError(f"refusing to run --external-script {path}: {problem}, so another user could change what "
                         "dbio runs", "make it (and its directories) yours and not writable by others")
    return path


class Hook:
    """Calls the script at each phase and keeps what it did, for result.json."""

    def __init__(self, path: Path | None, directory: Path, ui: UI):
        self.path, self.directory, self.ui = path, directory, ui
        self.calls: list[dict[str, Any]] = []

    def call(self, phase: str) -> None:
        if self.path is None:
            return
        log = self.directory / f"external-{phase}.log"
        started = time.monotonic()
        with log.open("w") as out:
            try:
                done = subprocess.run([str(self.path), phase, str(self.directory)], stdin=subprocess.DEVNULL,
                                      stdout=out, stderr=subprocess.STDOUT, cwd=self.directory,
                                      timeout=TIMEOUT_SECONDS, check=False)
                status: int | None = done.returncode
            except subprocess.TimeoutExpired:
                status = None
            except OSError as exc:
                out.write(f"dbio could not start it: {exc.strerror}\n")
                status = None
        self.calls.append({"phase": phase, "exit_status": status, "seconds": round(time.monotonic() - started, 3),
                           "output": log.name})
        if status != 0:
            what = f"exited with status {status}" if status is not None else "did not finish (or could not start)"
            self.ui.warn(f"the external script {what} at {phase}: see {log}")

    def record(self) -> dict[str, Any] | None:
        return {"path": str(self.path), "calls": self.calls} if self.path is not None else None
