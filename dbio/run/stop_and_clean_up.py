"""What stops a run besides its deadline (a signal, a results directory that cannot be written), the background
tasks stopped, and the clean-up every run ends with, whatever happened. How a
stop is carried out within bounded time is in stopping.py.
"""

from __future__ import annotations

import signal

from dbio.run.nodes import NodeRun
from dbio.run.phase import Phase
from dbio.run.node_loss import NodeLoss
from dbio.run.run_status import Status


class StopAndCleanUp(NodeLoss):
    def _on_signal(self, sig: int) -> None:
        name = signal.Signals(sig).name
        if self.stopping.signal_received(name):
            self.tell(f"{name} again: cancelling the sessions now")
            return
        self.status.end(Status.INTERRUPTED, f"{name} received")
        self.event("interrupt", f"{name} received")
        self.tell(f"{name}: stopping after the current second (again to cancel now)")
        self._stop()

    def _on_results_error(self, exc: OSError) -> None:
        message = f"the results directory cannot be written ({exc.strerror}): the run stops"
        self.status.end(Status.FAILED, message)
        self.event("results_unwritable", message)
        self.tell(message)
        self._stop()

    async def _stop_background(self) -> None:
        """Stop the sampler and the wait sampler (bounded: see Stopping.stop_tasks)."""
        self.background_stop.set()
        await self.stopping.stop_tasks(self.background,
                                       [(r.engine, c) for r in self.nodes for c in r.monitoring_connections()])

    async def _close_sessions(self) -> None:
        for session in self.sessions:
            if session.conn is not None:
                try:
                    await session.engine.aclose(session.conn)
                except Exception:
                    pass

    async def _clean_up(self) -> None:
        self.advance(Phase.CLEAN_UP)
        await self._stop_background()
        await self._close_sessions()
        leftover = self.counts.record(None, final=True)  # slices of a run that ended early
        if leftover.get("late_statements"):
            try:
                await self.write_sample({"t": self.time.wall() + self.offset, "phase": Phase.CLEAN_UP.label,
                                         **leftover})
            except Exception:
                pass
        for r in self.nodes:
            if r.node.name in self.lost:  # its server is gone: nothing to say goodbye to
                for conn in [*r.monitoring_connections(), *([r.control] if r.control is not None else [])]:
                    r.engine.abandon(conn)
                r.control = None
                continue
            await r.close_monitoring()
        # a frozen server keeps the run's row: the next run removes it (its dbio process is gone)
        controls = [r for r in self.nodes if r.control is not None]
        await self.stopping.bounded(self._on_nodes(NodeRun.forget, controls), [(r.engine, r.control) for r in controls])
        for r in controls:
            if r.control is not None:  # None: its node was lost meanwhile
                r.engine.close(r.control)
        if self.watch is not None:
            self.watch.cancel()
