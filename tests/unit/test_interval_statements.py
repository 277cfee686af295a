"""Each interval's statement counts rebuilt from the samples file, late slices included (pure)."""

from dbio.run.assemble import interval_statements

BUCKETS = 4


def tally(selects, hist):
    return {"iterations": selects, "selects": selects, "updates": 0, "scans": 0, "rows": selects * 8,
            "think_seconds": 0.0,
            "select": {"count": sum(hist.values()), "sum_us": 100.0 * selects, "max_us": 50.0, "hist": hist}}


def test_late_slices_are_added_to_their_interval_and_a_repeated_interval_counts_once():
    records = [
        {"k": 0, "phase": "warmup", "statements": None},
        {"k": 1, "phase": "measured", "statements": tally(10, {"1": 10})},
        # a slice of interval 1 came back after it was written: the next record carries it
        {"k": 2, "phase": "measured", "statements": tally(20, {"2": 20}), "late_statements": {"1": tally(3, {"3": 3})}},
        {"k": 2, "phase": "measured", "statements": tally(99, {"0": 99})},  # a repeated k: the same interval
        {"t": 5.0, "phase": "late", "late_statements": {"3": tally(4, {"1": 4})}},  # after the last sample
    ]
    counts = interval_statements(records, BUCKETS)
    assert sorted(counts) == [1, 2, 3]
    assert counts[1]["selects"] == 13 and counts[1]["select"]["hist"] == {"1": 10, "3": 3}
    assert counts[1]["select"]["sum_us"] == 1300.0 and counts[1]["select"]["count"] == 13
    assert counts[2]["selects"] == 20
    assert counts[3]["selects"] == 4


def test_nothing_recorded_gives_nothing():
    assert interval_statements([], BUCKETS) == {}
    assert interval_statements([{"k": 1, "statements": None}], BUCKETS) == {}
