"""The verdict's rules about the workload's shape (pure): micro-transactions whose reads per
statement are not the number intended, group commit, and what bounds a DSS scan."""

from __future__ import annotations

from dbio.report.finding import Finding, found as _found
from dbio.result_records import Result
from dbio.stats import catalogue
from dbio.stats.catalogue import value

MICRO_WORK_UNIT = 4  # range statements this narrow are micro-transactions: their exact read count is the point
READS_PER_STATEMENT_TOLERANCE = 0.05  # measured / intended beyond 1 +- this: the statements did not do what was meant
SCAN_BANDWIDTH_BOUND = 0.8  # scan MiB/s / fio's sequential MiB/s on the same files: the device's bandwidth is used up
SCAN_CPU_BOUND_PCT = 80.0  # % host CPU busy: the scans are CPU-bound
SCAN_DEVICE_BUSY_PCT = 90.0  # % a device under the data was busy


def reads_per_statement(r: Result) -> Finding | None:
    """Micro-transactions (work_unit <= 4): reads per statement measured against intended."""
    f = r.figures
    measured, intended = value(f, "reads_per_statement"), value(f, "intended_reads_per_statement")
    if not catalogue.measured(f) or measured is None or not intended or intended > MICRO_WORK_UNIT:
        return None
    ratio = measured / intended
    told = f"{measured:.2f} physical reads per statement, {intended:g} intended"
    if abs(ratio - 1) <= READS_PER_STATEMENT_TOLERANCE:
        return _found("info", "reads_per_statement", f"{told}: each statement read what it was meant to",
                      "reads_per_statement_ratio", ratio)
    why = ("index pages were read too (the index is not all in the cache: a larger cache or a smaller data set "
           "keeps its pages there)" if ratio > 1 else "the cache served some rows (a larger data set avoids it)")
    return _found("warning", "reads_per_statement", f"{told} ({100 * (ratio - 1):+.0f}%): {why}",
                  "reads_per_statement_ratio", ratio)


def group_commit(r: Result) -> Finding | None:
    """Read + write: how many WAL writes each commit cost; below 1, commits shared them."""
    f = r.figures
    per_commit = value(f, "wal_writes_per_commit")
    if not catalogue.measured(f) or per_commit is None:
        return None
    if per_commit < 1:
        shared = f"group commit: one WAL write made {1 / per_commit:.1f} commits durable" if per_commit else \
            "no WAL write in the window"
    else:
        shared = "each commit wrote the WAL on its own"
    return _found("info", "group_commit", f"{per_commit:.2f} WAL writes per commit: {shared}",
                  "wal_writes_per_commit", per_commit)


def scan_bound(r: Result) -> Finding | None:
    """DSS scans: their bandwidth against the device's sequential bandwidth, and what bounded them."""
    f = r.figures
    mib = value(f, "scan_mib_per_s")
    if not catalogue.measured(f) or mib is None:
        return None
    size, seq = value(f, "avg_scan_read_kib"), value(f, "raw_seq_read_mib_per_s")
    share = value(f, "scan_bandwidth_share")
    told = f"scans read {mib:,.1f} MiB/s" + (f" in {size:,.0f} KiB reads" if size is not None else "")
    workers = value(f, "scan_worker_share_pct")
    if workers:
        told += f" ({workers:.0f}% of it by parallel query workers)"
    if share is not None:
        told += f", {share:.2f} of the device's sequential {seq:,.1f} MiB/s (fio)"
    busy = value(f, "host_busy_pct")
    util = max((d.get("utilization_pct") or 0 for d in catalogue.devices(f).values()), default=None)
    if share is not None and share >= SCAN_BANDWIDTH_BOUND:
        return _found("info", "scan_bound", f"{told}: bound by the device's bandwidth", "scan_bandwidth_share", share)
    if busy is not None and busy >= SCAN_CPU_BOUND_PCT and r.caps.local:
        return _found("info", "scan_bound", f"{told}: CPU-bound (host CPU {busy:.0f}% busy)", "scan_mib_per_s", mib)
    if util is not None and util >= SCAN_DEVICE_BUSY_PCT:
        return _found("info", "scan_bound", f"{told}: the device was busy {util:.0f}% of the window",
                      "scan_mib_per_s", mib)
    hint = "" if share is not None else " (dbio run --baseline measures the device's sequential bandwidth)"
    return _found("info", "scan_bound", f"{told}: neither the CPU nor the device was saturated; more sessions "
                                        f"(or parallel workers) could read more{hint}", "scan_mib_per_s", mib)
