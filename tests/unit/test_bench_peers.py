"""bench_peers' pure parts: a window's figures from two readings, the rotated order, ratios inside a round."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import bench_peers  # noqa: E402


def _reading(at, busy, total, blocks, own):
    return {"at": at, "host_busy": busy, "host_all": total, "io_ops": blocks, "io_blocks": blocks,
            "dev_ops": blocks, "dev_blocks": blocks, "own": own}


def test_window_counts_processes_that_started_inside_it():
    begin = _reading(10.0, 100.0, 200.0, 5, {1: (2.0, 8192 * 10)})
    end = _reading(20.0, 110.0, 220.0, 9, {1: (3.0, 8192 * 30), 2: (0.5, 8192 * 4)})
    w = bench_peers.window(begin, end)
    assert w["seconds"] == 10.0
    assert w["own_cpu_s"] == 1.5
    assert w["own_blocks"] == 24
    assert w["host_busy_pct"] == 50.0
    assert w["io_blocks"] == 4


def test_order_rotates_the_tools_each_round():
    tools = ["a", "b", "c"]
    assert bench_peers.order(tools, [1, 8], 1) == [("b", 1), ("c", 1), ("a", 1), ("b", 8), ("c", 8), ("a", 8)]
    assert bench_peers.order(tools, [1], 3) == [("a", 1), ("b", 1), ("c", 1)]


def test_ratios_only_inside_a_round():
    rows = [{"tool": bench_peers.BASELINE, "sessions": 1, "round": 0, "x": 100.0},
            {"tool": "pgio-7", "sessions": 1, "round": 0, "x": 50.0},
            {"tool": "pgio-7", "sessions": 1, "round": 1, "x": 80.0}]  # no baseline in round 1: no ratio
    assert bench_peers.ratios(rows, "x") == {(bench_peers.BASELINE, 1, 0): 1.0, ("pgio-7", 1, 0): 0.5}
