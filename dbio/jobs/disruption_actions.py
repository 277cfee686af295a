"""What each --event's action does, on the run's event loop (jobs/disruptions.py calls them), and its undoing.

- stall:D: the sessions' server processes stopped (SIGSTOP) for D seconds, then continued (SIGCONT). They are
  continued whatever happens: at D, when the run's background stops (the window's end, a signal, a failure), in
  the run's clean-up (undo_all), and, should dbio itself be killed, by a guard (GUARD): a small process of
  dbio's own interpreter, in a session of its own, that continues them as soon as dbio is gone (or
  GUARD_GRACE seconds after D, should dbio hang).
- throttle:IOPS:D: the processes that read for the sessions limited by the cgroup v1 blkio or v2 io controller
  (blkio_throttle.py)
  for D seconds, the limit lifted and the cgroup removed after it, or at the run's clean-up, and, should dbio
  be killed, by a guard of the same kind (the limit lifted, each process still in dbio's cgroup moved back
  where it came from, the cgroup removed).
- checkpoint: the engine's checkpoint on a connection of its own, timed, with what it wrote (engines' base
  TimedOperations.checkpoint_now).
- vacuum, index, backup:PATH: the engine's operations as dbio ops has them, on a connection of their own, timed,
  the server left running as it is (engines' base Operations.vacuum_now, rebuild_indexes, backup_now): VACUUM of
  dbio's tables; dbio's index on its tables dropped and made again (each table's in a transaction: the sessions
  wait on its lock meanwhile); a base backup into the checked destination, kept there.
- exec:PATH: the user's program (trusted as --external-script, in disruptions.check) with the run directory, its
  output in event-N.log there, its exit status kept, and what it read and wrote from storage by its own accounting
  (getrusage at its end, its waited-for children's included: a program that ran fio names the device's other
  reader); stopped (its process group: SIGTERM, then SIGKILL) when the run's background stops."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dbio.disruption import Event
from dbio.engines.base import Engine, timed_operations
from dbio.jobs import blkio_throttle, external_script
from dbio.run.clock import TimeSource

GUARD_GRACE = 5.0  # seconds after an action's end at which its guard undoes it, had dbio not
POLL_SECONDS = 0.1  # how often a program's end is looked for
# A guard: dbio's own interpreter, isolated (-I), given its kind, its seconds and what to undo. It undoes when
# dbio is gone (its stdin, a pipe only dbio writes, ends: even on kill -9) or after its seconds, whichever is
# first; dbio ends it once it has undone the action itself. A throttle's guard is told the processes moved, and
# where from, on its stdin once they are (before that, it can only lift the limit).
GUARD = """
import json, os, select, signal, sys
kind, seconds, plan = sys.argv[1], float(sys.argv[2]), json.loads(sys.argv[3])
def ended(timeout):
    return bool(select.select([sys.stdin], [], [], timeout)[0])
moved = {}
if kind == 'throttle' and ended(seconds):
    line = sys.stdin.readline()
    moved = json.loads(line) if line.strip() else {}
ended(seconds)
def write(path, text):
    try:
        with open(path, 'w') as f:
            f.write(text)
    except OSError:
        pass
if kind == 'stall':
    for pid in plan['pids']:
        try:
            os.kill(pid, signal.SIGCONT)
        except OSError:
            pass
elif os.path.isdir(plan['place']):
    for line in plan['lift']:
        write(os.path.join(plan['place'], plan['limit_file']), line)
    try:
        with open(os.path.join(plan['place'], 'cgroup.procs')) as f:
            inside = f.read().split()
    except OSError:
        inside = []
    for pid in inside:  # only those still in dbio's cgroup: a pid since reused elsewhere is left alone
        if pid in moved:
            write(os.path.join(plan['root'], moved[pid].lstrip('/'), 'cgroup.procs'), pid + '\\n')
    try:
        os.rmdir(plan['place'])
    except OSError:
        pass
"""


@dataclass
class Context:
    """What an action may act on, as the run stands when it starts."""

    stop: asyncio.Event  # the run's background stops: the action ends now
    time: TimeSource
    index: int  # the event's number, from 1 (its log's and cgroup's name)
    run_id: int
    session_pids: list[int] = field(default_factory=list)  # the sessions' server processes (local nodes)
    read_helpers: list[int] = field(default_factory=list)  # server processes reading for them (I/O workers)
    conninfo: str | None = None  # the first writable node's
    engine: Engine | None = None
    program: Path | None = None  # exec:'s, checked
    disks: list[str] = field(default_factory=list)  # throttle's
    operations: Any = None  # vacuum's, index's, backup's: the writable node's (engines' base Operations)
    destination: Path | None = None  # backup's, checked


class Actions:
    """The run's actions, and what each left to undo until it has been undone."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.frozen: set[int] = set()
        self.guards: list[subprocess.Popen] = []
        self.throttles: list[blkio_throttle.Throttle] = []
        self.programs: list[subprocess.Popen] = []

    async def run(self, event: Event, ctx: Context) -> dict[str, Any]:
        """The action, to its end: what it did (its "outcome" when not "done")."""
        if event.action == "stall":
            return await self._stall(event, ctx)
        if event.action == "throttle":
            return await self._throttle(event, ctx)
        if event.action == "checkpoint":
            return await self._checkpoint(ctx)
        if event.action in ("vacuum", "index", "backup"):
            return await self._operation(event.action, ctx)
        if event.action == "exec":
            return await self._exec(ctx)
        raise AssertionError(f"unknown action {event.action}")

    async def _stall(self, event: Event, ctx: Context) -> dict[str, Any]:
        pids = thread_groups(ctx.session_pids)  # a thread-per-session server (MariaDB): its one process
        if not pids:
            raise RuntimeError("no session had a server process to stop")
        assert event.seconds is not None
        guard = _guard("stall", event.seconds + GUARD_GRACE, {"pids": pids})
        self.guards.append(guard)
        stopped = []
        try:
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGSTOP)
                except ProcessLookupError:
                    continue
                stopped.append(pid)
                self.frozen.add(pid)
            cut = await stopped_within(ctx.stop, event.seconds)
        finally:
            self._continue(stopped)
            _end(guard)
            self.guards.remove(guard)
        return {"processes": len(stopped), **_threads_note(ctx.session_pids, pids),
                **({"outcome": "cut short"} if cut else {})}

    async def _throttle(self, event: Event, ctx: Context) -> dict[str, Any]:
        assert event.seconds is not None and event.iops is not None
        found = blkio_throttle.controller()  # v1's blkio, else v2's io (checked before the run)
        if found is None:
            raise RuntimeError("the machine's cgroup io controller is gone since the run was checked")
        limit = blkio_throttle.Throttle(f"dbio-event-{ctx.run_id:x}-{ctx.index}", list(ctx.disks), event.iops,
                                        root=found.root, version=found.version)
        self.throttles.append(limit)
        cut = False
        guard = _guard("throttle", event.seconds + GUARD_GRACE, limit.undo_plan())  # before anything is limited
        self.guards.append(guard)
        try:
            moved = limit.apply(thread_groups([*ctx.session_pids, *ctx.read_helpers]))
            _tell(guard, limit.moved_from())
            cut = await stopped_within(ctx.stop, event.seconds)
        finally:
            problems = limit.remove()
            if not problems:
                self.throttles.remove(limit)
            _end(guard)
            self.guards.remove(guard)
        out: dict[str, Any] = {"processes": moved, "disks": list(ctx.disks), "iops": event.iops,
                               **_threads_note(ctx.session_pids, thread_groups(ctx.session_pids))}
        if problems:
            out.update(outcome="failed", error="; ".join(problems))
        elif cut:
            out["outcome"] = "cut short"
        return out

    async def _checkpoint(self, ctx: Context) -> dict[str, Any]:
        ops = timed_operations(ctx.engine) if ctx.engine is not None else None
        if ops is None or ctx.conninfo is None:
            raise RuntimeError("the engine has no timed checkpoint")
        conninfo = ctx.conninfo
        done = await asyncio.to_thread(ops.checkpoint_now, conninfo, lambda _: None)
        return {"checkpoint": done}

    async def _operation(self, action: str, ctx: Context) -> dict[str, Any]:
        if ctx.operations is None:
            raise RuntimeError(f"the engine has no timed {action}")
        operations = ctx.operations
        if action == "backup":
            assert ctx.destination is not None
            return {"backup": await asyncio.to_thread(operations.backup_now, ctx.destination)}

        def on_its_connection() -> dict[str, Any]:
            conn = operations.connect()
            try:
                if action == "vacuum":
                    return operations.vacuum_now(conn)
                done = operations.rebuild_indexes(conn, contextlib.nullcontext)
                return {**done, "seconds": round(done["seconds"], 3)}
            finally:
                conn.close()
        return {action: await asyncio.to_thread(on_its_connection)}

    async def _exec(self, ctx: Context) -> dict[str, Any]:
        assert ctx.program is not None
        output = f"event-{ctx.index}.log"
        with (self.directory / output).open("w") as out:  # a session of its own: a stop ends its children too
            process = subprocess.Popen([str(ctx.program), str(self.directory)], stdin=subprocess.DEVNULL, stdout=out,
                                       stderr=subprocess.STDOUT, cwd=self.directory, start_new_session=True)
        self.programs.append(process)
        stopped, usage = False, None
        try:
            while process.returncode is None and (usage := _reaped(process)) is None:
                if await stopped_within(ctx.stop, POLL_SECONDS):
                    stopped = True
                    await asyncio.to_thread(external_script.stop_group, process)
                    break
        finally:
            if process.poll() is None:  # cancelled: no program outlives the run
                external_script.stop_group(process)
            self.programs.remove(process)
        out_record: dict[str, Any] = {"program": str(ctx.program), "output": output, "exit_status": process.returncode}
        if usage is not None:  # its own accounting: what it read from storage is the device's other reader's
            out_record.update(read_bytes=usage.ru_inblock * 512, write_bytes=usage.ru_oublock * 512,
                              cpu_seconds=round(usage.ru_utime + usage.ru_stime, 3))
        if stopped:
            out_record.update(outcome="stopped", stopped="the window closed or the run stopped first")
        elif process.returncode != 0:
            out_record["outcome"] = "failed"
            out_record["error"] = f"{ctx.program} exited with status {process.returncode}: see {output}"
        return out_record

    def _continue(self, pids: list[int]) -> None:
        for pid in pids:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
            self.frozen.discard(pid)

    def undo_all(self) -> list[str]:
        """Everything an action left (it was cancelled before its end): processes continued, limits lifted,
        programs stopped, guards ended. What could not be undone, said."""
        self._continue(sorted(self.frozen))
        problems = []
        for limit in list(self.throttles):
            problems += limit.remove()
            self.throttles.remove(limit)
        for process in list(self.programs):
            external_script.stop_group(process)
        for guard in self.guards:
            _end(guard)
        self.guards.clear()
        return problems


def _reaped(process: subprocess.Popen) -> Any:
    """The program's resource usage once it ended (its own and its waited-for children's: getrusage's block input
    is the kernel's read_bytes, direct I/O included), reaping it as poll() would; None while it runs."""
    try:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
    except ChildProcessError:  # reaped already (a stop's wait): its usage is gone
        if process.returncode is None:
            process.poll()
        return None
    if pid == 0:
        return None
    process.returncode = os.waitstatus_to_exitcode(status)
    return usage


def _guard(kind: str, seconds: float, plan: dict[str, Any]) -> subprocess.Popen:
    """The process that undoes the action should dbio be gone, or after seconds (GUARD)."""
    return subprocess.Popen([sys.executable, "-I", "-c", GUARD, kind, f"{seconds:.3f}", json.dumps(plan)],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, close_fds=True, text=True)


def _tell(guard: subprocess.Popen, moved: dict[str, str]) -> None:
    """A throttle's guard told which processes were moved, and from where."""
    assert guard.stdin is not None
    try:
        guard.stdin.write(json.dumps(moved) + "\n")
        guard.stdin.flush()
    except OSError:
        pass  # the guard is gone: dbio still lifts the limit itself


def thread_groups(ids: list[int]) -> list[int]:
    """The processes the ids belong to (a thread's id gives its process's: a signal or a cgroup takes the whole
    process), in order, each once."""
    out: list[int] = []
    for tid in ids:
        pid = tid
        try:
            for line in Path(f"/proc/{tid}/status").read_text().splitlines():
                if line.startswith("Tgid:"):
                    pid = int(line.split()[1])
                    break
        except (OSError, ValueError):
            pass
        if pid not in out:
            out.append(pid)
    return sorted(out)


def _threads_note(session_ids: list[int], processes: list[int]) -> dict[str, Any]:
    """Where the sessions are threads of fewer processes (MariaDB's one server process), the record says the
    whole server process was the action's, not only the sessions'."""
    if len(processes) < len(set(session_ids)) or set(processes) - set(session_ids):
        return {"whole_server_process": True}
    return {}


def _end(guard: subprocess.Popen) -> None:
    if guard.poll() is None:
        guard.kill()
    guard.wait()
    if guard.stdin is not None:
        guard.stdin.close()


async def stopped_within(stop: asyncio.Event, seconds: float) -> bool:
    """Whether stop was set within seconds (waited on the run's clock)."""
    if stop.is_set():
        return True
    if seconds <= 0:
        return False
    try:
        await asyncio.wait_for(stop.wait(), seconds)
    except asyncio.TimeoutError:
        return False
    return True
