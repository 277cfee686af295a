"""The pure parts of dbio ops: seconds per GB of WAL, device and CPU figures of an operation's
window, and a crash recovery read from server log lines recorded from PostgreSQL 18."""

from __future__ import annotations

import pytest

from dbio.engines.postgres import server_log
from dbio.stats import ops

# Recorded from the embedded PostgreSQL 18.6: dbio ops recovery --wal 64MB (32 MiB data set, 16 MiB
# shared_buffers, direct I/O), from the checkpoint before the WAL to ready after the crash.
RECOVERY_LOG = """\
2026-11-22 20:57:39.849 UTC [27971] LOG:  checkpoint complete: wrote 0 buffers (0.0%), wrote 3 SLRU buffers; 0 WAL file(s) added, 0 removed, 0 recycled; write=0.006 s, sync=0.003 s, total=0.029 s; sync files=2, longest=0.002 s, average=0.002 s; distance=0 kB, estimate=0 kB; lsn=0/2479A10, redo lsn=0/24799F0
2026-11-22 20:59:01.016 UTC [27966] LOG:  received immediate shutdown request
2026-11-22 20:59:01.025 UTC [27966] LOG:  database system is shut down
2026-11-22 20:59:01.198 UTC [1228] LOG:  starting PostgreSQL 18.6 on x86_64-pc-linux-gnu, compiled by gcc (GCC) 14.2.1 20250110 (Red Hat 14.2.1-11), 64-bit
2026-11-22 20:59:01.204 UTC [1228] LOG:  listening on Unix socket "/var/tmp/x/inst/socket/.s.PGSQL.37745"
2026-11-22 20:59:01.214 UTC [1234] LOG:  database system was interrupted; last known up at 2026-11-22 20:57:39 UTC
2026-11-22 20:59:01.783 UTC [1234] LOG:  database system was not properly shut down; automatic recovery in progress
2026-11-22 20:59:01.785 UTC [1234] LOG:  redo starts at 0/24799F0
2026-11-22 20:59:11.785 UTC [1234] LOG:  redo in progress, elapsed time: 10.00 s, current LSN: 0/43B8210
2026-11-22 20:59:21.785 UTC [1234] LOG:  redo in progress, elapsed time: 20.00 s, current LSN: 0/4BFCF88
2026-11-22 20:59:31.785 UTC [1234] LOG:  redo in progress, elapsed time: 30.00 s, current LSN: 0/5456330
2026-11-22 20:59:41.785 UTC [1234] LOG:  redo in progress, elapsed time: 40.00 s, current LSN: 0/5B8AD98
2026-11-22 20:59:51.791 UTC [1234] LOG:  redo in progress, elapsed time: 50.00 s, current LSN: 0/620D140
2026-11-22 20:59:54.633 UTC [1234] LOG:  invalid record length at 0/647B3C0: expected at least 24, got 0
2026-11-22 20:59:54.633 UTC [1234] LOG:  redo done at 0/647B398 system usage: CPU: user: 3.05 s, system: 8.47 s, elapsed: 52.84 s
2026-11-22 20:59:54.638 UTC [1232] LOG:  checkpoint starting: end-of-recovery immediate wait
2026-11-22 20:59:54.997 UTC [1232] LOG:  checkpoint complete: wrote 1859 buffers (90.8%), wrote 3 SLRU buffers; 0 WAL file(s) added, 0 removed, 4 recycled; write=0.275 s, sync=0.030 s, total=0.360 s; sync files=5, longest=0.011 s, average=0.006 s; distance=65542 kB, estimate=65542 kB; lsn=0/647B3C0, redo lsn=0/647B3C0
2026-11-22 20:59:55.015 UTC [1228] LOG:  database system is ready to accept connections
""".splitlines()


def test_lsn_bytes():
    assert server_log.lsn_bytes("0/3000028") == 0x3000028
    assert server_log.lsn_bytes("1/0") == 1 << 32


def test_a_recorded_crash_recovery_is_read_from_the_last_start():
    found = server_log.recovery(RECOVERY_LOG)
    assert found["crash_recovery"] is True
    assert found["redo_start_lsn"] == "0/24799F0" and found["redo_done_lsn"] == "0/647B398"
    assert server_log.replayed_bytes(found) == 0x647B398 - 0x24799F0
    assert found["redo_seconds"] == pytest.approx(52.84)
    assert server_log.recovery_seconds(found) == pytest.approx(55.015 - 1.198, abs=1e-6)  # start to ready
    assert found["lines"][0].startswith("2026-11-22 20:59:01.198 UTC [1228] LOG:  starting PostgreSQL 18.6")
    assert not any("redo in progress" in line for line in found["lines"])  # progress lines are not kept


def test_a_clean_start_has_no_redo():
    starting, ready = RECOVERY_LOG[3], RECOVERY_LOG[-1]
    found = server_log.recovery([starting, ready])
    assert found["crash_recovery"] is False
    assert server_log.replayed_bytes(found) is None and found["redo_seconds"] is None
    assert server_log.recovery_seconds(found) == pytest.approx(53.817, abs=1e-6)


def test_seconds_per_gb_and_what_it_predicts():
    per_gb = ops.seconds_per_gb(2.5, 128 * 1e6)
    assert per_gb == pytest.approx(2.5 / 0.128)
    assert ops.estimate_seconds(per_gb, 1e9) == pytest.approx(per_gb)
    assert ops.seconds_per_gb(None, 1e9) is None and ops.seconds_per_gb(3.0, 0) is None


def _reading(t, user, idle, reads, sectors_read, writes, sectors_written, io_ms):
    disk = {"reads": reads, "reads_merged": 0, "sectors_read": sectors_read, "read_ms": reads * 0.2,
            "writes": writes, "writes_merged": 0, "sectors_written": sectors_written, "write_ms": writes * 0.5,
            "in_flight": 0, "io_ms": io_ms, "weighted_io_ms": io_ms * 2}
    return {"t": t, "stat": {"user": user, "system": 0.0, "idle": idle}, "disks": {"vda": disk}}


def test_window_figures_divide_by_real_elapsed_time():
    begin = _reading(100.0, 10.0, 50.0, 1000, 8000, 10, 80, 0)
    end = _reading(102.0, 11.0, 52.0, 3000, 8000 + 2 * 2048 * 100, 110, 80 + 2048 * 10, 1000)
    figures = ops.window(begin, end, {"vda": ["data", "target"]}, cores=2)
    assert figures["seconds"] == 2.0
    vda = figures["devices"]["vda"]
    assert vda["roles"] == ["data", "target"]
    assert vda["reads_per_s"] == 1000.0 and vda["writes_per_s"] == 50.0
    assert vda["read_mib_per_s"] == pytest.approx(100.0) and vda["write_mib_per_s"] == pytest.approx(5.0)
    assert vda["utilization_pct"] == pytest.approx(50.0) and vda["avg_queue"] == pytest.approx(1.0)
    assert vda["avg_read_us"] == pytest.approx(200.0) and vda["avg_write_us"] == pytest.approx(500.0)
    assert figures["cpu"]["host"]["user_pct"] == pytest.approx(25.0)  # 1 CPU-second of 4


def test_a_window_without_readings_has_no_figures():
    figures = ops.window(None, None, {}, cores=2)
    assert figures["seconds"] is None and figures["devices"] == {} and figures["cpu"]["host"] is None
    assert ops.mb_per_s(100, None) is None and ops.mb_per_s(None, 1.0) is None


def test_a_line_through_recoveries_separates_fixed_cost_from_cost_per_gb():
    fixed, per_gb = ops.fit_line([(0.032, 1.0 + 0.032 * 40), (0.064, 1.0 + 0.064 * 40), (0.128, 1.0 + 0.128 * 40)])
    assert fixed == pytest.approx(1.0) and per_gb == pytest.approx(40.0)
    assert ops.fit_line([(0.1, 3.0), (0.1, 4.0)]) is None


def test_recovery_figures_from_the_recorded_log():
    found = server_log.recovery(RECOVERY_LOG)
    detail = {"wal_written_bytes": 67115320, "wal_replayed_bytes": server_log.replayed_bytes(found),
              "recovery_seconds": server_log.recovery_seconds(found), "redo_seconds": found["redo_seconds"],
              "log": found, "checkpoints_during": 0}
    f = ops.derive("recovery", detail, None, None, {}, 2)
    r = f["recovery"]
    assert f["bytes"] == 0x647B398 - 0x24799F0 and f["seconds"] == pytest.approx(53.817, abs=1e-6)
    assert r["after_redo_seconds"] == pytest.approx(55.015 - 54.633, abs=1e-6)  # the end-of-recovery checkpoint
    assert r["seconds_per_gb"] == pytest.approx(53.817 / (f["bytes"] / 1e9), rel=1e-6)
    assert f["devices"] == {} and f["cpu"]["host"] is None  # no readings: no figures, never zeros
