"""The report of one result, as data: every renderer (text, Markdown, HTML, JSON) shows this model.

A pure function of result.json. Tables carry raw numbers and a kind per column (how to format
them), so the text and the HTML report carry the same figures, and --format json gives them
unformatted. The sections are built in run_section, node_sections, window_sections and
interval_sections; every figure is read through the catalogue (stats/catalogue.py).
"""

from __future__ import annotations

from typing import Any

from dbio.report import (baseline_section, conduct_findings, disruption_section, interval_sections, layout_section,
                         node_sections, run_section, access_section, single_read_section, verdict, window_sections,
                         words)
from dbio.report.tables import table
from dbio.result_records import Result
from dbio.stats import catalogue
from dbio.stats import series as series_math

FORMAT = "dbio-report"
FORMAT_VERSION = 1
KIND_LABELS = catalogue.STATEMENT_LABELS
HEADLINE = catalogue.figures("reads_per_s", "avg_read_us", "read_mib_per_s", "select_p99_us",
                             "reads_per_host_cpu_second", "db_cpu_us_per_read", "writes_per_s", "statements_per_s")
SERIES_POINTS = ("from_s", "to_s", "partial", "since_start", "phase", "reads_per_s", "writes_per_s", "read_mib_per_s",
                 "write_mib_per_s", "avg_read_us", "select_p99_us", "statements_per_s", "host_busy_pct",
                 "host_user_pct", "host_system_pct", "host_iowait_pct", "host_steal_pct", "device_reads_per_s")
__all__ = ["FORMAT", "FORMAT_VERSION", "HEADLINE", "KIND_LABELS", "build", "table"]


def build(r: Result) -> dict[str, Any]:
    """The report model of a result (a Result as result.read_result gives it)."""
    f = dict(r.figures)
    judged = verdict.judge(r)  # the one verdict every part of the model reads
    findings = judged.findings
    measured = catalogue.measured(f)
    intervals = series_math.labelled(r.series, r.timeline.warmup_seconds or 0)
    model: dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "title": f"dbio report: {r.label or r.run_id}",
        "run": {"label": r.label, "run_id": r.run_id, "status": r.status,
                "status_reason": r.status_reason, "window_start": r.timeline.window_start,
                "window_seconds": catalogue.value(f, "window_seconds"), "dbio_version": r.dbio_version},
        # the verdict and what could not be measured come first, in every format
        "verdict": judged.summary,
        "findings": [x.to_dict() for x in findings],
        "not_measured": conduct_findings.not_measured(r),
        "headline_text": judged.headline,
        # the figures' cards: none on an invalid result, whose reads are not storage's (headline_text says so)
        "headline": _headline(f, judged.caveats[0])
        if measured and not any(x.level == "invalid" for x in findings) else [],
        "sections": _sections(r, f, intervals, findings),
        "series": _series_points(intervals) if measured else {},
        "histograms": _histograms(f) if measured else {},
        "events": window_sections.event_shares(r.waits) if measured else [],
        # charts the HTML report draws: (chart, the model entry it draws from)
        "charts": [["series_iops", "series"], ["series_latency", "series"], ["latency_histogram", "histograms"],
                   ["events", "events"], ["cpu", "series"]] if measured else [],
    }
    bands = disruption_section.bands(r) if measured else []
    if bands:  # only with --event's, so results without one render as before
        model["series"]["bands"] = bands
    single_reads = single_read_section.chart_data(f) if measured else {}
    if single_reads:  # only with a read probe's reads, so results without one render as before
        model["single_reads"] = single_reads
        model["charts"].insert(3, ["single_read_histogram", "single_reads"])
    efficiency = baseline_section.efficiency_line(r)
    if efficiency is not None:  # only beside a baseline, so results without one render as before
        model["efficiency_text"] = efficiency
    return words.in_engine_words(model, dict(r.capabilities))  # InnoDB's redo log, pages, ...


def _sections(r: Result, f: dict[str, Any], intervals: list[dict[str, Any]],
              findings: list[verdict.Finding]) -> list[dict[str, Any]]:
    """The report's sections in order, those with nothing to show left out."""
    validity = window_sections.validity_lines(f, words.cache_name(r))
    sections = [{"id": "verdict", "title": "Verdict and warnings",
                 "lines": [f"{x.level}: {x.message}" for x in findings
                           if x.code != "unavailable" and x.level not in ("invalid", "warning")]
                 + [f"not measured: {m['figure']} ({m['why']})" for m in conduct_findings.not_measured(r)] + validity},
                disruption_section.section(r), run_section.section(r), run_section.storage(r)]
    nodes = node_sections.section(r)
    if nodes:
        sections.append(nodes)
    sections.append(baseline_section.section(r))
    if catalogue.measured(f):
        sections += [window_sections.load_profile(f), window_sections.io_profile(f), window_sections.latency(f),
                     single_read_section.section(f, r.caps.direct_io),
                     window_sections.events(r), window_sections.cpu(f, r.caps.local),
                     window_sections.devices(f), layout_section.section(r), access_section.section(f),
                     interval_sections.time_series(intervals), interval_sections.stability_section(r, intervals)]
    sections += node_sections.per_node(r)  # several nodes: each one's own section, as AWR's instance reports
    return [s for s in sections if s.get("tables") or s.get("pairs") or s.get("lines")]


def _headline(f: dict[str, Any], caveats: dict[str, list[str]]) -> list[dict[str, Any]]:
    """The figures' cards, each with the caveats the headline line gives it (verdict.headline_caveats)."""
    return [{"label": fig.label, "value": fig.value(f), "kind": fig.kind,
             **({"caveat": "; ".join(caveats[fig.name])} if caveats.get(fig.name) else {})} for fig in HEADLINE]


def _series_points(intervals: list[dict[str, Any]]) -> dict[str, list[Any]]:
    out = {k: [r.get(k) for r in intervals] for k in SERIES_POINTS}
    if any(r.get("host_unsampled_pct") is not None for r in intervals):  # results since busy time counts it
        out["host_unsampled_pct"] = [r.get("host_unsampled_pct") for r in intervals]
    return out


def _histograms(f: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Each statement kind's buckets; a kind recorded without them has no bars to draw."""
    return {kind: buckets for kind in catalogue.statement_latency(f)
            if (buckets := catalogue.histogram(f, kind)) is not None}
