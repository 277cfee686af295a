"""Readings of several nodes: their shapes old and new, and the total of their counters (pure)."""

import json
from pathlib import Path

from dbio.engines.counters import combine
from dbio.engines.postgres import stats
from dbio.run import readings

FIXTURES = Path(__file__).parent.parent / "fixtures"


def _raw():
    return json.loads((FIXTURES / "pg18_snapshot.json").read_text())


def test_a_format_1_sample_reads_as_its_one_node():
    raw = _raw()
    assert readings.raw_nodes({"engine": raw, "os": {}}) == {readings.ONLY_NODE: raw}
    assert readings.answered({"engine": raw}) and not readings.answered({"engine": None})
    assert readings.reading_time({"engine": raw}) == float(raw["t"])
    assert readings.raw_nodes(None) == {} and readings.reading_time({"nodes": {}}) is None


def test_a_reading_is_answered_only_when_every_node_answered():
    raw = _raw()
    assert readings.answered({"nodes": {"a": raw, "b": raw}})
    assert not readings.answered({"nodes": {"a": raw, "b": None}})
    assert not readings.answered({"nodes": {}})


def test_the_total_adds_every_node_and_keeps_the_first_node_s_time():
    one = stats.normalize(_raw())
    two = {**one, "t": one["t"] + 0.2}
    total = combine([one, two])
    assert total["t"] == one["t"]
    assert total["data"]["reads"] == 2 * one["data"]["reads"]
    assert total["wal"]["bytes"] == 2 * one["wal"]["bytes"]
    assert combine([one]) is one


def test_what_one_node_cannot_measure_is_unknown_in_the_total():
    one = stats.normalize(_raw())
    other = {**one, "data": {**one["data"], "read_time_ms": None}, "by_backend": None}
    total = combine([one, other])
    assert total["data"]["read_time_ms"] is None and total["by_backend"] is None
    assert total["data"]["reads"] == 2 * one["data"]["reads"]


def test_normalized_reading_has_each_node_and_their_total():
    raw = _raw()
    reading = readings.normalized({"nodes": {"a": raw, "b": raw}, "os": {"t": 1.0}, "k": 3},
                                  lambda _name, r: stats.normalize(r))
    assert set(reading["nodes"]) == {"a", "b"} and reading["os"] == {"t": 1.0} and reading["k"] == 3
    assert reading["engine"]["data"]["reads"] == 2 * reading["nodes"]["a"]["data"]["reads"]
    partial = readings.normalized({"nodes": {"a": raw, "b": None}}, lambda _name, r: stats.normalize(r))
    assert partial["engine"] is None and partial["nodes"]["b"] is None


def test_a_process_kind_only_one_node_lists_adds_that_node_s_counters():
    one = stats.normalize(_raw())
    kinds = list(one["by_backend"])
    other = {**one, "by_backend": {k: v for k, v in one["by_backend"].items() if k != kinds[0]}}
    total = combine([one, other])
    assert total["by_backend"][kinds[0]] == one["by_backend"][kinds[0]]
    assert total["by_backend"][kinds[1]]["reads"] == 2 * one["by_backend"][kinds[1]]["reads"]


def test_a_snapshot_is_normalized_once_however_often_it_is_asked():
    class Counting:
        calls = 0

        def normalize(self, raw):
            self.calls += 1
            return stats.normalize(raw)

    engine = Counting()
    first, second = _raw(), _raw()
    made = readings.once_normalized(engine)(first)
    assert made == stats.normalize(first) and engine.calls == 1
    assert readings.refused(first, readings.once_normalized(engine)) is None  # checked as it came: no new work
    assert readings.normalizer({"node1": engine})("node1", first) is made and engine.calls == 1
    assert readings.normalizer({"node1": engine})("node1", second) is not made and engine.calls == 2  # another
    assert readings.once_normalized(engine)(first) == made and engine.calls == 3  # not the last any more: again
