"""sweep --objective: which session count to probe next, when the search stops and its answer (pure).

The search looks for the most reads/s whose latency meets an objective (capacity.Slo): session counts
double while every probe meets it and reads/s keep growing, then it bisects between the highest count that
met it and the lowest that did not, until they are adjacent or within RESOLUTION of each other. Counts
are threads per schema (a step's sessions are them times the schemas). Each probe is a measured step: an
invalid one (not a storage result) or one that did not measure the objective's figure stops the search,
so no answer rests on a figure that is not the storage's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from dbio.stats.capacity import Slo
from dbio.stats.knee import peaked

RESOLUTION = 0.10  # bisection stops when the counts that met and did not are within 10% of each other
GAIN = 0.05  # growth stops when doubling adds less than 5% of reads/s


@dataclass(frozen=True)
class Probe:
    """One measured step of the search, in the order run."""

    step: str
    threads: int  # threads per schema
    sessions: int
    reads_per_s: float | None
    value_us: float | None  # the objective's figure there; None: not measured (why says why)
    valid: bool = True  # its verdict: a storage result
    why: str | None = None  # why it is not valid, or why the figure is absent


@dataclass(frozen=True)
class Decision:
    """Either the next count to probe (threads), or the end of the search with its answer line."""

    threads: int | None = None
    reason: str = ""  # grow, bisect; or, stopping: crossed, none, peak, limit, invalid, absent
    line: str = ""  # the answer with its evidence (only when stopping)
    best: str | None = None  # the step the answer quotes


def met(slo: Slo, probe: Probe) -> bool:
    return probe.valid and slo.met(probe.value_us)


def decide(probes: Sequence[Probe], slo: Slo, max_threads: int, *, gain: float = GAIN,
           resolution: float = RESOLUTION) -> Decision:
    """After the probes so far (at least one), the next count or the answer."""
    last = probes[-1]
    if not last.valid:
        return _stop(probes, slo, "invalid", f"the search stopped at {last.sessions} sessions: step {last.step} is "
                                             f"not a storage result ({last.why or 'see its findings'})")
    if last.value_us is None:
        return _stop(probes, slo, "absent", f"the search stopped at {last.sessions} sessions: step {last.step} did "
                                            f"not measure the {slo.label} ({last.why or 'no figure'})")
    failed = [p for p in probes if not met(slo, p)]
    if not failed:
        before = [p.reads_per_s or 0.0 for p in probes[:-1]]
        if before and peaked(max(before), last.reads_per_s or 0.0, gain):
            return _stop(probes, slo, "peak", f"{last.sessions} sessions: {_rate(last.reads_per_s)} reads/s, "
                                              f"less than {100 * gain:.0f}% more (within the objective, "
                                              f"{slo.label} {latency_text(last.value_us)})")
        if last.threads >= max_threads:
            return _stop(probes, slo, "limit", f"still within the objective at {last.sessions} sessions, "
                                               "the most --max-sessions allows")
        return Decision(threads=min(last.threads * 2, max_threads), reason="grow")
    lowest_fail = min(failed, key=lambda p: p.threads)
    below = [p.threads for p in probes if met(slo, p) and p.threads < lowest_fail.threads]
    low = max(below, default=0)  # 0: no count below has met it yet
    gap = lowest_fail.threads - low
    if gap <= 1 or (low and gap / low <= resolution):
        evidence = f"{lowest_fail.sessions} sessions: {slo.label} {latency_text(lowest_fail.value_us)}"
        return _stop(probes, slo, "crossed" if low else "none", evidence)
    return Decision(threads=(low + lowest_fail.threads) // 2, reason="bisect")


def _stop(probes: Sequence[Probe], slo: Slo, reason: str, evidence: str) -> Decision:
    """The answer: the most reads/s among the probes that met the objective, with the evidence of where it
    stops being met (or why the search stopped)."""
    within = [p for p in probes if met(slo, p) and p.reads_per_s is not None]
    if not within:
        first = min(probes, key=lambda p: p.threads)
        if reason == "none":
            at = f"at {first.sessions} session{'s' if first.sessions != 1 else ''} it is {latency_text(first.value_us)}"
            return Decision(reason=reason, line=f"no session count meets {slo.label} {_limit(slo)}: {at}")
        return Decision(reason=reason, line=f"no probe met {slo.label} {_limit(slo)}; {evidence}")
    best = max(within, key=lambda p: p.reads_per_s or 0.0)
    line = (f"{_rate(best.reads_per_s)} reads/s at {best.sessions} session{'s' if best.sessions != 1 else ''} "
            f"with {slo.label} {latency_text(best.value_us)} ({_limit(slo)}); {evidence}")
    return Decision(reason=reason, line=line, best=best.step)


def _limit(slo: Slo) -> str:
    return f"< {latency_text(slo.limit_us)}"


def _rate(x: float | None) -> str:
    return "-" if x is None else f"{x:,.0f}"


def latency_text(x: float | None) -> str:
    """A latency in us as the search's lines say it: "-" when absent, ms from 1 ms up (pure)."""
    if x is None:
        return "-"
    return f"{x / 1000:,.2f} ms" if x >= 1000 else f"{x:,.0f} us"
