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

from dbio import signals
from dbio.run.measured_window import MeasuredWindow
from dbio.run.run_state import Observer, RunContext, RunOutcome, StoppedBeforeStart
from dbio.run.session_launch import SessionLaunch

__all__ = ["Observer", "RunContext", "RunOutcome", "run"]


def run(ctx: RunContext) -> RunOutcome:
    return ctx.time.run(_Coordinator(ctx).execute())


class _Coordinator(SessionLaunch, MeasuredWindow):
    """One run: its phases, each a step of the classes it is made of."""

    async def execute(self) -> RunOutcome:
        loop = asyncio.get_running_loop()
        # the sample file is written from a thread (fsync must not stall the sessions' loop)
        self.ctx.samples.on_error = lambda exc: loop.call_soon_threadsafe(self._on_results_error, exc)
        # The run's signals are its own until it ends, then its caller's handlers have them again at once (a
        # run's caller notes those that come after its window, which no signal may cost: jobs/after_window.py).
        # Signals reach the main thread only: a run embedded in another thread is stopped by its caller.
        arrived: list[int] = []

        def route(signum: int) -> None:
            arrived.append(signum)
            loop.call_soon_threadsafe(self._on_signal, signum)

        with signals.routed(route):
            try:
                await self._phases()
            except StoppedBeforeStart:
                if self.status == "complete":  # failed: every node was lost before the start
                    self.status, self.reason = "interrupted", self.reason or "interrupted before the start"
            except (KeyboardInterrupt, asyncio.CancelledError):
                self.status, self.reason = "interrupted", self.reason or "interrupted"
            except Exception as exc:
                if self.clock.start is None:
                    raise  # nothing ran yet: the caller reports the error, no result is written
                # After the start, whatever failed, the result is kept and marked.
                self.status = "failed"
                self.reason = self.reason or f"{type(exc).__name__}: {exc}"
                self._event("error", self.reason)
            finally:
                await self._clean_up()
        if arrived and self.stopping.signal is None:  # it came as the run ended, too late for the loop to see
            self.stopping.signal = signal.Signals(arrived[0]).name
        self._uncount_lost()
        return self._outcome()

    async def _phases(self) -> None:
        t_connect = self.time.monotonic()
        # watched from the first call: a node frozen before the start is lost as one frozen later (calls held at
        # its barrier on purpose count from its release: liveness.asking; a standby waiting for the loop answers
        # each of its checks: Liveness.answered)
        self.watch = asyncio.create_task(self._watch_nodes())
        await self._prepare()
        # The barrier is held before the sessions connect: each goes to it as soon as it is connected,
        # so the server prepares the loop of the first sessions while the last ones connect.
        await self._on_nodes(lambda r: r.engine.hold_barrier(r.control, self.run_id))
        # Several nodes, or a read-only one, start at an instant chosen from the session count before
        # any session calls (_agree_start): their sessions are started once all are connected.
        early = len(self.nodes) == 1 and not self.nodes[0].node.read_only
        if early:
            self._agree_start()
        self.ctx.observer.phase(f"connecting {len(self.sessions)} session{'s' if len(self.sessions) != 1 else ''}")
        tasks = await self._connect_all(start=early)
        self.connect_seconds = self.time.monotonic() - t_connect
        watching = await self._open_monitoring()
        if not early:
            self._agree_start()
            tasks = [asyncio.create_task(self._session_main(s)) for s in self.sessions]
            for session, task in zip(self.sessions, tasks):
                if session.node in self.lost:  # lost while connecting: never started
                    task.cancel()
        await self._start_together(tasks, watching)
        self.start_seconds = self.time.monotonic() - t_connect
        await self._measure(tasks, watching)
        early_end = await self._end_of_answering_nodes(tasks, watching)
        await self.stopping.drain(tasks)
        await self._stop_background()
        await self._close_window(watching, early_end)
        self._event("end", "all sessions finished" if self.status == "complete" else f"run {self.status}")

    def _outcome(self) -> RunOutcome:
        waits = self.waits
        return RunOutcome(
            status=self.status, reason=self.reason, run_id=self.run_id, clock=self.clock, sessions=self.sessions,
            begin=self.begin, end=self.end, window_start=self.window_start, window_end=self.window_end,
            totals=self.counts.totals, waits=dict(waits.window) if waits else {},
                          wait_samples=waits.samples if waits else 0,
            plans=self.plans, connect_seconds=self.connect_seconds, start_seconds=self.start_seconds,
            events=self.events, monitor_errors=list(self.monitor.errors) if self.monitor else [],
            samples_written=self.ctx.samples.lines, signal=self.stopping.signal, clock_offset=self.offset,
            node_waits={n: dict(c) for n, c in waits.window_by_node.items()} if waits else {},
            released_late=self.released_late, node_starts=self.node_starts, start_agreed=self.start_agreed,
            lost_nodes=self.lost,
            read_probe={r.node.name: r.read_probe.record(r.read_probe.method) for r in self.nodes
                        if r.read_probe is not None})
