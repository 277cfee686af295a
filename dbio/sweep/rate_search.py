"""sweep --rate ... --objective: which rate to probe next, when the search stops and its answer (pure).

The search over rates looks for the highest rate that is held within a latency objective on the latency from
the intended start (capacity.Slo, an intended_* statistic): a probe meets it when its step is a storage result,
its rate was held (stats/rate.py) and the objective's figure is within the limit. A rate not held never meets
it, whatever its latency: its statements were not asked at that rate. The rates given run first; while every
probe meets it the highest doubles, then the search bisects between the highest rate that met it and the
lowest that did not, until they are within RESOLUTION of each other (or MAX_PROBES steps have run). A probe
that is not a storage result, or that measured no latency from its intended start, stops the search: no
answer rests on a figure that is not the storage's, or on none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from dbio.stats.capacity import Slo
from dbio.sweep.search import latency_text

RESOLUTION = 0.10  # bisection stops when the rates that met and did not are within 10% of each other
MAX_PROBES = 16  # steps in all, the rates given included: a search that has not settled by then says so


@dataclass(frozen=True)
class RateProbe:
    """One measured step of the search, in the order run."""

    step: str
    rate: int  # asked, statements/s over all sessions
    achieved_per_s: float | None
    held: bool | None  # its rate held (figures.rate.held); None: not judged
    value_us: float | None  # the objective's figure there; None: not measured (why says why)
    valid: bool = True  # its verdict: a storage result
    why: str | None = None


@dataclass(frozen=True)
class RateDecision:
    """Either the next rate to probe, or the end of the search with its answer line."""

    rate: int | None = None
    reason: str = ""  # grow, bisect; or, stopping: crossed, none, limit, invalid, absent
    line: str = ""  # the answer with its evidence (only when stopping)
    best: str | None = None  # the step the answer quotes


def met(slo: Slo, probe: RateProbe) -> bool:
    return probe.valid and probe.held is True and slo.met(probe.value_us)


def decide(probes: Sequence[RateProbe], slo: Slo, max_rate: int, *, resolution: float = RESOLUTION,
           max_probes: int = MAX_PROBES) -> RateDecision:
    """After the probes so far (at least one), the next rate or the answer."""
    last = probes[-1]
    if not last.valid:
        return _stop(probes, slo, "invalid", f"the search stopped at {last.rate:,}/s: step {last.step} is not a "
                                             f"storage result ({last.why or 'see its findings'})")
    if last.value_us is None:
        return _stop(probes, slo, "absent", f"the search stopped at {last.rate:,}/s: step {last.step} did not "
                                            f"measure the {slo.label} ({last.why or 'no figure'})")
    failed = [p for p in probes if not met(slo, p)]
    if not failed:
        highest = max(p.rate for p in probes)
        if highest >= max_rate or len(probes) >= max_probes:
            return _stop(probes, slo, "limit", f"still within the objective at {highest:,}/s, the last rate "
                                               "probed")
        return RateDecision(rate=min(highest * 2, max_rate), reason="grow")
    lowest_fail = min(failed, key=lambda p: p.rate)
    low = max((p.rate for p in probes if met(slo, p) and p.rate < lowest_fail.rate), default=0)
    gap = lowest_fail.rate - low
    evidence = f"{lowest_fail.rate:,}/s: {_why_not(slo, lowest_fail)}"
    if gap <= 1 or (low and gap / low <= resolution):
        return _stop(probes, slo, "crossed" if low else "none", evidence)
    if len(probes) >= max_probes:
        return _stop(probes, slo, "limit", f"{evidence}; {len(probes)} probes, the most a search runs")
    return RateDecision(rate=(low + lowest_fail.rate) // 2, reason="bisect")


def _why_not(slo: Slo, probe: RateProbe) -> str:
    if probe.held is not True:
        achieved = "" if probe.achieved_per_s is None else f", achieved {probe.achieved_per_s:,.0f}/s"
        return f"rate not held{achieved}"
    return f"{slo.label} {latency_text(probe.value_us)}"


def _stop(probes: Sequence[RateProbe], slo: Slo, reason: str, evidence: str) -> RateDecision:
    """The answer: the highest rate among the probes that met the objective (held, within the limit), with the
    evidence of where it stops being met (or why the search stopped)."""
    within = [p for p in probes if met(slo, p)]
    if not within:
        if reason == "none":
            return RateDecision(reason=reason, line=f"no rate is held within {slo.label} {_limit(slo)}: {evidence}")
        return RateDecision(reason=reason, line=f"no probe was held within {slo.label} {_limit(slo)}; {evidence}")
    best = max(within, key=lambda p: p.rate)
    achieved = "" if best.achieved_per_s is None else f" (achieved {best.achieved_per_s:,.0f}/s)"
    line = (f"{best.rate:,} statements/s held{achieved} with {slo.label} {latency_text(best.value_us)} "
            f"({_limit(slo)}); {evidence}")
    return RateDecision(reason=reason, line=line, best=best.step)


def _limit(slo: Slo) -> str:
    return f"<= {latency_text(slo.limit_us)}"
