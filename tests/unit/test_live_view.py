"""The live view: the last interval's figures from two samples, the status line, and findings said the moment
the window so far shows them (once each), on a terminal and in plain lines.

A finding said early compares counters that cover the same work: the devices' move as they read, the sessions'
statements and PostgreSQL's I/O counters as each slice ends. tests/fixtures/live/ holds the samples real runs
gave their observer (tests/fixtures/record_live.py), replayed here."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from rich.console import Console

from dbio.jobs.measure import live_facts
from dbio.report import cpu_findings
from dbio.stats import device_reads, histogram, live, published
from dbio.stats import stalls as stall_math
from dbio.ui import UI

BOUNDS = histogram.bounds_us()
RECORDED = Path(__file__).parent.parent / "fixtures" / "live"
ONE = {"count": 1, "sum_us": 1, "max_us": 1, "hist": {"1": 1}}


def _sample(t: float, *, reads: float, read_ms: float, writes: float = 0.0, device_reads: float = 0.0,
            io_ms: float = 0.0, busy: float = 0.0, idle: float = 0.0, steal: float = 0.0,
            selects: dict | None = None, read_bytes: float | None = None, device_bytes: float | None = None,
            session_cpu: float | None = None, **record) -> dict:
    """A normalized sample as the observer is given it; record: its other keys (k, answered, published_to,
    published_by_all, statements...)."""
    engine = {"t": t, "data": {"reads": reads, "writes": writes,
                               "read_bytes": reads * 8192 if read_bytes is None else read_bytes},
              "client": {"reads": reads, "read_time_ms": read_ms}, "wal": {"bytes": 0.0}}
    sectors = device_reads * 16 if device_bytes is None else device_bytes / 512
    os_reading = {"t": t, "stat": {"user": busy, "idle": idle, "steal": steal},
                  "disks": {"vda": {"reads": device_reads, "sectors_read": sectors, "io_ms": io_ms}}}
    if session_cpu is not None:
        os_reading["session_cpu_total"] = session_cpu
    return {"t": t, "engine": engine, "os": os_reading, "statements": {"select": selects} if selects else {},
            **record}


def _said(findings: live.Findings, samples: list[dict]) -> list[tuple[float, str]]:
    """Each finding with the time (since the window's first sample) of the sample that made it said."""
    t0 = (findings.start or samples[0])["engine"]["t"]
    return [(round(s["engine"]["t"] - t0, 2), m) for s in samples for m in findings.check(s)]


def _recorded(name: str) -> dict:
    return json.loads((RECORDED / f"{name}.json").read_text())


def _devices(sample: dict) -> tuple[float, float]:
    disks = sample["os"]["disks"]
    return sum(d["reads"] for d in disks.values()), 512 * sum(d["sectors_read"] for d in disks.values())


# -- the interval's figures ------------------------------------------------------------------------------------

def test_an_interval_s_figures_come_from_two_samples():
    a = _sample(100.0, reads=1000, read_ms=100, writes=10, device_reads=1000, io_ms=0, busy=10, idle=10, steal=0)
    b = _sample(102.0, reads=21000, read_ms=4100, writes=410, device_reads=21000, io_ms=1500, busy=11.4, idle=10.5,
                steal=0.1, selects={"count": 100, "sum_us": 1.0, "max_us": 6000.0,
                                    "hist": {"40": 98, "60": 2}})
    figures = live.interval(a, b, BOUNDS)
    assert figures["reads_per_s"] == 10_000 and figures["writes_per_s"] == 200
    assert figures["avg_read_us"] == 200.0  # 4,000 ms over 20,000 reads
    assert figures["device"] == "vda" and figures["device_busy_pct"] == 75.0  # 1.5 s of 2 s
    assert figures["cpu_busy_pct"] == pytest.approx(75.0) and figures["steal_pct"] == pytest.approx(5.0)
    assert figures["select_p99_us"] is not None and figures["select_p99_us"] > 0
    text = live.line(figures)
    assert text.startswith("10,000 reads/s · 200 us/read · SELECT p99 ") and "vda 75% busy" in text
    assert text.endswith("CPU 75% (steal 5%)")


def test_what_a_sample_lacks_is_left_out_of_the_line():
    a, b = {"t": 1.0, "engine": None, "os": {}}, {"t": 2.0, "engine": None, "os": {}}
    assert live.interval(a, b, BOUNDS) == {"select_p99_us": None} and live.line(live.interval(a, b, BOUNDS)) == ""


def _lines(samples: list[dict]) -> list[dict]:
    """Each interval's figures as the observer makes them, sample after sample (ui.RunObserver)."""
    spans = published.Spans()
    spans.next(samples[0])
    return [live.interval(prev, cur, BOUNDS, spans.next(cur)) for prev, cur in zip(samples, samples[1:])]


def test_the_engine_s_rates_are_over_the_span_of_work_its_counters_gained_and_absent_when_none_is_known():
    """The engine's counters gain a slice's work as it ends: reads/s divides what they gained by the seconds
    between two samples' work points (every session published up to about one instant: the latest slice end and
    the earliest call in progress within 0.1 s), as the result's series does; the devices' busy time is over the
    readings' own seconds. A second in which no slice ended holds none of the sessions' work: no reads/s (the
    probe's 25 reads are not a rate), and the span goes on from the first sample at its work point. One whose
    sessions published at instants far apart (one's scan in progress while the other's slices ended) has no span."""
    samples = [
        _sample(100.0, reads=0, read_ms=0),  # the window's first reading: every session at rest
        _sample(101.5, reads=25, read_ms=1, io_ms=600, k=1, published_to=None, published_by_all=99.99),
        # a slice that lasted 2.1 s: 25,000 reads over 2.1 s, not over the 1 s since the last reading
        _sample(102.5, reads=25_025, read_ms=2500, io_ms=1500, k=2, published_to=102.1, published_by_all=102.1),
        _sample(103.5, reads=25_050, read_ms=2501, io_ms=2400, k=3, published_to=102.1, published_by_all=102.1),
        _sample(104.5, reads=50_050, read_ms=5001, io_ms=3300, k=4, published_to=104.2, published_by_all=104.2),
        # one session's call in progress since 104.25 while the other's slice ended at 105.3
        _sample(105.5, reads=60_050, read_ms=6001, io_ms=4200, k=5, published_to=105.3, published_by_all=104.25),
        _sample(106.5, reads=70_050, read_ms=7001, io_ms=5100, k=6, published_to=106.2, published_by_all=106.2),
        _sample(107.5, reads=80_050, read_ms=8001, io_ms=6000, k=7, published_to=107.1, published_by_all=107.1)]
    lines = _lines(samples)
    assert [line.get("reads_per_s") for line in lines] == [
        None, pytest.approx(25_025 / 2.1), None, pytest.approx(25_025 / 2.1), None, None, pytest.approx(10_000 / 0.9)]
    assert lines[2]["device_busy_pct"] == pytest.approx(90.0)  # the device, read as it moves, is there
    assert "reads/s" not in live.line(lines[4]) and "avg_read_us" not in lines[4]
    # two samples alone: the span of their own work points
    assert live.interval(samples[3], samples[4], BOUNDS)["reads_per_s"] == pytest.approx(25_000 / 2.1)
    assert "reads_per_s" not in live.interval(samples[4], samples[5], BOUNDS)


# -- the devices against the engine ---------------------------------------------------------------------------

def test_a_cache_is_said_once_when_the_window_so_far_shows_it():
    findings = live.Findings()
    assert findings.check(_sample(0.0, reads=0, read_ms=0, device_reads=0)) == []  # the window's first reading
    # two seconds in: too soon to judge however it looks
    assert findings.check(_sample(2.0, reads=2000, read_ms=1, device_reads=100, selects=ONE)) == []
    said = findings.check(_sample(4.0, reads=4000, read_ms=1, device_reads=200, selects=ONE))
    assert len(said) == 1 and "the device served 5% of the engine's 4,000 reads so far: a cache" in said[0]
    assert findings.check(_sample(5.0, reads=5000, read_ms=1, device_reads=250, selects=ONE)) == []


def test_a_cache_of_multi_block_reads_is_judged_by_bytes():
    """A scan's 128 KiB reads reach the device as requests of other sizes: the device served all of the
    engine's bytes in half as many requests, no cache; three quarters of them in as many requests, a cache."""
    merged = live.Findings()
    merged.check(_sample(0.0, reads=0, read_ms=0))
    assert merged.check(_sample(4.0, reads=4000, read_ms=1, read_bytes=4000 * 131072, device_reads=2000,
                                device_bytes=4000 * 131072, selects=ONE)) == []
    cached = live.Findings()
    cached.check(_sample(0.0, reads=0, read_ms=0))
    said = cached.check(_sample(4.0, reads=4000, read_ms=1, read_bytes=4000 * 131072, device_reads=4000,
                                device_bytes=3000 * 131072, selects=ONE))
    assert said == ["the device read 75% of the 500 MiB the engine read so far (multi-block reads, judged by "
                    "bytes): a cache serves the rest, so reads/s is not the storage's alone"]


def test_the_devices_are_judged_against_engine_counters_that_hold_the_work_they_read():
    """The devices are read as they move, the sessions publish as each slice ends: a sample's devices are ahead
    of its engine counters by the work in progress. Other work is said only from the devices of a sample read by
    the time every session had published (a later sample's published_by_all), against that later sample's engine
    counters, which hold all of the work up to then."""
    findings = live.Findings()
    assert findings.check(_sample(0.0, reads=0, read_ms=0)) == []
    # a scan in progress: the devices read 2,000 requests a second, the engine's counters hold what the sessions'
    # slices ended with; every session has published up to published_by_all
    lagging = [_sample(1.5, reads=1000, read_ms=1, device_reads=3000, k=1, answered=1.52, published_to=1.1,
                       published_by_all=0.0),
               _sample(2.5, reads=3000, read_ms=1, device_reads=5000, k=2, answered=2.52, published_to=2.2,
                       published_by_all=1.3),
               _sample(3.5, reads=5000, read_ms=1, device_reads=7000, k=3, answered=3.52, published_to=3.2,
                       published_by_all=2.3),
               _sample(4.5, reads=7000, read_ms=1, device_reads=9000, k=4, answered=4.52, published_to=4.3,
                       published_by_all=3.4)]
    # each sample's devices 29-67% ahead of its engine counters: the old comparison said other work at 3.5 s
    assert all(_devices(s)[0] > 1.02 * s["engine"]["data"]["reads"] for s in lagging)
    assert _said(findings, lagging) == []  # 4.5 s covers the devices read by 2.52 s: 5,000, against 7,000
    # another process reads 3,000 requests a second from 5 s on: the devices of 5.5 s are ahead of the engine by
    # work in progress and by it; once a sample covers them, it is said, as a count no larger than it was
    shared = [_sample(5.5, reads=9000, read_ms=1, device_reads=14_000, k=5, answered=5.52, published_to=5.3,
                      published_by_all=4.4),
              _sample(6.5, reads=11_000, read_ms=1, device_reads=19_000, k=6, answered=6.52, published_to=6.3,
                      published_by_all=5.6)]
    assert _said(findings, shared) == [(6.5, "the device read at least 3,000 more than the engine's 11,000 reads "
                                             "so far: other work shares the device")]


def test_a_reading_no_later_sample_covers_is_never_compared():
    """A session whose slice never ends (one statement for the whole window) holds published_by_all at the
    start: no device reading is covered, nothing is said, however far ahead the devices are."""
    findings = live.Findings()
    findings.check(_sample(0.0, reads=0, read_ms=0))
    samples = [_sample(k + 0.5, reads=500 * k, read_ms=1, device_reads=5000 * k, k=k, answered=k + 0.52,
                       published_to=k + 0.1, published_by_all=0.0, selects=ONE) for k in range(1, 30)]
    assert _said(findings, samples) == []


def test_the_window_s_last_reading_covers_itself():
    """The end reading is taken with every session done: its devices are compared with its own engine counters."""
    findings = live.Findings()
    findings.check(_sample(0.0, reads=0, read_ms=0))
    final = _sample(5.2, reads=10_000, read_ms=1, device_reads=12_000, k=5, answered=5.25, published_to=5.2,
                    published_by_all=5.25, final=True)
    assert _said(findings, [final]) == [(5.2, "the device read at least 2,000 more than the engine's 10,000 reads "
                                              "so far: other work shares the device")]


def test_other_work_of_multi_block_reads_is_said_in_bytes_and_with_read_ahead_when_direct_io_is_off():
    findings = live.Findings(live.RunFacts(direct_io=False))
    findings.check(_sample(0.0, reads=0, read_ms=0))
    # the device split each 128 KiB read in two (twice the requests, the same bytes): no other work
    split = _sample(4.0, reads=4000, read_ms=1, read_bytes=4000 * 131072, device_reads=8000,
                    device_bytes=4000 * 131072, k=4, answered=4.1, published_to=4.0, published_by_all=4.2)
    assert findings.check(split) == []
    more = _sample(5.0, reads=5000, read_ms=1, read_bytes=5000 * 131072, device_reads=12_000,
                   device_bytes=6000 * 131072, k=5, answered=5.1, published_to=5.0, published_by_all=5.2)
    assert findings.check(more) == ["the device read at least 125 MiB more than the engine's 625 MiB so far "
                                    "(multi-block reads, judged by bytes): other work shares the device (or, direct "
                                    "I/O being off, the kernel read ahead more than the engine asked)"]


def test_devices_that_hold_a_part_of_the_reads_say_nothing():
    """A tablespace on a place no device dbio reads holds (the verdict's uncovered_data), or a node on another
    host: the devices see a part of the reads, so neither a cache nor other work can be told."""
    findings = live.Findings(live.RunFacts(devices_hold_data=False))
    findings.check(_sample(0.0, reads=0, read_ms=0))
    assert findings.check(_sample(4.0, reads=4000, read_ms=1, device_reads=200, selects=ONE)) == []
    caps = {"page_bytes": 16384, "direct_io": True, "local": True}
    data = {"path": "/d", "diskstats_devices": ["vda"]}
    one = {"capabilities": caps, "storage": {"data_directory": data, "wal": None}}
    assert live_facts(one) == live.RunFacts(page_bytes=16384, direct_io=True, devices_hold_data=True, local=True)
    tablespace = {**one, "storage": {**one["storage"], "tablespaces": [{"path": "/t", "diskstats_devices": []}]}}
    assert live_facts(tablespace) == live.RunFacts(page_bytes=16384, devices_hold_data=False)
    # a second node elsewhere: this host's devices hold none of its reads, nor is its steal this host's
    remote = {**caps, "local": False}
    nodes = {**one, "nodes": [{"name": "a", "capabilities": caps}, {"name": "b", "capabilities": remote}]}
    assert live_facts(nodes) == live.RunFacts(page_bytes=16384, devices_hold_data=False, local=False)
    unknown = {"capabilities": {}, "storage": None, "nodes": [{"name": "a", "capabilities": {}}]}
    assert live_facts(unknown) == live.RunFacts(direct_io=False, devices_hold_data=False, local=False)


def test_the_early_findings_use_the_verdict_s_thresholds():
    assert live.STEAL_LIMIT == cpu_findings.STEAL_LIMIT
    # the engine's counters a quiet interval's judgement reads (stats/stalls.py), as counters and as figures
    assert stall_math.ENGINE_MOVING == ("reads_per_s", "writes_per_s", "wal_mib_per_s")
    assert live.ENGINE_MOVING == (("data", "reads"), ("data", "writes"), ("wal", "bytes"))


# -- recorded runs ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["scan", "scan_workers", "mixed"])
def test_recorded_runs_whose_sessions_lag_the_devices_say_nothing(name):
    """Real runs on the embedded PostgreSQL 18 (direct I/O; scans with --scan-pct 100, with parallel workers, and
    range reads with updates, a hot spot and 5% scans), with no other reader on the device: over the window the
    device read what the engine did, yet each sample's devices ran ahead of its engine counters by the work the
    sessions had not published (the old comparison said "other work shares the device" in each)."""
    recorded = _recorded(name)
    window, samples = recorded["window"], recorded["samples"]
    assert window["device_read_bytes"] == pytest.approx(window["db_read_bytes"], rel=0.02)
    start, grid = samples[0], [s for s in samples if s.get("k") and not s.get("final")]
    ahead = [(_devices(s)[1] - _devices(start)[1]) / (s["engine"]["data"]["read_bytes"]
                                                      - start["engine"]["data"]["read_bytes"]) for s in grid[2:]]
    assert max(ahead) > 1 + device_reads.DEVICE_EXCESS_LIMIT, ahead  # the lag is there to be misread
    assert _said(live.Findings(live.RunFacts(**recorded["facts"])), samples) == []
    assert recorded["said"] == []  # the run itself said nothing either


def test_a_recorded_reader_sharing_the_device_is_said_as_it_happens_in_bytes():
    """A real scan run while dd read a file with O_DIRECT from the same device: said before the window's end,
    in bytes (multi-block reads), and no more than the window's own excess: a lower bound, as certain as it is."""
    recorded = _recorded("scan_other_reader")
    window, samples = recorded["window"], recorded["samples"]
    said = _said(live.Findings(live.RunFacts(**recorded["facts"])), samples)
    assert len(said) == 1 and "(multi-block reads, judged by bytes): other work shares the device" in said[0][1]
    at = next(s for s in samples if round(s["engine"]["t"] - samples[0]["engine"]["t"], 2) == said[0][0])
    assert not at.get("final")  # as it happened, not at the window's end
    stated = said[0][1].split("at least ", 1)[1].split(" more", 1)[0]
    number, unit = stated.split()
    stated_bytes = float(number) * {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[unit]
    assert stated_bytes <= window["device_read_bytes"] - window["db_read_bytes"]
    assert [f"dbio: now: {said[0][1]}"] == recorded["said"]


# -- stalls ---------------------------------------------------------------------------------------------------

def test_a_stall_is_two_quiet_seconds_in_a_row_not_one_slice_that_came_back_late():
    findings = live.Findings()
    findings.check(_sample(0.0, reads=0, read_ms=0))
    one = {"count": 3, "sum_us": 1, "max_us": 1, "hist": {"1": 3}}
    assert findings.check({**_sample(1.0, reads=1, read_ms=0), "k": 1, "statements": None}) == []
    late = {**_sample(2.0, reads=1, read_ms=0), "k": 2, "statements": None, "late_statements": {"1": {"select": one}}}
    assert findings.check(late) == []  # second 1's slices came with second 2's sample
    assert findings.check({**_sample(3.0, reads=1, read_ms=0), "k": 3, "statements": None}) == []
    said = findings.check({**_sample(4.0, reads=1, read_ms=0), "k": 4, "statements": None})
    assert said == ["no statement finished in the last 2 seconds: a stall (the report will say how long and what "
                    "the samples show)"]
    assert findings.check({**_sample(5.0, reads=1, read_ms=0), "k": 5, "statements": None}) == []  # said once


@pytest.mark.parametrize("moving, stalled", [
    ({"session_cpu": 0.3}, False),  # the sessions' processes work on a long statement (a scan of a large table)
    ({"device_reads": 8000}, False),  # the devices complete reads (the parallel workers of a scan)
    # only the read probe's lookups move the engine's counters (and the device): the sessions wait on a lock
    ({"reads": 25, "device_reads": 25}, True),
    ({}, True),  # nothing moves at all
])
def test_a_long_statement_is_no_stall_and_a_lock_wait_is_one(moving, stalled):
    """A statement that lasts seconds holds its slice back: no session publishes, no statement finishes. What
    moves at once as the sessions work tells a scan in progress from sessions waiting on a lock or a hung device,
    whose idle seconds are a stall even while the read probe's lookups move the engine's counters."""
    def second(k: int, **grown) -> dict:
        values = {"reads": 0.0, "device_reads": 0.0, "session_cpu": 0.0}
        values.update({key: value * k for key, value in grown.items()})
        return _sample(float(k), read_ms=0, k=k, published_to=None, published_by_all=-0.05, **values)

    findings = live.Findings()
    said = _said(findings, [_sample(0.0, reads=0, read_ms=0, session_cpu=0.0)] + [second(k, **moving)
                                                                                  for k in range(1, 6)])
    assert said == ([(2.0, "no statement finished in the last 2 seconds: a stall (the report will say how long and "
                           "what the samples show)")] if stalled else [])


def test_a_recorded_lock_wait_is_said_as_a_stall():
    """A real run of UPDATEs while another connection held a SHARE lock on the data tables for 5 s from 5 s on:
    the read probe's lookups moved the engine's counters all along (main said nothing), the sessions' CPU and
    the devices were idle: said two seconds in, as the run itself said it."""
    recorded = _recorded("lock_wait")
    said = _said(live.Findings(live.RunFacts(**recorded["facts"])), recorded["samples"])
    assert said == [(pytest.approx(7.5, abs=0.1), "no statement finished in the last 2 seconds: a stall (the report "
                                                  "will say how long and what the samples show)")]
    assert [f"dbio: now: {said[0][1]}"] == recorded["said"]


# -- steal, and what the user sees -------------------------------------------------------------------------------

def test_steal_is_said_for_a_server_on_this_host_only():
    local, remote = live.Findings(), live.Findings(live.RunFacts(local=False))
    for findings in (local, remote):
        findings.check(_sample(0.0, reads=0, read_ms=0, busy=0, idle=0, steal=0))
    stolen = _sample(4.0, reads=4000, read_ms=1, device_reads=4000, busy=2, idle=3, steal=1, selects=ONE)
    assert local.check(stolen) == ["the hypervisor took 17% of the CPU time so far: latency includes waiting for a "
                                   "CPU"]
    assert remote.check(stolen) == []


def _ui(terminal: bool) -> UI:
    return UI(Console(file=io.StringIO(), force_terminal=terminal, width=300))


def test_plain_lines_carry_the_status_and_time_left_and_findings_go_to_stderr(capsys):
    ui = _ui(False)
    observer = ui.run_observer(sessions=4, window=30, warmup=0, bounds_us=BOUNDS)
    observer.phase("measuring")
    observer.second(_sample(0.0, reads=0, read_ms=0, device_reads=0))
    observer.said = 0.0  # the last plain line long ago
    observer.second(_sample(4.0, reads=4000, read_ms=800, device_reads=100))
    observer.close()
    lines = ui.console.file.getvalue().splitlines()
    assert lines[0].endswith(": measuring")
    assert " s left · 1,000 reads/s · 200 us/read" in lines[1] and lines[1].split(": ",
                                                                                  1)[1].startswith("measuring · 3")
    assert "dbio: now: the device served 2% of the engine's 4,000 reads so far" in capsys.readouterr().err


@pytest.mark.parametrize("page_bytes, said", [
    (8192, ""),  # PostgreSQL's 8 KiB pages: 16 KiB reads are multi-block (io_combine_limit), judged by bytes
    (16384, "dbio: now: the device served 50% of the engine's 4,000 reads so far"),  # InnoDB's: single pages
])
def test_the_observer_judges_with_the_run_s_read_unit(capsys, page_bytes, said):
    """The engine's 4,000 reads of 16 KiB each reached the device as 2,000 requests of 32 KiB, the same bytes:
    the verdict judges reads beyond 1.5 pages by bytes, single pages by requests, and so does the live view."""
    ui = _ui(False)
    observer = ui.run_observer(sessions=1, window=30, warmup=0, bounds_us=BOUNDS,
                               facts=live.RunFacts(page_bytes=page_bytes))
    observer.phase("measuring")
    observer.second(_sample(0.0, reads=0, read_ms=0))
    observer.second(_sample(4.0, reads=4000, read_ms=1, read_bytes=4000 * 16384, device_reads=2000,
                            device_bytes=4000 * 16384, selects=ONE))
    observer.close()
    err = capsys.readouterr().err
    assert (said in err) if said else "dbio: now:" not in err, err
