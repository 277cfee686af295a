"""Capacity and queueing from a sweep's measured points (pure): the sessions a target rate needs
under a latency objective, the device's utilisation and service time (utilisation law), the I/O
in flight (Little's law) and the knee.

Every statement is read off a measured step: a target between two steps is met at the higher
one (the count between was not measured), and a target beyond the measured range is said to be
so, never extrapolated."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Sequence

from dbio.stats import knee as knee_math

# An objective's statistic -> the catalogue figure it is checked against, and how a reader names it. The short
# names (avg, p50, p99, p99.9) are --latency-slo's first ones; the long ones say which latency they bound.
SLO_FIGURES = {"avg": ("avg_read_us", "avg physical read"), "p50": ("select_p50_us", "SELECT p50"),
               "p99": ("select_p99_us", "SELECT p99"), "p99.9": ("select_p99_9_us", "SELECT p99.9"),
               "avg_read": ("avg_read_us", "avg physical read"),
               "read_p50": ("single_read_p50_us", "single-read p50"),
               "read_p90": ("single_read_p90_us", "single-read p90"),
               "read_p99": ("single_read_p99_us", "single-read p99"),
               "read_p99.9": ("single_read_p99_9_us", "single-read p99.9"),
               "select_p50": ("select_p50_us", "SELECT p50"), "select_p99": ("select_p99_us", "SELECT p99"),
               "select_p99.9": ("select_p99_9_us", "SELECT p99.9"),
               # --rate's (an open loop): each statement's latency from its intended start, its queue included
               "intended_p50": ("intended_p50_us", "p50 from the intended start"),
               "intended_p99": ("intended_p99_us", "p99 from the intended start"),
               "intended_p99.9": ("intended_p99_9_us", "p99.9 from the intended start")}
INTENDED = tuple(name for name in SLO_FIGURES if name.startswith("intended_"))  # a search over rates takes these
_UNITS_US = {"us": 1.0, "ms": 1000.0, "s": 1e6}
_STATS = "|".join(re.escape(name) for name in sorted(SLO_FIGURES, key=len, reverse=True))
_SLO = re.compile(rf"^\s*({_STATS})\s*(<=|<)\s*([0-9]+(?:\.[0-9]+)?)\s*(us|ms|s)\s*$", re.IGNORECASE)
STATS_HELP = ("avg_read (average physical read), read_p50, read_p90, read_p99, read_p99.9 (single reads, timed by "
              "the read probe), select_p50, select_p99, select_p99.9 (SELECT statements); avg, p50, p99, p99.9 are "
              "avg_read and the SELECT ones; intended_p50, intended_p99, intended_p99.9 (with --rate: from each "
              "statement's intended start)")


@dataclass(frozen=True)
class Slo:
    stat: str  # avg, p50, p99, p99.9
    limit_us: float

    @property
    def figure(self) -> str:
        return SLO_FIGURES[self.stat][0]

    @property
    def label(self) -> str:
        return SLO_FIGURES[self.stat][1]

    def text(self) -> str:
        return f"{self.stat} < {_us(self.limit_us)}"

    def met(self, latency_us: float | None) -> bool:
        return latency_us is not None and latency_us <= self.limit_us


def parse_slo(text: str) -> Slo:
    """'p99<2ms', 'avg<500us', 'p99.9<10ms'; ValueError saying what is wrong."""
    found = _SLO.match(text or "")
    if not found:
        raise ValueError(f"latency objective {text!r} is not STAT<LIMIT: STAT avg_read, read_p99, select_p99 (or "
                         "avg, p50, p99, p99.9, read_p50, read_p90, read_p99.9, select_p50, select_p99.9; with --rate "
                         "intended_p50, intended_p99, intended_p99.9), LIMIT a number with us, ms or s (e.g. "
                         "'read_p99<2ms')")
    stat, _, number, unit = found.groups()
    limit = float(number) * _UNITS_US[unit.lower()]
    if limit <= 0:
        raise ValueError(f"latency objective {text!r}: the limit must be above zero")
    if not math.isfinite(limit):  # float("9" * 400) is infinity
        raise ValueError(f"latency objective {text[:40]!r}...: the limit is beyond any latency")
    return Slo(stat.lower(), limit)


@dataclass(frozen=True)
class Point:
    """One measured step of a curve over sessions."""

    step: str
    sessions: int
    iops: float  # the database's I/O requests/s: data reads, data writes, WAL writes
    read_us: float | None  # average physical read, for Little's law
    slo_us: float | None = None  # the objective's figure at this step
    device: str | None = None  # the busiest block device under the data directory
    device_iops: float | None = None  # its completions/s (diskstats reads + writes)
    busy_pct: float | None = None  # its busy time / elapsed time
    device_queue: float | None = None  # its average requests in flight (diskstats weighted time)
    reads_per_s: float | None = None  # physical reads/s, which read_us times (Little's law); else iops


def statements(points: Sequence[Point], target_iops: float | None, slo: Slo | None,
               gain: float = knee_math.DEFAULT_GAIN) -> list[str]:
    """What the measured points say for the target and objective, one statement a line."""
    ordered = sorted((p for p in points if p.iops > 0), key=lambda p: p.sessions)
    if not ordered:
        return ["no measured step: nothing to say about capacity"]
    span = f"{ordered[0].sessions}..{ordered[-1].sessions} sessions" if len(ordered) > 1 else \
        f"{ordered[0].sessions} sessions only"
    lines = [f"measured: {len(ordered)} step(s), {span}, {_rate(ordered[0].iops)} to "
             f"{_rate(max(p.iops for p in ordered))} I/O requests/s"]
    chosen, target_lines = _target(ordered, target_iops, slo, gain)
    lines += target_lines
    lines += [_device(chosen), _little(chosen), _knee(ordered, gain)]
    return lines


def _target(ordered: list[Point], target: float | None, slo: Slo | None, gain: float) -> tuple[Point, list[str]]:
    """The step the other statements are made at, and what the target and objective come to."""
    best = max(ordered, key=lambda p: p.iops)
    within = [p for p in ordered if slo is None or slo.met(p.slo_us)]
    best_within = max(within, key=lambda p: p.iops) if within else None
    if slo is not None and not any(p.slo_us is not None for p in ordered):
        return best, [f"objective {slo.text()}: not checked, the steps did not measure {slo.label}"]
    if target is None:
        if slo is None:  # neither asked: nothing to say of them
            return best, []
        if best_within is None:
            return best, [f"objective {slo.text()} ({slo.label}): no measured step meets it; the lowest is "
                          f"{_us(min(p.slo_us for p in ordered if p.slo_us is not None))}"]
        return best_within, [f"within {slo.text()} ({slo.label}) the most measured is {_rate(best_within.iops)} "
                             f"I/O requests/s at {_sessions(best_within.sessions)} ({_at(best_within, slo)})"]
    wanted = f"target {_rate(target)} I/O requests/s" + (f" with {slo.text()} ({slo.label})" if slo else "")
    reaching = [p for p in ordered if p.iops >= target]
    meeting = [p for p in reaching if p in within]
    if meeting:
        first = meeting[0]
        below = [p for p in ordered if p.sessions < first.sessions]
        text = f"{wanted}: met at {_sessions(first.sessions)}, the fewest measured that reach it " \
               f"({_rate(first.iops)}/s, {_at(first, slo)}, step {first.step})"
        if below:
            text += f"; {_sessions(below[-1].sessions)} gave {_rate(below[-1].iops)}/s and the counts between " \
                    "were not measured"
        return first, [text]
    if reaching:
        first = reaching[0]
        assert slo is not None  # without an objective, every step that reaches the target meets it
        text = (f"{wanted}: not met within the measured range: the rate is reached at {first.sessions} sessions "
                f"({_rate(first.iops)}/s) but {slo.label} there is {_us(first.slo_us)}")
        if best_within is not None:
            text += f"; within the objective the most measured is {_rate(best_within.iops)}/s at " \
                    f"{best_within.sessions} sessions"
        return first, [text]
    text = (f"{wanted}: beyond the measured range: the most measured is {_rate(best.iops)}/s at {best.sessions} "
            f"sessions ({100 * best.iops / target:.0f}% of the target); dbio does not extrapolate")
    return best, [text, _further(ordered, gain)]


def _further(ordered: list[Point], gain: float) -> str:
    """Whether measuring more sessions could help: the last step's gain over the one before it."""
    if len(ordered) < 2:
        return "measure more session counts (dbio sweep --sessions 1,2,4,8,16,32 or --until-peak) to know more"
    a, b = ordered[-2], ordered[-1]
    added = b.iops / a.iops - 1
    if added < gain:
        return (f"from {a.sessions} to {b.sessions} sessions the rate grew {100 * added:+.0f}%: more sessions are "
                "unlikely to reach the target on this server and storage")
    return (f"from {a.sessions} to {b.sessions} sessions the rate still grew {100 * added:+.0f}%: sweep more "
            f"sessions (beyond {b.sessions}) to see whether the target can be reached")


def _device(p: Point) -> str:
    if p.device is None or p.busy_pct is None or not p.device_iops:
        return (f"device at {_sessions(p.sessions)}: utilisation not measured (no block device of the data "
                "directory in /proc/diskstats)")
    service_us = p.busy_pct / 100 / p.device_iops * 1e6
    return (f"device {p.device} at {_sessions(p.sessions)}: {p.busy_pct:.0f}% busy for {_rate(p.device_iops)} "
            f"completions/s, so {service_us:,.1f} us of busy time per I/O (utilisation law S = U / X); busy time "
            "counts any request in flight, so a device serving requests in parallel can be 100% busy below its "
            "ceiling")


def _little(p: Point) -> str:
    if p.read_us is None:
        return f"Little's law at {_sessions(p.sessions)}: not computed, the engine did not time its reads"
    reads = p.reads_per_s if p.reads_per_s is not None else p.iops
    in_flight = reads * p.read_us / 1e6
    text = (f"Little's law at {_sessions(p.sessions)}: {_rate(reads)} reads/s x {_us(p.read_us)} = "
            f"{in_flight:.1f} reads in flight for {_sessions(p.sessions)}")
    if p.device_queue is not None:
        text += f"; the device's own average queue (diskstats) was {p.device_queue:.1f}"
    return text


def _knee(ordered: list[Point], gain: float) -> str:
    found = knee_math.find([knee_math.Point(p.sessions, p.iops, p.read_us) for p in ordered], gain)
    if found:
        return "knee: " + found.statement(what="I/O requests/s")
    if len(ordered) < 2:
        return "knee: one step, no curve"
    return (f"knee: none between {ordered[0].sessions} and {ordered[-1].sessions} sessions (every step added at "
            f"least {100 * gain:.0f}% of I/O requests/s, or latency did not rise faster)")


def _at(p: Point, slo: Slo | None) -> str:
    if slo is None:
        return f"avg read {_us(p.read_us)}" if p.read_us is not None else "latency not timed"
    return f"{slo.label} {_us(p.slo_us)}"


def _sessions(n: int) -> str:
    return f"{n} session{'' if n == 1 else 's'}"


def _rate(x: float) -> str:
    return f"{x:,.0f}"


def _us(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x / 1000:,.2f} ms" if x >= 10_000 else f"{x:,.0f} us"
