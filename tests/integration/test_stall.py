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
from datetime import datetime
from pathlib import Path

import pytest

from dbio.stats import stalls as stall_math
from tests.integration.conftest import dbio_backends, load_result, wait_for
from tests.integration.test_faults import finish, measuring, start

FREEZE_SECONDS = 4.0  # at least: on a loaded host the test's own sleep may last longer; its real span is recorded


def server_pids(pgdata: Path) -> list[int]:
    """The postmaster of the server in pgdata and its children (the backends, the writers, the I/O workers)."""
    postmaster = int((pgdata / "postmaster.pid").read_text().splitlines()[0])
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
def frozen(instance=None, pgdata: Path | None = None):
    """Every process of the instance's server (or of the one in pgdata) stopped; yields when the whole server was
    stopped and, once the block ends, when it was continued (epoch seconds: the samples' clock, the server being
    on this host)."""
    pids = server_pids(pgdata or instance.data_dir / "pgdata")
    span = {"pids": pids}
    try:
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        span["stopped_at"] = time.time()
        yield span
    finally:
        span["continued_at"] = time.time()
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)


def epoch(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


def test_a_frozen_server_is_a_named_stall_with_gaps_and_true_rates(instance, loaded_db):
    """Judged against the freeze's real span and the samples' own recorded times, never against how long the
    test meant to sleep: beside other test workers and CPU steal, a sleep and a sample can each come late."""
    proc = start(instance, "run", loaded_db, "--run-time", "9s", "--label", "frozen")
    try:
        directory = wait_for(measuring(instance.results, "frozen"), what="the measured window")
        with frozen(instance) as freeze:
            time.sleep(FREEZE_SECONDS)
        code, out, err, _ = finish(proc, timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    doc = load_result(directory)
    assert code == 0, out + err
    stopped_at, continued_at = freeze["stopped_at"], freeze["continued_at"]
    frozen_seconds = continued_at - stopped_at
    # The choice documented in the README: the window stays complete, with its stall as a WARNING.
    assert doc["status"] == "complete"
    timeline = doc["timeline"]
    start_at, window_start = epoch(timeline["start"]), epoch(timeline["window_start"])
    interval = timeline["interval_seconds"]
    series = doc["series"]

    def at(row):  # a series row's time (epoch), from its recorded offset
        return start_at + row["since_start"]

    # One stall holds the freeze (another would lie elsewhere: a stretch in which nothing was sampled or moved)
    held = [s for s in doc["stalls"] if window_start + s["offset"] <= continued_at
            and window_start + s["offset"] + s["seconds"] >= stopped_at]
    assert len(held) == 1, (doc["stalls"], stopped_at, continued_at, window_start)
    stall = held[0]
    begins, ends = window_start + stall["offset"], window_start + stall["offset"] + stall["seconds"]
    # it covers the freeze: it begins where the last reading that moved before it was taken, and ends no earlier
    # than the freeze did, to the samples' resolution (the late answer comes once the server runs again)
    moved_before = [at(row) for row in series if row.get("phase") == "measured" and not row.get("missing")
                    and not stall_math.still(row) and at(row) <= stopped_at]
    assert begins == pytest.approx(max(moved_before, default=window_start), abs=0.005), (stall, moved_before)
    assert ends >= continued_at - interval, (stall, continued_at)
    assert stall["seconds"] >= frozen_seconds - interval
    # and nothing that was measured inside it moved
    inside = [row for row in series if begins + 0.005 < at(row) < ends - 0.005 and not row.get("missing")]
    assert all(stall_math.still(row) for row in inside), inside
    assert 0 < stall["offset"] < timeline["window_seconds"]
    first_lines = "\n".join((directory / "report.txt").read_text().splitlines()[:12])
    assert "WARNING" in first_lines and "stalled" in first_lines, first_lines
    assert f"+{stall['offset']:.0f} s" in first_lines and f"{stall['seconds']:.0f} s" in first_lines, first_lines
    assert "stalled" in out  # the summary printed at the end says so too
    # Samples that could not be taken on time are gaps, not late samples under their nominal time: every sample
    # due while the server was stopped (answerable only once it ran again) is one, and each is a gap in the series.
    # (How many there are depends on where the freeze fell: one that outlasts the window leaves no later sample.)
    records = [json.loads(line) for line in (directory / "samples.jsonl").read_text().splitlines()]
    on_grid = [r for r in records if "due" in r]
    assert on_grid and all("asked" in r and "answered" in r for r in on_grid)
    assert all(r["answered"] - r["due"] <= 0.5 for r in on_grid if not r.get("missing"))
    due_frozen = [r for r in on_grid if stopped_at < r["due"] < continued_at - 0.5]
    assert due_frozen and all(r.get("missing") for r in due_frozen), due_frozen
    assert max(r["answered"] for r in on_grid if r.get("missing")) >= continued_at - interval
    gaps = [row for row in series if row.get("missing")]
    assert {r["k"] for r in on_grid if r.get("missing")} <= {row["k"] for row in gaps}, [row["k"] for row in series]
    assert all(row.get("reads_per_s") is None for row in gaps)
    # Every rate divides by the real time of the work between its own two samples, as they recorded it (the
    # latest slice end each had seen: every session publishing at each second's end, each is a work point,
    # stats/published.py), and none spans the freeze. A row without figures says why.
    readings = [r for r in records if isinstance(r.get("k"), int) and r.get("phase") != "late"]
    cores = doc["environment"]["host"]["cpus"]
    rated = [row for row in series if not row.get("missing") and not row.get("unpublished")]
    assert rated
    assert all(row["reads_per_s"] is None for row in series if row.get("unpublished"))
    for row in rated:
        index = next(i for i, r in enumerate(readings) if r["k"] == row["k"] and abs(r["t"] - row["t"]) < 1e-3)
        before, after = readings[index - 1], readings[index]
        assert not before.get("missing"), (row, before)
        published = (after.get("published_to") or 0) - (before.get("published_to") or 0)
        span = published if before.get("published_to") and after.get("published_to") and published > 0 \
            else after["t"] - before["t"]
        assert row["seconds"] == pytest.approx(span, abs=1e-5), (row, before, after)
        assert not (before["t"] < stopped_at and after["t"] > continued_at), (row, before, after)
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


def test_a_server_frozen_to_the_end_fails_the_run_seconds_after_it_stopped_answering(instance, loaded_db):
    """Frozen inside a 4 s window and never continued while dbio runs: dbio waited for ever. Now its silence
    ends the run liveness.SILENT_AFTER after its last answer, failed with why, its figures ending at its last
    reading (no later), and no stall is claimed past them."""
    import re

    from dbio.run.liveness import SILENT_AFTER

    proc = start(instance, "run", loaded_db, "--run-time", "4s", "--label", "frozen-to-the-end")
    try:
        directory = wait_for(measuring(instance.results, "frozen-to-the-end"), what="the measured window")
        with frozen(instance) as freeze:
            code, out, err, _ = finish(proc, timeout=SILENT_AFTER + 30)  # it hung for ever
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert code == 1, out + err
    doc = load_result(directory)
    assert doc["status"] == "failed"
    reason = doc["status_reason"]
    assert re.fullmatch(rf"the server stopped at \+\d+\.\d s \(it answered nothing for {SILENT_AFTER:.0f} s: frozen, "
                        r"or unreachable\): the figures end at its last reading", reason), reason
    ended = next(e["t"] for e in doc["events"] if e["kind"] == "end")
    assert ended - freeze["stopped_at"] < SILENT_AFTER + 2, (doc["events"], freeze)
    window = doc["figures"]["window_seconds"]
    assert window is not None and 0 < window
    assert epoch(doc["timeline"]["window_start"]) + window <= freeze["stopped_at"] + 0.05  # none of it frozen
    assert doc["figures"]["load_profile"]["physical_reads_per_s"] > 0
    assert all(s["offset"] + s["seconds"] <= window + 1e-3 for s in doc["stalls"]), (doc["stalls"], window)
    wait_for(lambda: dbio_backends(instance) == [], timeout=15, what="dbio's backends to end once continued")
