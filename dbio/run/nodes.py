"""The nodes of a run: the database servers its sessions are spread over.

A run has one node or several (issue: many nodes). Each node has its engine, its connection
string and what probing it told; during the run, its control connection (run row, barrier),
its monitoring and wait-sampling connections, and its share of the sessions. The barrier and
the deadline are common to all nodes: with one node its release fixes the start; with several the
start is agreed in advance (agreed_start.py) and every node is released at it. A read-only node (a hot
standby) gets no control row and no loop from dbio: its sessions carry the run's control.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from dbio.engines.base import Engine, ServerInfo, helper_application_name
from dbio.errors import DbioError
from dbio.run import agreed_start, session_placement
from dbio.run.clock import REAL_TIME, TimeSource
from dbio.run.identity import client_alive
from dbio.run.liveness import Liveness
from dbio.run.monitor import NodeProbe
from dbio.run.sessions import Session

if TYPE_CHECKING:
    from dbio.run.read_probe import ReadProbe  # set by the read probe's listener, which makes it


@dataclass
class Node:
    """One database server of a run, as configured and probed."""

    name: str
    engine: Engine
    conninfo: str
    info: ServerInfo
    role: str = "primary"  # primary | standby (a standby's sessions run no UPDATE)
    devices: set[str] = field(default_factory=set)  # block devices of its data and WAL (when local)
    weight: float = 1.0  # its share of the sessions against the other nodes' weights

    @property
    def read_only(self) -> bool:
        return self.info.caps.read_only


STANDBY = "standby"  # the role of a read-only node (what `instance init --standbys` calls its members too)
WORKLOAD_WAIT = 15.0  # seconds a read-only node may take to replay the loop its primary just installed


def role_of(info: ServerInfo) -> str:
    return STANDBY if info.caps.read_only else "primary"


def spread(nodes: list[Node], schema_of: tuple[int, ...]) -> list[Session]:
    """The run's sessions dealt to the nodes: in turn (SLOB's rotor over its instances), or by weight."""
    where = session_placement.deal([n.weight for n in nodes], len(schema_of))
    return [Session(i + 1, schema, nodes[where[i]].engine, nodes[where[i]].name)
            for i, schema in enumerate(schema_of)]


@dataclass
class WaitTarget:
    """One node's sessions, as the wait sampler asks about them (wait_sampling.py)."""

    engine: Engine
    conn: Any  # a connection of its own
    pids: list[int]
    node: str = ""


@dataclass
class Monitoring:
    """What a node's monitoring opened: its probe and wait target, and (when it runs on this host) the
    server's processes the CPU accounts read besides the sessions'."""

    probe: NodeProbe
    wait_target: WaitTarget
    background: list[int] = field(default_factory=list)  # the server's helper processes
    read_helpers: list[int] = field(default_factory=list)  # those doing the sessions' reads for them
    overhead: list[int] = field(default_factory=list)  # those serving dbio's own monitoring


@dataclass
class NodeRun:
    """A node during the run."""

    node: Node
    run_id: int
    sessions: list[Session]
    control: Any = None
    monitor_conn: Any = None
    wait_conn: Any = None
    released_at: float | None = None  # this host's clock, when the node's barrier was opened
    # its single reads' latency, sampled beside the sessions: set by the read probe's listener (read_probe.py)
    read_probe: ReadProbe | None = None
    time: TimeSource = REAL_TIME  # the run's (clock.py)

    @property
    def engine(self) -> Engine:
        return self.node.engine

    # -- sync steps (run in a thread) ------------------------------------------------------
    def prepare(self, params: dict[str, Any], notify: Callable[[str], None],
                answered: Callable[[], None] = lambda: None) -> None:
        """Connect the control session, install the loop, write the run's row (a read-only node: wait
        for the loop its primary installed, answered() after each of its checks)."""
        engine = self.engine
        self.control = engine.connect(self.node.conninfo, application_name=helper_application_name(self.run_id,
                                                                                                   "control"))
        if self.node.read_only:
            self._await_workload(answered)
            return
        engine.install_workload(self.control)
        cleaned = engine.forget_abandoned_runs(self.control, alive=client_alive)
        if cleaned:
            notify(f"{self._on()}removed {cleaned} run(s) left by dbio processes that ended early")
        # a rate: this node's sessions share one schedule (slice.sql), their shares' sum
        engine.prepare_run(self.control, self.run_id, {**params, "rate_sessions": len(self.sessions)})

    def plans(self, access_path: str, scan_workers: int | None) -> dict[str, Any]:
        conn = self.engine.connect(self.node.conninfo, application_name="dbio:plan")
        try:
            return self.engine.plans(conn, 1, access_path, scan_workers)
        finally:
            self.engine.close(conn)

    def waiting(self) -> int:
        return self.engine.waiting_at_barrier(self.control, self.run_id)

    def _await_workload(self, answered: Callable[[], None]) -> None:
        deadline = self.time.monotonic() + WORKLOAD_WAIT
        while not self.engine.has_workload(self.control):
            answered()  # the node answers: its wait is for replication, no silence
            if self.time.monotonic() > deadline:
                raise DbioError(f"{self._on()}this read-only server does not have this dbio's work loop (none, "
                                "or another dbio version's)", "run dbio setup or a dbio run on its primary with "
                                "this dbio first (the loop replicates from there)")
            self.time.sleep_blocking(0.2)

    def clock_offset(self) -> tuple[float, float] | None:
        """Its server's clock against this host's: (offset, uncertainty) in seconds (agreed_start.clock_offset)."""
        samples = []
        for _ in range(agreed_start.OFFSET_TRIES):
            asked = self.time.wall()
            server = self.engine.server_clock(self.control)
            samples.append((asked, server, self.time.wall()))
        return agreed_start.clock_offset(samples)

    def forget(self) -> None:
        if self.node.read_only:
            self.engine.release_barrier(self.control, self.run_id)
        else:
            self.engine.forget_run(self.control, self.run_id)

    def release(self, warmup: float, run_time: float, start: float | None) -> tuple[float, float, float | None]:
        """Open the node's barrier; returns (start, window open, deadline). A read-only node's sessions
        carry the start (agreed in advance, never None here)."""
        if self.node.read_only:
            assert start is not None
            self.engine.release_barrier(self.control, self.run_id)
            self.released_at = self.time.wall()
            return start, start + warmup, start + warmup + run_time if run_time > 0 else None
        out = self.engine.release(self.control, self.run_id, warmup=warmup, run_time=run_time, start=start)
        self.released_at = self.time.wall()
        return out

    # -- monitoring ------------------------------------------------------------------------------
    async def open_monitoring(self, access_path: str = "index") -> Monitoring:
        """Its monitoring and wait-sampling connections (and its read probe's, when it has one); with the
        server's helper processes and the processes serving those connections (for the CPU accounts, when
        the node is local)."""
        engine, node = self.engine, self.node
        self.monitor_conn = await engine.aconnect(node.conninfo, application_name=helper_application_name(self.run_id,
                                                                                                          "monitor"))
        self.wait_conn = await engine.aconnect(node.conninfo, application_name=helper_application_name(self.run_id,
                                                                                                       "waits"))
        if self.read_probe is not None:
            await self.read_probe.open(node.conninfo, access_path)
        await engine.prepare_monitor(self.monitor_conn)
        pids = [s.pid for s in self.sessions if s.pid]
        opened = Monitoring(NodeProbe(node.name, engine, self.monitor_conn, node.info, self.run_id),
                            WaitTarget(engine, self.wait_conn, pids, node.name))
        if node.info.caps.has_backend_cpu:  # on this host, each session with a process (or thread) of its own
            opened.background = await engine.background_pids(self.monitor_conn, pids)
            opened.read_helpers = await engine.read_helper_pids(self.monitor_conn)
            opened.overhead = [await engine.backend_pid(c) for c in (self.monitor_conn, self.wait_conn)]
            if self.read_probe is not None and self.read_probe.pid:
                opened.overhead.append(self.read_probe.pid)  # dbio's own measuring, not the sessions' work
        return opened

    def monitoring_connections(self) -> list[Any]:
        probe = self.read_probe.conn if self.read_probe is not None else None
        return [c for c in (self.monitor_conn, self.wait_conn, probe) if c is not None]

    async def close_monitoring(self) -> None:
        for conn in self.monitoring_connections():
            try:
                await self.engine.aclose(conn)
            except Exception:
                pass

    def _on(self) -> str:
        return f"{self.node.name}: " if self.node.name else ""


async def in_threads(runs: list[NodeRun], step: Callable[[NodeRun], Any], liveness: Liveness) -> list[Any]:
    """A sync step on every node at once (each in a thread), each a call on its node (liveness.py)."""
    async def on(run: NodeRun) -> Any:
        with liveness.asking(run.node.name):
            return await asyncio.to_thread(step, run)

    return list(await asyncio.gather(*(on(r) for r in runs)))
