"""A MySQL slice's result read from slice.sql's two columns: its counters as one text, its histogram as digits."""

import numpy as np
import pytest

from dbio.engines.mysql import histmap
from dbio.engines.mysql.workload import SLICE_FIELDS, slice_result

BUCKETS = 5


def digits(kinds: int, **cells: int) -> bytes:
    """A histogram string of kinds x BUCKETS counts, cells given as c<kind>_<bucket>=count."""
    counts = np.zeros((kinds, BUCKETS), dtype=np.int64)
    for name, value in cells.items():
        kind, bucket = name[1:].split("_")
        counts[int(kind), int(bucket)] = value
    return "".join(str(int(v)).rjust(histmap.COUNT_WIDTH, "0") for v in counts.ravel()).encode()


def packed(**changes: str) -> str:
    """slice.sql's first column as MariaDB writes it, with some numbers changed (by name)."""
    names = ["iterations", "selects", "updates", "scans", "rows", "think_s", "think_left", "s1", "s2", "s3", "m1",
             "m2", "m3", "s4", "m4", "hot_rows", "retries", "end", "done", "due", "late", "s5", "m5", "s6", "m6",
             "early"]
    values = dict(zip(names, ["1200", "1188", "12", "0", "9504", "0", "0", "250123.5", "3100.25", "0", "4012.75",
                              "950.5", "0", "0", "0", "0", "1", "1796000000.123456", "0", "", "0", "0", "0", "0", "0",
                              "0"]))
    values.update(changes)
    assert len(values) == SLICE_FIELDS
    return ",".join(values[n] for n in names)


def test_a_closed_loops_slice_reads_every_counter_and_its_four_kinds():
    r = slice_result(packed(), digits(4, c0_2=1100, c1_3=12, c0_4=88), BUCKETS)
    assert (r.iterations, r.selects, r.updates, r.scans, r.rows, r.retries) == (1200, 1188, 12, 0, 9504, 1)
    assert r.sum_us == [250123.5, 3100.25, 0.0, 0.0] and r.max_us == [4012.75, 950.5, 0.0, 0.0]
    assert r.slice_end == 1796000000.123456 and r.done is False and r.due is None
    assert r.hist.shape == (4, BUCKETS) and r.hist[0, 2] == 1100 and int(r.hist.sum()) == 1200


def test_an_open_loops_slice_carries_its_schedule_kinds_and_next_due_time():
    r = slice_result(packed(due="1796000000.5", late="3", early="2", s5="9000.5", m5="700", s6="100", m6="40",
                            done="1"), digits(6, c4_1=5, c5_0=5), BUCKETS)
    assert r.due == 1796000000.5 and r.late == 3 and r.due_before_window == 2 and r.done is True
    assert r.sum_us[4:] == [9000.5, 100.0] and r.max_us[4:] == [700.0, 40.0] and r.hist.shape == (6, BUCKETS)


def test_bytes_read_as_the_same_numbers():
    one, other = slice_result(packed().encode(), digits(4, c0_1=3), BUCKETS), slice_result(packed(), digits(4, c0_1=3),
                                                                                         BUCKETS)
    assert (one.iterations, one.sum_us, one.slice_end) == (other.iterations, other.sum_us, other.slice_end)
    assert np.array_equal(one.hist, other.hist)


def test_a_missing_or_empty_counter_is_refused_not_read_as_zero():
    with pytest.raises(ValueError, match="gave 25 numbers"):
        slice_result(packed().rsplit(",", 1)[0], digits(4), BUCKETS)  # CONCAT_WS leaves out a NULL
    with pytest.raises(ValueError, match="left a counter empty"):
        slice_result(packed(rows=""), digits(4), BUCKETS)
