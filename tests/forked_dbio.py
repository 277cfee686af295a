"""dbio's command line run as a process of its own without starting a new interpreter: a fork of the test's
process, with dbio and its heavy imports (psycopg, PyMySQL, matplotlib) already loaded in the parent once.

`python -m dbio` spends about 1.5 s importing, and 1.2 s more on matplotlib for a report; a fork spends a few
milliseconds. The forked child is still a process: whatever dbio changes in it (its environment, signal
handlers, the faults' counters, its connections and locks, its threads) ends with it, its exit code is the
one `sys.exit` gave, and what it writes to its stdout and stderr (and what the programs it starts write
there) is read back as the program's. Before dbio's `main` runs, the child is made what a fresh interpreter
is (`_as_a_new_program`): stdin /dev/null, stdout and stderr files of its own, the environment given,
the signals at Python's defaults and unblocked, the warnings shown as Python shows them.

A test whose point is the program itself (how the interpreter starts, what it imports, a signal sent to it
while it runs) starts `python -m dbio` instead (tests/integration/conftest.py's `dbio(..., process=True)`)."""

from __future__ import annotations

import gc
import importlib
import io
import os
import pkgutil
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import warnings
from pathlib import Path

import setproctitle

_warmed = False


def warm() -> None:
    """What any command would import, loaded once in this process so that each fork has it: every module of
    dbio's (a run imports a hundred more than the command line does, each compiled again in every fork where
    no bytecode is written), and the heavy ones of its libraries."""
    global _warmed
    if _warmed:
        return
    import dbio

    for module in pkgutil.walk_packages(dbio.__path__, "dbio."):
        if not module.name.endswith(".__main__"):  # the program itself: importing it runs it
            importlib.import_module(module.name)
    import psycopg  # noqa: F401
    import pymysql  # noqa: F401
    _draw_once()
    _warmed = True


def _draw_once() -> None:
    """One result's HTML report made here, its output dropped: matplotlib's first drawing fills its caches (the
    fonts, the glyphs' paths, the texts' extents), which every fork then has. A child's first report then takes
    about a quarter less CPU (1.8 s instead of 2.4 s for this one on a loaded host); the same bytes either way."""
    from dbio import report, result_records
    from dbio import result as results

    report.render(result_records.of(results.read(Path(__file__).parent / "fixtures" / "result_complete.json")), "html")


def run(args: list[str], env: dict[str, str], timeout: float, cwd: str | Path | None = None) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `dbio ARGS` run in a forked child with exactly env as its environment (in
    cwd); subprocess.TimeoutExpired (the child killed) after timeout seconds, as subprocess.run raises it."""
    warm()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        pid = os.fork()
        if pid == 0:  # the child: never returns into the test's process
            code = 1
            try:
                if cwd is not None:
                    os.chdir(cwd)
                _as_a_new_program(args, env, out.fileno(), err.fileno())
                code = _main(args)
            except BaseException:
                traceback.print_exc()
            finally:
                os._exit(code)
        status = _wait(pid, timeout, args)
        code = os.waitstatus_to_exitcode(status)
        return code, _text(out), _text(err)


def completed(args: list[str], env: dict[str, str] | None = None, timeout: float = 300,
              cwd: str | Path | None = None) -> subprocess.CompletedProcess:
    """run's answer as subprocess.run gives it (text), for a test written against that; env: this process's
    environment when not given, as subprocess.run's."""
    code, out, err = run(args, dict(os.environ) if env is None else env, timeout, cwd)
    return subprocess.CompletedProcess(["dbio", *args], code, out, err)


class Started:
    """`dbio ARGS` forked to run beside the test, answering as the subprocess.Popen of `python -m dbio ARGS` with
    stdout and stderr pipes (text) does for what the tests ask of it: pid, poll, wait, communicate, send_signal,
    terminate, kill, returncode."""

    def __init__(self, args: list[str], env: dict[str, str]):
        warm()
        self.args = ["dbio", *args]
        self.returncode: int | None = None
        out_read, out_write = os.pipe()
        err_read, err_write = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            code = 1
            try:
                os.close(out_read)
                os.close(err_read)
                _as_a_new_program(args, env, out_write, err_write)
                os.close(out_write)
                os.close(err_write)
                code = _main(args)
            except BaseException:
                traceback.print_exc()
            finally:
                os._exit(code)
        os.close(out_write)
        os.close(err_write)
        self._pidfd = os.pidfd_open(self.pid)
        self.stdout = open(out_read, encoding="utf-8", errors="replace")
        self.stderr = open(err_read, encoding="utf-8", errors="replace")

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self._ended(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            if not select.select([self._pidfd], [], [], timeout)[0]:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
            self._ended(os.waitpid(self.pid, 0)[1])
        assert self.returncode is not None
        return self.returncode

    def communicate(self, timeout: float | None = None) -> tuple[str, str]:
        """All of stdout and stderr, once it ended; subprocess.TimeoutExpired after timeout seconds (it runs on)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        read = {self.stdout.fileno(): bytearray(), self.stderr.fileno(): bytearray()}
        open_ = set(read)
        while open_:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready = select.select(list(open_), [], [], left)[0]
            if not ready:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
            for fd in ready:
                chunk = os.read(fd, 1 << 16)
                if chunk:
                    read[fd] += chunk
                else:
                    open_.discard(fd)
        self.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
        out, err = (read[stream.fileno()].decode("utf-8", errors="replace") for stream in (self.stdout, self.stderr))
        self.stdout.close()
        self.stderr.close()
        return out, err

    def send_signal(self, number: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, number)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def _ended(self, status: int) -> None:
        self.returncode = os.waitstatus_to_exitcode(status)
        os.close(self._pidfd)


def start(args: list[str], env: dict[str, str] | None = None) -> Started:
    """`dbio ARGS` forked to run beside the test (env: this process's environment when not given)."""
    return Started(args, dict(os.environ) if env is None else env)


def _wait(pid: int, timeout: float, args: list[str]) -> int:
    fd = os.pidfd_open(pid)
    try:
        if not select.select([fd], [], [], timeout)[0]:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise subprocess.TimeoutExpired(["dbio", *args], timeout)
        return os.waitpid(pid, 0)[1]
    finally:
        os.close(fd)


def _text(file) -> str:
    file.seek(0)
    return file.read().decode("utf-8", errors="replace")


def _as_a_new_program(args: list[str], env: dict[str, str], out: int, err: int) -> None:
    """This forked child made what `python -m dbio ARGS` with stdin /dev/null and env starts as."""
    gc.freeze()  # the parent's objects are never collected here: no finalizer of theirs runs in this child
    for number in range(1, signal.NSIG):
        if number in (signal.SIGKILL, signal.SIGSTOP):
            continue
        try:
            wanted = signal.default_int_handler if number == signal.SIGINT else (
                signal.SIG_IGN if number in (signal.SIGPIPE, signal.SIGXFSZ) else signal.SIG_DFL)
            if signal.getsignal(number) is not wanted:
                signal.signal(number, wanted)
        except (OSError, ValueError):  # a real-time signal Python does not handle
            pass
    signal.set_wakeup_fd(-1)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    signal.setitimer(signal.ITIMER_REAL, 0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(out, 1)
    os.dup2(err, 2)
    encoding = sys.getfilesystemencoding()
    sys.stdin = sys.__stdin__ = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding=encoding)
    sys.stdout = sys.__stdout__ = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding=encoding)
    sys.stderr = sys.__stderr__ = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding=encoding,
                                                   errors="backslashreplace", line_buffering=True)
    # what /proc/PID/cmdline shows: dbio's run records name their process, and a dbio process is one whose
    # command line says dbio (run/identity.client_alive), as python -m dbio's does. Before the environment
    # changes: setproctitle takes the memory of the process's first environment for the title.
    setproctitle.setproctitle(" ".join([sys.executable, "-m", "dbio", *args]))
    if b"dbio" not in Path("/proc/self/cmdline").read_bytes():
        raise RuntimeError("the forked dbio's command line could not be set")
    os.environ.clear()
    os.environ.update(env)
    sys.argv = [str(Path(__file__).parents[1] / "dbio" / "__main__.py"), *args]
    _warnings_as_python_starts()


def _warnings_as_python_starts() -> None:
    """Python's own filters, and warnings written to stderr (pytest records them in a list while a test runs)."""
    warnings.resetwarnings()
    for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
        warnings.simplefilter("ignore", category)
    warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")
    warnings.showwarning = warnings._showwarning_orig  # type: ignore[attr-defined]
    warnings._showwarnmsg_impl = _show  # type: ignore[attr-defined]


def _show(message) -> None:
    sys.stderr.write(warnings._formatwarnmsg(message))  # type: ignore[attr-defined]


def _main(args: list[str]) -> int:
    """dbio's main, and the exit code the interpreter would give its end."""
    from dbio.cli import main

    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except KeyboardInterrupt:  # uncaught, as the interpreter ends on it: killed by SIGINT
        traceback.print_exc()
        _flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        code = 130
    except BaseException:
        traceback.print_exc()
        code = 1
    _flush()
    return code


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    threading._shutdown()  # type: ignore[attr-defined]  # as the interpreter's end: its other threads joined
