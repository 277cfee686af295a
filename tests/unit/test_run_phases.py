"""The run's phases (dbio/run/phase.py): their order, the words samples hold, and the phase of an instant on a
run's timeline, on recorded clocks (pure); and its status (dbio/run/run_status.py), whose first cause wins."""

from __future__ import annotations

import pytest

from dbio.run.phase import Phase, phase_at
from dbio.run.run_status import RunStatus, Status
from dbio.run.sessions import Clock

# a run released at 1000.0, its window open from 1002.0 (2 s of warm-up) to its deadline at 1012.0
CLOCK = Clock(start=1000.0, window_open=1002.0, deadline=1012.0, warmup=2.0)


def test_the_phases_are_in_the_order_a_run_takes_them():
    assert [p.value for p in Phase] == ["prepare", "connect", "start", "warm-up", "window", "drain", "clean-up",
                                        "done"]
    assert [p.order for p in Phase] == list(range(8))


def test_samples_hold_the_words_result_files_always_held():
    assert (Phase.WARMUP.label, Phase.WINDOW.label, Phase.DRAIN.label) == ("warmup", "measured", "drain")
    assert Phase.CLEAN_UP.label == "late"  # the record of slices that came back after the last sample
    with pytest.raises(KeyError):
        Phase.CONNECT.label  # no sample is taken before the start


@pytest.mark.parametrize("t, phase", [(999.5, Phase.WARMUP), (1001.9, Phase.WARMUP), (1002.0, Phase.WINDOW),
                                      (1011.5, Phase.WINDOW), (1012.0, Phase.WINDOW), (1012.5, Phase.DRAIN)])
def test_an_instant_is_in_the_warm_up_the_window_or_the_drain(t, phase):
    assert phase_at(t, CLOCK, stopped_at=None) is phase


def test_before_the_release_every_instant_is_warm_up():
    assert phase_at(5000.0, Clock(warmup=2.0), stopped_at=None) is Phase.WARMUP


def test_a_stop_ends_the_window_at_the_end_of_the_slice_then_in_progress():
    stopped_at = 1005.3  # the slice from 1005.0 to 1006.0 is measured whole
    assert phase_at(1005.9, CLOCK, stopped_at) is Phase.WINDOW
    assert phase_at(1006.0, CLOCK, stopped_at) is Phase.WINDOW
    assert phase_at(1006.2, CLOCK, stopped_at) is Phase.DRAIN


def test_a_run_without_deadline_is_in_its_window_until_stopped():
    clock = Clock(start=1000.0, window_open=1000.0, deadline=None, warmup=0.0)  # run_time 0: a work loop's end
    assert phase_at(90000.0, clock, stopped_at=None) is Phase.WINDOW


def test_the_first_cause_that_ends_a_run_is_its_status_and_reason():
    status = RunStatus()
    assert status.complete and status.reason is None
    assert status.end(Status.INTERRUPTED, "SIGINT received")
    # what the stop then brings (a session cancelled, an error on the way out) does not change it
    assert not status.end(Status.FAILED, "session 2 (pid 7, schema 1) ended: canceling statement")
    assert (status.status, status.reason) == (Status.INTERRUPTED, "SIGINT received")
    assert not status.complete and status.status.value == "interrupted"
