"""The Single read latency section of a report (pure): the distribution of single reads' latency the read
probe measured (run/read_probe.py, stats/single_reads.py), where and how, or why there is none."""

from __future__ import annotations

from typing import Any

from dbio.report.tables import table
from dbio.stats import catalogue
from dbio.stats.single_reads import FAST_US

FIGURES = catalogue.figures("single_read_count", "single_read_p50_us", "single_read_p90_us", "single_read_p99_us",
                            "single_read_p99_9_us", "single_read_max_us")
HEADINGS = ("Reads", "p50", "p90", "p99", "p99.9", "Max")


def how(single: dict[str, Any], seconds: float | None = None) -> str:
    """Where and how the distribution was measured, in one sentence (seconds: the window's, for the rate made)."""
    nodes = single.get("nodes") or 1
    rate = single.get("rate_per_s")
    where = "a probe session" if nodes == 1 else f"a probe session on each of the {nodes} nodes"
    timed = f"{single['count']:,} single-block reads" if single.get("count") else "no single-block read"
    made = f", {single['lookups'] / seconds / nodes:.1f}/s made" if seconds and single.get("lookups") else ""
    return (f"Timed by the engine around each read ({single.get('method') or 'its own I/O timer'}), sampled by "
            f"{where} beside the run's sessions at {rate or 0:g} lookups/s asked{made}, of random rows of the "
            f"loaded tables, through the work loop's access path, while the window was open: {timed}.")


def section(f: dict[str, Any], direct_io: bool | None = None) -> dict[str, Any]:
    single = catalogue.single_reads(f)
    out: dict[str, Any] = {"id": "single_reads", "title": "Single read latency"}
    if not single:
        return out
    if single.get("count") is None:
        out["lines"] = [f"not measured: single reads' latency ({single.get('why') or 'unknown'})"]
        return out
    rows = [[fig.value(f) for fig in FIGURES]]
    kinds = [fig.kind for fig in FIGURES]
    notes = [how(single, catalogue.value(f, "window_seconds"))]
    other = [f"{single.get('cached', 0):,} lookups found their blocks in the engine's cache"] if single.get("cached") \
        else []
    if single.get("multi"):
        other.append(f"{single['multi']:,} read more than one block (index and table): left out, as no single "
                     "read's time is in them")
    if other:
        notes.append("; ".join(other) + ".")
    fast = single.get("fast_pct")
    if fast is not None:
        if direct_io:
            notes.append(f"{fast:.1f}% took under {FAST_US:g} us; the server reads with direct I/O, so each read "
                         "reached the device (or its cache), never the OS page cache.")
        else:
            notes.append(f"{fast:.1f}% took under {FAST_US:g} us: likely the OS page cache, not the device (the "
                         "server reads through it; the engine's timer includes it).")
    if single.get("probe_share_pct") is not None:
        notes.append(f"The probe read {single.get('blocks_read', 0):,} blocks, {single['probe_share_pct']:.2f}% of "
                     "the client reads the window's figures count (they include them); its server process's CPU "
                     "is dbio's overhead.")
    if single.get("partial"):
        notes.append(f"Partial: {single['partial']}.")
    tables = [table("single_reads", "Single read latency (the engine's timer around each read)",
                    list(HEADINGS), kinds, rows, notes)]
    buckets = single.get("awr_buckets") or []
    used = [i for i, b in enumerate(buckets) if b["count"]]
    hist, cumulative = [], 0.0
    for b in buckets[min(used):max(used) + 1] if used else []:
        cumulative = min(100.0, cumulative + b["pct"])
        hist.append([b["bucket"], b["count"], b["pct"], cumulative])
    tables.append(table("histogram_single_reads", "Single read latency histogram", ["Bucket", "Reads", "%", "Cum %"],
                        ["text", "count", "pct", "pct"], hist))
    return {**out, "tables": tables, "charts": ["single_read_histogram"]}


def chart_data(f: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The chart's buckets, under the name its legend shows."""
    single = catalogue.single_reads(f) or {}
    return {"single read": single["awr_buckets"]} if single.get("awr_buckets") else {}
