"""Up to when every session's work is in its server's counters ("published_by_all"), recorded with each sample:
a session publishes its counters as each slice ends, so the devices' counters, which move as they read, cover
the same work as the server's only up to the earliest of the running sessions' latest slice ends."""

from __future__ import annotations

import json

import pytest

from dbio import result as results
from dbio.run.sessions import Session, published_by_all
from tests.fake_engine import FakeEngine
from tests.fake_runs import run_loaded
from tests.virtual_time import VirtualTime


def _session(number: int, state: str, published_to: float | None) -> Session:
    return Session(number=number, schema_index=1, engine=FakeEngine(), node="node1", state=state,
                   published_to=published_to)


def test_it_is_the_earliest_latest_slice_end_of_the_running_sessions():
    sessions = [_session(1, "running", 105.0), _session(2, "running", 103.2), _session(3, "done", 101.0),
                _session(4, "failed", 100.5), _session(5, "stopped", None)]
    assert published_by_all(sessions, 100.0, now=106.0) == 103.2  # the ended ones' work is all in
    # one in its first slice since the start (a scan as long as the window): nothing of its work is in yet
    assert published_by_all([*sessions, _session(6, "running", None)], 100.0, now=106.0) == 100.0
    # none running: every session's work is in, whatever now is
    assert published_by_all(sessions[2:], 100.0, now=106.0) == 106.0
    assert published_by_all(sessions, None, now=106.0) is None  # before the start


def test_every_sample_records_it_and_the_last_says_when_its_devices_were_read(tmp_path):
    """On the fake engine every session's slices end on the one-second grid: each sample taken half a second
    after a boundary has every session's work published up to it; the end reading, every session done, up to
    when its answer came."""
    outcome = run_loaded(tmp_path, FakeEngine(time=VirtualTime()))
    assert outcome.status == "complete", outcome.document["status_reason"]
    records = [json.loads(line) for line in (outcome.directory / results.SAMPLES_FILE).read_text().splitlines()]
    start = records[0]["t"]
    on_grid = [r for r in records if "due" in r and not r.get("missing")]
    assert on_grid
    for record in on_grid:
        assert record["published_by_all"] == pytest.approx(start + record["k"], abs=1e-6)
        assert record["published_by_all"] <= record["published_to"] <= record["asked"]
    final = records[-1]
    assert final.get("final") and final["answered"] >= final["t"]
    assert final["published_by_all"] == final["answered"]
