"""--metrics-port: Prometheus (OpenMetrics) text at /metrics while a run or a sweep goes on.

Every counter is a cumulative count as its source keeps it -- the engine's own counters (normalized:
engines/counters.py), the kernel's diskstats and CPU times, the sessions' statements as dbio tallies them --
never a rate dbio computed, so that Prometheus' rate() over the window gives the result's own figure. Each
series carries the run's id, its label, the sweep step (empty for a run) and, for the engine's counters, the
node: a run over several servers sums by node (each node is its own server: nothing is counted twice).

The values are those of the latest per-second sample (run/monitor.py): a scrape between two samples sees the
previous one, and a sample that came too late (a gap in samples.jsonl) is not shown, as it is not counted.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector

from dbio.errors import UsageError
from dbio.run.listeners import Listener, RunView
from dbio.run.phase import Phase
from dbio.run.readings import Normalize, answered, normalized
from dbio.run.slice_totals import ALL_KINDS
from dbio.stats import histogram
from dbio.ui import UI

# (metric name, help, the normalized counter's group and key, scale to the metric's unit)
ENGINE_COUNTERS = (
    ("dbio_physical_reads", "Data-file read requests of every process of the server (the engine's count)",
     "data", "reads", 1.0),
    ("dbio_physical_read_bytes", "Bytes read from data files (the engine's count)", "data", "read_bytes", 1.0),
    ("dbio_physical_writes", "Data-file write requests (the engine's count)", "data", "writes", 1.0),
    ("dbio_physical_write_bytes", "Bytes written to data files (the engine's count)", "data", "write_bytes", 1.0),
    ("dbio_read_wait_seconds", "Time the engine timed waiting for data-file reads", "data", "read_time_ms", 1e-3),
    ("dbio_client_reads", "Data-file read requests of client sessions (the engine's count)", "client", "reads", 1.0),
    ("dbio_wal_bytes", "Redo (WAL) bytes generated", "wal", "bytes", 1.0),
    ("dbio_wal_syncs", "Redo (WAL) file syncs", "wal", "syncs", 1.0),
    ("dbio_commits", "Transactions committed in the measured database", "database", "commits", 1.0),
)
DEVICE_COUNTERS = (  # /proc/diskstats fields -> metric, help, scale
    ("reads", "dbio_device_reads", "Read requests the device completed", 1.0),
    ("sectors_read", "dbio_device_read_bytes", "Bytes the device read", 512.0),
    ("writes", "dbio_device_writes", "Write requests the device completed", 1.0),
    ("sectors_written", "dbio_device_write_bytes", "Bytes the device wrote", 512.0),
    ("io_ms", "dbio_device_busy_seconds", "Time the device had I/O in flight (utilisation: its rate)", 1e-3),
)
CPU_MODES = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
PHASES = ("starting", "warm-up", "measuring", "finishing")
# the run's phases as a dashboard shows them: the window is measured until its end reading (after the drain)
SHOWN = {Phase.PREPARE: "starting", Phase.CONNECT: "starting", Phase.START: "starting", Phase.WARMUP: "warm-up",
         Phase.WINDOW: "measuring", Phase.DRAIN: "measuring", Phase.CLEAN_UP: "finishing", Phase.DONE: "finishing"}


@dataclass
class RunLabels:
    run_id: str = ""
    label: str = ""
    step: str = ""

    def values(self) -> list[str]:
        return [self.run_id, self.label, self.step]


RUN_LABELS = ["run_id", "label", "step"]


@dataclass
class State:
    """What a scrape reads, kept by the listener of the run in progress (one lock: the run's thread writes,
    the HTTP server's reads)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    run: RunLabels = field(default_factory=RunLabels)
    phase: str = "starting"
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)  # node -> its normalized counters
    os: dict[str, Any] = field(default_factory=dict)
    statements: dict[str, dict[str, Any]] = field(default_factory=dict)  # kind -> count, sum_us, buckets
    bounds_us: list[float] = field(default_factory=list)
    rate_asked: float | None = None  # --rate: the statements/s this run's sessions were scheduled for
    events: int = 0
    planned_actions: tuple[str, ...] = ()  # --event: the kinds of action the run's events have
    active_actions: tuple[str, ...] = ()  # those in progress now
    samples: int = 0
    t: float | None = None  # the latest sample's time (server clock): the statements' counts are as of then


class _Collector(Collector):
    def __init__(self, state: State):
        self.state = state

    def collect(self) -> Iterator[Any]:
        with self.state.lock:
            yield from _families(self.state)


def _families(s: State) -> Iterator[Any]:
    run = s.run.values()
    for name, text, group, key, scale in ENGINE_COUNTERS:
        family = CounterMetricFamily(name, text, labels=RUN_LABELS + ["node"])
        for node, counters in s.nodes.items():
            value = ((counters or {}).get(group) or {}).get(key)
            if value is not None:  # at the reading's own time (the server's clock): rate() is then exact
                family.add_metric(run + [node], value * scale, timestamp=counters.get("t"))
        yield family
    disks = s.os.get("disks") or {}
    for field_name, name, text, scale in DEVICE_COUNTERS:
        family = CounterMetricFamily(name, text, labels=RUN_LABELS + ["device"])
        for device, fields in disks.items():
            if fields.get(field_name) is not None:
                family.add_metric(run + [device], fields[field_name] * scale, timestamp=s.os.get("t"))
        yield family
    cpu = CounterMetricFamily("dbio_host_cpu_seconds", "The host's CPU time by mode (/proc/stat)",
                              labels=RUN_LABELS + ["mode"])
    for mode in CPU_MODES:
        value = (s.os.get("stat") or {}).get(mode)
        if value is not None:
            cpu.add_metric(run + [mode], value, timestamp=s.os.get("t"))
    yield cpu
    for key, name, text in (("session_cpu_total", "dbio_sessions_cpu_seconds",
                             "CPU time of the server processes serving dbio's sessions"),
                            ("client_cpu", "dbio_client_cpu_seconds", "CPU time of dbio itself")):
        family = CounterMetricFamily(name, text, labels=RUN_LABELS)
        if s.os.get(key) is not None:
            family.add_metric(run, s.os[key], timestamp=s.os.get("t"))
        yield family
    statements = CounterMetricFamily("dbio_statements", "Statements the sessions completed in the measured window",
                                     labels=RUN_LABELS + ["kind"])
    latency = HistogramMetricFamily("dbio_statement_latency_seconds", "Statement latency in the measured window",
                                    labels=RUN_LABELS + ["kind"])
    # --rate: every statement's latency from its intended start, and its schedule lag (pgbench's)
    scheduled = {"intended": HistogramMetricFamily("dbio_intended_latency_seconds", "Statement latency from its "
                                                   "intended start on --rate's schedule, in the measured window",
                                                   labels=RUN_LABELS),
                 "lag": HistogramMetricFamily("dbio_schedule_lag_seconds", "Statement start less its intended start "
                                              "on --rate's schedule, in the measured window", labels=RUN_LABELS)}
    for kind, tally in s.statements.items():
        buckets, total = [], 0
        for bound, n in zip(s.bounds_us + [float("inf")], tally["buckets"]):
            total += n
            if bound == float("inf"):
                buckets.append(("+Inf", total))
            elif _exposed(bound):  # cumulative counts there are exact: each is an edge of dbio's own buckets
                buckets.append((repr(bound / 1e6), total))
        if kind in scheduled:
            scheduled[kind].add_metric(run, buckets, tally["sum_us"] / 1e6, timestamp=s.t)
            continue
        statements.add_metric(run + [kind], tally["count"], timestamp=s.t)
        latency.add_metric(run + [kind], buckets, tally["sum_us"] / 1e6, timestamp=s.t)
    yield statements
    yield latency
    if s.rate_asked is not None:
        asked = GaugeMetricFamily("dbio_rate_asked_per_second", "--rate: the statements/s the sessions were "
                                  "scheduled for", labels=RUN_LABELS)
        asked.add_metric(run, s.rate_asked)
        yield asked
        yield from scheduled.values()
    phase = GaugeMetricFamily("dbio_phase", "1 for the phase the run is in", labels=RUN_LABELS + ["phase"])
    for name in PHASES:
        phase.add_metric(run + [name], 1.0 if s.phase == name else 0.0)
    yield phase
    events = CounterMetricFamily("dbio_events", "Events the run reported (a node lost, a stall, ...)",
                                 labels=RUN_LABELS)
    events.add_metric(run, s.events)
    yield events
    if s.planned_actions:
        active = GaugeMetricFamily("dbio_event_active", "1 while an --event of this action is in progress, 0 otherwise",
                                   labels=RUN_LABELS + ["action"])
        for action in s.planned_actions:
            active.add_metric(run + [action], 1.0 if action in s.active_actions else 0.0)
        yield active
    samples = CounterMetricFamily("dbio_samples", "Per-second samples taken on time", labels=RUN_LABELS)
    samples.add_metric(run, s.samples)
    yield samples


def _exposed(bound_us: float) -> bool:
    """The histogram's edges a scrape carries: powers of two from 8 us and AWR's edges, about 35 of dbio's 206
    (a scrape of every edge cost 4 ms of CPU)."""
    whole = int(bound_us)
    return whole == bound_us and (whole in histogram.AWR_EDGES_US or (whole >= 8 and whole & (whole - 1) == 0))


class Endpoint:
    """The HTTP server, for the whole command (a sweep's steps share it); stopped by close()."""

    def __init__(self, address: str, port: int):
        self.state = State()
        registry = CollectorRegistry(auto_describe=False)
        registry.register(_Collector(self.state))
        try:
            self.server, self.thread = start_http_server(port, addr=address, registry=registry)
        except OSError as exc:
            raise UsageError(f"--metrics-port {port} on {address}: {exc.strerror}",
                             "choose a free port, or another --metrics-address") from None

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    def begin(self, run_id: Any, label: str, step: str, bounds_us: list[float]) -> None:
        """A run (or a sweep's step) begins: its series replace the last one's."""
        with self.state.lock:
            self.state.run = RunLabels(str(run_id), label, step)
            self.state.phase, self.state.nodes, self.state.os = "starting", {}, {}
            self.state.statements, self.state.events, self.state.samples = {}, 0, 0
            self.state.planned_actions, self.state.active_actions = (), ()
            self.state.bounds_us = list(bounds_us)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class MetricsListener(Listener):
    """A listener of the run (run/listeners.py) that keeps, for the endpoint, its phase, the lines it told the user
    (its events) and its latest sample: the samples the live view shows, normalized (the warm-up's, the window's
    first reading, each on time, its last)."""

    title = "the metrics endpoint"

    def __init__(self, endpoint: Endpoint, normalize: Normalize):
        self.state, self.normalize = endpoint.state, normalize

    def phase(self, phase: Phase, run: RunView) -> None:
        per_session = run.plan.control.rate_per_s
        with self.state.lock:
            self.state.phase = SHOWN[phase]
            self.state.rate_asked = None if per_session is None else per_session * run.plan.sessions
        if phase is Phase.WINDOW and run.window.begin is not None:  # the window's first reading: its counters' start
            self._second(run.window.begin)

    def told(self, message: str) -> None:
        with self.state.lock:
            self.state.events += 1

    def disrupting(self, planned: tuple[str, ...], active: tuple[tuple[int, str], ...]) -> None:
        with self.state.lock:
            self.state.planned_actions = planned
            self.state.active_actions = tuple(action.partition(":")[0].lower() for _, action in active)

    def sample(self, record: Mapping[str, Any]) -> None:
        # the reading before the start (k 0) is not shown: a window's first reading is (with no warm-up, it is that)
        if record.get("k") != 0:
            self._second(record)

    def _second(self, sample: Mapping[str, Any]) -> None:
        if not answered(dict(sample)):  # a gap, or a reading some node did not answer: not counted, not shown
            return
        shown = normalized(dict(sample), self.normalize)
        with self.state.lock:
            self.state.samples += 1
            self.state.t = shown.get("t")
            self.state.nodes = {name: counters for name, counters in (shown.get("nodes") or {}).items() if counters}
            self.state.os = shown.get("os") or {}
            self._add(shown.get("statements") or {})
            for late in (shown.get("late_statements") or {}).values():  # slices that came back after their second
                self._add(late)

    def _add(self, tally: dict[str, Any]) -> None:
        """One interval's statements (a sparse tally: run/slice_totals.py) added to the running totals."""
        for kind in ALL_KINDS:  # the statement kinds, and with --rate the schedule's (SCHEDULE)
            entry = tally.get(kind)
            if not entry:
                continue
            total = self.state.statements.setdefault(
                kind, {"count": 0, "sum_us": 0.0, "buckets": [0] * (len(self.state.bounds_us) + 1)})
            total["count"] += entry["count"]
            total["sum_us"] += entry["sum_us"]
            for index, n in entry["hist"].items():
                total["buckets"][int(index)] += n


@contextlib.contextmanager
def serving(port: int | None, address: str, ui: UI) -> Iterator[Endpoint | None]:
    """The endpoint for the command's whole life when a port is given (ui.metrics: what run.measure's listener of
    it feeds), stopped when the command ends however it ends."""
    if port is None:
        yield None
        return
    endpoint = Endpoint(address, port)
    ui.metrics = endpoint
    ui.note(f"metrics at http://{address}:{endpoint.port}/metrics")
    try:
        yield endpoint
    finally:
        ui.metrics = None
        endpoint.close()
