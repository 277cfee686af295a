"""The workload's shape as the white paper measures it (pure): physical reads per statement against
the number intended, writes and WAL writes per commit, and the scans' bandwidth and read size.

- Micro-transactions: each range statement touches work_unit rows, one row per block, so with the
  index cached each one should cause exactly work_unit physical reads (1, 2 or 4 in the paper). The
  sessions' single-block reads (not the scans') per range statement say whether it did.
- Read + write: update_pct 100 at work_unit 1 is one read and one (later) write per transaction;
  WAL writes per commit below 1 show group commit (one WAL write made several commits durable).
- DSS scans: the sessions' reads that were not single-block reads are the scans' (a ring buffer of
  large reads), and so are their parallel query workers' reads (scan_workers): their MiB/s and
  average size, against the device's sequential bandwidth (baseline).
"""

from __future__ import annotations

from typing import Any

from dbio.stats.counters import get, rate, ratio

MiB = 1 << 20


def derive(d: dict[str, Any], totals: dict[str, Any], window: dict[str, Any], seconds: float) -> dict[str, Any]:
    """d: the window's normalized counter deltas; totals: the sessions' statement counts."""
    selects, updates, scans = (totals.get(k, 0) or 0 for k in ("selects", "updates", "scans"))
    work_unit = window.get("work_unit") or 0
    update_rows = window.get("update_work_unit") or work_unit
    ranged = selects + updates
    intended = (selects * work_unit + updates * update_rows) / ranged if ranged and work_unit else None
    measured = ratio(get(d, "client_normal", "reads"), ranged or None)
    scan_reads, scan_bytes, worker_bytes = _scan_io(d)
    return {
        "reads_per_statement": measured,
        "intended_reads_per_statement": intended,
        "reads_per_statement_ratio": ratio(measured, intended),
        "data_writes_per_commit": ratio(get(d, "data", "writes"), updates or None),
        "wal_writes_per_commit": ratio(get(d, "wal", "writes"), updates or None),
        "wal_syncs_per_commit": ratio(get(d, "wal", "syncs"), updates or None),
        "scan_reads_per_s": rate(scan_reads, seconds) if scans else None,
        "scan_mib_per_s": rate(None if scan_bytes is None else scan_bytes / MiB, seconds) if scans else None,
        "avg_scan_read_kib": ratio(None if scan_bytes is None else scan_bytes / 1024, scan_reads) if scans else None,
        "scan_mib_per_scan": None if not scans or scan_bytes is None else scan_bytes / MiB / scans,
        "scan_worker_share_pct": None if not scans or not scan_bytes or worker_bytes is None
        else 100.0 * worker_bytes / scan_bytes,
        # the database's parallel queries are the scans (the loop's other statements are never parallel)
        "scan_workers_planned_per_scan": ratio(get(d, "db", "parallel_workers_to_launch"), scans or None),
        "scan_workers_launched_per_scan": ratio(get(d, "db", "parallel_workers_launched"), scans or None),
    }


def _scan_io(d: dict[str, Any]) -> tuple[float | None, float | None, float | None]:
    """The scans' reads and bytes: the client sessions' reads other than their single-block ones through
    the cache, and their parallel query workers' reads (the engine's "workers" group; an engine without
    it has none); and the workers' bytes among them (None: the engine has no workers group)."""
    reads, normal = get(d, "client", "reads"), get(d, "client_normal", "reads")
    nbytes, normal_bytes = get(d, "client", "read_bytes"), get(d, "client_normal", "read_bytes")
    scan_reads = None if reads is None or normal is None else max(0.0, reads - normal)
    scan_bytes = None if nbytes is None or normal_bytes is None else max(0.0, nbytes - normal_bytes)
    if "workers" not in d:
        return scan_reads, scan_bytes, None
    worker_reads, worker_bytes = get(d, "workers", "reads"), get(d, "workers", "read_bytes")
    return _plus(scan_reads, worker_reads), _plus(scan_bytes, worker_bytes), worker_bytes


def _plus(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b
