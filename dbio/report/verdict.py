"""Does a result measure storage? The verdict: every rule's findings in one list, the most serious first,
the headline a user can quote with its caveats, and the machine-readable summary (pure).

The rules live by what they judge: the storage stack under the run's places (stack_findings), the limits
the server ran under (limit_findings), the run's conduct (conduct_findings), the storage's truth: device
against engine, caches (storage_findings), the host's CPUs (cpu_findings), the database beside its raw
device (baseline_findings) and the workload's shape (access_findings). Every rule returns at most one
Finding; levels are invalid (the result does not measure what it claims), warning (read it with this in
mind) and info. Thresholds are named constants in each rule's module, so a reader can see exactly when
a rule fires.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from dbio.report import (baseline_findings, cluster_findings, conduct_findings, cpu_findings, limit_findings,
                         node_verdicts, access_findings, stack_findings, storage_findings, words)
from dbio.report.cpu_findings import large_wait_in_reads
from dbio.report.finding import Finding
from dbio.report.storage_findings import page_bytes, read_comparison
from dbio.result_records import Doc, Result, of
from dbio.stats import catalogue
from dbio.stats.catalogue import value


def findings(doc: Doc) -> list[Finding]:
    """All findings, the most serious first."""
    r = of(doc)
    out: list[Finding] = []
    for rule in (*stack_findings.RULES, *limit_findings.RULES, *RULES, *access_findings.RULES, *cluster_findings.RULES):
        finding = rule(r)
        if finding is not None:
            out.append(finding)
    # a merge of several hosts' runs: each node is its own host, so the host's rules are judged per node
    out += node_verdicts.node_findings(r, NODE_RULES + (HOST_RULES if r.merged_from else ()), Finding)
    for event in r.events:
        if event.kind in ("cancelled", "session_failed", "readings_refused"):
            out.append(Finding("warning", event.kind, str(event.message)))
        if event.kind == "pending_writes" and not event.finished:  # written out before: nothing to say
            out.append(Finding("warning", "pending_writes", str(event.message)))
        if event.kind in ("parts", "parts_missing"):  # a part late, without a window or not given (dbio merge)
            out.append(Finding("warning", event.kind, str(event.message)))
    for counted in r.counting:  # runs that shared a server (dbio merge): did their counts agree?
        if counted.agree is False:
            diff = counted.difference_pct or 0.0
            out.append(Finding("warning", "counting", f"on {counted.description} the runs' sessions read "
                               f"{abs(diff):.1f}% {'less' if diff > 0 else 'more'} than the server: "
                               + ("other clients or the server's own processes shared it" if counted.others
                                  else "the sessions' count exceeds the server's (windows apart?)"),
                               "counting_difference_pct", counted.difference_pct))
    order = {"invalid": 0, "warning": 1, "info": 2}
    return sorted(out, key=lambda f: order[f.level])


_c, _s, _p, _b = conduct_findings, storage_findings, cpu_findings, baseline_findings
RULES: tuple[Callable[[Result], Finding | None], ...] = (
    _c.rate_not_held, _c.status, _c.stalled, _c.counters_reset, _c.no_window, _c.short_window, _s.rows_from_cache,
    _s.reads_beyond_rows, _s.read_only_wrote, _s.page_cache, _s.shared_device, _c.other_sessions, _p.other_cpu,
    _s.small_data_set, _p.cpu_saturated, _p.cpu_stolen, _p.cpu_wait_in_latency, _p.sessions_queue_for_cpu,
    _c.checkpoint_in_window, _c.maintenance_in_window, _s.device_saturated, _p.overhead, _b.device_drift,
    _b.database_vs_device, _c.unavailable)

# What is judged again on each node's own figures when a run has several (report/node_verdicts.py).
NODE_RULES = (_s.rows_from_cache, _s.page_cache, _s.shared_device)
# ...and, in a merge of several hosts' runs, what each host's own CPU figures say (the total has none).
HOST_RULES = (_p.other_cpu, _p.cpu_saturated, _p.cpu_stolen, _p.cpu_wait_in_latency)


# The one-line headline, in this order; the first must be there for a line at all.
HEADLINE = catalogue.figures("reads_per_s", "avg_read_us", "read_mib_per_s", "reads_per_host_cpu_second")


def invalid(given: Doc) -> list[Finding]:
    """The findings that say the result does not measure storage (the run's or a node's)."""
    return [x for x in findings(given) if x.level == "invalid"]


# How an invalid result is named wherever its figures would be quoted as storage's (headlines, tables).
NOT_STORAGE = "not a storage result"
INVALID_MARK = "(INVALID)"


def not_storage(names: list[str]) -> str:
    """Results (or steps) named where their figures are quoted: 'b INVALID: not a storage result'."""
    return f"{', '.join(names)} INVALID: " + (NOT_STORAGE if len(names) == 1 else "not storage results")


def headline(given: Doc) -> str:
    """One line a user can quote, with its caveats: a figure a warning shows is partly not the storage's
    says so where it stands, so that a quote of the line carries it (a warning about none of its figures
    is named at its end). An invalid result's line quotes no storage figure: it says the result is none,
    and what the engine counted, as the engine's count (or, with no count to quote, why)."""
    r = of(given)
    f = r.figures
    if not catalogue.measured(f):
        return "no measured window"
    found = findings(r)
    bad = [x for x in found if x.level == "invalid"]
    reads = HEADLINE[0].value(f)
    if bad:
        if any(x.code == "counter_reset" for x in bad):  # the verdict names them: here, what it means
            return (f"{NOT_STORAGE} {INVALID_MARK}: the engine's counters went back inside the window (statistics "
                    "reset or server restarted): what they counted in it is unknown")
        short = next((x for x in bad if x.code == "short_window"), None)
        if reads is None or short is not None:
            return f"{NOT_STORAGE} {INVALID_MARK}: {(short or bad[0]).message}"
        return (f"{NOT_STORAGE} {INVALID_MARK}: the engine counted {reads:,.0f} reads/s as physical, "
                "but storage was not shown to serve them")
    if reads is None:
        return "no measured window"
    caveats, others = headline_caveats(r, found)
    line = ", ".join(str(fig.phrase).format(fig.value(f))
                     + (f" ({'; '.join(caveats[fig.name])})" if caveats.get(fig.name) else "")
                     for fig in HEADLINE if fig.value(f) is not None)
    return line + (f" (also: {'; '.join(others)})" if others else "")


def reads_caveats(given: Doc) -> list[str]:
    """The caveats of a result's reads/s where a line quotes it alone (a sweep's best step, a comparison): the
    headline's of that figure and those of none of its figures."""
    by_figure, others = headline_caveats(given)
    return by_figure.get(HEADLINE[0].name, []) + others


# Warnings about the database beside its raw device (a baseline): the efficiency line printed beside the
# headline says them, and the headline's figures are no less the storage's for them.
BESIDE_THE_HEADLINE = ("below_device", "device_drift")


def headline_caveats(given: Doc, found: list[Finding] | None = None) -> tuple[dict[str, list[str]], list[str]]:
    """The headline's caveats: each warning in a few words beside the figure of the headline it qualifies
    ({figure name: [words]}), and the warnings about none of them, named (pure)."""
    r = of(given)
    f = r.figures
    shown = {fig.name for fig in HEADLINE if fig.value(f) is not None}
    by_figure: dict[str, list[str]] = {}
    others: list[str] = []
    for finding in findings(r) if found is None else found:
        if finding.level != "warning" or finding.code in BESIDE_THE_HEADLINE:
            continue
        name, words = _caveat(r, f, finding)
        if name in shown:
            by_figure.setdefault(name, []).append(words)
        else:
            others.append(words)
    large = large_wait_in_reads(f)  # measured within each read: said beside the latency even without a warning
    if large is not None and not any("waiting for a CPU" in w for w in by_figure.get("avg_read_us", [])):
        by_figure.setdefault("avg_read_us", []).append(f"{large[0]:,.0f} us of it waiting for a CPU")
    return by_figure, list(dict.fromkeys(others))


def _caveat(r: Result, f: Mapping[str, Any], finding: Finding) -> tuple[str | None, str]:
    """(the headline figure a warning qualifies, or None; the warning in a few words)."""
    code = finding.code
    if code == "shared_device":
        reads = read_comparison(f, page_bytes(r))
        ratio = None if reads is None else reads.share
        if reads is not None and ratio is not None and reads.excess() is not None:
            what = "the engine's bytes" if reads.by_bytes else "the engine's reads"
            did = f"{ratio:.1f}x {what}" if ratio >= 2 else f"{100 * ratio:.1f}% of {what}"
            return "reads_per_s", f"the device {'read' if reads.by_bytes else 'did'} {did}: other work shared the " \
                                  "device"
        wrote = value(f, "device_to_db_write_ratio")
        return "reads_per_s", (f"the device wrote {wrote:.1f}x the engine's bytes" if wrote is not None else
                               "the device wrote what the engine did not") + ": other work shared the device"
    if code == "small_data_set" and finding.value is not None:
        return "reads_per_s", f"the data set is only {finding.value:.1f}x the cache: some reads may be cache hits"
    if code == "beyond_device":
        return "reads_per_s", "more than the raw device gave: some reads came from a cache"
    if code == "reads_beyond_rows" and finding.value is not None:
        return "reads_per_s", f"{finding.value:.2f} blocks read per row: index blocks too"
    if code == "other_sessions":
        share = value(f, "other_read_share_pct")
        return "reads_per_s", (f"other sessions did {share:.1f}% of the client reads" if share else
                               "other sessions were active")
    if code == "status":
        return "reads_per_s", f"run {str(r.status).upper()}: the figures cover the part that ran"
    if code == "parts_missing" and r.parts is not None:  # dbio cannot vouch for it as the run's: it says so
        missing = ", ".join(map(str, r.parts.missing))
        return "reads_per_s", f"part{'s' if len(r.parts.missing) > 1 else ''} {missing} of {r.parts.of} missing: " \
                              "not the whole run's"
    if code == "node_stopped":
        stopped = [n for n in r.cluster.get("stopped_nodes") or [] if isinstance(n, str)]
        return "reads_per_s", f"{', '.join(stopped) or 'a node'} stopped: the totals are partial"
    if code == "stalled":
        window = value(f, "window_seconds")
        share = f" {100 * finding.value / window:.0f}% of its time" if finding.value is not None and window else ""
        return "reads_per_s", f"the window stalled{share}"
    if code == "readings_refused":
        return "reads_per_s", "readings refused: gaps in the series"
    if code == "maintenance":
        name = r.capabilities.get("maintenance_name") or "background maintenance"
        return "reads_per_s", f"{name} did I/O in the window"
    if code == "cpu_saturated" and finding.value is not None:
        return "reads_per_s", f"host CPU {finding.value:.0f}% busy"
    if code == "cpu_wait":
        large = large_wait_in_reads(f)
        if large is not None:
            return "avg_read_us", f"{large[0]:,.0f} us of it waiting for a CPU"
        return "avg_read_us", f"the sessions waited for a CPU {finding.value:.0f}% of their time" \
            if finding.value is not None else "the sessions waited for a CPU"
    if code == "cpu_steal" and finding.value is not None:
        return "avg_read_us", f"{finding.value:.1f}% of the CPU time stolen by the hypervisor"
    if code == "checkpoint" and finding.value is not None:
        return "avg_read_us", f"{finding.value:.0f} checkpoint(s) in the window"
    if code == "other_cpu":
        return "reads_per_host_cpu_second", f"{value(f, 'other_cpu_pct'):.0f}% of that CPU other work's"
    if code == "read_only_wrote":
        return "reads_per_s", "a read-only run that wrote: the device did writes too"
    return None, code.replace("_", " ")


VALID_LINE = "VALID storage result"


def summary(given: Doc) -> dict[str, Any]:
    """The machine-readable verdict, from the findings the report makes: valid unless one says the result
    does not measure storage; the reasons one line each, in the engine's own words."""
    r = of(given)
    reasons = [words.say(r, x.message) for x in invalid(r)]
    return {"valid": not reasons, "reasons": reasons}


def summary_line(verdict: dict[str, Any]) -> str:
    """Every format's first line: 'VALID storage result' or 'NOT VALID: <reasons>'."""
    return VALID_LINE if verdict.get("valid") else "NOT VALID: " + "; ".join(verdict.get("reasons") or ["no reason"])
