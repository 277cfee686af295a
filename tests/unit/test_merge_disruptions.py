"""--event in merged runs (dbio/merge_disruptions.py, pure): each input's events kept with the input (and part) that
ran them, moved onto the merged window's clock, their figures over the merged curve: one server's once, another
server's work added over each span, a span another curve does not cover left without a figure."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from dbio import merge_disruptions as md

OPENED = datetime(2026, 12, 2, 12, 0, 0, tzinfo=timezone.utc)


def doc(rates: list[float | None], *, opened_late: float = 0.0, events: list[dict] | None = None,
        part: int | None = None, offset: float = 2.0) -> dict:
    """A result with one measured row a second (None: no figure there), its window opened_late after OPENED."""
    opened = OPENED + timedelta(seconds=opened_late)
    series = []
    for i, rate in enumerate(rates):
        row = {"k": i, "phase": "measured", "since_start": offset + i + 1.0, "select_p99_us": 900.0}
        if rate is not None:
            row.update(reads_per_s=rate, seconds=1.0)
        series.append(row)
    return {"timeline": {"start": (opened - timedelta(seconds=offset)).isoformat(), "window_start": opened.isoformat()},
            "series": series, "config": {"workload": {"update_pct": 0}},
            **({"part": {"index": part, "of": 2, "run": "r"}} if part else {}),
            **({"disruptions": events, "figures": {"disruptions": [{"floor_pct": 1.0, "during_select_p99_us": 5e5}]}}
               if events else {})}


STALL = {"event": "10s=stall:2s", "action": "stall", "start_s": 10.0, "end_s": 12.0, "outcome": "done"}


def test_the_part_that_ran_it_is_named_and_its_figures_are_the_whole_servers():
    # one server, two parts: each reads the server's whole reads/s; part 2 ran the stall (its window opened 0.5 s
    # after part 1's, so on the merged clock, from part 2's opening, its event is where it said)
    level = [1000.0] * 10 + [100.0, 50.0] + [1000.0] * 8
    one = doc(level)
    two = doc([*level[:0], *level], opened_late=0.5, events=[STALL], part=2)
    start = (OPENED + timedelta(seconds=0.5)).timestamp()
    records, figures = md.merged([("p1", one), ("p2", two)], start, 20.0, lambda name, d: "server-a")
    assert [r["ran_by"] for r in records] == ["p2"] and records[0]["part"] == 2
    assert records[0]["start_s"] == 10.0 and records[0]["end_s"] == 12.0
    [dip] = figures
    assert dip["ran_by"] == "p2" and dip["part"] == 2
    assert dip["before_reads_per_s"] == pytest.approx(1000.0)
    assert dip["floor_reads_per_s"] == pytest.approx(50.0)  # the server's curve once, not the two parts' added
    assert dip["seconds_below_90pct"] == pytest.approx(2.0)
    assert dip["ran_by_figures"] == {"floor_pct": 1.0, "during_select_p99_us": 5e5}


def test_two_servers_curves_add_over_the_grids_spans():
    grid = [{"from": i, "to": i + 1.0, "seconds": 1.0, "reads_per_s": 100.0, "writes_per_s": None,
             "select_p99_us": 900.0} for i in range(4)]
    other = [{"from": i + 0.5, "to": i + 1.5, "seconds": 1.0, "reads_per_s": 10.0 * (i + 1), "writes_per_s": None,
              "select_p99_us": 1.0} for i in range(4)]
    rows = md.summed(grid, [other])
    # the first grid span is only half covered by the other server's curve: no figure; the next hold halves of two
    assert [r["reads_per_s"] for r in rows] == [None, pytest.approx(115.0), pytest.approx(125.0),
                                                 pytest.approx(135.0)]
    assert all(r["select_p99_us"] is None for r in rows)  # a summed curve has no p99
    assert md.summed(grid, [])[0]["select_p99_us"] == 900.0


def test_events_of_two_parts_are_both_kept():
    level = [1000.0] * 20
    other = {**STALL, "event": "15s@part2=checkpoint", "action": "checkpoint", "start_s": 15.0, "end_s": 15.5}
    a, b = doc(level, events=[STALL], part=1), doc(level, events=[other], part=2)
    records, figures = md.merged([("p1", a), ("p2", b)], OPENED.timestamp(), 20.0, lambda name, d: "s")
    assert [(r["event"], r["ran_by"], r["part"]) for r in records] == [
        ("10s=stall:2s", "p1", 1), ("15s@part2=checkpoint", "p2", 2)]
    assert [f["event"] for f in figures] == ["10s=stall:2s", "15s@part2=checkpoint"]
    assert md.merged([("p1", doc(level)), ("p2", doc(level))], OPENED.timestamp(), 20.0, lambda n, d: "s") == ([], [])
