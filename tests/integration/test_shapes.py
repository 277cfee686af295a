"""The white paper's workload shapes on the embedded instance: micro-transactions (reads per
statement against intended), read + write (WAL writes per commit), DSS scans (scan MiB/s and read
size against fio's sequential bandwidth on the same files)."""

from __future__ import annotations

import shutil

import pytest

from dbio.report import verdict

from tests.integration.conftest import SMALL, dbio, load_result, result_dir

SHAPES = [*SMALL, "--scale", "64MiB", "--scan-table-size", "16MiB"]


@pytest.fixture(scope="module")
def loaded(instance):
    done = dbio("setup", *instance.args("shapes", *SHAPES))
    assert done.code == 0, done.text
    return instance


def _finding(doc, code):
    return next((f.to_dict() for f in verdict.findings(doc) if f.code == code), None)


def test_micro_transactions_report_reads_per_statement_against_intended(loaded):
    run = dbio("run", *loaded.args("shapes", *SHAPES, "--work-unit", "2"))
    assert run.code == 0, run.text
    directory = result_dir(run)
    doc = load_result(directory)
    shape = doc["figures"]["shape"]
    assert shape["intended_reads_per_statement"] == 2
    assert 0.5 < shape["reads_per_statement"] < 2.6, shape  # some rows are cache hits: 16 MiB of 64 MiB cached
    finding = _finding(doc, "reads_per_statement")
    within = abs(shape["reads_per_statement_ratio"] - 1) <= 0.05
    assert finding is not None and finding["level"] == ("info" if within else "warning"), finding
    assert "Workload shape" in (directory / "report.txt").read_text()


def test_read_and_write_shows_wal_writes_per_commit(loaded):
    run = dbio("run", *loaded.args("shapes", *SHAPES, "--work-unit", "1", "--update-pct", "100", "-t", "2"))
    assert run.code == 0, run.text
    doc = load_result(result_dir(run))
    shape = doc["figures"]["shape"]
    assert shape["wal_writes_per_commit"] is not None and 0 < shape["wal_writes_per_commit"] < 3, shape
    assert shape["intended_reads_per_statement"] == 1
    assert "WAL writes per commit" in _finding(doc, "group_commit")["message"]


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed (Debian package fio, optional)")
def test_scans_report_bandwidth_and_read_size_against_sequential_fio(loaded):
    run = dbio("run", *loaded.args("shapes", *SHAPES, "--scan-pct", "100"), "--baseline")
    assert run.code == 0, run.text
    directory = result_dir(run)
    doc = load_result(directory)
    f = doc["figures"]
    assert f["shape"]["scan_mib_per_s"] > 0 and f["shape"]["avg_scan_read_kib"] > 8, f["shape"]
    assert f["baseline"]["seq_read_mib_per_s"] > 0
    assert doc["baseline"]["runs"]["sequential"]["options"][3:5] == ["--rw=read", "--bs=1024k"]
    finding = _finding(doc, "scan_bound")
    assert finding is not None and "of the device's sequential" in finding["message"], finding
    assert "Scan MiB/s" in (directory / "report.txt").read_text()
