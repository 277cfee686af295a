"""The nodes of a run: the database servers its sessions are spread over.

A run has one node or several (issue: many nodes). Each node has its engine, its connection
string and what probing it told; during the run, its control connection (run row, barrier),
its monitoring and wait-sampling connections, and its share of the sessions. The barrier and
the deadline are common to all nodes: the first node's release fixes the start, the others are
released at that same start.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Callable

from dbio.engines.base import Engine, ServerInfo
from dbio.run.identity import client_alive
from dbio.run.monitor import NodeProbe, WaitTarget
from dbio.run.sessions import Session


@dataclass
class Node:
    """One database server of a run, as configured and probed."""

    name: str
    engine: Engine
    conninfo: str
    info: ServerInfo
    role: str = "primary"  # primary | standby (a standby's sessions run no UPDATE)
    devices: set[str] = field(default_factory=set)  # block devices of its data and WAL (when local)


def spread(nodes: list[Node], schema_of: tuple[int, ...]) -> list[Session]:
    """The run's sessions, dealt to the nodes in turn (SLOB's rotor over its instances)."""
    return [Session(i + 1, schema, nodes[i % len(nodes)].engine, nodes[i % len(nodes)].name)
            for i, schema in enumerate(schema_of)]


@dataclass
class NodeRun:
    """A node during the run."""

    node: Node
    run_id: int
    sessions: list[Session]
    control: Any = None
    monitor_conn: Any = None
    wait_conn: Any = None

    @property
    def engine(self) -> Engine:
        return self.node.engine

    # -- sync steps (run in a thread) ------------------------------------------------------
    def prepare(self, params: dict[str, Any], notify: Callable[[str], None]) -> None:
        """Connect the control session, install the loop, write the run's row."""
        engine = self.engine
        self.control = engine.connect(self.node.conninfo, application_name="dbio:control")
        engine.install_workload(self.control)
        cleaned = engine.forget_abandoned_runs(self.control, alive=client_alive)
        if cleaned:
            notify(f"{self._on()}removed {cleaned} run(s) left by dbio processes that ended early")
        engine.prepare_run(self.control, self.run_id, params)

    def plans(self, access_path: str) -> dict[str, Any]:
        conn = self.engine.connect(self.node.conninfo, application_name="dbio:plan")
        try:
            return self.engine.plans(conn, 1, access_path)
        finally:
            self.engine.close(conn)

    def waiting(self) -> int:
        return self.engine.waiting_at_barrier(self.control, self.run_id)

    def forget(self) -> None:
        self.engine.forget_run(self.control, self.run_id)

    def release(self, warmup: float, run_time: float, start: float | None) -> tuple[float, float, float | None]:
        return self.engine.release(self.control, self.run_id, warmup=warmup, run_time=run_time, start=start)

    # -- monitoring ------------------------------------------------------------------------------
    async def open_monitoring(self) -> tuple[NodeProbe, WaitTarget, list[int], list[int]]:
        """Its monitoring and wait-sampling connections; with the server's helper processes and
        the processes serving those connections (for the CPU accounts, when the node is local)."""
        engine, node = self.engine, self.node
        self.monitor_conn = await engine.aconnect(node.conninfo, application_name="dbio:monitor")
        self.wait_conn = await engine.aconnect(node.conninfo, application_name="dbio:waits")
        await engine.prepare_monitor(self.monitor_conn)
        pids = [s.pid for s in self.sessions if s.pid]
        background, overhead = [], []
        if node.info.caps.local:
            background = await engine.background_pids(self.monitor_conn, pids)
            overhead = [await engine.backend_pid(c) for c in (self.monitor_conn, self.wait_conn)]
        probe = NodeProbe(node.name, engine, self.monitor_conn, node.info, self.run_id)
        return probe, WaitTarget(engine, self.wait_conn, pids, node.name), background, overhead

    def monitoring_connections(self) -> list[Any]:
        return [c for c in (self.monitor_conn, self.wait_conn) if c is not None]

    async def close_monitoring(self) -> None:
        for conn in self.monitoring_connections():
            try:
                await self.engine.aclose(conn)
            except Exception:
                pass

    def _on(self) -> str:
        return f"{self.node.name}: " if self.node.name else ""


async def in_threads(runs: list[NodeRun], step: Callable[[NodeRun], Any]) -> list[Any]:
    """A sync step on every node at once (each in a thread)."""
    return list(await asyncio.gather(*(asyncio.to_thread(step, r) for r in runs)))
