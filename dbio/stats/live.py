"""What the live view shows while a run goes on (pure): the last interval's figures from two consecutive
normalized samples, and findings the moment the window's counters so far show them -- each said once.

The findings here are early warnings from the window so far, judged with the final verdict's own thresholds
(report/verdict.py and its rules' modules); the result's verdict, over the whole window, is what counts.

A finding said early compares counters that cover the same work. Two kinds of counter move differently: the
device's (diskstats), the host's CPU times and the sessions' processes' CPU move as the work goes on, while the
sessions publish their statements and, on PostgreSQL, the server's I/O counters only as each slice ends (a
backend's pg_stat_io reaches the view as it goes idle; a parallel worker's as it exits, within its leader's
statement). A slice lasts a second, or as long as its last statement: a scan of a large table, several. So
between the window's ends, where every session is at rest, a reading's device counters are ahead of its
engine counters by the work in progress. Each finding says below which counters it compares and how they are
made to cover the same work."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from dbio.stats import device_reads, histogram, published, stalls
from dbio.stats.counters import delta, get
from dbio.units import format_bytes

# The window so far must hold this much before a device finding is said: a few reads say nothing.
MIN_SECONDS = 3.0
MIN_READS = 300
# the final verdict's thresholds (report/cpu_findings.py; the devices against the engine, stats/device_reads.py)
STEAL_LIMIT = 5.0  # % of the CPU time
STATEMENT_KINDS = ("select", "update", "scan", "hot")
STALL_SAMPLES = 2  # one quiet second may be a slice that came back late (its statements come in the next sample)
ENGINE_MOVING = (("data", "reads"), ("data", "writes"), ("wal", "bytes"))  # stats/stalls.py's ENGINE_MOVING
DEVICE_READINGS_KEPT = 3600  # per-second device readings awaiting the sessions' counters (an hour's slice)
BUSY_FIELDS = ("user", "nice", "system", "irq", "softirq", "steal")
IDLE_FIELDS = ("idle", "iowait")


@dataclass(frozen=True)
class RunFacts:
    """What the findings know of the run besides its samples (its manifest's), as the verdict's rules do."""

    page_bytes: int = 8192  # the engine's read unit (InnoDB's page is 16 KiB)
    direct_io: bool = True  # off: the kernel may read ahead more than the engine asked
    devices_hold_data: bool = True  # every data place is on a device dbio reads: else they see a part of the reads
    local: bool = True  # the server runs on this host: this host's steal is the server's
    rate_asked_per_s: float | None = None  # --rate: the statements/s the sessions were scheduled for


def interval(prev: dict[str, Any], cur: dict[str, Any], bounds: list[float],
             span: published.Span | None = None) -> dict[str, Any]:
    """The interval between two samples: reads/s, average read, SELECT p99, writes/s, the busiest device's
    utilisation, the host's busy CPU and steal (None where a sample lacks what it takes).

    The engine's figures are over the span of the work its counters gained (stats/published.py, as the result's
    series): span, what published.Spans said of cur in the stream (else the two samples' own); none where no span
    is known (no slice ended in the interval: a statement in progress). The device's and the CPU's, read as they
    move, are over the readings' own times."""
    out: dict[str, Any] = {}
    if span is None:
        spans = published.Spans()
        spans.next(prev)
        span = spans.next(cur)
    since, engine_cur = span.since, cur.get("engine")
    if since is not None and since.get("engine") and engine_cur and span.seconds:
        begin = since["engine"]
        reads, writes = _gained(begin, engine_cur, "data", "reads"), _gained(begin, engine_cur, "data", "writes")
        client_reads = _gained(begin, engine_cur, "client", "reads")
        read_ms = _gained(begin, engine_cur, "client", "read_time_ms")
        out["reads_per_s"] = None if reads is None else reads / span.seconds
        out["writes_per_s"] = None if writes is None else writes / span.seconds
        out["avg_read_us"] = 1000 * read_ms / client_reads if client_reads and read_ms is not None else None
    out["select_p99_us"] = _p99(cur.get("statements"), bounds)
    # --rate: the interval's statements (as their slices ended) and their mean lag behind the schedule
    lag = (cur.get("statements") or {}).get("lag")
    seconds = (cur.get("t") or 0) - (prev.get("t") or 0)
    if lag and lag.get("count") and seconds > 0:
        out["rate_achieved_per_s"] = lag["count"] / seconds
        out["schedule_lag_us"] = lag["sum_us"] / lag["count"]
    os_prev, os_cur = prev.get("os") or {}, cur.get("os") or {}
    os_seconds = (os_cur.get("t") or 0) - (os_prev.get("t") or 0)
    if os_seconds > 0:
        busy = {dev: (fields.get("io_ms", 0) - (os_prev.get("disks") or {}).get(dev, {}).get("io_ms", 0))
                / (10 * os_seconds) for dev, fields in (os_cur.get("disks") or {}).items()
                if dev in (os_prev.get("disks") or {})}
        if busy:
            device = max(busy, key=lambda dev: busy[dev])
            out["device"], out["device_busy_pct"] = device, min(100.0, busy[device])
        cpu = _cpu(os_prev.get("stat") or {}, os_cur.get("stat") or {})
        if cpu is not None:
            out["cpu_busy_pct"], out["steal_pct"] = cpu
    return out


def _p99(statements: dict[str, Any] | None, bounds: list[float]) -> float | None:
    entry = (statements or {}).get("select")
    if not entry or not entry.get("count"):
        return None
    counts = histogram.empty(bounds)
    for index, n in entry["hist"].items():
        counts[int(index)] += n
    return histogram.percentile(counts, bounds, 0.99, entry.get("max_us"))


def _cpu(prev: dict[str, float], cur: dict[str, float]) -> tuple[float, float] | None:
    busy = sum(cur.get(k, 0) - prev.get(k, 0) for k in BUSY_FIELDS)
    idle = sum(cur.get(k, 0) - prev.get(k, 0) for k in IDLE_FIELDS)
    if busy + idle <= 0:
        return None
    return 100 * busy / (busy + idle), 100 * (cur.get("steal", 0) - prev.get("steal", 0)) / (busy + idle)


def line(figures: dict[str, Any]) -> str:
    """The interval's figures in one line (what a sample lacked is left out)."""
    parts = []
    if figures.get("reads_per_s") is not None:
        parts.append(f"{figures['reads_per_s']:,.0f} reads/s")
    if figures.get("avg_read_us") is not None:
        parts.append(f"{figures['avg_read_us']:,.0f} us/read")
    if figures.get("select_p99_us") is not None:
        parts.append(f"SELECT p99 {_time(figures['select_p99_us'])}")
    if figures.get("rate_achieved_per_s") is not None:  # --rate: asked against achieved, the schedule's lag
        asked = figures.get("rate_asked_per_s")
        of = "" if asked is None else f" of {asked:,.0f}"
        parts.append(f"rate {figures['rate_achieved_per_s']:,.0f}{of}/s, lag {_time(figures['schedule_lag_us'])}")
    if figures.get("writes_per_s") is not None:
        parts.append(f"{figures['writes_per_s']:,.0f} writes/s")
    if figures.get("device_busy_pct") is not None:
        parts.append(f"{figures['device']} {figures['device_busy_pct']:.0f}% busy")
    if figures.get("cpu_busy_pct") is not None:
        parts.append(f"CPU {figures['cpu_busy_pct']:.0f}% (steal {figures['steal_pct']:.0f}%)")
    return " · ".join(parts)


def _time(us: float) -> str:
    return f"{us / 1000:.1f} ms" if us >= 1000 else f"{us:,.0f} us"


@dataclass(frozen=True)
class _DeviceReading:
    """The devices' read counters of one sample, since the window's first, and when they were read."""

    read_by: float  # the sample's "answered": its /proc was read before it
    reads: float
    read_bytes: float


@dataclass
class Findings:
    """The window so far against the verdict's thresholds; check() returns what it shows that was not said."""

    facts: RunFacts = field(default_factory=RunFacts)
    start: dict[str, Any] | None = None  # the window's first sample (its begin reading, every session at rest)
    said: set[str] = field(default_factory=set)
    quiet: int = 0  # per-second samples in a row in which nothing showed the sessions working
    last: dict[str, Any] | None = None  # the previous sample
    # the devices' readings the sessions' published counters do not cover yet, oldest first (see _other_work)
    device_readings: deque = field(default_factory=lambda: deque(maxlen=DEVICE_READINGS_KEPT))
    spans: published.Spans = field(default_factory=published.Spans)  # what each sample's engine counters gained

    def check(self, cur: dict[str, Any]) -> list[str]:
        span = self.spans.next(cur)
        if self.start is None:
            self.start = self.last = cur
            return []
        found = self._stall(cur, span)
        found += self._device(cur)
        cpu = _cpu((self.start.get("os") or {}).get("stat") or {}, (cur.get("os") or {}).get("stat") or {})
        # steal: /proc/stat's steal against its own busy and idle times, over the same seconds
        if self.facts.local and _window(self.start, cur) >= MIN_SECONDS and cpu is not None and cpu[1] > STEAL_LIMIT:
            found.append(("steal", f"the hypervisor took {cpu[1]:.0f}% of the CPU time so far: latency includes "
                                   "waiting for a CPU"))
        self.last = cur
        out = []
        for code, message in found:
            if code not in self.said:
                self.said.add(code)
                out.append(message)
        return out

    def _stall(self, cur: dict[str, Any], span: published.Span) -> list[tuple[str, str]]:
        """STALL_SAMPLES per-second samples in a row in which the sessions did nothing: the verdict's judgement of a
        quiet interval (stats/stalls.quiet). The statements and the engine's counters come with the slices' ends,
        which a long statement holds back for seconds while the read probe's lookups move the counters: in a second
        in which no session published, what moves at once as the sessions work tells, their processes' CPU and the
        devices' reads."""
        if "k" not in cur:  # the window's own readings carry no interval of their own
            return []
        prev = self.last or self.start or {}
        tallies = [cur.get("statements") or {}, *(cur.get("late_statements") or {}).values()]
        finished = any(tally.get(kind, {}).get("count") for tally in tallies for kind in STATEMENT_KINDS)
        if stalls.quiet(finished=finished, unpublished=span.unpublished, engine_moved=_engine_moved(prev, cur),
                        **_moving_at_once(prev, cur)):
            self.quiet += 1
        else:
            self.quiet = 0
        if self.quiet < STALL_SAMPLES:
            return []
        return [("stall", f"no statement finished in the last {self.quiet} seconds: a stall (the report will say "
                          "how long and what the samples show)")]

    def _device(self, cur: dict[str, Any]) -> list[tuple[str, str]]:
        """The devices' reads against the engine's since the window's first reading (taken with every session at
        rest), judged as the verdict does (stats/device_reads.py): requests for single-block reads, bytes for
        multi-block ones (a scan's large reads, which the block layer splits or merges into other requests)."""
        assert self.start is not None
        engine_start, engine_cur = self.start.get("engine"), cur.get("engine")
        disks_start = (self.start.get("os") or {}).get("disks") or {}
        disks_cur = (cur.get("os") or {}).get("disks") or {}
        if not engine_start or not engine_cur or not disks_cur or not self.facts.devices_hold_data:
            return []
        read_by = _read_by(cur)
        device = _DeviceReading(read_by or 0.0, *_device_reads(disks_start, disks_cur))
        if read_by is not None:  # a reading that says when it was read: one the sessions' counters may cover
            self.device_readings.append(device)
        if _window(self.start, cur) < MIN_SECONDS:
            return []
        reads = _gained(engine_start, engine_cur, "data", "reads")
        read_bytes = _gained(engine_start, engine_cur, "data", "read_bytes")
        if reads is None or reads < MIN_READS:
            return []
        cache = self._cache(device, reads, read_bytes)
        other_work = self._other_work(cur, reads, read_bytes)  # each sample: its readings move on
        return cache or other_work

    def _compared(self, device: _DeviceReading, reads: float, read_bytes: float | None) -> device_reads.Reads | None:
        return device_reads.compared(device.reads, device.read_bytes, reads, read_bytes, self.facts.page_bytes)

    def _cache(self, device: _DeviceReading, reads: float, read_bytes: float | None) -> list[tuple[str, str]]:
        """A cache served some of the engine's reads: the devices read less than the engine counted. Compared
        within one sample, whose devices are read after its engine counters: they hold every read the engine's
        counted, and those of work not published yet; fewer is a cache whatever the sessions hold back."""
        compared = self._compared(device, reads, read_bytes)
        if compared is None or compared.share is None or not compared.cache():
            return []
        if compared.by_bytes:
            return [("cache", f"the device read {100 * compared.share:.0f}% of the {format_bytes(compared.engine)} "
                              "the engine read so far (multi-block reads, judged by bytes): a cache serves the rest, "
                              "so reads/s is not the storage's alone")]
        return [("cache", f"the device served {100 * compared.share:.0f}% of the engine's {reads:,.0f} reads so far: "
                          "a cache serves the rest, so reads/s is not the storage's alone")]

    def _other_work(self, cur: dict[str, Any], reads: float, read_bytes: float | None) -> list[tuple[str, str]]:
        """Other work read from the devices: they read more than the engine. The devices' counters run ahead of
        the engine's by the work the sessions have not published, so they are taken from the latest sample whose
        devices were read before any session's call still in progress was sent (cur's published_by_all, on the
        clock of the samples' "answered"): the engine's counters of cur hold all the sessions' work until then,
        and some after it; reading more than that is other work for certain."""
        by_all = cur.get("published_by_all")
        covered = None
        while self.device_readings and by_all is not None and self.device_readings[0].read_by <= by_all:
            covered = self.device_readings.popleft()
        if covered is None:
            return []
        self.device_readings.appendleft(covered)  # the latest covered: the next sample may cover no later one
        compared = self._compared(covered, reads, read_bytes)
        excess = None if compared is None else compared.excess()
        if compared is None or excess is None:
            return []
        ahead = " (or, direct I/O being off, the kernel read ahead more than the engine asked)" \
            if not self.facts.direct_io else ""
        if compared.by_bytes:
            return [("other_work", f"the device read at least {format_bytes(excess)} more than the engine's "
                                   f"{format_bytes(compared.engine)} so far (multi-block reads, judged by bytes): "
                                   f"other work shares the device{ahead}")]
        return [("other_work", f"the device read at least {excess:,.0f} more than the engine's {reads:,.0f} reads "
                               f"so far: other work shares the device{ahead}")]


def _engine_moved(prev: dict[str, Any], cur: dict[str, Any]) -> bool:
    """Whether the engine's reads, writes or WAL moved between two samples."""
    engine_prev, engine_cur = prev.get("engine"), cur.get("engine")
    if not engine_prev or not engine_cur:
        return False
    return any(_gained(engine_prev, engine_cur, group, key) for group, key in ENGINE_MOVING)


def _gained(begin: Any, end: Any, *path: str) -> Any:
    """get(delta(begin, end), *path), differencing only that counter: a sample's whole tree is not walked each
    second for the few counters read of it."""
    return delta(get(begin, *path), get(end, *path))


def _moving_at_once(prev: dict[str, Any], cur: dict[str, Any]) -> dict[str, float | None]:
    """What moves as the sessions work, between two samples, a second: their processes' CPU and the devices'
    reads (None where not read), as stats/stalls.quiet takes them."""
    os_prev, os_cur = prev.get("os") or {}, cur.get("os") or {}
    seconds = (os_cur.get("t") or 0) - (os_prev.get("t") or 0)
    cpu_prev, cpu_cur = os_prev.get("session_cpu_total"), os_cur.get("session_cpu_total")
    disks_prev, disks_cur = os_prev.get("disks") or {}, os_cur.get("disks") or {}
    return {"session_cpu_cores": max(0.0, cpu_cur - cpu_prev) / seconds
            if seconds > 0 and cpu_prev is not None and cpu_cur is not None else None,
            "device_reads_per_s": _device_reads(disks_prev, disks_cur)[0] / seconds
            if seconds > 0 and disks_prev and disks_cur else None}


def _device_reads(before: dict[str, Any], after: dict[str, Any]) -> tuple[float, float]:
    """Read requests and bytes the devices completed between two diskstats readings."""
    common = [dev for dev in after if dev in before]
    reads = sum(after[dev].get("reads", 0) - before[dev].get("reads", 0) for dev in common)
    sectors = sum(after[dev].get("sectors_read", 0) - before[dev].get("sectors_read", 0) for dev in common)
    return reads, 512 * sectors


def _read_by(sample: dict[str, Any]) -> float | None:
    """By when a sample's device counters had been read: its answer's time (the devices are read last, after
    the engine's counters); None for a reading that does not say."""
    answered = sample.get("answered")
    return float(answered) if isinstance(answered, (int, float)) else None


def _window(start: dict[str, Any], cur: dict[str, Any]) -> float:
    return ((cur.get("engine") or {}).get("t") or 0) - ((start.get("engine") or {}).get("t") or 0)
