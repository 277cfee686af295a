import pytest

from dbio.stats import histogram, stability


def rows(values, step=10.0, start=30.0, key="reads_per_s"):
    return [{"since_start": start + i * step, "phase": "measured", key: v} for i, v in enumerate(values)]


def test_quantile():
    assert stability.quantile([], 0.5) is None
    assert stability.quantile([5.0], 0.99) == 5.0
    assert stability.quantile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5
    assert stability.quantile(list(range(101)), 0.99) == pytest.approx(99.0)


def test_drift_of_a_short_run_uses_tenths():
    d = stability.drift(rows([100.0] * 10 + [90.0] * 10), "reads_per_s")
    assert d["span"] == "first 2 to last 2 intervals" and d["change_pct"] == pytest.approx(-10.0)


def test_drift_of_a_long_run_uses_hours():
    values = [1000.0] * 360 + [950.0] * 360 + [900.0] * 360  # three hours of 10 s intervals
    d = stability.drift(rows(values), "reads_per_s")
    assert d["span"] == "first hour to last hour"
    assert d["from"] == pytest.approx(1000.0, rel=0.01) and d["change_pct"] == pytest.approx(-10.0, abs=0.2)


def test_drift_edge_cases():
    assert stability.drift(rows([5.0]), "reads_per_s") is None  # one interval
    flat = stability.drift(rows([7.0] * 30), "reads_per_s")
    assert flat["change_pct"] == 0.0
    zero = stability.drift(rows([0.0] * 5), "reads_per_s")
    assert zero["change_pct"] is None  # no reads at all: no percentage to give


def test_share_of_statements_over_1ms():
    bounds = histogram.bounds_us()
    counts = histogram.empty(bounds)
    counts[bounds.index(512.0)] = 3  # [448, 512): under 1 ms
    counts[bounds.index(1000.0) + 1] = 1  # [1000, ...): at or over 1 ms
    assert stability.share_at_or_above(counts, bounds, 1000.0) == pytest.approx(25.0)
    assert stability.share_at_or_above(histogram.empty(bounds), bounds, 1000.0) is None
    with pytest.raises(ValueError):
        stability.share_at_or_above(counts, bounds, 999.0)
