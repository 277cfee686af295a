"""What stops a run besides its deadline (a signal, a results directory that cannot be written), the background
tasks stopped, and the clean-up every run ends with, whatever happened. How a stop is carried out within bounded
time is in stopping.py; the listeners' own reasons to stop a run reach it through RunState.stop_run.
"""

from __future__ import annotations

import signal

from dbio.run.nodes import NodeRun
from dbio.run.phase import Phase
from dbio.run.node_loss import NodeLoss
from dbio.run.run_state import RunState
from dbio.run.run_status import Status


class StopAndCleanUp:
    """A run's stops (a signal, its results directory), its background stopped and its clean-up."""

    def __init__(self, state: RunState, node_loss: NodeLoss):
        self.state, self.node_loss = state, node_loss

    def on_signal(self, sig: int) -> None:
        name = signal.Signals(sig).name
        if self.state.stopping.signal_received(name):
            self.state.tell(f"{name} again: cancelling the sessions now")
            return
        self.state.status.end(Status.INTERRUPTED, f"{name} received")
        self.state.event("interrupt", f"{name} received")
        self.state.tell(f"{name}: stopping after the current second (again to cancel now)")
        self.state.stop()

    def on_results_error(self, exc: OSError) -> None:
        message = f"the results directory cannot be written ({exc.strerror}): the run stops"
        self.state.status.end(Status.FAILED, message)
        self.state.event("results_unwritable", message)
        self.state.tell(message)
        self.state.stop()

    async def stop_background(self) -> None:
        """Stop the sampler and the listeners' tasks (bounded: see Stopping.stop_tasks)."""
        state = self.state
        state.background_stop.set()
        await state.stopping.stop_tasks(state.background,
                                        [(r.engine, c) for r in state.nodes for c in r.monitoring_connections()])

    async def _close_sessions(self) -> None:
        for session in self.state.sessions:
            if session.conn is not None:
                try:
                    await session.engine.aclose(session.conn)
                except Exception:
                    pass

    async def clean_up(self) -> None:
        state = self.state
        state.advance(Phase.CLEAN_UP)
        await self.stop_background()
        await self._close_sessions()
        leftover = state.counts.record(None, final=True)  # slices of a run that ended early
        if leftover.get("late_statements"):
            try:
                await state.write_sample({"t": state.time.wall() + state.offset, "phase": Phase.CLEAN_UP.label,
                                          **leftover})
            except Exception:
                pass
        for r in state.nodes:
            if r.node.name in state.lost:  # its server is gone: nothing to say goodbye to
                for conn in [*r.monitoring_connections(), *([r.control] if r.control is not None else [])]:
                    r.engine.abandon(conn)
                r.control = None
                continue
            await r.close_monitoring()
        # a frozen server keeps the run's row: the next run removes it (its dbio process is gone)
        controls = [r for r in state.nodes if r.control is not None]
        await state.stopping.bounded(self.node_loss.on_nodes(NodeRun.forget, controls),
                                     [(r.engine, r.control) for r in controls])
        for r in controls:
            if r.control is not None:  # None: its node was lost meanwhile
                r.engine.close(r.control)
        self.node_loss.end_watching()
