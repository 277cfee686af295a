"""The run: connect every session on every node, start them together, open and close the
measured window.

Its phases (phase.py), in order: prepare the nodes -> connect the sessions and open monitoring -> the
common start -> warm-up -> window (begin reading ... ) -> drain (... end reading) -> clean up -> done. A
session that dies ends the run; how a run stops on a signal, within bounded time, is in stopping.py. In
every case the result is written, marked with what happened.

The coordinator (Run) takes the phases in their order, telling the run's listeners at each (listeners.py),
and gives the outcome (outcome.py). Their steps are its collaborators', each given the run's state
(run_state.py): session_launch.py (the nodes prepared, the sessions connected, monitoring opened, the common
start), measured_window.py (the window opened and closed), node_loss.py (a node lost, the others go on),
stop_and_clean_up.py (what stops a run, the clean-up).
"""

from __future__ import annotations

import asyncio
import signal

from dbio import signals
from dbio.run.measured_window import MeasuredWindow
from dbio.run.node_loss import NodeLoss
from dbio.run.outcome import RunOutcome
from dbio.run.phase import Phase
from dbio.run.run_state import Observer, RunContext, RunState, StoppedBeforeStart
from dbio.run.run_status import Status
from dbio.run.session_launch import SessionLaunch
from dbio.run.stop_and_clean_up import StopAndCleanUp

__all__ = ["Observer", "RunContext", "RunOutcome", "run"]


def run(ctx: RunContext) -> RunOutcome:
    return ctx.time.run(Run(ctx).execute())


class Run:
    """One run: its state and the collaborators that take the steps of its phases."""

    def __init__(self, ctx: RunContext):
        self.state = state = RunState(ctx)
        self.node_loss = NodeLoss(state)
        self.launch = SessionLaunch(state, self.node_loss)
        self.window = MeasuredWindow(state)
        self.ending = StopAndCleanUp(state, self.node_loss)

    async def execute(self) -> RunOutcome:
        state = self.state
        loop = asyncio.get_running_loop()
        # the sample file is written from a thread (fsync must not stall the sessions' loop)
        state.ctx.samples.on_error = lambda exc: loop.call_soon_threadsafe(self.ending.on_results_error, exc)
        # The run's signals are its own until it ends, then its caller's handlers have them again at once (a
        # run's caller notes those that come after its window, which no signal may cost: jobs/after_window.py).
        # Signals reach the main thread only: a run embedded in another thread is stopped by its caller.
        arrived: list[int] = []

        def route(signum: int) -> None:
            arrived.append(signum)
            loop.call_soon_threadsafe(self.ending.on_signal, signum)

        with signals.routed(route):
            try:
                await self._phases()
            except StoppedBeforeStart:  # a signal, or every node lost before the start (failed then, saying why)
                state.status.end(Status.INTERRUPTED, "interrupted before the start")
            except (KeyboardInterrupt, asyncio.CancelledError):
                state.status.end(Status.INTERRUPTED, "interrupted")
            except Exception as exc:
                if state.clock.start is None:
                    raise  # nothing ran yet: the caller reports the error, no result is written
                # After the start, whatever failed, the result is kept and marked.
                error = f"{type(exc).__name__}: {exc}"
                state.status.end(Status.FAILED, error)
                state.event("error", error)
            finally:
                await self.ending.clean_up()
        if arrived and state.stopping.signal is None:  # it came as the run ended, too late for the loop to see
            state.stopping.signal = signal.Signals(arrived[0]).name
        self.node_loss.uncount_lost()
        state.advance(Phase.DONE)
        return self._outcome()

    async def _phases(self) -> None:
        state, launch, window = self.state, self.launch, self.window
        t_connect = state.time.monotonic()
        self.node_loss.begin_watching()
        state.advance(Phase.PREPARE)
        await launch.prepare()
        state.advance(Phase.CONNECT)
        # The barrier is held before the sessions connect: each goes to it as soon as it is connected,
        # so the server prepares the loop of the first sessions while the last ones connect.
        await self.node_loss.on_nodes(lambda r: r.engine.hold_barrier(r.control, state.run_id))
        # Several nodes, or a read-only one, start at an instant chosen from the session count before
        # any session calls (agree_start): their sessions are started once all are connected.
        early = len(state.nodes) == 1 and not state.nodes[0].node.read_only
        if early:
            launch.agree_start()
        tasks = await launch.connect_all(start=early)
        state.start.connect_seconds = state.time.monotonic() - t_connect
        monitor = await launch.open_monitoring()
        if not early:
            launch.agree_start()
            tasks = [asyncio.create_task(launch.session_main(s)) for s in state.sessions]
            for session, task in zip(state.sessions, tasks):
                if session.node in state.lost:  # lost while connecting: never started
                    task.cancel()
        state.advance(Phase.START)
        await launch.first_sample(await launch.start_together(tasks, monitor))
        state.start.start_seconds = state.time.monotonic() - t_connect
        state.advance(Phase.WARMUP)
        launch.begin_sampling(monitor)
        if await window.open(tasks, monitor):
            state.advance(Phase.WINDOW)
        state.shared.window_opened.set()  # the sessions waiting at its opening go on (into it, or to their end)
        early_end = await window.end_of_answering_nodes(tasks, monitor)
        state.advance(Phase.DRAIN)
        await state.stopping.drain(tasks)
        await self.ending.stop_background()
        await window.close(monitor, early_end)
        state.event("end", "all sessions finished" if state.status.complete else f"run {state.status.status.value}")

    def _outcome(self) -> RunOutcome:
        state = self.state
        return RunOutcome(
            status=state.status, run_id=state.run_id, clock=state.clock, start=state.start, window=state.window,
            sessions=state.sessions, totals=state.counts.totals, plans=state.plans, events=state.events,
            lost_nodes=state.lost, monitor_errors=list(state.monitor.errors) if state.monitor else [],
            samples_written=state.ctx.samples.lines, signal=state.stopping.signal, records=state.listeners.records())
