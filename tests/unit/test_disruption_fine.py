"""A short event's fine samples (jobs/disruption_samples.py) and their figures (stats/disruptions.py's fine): taken
a quarter second apart from the processes' read counters around the event only, each the bytes since the sample
before among the processes present in both, a sample held up breaking the series; the figures over their real
spans, on samples recorded around a real 1 s stall."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from dbio.jobs import disruption_samples as ds
from dbio.stats import disruptions as d

RECORDED = Path(__file__).parents[1] / "fixtures" / "disruption_fine_stall.json"


def _proc(tmp_path: Path, counts: dict[int, int]) -> Path:
    for pid, n in counts.items():
        (tmp_path / str(pid)).mkdir(exist_ok=True)
        (tmp_path / str(pid) / "io").write_text(f"rchar: {n}\nwchar: 7\nsyscr: 3\n")
    return tmp_path


def test_samples_are_taken_around_the_event_only_and_count_processes_present_in_both(tmp_path):
    proc = _proc(tmp_path, {10: 1000, 11: 5000})
    fine = ds.FineSamples([(0, 20.0)], proc)
    fine.take(5.0, [10, 11])  # 15 s before it: not yet
    assert fine.samples[0] == [] and fine.previous is None
    fine.take(9.75, [10, 11])
    _proc(tmp_path, {10: 3000, 11: 6000, 12: 10**9})  # 12 began meanwhile: its count is no difference
    fine.take(10.0, [10, 11, 12])
    (tmp_path / "11" / "io").unlink()  # 11 ended: left out
    _proc(tmp_path, {10: 4000, 12: 10**9 + 500})
    fine.take(10.25, [10, 11, 12])
    assert fine.samples[0] == [[9.75, None], [10.0, 3000.0], [10.25, 1500.0]]
    _proc(tmp_path, {10: 4500, 12: 10**9 + 500})
    fine.take(11.0, [10, 12])  # held up for three steps: a longer span, still counted
    assert fine.samples[0][-1] == [11.0, 500.0]
    fine.take(13.5, [10, 12])  # held up for ten: no sample was taken in between, a new series begins
    assert fine.samples[0][-1] == [13.5, None]
    fine.ended[0] = 21.0
    assert fine.needed(0, 31.0) and not fine.needed(0, 31.5) and fine.done(31.5)


def test_an_event_s_samples_stop_at_the_next_event():
    fine = ds.FineSamples([(0, 10.0), (1, 14.0)])
    fine.until[0] = 14.0
    fine.ended[0] = 11.0
    assert fine.needed(0, 13.9) and not fine.needed(0, 14.1)
    assert fine.needed(1, 3.6) and not fine.needed(1, 3.4)
    assert ds.sampled(1.0) and ds.sampled(None) and not ds.sampled(30.0)


def test_nothing_readable_takes_no_sample(tmp_path):
    fine = ds.FineSamples([(0, 1.0)], tmp_path)
    fine.take(0.5, [4242])
    assert fine.samples[0] == []


def test_the_sampler_ends_once_every_event_has_its_samples(tmp_path):
    proc = _proc(tmp_path, {10: 0})
    fine = ds.FineSamples([(0, 0.0)], proc)
    fine.ended[0] = 0.0
    clock = iter([0.0, 5.0, 10.5])
    asyncio.run(asyncio.wait_for(ds.sample(fine, lambda: next(clock), lambda: [10], asyncio.Event()), 5))
    assert [t for t, _ in fine.samples[0]] == [0.0, 5.0]


def test_fine_spans_divide_by_their_real_seconds():
    spans = d.fine_spans([[1.0, None], [1.25, 2500.0], [1.6, 700.0], [2.0, None], [2.25, 100.0]])
    assert [(s["from"], s["to"]) for s in spans] == [(1.0, 1.25), (1.25, 1.6), (2.0, 2.25)]
    assert [s["value"] for s in spans] == pytest.approx([10000.0, 2000.0, 400.0])


def _fine(rates: dict[float, float], step: float = 0.25) -> dict:
    samples, t = [[0.0, None]], 0.0
    while t < 20.0 - 1e-9:
        t = round(t + step, 3)
        rate = next((r for at, r in sorted(rates.items(), reverse=True) if t > at + 1e-9), 1000.0)
        samples.append([t, rate * step])
    return {"seconds": step, "source": "test", "samples": samples}


def test_a_1s_stall_is_seen_at_a_quarter_second():
    # 1000 B/s, none from 10 to 11 s, then 1000 again
    found = d.fine(_fine({0.0: 1000.0, 10.0: 0.0, 11.0: 1000.0}), 10.0, 11.0, None, None)
    assert found["floor_pct"] == 0.0 and found["floor_bytes_per_s"] == 0.0
    assert found["seconds_below_90pct"] == pytest.approx(1.0)
    assert found["recovery_seconds"] == pytest.approx(0.0)
    assert found["bytes_lost"] == pytest.approx(1000.0)
    assert found["resolution_seconds"] == 0.25 and found["source"] == "test"
    assert "before_select_p99_us" not in found


def test_no_fine_figure_without_samples_or_reads():
    assert "absent" in d.fine({"samples": []}, 10.0, 11.0, None, None)
    assert "read nothing" in d.fine(_fine({0.0: 0.0}), 10.0, 11.0, None, None)["absent"]


def test_the_event_record_says_its_resolutions():
    event = {"event": "10s=stall:1s", "start_s": 10.0, "end_s": 11.0, "fine_samples": _fine({10.0: 0.0, 11.0: 1e3})}
    rows = [{"phase": "measured", "seconds": 1.0, "since_start": 3.0 + i, "reads_per_s": 500.0 if i != 11 else 50.0}
            for i in range(20)]
    [found] = d.disruptions([event], rows, 2.0, 20.0)
    assert found["resolution"] == {"interval_seconds": 1.0, "fine_seconds": 0.25}
    assert found["fine"]["seconds_below_90pct"] == pytest.approx(1.0)
    [plain] = d.disruptions([{**event, "fine_samples": None}], rows, 2.0, 20.0)
    assert "fine" not in plain and plain["resolution"]["fine_seconds"] is None


def test_a_recorded_1s_stall():
    # the engine's series had no interval with a figure across this stall (its one session froze mid-slice on a
    # host loaded 13 times over); the fine samples, a quarter second apart (held up to 0.6 s), see it
    recorded = json.loads(RECORDED.read_text())
    found = d.fine(recorded["fine_samples"], recorded["start_s"], recorded["end_s"], None, None)
    assert 0.75 <= found["seconds_below_90pct"] <= 2.0
    assert found["floor_pct"] == 0.0
    assert found["before"]["intervals"] >= 20
    assert found["resolution_seconds"] < 1.0
    assert found["recovery_seconds"] is not None and found["recovery_seconds"] < 1.0
