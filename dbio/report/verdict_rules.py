"""Every rule of the verdict, declared once as one row, in the order their findings are listed (pure).

A row names its judge (a function of the result: at most one finding, or a list of them), where it applies
(`RUN`: the run's figures; `NODE`: judged again on each node's own; `HOST`: also on each host's in a merge of
several hosts' runs, whose total has no host figures) and, for each code its warnings carry, the headline
figure the warning qualifies and the few words said beside it (`Caveat`; `BESIDE`: said on the efficiency line
beside the headline, not in it). A code a row gives no caveat is named at the headline's end in its own words.
The judges live by what they judge (conduct_findings, storage_findings, ...); this table is the only place
that says which rules there are.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

from dbio.report import (access_findings as _a, baseline_findings as _b, cluster_findings as _g,
                         conduct_findings as _c, cpu_findings as _p, disruption_section as _d, limit_findings as _l,
                         node_verdicts as _n, stack_findings as _k, storage_findings as _s)
from dbio.report.finding import Finding
from dbio.result_records import Result

RUN, NODE, HOST = "run", "node", "host"

Judge = Callable[[Result], "Finding | Sequence[Finding] | None"]


@dataclass(frozen=True)
class Caveat:
    """The headline figure a warning qualifies (None: named at the line's end) and its words (None: the code's)."""
    figure: str | None
    words: Callable[[Result, Finding], str | None] | None = None
    beside: bool = False  # said beside the headline (the efficiency line), not in it


BESIDE = Caveat(None, beside=True)
READS, LATENCY, PER_CPU = "reads_per_s", "avg_read_us", "reads_per_host_cpu_second"


@dataclass(frozen=True)
class Rule:
    judge: Judge
    applies: str = RUN  # RUN, NODE or HOST
    caveats: Mapping[str, Caveat] = field(default_factory=dict)
    # an invalid finding whose words the headline says instead of its figures (the first row's that is found)
    instead: Mapping[str, Callable[[Finding], str]] = field(default_factory=dict)


def _per_node(r: Result) -> list[Finding]:
    """Each node's own figures judged by the NODE rules (and, in a merge, the HOST ones); its stop and lag."""
    again = tuple(rule.judge for rule in RULES if rule.applies == NODE or (rule.applies == HOST and r.merged_from))
    return _n.node_findings(r, again, Finding)


RULES: tuple[Rule, ...] = (
    # --rate: said first of the warnings, every latency of the window being then a queue's
    Rule(_c.rate_not_held, caveats={"rate_not_held": Caveat(READS, _c.rate_not_held_caveat)}),
    Rule(_k.in_memory), Rule(_k.loop_page_cache), Rule(_k.no_device),
    Rule(_l.io_limit), Rule(_l.cpu_limit), Rule(_l.baseline_outside_limits),
    Rule(_c.status, caveats={"status": Caveat(READS, _c.status_caveat)}),
    Rule(_c.stalled, caveats={"stalled": Caveat(READS, _c.stalled_caveat)}),
    Rule(_c.counters_reset, instead={"counter_reset": _c.counters_reset_instead}), Rule(_c.no_window),
    Rule(_c.short_window, instead={"short_window": _c.short_window_instead}),
    Rule(_s.rows_from_cache, NODE),
    Rule(_s.reads_beyond_rows, caveats={"reads_beyond_rows": Caveat(READS, _s.reads_beyond_rows_caveat)}),
    Rule(_s.read_only_wrote, caveats={"read_only_wrote": Caveat(READS, _s.read_only_wrote_caveat)}),
    Rule(_s.page_cache, NODE),
    Rule(_s.shared_device, NODE, {"shared_device": Caveat(READS, _s.shared_device_caveat)}),
    Rule(_c.other_sessions, caveats={"other_sessions": Caveat(READS, _c.other_sessions_caveat)}),
    Rule(_p.other_cpu, HOST, {"other_cpu": Caveat(PER_CPU, _p.other_cpu_caveat)}),
    Rule(_s.small_data_set, caveats={"small_data_set": Caveat(READS, _s.small_data_set_caveat)}),
    Rule(_p.cpu_saturated, HOST, {"cpu_saturated": Caveat(READS, _p.cpu_saturated_caveat)}),
    Rule(_p.cpu_stolen, HOST, {"cpu_steal": Caveat(LATENCY, _p.cpu_steal_caveat)}),
    Rule(_p.cpu_wait_in_latency, HOST, {"cpu_wait": Caveat(LATENCY, _p.cpu_wait_caveat)}),
    Rule(_p.sessions_queue_for_cpu),
    Rule(_c.checkpoint_in_window, caveats={"checkpoint": Caveat(LATENCY, _c.checkpoint_caveat)}),
    Rule(_c.maintenance_in_window, caveats={"maintenance": Caveat(READS, _c.maintenance_caveat)}),
    Rule(_s.device_saturated),
    Rule(_p.overhead),
    Rule(_b.device_drift, caveats={"device_drift": BESIDE}),
    Rule(_b.database_vs_device, caveats={"below_device": BESIDE,
                                         "beyond_device": Caveat(READS, _b.beyond_device_caveat)}),
    Rule(_d.not_recovered, caveats={"not_recovered": Caveat(READS, _d.not_recovered_caveat)}),
    Rule(_c.unavailable),
    Rule(_a.reads_per_statement), Rule(_a.group_commit), Rule(_a.scan_bound),
    Rule(_g.flow_control), Rule(_g.conflicts), Rule(_g.quorum),
    Rule(_per_node, caveats={"node_stopped": Caveat(READS, _n.node_stopped_caveat)}),
    Rule(_c.run_events, caveats={"readings_refused": Caveat(READS, _c.readings_refused_caveat),
                                 "parts_missing": Caveat(READS, _c.parts_missing_caveat)}),
    Rule(_c.counting),
)

def instead_of_the_figures() -> list[tuple[str, Callable[[Finding], str]]]:
    """(code, words) of the invalid findings the headline says instead of its figures, in the rows' order."""
    return [(code, said) for rule in RULES for code, said in rule.instead.items()]


def caveat(code: str) -> Caveat | None:
    """A warning code's caveat, from the row that declares it (one row each: test_verdict_rules.py)."""
    return next((said for rule in RULES for name, said in rule.caveats.items() if name == code), None)
