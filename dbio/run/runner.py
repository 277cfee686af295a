"""The run: connect every session on every node, start them together, open and close the
measured window.

Phases: prepare the nodes -> connect the sessions -> open monitoring -> barrier and common
start -> warm-up -> window (begin reading ... end reading) -> drain -> clean up. A session that
dies ends the run; how a run stops on a signal, within bounded time, is in stopping.py. In
every case the result is written, marked with what happened.

This module takes the phases in their order and gives the outcome; their steps are each in a module of
their own: session_launch.py (the nodes prepared, the sessions connected, monitoring opened, the common
start), measured_window.py (the window opened and closed), node_loss.py (a node lost, the others go on),
stop_and_clean_up.py (what stops a run, the clean-up); run_state.py holds what they share.
"""

from __future__ import annotations

import asyncio
import signal
import threading

from dbio.run.measured_window import MeasuredWindow
from dbio.run.phase import Phase
from dbio.run.run_status import Status
from dbio.run.outcome import RunOutcome
from dbio.run.run_state import Observer, RunContext, StoppedBeforeStart
from dbio.run.session_launch import SessionLaunch

__all__ = ["Observer", "RunContext", "RunOutcome", "run"]


def run(ctx: RunContext) -> RunOutcome:
    return ctx.time.run(_Coordinator(ctx).execute())


class _Coordinator(SessionLaunch, MeasuredWindow):
    """One run: its phases, each a step of the classes it is made of."""

    async def execute(self) -> RunOutcome:
        loop = asyncio.get_running_loop()
        # signals reach the main thread only: a run embedded in another thread is stopped by its caller
        signals = (signal.SIGINT, signal.SIGTERM) if threading.current_thread() is threading.main_thread() else ()
        for sig in signals:
            loop.add_signal_handler(sig, self._on_signal, sig)
        # the sample file is written from a thread (fsync must not stall the sessions' loop)
        self.ctx.samples.on_error = lambda exc: loop.call_soon_threadsafe(self._on_results_error, exc)
        try:
            await self._phases()
        except StoppedBeforeStart:  # a signal, or every node lost before the start (failed then, saying why)
            self.status.end(Status.INTERRUPTED, "interrupted before the start")
        except (KeyboardInterrupt, asyncio.CancelledError):
            self.status.end(Status.INTERRUPTED, "interrupted")
        except Exception as exc:
            if self.clock.start is None:
                raise  # nothing ran yet: the caller reports the error, no result is written
            # After the start, whatever failed, the result is kept and marked.
            error = f"{type(exc).__name__}: {exc}"
            self.status.end(Status.FAILED, error)
            self.event("error", error)
        finally:
            await self._clean_up()
            for sig in signals:
                loop.remove_signal_handler(sig)
        self._uncount_lost()
        self.advance(Phase.DONE)
        return self._outcome()

    async def _phases(self) -> None:
        t_connect = self.time.monotonic()
        # watched from the first call: a node frozen before the start is lost as one frozen later (calls held at
        # its barrier on purpose count from its release: liveness.asking; a standby waiting for the loop answers
        # each of its checks: Liveness.answered)
        self.watch = asyncio.create_task(self._watch_nodes())
        self.advance(Phase.PREPARE)
        await self._prepare()
        self.advance(Phase.CONNECT)
        # The barrier is held before the sessions connect: each goes to it as soon as it is connected,
        # so the server prepares the loop of the first sessions while the last ones connect.
        await self._on_nodes(lambda r: r.engine.hold_barrier(r.control, self.run_id))
        # Several nodes, or a read-only one, start at an instant chosen from the session count before
        # any session calls (_agree_start): their sessions are started once all are connected.
        early = len(self.nodes) == 1 and not self.nodes[0].node.read_only
        if early:
            self._agree_start()
        tasks = await self._connect_all(start=early)
        self.start.connect_seconds = self.time.monotonic() - t_connect
        monitor = await self._open_monitoring()
        if not early:
            self._agree_start()
            tasks = [asyncio.create_task(self._session_main(s)) for s in self.sessions]
            for session, task in zip(self.sessions, tasks):
                if session.node in self.lost:  # lost while connecting: never started
                    task.cancel()
        self.advance(Phase.START)
        await self._first_sample(await self._start_together(tasks, monitor))
        self.start.start_seconds = self.time.monotonic() - t_connect
        self.advance(Phase.WARMUP)
        self._begin_sampling(monitor)
        if await self._measure(tasks, monitor):
            self.advance(Phase.WINDOW)
        self.shared.window_opened.set()  # the sessions waiting at its opening go on (into it, or to their end)
        early_end = await self._end_of_answering_nodes(tasks, monitor)
        self.advance(Phase.DRAIN)
        await self.stopping.drain(tasks)
        await self._stop_background()
        await self._close_window(monitor, early_end)
        self.event("end", "all sessions finished" if self.status.complete else f"run {self.status.status.value}")

    def _outcome(self) -> RunOutcome:
        return RunOutcome(
            status=self.status, run_id=self.run_id, clock=self.clock, start=self.start, window=self.window,
            sessions=self.sessions, totals=self.counts.totals, plans=self.plans, events=self.events,
            lost_nodes=self.lost, monitor_errors=list(self.monitor.errors) if self.monitor else [],
            samples_written=self.ctx.samples.lines, signal=self.stopping.signal, records=self.listeners.records())
