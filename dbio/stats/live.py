"""What the live view shows while a run goes on (pure): the last interval's figures from two consecutive
normalized samples, and findings the moment the window's counters so far show them -- each said once.

The findings here are early warnings from the window so far, judged with the final verdict's own thresholds
(report/verdict.py and its rules' modules); the result's verdict, over the whole window, is what counts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dbio.stats import histogram
from dbio.stats.counters import delta, get

# The window so far must hold this much before a device finding is said: a second's counters are noisy
# (the sessions publish at slice boundaries, the device counts as it goes).
MIN_SECONDS = 3.0
MIN_READS = 300
# the final verdict's thresholds (report/storage_findings.py, report/cpu_findings.py), said early
DEVICE_SHARE_LIMIT = 0.9  # device reads / engine reads below: a cache served the rest
DEVICE_EXCESS_LIMIT = 0.02  # device reads beyond the engine's by this share: other work
DEVICE_EXCESS_MIN_READS = 100
STEAL_LIMIT = 5.0  # % of the CPU time
BLOCK = 8192
STATEMENT_KINDS = ("select", "update", "scan", "hot")
STALL_SAMPLES = 2  # one quiet second may be a slice that came back late (its statements come in the next sample)
MULTI_BLOCK_BYTES = 1.5 * 16384  # beyond any engine's page: multi-block reads, judged by bytes (verdict too)
BUSY_FIELDS = ("user", "nice", "system", "irq", "softirq", "steal")
IDLE_FIELDS = ("idle", "iowait")


def interval(prev: dict[str, Any], cur: dict[str, Any], bounds: list[float]) -> dict[str, Any]:
    """The interval between two samples: reads/s, average read, SELECT p99, writes/s, the busiest device's
    utilisation, the host's busy CPU and steal (None where a sample lacks what it takes)."""
    out: dict[str, Any] = {}
    engine_prev, engine_cur = prev.get("engine"), cur.get("engine")
    seconds = (engine_cur or {}).get("t", 0) - (engine_prev or {}).get("t", 0) if engine_prev and engine_cur else 0
    if seconds > 0:
        d = delta(engine_prev, engine_cur)
        reads, writes = get(d, "data", "reads"), get(d, "data", "writes")
        client_reads, read_ms = get(d, "client", "reads"), get(d, "client", "read_time_ms")
        out["reads_per_s"] = None if reads is None else reads / seconds
        out["writes_per_s"] = None if writes is None else writes / seconds
        out["avg_read_us"] = 1000 * read_ms / client_reads if client_reads and read_ms is not None else None
    out["select_p99_us"] = _p99(cur.get("statements"), bounds)
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
    if figures.get("writes_per_s") is not None:
        parts.append(f"{figures['writes_per_s']:,.0f} writes/s")
    if figures.get("device_busy_pct") is not None:
        parts.append(f"{figures['device']} {figures['device_busy_pct']:.0f}% busy")
    if figures.get("cpu_busy_pct") is not None:
        parts.append(f"CPU {figures['cpu_busy_pct']:.0f}% (steal {figures['steal_pct']:.0f}%)")
    return " · ".join(parts)


def _time(us: float) -> str:
    return f"{us / 1000:.1f} ms" if us >= 1000 else f"{us:,.0f} us"


@dataclass
class Findings:
    """The window so far against the verdict's thresholds; check() returns what it shows that was not said."""

    start: dict[str, Any] | None = None  # the window's first sample (its begin reading)
    said: set[str] = field(default_factory=set)
    quiet: int = 0  # per-second samples in a row in which no statement finished

    def check(self, cur: dict[str, Any]) -> list[str]:
        if self.start is None:
            self.start = cur
            return []
        found = []
        finished = [cur.get("statements") or {}, *(cur.get("late_statements") or {}).values()]
        if "k" in cur:  # a per-second sample (the window's own readings carry no interval of their own)
            if any(tally.get(kind, {}).get("count") for tally in finished for kind in STATEMENT_KINDS):
                self.quiet = 0
            else:
                self.quiet += 1
        if self.quiet >= STALL_SAMPLES:
            found.append(("stall", f"no statement finished in the last {self.quiet} seconds: a stall (the report "
                                   "will say how long and what the samples show)"))
        found += self._device(cur)
        span = _window(self.start, cur)
        cpu = _cpu((self.start.get("os") or {}).get("stat") or {}, (cur.get("os") or {}).get("stat") or {})
        if span >= MIN_SECONDS and cpu is not None and cpu[1] > STEAL_LIMIT:
            found.append(("steal", f"the hypervisor took {cpu[1]:.0f}% of the CPU time so far: latency includes "
                                   "waiting for a CPU"))
        out = []
        for code, message in found:
            if code not in self.said:
                self.said.add(code)
                out.append(message)
        return out

    def _device(self, cur: dict[str, Any]) -> list[tuple[str, str]]:
        if self.start is None:
            return []
        engine_start, engine_cur = self.start.get("engine"), cur.get("engine")
        disks_start = (self.start.get("os") or {}).get("disks") or {}
        disks_cur = (cur.get("os") or {}).get("disks") or {}
        if not engine_start or not engine_cur or not disks_cur or _window(self.start, cur) < MIN_SECONDS:
            return []
        d = delta(engine_start, engine_cur)
        engine_reads, engine_bytes = get(d, "data", "reads"), get(d, "data", "read_bytes")
        if engine_reads is None or engine_reads < MIN_READS:
            return []
        device_reads = sum(fields.get("reads", 0) - disks_start.get(dev, {}).get("reads", 0)
                           for dev, fields in disks_cur.items() if dev in disks_start)
        if engine_bytes and engine_bytes / engine_reads > MULTI_BLOCK_BYTES:  # scans: the block layer splits
            device_bytes = 512 * sum(fields.get("sectors_read", 0) - disks_start.get(dev, {}).get("sectors_read", 0)
                                     for dev, fields in disks_cur.items() if dev in disks_start)
            engine_reads, device_reads = engine_bytes / BLOCK, device_bytes / BLOCK  # in 8 KiB units
        share = device_reads / engine_reads
        if share < DEVICE_SHARE_LIMIT:
            return [("cache", f"the device served {100 * share:.0f}% of the engine's {engine_reads:,.0f} reads so "
                              "far: a cache serves the rest, so reads/s is not the storage's alone")]
        if device_reads - engine_reads > max(DEVICE_EXCESS_MIN_READS, DEVICE_EXCESS_LIMIT * engine_reads):
            return [("other_work", f"the device read {device_reads - engine_reads:,.0f} more than the engine's "
                                   f"{engine_reads:,.0f} reads so far: other work shares the device")]
        return []


def _window(start: dict[str, Any], cur: dict[str, Any]) -> float:
    return ((cur.get("engine") or {}).get("t") or 0) - ((start.get("engine") or {}).get("t") or 0)
