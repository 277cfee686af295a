"""Whether a node still answers (run/liveness.py): silent only with a call waiting and no answer for
SILENT_AFTER seconds; a reading's time is that of a node still read."""

import pytest

from dbio.run.liveness import SILENT_AFTER, Liveness
from dbio.run.readings import normalized, reading_time


class _Hand(list):
    """A clock moved by hand (clock[0] += seconds): the liveness's time (run/clock.py) reads only monotonic."""

    def monotonic(self) -> float:
        return self[0]


@pytest.fixture
def clock():
    return _Hand([1000.0])


def test_a_node_is_silent_only_while_a_call_waits_on_it_unanswered(clock):
    nodes = Liveness(clock)
    with nodes.asking("a"):
        clock[0] += 0.01
    clock[0] += 60  # idle for a minute: nothing waited on it, no silence
    assert nodes.silent() == []
    with nodes.asking("a"), nodes.asking("b"):
        clock[0] += SILENT_AFTER - 0.1
        assert nodes.silent() == []
        with nodes.asking("b"):  # b answers a call while the first still waits (a slice overrunning)
            clock[0] += 0.05
        clock[0] += 0.2
        assert nodes.silent() == ["a"] and nodes.quiet_for("a") == pytest.approx(SILENT_AFTER + 0.15)
        assert nodes.quiet_for("b") == pytest.approx(0.2)
    assert nodes.silent() == []  # answered at last


def test_a_failed_call_is_no_answer_and_watching_restarts_the_silence(clock):
    nodes = Liveness(clock)
    with pytest.raises(ConnectionError), nodes.asking("a"):
        raise ConnectionError("server closed the connection")
    assert "a" not in nodes.heard
    waiting = nodes.asking("a")  # a session at a barrier held on purpose, long before the start
    waiting.__enter__()
    clock[0] += 120
    assert nodes.silent() == ["a"]
    nodes.restart(["a"])  # released: from here it is watched
    clock[0] += SILENT_AFTER - 1
    assert nodes.silent() == []
    clock[0] += 2
    assert nodes.silent() == ["a"]


def test_a_call_held_at_the_barrier_is_no_silence_until_its_node_is_released(clock):
    """Sessions wait at a barrier dbio holds on purpose while the other nodes are watched (a node frozen before
    the start is found): the held calls count only from their node's release, and a call held there that
    returns after the release is counted once."""
    nodes = Liveness(clock)
    held = nodes.asking("a", held=True)
    held.__enter__()
    clock[0] += 60
    assert nodes.silent() == []  # held on purpose, nothing else waited on a
    with nodes.asking("b"):  # b's control connection does not answer
        clock[0] += SILENT_AFTER + 1
        assert nodes.silent() == ["b"]
    nodes.restart(["a"])
    clock[0] += SILENT_AFTER - 1
    assert nodes.silent() == []
    clock[0] += 2
    assert nodes.silent() == ["a"]
    held.__exit__(None, None, None)  # its first slice answered
    assert nodes.silent() == [] and nodes.waiting["a"] == 0 and nodes.held.get("a", 0) == 0
    with nodes.asking("a", held=True):  # a barrier call after the release waits as any other
        clock[0] += SILENT_AFTER + 1
        assert nodes.silent() == ["a"]
    assert nodes.waiting["a"] == 0


def test_a_reading_s_time_is_a_node_still_read():
    reading = {"nodes": {"a": {"t": 100.0}, "b": {"t": 130.0}}, "lost": ["a"]}  # a's entry: its last reading
    assert reading_time(reading) == 130.0
    assert reading_time({"nodes": {"a": {"t": 100.0}, "b": {"t": 130.2}}}) == 100.0  # the first node's
    assert reading_time({"nodes": {"a": {"t": 100.0}, "b": {"t": 95.0}}, "lost": ["a", "b"]}) == 100.0
    total = normalized(reading, lambda name, raw: {**raw, "reads": 1.0})["engine"]
    assert total["t"] == 130.0 and total["reads"] == 2.0  # the total of both, at the time it was read
