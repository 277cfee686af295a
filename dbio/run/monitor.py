"""Counters around and during the run: engine snapshots and /proc readings, each interval's sample written.

Collectors are failure-tolerant: a reading that fails is recorded as an error in the sample
and the run goes on.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterator

from dbio.collect import cgroup, procfs
from dbio.engines.base import Engine, ServerInfo
from dbio.run.clock import REAL_TIME, TimeSource
from dbio.run.liveness import Liveness
from dbio.run.readings import once_normalized, reading_time, refused


@dataclass
class NodeProbe:
    """One node's monitoring connection."""

    name: str
    engine: Engine
    conn: Any  # async connection of its own
    info: ServerInfo
    run_id: int


@dataclass
class Answer:
    """One node's snapshot as the monitor took it: its counters, or why none (the server's error, or
    refused: it answered with counters that are no reading)."""

    raw: dict[str, Any] | None
    error: str | None = None
    refused: str | None = None


@dataclass
class Monitor:
    """Takes one reading of everything: every node's counters and, for nodes on this host, /proc."""

    probes: list[NodeProbe]
    local: bool  # a node runs on this host: /proc shows its processes and devices
    session_pids: list[int]  # of the nodes on this host
    background_pids: list[int]
    devices: set[str]
    overhead_pids: list[int] = field(default_factory=list)  # the server processes serving dbio's own monitoring
    read_helper_pids: list[int] = field(default_factory=list)  # the server processes doing the sessions' reads
    errors: list[str] = field(default_factory=list)
    # each pid's /proc stat file and start time, found at its first reading: a later reading of an id another
    # process or thread has since (Linux reuses them) is refused, so that its figure is absent, not another's
    tasks: dict[int, procfs.Task] = field(default_factory=dict)
    server_pids: list[int] | None = None  # the server processes the sessions belong to, found at the first end
    # Nodes whose server stopped during a run of several (the runner decides, see node_loss._lose_node): no
    # longer asked; each reading holds their last snapshot, so that the total stays one of every node
    # and counts their work up to that snapshot (totals then partial), never a drop.
    lost: set[str] = field(default_factory=set)
    last: dict[str, dict[str, Any]] = field(default_factory=dict)  # each node's last snapshot
    on_failure: Callable[[str, str], None] | None = None  # (node, error): a node's snapshot failed

    liveness: Liveness = field(default_factory=Liveness)  # the run's: when each node last answered
    # a node's snapshot asked for an earlier reading and not answered yet: not asked again until it answers
    pending: dict[str, asyncio.Task] = field(default_factory=dict)
    time: TimeSource = REAL_TIME  # the run's (clock.py): when its /proc readings were taken

    async def reading(self, *, per_process: bool, partial_after: float | None = None) -> dict[str, Any]:
        """Every node's snapshot and the OS counters; per-process CPU in detail only when asked
        (window ends). The nodes are read at once, so that their readings are of one instant.
        partial_after: seconds after which a reading some node answered goes without those that did not
        (None for them: a node that stopped answering delays no other's readings; its loss is the runner's)."""
        asked = [p for p in self.probes if p.name not in self.lost]
        for p in asked:
            if p.name not in self.pending or self.pending[p.name].done():
                self.pending[p.name] = asyncio.ensure_future(self._snapshot(p))
        tasks = [self.pending[p.name] for p in asked]
        await _answers(tasks, partial_after)
        snapshots = [task.result() if task.done() else Answer(None, None) for task in tasks]
        for p, answer in zip(asked, snapshots):
            if answer.error and not answer.refused and self.on_failure is not None and len(self.probes) > 1:
                self.on_failure(p.name, answer.error)  # a node that answered is not one that stopped
        got = {p.name: answer.raw for p, answer in zip(asked, snapshots)}
        # a node lost before it answered any reading (frozen before the start) has no entry: nothing to stand for it
        out: dict[str, Any] = {"nodes": {p.name: self.last.get(p.name) if p.name in self.lost else got[p.name]
                                         for p in self.probes if p.name not in self.lost or p.name in self.last}}
        if self.lost:
            out["lost"] = sorted(self.lost)
        failures = [answer.error for answer in snapshots if answer.error]
        failures += [f"engine snapshot of {p.name}: no answer in time" for p, task in zip(asked, tasks)
                     if not task.done()]
        if failures:
            out["error"] = "; ".join(failures)
        refusals = {p.name: answer.refused for p, answer in zip(asked, snapshots) if answer.refused}
        if refusals:  # each node's counters it gave that are no reading (run/readings.refused), by node
            out["refused"] = refusals
        # /proc of every session once a second: in a thread, so the sessions' next calls are not delayed.
        out["os"] = await asyncio.to_thread(self.os_reading, per_process=per_process)
        return out

    async def _snapshot(self, probe: NodeProbe) -> Answer:
        where = f" of {probe.name}" if len(self.probes) > 1 else ""
        try:
            with self.liveness.asking(probe.name):
                raw = await probe.engine.snapshot(probe.conn, probe.info, probe.run_id)
        except Exception as exc:  # a failed reading must not end the run
            error = f"engine snapshot{where} failed: {exc}"
            self.errors.append(error)
            return Answer(None, error)
        fault = refused(raw, once_normalized(probe.engine))  # normalized once: the live line's counters too
        if fault is not None:  # the sample records why and has no counters of this node: a gap, not a figure
            error = f"engine snapshot{where} refused: {fault}"
            self.errors.append(error)
            return Answer(None, error, fault)
        if probe.name not in self.lost:  # an answer after its loss is not news: its figures end where they did
            self.last[probe.name] = raw
        return Answer(raw)

    def os_reading(self, *, per_process: bool) -> dict[str, Any]:
        reading: dict[str, Any] = {"t": self.time.wall(), "client_cpu": procfs.self_cpu(),
                                   "client_rss": procfs.self_rss()}
        try:
            reading["stat"] = procfs.read_stat()
            if self.local:
                reading.update(procfs.disk_reading(self.devices))
                # no pids to read (a server whose threads are not its sessions' own): no figure, not a zero
                if self.session_pids:
                    sessions = procfs.read_pid_cpu(self.session_pids, self.tasks)
                    background = procfs.read_pid_cpu(self.background_pids, self.tasks)
                    if per_process:
                        reading["session_cpu"] = {str(k): v for k, v in sessions.items()}
                        reading["background_cpu"] = {str(k): v for k, v in background.items()}
                        # the window's ends only: what the sessions waited for a CPU (absent: no schedstat, or
                        # a node elsewhere, whose sessions' wait no reading here could add to its reads)
                        if all(p.info.caps.local for p in self.probes):
                            waited = procfs.read_pid_run_delay(self.session_pids, self.tasks)
                            if waited:
                                reading["session_run_delay"] = {str(k): v for k, v in waited.items()}
                            # the I/O workers' (io_method = worker): within the reads they do for the sessions
                            helpers = procfs.read_pid_run_delay(self.read_helper_pids, self.tasks)
                            if helpers:
                                reading["read_helper_run_delay"] = {str(k): v for k, v in helpers.items()}
                        # the whole servers' CPU and the kernel threads', so that other work's can be told
                        if self.server_pids is None:
                            self.server_pids = procfs.server_roots(list(sessions))  # those still the sessions
                        trees = procfs.read_trees_cpu([*self.server_pids, procfs.KTHREADD])
                        if self.server_pids and all(pid in trees for pid in self.server_pids):
                            reading["server_cpu_total"] = sum(trees[pid] for pid in self.server_pids)
                        if procfs.KTHREADD in trees:
                            reading["kernel_threads_cpu_total"] = trees[procfs.KTHREADD]
                        # dbio's own limits: a raw-device baseline's fio runs under them, not under the server's
                        client_limits = cgroup.limits_of([os.getpid()])
                        if client_limits:
                            reading["client_limits"] = client_limits
                        # a CPU quota, an I/O limit or an affinity the server runs under, and the quota's throttling
                        limits = cgroup.limits_of([*(self.server_pids or []), *sessions])
                        if limits:
                            reading["server_limits"] = limits
                            throttling = cgroup.throttling(limits)
                            if throttling is not None:
                                reading["server_cpu_throttling"] = throttling
                    reading["session_cpu_total"] = sum(sessions.values())
                    reading["background_cpu_total"] = sum(background.values())
                if self.overhead_pids:
                    reading["monitor_cpu_total"] = sum(procfs.read_pid_cpu(self.overhead_pids,
                                                                           self.tasks).values())
        except OSError as exc:
            reading["error"] = f"/proc reading failed: {exc}"
        return reading


async def _answers(tasks: list[asyncio.Task], partial_after: float | None) -> None:
    """Until every task is done; with partial_after, no longer than that once one is (a reading none of whose
    nodes answered waits for the first answer: it is late, a gap, and its answer says when it came)."""
    if not tasks:
        return
    if partial_after is None:
        await asyncio.wait(tasks)
        return
    done, pending = await asyncio.wait(tasks, timeout=partial_after)
    if pending and not done:
        await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)


class SampleWriter:
    """samples.jsonl: one line per sample, flushed and fsynced as written, so a crash keeps what was
    sampled. When the file cannot be written any more, the samples stay in memory (at most
    MEMORY_LIMIT of them) and on_error is told once: the run stops and its result goes elsewhere."""

    MEMORY_LIMIT = 20000

    def __init__(self, path: Path):
        self.path = path
        self.fh: Any = path.open("a", buffering=1)
        self.lines = 0
        self.error: OSError | None = None
        self.pending: deque[dict[str, Any]] = deque(maxlen=self.MEMORY_LIMIT)
        self.on_error: Callable[[OSError], object] | None = None

    def write(self, record: dict[str, Any]) -> None:
        self.lines += 1
        if self.error is None:
            try:
                self.fh.write(json.dumps(record, separators=(",", ":")) + "\n")
                self.fh.flush()
                os.fsync(self.fh.fileno())  # a crash or a power cut loses at most the interval being sampled
                return
            except OSError as exc:
                self.error = exc
                if self.on_error is not None:
                    self.on_error(exc)
        self.pending.append(record)

    def records(self) -> Iterator[dict[str, Any]]:
        """Everything sampled, as a stream: the file's lines, then those it could not take."""
        from dbio.result import iter_samples

        yield from iter_samples(self.path)
        yield from self.pending

    def close(self) -> None:
        try:
            if not self.fh.closed:
                self.fh.close()
        except OSError:
            pass


SAMPLE_LATE_LIMIT = 0.5  # seconds after its due time: later, the reading may hold the next second's counters


async def sample_on_grid(monitor: Monitor, fields: Callable[[], dict[str, Any]],
                         write: Callable[[dict[str, Any]], Awaitable[None]], *, t_start: float,
                         clock_offset: float, grid: Any, phase: Callable[[float], str], stop: asyncio.Event,
                         counts: Callable[[int], dict[str, Any]], published: Callable[[], float | None],
                         published_by_all: Callable[[float], float],
                         on_sample: Callable[[dict[str, Any]], None], time: TimeSource = REAL_TIME,
                         nodes_published: Callable[[float], dict[str, dict[str, float | None]]] | None = None) -> None:
    """Sample k (an interval's end, in seconds since the start) is due at t_start + k + 0.5: half a
    second after every session published its counters for the second ending at k. Every record
    carries when the sampler asked and when the answer came (server clock), and the latest slice end
    the sessions had reported when it asked ("published_to": the work its counters hold ends there) and the
    instant before which every session's work was in them ("published_by_all", from this host's clock as
    "answered" is: sessions.published_by_all); with several nodes, each node's own two ("nodes_published":
    run_state.nodes_published), from which its own series is measured.
    A reading that cannot be asked or answered on time is no sample of k: its record is a gap
    ("missing"), so that no late reading is labelled with the nominal time."""
    for k in grid.points():
        if stop.is_set():
            return
        due = t_start + k + 0.5
        delay = due - clock_offset - time.wall()
        if delay > 0:
            try:
                await asyncio.wait_for(stop.wait(), timeout=delay)
                return
            except asyncio.TimeoutError:
                pass
        asked_here, published_to = time.wall(), published()
        asked = asked_here + clock_offset
        # on the clock the record's times are on (this host's plus the offset): compared with "answered" only
        by_all = published_by_all(asked_here) + clock_offset
        own = nodes_published(asked_here) if nodes_published else {}
        each = {name: {"published_to": o["published_to"],
                       "published_by_all": (o["published_by_all"] or 0.0) + clock_offset} for name, o in own.items()}
        reading: dict[str, Any] = {}
        if asked - due <= SAMPLE_LATE_LIMIT:
            # a node that does not answer in half the time left is left out of it (the other half: /proc, the record)
            reading = await monitor.reading(per_process=False, partial_after=due + SAMPLE_LATE_LIMIT / 2 - asked)
        answered = time.wall() + clock_offset
        # The record shows the interval ending at k: its phase is that of the interval's last second.
        record = {"k": k, "phase": phase(t_start + k - 0.5), "due": due, "asked": asked, "answered": answered,
                  "published_to": published_to, "published_by_all": by_all,
                  **({"nodes_published": each} if each else {})}
        # On time: answered before the next second's counters could be in it, and holding no slice
        # that ended after its due time (a late reading would show the next interval's work as k's).
        if answered - due <= SAMPLE_LATE_LIMIT and (published_to is None or published_to <= due):
            record.update(t=reading_time(reading) or answered, **reading)
        else:
            record.update(t=due, missing=True)
        record.update(**fields(), **counts(k))  # the listeners' (the waits since the last), then the sessions'

        await write(record)  # fsync: off the sessions' event loop
        if not record.get("missing"):
            on_sample(record)
