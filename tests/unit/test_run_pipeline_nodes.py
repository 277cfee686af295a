"""The run pipeline on fake engines (tests/fake_engine.py) over several nodes or hosts: each node's figures and
their total, a start agreed in advance, runs of several hosts merged, a node that stops answering.

Apart from tests/unit/test_run_pipeline.py (one node). The runs are in virtual time (dbio/run/clock.py: their
timelines exact, in milliseconds of wall time) but the start agreed in advance, timed on the machine's clock.
"""

from __future__ import annotations

import re
import shutil
from typing import Any

import pytest

from dbio import report
from dbio import result as results
from dbio.jobs import run as run_job
from dbio.errors import UsageError
from tests.virtual_time import VirtualTime
from dbio.run.nodes import Node
from dbio.run.plan import make_plan
from dbio.ui import UI
from tests import fake_engine
from tests.fake_engine import FakeEngine
from tests.lateness import Lateness
from tests.fake_runs import READS_PER_S, WORK_UNIT
from tests.fake_runs import run_config as _config
from dbio.result_records import of


def _two_nodes_measured(config):
    """A run over two fake servers, a and b, on one virtual clock: the nodes and the outcome."""
    nodes, clock = [], VirtualTime()
    for name in ("a", "b"):
        engine = FakeEngine(version=f"Fake 1.0 {name}", time=clock)
        conn = engine.connect("fake:", application_name="test")
        nodes.append(Node(name, engine, "fake:", engine.probe(conn)))
        engine.close(conn)
    return nodes, run_job.measure(nodes, config, UI(quiet=True), run_job.run_directory(config),
                                  make_plan(config.workload, 1), {}, {"data_directory": None, "wal": None},
                                  clock=clock)


def test_a_run_over_two_nodes_has_each_node_s_figures_and_their_total(tmp_path, short_start_lead):
    config = _config(tmp_path, threads_per_schema=4)
    nodes, outcome = _two_nodes_measured(config)
    document = results.read(outcome.directory)
    assert document["status"] == "complete", document["status_reason"]
    assert document["format_version"] == results.FORMAT_VERSION
    assert [s["node"] for s in document["sessions"]] == ["a", "b", "a", "b"]  # dealt in turn
    per_node = 2 * fake_engine.ITERATIONS_PER_SECOND * WORK_UNIT
    figures = {n["name"]: n["figures"]["load_profile"]["physical_reads_per_s"] for n in document["nodes"]}
    assert figures == {"a": pytest.approx(per_node, rel=0.1), "b": pytest.approx(per_node, rel=0.1)}
    total = document["figures"]["load_profile"]["physical_reads_per_s"]
    assert total == pytest.approx(2 * per_node, rel=0.1)
    for node in document["nodes"]:
        assert len([r for r in node["series"] if r.get("phase") == "measured"]) >= 3
        assert node["figures"]["load_profile"]["statements_per_s"] == pytest.approx(
            2 * fake_engine.ITERATIONS_PER_SECOND, rel=0.1)
    # one start for both nodes (the first node's release fixes it), and nothing left on either
    assert nodes[0].engine.server.starts == nodes[1].engine.server.starts and nodes[0].engine.server.starts
    assert all(not n.engine.server.runs and not n.engine.server.connections for n in nodes)
    text = report.render(of(document), "text")
    nodes = text[text.index("\nNodes\n"):]
    rows = {line.split()[0]: line.split() for line in nodes.splitlines()
            if line.split() and line.split()[0] in ("a", "b", "total")}
    assert set(rows) == {"a", "b", "total"}
    assert rows["a"][1:3] == ["primary", "2"] and rows["total"][1:3] == ["-", "4"]
    assert f"{figures['a']:,.0f}" == rows["a"][3] and f"{total:,.0f}" == rows["total"][3]
    for node in document["nodes"]:  # each node's own wait samples: its 2 sessions, half on CPU, half reading
        counts = node["waits"]["counts"]
        assert set(counts) == {"CPU", "IO:DataFileRead"} and counts["CPU"] == counts["IO:DataFileRead"]
    assert rows["a"][-2:] == ["IO:DataFileRead", "50%"]
    for form in report.FORMATS:
        report.render(of(document), form)


def test_each_sample_carries_each_node_s_own_work_point(tmp_path, short_start_lead):
    """With several nodes a sample holds each node's own work point beside the run's, and a node's series is
    measured on it: one node's frozen session (--event stall@NODE) leaves the other's spans known."""
    import json

    config = _config(tmp_path, threads_per_schema=2)
    _, outcome = _two_nodes_measured(config)
    records = [json.loads(line) for line in (outcome.directory / results.SAMPLES_FILE).read_text().splitlines()]
    measured = [r for r in records if r.get("phase") == "measured" and not r.get("missing") and "asked" in r]
    assert measured
    for record in measured:
        own = record["nodes_published"]
        assert set(own) == {"a", "b"}
        assert all(o["published_to"] is not None and o["published_to"] <= record["published_to"] for o in own.values())
        assert min(o["published_by_all"] for o in own.values()) == pytest.approx(record["published_by_all"])
    document = results.read(outcome.directory)
    for node in document["nodes"]:
        assert all(r.get("work_to") is not None for r in node["series"] if r.get("phase") == "measured")


def test_a_start_agreed_in_advance_opens_the_window_at_that_instant(tmp_path, short_start_lead):
    """--start-at: runs launched on several hosts each open their window at the same instant. On the machine's
    clock: the release's lateness is real time's."""
    import datetime as dt
    import time as clock

    window_at = clock.time() + 2.0  # start in 1 s (1 s warm-up): time to connect before the barriers open
    iso = dt.datetime.fromtimestamp(window_at, dt.timezone.utc).isoformat()
    config = _config(tmp_path, start_at=iso, warmup=1)
    assert config.run.start_at == pytest.approx(window_at)
    engine = FakeEngine()
    conn = engine.connect("fake:", application_name="test")
    nodes = [Node("a", engine, "fake:", engine.probe(conn))]
    engine.close(conn)
    with Lateness() as late:  # a loaded host wakes dbio's timers late: the bounds allow for what it just did
        outcome = run_job.measure(nodes, config, UI(quiet=True), run_job.run_directory(config),
                                      make_plan(config.workload, 1, config.run.start_at), {}, {})
    timeline = results.read(outcome.directory)["timeline"]
    assert outcome.status == "complete"
    assert engine.server.starts == [pytest.approx(window_at - 1.0, abs=1e-6)]  # the start: warm-up before it
    assert 0 <= timeline["released_late_seconds"] < late.allow(0.2), (timeline, late.worst)
    assert timeline["window_at"] == results.iso(window_at)
    opened = dt.datetime.fromisoformat(timeline["window_start"]).timestamp()
    assert opened == pytest.approx(window_at, abs=late.allow(0.25)), late.worst


def test_runs_of_two_hosts_at_one_agreed_start_merge_into_one_result(tmp_path, short_start_lead):
    """The many-hosts workflow on fake servers: two independent runs (as two hosts would launch
    them) with one --start-at measure the same seconds; dbio merge makes them one result."""
    import datetime as dt
    import threading
    import time as clock

    from dbio.commands import merge as merge_command

    window_at = clock.time() + 2.0  # start in 1 s (1 s warm-up): time to connect before the barriers open
    iso = dt.datetime.fromtimestamp(window_at, dt.timezone.utc).isoformat()
    outcomes: dict[str, Any] = {}

    def host(name: str, sessions: int) -> None:  # each host its own time, as two machines' clocks
        config = _config(tmp_path / name, start_at=iso, threads_per_schema=sessions, label=name)
        engine = FakeEngine(version=f"Fake 1.0 {name}", time=VirtualTime())
        conn = engine.connect("fake:", application_name="test")
        node = Node("node1", engine, "fake:", engine.probe(conn))
        engine.close(conn)
        outcomes[name] = run_job.measure([node], config, UI(quiet=True), run_job.run_directory(config),
                                             make_plan(config.workload, 1, config.run.start_at), {}, {},
                                             clock=engine.time)

    threads = [threading.Thread(target=host, args=(name, n)) for name, n in (("east", 1), ("west", 3))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    merged = merge_command.merge([outcomes["east"].directory, outcomes["west"].directory], None,
                                 tmp_path / "merged", None, UI(quiet=True))
    document = results.read(merged)
    assert [n["name"] for n in document["nodes"]] == ["east", "west"]
    east, west = (n["figures"]["load_profile"]["physical_reads_per_s"] for n in document["nodes"])
    assert west == pytest.approx(3 * east, rel=0.15)
    total = document["figures"]["load_profile"]["physical_reads_per_s"]
    assert total == pytest.approx(4 * fake_engine.ITERATIONS_PER_SECOND * WORK_UNIT, rel=0.1)
    assert total == pytest.approx(east + west, rel=0.02)
    assert document["timeline"]["overlap_seconds"] > 2.8  # 3 s windows that opened within a fraction of a second
    assert [s["node"] for s in document["sessions"]].count("west") == 3
    text = (merged / results.REPORT_FILE).read_text()
    assert "\nNodes\n" in text and "Merged    from 2 runs (east, west)" in text
    assert 0 <= document["timeline"]["start_skew_seconds"] < 0.5
    assert "their starts " in document["events"][0]["message"] and " s apart" in document["events"][0]["message"]
    # the same run twice, or a copy of it, would count its reads twice
    copy = tmp_path / "copy-of-east"
    shutil.copytree(outcomes["east"].directory, copy)
    for twice in ([outcomes["east"].directory, outcomes["east"].directory], [outcomes["east"].directory, copy]):
        with pytest.raises(UsageError, match=r"are the same run \(.*\): each would count its reads twice"):
            merge_command.merge(twice, ["a", "b"], tmp_path / "twice", None, UI(quiet=True))
    assert not (tmp_path / "twice").exists()


def test_runs_of_different_workloads_are_not_merged(tmp_path, short_start_lead):
    import datetime as dt
    import threading
    import time as clock

    from dbio.commands import merge as merge_command

    iso = dt.datetime.fromtimestamp(clock.time() + 2.0, dt.timezone.utc).isoformat()
    outcomes: dict[str, Any] = {}

    def host(name: str, update_pct: int) -> None:
        config = _config(tmp_path / name, start_at=iso, update_pct=update_pct, label=name)
        engine = FakeEngine(time=VirtualTime())
        conn = engine.connect("fake:", application_name="test")
        node = Node("node1", engine, "fake:", engine.probe(conn))
        engine.close(conn)
        outcomes[name] = run_job.measure([node], config, UI(quiet=True), run_job.run_directory(config),
                                             make_plan(config.workload, 1, config.run.start_at), {}, {},
                                             clock=engine.time)

    threads = [threading.Thread(target=host, args=args) for args in (("east", 20), ("west", 100))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    with pytest.raises(UsageError, match=r"ran different workloads \(update_pct 20 vs 100\)"):
        merge_command.merge([outcomes["east"].directory, outcomes["west"].directory], None, tmp_path / "m", None,
                            UI(quiet=True))
    assert not (tmp_path / "m").exists()


# -- a node that stops answering (frozen: SIGSTOP, a hung host) ------------------------------------
SILENT = 1.5  # liveness.SILENT_AFTER here: the fake answers in milliseconds, so 1.5 s of silence is a frozen node


def _measure_within(nodes: list[Node], config, seconds: float) -> Any:
    """measure() in a thread given `seconds` of wall time, in its nodes' time: a run that would hang for ever fails
    the test instead."""
    import threading

    done: dict[str, Any] = {}

    def measure() -> None:
        try:
            done["outcome"] = run_job.measure(nodes, config, UI(quiet=True), run_job.run_directory(config),
                                                  make_plan(config.workload, 1), {},
                                                  {"data_directory": None, "wal": None}, clock=nodes[0].engine.time)
        except BaseException as exc:  # noqa: BLE001 - the test reports it
            done["error"] = exc

    runner = threading.Thread(target=measure, daemon=True)
    runner.start()
    runner.join(seconds)
    assert not runner.is_alive(), f"the run had not ended {seconds:.0f} s after it began"
    if "error" in done:
        raise done["error"]
    return done["outcome"]


def _freeze_in_window(engine: FakeEngine, starts: list[float], after: float) -> dict[str, float]:
    """Freezes engine's server `after` seconds past the run's start (the first node's release), at that instant of
    its (virtual) time; the dict it returns holds when ("at", seconds since the start)."""
    engine.server.freeze(at=lambda: starts[0] + after if starts else None)
    return {"at": after}


@pytest.mark.parametrize("frozen_at, late", [(2.0, 0.0), (3.6, 0.0), (3.6, 0.3)])
def test_a_frozen_node_is_lost_within_seconds_and_the_others_finish_the_window(tmp_path, short_start_lead,
                                                                                  monkeypatch, frozen_at, late):
    """A node that stops answering (every call on it waits, as on a SIGSTOPped server) inside a 4 s window:
    the run ended at its deadline plus seconds (it waited for ever), the node is named lost with why, the
    other node's figures cover the window (and no more: not until the frozen node was lost), the frozen
    one's up to its last reading, the total counts each read once, and no stall is claimed for the total
    (the other node ran all along). Frozen at 3.6 s, it is lost after the deadline: the other node's end reading
    is taken at its end, even when its last slices answer late (late: seen in CI, a 10.57 s window for 4 s, the
    end reading begun with that node among the silent ones, then taken again at the loss)."""
    from dbio.run import liveness

    monkeypatch.setattr(liveness, "SILENT_AFTER", SILENT)
    config = _config(tmp_path, threads_per_schema=4, run_time=4, warmup=1)
    clock = VirtualTime()
    engines = [FakeEngine(time=clock), FakeEngine(read_only=True, time=clock)]
    nodes = []
    for name, engine in zip(("p", "s"), engines):
        conn = engine.connect("fake:", application_name="test")
        nodes.append(Node(name, engine, "fake:", engine.probe(conn)))
        engine.close(conn)
    engines[0].server.last_answer_late = late
    frozen = _freeze_in_window(engines[1], engines[0].server.starts, 1.0 + frozen_at)
    try:
        outcome = _measure_within(nodes, config, 30)
    finally:
        engines[1].server.thaw()
    doc = results.read(outcome.directory)
    ended = next(e["since_start"] for e in doc["events"] if e["kind"] == "end")  # it hung for ever
    assert ended < max(5.0, frozen["at"] + SILENT) + 1.5, (ended, frozen)
    assert doc["status"] == "complete", doc["status_reason"]
    by_node = {n["name"]: n for n in doc["nodes"]}
    stopped = by_node["s"]["stopped"]
    assert re.fullmatch(r"it answered nothing for 2 s: frozen, or unreachable", stopped["reason"]), stopped
    # when it last answered (the wait sampler asks every 0.5 s), found SILENT seconds later
    assert frozen["at"] - 0.6 < stopped["since_start"] < frozen["at"] + 0.05, (stopped, frozen)  # an answer under way
    lost_at = next(e for e in doc["events"] if e["kind"] == "node_lost")["since_start"]
    assert frozen["at"] + SILENT - 0.6 < lost_at < frozen["at"] + SILENT + 2.0, (lost_at, frozen)
    window = doc["figures"]["window_seconds"]
    assert window == pytest.approx(4.0 + late, abs=0.4), (doc["events"], frozen)
    assert by_node["p"]["figures"]["window_seconds"] == pytest.approx(window)
    covers = stopped["figures_cover_seconds"]
    assert covers is not None and frozen["at"] - 1.0 - 1.5 <= covers <= frozen["at"] - 1.0, (covers, frozen)
    per_node = 2 * fake_engine.ITERATIONS_PER_SECOND * WORK_UNIT
    assert by_node["p"]["figures"]["load_profile"]["physical_reads_per_s"] == pytest.approx(per_node, rel=0.1)
    assert by_node["s"]["figures"]["load_profile"]["physical_reads_per_s"] == pytest.approx(per_node, rel=0.25)
    # the total: each node's reads once, the frozen one's up to its last reading
    reads = {name: n["normalized"]["end"]["data"]["reads"] - n["normalized"]["begin"]["data"]["reads"]
             for name, n in by_node.items()}
    assert doc["normalized"]["end"]["data"]["reads"] - doc["normalized"]["begin"]["data"]["reads"] == \
        pytest.approx(reads["p"] + reads["s"])
    assert doc["stalls"] == []
    assert doc["cluster"]["stopped_nodes"] == ["s"] and doc["cluster"]["partial"]
    assert all(s["state"] == "done" for s in doc["sessions"] if s["node"] == "p")
    assert all(s["state"] == "failed" for s in doc["sessions"] if s["node"] == "s")
    assert not engines[0].server.runs and not engines[0].server.connections
    assert "s stopped +" in report.render(of(doc), "text")


def test_a_frozen_only_node_ends_the_run_at_its_deadline_with_a_failed_result(tmp_path, monkeypatch):
    """One node, frozen 2.2 s into a 4 s window: the run fails with why seconds later (it waited for ever), its
    figures end at its last reading, at the rate the node ran, and no stall outlasts the window they cover."""
    from dbio.run import liveness

    monkeypatch.setattr(liveness, "SILENT_AFTER", SILENT)
    config = _config(tmp_path, run_time=4, warmup=1)
    engine = FakeEngine(time=VirtualTime())
    conn = engine.connect("fake:", application_name="test")
    nodes = [Node("a", engine, "fake:", engine.probe(conn))]
    engine.close(conn)
    frozen = _freeze_in_window(engine, engine.server.starts, 1.0 + 2.2)
    try:
        outcome = _measure_within(nodes, config, 30)
    finally:
        engine.server.thaw()
    doc = results.read(outcome.directory)
    ended = next(e["since_start"] for e in doc["events"] if e["kind"] == "end")  # it hung for ever
    assert ended < frozen["at"] + SILENT + 1.5, (ended, frozen)
    assert doc["status"] == "failed"
    assert re.fullmatch(r"the server stopped at \+\d+\.\d s \(it answered nothing for 2 s: frozen, or unreachable\): "
                        "the figures end at its last reading", doc["status_reason"]), doc["status_reason"]
    window = doc["figures"]["window_seconds"]
    assert window is not None and frozen["at"] - 1.0 - 1.6 <= window <= frozen["at"] - 1.0, (window, frozen)
    assert doc["figures"]["load_profile"]["physical_reads_per_s"] == pytest.approx(READS_PER_S, rel=0.25)
    assert all(s["offset"] + s["seconds"] <= window + 1e-6 for s in doc["stalls"]), (doc["stalls"], window)
    for form in report.FORMATS:
        report.render(of(doc), form)


def test_each_node_s_probe_gives_its_own_single_reads_and_the_total_adds_them(tmp_path, short_start_lead):
    clock = VirtualTime()
    engines = [FakeEngine(time=clock), FakeEngine(time=clock)]
    nodes = []
    for name, engine in zip(("a", "b"), engines):
        conn = engine.connect("fake:", application_name="test")
        nodes.append(Node(name, engine, "fake:", engine.probe(conn)))
        engine.close(conn)
    doc = _measure_within(nodes, _config(tmp_path, threads_per_schema=2, run_time=2, warmup=1), 30).document
    per_node = {n["name"]: n["figures"]["latency"]["single_reads"] for n in doc["nodes"]}
    total = doc["figures"]["latency"]["single_reads"]
    assert all(s["count"] > 0 and s["nodes"] == 1 for s in per_node.values()), per_node
    assert total["count"] == sum(s["count"] for s in per_node.values()) and total["nodes"] == 2


def test_after_a_node_is_lost_the_others_intervals_keep_their_engine_figures(tmp_path, short_start_lead,
                                                                             monkeypatch):
    """A node frozen early in the window: its sessions' calls never answer, so their work is never published; the
    intervals after its loss are the other node's work and the last reading of the lost one, whose counters hold
    all the work they ever will. They keep their engine figures (not "in part": no session still to publish)."""
    from dbio.run import liveness

    monkeypatch.setattr(liveness, "SILENT_AFTER", SILENT)
    config = _config(tmp_path, threads_per_schema=2, run_time=6, warmup=1)
    clock = VirtualTime()
    engines = [FakeEngine(time=clock), FakeEngine(read_only=True, time=clock)]
    nodes = []
    for name, engine in zip(("p", "s"), engines):
        conn = engine.connect("fake:", application_name="test")
        nodes.append(Node(name, engine, "fake:", engine.probe(conn)))
        engine.close(conn)
    _freeze_in_window(engines[1], engines[0].server.starts, 1.0 + 1.5)
    try:
        outcome = _measure_within(nodes, config, 30)
    finally:
        engines[1].server.thaw()
    doc = results.read(outcome.directory)
    lost_at = next(e for e in doc["events"] if e["kind"] == "node_lost")["since_start"]
    after = [row for row in doc["series"] if row.get("phase") == "measured" and row["since_start"] > lost_at + 1.0]
    assert after, doc["series"]
    assert all(row.get("reads_per_s") for row in after), [(r["since_start"], r.get("unpublished")) for r in after]
