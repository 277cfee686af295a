"""The workload's shape (stats/access_profile.py): reads per statement against intended, writes and WAL
writes per commit, the scans' bandwidth and read size, from exact counter deltas."""

from dbio.stats import access_profile


def _io(reads, read_bytes):
    return {"reads": reads, "read_bytes": read_bytes}


def test_micro_transactions_count_reads_per_range_statement_against_work_unit():
    d = {"client_normal": _io(2_060, 2_060 * 8192), "client": _io(2_060, 2_060 * 8192),
         "data": {"writes": 0}, "wal": {"writes": 0, "syncs": 0}}
    out = access_profile.derive(d, {"selects": 1_000, "updates": 0, "scans": 0}, {"work_unit": 2}, 10.0)
    assert out["reads_per_statement"] == 2.06 and out["intended_reads_per_statement"] == 2
    assert abs(out["reads_per_statement_ratio"] - 1.03) < 1e-9
    assert out["data_writes_per_commit"] is None and out["wal_writes_per_commit"] is None  # no commits: absent
    assert out["scan_mib_per_s"] is None and out["avg_scan_read_kib"] is None  # no scans: absent, never 0


def test_updates_with_their_own_width_weigh_in_the_intended_count():
    d = {"client_normal": _io(300, None), "client": _io(300, None), "data": {"writes": 50},
         "wal": {"writes": 40, "syncs": 40}}
    out = access_profile.derive(d, {"selects": 100, "updates": 100, "scans": 0},
                                {"work_unit": 1, "update_work_unit": 2}, 1.0)
    assert out["intended_reads_per_statement"] == 1.5 and out["reads_per_statement"] == 1.5
    assert out["wal_writes_per_commit"] == 0.4  # group commit: one WAL write for 2.5 commits
    assert out["data_writes_per_commit"] == 0.5 and out["wal_syncs_per_commit"] == 0.4


def test_scans_are_the_sessions_reads_other_than_single_block_ones():
    d = {"client_normal": _io(100, 100 * 8192), "client": _io(100 + 64, 100 * 8192 + 64 * 131072),
         "data": {"writes": 0}, "wal": {"writes": None, "syncs": None}}
    out = access_profile.derive(d, {"selects": 100, "updates": 0, "scans": 2}, {"work_unit": 1}, 2.0)
    assert out["scan_reads_per_s"] == 32 and out["avg_scan_read_kib"] == 128
    assert out["scan_mib_per_s"] == 4.0 and out["scan_mib_per_scan"] == 4.0
    assert out["wal_writes_per_commit"] is None
    assert out["scan_worker_share_pct"] is None  # an engine without a workers group: not known, never 0


def test_parallel_workers_reads_count_in_the_scans():
    """scan_workers: the sessions' own scan reads plus their parallel query workers' (all of theirs)."""
    d = {"client_normal": _io(100, 100 * 8192), "client": _io(100 + 16, 100 * 8192 + 16 * 131072),
         "workers": _io(48, 48 * 131072), "data": {"writes": 0}, "wal": {"writes": None, "syncs": None}}
    out = access_profile.derive(d, {"selects": 100, "updates": 0, "scans": 2}, {"work_unit": 1}, 2.0)
    assert out["scan_reads_per_s"] == 32 and out["avg_scan_read_kib"] == 128
    assert out["scan_mib_per_s"] == 4.0 and out["scan_mib_per_scan"] == 4.0
    assert out["scan_worker_share_pct"] == 75.0
    unknown = access_profile.derive({**d, "workers": _io(48, None)}, {"selects": 100, "updates": 0, "scans": 2},
                           {"work_unit": 1}, 2.0)
    assert unknown["scan_mib_per_s"] is None and unknown["scan_worker_share_pct"] is None  # absent, never a part


def test_workers_planned_and_launched_per_scan_from_the_database_counters():
    d = {"client_normal": _io(0, 0), "client": _io(8, 8 * 131072), "workers": _io(16, 16 * 131072),
         "db": {"parallel_workers_to_launch": 8, "parallel_workers_launched": 6},
         "data": {"writes": 0}, "wal": {"writes": None, "syncs": None}}
    out = access_profile.derive(d, {"selects": 0, "updates": 0, "scans": 4}, {"work_unit": 1}, 1.0)
    assert out["scan_workers_planned_per_scan"] == 2 and out["scan_workers_launched_per_scan"] == 1.5
    older = access_profile.derive({**d, "db": {}}, {"selects": 0, "updates": 0, "scans": 4}, {"work_unit": 1}, 1.0)
    assert older["scan_workers_launched_per_scan"] is None  # before PostgreSQL 18: not counted, never 0


def test_the_shape_section_names_workers_only_for_scans_that_had_them():
    from dbio.report import access_section

    def labels(shape_figures):
        return [row[0] for t in access_section.section({"shape": shape_figures}).get("tables", []) for row in t["rows"]]

    serial = {"scan_mib_per_s": 10.0, "scan_worker_share_pct": 0.0, "scan_workers_planned_per_scan": 0.0,
              "scan_workers_launched_per_scan": 0.0}
    assert "Scan MiB/s" in labels(serial) and not any("arallel" in label for label in labels(serial))
    parallel = {**serial, "scan_worker_share_pct": 60.0, "scan_workers_planned_per_scan": 2.0,
                "scan_workers_launched_per_scan": 2.0}
    assert {"Scan bytes read by parallel workers", "Parallel workers launched per scan"} <= set(labels(parallel))
