"""figures.disruptions (stats/disruptions.py, pure): each event's before window, floor, seconds below 90%, recovery
and what was lost, on a recorded stall and on series made to show each rule."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from dbio.stats import catalogue
from dbio.stats import disruptions as d

STALL = json.loads((Path(__file__).parents[1] / "fixtures" / "disruption_stall.json").read_text())


def test_a_recorded_stall_of_3s():
    [event] = STALL["events"]
    [found] = d.disruptions(STALL["events"], STALL["series"], STALL["window_offset"], STALL["window_seconds"])
    spans = d.spans(STALL["series"], STALL["window_offset"], "reads_per_s")
    start, end = event["start_s"], event["end_s"]
    before = [s for s in spans if s["to"] <= start and s["to"] > start - d.BEFORE_SECONDS]
    level = sum(s["value"] * s["seconds"] for s in before) / sum(s["seconds"] for s in before)
    assert found["before"]["intervals"] == len(before) >= d.BEFORE_SPANS
    assert found["before_reads_per_s"] == pytest.approx(level, abs=0.01)
    assert found["before"]["noise_per_s"] == pytest.approx(statistics.stdev(s["value"] for s in before), abs=0.01)
    # the sessions' frozen seconds fall in one span whose rate is the little work done around them
    assert found["floor_pct"] < 10
    frozen = min((s for s in spans if s["to"] > start), key=lambda s: s["value"])
    assert found["floor_reads_per_s"] == pytest.approx(frozen["value"], abs=0.01)
    assert frozen["from"] < end and frozen["to"] > start  # it covers the stall
    assert 2 <= found["seconds_below_90pct"] <= 5
    assert found["resolution_seconds"] == pytest.approx(frozen["seconds"], abs=0.001)
    # recovered: the first span after the frozen one, and the two after it, within the before window's noise
    after = [s for s in spans if s["from"] >= frozen["to"] - d.ADJACENT]
    assert all(s["value"] >= level - 2 * found["before"]["noise_per_s"] for s in after[:3])
    assert found["recovery_seconds"] == pytest.approx(max(0.0, after[0]["from"] - end), abs=0.001)
    assert "not_recovered" not in found
    # lost: about the before rate over the stall's seconds
    assert found["reads_lost"] == pytest.approx(level * (end - start), rel=0.25)
    assert found["during_select_p99_us"] > 10 * found["before_select_p99_us"]  # SELECTs waited out the stall


def _rows(rates: list[float | None], *, offset: float = 2.0, writes: list[float] | None = None) -> list[dict]:
    """One measured row per second of the window, its rate over its own second (None: no figure, its work in the
    next row's span, as a stall leaves it)."""
    rows, open_since = [], 0.0
    for i, rate in enumerate(rates):
        row = {"k": i + 3, "since_start": offset + i + 1.0, "phase": "measured", "select_p99_us": 1000.0}
        if rate is not None:
            row.update(reads_per_s=rate, seconds=i + 1.0 - open_since)
            if writes is not None:
                row["writes_per_s"] = writes[i]
            open_since = i + 1.0
        else:
            row["unpublished"] = "in progress"
        rows.append(row)
    return rows


def _event(start: float, end: float, text: str = "5s=stall:2s") -> dict:
    return {"event": text, "action": "stall", "start_s": start, "end_s": end, "outcome": "done"}


def test_an_outage_of_two_seconds_in_a_flat_series():
    rates = [100.0] * 5 + [0.0, 0.0] + [100.0] * 5
    [found] = d.disruptions([_event(5.0, 7.0)], _rows(rates), 2.0, 12.0)
    assert found["before_reads_per_s"] == 100.0 and found["before"]["intervals"] == 5
    assert found["before"]["noise_per_s"] == 1.0  # no noise at all: the floor of 1% of the rate
    assert (found["floor_reads_per_s"], found["floor_pct"]) == (0.0, 0.0)
    assert found["seconds_below_90pct"] == 2.0
    assert found["recovery_seconds"] == 0.0
    assert found["reads_lost"] == 200.0
    assert found["before_select_p99_us"] == found["during_select_p99_us"] == 1000.0


def test_a_stall_seen_as_one_span_over_its_seconds():
    # two rows with no figure: the third spans the three seconds, a third of them worked
    rates = [100.0] * 5 + [None, None, 100.0 / 3] + [100.0] * 4
    [found] = d.disruptions([_event(5.0, 7.0)], _rows(rates), 2.0, 12.0)
    assert found["floor_reads_per_s"] == pytest.approx(33.333, abs=0.001)
    assert found["resolution_seconds"] == 3.0 and found["seconds_below_90pct"] == 3.0
    assert found["reads_lost"] == pytest.approx(200.0, abs=0.1)


def test_not_recovered_by_the_window_end():
    rates = [100.0] * 5 + [10.0, 50.0, 80.0, 85.0, 100.0, 80.0, 100.0]
    [found] = d.disruptions([_event(5.0, 6.0)], _rows(rates), 2.0, 12.0)
    assert found["recovery_seconds"] is None and found["not_recovered"] == d.NOT_RECOVERED
    assert found["seconds_below_90pct"] == 5.0  # every second under 90 of the rest of the window
    assert found["reads_lost"] == pytest.approx(90 + 50 + 20 + 15 + 0 + 20 + 0)


def test_recovery_waits_for_three_intervals_within_the_noise():
    rates = [100.0, 102.0, 98.0, 101.0, 99.0] + [0.0, 100.0, 60.0, 100.0, 99.0, 101.0, 100.0]
    [found] = d.disruptions([_event(5.0, 6.0)], _rows(rates), 2.0, 12.0)
    assert found["recovery_seconds"] == 2.0  # the dip at 7-8 s puts it off to 8 s
    assert found["floor_reads_per_s"] == 0.0 and found["seconds_below_90pct"] == 2.0


def test_too_little_steady_state_before():
    [found] = d.disruptions([_event(2.0, 3.0, "2s=stall:1s")], _rows([100.0] * 10), 2.0, 10.0)
    assert found["before"] is None and found["absent"] == d.TOO_LITTLE_BEFORE
    assert "floor_reads_per_s" not in found


def test_an_event_that_never_began_is_absent():
    never = {"event": "20s=checkpoint", "action": "checkpoint", "start_s": None, "end_s": None,
             "outcome": "not reached"}
    [found] = d.disruptions([never], _rows([100.0] * 10), 2.0, 10.0)
    assert found["absent"] == "it did not happen inside the window"


def test_each_event_has_its_own_before_window_and_writes_in_an_update_run():
    rates = [100.0] * 5 + [0.0] + [100.0] * 5 + [50.0] + [100.0] * 4
    writes = [40.0] * 5 + [0.0] + [40.0] * 5 + [40.0] + [40.0] * 4
    first, second = d.disruptions([_event(5.0, 6.0, "5s=stall:1s"), _event(11.0, 12.0, "11s=checkpoint")],
                                  _rows(rates, writes=writes), 2.0, 16.0, writes=True)
    assert second["before"]["from_s"] >= first["end_s"]  # the first's dip is not the second's steady state
    assert second["floor_pct"] == 50.0 and second["reads_lost"] == 50.0
    assert first["writes"]["floor_per_s"] == 0.0 and first["writes"]["lost"] == 40.0
    assert second["writes"]["seconds_below_90pct"] == 0.0 and second["writes"]["lost"] == 0.0


def test_a_gap_breaks_the_recovery_run():
    rows = _rows([100.0] * 5 + [0.0] + [100.0] * 6)
    rows[7] = {"k": rows[7]["k"], "since_start": rows[7]["since_start"], "phase": "measured", "missing": "late"}
    rows[8]["seconds"] = 1.0  # nothing is counted across a gap: the row after it has its own second
    [found] = d.disruptions([_event(5.0, 6.0, "5s=stall:1s")], rows, 2.0, 12.0)
    assert found["recovery_seconds"] == 2.0  # 6-7 s, a gap, then 8 s onwards: three in a row from 8 s


def test_the_catalogue_reads_each_events_figures():
    found = d.disruptions(STALL["events"], STALL["series"], STALL["window_offset"], STALL["window_seconds"])
    [record] = catalogue.disruptions({"disruptions": found})
    for fig in catalogue.DISRUPTION_FIGURES:
        assert fig.name in record and fig.value(record) is not None, fig.name
        assert catalogue.member(catalogue.DISRUPTION_FIGURES, fig.name) is fig
    assert catalogue.disruptions({}) == [] and catalogue.disruptions(None) == []


def test_no_interval_with_a_figure_after_it():
    rates = [100.0] * 5 + [None] * 5  # nothing the sessions did was counted again before the window's end
    [found] = d.disruptions([_event(5.0, 7.0)], _rows(rates), 2.0, 10.0)
    assert found["absent"] == d.NO_STRETCH and found["before_reads_per_s"] == 100.0
    assert "floor_reads_per_s" not in found and "recovery_seconds" not in found


def test_an_event_inside_a_gap_has_no_floor():
    rows = _rows([100.0] * 5 + [0.0, 0.0] + [100.0] * 5)
    for i in (5, 6):  # the server frozen whole: its samples not taken
        rows[i] = {"k": rows[i]["k"], "since_start": rows[i]["since_start"], "phase": "measured", "missing": "late"}
    rows[7]["seconds"] = 1.0
    [found] = d.disruptions([_event(5.0, 7.0)], rows, 2.0, 12.0)
    assert found["absent"] == d.DURING_GAP and found["recovery_seconds"] == 0.0
    assert "floor_reads_per_s" not in found


def test_a_rate_s_schedule_during_each_event():
    from dbio.stats import rate

    # intervals end at k seconds since the start (warm-up 1 s): lag grows under the event (4-7 s into the window)
    lags = [(k, 800.0) for k in range(2, 6)] + [(6, 900_000.0), (7, 1_900_000.0), (8, 2_500_000.0), (9, 700.0),
                                                 (10, 650.0)]
    events = [{"event": "4s=stall:3s", "start_s": 4.0, "end_s": 7.0, "recovery_seconds": 0.0},
              {"event": "9s=checkpoint", "start_s": None, "end_s": None}]
    during, never = rate.during_events(events, lags, 1.0, 1.0)
    assert during == {"lag_before_us": 800.0, "lag_during_us": 2_500_000.0, "behind": True}
    assert never is None
    calm = rate.during_events([{"start_s": 1.0, "end_s": 2.0}], [(k, 500.0) for k in range(2, 8)], 1.0, 1.0)
    assert calm == [{"lag_before_us": 500.0, "lag_during_us": 500.0, "behind": False}]
