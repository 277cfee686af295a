"""Does a result measure storage? The verdict: every rule's findings in one list, the most serious first,
the headline a user can quote with its caveats, and the machine-readable summary (pure).

The rules are declared once, one row each, in report/verdict_rules.py (their judge, where they apply, the
headline figure each warning qualifies and its words); their judges live by what they judge: the storage stack
under the run's places (stack_findings), the limits the server ran under (limit_findings), the run's conduct
(conduct_findings), the storage's truth: device against engine, caches (storage_findings), the host's CPUs
(cpu_findings), the database beside its raw device (baseline_findings), the workload's shape
(access_findings), a multi-writer cluster (cluster_findings) and each node (node_verdicts). Levels are invalid
(the result does not measure what it claims), warning (read it with this in mind) and info. Thresholds are
named constants in each rule's module, so a reader can see exactly when a rule fires. A result is judged once
into a `Verdict`, which the report model and the summary lines hold.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

from dbio.report import verdict_rules, words
from dbio.report.cpu_findings import large_wait_in_reads
from dbio.report.finding import Finding
from dbio.result_records import Result
from dbio.stats import catalogue

__all__ = ["Finding", "Verdict", "findings", "headline", "headline_caveats", "invalid", "judge",
           "reads_caveats", "summary", "summary_line"]

_ORDER = {"invalid": 0, "warning": 1, "info": 2}


def _judged(r: Result) -> list[Finding]:
    """Every rule's findings (report/verdict_rules.py), in the table's order, the most serious first."""
    out: list[Finding] = []
    for rule in verdict_rules.RULES:
        found = rule.judge(r)
        if isinstance(found, Finding):
            out.append(found)
        elif found:
            out.extend(found)
    return sorted(out, key=lambda f: _ORDER[f.level])


# The one-line headline, in this order; the first must be there for a line at all.
HEADLINE = catalogue.figures("reads_per_s", "avg_read_us", "read_mib_per_s", "reads_per_host_cpu_second")

# How an invalid result is named wherever its figures would be quoted as storage's (headlines, tables).
NOT_STORAGE = "not a storage result"
INVALID_MARK = "(INVALID)"
VALID_LINE = "VALID storage result"


class Verdict:
    """One result's verdict, judged once: its findings, the summary, the headline and its caveats. The report
    model and the summary lines each hold one and read it, instead of judging the result again."""

    def __init__(self, result: Result) -> None:
        self.result = result

    @cached_property
    def findings(self) -> list[Finding]:
        """All findings, the most serious first."""
        return _judged(self.result)

    @property
    def invalid(self) -> list[Finding]:
        """The findings that say the result does not measure storage (the run's or a node's)."""
        return [x for x in self.findings if x.level == "invalid"]

    @cached_property
    def summary(self) -> dict[str, Any]:
        """The machine-readable verdict: valid unless a finding says the result does not measure storage; the
        reasons one line each, in the engine's own words."""
        reasons = [words.say(self.result, x.message) for x in self.invalid]
        return {"valid": not reasons, "reasons": reasons}

    @cached_property
    def caveats(self) -> tuple[dict[str, list[str]], list[str]]:
        """The headline's caveats: each warning in a few words beside the figure of the headline it qualifies
        ({figure name: [words]}), and the warnings about none of them, named."""
        r = self.result
        f = r.figures
        shown = {fig.name for fig in HEADLINE if fig.value(f) is not None}
        by_figure: dict[str, list[str]] = {}
        others: list[str] = []
        for finding in self.findings:
            caveat = verdict_rules.caveat(finding.code)
            if finding.level != "warning" or (caveat is not None and caveat.beside):
                continue
            said = caveat.words(r, finding) if caveat is not None and caveat.words is not None else None
            name = caveat.figure if caveat is not None and said is not None else None
            words_ = said if said is not None else finding.code.replace("_", " ")
            if name in shown:
                by_figure.setdefault(str(name), []).append(words_)
            else:
                others.append(words_)
        large = large_wait_in_reads(f)  # measured within each read: said beside the latency even without a warning
        if large is not None and not any("waiting for a CPU" in w for w in by_figure.get("avg_read_us", [])):
            by_figure.setdefault("avg_read_us", []).append(f"{large[0]:,.0f} us of it waiting for a CPU")
        return by_figure, list(dict.fromkeys(others))

    @cached_property
    def headline(self) -> str:
        """One line a user can quote, with its caveats: a figure a warning shows is partly not the storage's
        says so where it stands, so that a quote of the line carries it (a warning about none of its figures
        is named at its end). An invalid result's line quotes no storage figure: it says the result is none,
        and what the engine counted, as the engine's count (or, with no count to quote, why)."""
        f = self.result.figures
        if not catalogue.measured(f):
            return "no measured window"
        bad = self.invalid
        reads = HEADLINE[0].value(f)
        if bad:
            by_code = {x.code: x for x in reversed(bad)}  # the first finding of each code
            for code, said in verdict_rules.instead_of_the_figures():  # what they mean, said instead of figures
                if code in by_code:
                    return f"{NOT_STORAGE} {INVALID_MARK}: {said(by_code[code])}"
            if reads is None:
                return f"{NOT_STORAGE} {INVALID_MARK}: {bad[0].message}"
            return (f"{NOT_STORAGE} {INVALID_MARK}: the engine counted {reads:,.0f} reads/s as physical, "
                    "but storage was not shown to serve them")
        if reads is None:
            return "no measured window"
        caveats, others = self.caveats
        line = ", ".join(str(fig.phrase).format(fig.value(f))
                         + (f" ({'; '.join(caveats[fig.name])})" if caveats.get(fig.name) else "")
                         for fig in HEADLINE if fig.value(f) is not None)
        return line + (f" (also: {'; '.join(others)})" if others else "")

    @property
    def reads_caveats(self) -> list[str]:
        """The caveats of the reads/s where a line quotes it alone (a sweep's best step, a comparison): the
        headline's of that figure and those of none of its figures."""
        by_figure, others = self.caveats
        return by_figure.get(HEADLINE[0].name, []) + others


def judge(given: Result | Verdict) -> Verdict:
    """A result's verdict (a Verdict given is the one already judged). A typed Result is judged once: the
    verdicts of the last results asked about are kept, so that a report, a comparison or a sweep asking again
    of the same Result gets the same Verdict)."""
    if isinstance(given, Verdict):
        return given
    kept = _JUDGED.get(id(given))
    if kept is not None and kept.result is given:
        return kept
    if len(_JUDGED) >= _KEPT:
        del _JUDGED[next(iter(_JUDGED))]
    _JUDGED[id(given)] = verdict = Verdict(given)
    return verdict


_KEPT = 16  # results: a comparison's, a sweep's steps; few, for a result may be large
_JUDGED: dict[int, Verdict] = {}


# What a caller with a result and no Verdict of its own asks; each judges the result once for its answer.

def findings(given: Result) -> list[Finding]:
    return judge(given).findings


def invalid(given: Result) -> list[Finding]:
    return judge(given).invalid


def headline(given: Result) -> str:
    return judge(given).headline


def headline_caveats(given: Result) -> tuple[dict[str, list[str]], list[str]]:
    return judge(given).caveats


def reads_caveats(given: Result) -> list[str]:
    return judge(given).reads_caveats


def summary(given: Result) -> dict[str, Any]:
    return judge(given).summary


def not_storage(names: list[str]) -> str:
    """Results (or steps) named where their figures are quoted: 'b INVALID: not a storage result'."""
    return f"{', '.join(names)} INVALID: " + (NOT_STORAGE if len(names) == 1 else "not storage results")


def summary_line(verdict: dict[str, Any]) -> str:
    """Every format's first line: 'VALID storage result' or 'NOT VALID: <reasons>'."""
    return VALID_LINE if verdict.get("valid") else "NOT VALID: " + "; ".join(verdict.get("reasons") or ["no reason"])
