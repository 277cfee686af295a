"""A real embedded PostgreSQL 18 for the integration tests, started once and removed at the end.

Tests run dbio as users do, as a program of its own (`dbio(...)`: forked with its imports done), each in its
own database of the shared instance, with tiny scales: 32 MiB of data against 16 MiB of shared_buffers.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import psycopg
import pytest

from tests import forked_dbio

def _base_dir() -> Path:
    # As root the server runs as an unprivileged user, which cannot enter pytest's 0700 temp dirs.
    base = Path(os.environ.get("DBIO_TEST_DIR", "/var/tmp" if os.geteuid() == 0 else tempfile.gettempdir()))
    path = Path(tempfile.mkdtemp(prefix="dbio-tests-", dir=base))
    path.chmod(0o755)
    return path


@dataclass
class Done:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err


def dbio(*args: str, timeout: float = 300, env: dict | None = None, process: bool = False) -> Done:
    """dbio ARGS as a program with no terminal, as a script runs it (a question is never asked: dbio refuses,
    naming --yes): a fork of this process with dbio already imported (tests/forked_dbio.py), or, with
    process=True, `python -m dbio` started anew, for a test whose point is the program's own start."""
    # no report.html unless the test reads it (--html-report, or env): its charts cost about a second of CPU a
    # run, a sixth of the suite's (bench/RESULTS.md); every run still writes report.txt and result.json
    environ = {**os.environ, "COLUMNS": "200", "DBIO_HTML_REPORT": "false", **(env or {})}
    # a fork copies only the calling thread: a lock another of the test's threads held (its driver's, the
    # import lock, a stream's) stays held in the child forever, so with threads running dbio starts anew
    if not process and threading.active_count() == 1:
        return Done(*forked_dbio.run(list(args), environ, timeout))
    proc = subprocess.run([sys.executable, "-m", "dbio", *args], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, env=environ)
    return Done(proc.returncode, proc.stdout, proc.stderr)


@dataclass
class Instance:
    root: Path
    data_dir: Path
    results: Path

    def args(self, db: str, *extra: str, shared_buffers: str | None = "16MiB") -> list[str]:
        """shared_buffers None: a sweep that varies it (the flag beside --vary is refused)."""
        sized = ["--shared-buffers", shared_buffers] if shared_buffers is not None else []
        return ["--data-dir", str(self.data_dir), "--dbname", db, *sized, "--results-dir", str(self.results), *extra]

    def server_args(self, db: str) -> list[str]:
        """The options of commands that only reach the server (teardown)."""
        return ["--data-dir", str(self.data_dir), "--dbname", db, "--shared-buffers", "16MiB"]

    @property
    def meta(self) -> dict:
        return json.loads((self.data_dir / "dbio-instance.json").read_text())

    def conninfo(self, db: str) -> str:
        return f"host={self.data_dir / 'socket'} port={self.meta['port']} user=dbio dbname={db}"

    def connect(self, db: str = "postgres") -> psycopg.Connection:
        return psycopg.connect(self.conninfo(db), autocommit=True)

    def create_database(self, db: str) -> None:
        with self.connect() as conn:
            if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (db,)).fetchone():
                conn.execute(f'CREATE DATABASE "{db}"')


SMALL = ["--scale", "32MiB", "--scan-table-size", "8MiB", "--warmup", "1s", "--run-time", "2s"]
# For runs whose assertions hold for any window length (a step, a run after a fault): a run's own
# cost (connecting, the report's charts) is already a few seconds.
BRIEF = ["--warmup", "0", "--run-time", "1s"]


def over(base: list[str], *given: str) -> list[str]:
    """base's options (flag-value pairs: SMALL) less those given, then the given: over(SMALL, *BRIEF) is SMALL's
    scale with BRIEF's window. A command line gives each option once: dbio refuses one given twice (an alias
    too: --duration is --run-time)."""
    assert len(base) % 2 == 0 and all(flag.startswith("--") for flag in base[::2]), base
    named = {_option_of(word) for word in given if word.startswith("-")}
    return [word for flag, value in zip(base[::2], base[1::2]) if _option_of(flag) not in named
            for word in (flag, value)] + list(given)


def _option_of(flag: str) -> str:
    """The option a command-line name sets (its key), or the name itself for a flag outside the table."""
    from dbio.command_flags import flags_of
    from dbio.option_table import OPTIONS

    return next((option.key for option in OPTIONS if flag in flags_of(option)), flag)


@pytest.fixture(scope="session")
def workdir():
    path = _base_dir()
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _embedded(workdir, name):
    """An embedded instance for the session, destroyed (and proved gone) at its end."""
    inst = Instance(workdir, workdir / name, workdir / "results")
    done = dbio("instance", "init", "--data-dir", str(inst.data_dir), "--shared-buffers", "16MiB")
    assert done.code == 0, done.text
    yield inst
    dbio("instance", "destroy", "--yes", "--data-dir", str(inst.data_dir))
    assert not inst.data_dir.exists()


@pytest.fixture(scope="session")
def instance(workdir):
    yield from _embedded(workdir, "instance")


@pytest.fixture(scope="session")
def second(workdir):
    """Another embedded instance, for tests that need two servers (nodes, many hosts); they use
    databases of their own in it, as in the first."""
    yield from _embedded(workdir, "second")


@pytest.fixture(scope="session")
def loaded_db(instance):
    """A database of the shared instance with SMALL's load, verified once: for the tests that only
    run on a default load (their runs change rows, never the load; after a fault, amcheck checks it)."""
    done = dbio("setup", *instance.args("loaded", *SMALL), "--verify")
    assert done.code == 0 and "verified: all" in done.out, done.text
    return "loaded"


PASSWORD = "the-right-password-7f3c"


@pytest.fixture(scope="session")
def roles(instance):
    """Roles besides the superuser: one that must give a password (scram over the socket), one plain."""
    hba = instance.data_dir / "pgdata" / "pg_hba.conf"
    original = hba.read_text()
    hba.write_text("local all pw_user scram-sha-256\n" + original)
    with instance.connect() as conn:
        for role in ("pw_user", "plain_user"):
            conn.execute(f"DROP ROLE IF EXISTS {role}")
        conn.execute(f"CREATE ROLE pw_user LOGIN PASSWORD '{PASSWORD}'")
        conn.execute("CREATE ROLE plain_user LOGIN")
        conn.execute("SELECT pg_reload_conf()")
    yield {"password": "pw_user", "plain": "plain_user"}
    hba.write_text(original)
    with instance.connect() as conn:
        conn.execute("SELECT pg_reload_conf()")


def dbio_backends(inst: Instance) -> list[tuple]:
    with inst.connect() as conn:
        return conn.execute("SELECT pid, application_name, state FROM pg_stat_activity "
                            "WHERE application_name LIKE 'dbio:%'").fetchall()


def wait_for(predicate, timeout: float = 60.0, what: str = "condition"):
    """Poll until predicate() is true (and return its value), failing after timeout seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def launch_margin(args_at) -> float:
    """Seconds to give, besides a run's 10 s of connecting before a --start-at, for three dbio processes starting at
    once (forked as dbio(...) is: tests/forked_dbio.start) and a fourth refused that names the same start (it must
    ask before the 10 s): four times what this host just took to refuse a run whose start has passed (itself a
    check), at least 6 s. args_at(stamp): the
    run's arguments for that --start-at. About 6 s on a quiet host, 12 s at a load of 10 on 2 cores, where a
    fixed 15 s was only waiting."""
    from datetime import datetime, timezone

    t0 = time.monotonic()
    passed = dbio(*args_at(datetime.fromtimestamp(time.time() - 60, timezone.utc).isoformat()))
    took = time.monotonic() - t0
    assert passed.code == 2 and "passed" in passed.err, passed.text
    return max(6.0, 4.0 * took)


def within_seconds(seconds: float, reached: float, floor: float, run_time: float | None = None) -> bool:
    """Whether dbio ended within seconds of a fault or signal, judged against what this host just did: within
    `floor` seconds, or twice the time the same process took to reach the fault (`reached`, from its launch:
    python's start, connections, warm-up; in proportion slower on a loaded host), whichever is longer; and
    always well before the run's own window (`run_time`) would have ended it. A fixed bound alone failed on
    a loaded 2-core host (24 s for 15 s; 18.8 s alone)."""
    allowed = max(floor, 2.0 * reached)
    assert run_time is None or allowed < run_time * 0.75, f"the host is too slow to tell: {reached:.1f} s to reach"
    return seconds < allowed


def load_result(directory: Path) -> dict:
    return json.loads((directory / "result.json").read_text())


def result_dir(done: Done) -> Path:
    """The run directory a dbio run printed."""
    for line in done.out.splitlines():
        if line.startswith("result: "):
            return Path(line.split(": ", 1)[1]).parent
    raise AssertionError(f"no result line in:\n{done.text}")


@pytest.fixture(scope="module")
def layout_instance(workdir):
    """An instance of its own whose WAL lives in a directory outside its data directory (wal_dir),
    with two more directories for tablespaces (data_dirs). On this machine all of them share one
    virtual disk: the tests check where things go, not that the devices differ."""
    root = workdir / "layout"
    root.mkdir()
    inst = Instance(root, root / "instance", root / "results")
    wal, dirs = root / "wal", [root / "d1", root / "d2"]
    done = dbio("instance", "init", "--data-dir", str(inst.data_dir), "--wal-dir", str(wal), "--shared-buffers",
                "16MiB")
    assert done.code == 0, done.text
    yield inst, wal, dirs
    dbio("instance", "destroy", "--yes", "--data-dir", str(inst.data_dir))
    assert not inst.data_dir.exists()
    shutil.rmtree(root, ignore_errors=True)


def assert_other_runs_refused(args: Callable[..., list[str]], stamp: str, later: str, parts: int) -> None:
    """While a run's parts hold the database: its part 2 a second time is refused (first: it names their start,
    so it must ask before they connect), and so are an unrelated run and another run's part (at a later start).
    args(stamp, *extra): a run's arguments."""
    again = dbio(*args(stamp, "--part", f"2/{parts}"))
    assert again.code == 2 and f"part 2/{parts} of run" in again.err and "already runs" in again.err, again.text
    alone = dbio(*args(later))
    assert alone.code == 2 and "is in use by dbio run" in alone.err and "part" in alone.err, alone.text
    other = dbio(*args(later, "--part", "1/2"))
    assert other.code == 2 and "in use by another run's parts" in other.err, other.text


def finished_parts(procs: list[forked_dbio.Started]) -> tuple[list[dict], list[Path]]:
    """Each part's result document and directory, once every part ended well."""
    docs, dirs = [], []
    for proc in procs:
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, out + err
        dirs.append(result_dir(Done(proc.returncode, out, err)))
        docs.append(load_result(dirs[-1]))
    return docs, dirs


def kill_left(procs: list[subprocess.Popen] | list[forked_dbio.Started]) -> None:
    """Whatever a failed test left running of the processes it started."""
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
