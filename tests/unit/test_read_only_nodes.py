"""Several nodes: weights, read-only nodes (hot standbys), a start agreed in advance, on the fake engine
and as pure functions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dbio import report, result_records
from dbio import result as results
from dbio.jobs import run as run_job
from dbio.config import Sources, load_config
from dbio.engines.postgres.workload import control_json
from dbio.errors import ConfigErrors, UsageError
from dbio.run import agreed_start, session_placement
from dbio.run.nodes import Node, role_of
from dbio.run.plan import make_plan
from dbio.ui import UI
from tests import fake_engine
from tests.virtual_time import VirtualTime
from tests.fake_engine import FakeEngine
from dbio.result_records import of


def _config(tmp_path: Path, **cli):
    options = {"schemas": 1, "threads_per_schema": 3, "scale": 2000, "run_time": 3, "warmup": 1,
               "results_dir": str(tmp_path / "results"), "allow_cached": True, "work_unit": 8, **cli}
    return load_config(Sources(env={}, cli=options, cwd=tmp_path))


# -- dealing (pure) --------------------------------------------------------------------------------
def test_equal_weights_deal_sessions_in_turn_like_slob_s_rotor():
    assert session_placement.deal([1, 1, 1], 7) == [0, 1, 2, 0, 1, 2, 0]
    assert session_placement.deal([2, 2], 3) == [0, 1, 0]


def test_weights_give_each_node_its_share_by_largest_remainder():
    assert session_placement.shares([3, 1], 8) == [6, 2]
    assert session_placement.shares([1, 1, 1], 4) == [2, 1, 1]  # ties go to the earlier node
    assert session_placement.shares([2, 1], 5) == [3, 2]  # 3.33 / 1.67: the larger remainder gets the last one
    where = session_placement.deal([3, 1], 8)
    assert where.count(0) == 6 and where.count(1) == 2
    assert where[:4] == [0, 0, 1, 0]  # spread over the rotation, not all of one node first


def test_session_ranges_read_as_people_write_them():
    assert session_placement.ranges([1, 2, 3, 5, 7, 8]) == "1-3, 5, 7-8"
    assert session_placement.ranges([4]) == "4"
    assert session_placement.ranges([]) == ""


# -- agreed start (pure) ---------------------------------------------------------------------------
def test_a_read_only_node_s_control_has_no_update_and_the_agreed_instants():
    control = agreed_start.read_only_control({"update_pct": 20, "work_unit": 8}, 7, start=100.0, warmup=2.0,
                                             run_time=5.0)
    assert control == {"update_pct": 0, "work_unit": 8, "run_id": 7, "started_at": 100.0, "window_open": 102.0,
                       "deadline": 107.0}
    assert agreed_start.read_only_control({}, 7, start=100.0, warmup=0.0, run_time=0)["deadline"] is None
    row = json.loads(control_json(control))  # as the PL/pgSQL loop reads it into a run_control row
    assert row["started_at"] == "1970-01-01T00:01:40+00:00" and row["deadline"] == "1970-01-01T00:01:47+00:00"
    assert row["update_pct"] == 0


def test_a_clock_offset_comes_from_the_shortest_round_trip():
    offset, uncertainty = agreed_start.clock_offset([(10.0, 10.6, 11.0), (20.0, 20.3, 20.2)])
    assert offset == pytest.approx(0.2) and uncertainty == pytest.approx(0.1)
    assert agreed_start.clock_offset([]) is None


def test_a_node_starts_at_the_agreed_instant_on_its_own_clock_unless_released_late():
    ahead = agreed_start.node_start(100.0, 0.002, released=99.0)  # its clock 2 ms ahead: it starts 2 ms early
    assert ahead["start_skew_s"] == pytest.approx(-0.002) and ahead["released_s"] == pytest.approx(-1.0)
    late = agreed_start.node_start(100.0, 0.0, released=100.3)
    assert late["start_skew_s"] == pytest.approx(0.3)
    assert agreed_start.node_start(100.0, None, released=99.0)["start_skew_s"] is None
    assert agreed_start.skew_spread([ahead, late]) == pytest.approx(0.302)
    assert agreed_start.skew_spread([ahead, {"start_skew_s": None}]) is None


# -- configuration -----------------------------------------------------------------------------------
def test_nodes_in_dbio_toml_give_dsns_names_and_weights(tmp_path):
    (tmp_path / "dbio.toml").write_text('[[nodes]]\ndsn = "host=a"\nname = "east"\nweight = 3\n'
                                        '[[nodes]]\ndsn = "host=b"\nname = "west"\nweight = 1\n')
    config = load_config(Sources(env={}, cli={}, cwd=tmp_path))
    assert config.connection.dsns == ("host=a", "host=b")
    assert config.connection.node_names == ("east", "west")
    assert run_job.node_weights(config, 2) == [3.0, 1.0]
    assert run_job.node_names(config, 2) == ["east", "west"]


def test_weights_on_the_command_line_are_one_per_dsn(tmp_path):
    config = load_config(Sources(env={}, cli={"dsn": ["host=a", "host=b"], "weights": ["2,1"]}, cwd=tmp_path))
    assert run_job.node_weights(config, 2) == [2.0, 1.0]
    assert run_job.node_names(config, 2) == ["node1", "node2"]
    assert run_job.node_names(config, 2, ["primary", "standby1"]) == ["primary", "standby1"]  # members' own
    assert run_job.node_names(config, 2, ["primary", None]) == ["node1", "node2"]
    with pytest.raises(ConfigErrors) as caught:
        load_config(Sources(env={}, cli={"dsn": ["host=a", "host=b"], "weights": ["2"]}, cwd=tmp_path))
    assert "gives 1 values for 2 --dsn node(s)" in str(caught.value)
    with pytest.raises(ConfigErrors) as caught:
        load_config(Sources(env={}, cli={"dsn": ["host=a", "host=b"], "weights": ["2,-1"]}, cwd=tmp_path))
    assert "not a positive number" in str(caught.value)
    with pytest.raises(ConfigErrors):
        load_config(Sources(env={}, cli={"dsn": ["host=a", "host=b"], "node_names": ["x,x"]}, cwd=tmp_path))


# -- a run with a read-only node (fake engine) -----------------------------------------------------
def _node(name: str, engine: FakeEngine, weight: float = 1.0) -> Node:
    conn = engine.connect("fake:", application_name="test")
    info = engine.probe(conn)
    engine.close(conn)
    return Node(name, engine, "fake:", info, role=role_of(info), weight=weight)


def test_updates_with_only_read_only_nodes_are_refused_before_anything(tmp_path):
    config = _config(tmp_path, update_pct=20)
    info = _node("s", FakeEngine(read_only=True)).info
    with pytest.raises(UsageError) as caught:
        run_job.check_writable(config, [info, info])
    assert "all 2 servers are read-only" in caught.value.message and "update_pct = 0" in caught.value.hint
    run_job.check_writable(_config(tmp_path, update_pct=0), [info])  # reading only: fine
    run_job.check_writable(config, [info, _node("p", FakeEngine()).info])  # one writable node: fine


def test_a_read_only_node_runs_no_update_and_starts_with_the_others(tmp_path, short_start_lead):
    config = _config(tmp_path, threads_per_schema=6, update_pct=25)
    clock = VirtualTime()  # its timeline exact, in milliseconds of wall time (dbio/run/clock.py)
    primary, standby = FakeEngine(time=clock), FakeEngine(read_only=True, clock_offset=0.004, time=clock)
    nodes = [_node("p", primary, weight=2), _node("s", standby, weight=1)]
    assert [n.role for n in nodes] == ["primary", "standby"]
    outcome = run_job.measure(nodes, config, UI(quiet=True), run_job.run_directory(config),
                                  make_plan(config.workload, 1), {}, {"data_directory": None, "wal": None},
                                  clock=clock)
    doc = results.read(outcome.directory)
    assert doc["status"] == "complete", doc["status_reason"]
    sessions = {n["name"]: n["sessions"] for n in doc["nodes"]}
    assert sessions["p"]["ranges"] == "1, 3-4, 6" and sessions["s"]["ranges"] == "2, 5"  # 2:1, interleaved
    assert sessions["s"]["update_capable"] is False
    assert all(s["updates"] == 0 for s in doc["sessions"] if s["node"] == "s")
    assert all(s["updates"] > 0 for s in doc["sessions"] if s["node"] == "p")
    assert doc["cluster"]["update_capable_sessions"] == 4 and doc["cluster"]["read_only_nodes"] == ["s"]
    assert doc["cluster"]["start_agreed"] == "nodes"
    starts = {n["name"]: n["start"] for n in doc["nodes"]}
    assert starts["s"]["clock_offset_s"] == pytest.approx(0.004, abs=0.003)
    assert starts["p"]["released_s"] < 0  # barriers open before the agreed start
    assert not standby.server.runs and not standby.server.connections  # no run row was ever made there
    figures = {n["name"]: n["figures"]["load_profile"] for n in doc["nodes"]}
    assert figures["s"]["updates_per_s"] == 0
    assert figures["s"]["statements_per_s"] == pytest.approx(2 * fake_engine.ITERATIONS_PER_SECOND, rel=0.1)
    text = report.render(of(doc), "text")
    assert "standby" in text
    # a section per node, as AWR's instance reports beside the global one, in every format
    assert "\nNode p (primary)\n" in text and "\nNode s (standby)\n" in text
    own = text[text.index("\nNode s (standby)\n"):]
    assert "UPDATEs/s" in own and "read-only: its sessions ran the loop without UPDATEs" in own
    for form in report.FORMATS:
        assert "Node s (standby)" in report.render(of(doc), form)


# -- a standby's replication (PostgreSQL's raw snapshot to neutral counters, pure) -------------------
def test_a_standby_s_snapshot_reads_its_replication_and_normalizes_to_gauges():
    from dbio.engines import counters
    from dbio.engines.postgres import stats

    assert "pg_last_wal_replay_lsn" in stats.snapshot_sql(180000, None, True)
    assert "pg_last_wal_replay_lsn" not in stats.snapshot_sql(180000, None, False)  # never asked of a primary
    raw = {"t": 1.0, "database": {}, "wal": {}, "writers": {}, "io": [],
           "others": {"active": 0, "names": []},
           "replication": {"received_bytes": 5 << 20, "replayed_bytes": 4 << 20, "replay_lag_seconds": 0.25}}
    out = stats.normalize(raw)
    assert counters.problems(out) == []
    assert out["replication"] == {"wal_received_bytes": float(5 << 20)}
    assert out["gauges"]["replay_lag_bytes"] == float(1 << 20) and out["gauges"]["replay_lag_seconds"] == 0.25
    assert out["gauges"]["other_sessions_active"] == 0
    caught_up = stats.normalize({**raw, "replication": {"received_bytes": 7, "replayed_bytes": 7,
                                                        "replay_lag_seconds": 0}})
    assert caught_up["gauges"]["replay_lag_bytes"] == 0
    assert "replication" not in stats.normalize({k: v for k, v in raw.items() if k != "replication"})


# -- verdicts per node and the Nodes section (pure) ----------------------------------------------------
def _two_nodes(standby_figures: dict) -> dict:
    primary = {"window_seconds": 5.0, "validity": {"blocks_read_per_row": 0.98}}
    return {"status": "complete", "figures": {"window_seconds": 5.0},
            "cluster": {"read_only_nodes": ["s"], "update_capable_sessions": 1, "start_agreed": "nodes",
                        "start_skew_seconds": 0.0012},
            "sessions": [{"node": "p"}, {"node": "s"}],
            "nodes": [{"name": "p", "role": "primary", "figures": primary, "sessions": {"ranges": "1"},
                       "start": {"clock_offset_s": 0.0001}},
                      {"name": "s", "role": "standby", "figures": {"window_seconds": 5.0, **standby_figures},
                       "sessions": {"ranges": "2", "update_capable": False}, "weight": 2.0,
                       "start": {"clock_offset_s": -0.0002}}]}


def test_a_lagging_standby_and_a_node_reading_from_cache_are_named():
    from dbio.report import node_sections, node_verdicts, verdict, verdict_rules

    doc = _two_nodes({"validity": {"blocks_read_per_row": 0.1},
                      "replication": {"wal_received_mib_per_s": 1.0, "replay_lag_mib_max": 2.0,
                                      "replay_lag_seconds_max": 3.5}})
    found = {f.code: f for f in verdict.findings(of(doc))}
    assert found["node_rows_from_cache"].message.startswith("s: only 10% of the rows")
    assert "s (standby) fell behind its primary by up to 3.5 s and 2.0 MiB" in found["node_lagging_standby"].message
    assert not any(f.message.startswith("p:") for f in found.values())
    kept_up = _two_nodes({"replication": {"replay_lag_mib_max": 0.5, "replay_lag_seconds_max": 0.2}})
    assert node_verdicts.lagging(result_records.Node.of(kept_up["nodes"][1])) is None
    section = node_sections.section(of(doc))
    notes = " ".join(section["tables"][0]["notes"])
    assert "s: - ; sessions 2" not in notes and "sessions 2 (weight 2); read-only" in notes
    assert "UPDATE-capable sessions: 1 of 2" in notes and "start skew across the nodes +1.2 ms" in notes
    replication = section["tables"][1]
    assert replication["rows"] == [["s", 1.0, 2.0, 3.5, "lagging"]]
    assert node_verdicts.node_findings(of({**doc, "nodes": doc["nodes"][:1]}), tuple(
        rule.judge for rule in verdict_rules.RULES if rule.applies == verdict_rules.NODE), verdict.Finding) == []


# -- a node whose server stops mid-run (fake engine) ----------------------------------------------------
def test_a_node_that_stops_mid_run_is_reported_and_the_others_finish_the_window(tmp_path, short_start_lead):
    config = _config(tmp_path, threads_per_schema=4, run_time=4)
    clock = VirtualTime()
    engines = [FakeEngine(time=clock), FakeEngine(read_only=True, time=clock)]
    nodes = [_node("p", engines[0]), _node("s", engines[1])]
    starts = engines[0].server.starts  # 2 s into the 4 s window: the start (the primary's release) + 1 s warm-up + 2 s
    engines[1].server.stop(at=lambda: starts[0] + 3.0 if starts else None)
    outcome = run_job.measure(nodes, config, UI(quiet=True), run_job.run_directory(config),
                                  make_plan(config.workload, 1), {}, {"data_directory": None, "wal": None},
                                  clock=clock)
    doc = results.read(outcome.directory)
    assert doc["status"] == "complete", doc["status_reason"]
    by_node = {n["name"]: n for n in doc["nodes"]}
    stopped = by_node["s"]["stopped"]
    assert stopped["since_start"] > 0 and "the fake server stopped" in stopped["reason"]
    window = doc["figures"]["window_seconds"]
    assert window == pytest.approx(4.0, abs=0.5)  # the other node finished the window
    covers = stopped["figures_cover_seconds"]
    assert covers is not None and 0 < covers < window - 0.5
    assert by_node["s"]["figures"]["window_seconds"] == covers
    assert by_node["p"]["figures"]["window_seconds"] == pytest.approx(window)
    # its series ends at its stop (no rows of zeros from its last reading held since)
    assert max(r["since_start"] for r in by_node["s"]["series"]) < stopped["since_start"] + 1.0
    assert max(r["since_start"] for r in by_node["p"]["series"]) > stopped["since_start"] + 1.0
    assert "stopped" not in by_node["p"]
    assert all(s["state"] == "failed" for s in doc["sessions"] if s["node"] == "s")
    assert all(s["state"] == "done" for s in doc["sessions"] if s["node"] == "p")
    assert doc["cluster"]["stopped_nodes"] == ["s"] and doc["cluster"]["partial"][0].startswith("totals")
    # the stopped node's reads/s are over the part it covered, near its full rate (not diluted by the window)
    per_node = 2 * fake_engine.ITERATIONS_PER_SECOND * 8
    assert by_node["s"]["figures"]["load_profile"]["physical_reads_per_s"] == pytest.approx(per_node, rel=0.25)
    assert by_node["p"]["figures"]["load_profile"]["physical_reads_per_s"] == pytest.approx(per_node, rel=0.1)
    text = report.render(of(doc), "text")
    assert "s stopped +" in text and "totals are partial" in text
    assert not engines[0].server.runs and not engines[0].server.connections


def test_a_standby_without_this_dbio_s_loop_is_refused_with_the_fix(tmp_path, monkeypatch):
    from dbio.errors import DbioError
    from dbio.run import nodes as node_module

    monkeypatch.setattr(node_module, "WORKLOAD_WAIT", 0.3)  # on the machine's clock: this file's run in real time
    config = _config(tmp_path)
    standby = FakeEngine(read_only=True)
    standby.server.workload_replicated = False
    with pytest.raises(DbioError) as caught:
        run_job.measure([_node("p", FakeEngine()), _node("s", standby)], config, UI(quiet=True),
                            run_job.run_directory(config), make_plan(config.workload, 1), {},
                            {"data_directory": None, "wal": None})
    assert "does not have this dbio's work loop" in caught.value.message and "primary" in caught.value.hint
    assert not (tmp_path / "results").exists() or not list((tmp_path / "results").iterdir())  # nothing left


def test_a_node_lost_before_the_start_or_in_the_warm_up_is_said_in_words():
    """It read "node2 stopped +-1.0 s after the start" for a node frozen before the start."""
    from dbio.report.node_verdicts import stopped

    def node(since):
        return result_records.Node.of({"name": "node2", "stopped": {"since_start": since, "reason": "frozen",
                                                                    "figures_cover_seconds": None}})

    assert result_records.of({"config": {"workload": {"warmup": 2.0}}}).config.warmup == 2.0
    assert result_records.of({}).config.warmup is None
    assert stopped(node(-1.0), 2.0).startswith("node2 stopped before the start (frozen)")
    assert stopped(node(0.4), 2.0).startswith("node2 stopped during the warm-up")
    assert stopped(node(3.25), 2.0).startswith("node2 stopped +3.2 s after the start")
    assert stopped(node(0.4), None).startswith("node2 stopped +0.4 s after the start")  # no warm-up known
    assert stopped(node(None), 2.0).startswith("node2 stopped during the run")
