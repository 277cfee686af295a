"""The pure parts of dbio ops: seconds per GB of WAL, device and CPU figures of an operation's
window, and a crash recovery read from server log lines recorded from PostgreSQL 18."""

from __future__ import annotations

import pytest

from dbio.engines.postgres import server_log
from dbio.stats import ops

# Recorded from the embedded PostgreSQL 18 after `pg_ctl stop -m immediate` (dbio ops recovery).
RECOVERY_LOG = """\
2026-11-22 21:10:00.100 UTC [900] LOG:  database system is ready to accept connections
2026-11-22 21:20:01.250 UTC [1201] LOG:  starting PostgreSQL 18.1 on x86_64-linux, compiled by gcc, 64-bit
2026-11-22 21:20:01.251 UTC [1201] LOG:  listening on Unix socket "/var/tmp/x/socket/.s.PGSQL.5555"
2026-11-22 21:20:01.260 UTC [1204] LOG:  database system was interrupted; last known up at 2026-11-22 21:19:30 UTC
2026-11-22 21:20:01.300 UTC [1204] LOG:  database system was not properly shut down; automatic recovery in progress
2026-11-22 21:20:01.310 UTC [1204] LOG:  redo starts at 0/3000028
2026-11-22 21:20:03.810 UTC [1204] LOG:  invalid record length at 0/B000098: expected at least 24, got 0
2026-11-22 21:20:03.810 UTC [1204] LOG:  redo done at 0/B000060 system usage: CPU: user: 1.20 s, system: 0.80 s, elapsed: 2.49 s
2026-11-22 21:20:03.900 UTC [1202] LOG:  checkpoint starting: end-of-recovery fast wait
2026-11-22 21:20:04.400 UTC [1202] LOG:  checkpoint complete: wrote 4100 buffers (100.0%)
2026-11-22 21:20:04.410 UTC [1201] LOG:  database system is ready to accept connections
""".splitlines()


def test_lsn_bytes():
    assert server_log.lsn_bytes("0/3000028") == 0x3000028
    assert server_log.lsn_bytes("1/0") == 1 << 32


def test_a_recorded_crash_recovery_is_read_from_the_last_start():
    found = server_log.recovery(RECOVERY_LOG)
    assert found["crash_recovery"] is True
    assert found["redo_start_lsn"] == "0/3000028" and found["redo_done_lsn"] == "0/B000060"
    assert server_log.replayed_bytes(found) == 0xB000060 - 0x3000028
    assert found["redo_seconds"] == pytest.approx(2.49)
    assert server_log.recovery_seconds(found) == pytest.approx(4.41 - 1.25, abs=1e-6)  # start to ready
    assert found["lines"][0].endswith("starting PostgreSQL 18.1 on x86_64-linux, compiled by gcc, 64-bit")


def test_a_clean_start_has_no_redo():
    found = server_log.recovery([RECOVERY_LOG[1], RECOVERY_LOG[-1]])
    assert found["crash_recovery"] is False
    assert server_log.replayed_bytes(found) is None and found["redo_seconds"] is None
    assert server_log.recovery_seconds(found) == pytest.approx(3.16, abs=1e-6)


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
