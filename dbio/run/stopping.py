"""How a run stops: after its sessions finish, on a failure, or on a signal, within bounded time.

Ctrl-C or SIGTERM stops new slices (each session finishes its current second); a second
signal, or a session that does not finish in time, cancels what is still running. After a
signal, dbio ends within seconds even when a server does not answer (it may be frozen): every
wait is bounded, and a connection that does not answer in time is abandoned (its socket is
shut, so whatever waits on it ends at once and its backend ends when it reads).
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from dbio.engines.base import Engine
from dbio.run.clock import TimeSource
from dbio.run.plan import SLICE_SECONDS
from dbio.run.sessions import Session, Shared

STOP_GRACE = 5.0  # seconds a stopped run waits for slices to end before cancelling them
SIGNAL_GRACE = SLICE_SECONDS + 0.2  # after a signal: a server that answers ends the current slice within this
CANCEL_TIMEOUT = 0.3  # a cancel request the server does not take within this is given up
ABANDON_AFTER = 0.3  # after a signal, a session still inside a slice this long after its cancel is abandoned
ABANDONED_WAIT = 0.5  # for what waited on an abandoned connection to end
SIGNAL_BUDGET = 2.5  # seconds from a signal to the end of the run (the result is written after it)

Connections = list[tuple[Engine, Any]]  # each connection with the engine it belongs to


class Stopping:
    """The run's stop state (a stop, the first signal, the time left) and the bounded waits."""

    def __init__(self, shared: Shared, sessions: list[Session], event: Callable[[str, str], None], time: TimeSource):
        self.shared, self.sessions, self.event, self.time = shared, sessions, event, time
        self.force = asyncio.Event()  # cancel now (a second signal)
        self.signal: str | None = None  # the first signal received
        self.exit_by: float | None = None  # monotonic time by which a signalled run has ended
        self.signalled = asyncio.Event()
        self.abandoned: set[int] = set()  # sessions whose connection was given up
        self.stopped_at: float | None = None  # server clock

    def stop(self, offset: float) -> None:
        """No new slices (offset: server clock - client clock, for when the stop came)."""
        if not self.shared.stop.is_set():
            self.stopped_at = self.time.wall() + offset
        self.shared.stop.set()

    def signal_received(self, name: str) -> bool:
        """Note a signal; True when the run was already stopping (the signal means: cancel now)."""
        if self.signal is None:
            self.signal, self.exit_by = name, self.time.monotonic() + SIGNAL_BUDGET
            self.signalled.set()
        if self.shared.stop.is_set():
            self.force.set()
            return True
        return False

    def remaining(self) -> float | None:
        """Seconds left before a signalled run must end; None when no signal came."""
        return None if self.exit_by is None else max(0.05, self.exit_by - self.time.monotonic())

    @staticmethod
    def abandon(conns: Connections) -> None:
        for engine, conn in conns:
            if conn is not None:
                engine.abandon(conn)

    async def bounded(self, awaitable: Any, conns: Connections) -> Any:
        """Await; once a signal came (before or during the wait), within the time left: past it, the
        connections it waits on are abandoned, which ends the wait at once. None when it did not finish."""
        task = asyncio.ensure_future(awaitable)
        if self.exit_by is None:
            signalled = asyncio.ensure_future(self.signalled.wait())
            await asyncio.wait({task, signalled}, return_when=asyncio.FIRST_COMPLETED)
            signalled.cancel()
        done, _ = await asyncio.wait({task}, timeout=self.remaining())
        if not done:
            self.abandon(conns)
            done, _ = await asyncio.wait({task}, timeout=ABANDONED_WAIT)
            if not done:
                task.cancel()
                return None
        return None if task.cancelled() or task.exception() is not None else task.result()

    async def drain(self, tasks: list[asyncio.Task]) -> None:
        """Wait for every session; after a stop, give slices STOP_GRACE seconds (after a signal,
        one slice), then cancel; after a signal, abandon the sessions a cancel did not end."""
        pending = set(tasks)
        stop_seen_at: float | None = None
        cancelled_at: float | None = None
        while pending:
            done, pending = await asyncio.wait(pending, timeout=0.1 if self.signal else 0.25)
            if not self.shared.stop.is_set():
                continue
            self.shared.window_opened.set()
            now = self.time.monotonic()
            if stop_seen_at is None:
                stop_seen_at = now
            grace = SIGNAL_GRACE if self.signal else STOP_GRACE + SLICE_SECONDS
            if self.force.is_set() or now - stop_seen_at > grace:
                if cancelled_at is None:
                    cancelled_at = now
                if self.signal and now - cancelled_at > ABANDON_AFTER:
                    await self._abandon_sessions(pending)
                    return
                await self.cancel_now()
        flushes = [self._flush(s) for s in self.sessions if s.state == "stopped" and s.conn]
        await self.bounded(asyncio.gather(*flushes, return_exceptions=True),
                           [(s.engine, s.conn) for s in self.sessions if s.conn is not None])

    async def _flush(self, session: Session) -> None:
        with self.shared.liveness.asking(session.node):
            await session.engine.flush_stats(session.conn)
        session.unpublished_since = None  # its cancelled slice's counters are in now

    async def _abandon_sessions(self, pending: set[asyncio.Task]) -> None:
        """Sessions still inside a slice after their cancel: their connections are given up."""
        stuck = [s for s in self.sessions if s.in_call and s.conn is not None]
        self.abandoned.update(s.number for s in stuck)
        self.abandon([(s.engine, s.conn) for s in stuck])
        self.event("abandoned", f"{len(stuck)} session(s) neither finished nor took a cancel: their connections "
                                "were abandoned (the server did not answer)")
        self.exit_by = self.time.monotonic()  # a server that does not answer a cancel is given no more time
        await asyncio.wait(pending, timeout=ABANDONED_WAIT)

    async def cancel_now(self) -> None:
        """Cancel every statement still running, with an event that says how many were."""
        cancelled = await self.cancel_running()
        if cancelled:
            self.event("cancelled", f"cancelled {cancelled} session(s) still inside a slice: the statements of that "
                                    "last slice are missing from the session counts, while the engine counted its I/O")

    async def cancel_running(self) -> int:
        """Cancel every statement still running, each request given CANCEL_TIMEOUT seconds."""
        running = [s for s in self.sessions if s.in_call and s.conn is not None and s.number not in self.abandoned]
        return sum(await asyncio.gather(*(s.engine.cancel_statement(s.conn, CANCEL_TIMEOUT) for s in running)))

    async def stop_tasks(self, tasks: list[asyncio.Task], conns: Connections) -> None:
        """Background tasks that were told to stop: one that waits on a server that does not answer
        is given 5 s (after a signal, the time left), then its connection is abandoned."""
        if tasks:
            remaining = self.remaining()
            _, pending = await asyncio.wait(tasks, timeout=5 if remaining is None else remaining)
            if pending:
                self.abandon(conns)
                _, pending = await asyncio.wait(pending, timeout=ABANDONED_WAIT)
            for task in pending:
                task.cancel()
        tasks.clear()
