"""Where a throughput curve stops paying: the knee, stated with Little's law (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

DEFAULT_GAIN = 0.10  # more sessions must add at least 10% of throughput to be worth it
CPU_SHARE_OF_RISE = 0.5  # the sessions' wait for a CPU was at least half of the read latency's rise at the knee


@dataclass(frozen=True)
class Point:
    sessions: int
    iops: float
    latency_us: float | None
    cpu_wait_us: float | None = None  # of each read's latency, the session's wait for a CPU (when measured)


@dataclass(frozen=True)
class Knee:
    after: Point  # the last step that paid
    next: Point  # the step that did not
    gain_pct: float
    latency_pct: float

    @property
    def in_flight(self) -> float | None:
        """Little's law at the next step: reads in flight = reads/s x read latency."""
        if self.next.latency_us is None:
            return None
        return self.next.iops * self.next.latency_us / 1e6

    def statement(self, what: str = "reads/s", latency: str = "read latency", read_latency: bool = True,
                  beyond: str | None = None) -> str:
        """read_latency: the latency is per read, so reads/s x latency counts reads in flight (a
        statement's latency spans work_unit reads, and Little's law would overstate them); beyond: where the
        curve stops paying, when not a session count (a rate asked)."""
        text = (f"beyond {beyond or f'{self.after.sessions} sessions'}, {what} {self.gain_pct:+.0f}% while "
                f"{latency} {self.latency_pct:+.0f}%: queueing")
        if read_latency and self.in_flight is not None:
            text += (f" (Little's law at {self.next.sessions} sessions: {self.next.iops:,.0f}/s x "
                     f"{self.next.latency_us:,.0f} us = {self.in_flight:.1f} in flight)")
        if read_latency:
            text += self._cpu_share()
        return text

    def _cpu_share(self) -> str:
        """How the read latency's rise compares with that of the sessions' wait for a CPU within a read, when both
        steps measured it."""
        a, b = self.after, self.next
        if a.cpu_wait_us is None or b.cpu_wait_us is None or a.latency_us is None or b.latency_us is None \
                or b.latency_us <= a.latency_us:
            return ""
        rise, waited = b.latency_us - a.latency_us, b.cpu_wait_us - a.cpu_wait_us
        text = f"; of the read latency's {rise:+,.0f} us, the wait for a CPU within a read was {waited:+,.0f} us"
        return text + (": this host's CPUs, not the storage, set the knee" if waited >= CPU_SHARE_OF_RISE * rise
                       else "")


def find(points: Sequence[Point], gain: float = DEFAULT_GAIN) -> Knee | None:
    """The first step after which more sessions add less than `gain` of throughput while latency
    rises faster than throughput; None for one step, a flat curve or a curve without latency."""
    ordered = sorted((p for p in points if p.iops > 0), key=lambda p: p.sessions)
    for a, b in zip(ordered, ordered[1:]):
        if a.latency_us is None or b.latency_us is None or a.latency_us <= 0 or b.sessions <= a.sessions:
            continue
        g = b.iops / a.iops - 1
        r = b.latency_us / a.latency_us - 1
        if g < gain and r > g:
            return Knee(a, b, 100 * g, 100 * r)
    return None


def find_over_rates(points: Sequence[Point], gain: float = DEFAULT_GAIN) -> Knee | None:
    """The knee of a curve over rates asked (sweep --rate; each Point's sessions is the rate asked, its iops the
    rate achieved, its latency from the intended start): the first step after which the rate achieved grew by
    less than (1 - gain) of the growth asked while latency rose faster than it: the added rate was not served
    and queued instead. None for one step or a curve that followed every rate asked."""
    ordered = sorted((p for p in points if p.iops > 0), key=lambda p: p.sessions)
    for a, b in zip(ordered, ordered[1:]):
        if a.latency_us is None or b.latency_us is None or a.latency_us <= 0 or b.sessions <= a.sessions:
            continue
        g = b.iops / a.iops - 1
        asked = b.sessions / a.sessions - 1
        r = b.latency_us / a.latency_us - 1
        if g < asked * (1 - gain) and r > g:
            return Knee(a, b, 100 * g, 100 * r)
    return None


def peaked(previous_best: float, current: float, gain: float) -> bool:
    """--until-peak: the doubling stops when a step adds less than `gain` to the best so far."""
    return previous_best > 0 and current < previous_best * (1 + gain)
