import pytest

from dbio.stats import histogram


def _hist(values, bounds):
    counts = histogram.empty(bounds)
    import bisect

    for v in values:
        counts[bisect.bisect_right(bounds, v)] += 1  # same rule as SQL width_bucket
    return counts


def test_bounds_hold_awr_edges_and_are_fine_enough():
    bounds = histogram.bounds_us()
    assert bounds == sorted(set(bounds))
    for edge in histogram.AWR_EDGES_US:
        assert float(edge) in bounds
    widths = [(b - a) / a for a, b in zip(bounds, bounds[1:]) if a >= 8]
    assert max(widths) <= 0.125 + 1e-9
    assert bounds[-1] > 100_000_000  # beyond 100 s


def test_percentiles_within_bucket_width_of_exact():
    bounds = histogram.bounds_us()
    values = [100 + i * 3 for i in range(1000)]  # 100 .. 3097 us, uniform
    counts = _hist(values, bounds)
    for q in (0.5, 0.9, 0.99):
        exact = sorted(values)[int(q * len(values)) - 1]
        assert histogram.percentile(counts, bounds, q, max(values)) == pytest.approx(exact, rel=0.13)
    assert histogram.percentile(counts, bounds, 1.0, max(values)) == max(values)


def test_percentile_of_empty_and_single_value():
    bounds = histogram.bounds_us()
    assert histogram.percentile(histogram.empty(bounds), bounds, 0.5) is None
    counts = _hist([250.0], bounds)
    p = histogram.percentile(counts, bounds, 0.99, 250.0)
    assert 240 <= p <= 250


def test_awr_buckets_count_every_statement_once():
    bounds = histogram.bounds_us()
    values = [10, 63, 64, 127, 600, 999, 1000, 1500, 40_000, 2_000_000]
    buckets = dict(histogram.awr_buckets(_hist(values, bounds), bounds))
    assert buckets["<64us"] == 2
    assert buckets["<128us"] == 2
    assert buckets["<1ms"] == 2
    assert buckets["<2ms"] == 2
    assert buckets["<1s"] == 1
    assert buckets[">=1s"] == 1
    assert sum(buckets.values()) == len(values)


def test_add_requires_same_bounds():
    with pytest.raises(ValueError):
        histogram.add([0, 1], [1, 2, 3])
    assert histogram.add([1, 2], [3, 4]) == [4, 6]
