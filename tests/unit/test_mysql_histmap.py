"""The MySQL loop's string histogram finds the same bucket as dbio's histogram rule."""

import math
import random

import numpy as np
import pytest

from dbio.engines.mysql import histmap
from dbio.stats import histogram

BOUNDS = histogram.bounds_us()


@pytest.fixture(scope="module")
def strings():
    return histmap.build_map(BOUNDS), histmap.build_bounds(BOUNDS)


def test_every_bound_and_its_neighbours_land_in_the_bucket_bisect_gives(strings):
    values = [0.0, 0.5, 7.999, 8.0]
    for b in BOUNDS:
        values += [b, math.nextafter(b, 0), math.nextafter(b, math.inf), b - 0.25, b + 0.25]
    for v in values:
        assert histmap.bucket_in_loop(*strings, v) == histmap.bucket_of(BOUNDS, v), v


def test_random_latencies_over_the_whole_range_agree(strings):
    rnd = random.Random(11)
    for _ in range(20000):
        v = math.exp(rnd.uniform(math.log(0.1), math.log(3e9)))
        assert histmap.bucket_in_loop(*strings, v) == histmap.bucket_of(BOUNDS, v), v


def test_the_fine_key_is_the_same_either_side_of_a_power_of_two():
    for e in range(3, 28):
        p = 2.0 ** e
        assert histmap.fine_key(p) == 8 + (e - 3) * histmap.SUB
        assert histmap.fine_key(math.nextafter(p, 0)) == 8 + (e - 3) * histmap.SUB - 1


def test_bounds_two_of_which_share_a_fine_bucket_are_refused():
    with pytest.raises(ValueError, match="one fine bucket"):
        histmap.build_map([1.0, 1000.1, 1000.2])


def test_counts_come_back_as_kinds_by_buckets():
    buckets = len(BOUNDS) + 1
    cells = ["0" * histmap.COUNT_WIDTH] * (4 * buckets)  # select, update, scan, hot-spot select
    cells[buckets + 5] = "12".rjust(histmap.COUNT_WIDTH, "0")
    cells[3 * buckets + 2] = "7".rjust(histmap.COUNT_WIDTH, "0")
    counts = histmap.parse_counts("".join(cells).encode(), buckets)
    assert counts.shape == (4, buckets) and counts[1, 5] == 12 and counts[3, 2] == 7 and int(np.sum(counts)) == 19
    with pytest.raises(ValueError):
        histmap.parse_counts(b"0001", buckets)


def test_a_runs_sessions_share_one_map_made_once(monkeypatch):
    """The map is the same strings histmap makes, made once for the bounds of a run, whatever its sessions."""
    from dbio.engines.mysql import workload

    made = []
    real = histmap.build_map
    monkeypatch.setattr(histmap, "build_map", lambda b: made.append(b) or real(b))
    workload.session_histogram.cache_clear()
    bounds = (10.0, 100.0, 1000.0, 12345.0)
    first = [workload.session_histogram(bounds) for _ in range(64)]
    assert len(made) == 1 and all(f == (real(bounds), histmap.build_bounds(bounds)) for f in first)
    workload.session_histogram(bounds + (50000.0,))
    assert len(made) == 2


def _cell_by_cell(raw: str, kinds: int, buckets: int) -> np.ndarray:
    w = histmap.COUNT_WIDTH
    return np.array([int(raw[i:i + w]) for i in range(0, len(raw), w)], dtype=np.int64).reshape(kinds, buckets)


@pytest.mark.parametrize("kinds", [histmap.KINDS, histmap.SCHEDULED_KINDS])
def test_counts_read_at_once_are_the_cells_read_one_by_one(kinds):
    rng = random.Random(39)
    buckets = 97
    for _ in range(20):
        counts = [rng.choice([0, 0, 0, 1, rng.randrange(10 ** histmap.COUNT_WIDTH)]) for _ in range(kinds * buckets)]
        raw = "".join(f"{c:0{histmap.COUNT_WIDTH}d}" for c in counts)
        got = histmap.parse_counts(raw.encode(), buckets)
        assert got.dtype == np.int64 and got.shape == (kinds, buckets)
        assert (got == _cell_by_cell(raw, kinds, buckets)).all() and got.flatten().tolist() == counts


def test_a_cell_that_is_not_all_digits_is_read_as_int_reads_it():
    raw = "00000012" + "      34" + "+0000005" + "0" * histmap.COUNT_WIDTH * (histmap.KINDS * 2 - 3)
    assert (histmap.parse_counts(raw, 2) == _cell_by_cell(raw, histmap.KINDS, 2)).all()
    with pytest.raises(ValueError):
        histmap.parse_counts("0000000x" + "0" * histmap.COUNT_WIDTH * (histmap.KINDS * 2 - 1), 2)
