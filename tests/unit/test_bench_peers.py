"""bench_peers' pure parts: a window's figures from two readings, the rotated order, ratios inside a round."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import bench_peers  # noqa: E402


def _reading(at, busy, total, blocks, own):
    return {"at": at, "host_busy": busy, "host_all": total, "io_ops": blocks, "io_blocks": blocks,
            "dev_ops": blocks, "dev_blocks": blocks, "own": own}


def test_window_counts_processes_that_started_inside_it():
    begin = _reading(10.0, 100.0, 200.0, 5, {1: (2.0, 8192 * 10, "client")})
    end = _reading(20.0, 110.0, 220.0, 9, {1: (3.0, 8192 * 30, "client"), 2: (0.5, 8192 * 4, "sessions")})
    w = bench_peers.window(begin, end)
    assert w["seconds"] == 10.0
    assert w["own_cpu_s"] == 1.5
    assert w["own_blocks"] == 24
    assert w["host_busy_pct"] == 50.0
    assert w["io_blocks"] == 4


def test_window_splits_cpu_and_reads_by_part():
    begin = _reading(0.0, 0.0, 10.0, 0, {1: (1.0, 0, "client"), 2: (4.0, 8192 * 2, "sessions"),
                                         3: (1.0, 0, "io_workers")})
    # pid 4 started inside the window, pid 3 became a session's by the end (the end's part counts)
    end = _reading(5.0, 5.0, 20.0, 0, {1: (1.25, 0, "client"), 2: (6.0, 8192 * 12, "sessions"),
                                       3: (1.5, 8192 * 5, "io_workers"), 4: (0.5, 0, "helpers")})
    w = bench_peers.window(begin, end)
    assert w["cpu_s"] == {"client": 0.25, "sessions": 2.0, "io_workers": 0.5, "helpers": 0.5, "server_other": 0.0}
    assert w["blocks"] == {"client": 0, "sessions": 10, "io_workers": 5, "helpers": 0, "server_other": 0}
    assert w["own_blocks"] == 15


def test_part_of_names_each_server_process_for_its_tool():
    part = bench_peers.part_of
    assert part("dbio-index-8", "client backend", "dbio:4242:3", "CALL dbio.slice(...)") == "sessions"
    assert part("dbio-index-8", "client backend", "dbio:monitor:4242", "SELECT 1") == "helpers"
    assert part("dbio-bitmap-255", "client backend", "dbio:probe:4242", "") == "helpers"
    assert part("dbio-bitmap-255", "client backend", "dbio:settle", "") == "helpers"
    assert part("dbio-bitmap-255", "io worker", "", "") == "io_workers"
    assert part("pgio-7", "client backend", "psql", "SELECT * FROM mypgio('pgio1', 0, 22, 1, 7, 8);") == "sessions"
    assert part("pgio-7", "client backend", "psql", "select blks_read from pg_stat_database") == "helpers"
    assert part("pgbench-8row", "client backend", "pgbench", "SELECT count(c2) ...") == "sessions"
    assert part("pgbench-8row", "client backend", "bench:peers", "SELECT ...") == "server_other"
    assert part("pgbench-8row", "checkpointer", "", "") == "server_other"


def test_pair_ratios_are_dbio_over_pgio_inside_one_round():
    def row(tool, rnd, rate, own, host, engine):
        return {"tool": tool, "sessions": 2, "round": rnd, "reads": 1000, "reads_per_s": rate,
                "own_cpu_us_per_read": own, "host_cpu_us_per_read": host,
                "us_per_read": {"sessions": engine, "io_workers": 0.0}}
    rows = [row("dbio-index-8", 0, 130.0, 10.0, 20.0, 8.0), row("pgio-7", 0, 100.0, 15.0, 30.0, 12.0),
            row("dbio-index-8", 1, 100.0, 10.0, 20.0, 8.0)]  # no pgio in round 1: no ratio
    got = bench_peers.pair_ratios(rows)
    assert list(got) == [("dbio-index-8", 2)]
    assert got[("dbio-index-8", 2)]["rounds"] == [0]
    assert got[("dbio-index-8", 2)]["reads_per_s"] == [1.3]
    assert got[("dbio-index-8", 2)]["per_own_cpu"] == [1.5]
    assert got[("dbio-index-8", 2)]["per_host_cpu"] == [1.5]
    assert got[("dbio-index-8", 2)]["per_engine_cpu"] == [1.5]


def test_order_rotates_the_tools_each_round():
    tools = ["a", "b", "c"]
    assert bench_peers.order(tools, [1, 8], 1) == [("b", 1), ("c", 1), ("a", 1), ("b", 8), ("c", 8), ("a", 8)]
    assert bench_peers.order(tools, [1], 3) == [("a", 1), ("b", 1), ("c", 1)]


def test_ratios_only_inside_a_round():
    rows = [{"tool": bench_peers.BASELINE, "sessions": 1, "round": 0, "x": 100.0},
            {"tool": "pgio-7", "sessions": 1, "round": 0, "x": 50.0},
            {"tool": "pgio-7", "sessions": 1, "round": 1, "x": 80.0}]  # no baseline in round 1: no ratio
    assert bench_peers.ratios(rows, "x") == {(bench_peers.BASELINE, 1, 0): 1.0, ("pgio-7", 1, 0): 0.5}
