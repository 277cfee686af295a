import pytest

from dbio.stats.knee import Point, find, peaked


def curve(*rows):
    return [Point(s, iops, lat) for s, iops, lat in rows]


def test_knee_where_throughput_flattens_and_latency_climbs():
    points = curve((1, 10_000, 100), (2, 19_000, 105), (4, 36_000, 110), (8, 52_000, 150), (16, 53_500, 292),
                   (32, 54_000, 590))
    knee = find(points)
    assert knee.after.sessions == 8 and knee.next.sessions == 16
    assert knee.gain_pct == pytest.approx(2.88, abs=0.01) and knee.latency_pct == pytest.approx(94.7, abs=0.1)
    assert knee.in_flight == pytest.approx(53_500 * 292e-6)
    text = knee.statement()
    assert text.startswith("beyond 8 sessions, reads/s +3% while read latency +95%: queueing")
    assert "Little's law at 16 sessions: 53,500/s x 292 us = 15.6 in flight" in text


def test_no_knee_edge_cases():
    assert find(curve((4, 30_000, 120))) is None  # one step
    assert find(curve((1, 10_000, 100), (2, 10_000, 100), (4, 10_000, 100))) is None  # flat: no queueing
    assert find(curve((1, 0, None), (2, 0, None))) is None  # zero reads
    assert find(curve((1, 10_000, 100), (2, 20_000, 100), (4, 40_000, 100))) is None  # scales linearly
    assert find(curve((2, 20_000, 100), (1, 10_000, 100))) is None  # order of steps does not matter


def test_gain_threshold_is_a_parameter():
    points = curve((1, 10_000, 100), (2, 11_500, 170))
    assert find(points, gain=0.10) is None  # +15% still pays at 10%
    assert find(points, gain=0.20).after.sessions == 1


def test_until_peak_stops_when_doubling_adds_too_little():
    assert not peaked(0, 5_000, 0.05)
    assert not peaked(10_000, 12_000, 0.05)
    assert peaked(10_000, 10_300, 0.05)
    assert peaked(10_000, 9_000, 0.05)


def test_littles_law_is_stated_only_for_read_latency():
    points = curve((1, 10_000, 100), (2, 10_200, 190))
    assert "Little's law" in find(points).statement()
    assert "Little's law" not in find(points).statement(read_latency=False)


def test_the_knee_says_how_much_of_the_latency_rise_was_waiting_for_a_cpu():
    cpu_bound = find([Point(2, 10_000, 180, 40), Point(4, 10_400, 400, 230)])
    assert cpu_bound.statement().endswith("; of the read latency's +220 us, the wait for a CPU within a read was "
                                          "+190 us: this host's CPUs, not the storage, set the knee")
    device_bound = find([Point(2, 10_000, 180, 40), Point(4, 10_400, 400, 60)])
    assert device_bound.statement().endswith("; of the read latency's +220 us, the wait for a CPU within a read "
                                             "was +20 us")
    assert "waiting for a CPU" not in find(curve((2, 10_000, 180), (4, 10_400, 400))).statement()  # not measured
    assert "for a CPU" not in cpu_bound.statement(read_latency=False)  # a statement's latency spans reads
