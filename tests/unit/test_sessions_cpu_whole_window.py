"""The sessions' CPU is a figure of the whole window or none: a session that ended or failed inside it took its
reads into the window's count but not its CPU (a PostgreSQL backend that ended is gone from the end's reading),
or left a thread that went on counting another client's work (MariaDB's thread cache keeps it)."""

from dbio.run import result_figures
from dbio.run.sessions import Session
from dbio.stats import figures
from dbio.stats.counters import delta


def cpu(window_begin: dict, window_end: dict, **extra) -> dict:
    return figures._cpu({"cores": 2, "os_begin": {"session_cpu": window_begin, **extra.get("begin", {})},
                         "os_end": {"session_cpu": window_end, **extra.get("end", {})}},
                        {"data": {"reads": 10_000}}, 10.0)


def test_every_session_at_both_ends_gives_the_figure():
    out = cpu({"11": 1.0, "12": 2.0}, {"11": 1.3, "12": 2.2})
    assert round(out["db_cpu_seconds"], 6) == 0.5 and round(out["db_cpu_us_per_read"], 3) == 50.0


def test_a_session_gone_at_the_end_leaves_no_figure_rather_than_a_cheaper_read():
    out = cpu({"11": 1.0, "12": 2.0}, {"11": 1.3})
    assert out["db_cpu_seconds"] is None and out["db_cpu_us_per_read"] is None
    waited = cpu({"11": 1.0}, {"11": 1.1}, begin={"session_run_delay": {"11": 0.1, "12": 0.1}},
                 end={"session_run_delay": {"11": 0.2}})
    assert waited["cpu_wait_us_per_read"] is None


def session(number: int, pid: int, state: str = "done", failed_at: float | None = None) -> Session:
    return Session(number, 1, None, "only", pid=pid, state=state, failed_at=failed_at)


def test_a_session_that_failed_before_the_end_reading_is_left_out_of_it():
    end = {"engine": {}, "os": {"t": 100.0, "session_cpu": {"11": 5.0, "12": 9.0},
                                "session_run_delay": {"11": 0.1, "12": 0.2}, "stat": {"user": 1}}}
    # 12 failed at 95 s; its thread (MariaDB's thread cache) still answers to its id at 100 s
    trimmed = result_figures.without_ended_sessions(end, [session(1, 11), session(2, 12, "failed", 95.0)])
    assert trimmed["os"]["session_cpu"] == {"11": 5.0} and trimmed["os"]["session_run_delay"] == {"11": 0.1}
    assert trimmed["os"]["stat"] == {"user": 1} and end["os"]["session_cpu"] == {"11": 5.0, "12": 9.0}
    # one that failed after the window's end reading was whole in it
    assert result_figures.without_ended_sessions(end, [session(1, 11), session(2, 12, "failed", 101.0)]) is end
    assert result_figures.without_ended_sessions(None, [session(2, 12, "failed", 95.0)]) is None


def test_the_engines_count_of_the_runs_own_io_is_left_out_once_a_session_of_its_node_failed():
    """performance_schema (PostgreSQL: the per-backend statistics) forgets an ended session's reads: the run's own
    reads at the end would lack them, and other sessions seem to have done them."""
    node = {"t": 100.0, "client": {"reads": 900.0}, "sessions": {"reads": 300.0}}
    other = {"t": 100.0, "client": {"reads": 50.0}, "sessions": {"reads": 50.0}}
    end = {"engine": {**node, "client": {"reads": 950.0}, "sessions": {"reads": 350.0}},
           "nodes": {"only": node, "two": other}, "os": None}
    trimmed = result_figures.without_ended_sessions(end, [session(1, 11), session(2, 12, "failed", 95.0)])
    assert "sessions" not in trimmed["engine"] and trimmed["engine"]["client"] == {"reads": 950.0}
    assert "sessions" not in trimmed["nodes"]["only"] and trimmed["nodes"]["two"] is other
    assert figures._other_sessions(delta({"client": {"reads": 0.0}, "sessions": {"reads": 0.0}},
                                         trimmed["engine"])) is None
    assert end["engine"]["sessions"] == {"reads": 350.0}  # the reading itself is left as it was
    # failed after the end reading (server clock): its reads are in it
    assert result_figures.without_ended_sessions(end, [session(2, 12, "failed", 101.0)]) is end
