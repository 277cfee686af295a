"""Up to when every session's work is in its server's counters ("published_by_all"), recorded with each sample:
a session's calls follow one another and its server publishes a slice's counters before it answers, so all it
did before its call in progress was sent is in them. The devices' counters, which move as they read, cover the
same work as the server's only when read before then; both instants are this host's clock's."""

from __future__ import annotations

import json

import pytest

from dbio import result as results
from dbio.run.sessions import Session, awaited, published_by_all
from tests.fake_engine import FakeEngine
from tests.fake_runs import run_loaded
from tests.virtual_time import VirtualTime


def _session(number: int, unpublished_since: float | None, node: str = "node1", state: str = "running") -> Session:
    return Session(number=number, schema_index=1, engine=FakeEngine(), node=node,
                   unpublished_since=unpublished_since, state=state)


def test_it_is_when_the_earliest_call_in_progress_was_sent():
    sessions = [_session(1, 105.0), _session(2, 103.2), _session(3, None)]  # the third between two calls
    assert published_by_all(sessions, now=106.0) == 103.2
    # none with work unpublished (each between calls, or done): every session's work is in, whatever now is
    assert published_by_all(sessions[2:], now=106.0) == 106.0
    assert published_by_all([], now=106.0) == 106.0


def test_only_the_sessions_whose_work_the_counters_still_wait_for_hold_it_back():
    """A node lost (its last reading stands for it), a node whose counters gain the work as it is done (InnoDB's),
    a session that failed (its call never answers): none holds back the instant; seen: every interval after a
    node's loss had no engine figure, "in part", for the rest of the window."""
    sessions = [_session(1, 101.0, node="lost"), _session(2, 102.0, node="innodb"), _session(3, 103.0, state="failed"),
                _session(4, 104.0)]
    assert published_by_all(awaited(sessions, {"node1"}), now=106.0) == 104.0
    assert published_by_all(awaited(sessions[:3], {"node1"}), now=106.0) == 106.0
    assert published_by_all(awaited(sessions, {"node1", "lost", "innodb"}), now=106.0) == 101.0


def test_every_sample_records_it_and_the_last_says_when_its_devices_were_read(tmp_path):
    """On the fake engine every session's slices end on the one-second grid, and each sends its next call as
    one ends: a sample taken half a second after a boundary has every session's work published up to it; the end
    reading, every session done, up to when its answer came."""
    outcome = run_loaded(tmp_path, FakeEngine(time=VirtualTime()))
    assert outcome.status == "complete", outcome.document["status_reason"]
    records = [json.loads(line) for line in (outcome.directory / results.SAMPLES_FILE).read_text().splitlines()]
    start = records[0]["t"]
    on_grid = [r for r in records if "due" in r and not r.get("missing")]
    assert on_grid
    for record in on_grid:  # each session's next call went as its slice ended, on the boundary
        assert record["published_by_all"] == pytest.approx(start + record["k"], abs=0.01)
        assert record["published_by_all"] <= record["asked"]
    final = records[-1]
    assert final.get("final") and final["answered"] >= final["t"]
    assert final["published_by_all"] == final["answered"]
