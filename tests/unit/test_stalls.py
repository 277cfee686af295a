"""Stalls found in recorded series: when nothing was measured or nothing moved for seconds."""

import pytest

from dbio.stats import stalls


def moving(k):
    return {"k": k, "since_start": k + 0.5, "phase": "measured", "statements_per_s": 4000.0, "reads_per_s": 9000.0}


def still(k):
    return {"k": k, "since_start": k + 0.5, "phase": "measured", "statements_per_s": 0.0, "reads_per_s": 0.0,
            "writes_per_s": 0.0, "wal_mib_per_s": 0.0}


def late(k, late_by=0.0):
    return {"k": k, "since_start": k + 0.5, "phase": "measured", "missing": "late", "late_by": late_by}


def no_baseline(k):
    return {"k": k, "since_start": k + 0.5, "phase": "measured", "missing": "no baseline"}


@pytest.mark.parametrize("rows, found", [
    ([moving(k) for k in range(1, 10)], []),
    # a server frozen from about 3.6 to 7.6 s (recorded around SIGSTOP/SIGCONT): sample 4 was answered
    # 3.1 s late, 5 to 7 could not be asked in time, 8 has no sample before it
    ([moving(1), moving(2), moving(3), late(4, 3.1), late(5, 2.1), late(6, 1.1), late(7, 0.1), no_baseline(8),
      moving(9)], [{"offset": 2.5, "seconds": 4.1, "missing_samples": 4}]),
    # sessions stuck (a lock, a hung device) while the sampler answered: nothing moved for 4 s
    ([moving(1), moving(2), still(3), still(4), still(5), still(6), moving(7)],
     [{"offset": 1.5, "seconds": 4.0, "missing_samples": 0}]),
    # two still seconds are not a stall
    ([moving(1), still(2), still(3), moving(4)], []),
    # one sample answered late does not make a stall
    ([moving(1), late(2, 0.6), no_baseline(3), moving(4)], []),
    # a stall at the very start of the window runs from the window's start; one at its end to the last row
    ([still(1), still(2), still(3), still(4), moving(5), moving(6), still(7), still(8), still(9), still(10)],
     [{"offset": 0.0, "seconds": 3.5, "missing_samples": 0}, {"offset": 5.5, "seconds": 4.0, "missing_samples": 0}]),
])
def test_stalls(rows, found):
    assert stalls.find(rows, window_offset=1.0) == found


def test_warm_up_rows_are_not_the_window():
    rows = [{**still(k), "phase": "warmup"} for k in range(1, 6)] + [moving(6)]
    assert stalls.find(rows, window_offset=5.0) == []


def test_a_longer_minimum_for_sessions_that_think():
    rows = [moving(1), still(2), still(3), still(4), moving(5)]
    assert stalls.find(rows, 1.0) and not stalls.find(rows, 1.0, min_seconds=4.0)


def test_a_stall_ends_with_the_window_its_figures_cover():
    """A window cut at its last reading (+1.5 s into it, the server then froze and the run was interrupted
    ten minutes later, when the late answer came): its figures end at the cut; no 600 s stall in it."""
    rows = [moving(1), moving(2), late(3, 599.0), late(4, 0.5)]
    assert stalls.find(rows, window_offset=1.0) == [{"offset": 1.5, "seconds": 600.0, "missing_samples": 2}]
    assert stalls.find(rows, window_offset=1.0, window_seconds=1.5) == []  # the window ends where the stall begins
    rows = [moving(1), still(2), still(3), still(4), still(5), late(6, 30.0)]  # still inside, late past it
    assert stalls.find(rows, window_offset=1.0, window_seconds=5.0) == [
        {"offset": 0.5, "seconds": 4.5, "missing_samples": 1}]


def in_progress(k, cpu, device):
    """A row in which no session published (stats/published.py): no engine figure, its statements in progress."""
    row = {"k": k, "since_start": k + 0.5, "phase": "measured", "unpublished": "in progress", "reads_per_s": None,
           "writes_per_s": None, "wal_mib_per_s": None, "device_reads_per_s": device}
    return row if cpu is None else {**row, "db_cpu_cores": cpu}


@pytest.mark.parametrize("cpu, device, found", [
    (0.0, 25.0, [{"offset": 1.5, "seconds": 4.0, "missing_samples": 0}]),  # waiting on a lock, the probe reading
    (0.0, 0.0, [{"offset": 1.5, "seconds": 4.0, "missing_samples": 0}]),  # a hung device
    (0.35, 7700.0, []),  # a scan in progress
    (0.0, 7700.0, []),  # the devices read for it (its parallel workers)
    (0.35, 0.0, []),  # its CPU works (a scan of cached pages)
    (None, 0.0, []),  # the sessions' CPU not measured (a server elsewhere): nothing tells a stall from a scan
])
def test_seconds_in_which_no_session_published_are_a_stall_only_when_the_sessions_and_devices_idle(cpu, device,
                                                                                                   found):
    rows = [moving(1), moving(2)] + [in_progress(k, cpu, device) for k in range(3, 7)] + [moving(7)]
    assert stalls.find(rows, window_offset=1.0) == found


def test_the_devices_idle_floor_holds_the_read_probe_s_lookups():
    """The probe goes on reading while the sessions wait: its lookups (a block or two each) are no work of theirs."""
    from dbio.run import read_probe

    assert stalls.DEVICE_IDLE_READS_PER_S >= 2 * read_probe.RATE_PER_S
