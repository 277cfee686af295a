"""A frozen server: every server process stopped (SIGSTOP) inside the measured window.

The window is marked with its stall (when and how long), no sample taken late is labelled with
its nominal time, no rate exceeds what the host can do, and SIGINT/SIGTERM end dbio within 5 s
even while the server does not answer. The server is always continued (SIGCONT), even when a
test fails.
"""

import contextlib
import json
import os
import signal
import time
from pathlib import Path

import pytest

from tests.integration.conftest import dbio_backends, load_result, wait_for
from tests.integration.test_faults import finish, measuring, postmaster_pid, start

FREEZE_SECONDS = 4.0


def server_pids(instance) -> list[int]:
    """The postmaster and its children (the backends, the writers, the I/O workers)."""
    postmaster = postmaster_pid(instance)
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == postmaster:
            children.append(int(stat.parent.name))
    return [postmaster, *children]


@contextlib.contextmanager
def frozen(instance):
    pids = server_pids(instance)
    try:
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        yield pids
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)


def test_a_frozen_server_is_a_named_stall_with_gaps_and_true_rates(instance, loaded_db):
    proc = start(instance, "run", loaded_db, "--run-time", "9s", "--label", "frozen")
    try:
        directory = wait_for(measuring(instance.results, "frozen"), what="the measured window")
        with frozen(instance):
            time.sleep(FREEZE_SECONDS)
        code, out, err, _ = finish(proc, timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    doc = load_result(directory)
    assert code == 0, out + err
    # The choice documented in the README: the window stays complete, with its stall as a WARNING.
    assert doc["status"] == "complete"
    stalls = doc["stalls"]
    assert len(stalls) == 1, stalls
    stall = stalls[0]
    assert FREEZE_SECONDS - 1.5 <= stall["seconds"] <= FREEZE_SECONDS + 1.5, stall
    assert 0 < stall["offset"] < doc["timeline"]["window_seconds"]
    first_lines = "\n".join((directory / "report.txt").read_text().splitlines()[:12])
    assert "WARNING" in first_lines and "stalled" in first_lines, first_lines
    assert f"+{stall['offset']:.0f} s" in first_lines and f"{stall['seconds']:.0f} s" in first_lines, first_lines
    assert "stalled" in out  # the summary printed at the end says so too
    # Samples that could not be taken on time are gaps, not late samples under their nominal time.
    series = doc["series"]
    gaps = [row for row in series if row.get("missing")]
    assert len(gaps) >= FREEZE_SECONDS - 1, [row["k"] for row in series]
    assert all(row.get("reads_per_s") is None for row in gaps)
    # every sample carries when it was asked and answered; none kept as k's was answered late
    records = [json.loads(line) for line in (directory / "samples.jsonl").read_text().splitlines()]
    on_grid = [r for r in records if "due" in r]
    assert on_grid and all("asked" in r and "answered" in r for r in on_grid)
    assert all(r["answered"] - r["due"] <= 0.5 for r in on_grid if not r.get("missing"))
    assert any(r["answered"] - r["due"] >= FREEZE_SECONDS - 1.5 for r in on_grid if r.get("missing"))
    cores = doc["environment"]["host"]["cpus"]
    for row in series:
        if row.get("missing"):
            continue
        # every rate uses the real time of the work between its two samples: about a second apart
        assert 0.6 <= row["seconds"] <= 1.4, row
        assert row.get("db_cpu_cores") is None or row["db_cpu_cores"] <= cores + 0.2, row
        assert row.get("host_busy_pct") is None or row["host_busy_pct"] <= 100.0 + 1e-6, row


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_ends_dbio_within_5_s_while_the_server_is_frozen(instance, loaded_db, sig, code):
    label = f"frozen-{signal.Signals(sig).name}"
    proc = start(instance, "run", loaded_db, "--run-time", "60s", "--label", label)
    try:
        directory = wait_for(measuring(instance.results, label), what="the measured window")
        with frozen(instance):
            time.sleep(1.0)
            sent = time.monotonic()
            proc.send_signal(sig)
            try:
                returncode, out, err, _ = finish(proc, timeout=5.0)
            finally:
                seconds = time.monotonic() - sent
            assert seconds < 5.0, err
            assert returncode == code, out + err
            doc = load_result(directory)  # written while the server was still stopped
            assert doc["status"] == "interrupted" and signal.Signals(sig).name in doc["status_reason"]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    wait_for(lambda: dbio_backends(instance) == [], timeout=15, what="dbio's backends to end once continued")
