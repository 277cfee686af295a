"""The live view: the last interval's figures from two samples, the status line, and findings said the moment
the window so far shows them (once each), on a terminal and in plain lines."""

from __future__ import annotations

import io

import pytest

from rich.console import Console

from dbio.stats import histogram, live
from dbio.ui import UI

BOUNDS = histogram.bounds_us()


def _sample(t: float, *, reads: float, read_ms: float, writes: float = 0.0, device_reads: float = 0.0,
            io_ms: float = 0.0, busy: float = 0.0, idle: float = 0.0, steal: float = 0.0,
            selects: dict | None = None) -> dict:
    engine = {"t": t, "data": {"reads": reads, "writes": writes, "read_bytes": reads * 8192},
              "client": {"reads": reads, "read_time_ms": read_ms}}
    return {"t": t, "engine": engine,
            "os": {"t": t, "stat": {"user": busy, "idle": idle, "steal": steal},
                   "disks": {"vda": {"reads": device_reads, "sectors_read": device_reads * 16, "io_ms": io_ms}}},
            "statements": {"select": selects} if selects else {}}


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


def test_a_cache_is_said_once_when_the_window_so_far_shows_it():
    findings = live.Findings()
    assert findings.check(_sample(0.0, reads=0, read_ms=0, device_reads=0)) == []  # the window's first reading
    # two seconds in: too soon to judge however it looks
    assert findings.check(_sample(2.0, reads=2000, read_ms=1, device_reads=100,
                                  selects={"count": 1, "sum_us": 1, "max_us": 1, "hist": {"1": 1}})) == []
    said = findings.check(_sample(4.0, reads=4000, read_ms=1, device_reads=200,
                                  selects={"count": 1, "sum_us": 1, "max_us": 1, "hist": {"1": 1}}))
    assert len(said) == 1 and "the device served 5% of the engine's 4,000 reads so far: a cache" in said[0]
    assert findings.check(_sample(5.0, reads=5000, read_ms=1, device_reads=250,
                                  selects={"count": 1, "sum_us": 1, "max_us": 1, "hist": {"1": 1}})) == []


def test_other_work_on_the_device_and_steal_are_said():
    findings = live.Findings()
    findings.check(_sample(0.0, reads=0, read_ms=0, device_reads=0, busy=0, idle=0, steal=0))
    said = findings.check(_sample(4.0, reads=4000, read_ms=1, device_reads=4500, busy=2, idle=3, steal=1))
    assert any("500 more than the engine's 4,000 reads so far: other work shares the device" in s for s in said)
    assert any("the hypervisor took 17% of the CPU time so far" in s for s in said)


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
