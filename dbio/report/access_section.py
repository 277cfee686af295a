"""The Workload shape section of a report (pure): reads per statement against intended, writes and
WAL writes per commit, and the scans' bandwidth against the device's sequential bandwidth. Only the
parts the run had are shown (range statements, commits, scans)."""

from __future__ import annotations

from typing import Any

from dbio.report.tables import table
from dbio.stats import catalogue

MICRO = catalogue.figures("reads_per_statement", "intended_reads_per_statement", "reads_per_statement_ratio")
COMMITS = catalogue.figures("data_writes_per_commit", "wal_writes_per_commit", "wal_syncs_per_commit")
SCANS = catalogue.figures("scan_mib_per_s", "scan_reads_per_s", "avg_scan_read_kib", "scan_mib_per_scan",
                          "scan_worker_share_pct", "scan_workers_planned_per_scan", "scan_workers_launched_per_scan",
                          "raw_seq_read_mib_per_s", "scan_bandwidth_share")


WORKERS = ("scan_worker_share_pct", "scan_workers_planned_per_scan", "scan_workers_launched_per_scan")


def section(f: dict[str, Any]) -> dict[str, Any]:
    serial = not any(fig.value(f) for fig in SCANS if fig.name in WORKERS)  # scans without parallel workers
    rows = [[fig.label, fig.value(f), fig.how] for group in (MICRO, COMMITS, SCANS)
            if group[0].value(f) is not None for fig in group
            if fig.value(f) is not None and not (serial and fig.name in WORKERS)]
    if not rows:
        return {"id": "shape", "title": "Workload shape"}
    return {"id": "shape", "title": "Workload shape",
            "tables": [table("shape", "", ["Figure", "Value", "How"], ["text", "rate", "text"], rows)]}
