"""The result's per-interval series over the span of work the engine's counters gained (stats/published.py).

PostgreSQL's I/O counters gain a backend's work as it goes idle, at each slice's end: a slice that lasts as long
as its last statement (a scan of a large table, a lock wait) holds them back for seconds. tests/fixtures/live/
holds the samples real runs gave their observer (tests/fixtures/record_live.py), replayed here through the
series as run/assemble builds it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dbio.run.assemble import interval_statements
from dbio.stats import histogram, published, series, stalls
from dbio.result_records import of

BOUNDS = histogram.bounds_us()
RECORDED = Path(__file__).parent.parent / "fixtures" / "live"
MiB = 1 << 20


def _recorded(name: str) -> tuple[dict, list[dict]]:
    """A recorded stream as the samples file holds it: its first record (k 0, read just before the release, whose
    "t" is the start) given back the k and published_to the observer's copy left out."""
    recorded = json.loads((RECORDED / f"{name}.json").read_text())
    first, *rest = recorded["samples"]
    return recorded, [{**first, "k": 0, "published_to": first["t"]}, *rest]


def _series(samples: list[dict]) -> list[dict]:
    return series.per_interval(samples, interval_statements(samples, len(BOUNDS) + 1), BOUNDS, samples[0]["t"])


def _device_bytes(sample: dict) -> float:
    return 512 * sum(d["sectors_read"] for d in sample["os"]["disks"].values())


def _device_mib_per_s(a: dict, b: dict) -> float:
    return (_device_bytes(b) - _device_bytes(a)) / (b["os"]["t"] - a["os"]["t"]) / MiB


@pytest.mark.parametrize("name", ["scan", "mixed", "scan_workers"])
def test_the_engine_never_reads_faster_than_its_device_did(name):
    """Direct I/O and no other reader: the device read what the engine did, within 1%, over the window. No
    interval's engine figure can then be faster than the device's fastest second; main divided a burst of
    published counters by the 0.3 s between two slices' ends (816 MiB/s in scan, 1,828 MiB/s in mixed, where the
    device never did more than 355 and 368)."""
    recorded, samples = _recorded(name)
    window = recorded["window"]
    assert window["device_read_bytes"] == pytest.approx(window["db_read_bytes"], rel=0.02)
    fastest = max(_device_mib_per_s(a, b) for a, b in zip(samples, samples[1:]))
    engine = [row["read_mib_per_s"] for row in _series(samples) if row.get("read_mib_per_s") is not None]
    assert all(mib <= 1.1 * fastest for mib in engine), (fastest, engine)


@pytest.mark.parametrize("name", ["scan_workers", "mixed"])
def test_each_engine_figure_is_the_device_s_over_the_work_it_spans(name):
    """Each interval's engine figure divides the work its counters gained by the span it was done in, from one
    work point to the next: it agrees with the device's bytes over the seconds it spans. In scan_workers (one
    session, two parallel workers) the workers publish as they exit, within the leader's statement: main read
    0.32 to 0.46 of the device's rate in the intervals around a scan's end, 1.26 in one before it."""
    _, samples = _recorded(name)
    by_k = {sample["k"]: sample for sample in samples}
    rows = [row for row in _series(samples) if row.get("read_mib_per_s") is not None]
    assert rows
    for row in rows:
        cur = by_k[row["k"]]
        since = by_k.get(row["k"] - max(1, round(row["seconds"])), samples[0])
        assert row["read_mib_per_s"] == pytest.approx(_device_mib_per_s(since, cur), rel=0.1), row["k"]


@pytest.mark.parametrize("name", ["scan", "scan_workers", "mixed", "scan_other_reader"])
def test_an_interval_in_which_no_session_published_has_no_engine_figure(name):
    """A second in which no slice ended holds none of the sessions' work: its engine counters gained the read
    probe's 25 lookups alone (main: 23 to 27 reads/s while the device read thousands), and its statements are in
    progress (main: 0 statements/s). Its engine figures and statements per second are absent, and it says so."""
    _, samples = _recorded(name)
    by_k = {sample["k"]: sample for sample in samples}
    rows = _series(samples)
    quiet = [row for row in rows if by_k[row["k"]]["published_to"] == by_k[row["k"] - 1]["published_to"]]
    assert quiet
    for row in quiet:
        assert row["unpublished"] == published.IN_PROGRESS
        assert all(row[key] is None for key in series.ENGINE_RATES) and "statements_per_s" not in row
        assert row["device_reads_per_s"] > 1000 and row["db_cpu_cores"] > 0  # the scan goes on: no stall
    assert stalls.find([{**row, "phase": "measured"} for row in rows], 0.0) == []


def test_sessions_that_published_at_instants_far_apart_give_no_span():
    """Two sessions scanning a 256 MiB table, each slice ending with its scan: one's statement in progress while
    the other's slice ended, the counters hold each one's work up to an instant of its own. No span is theirs:
    no engine figure (main: 26,205 reads/s over the 0.3 s between two slices' ends, the device doing 11,280)."""
    _, samples = _recorded("scan")
    rows = _series(samples)
    apart = [row for row in rows if row.get("unpublished") == published.IN_PART]
    assert len(apart) >= 10
    assert all(row["reads_per_s"] is None and row.get("select_p99_us") is None for row in apart)


def test_a_span_runs_from_the_first_sample_at_its_work_point():
    """One session's statement in progress for a second: its parallel workers published their reads as they
    exited (5,341 reads in it), the session its own at the statement's end. The interval that holds the
    statement's end counts from the last sample at which the session had published, with the workers' reads:
    11,832 reads/s over 1.98 s (main: 9,136, the workers' reads left in the second before, as 5,371 reads/s)."""
    _, samples = _recorded("scan_workers")
    rows = {row["k"]: row for row in _series(samples)}
    assert rows[3]["unpublished"] == published.IN_PROGRESS and rows[3]["reads_per_s"] is None
    by_k = {sample["k"]: sample for sample in samples}
    gained = by_k[4]["engine"]["data"]["reads"] - by_k[2]["engine"]["data"]["reads"]
    assert rows[4]["seconds"] == pytest.approx(by_k[4]["published_to"] - by_k[2]["published_to"], abs=1e-6)
    assert rows[4]["reads_per_s"] == pytest.approx(gained / rows[4]["seconds"])
    assert rows[4]["statements_per_s"] == pytest.approx(3 / rows[4]["seconds"])  # its slice's 3 scans


def test_the_first_slices_work_counts_from_the_start():
    """Two sessions, each first slice a scan that ended past the first second: the first interval held none of
    their work (main: 14 reads/s, the probe's, over the 1.57 s since the reading before the release); the second
    counts from the start, 1.68 s of work (main divided it by the 1.0 s since the sample before: 13,743 reads/s,
    421 MiB/s, while the device read 250 MiB/s over those seconds; now 261)."""
    _, samples = _recorded("mixed")
    first, second = _series(samples)[:2]
    assert first["unpublished"] == published.IN_PROGRESS and first["reads_per_s"] is None
    start = samples[0]["t"]
    assert second["seconds"] == pytest.approx(samples[2]["published_to"] - start)
    gained = samples[2]["engine"]["data"]["reads"] - samples[0]["engine"]["data"]["reads"]
    assert second["reads_per_s"] == pytest.approx(gained / second["seconds"])
    assert second["read_mib_per_s"] == pytest.approx(_device_mib_per_s(samples[0], samples[2]), rel=0.1)


# -- records of an older dbio, and the span's rules on their own ------------------------------------------------

def _sample(k: int, reads: float, *, to: float | None, by_all: float | None = None, t: float | None = None) -> dict:
    t = k + 0.5 if t is None else t
    record = {"k": k, "t": t, "phase": "measured", "published_to": to,
              "engine": {"t": t, "data": {"reads": reads, "read_bytes": reads * 8192, "writes": 0.0},
                         "client": {"reads": reads, "read_time_ms": reads * 0.1}, "wal": {"bytes": 0.0}},
              "os": {"t": t}}
    if by_all is not None:
        record["published_by_all"] = by_all
    return record


def test_records_that_do_not_say_what_their_counters_hold_keep_their_span():
    """Samples of a dbio before published_by_all: the span between the latest slice ends each had seen (or the
    snapshots' own times), as they were always read; their results' reports stay as they were (tests/golden)."""
    rows = series.per_interval([_sample(1, 1000, to=1.0), _sample(2, 3000, to=2.0), _sample(3, 3025, to=2.0)],
                               {}, BOUNDS, 0.0)
    assert [(row["seconds"], row["reads_per_s"]) for row in rows] == [(1.0, 2000.0), (1.0, 25.0)]
    assert not any("unpublished" in row for row in rows)


def test_the_span_of_work_between_work_points():
    spans = published.Spans(start=0.0)
    stream = [_sample(0, 0, to=0.0, by_all=-0.05),  # every session at its barrier
              _sample(1, 1000, to=1.01, by_all=1.02),  # every session published at about 1.0
              _sample(2, 1025, to=1.01, by_all=1.02),  # none published since: a statement in progress
              _sample(3, 4000, to=3.0, by_all=2.96),
              _sample(4, 5000, to=3.9, by_all=3.4),  # one session in a call since 3.4, another's slice ended at 3.9
              _sample(5, 6000, to=5.0, by_all=5.0),
              _sample(6, 7000, to=6.0, by_all=6.01)]
    got = [spans.next(sample) for sample in stream]
    assert [(span.since and span.since["k"], span.seconds, span.unpublished) for span in got[1:]] == [
        (0, 1.01, None), (None, None, published.IN_PROGRESS), (1, pytest.approx(1.99), None),
        (None, None, published.IN_PART), (None, None, published.IN_PART), (5, 1.0, None)]
    assert published.work_point(stream[4], 0.0) is None and published.work_point(stream[3], 0.0) == 3.0


def test_a_lock_wait_is_a_stall_though_the_read_probe_moves_the_counters():
    """A real run of UPDATEs (2 sessions) while another connection held a SHARE lock on the data tables for 5 s:
    the sessions waited, no slice ended, and the read probe's lookups went on (17 to 68 reads a second in the
    engine's counters, as many on the device). main's series read those as reads/s, so no row was still and no
    stall was found; the sessions' CPU and the devices were idle: a stall, as the run itself found."""
    recorded, samples = _recorded("lock_wait")
    rows = _series(samples)
    found = stalls.find(rows, window_offset=0.0)
    assert found == [{"offset": pytest.approx(5.5, abs=0.1), "seconds": pytest.approx(4.0, abs=0.1),
                      "missing_samples": 0}]
    assert found == recorded["stalls"]  # what the run itself found
    waiting = [row for row in rows if row.get("unpublished") == published.IN_PROGRESS]
    assert [row["k"] for row in waiting] == [5, 6, 7, 8, 9]
    assert all(row["db_cpu_cores"] < stalls.SESSIONS_WORKING_CPU for row in waiting[1:])
    by_k = {sample["k"]: sample for sample in samples}
    assert all(by_k[k]["engine"]["data"]["reads"] > by_k[k - 1]["engine"]["data"]["reads"] for k in range(6, 10))


def test_a_scan_run_s_report_says_why_its_intervals_have_no_engine_figure():
    """The recorded scan run's series in a report: no reads/s row made of the counters' bursts (main's: a mean over
    intervals of the probe's reads and of bursts, from 0 to 816 MiB/s), and a line saying why and where the
    figures are."""
    from dbio import report
    from dbio import result as results

    doc = results.completed(json.loads((Path(__file__).parent.parent / "fixtures" / "result_format2.json")
                                       .read_text()))
    _, samples = _recorded("scan")
    doc["series"] = _series(samples)
    doc["timeline"]["warmup_seconds"] = 0
    for row in doc["series"]:
        row["phase"] = "measured"
    text = report.render(of(doc), "text")
    section = text[text.index("Time Series"):text.index("\n\n", text.index("Time Series"))]
    assert "Physical reads/s" not in section and "Statements/s" not in section, section
    assert ("16 of the 16 intervals have no engine figure nor statements per second: the sessions publish their "
            "work as each slice ends, and 6 held no session's (a statement in progress), 10 some sessions' and not "
            "others'") in " ".join(section.split())
