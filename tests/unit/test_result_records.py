"""result_records: `load` is the one way a file's document becomes a Result (its format and version
refused in one line, a format-1 result migrated to one node, its shape checked); `of` types a
document as it is, leniently where reports always read it leniently (parts, counting, events)."""

import copy
import json
from pathlib import Path

import pytest

from dbio import jsondoc
from dbio.result_records import ONLY_NODE, NotAResult, Result, UnknownVersion, load, of

FIXTURES = Path(__file__).parent.parent / "fixtures"


def fixture(name: str) -> dict:
    return json.loads((FIXTURES / f"result_{name}.json").read_text())


@pytest.mark.parametrize("document", [None, [], "dbio-result", {}, {"format": "dbio-sweep", "format_version": 2}])
def test_a_document_of_another_kind_is_refused(document):
    with pytest.raises(NotAResult, match="is not a dbio result"):
        load(document)


@pytest.mark.parametrize("version, says", [
    (3, "has result format 3, from a newer dbio (this one reads formats 1 to 2)"),
    ("2", 'has format_version "2", not an integer'),
    (2.0, "has format_version 2.0, not an integer"),
    (True, "has format_version true, not an integer"),
    (0, "has format version 0; result formats start at 1"),
    (None, "has format_version null, not an integer"),
])
def test_a_version_this_dbio_does_not_read_is_refused_in_one_line(version, says):
    document = {**fixture("format2"), "format_version": version}
    with pytest.raises(UnknownVersion) as refused:
        load(document)
    assert str(refused.value) == says and "\n" not in str(refused.value)


def test_a_document_not_of_the_result_shape_is_refused():
    document = fixture("format2")
    document["status"] = 5
    with pytest.raises(jsondoc.Malformed) as refused:
        load(document)
    assert not isinstance(refused.value, (NotAResult, UnknownVersion))
    assert "status" in str(refused.value)


def test_a_format_1_result_is_read_as_a_run_of_one_node():
    document = fixture("complete")
    assert document["format_version"] == 1 and "nodes" not in document
    kept = copy.deepcopy(document)
    r = load(document)
    assert document == kept  # the file's document is not changed by reading it
    assert r.format_version == 1  # what the file says, though it reads as format 2
    (node,) = r.nodes
    assert (node.name, node.role, node.engine) == (ONLY_NODE, "primary", document["capabilities"]["engine"])
    assert node.figures is r.figures  # the one node's figures are the run's (completed by its engine)
    assert r.figures.keys() == document["figures"].keys()
    assert node.raw["server"] == document["environment"]["server"]
    for name, reading in document["snapshots"].items():  # each reading's snapshot is the one node's
        migrated = r.document["snapshots"][name]
        assert migrated == (None if reading is None else {"nodes": {ONLY_NODE: reading["engine"]}, "os": reading["os"]})


def test_a_format_2_result_keeps_its_nodes_and_types_its_top_level():
    document = fixture("format2")
    r = load(document)
    assert [n.name for n in r.nodes] == [n["name"] for n in document["nodes"]]
    assert r.status == document["status"] and r.run_id == document.get("run_id")
    timeline = document["timeline"]
    assert r.timeline.window_seconds == timeline.get("window_seconds")
    assert r.timeline.start_seconds == timeline.get("start_seconds")
    assert r.config.sessions == document["config"]["workload"]["sessions"]
    assert r.config.workload == document["config"]["workload"]
    assert [e.kind for e in r.events] == [e["kind"] for e in document["events"]]
    assert r.capabilities.items() >= document["capabilities"].items()  # completed: the facts older dbios lacked
    assert r.figures is r.document["figures"]


def test_loading_twice_gives_the_same_result():
    once = load(fixture("complete"))
    assert load(once.document) == once


def test_of_types_a_document_as_it_is_without_migrating_it():
    document = fixture("complete")
    r = of(document)
    assert r.nodes == () and r.format_version == 1  # a format-1 document typed as it is: no node made
    assert r.document is document


def test_of_leaves_out_what_is_not_of_its_shape():
    document = {
        "format": "dbio-result", "format_version": 2, "status": "complete",
        "timeline": {"window_seconds": True, "warmup_seconds": "5", "start_seconds": 1.5},
        "config": {"workload": "not a table", "connection": {"embedded": 1}},
        "nodes": [{"name": "a", "role": "primary"}, {"role": "standby"}, "b"],
        "events": [{"kind": "window_open", "since_start": 2, "t": "soon"}, "an event", None],
        "counting": [{"description": "host1", "own_reads_per_s": 10, "server_reads_per_s": "12", "agree": False},
                     7],
        "parts": {"given": [{"index": 1}, "2", {"index": 3}], "of": 3, "run": "r1"},
        "merged_from": [{"path": "a"}, "b"],
        "verdict": ["not", "a", "verdict"],
        "part": "1/3",
    }
    r = of(document)
    assert r.timeline.window_seconds is None and r.timeline.warmup_seconds is None  # no number: none
    assert r.timeline.start_seconds == 1.5
    assert r.config.workload == {} and r.config.sessions == 0 and r.config.embedded
    assert [n.name for n in r.nodes] == ["a"]  # a node with no name, or no node at all, is left out
    (event,) = r.events
    assert (event.kind, event.since_start, event.t) == ("window_open", 2, None)
    (counted,) = r.counting
    assert (counted.own_reads_per_s, counted.server_reads_per_s, counted.agree) == (10, None, False)
    assert r.parts is not None and r.parts.given == (1, None, 3) and r.parts.missing == ()
    assert (r.parts.of, r.parts.run) == (3, "r1")
    assert r.merged_from == ({"path": "a"},)
    assert r.verdict is None and r.part is None


def test_of_a_document_without_parts_or_counting():
    r = of({"format": "dbio-result"})
    assert (r.parts, r.counting, r.events, r.nodes, r.merged_from) == (None, (), (), (), ())
    assert r.capabilities == {} and r.figures == {} and r.timeline.window_seconds is None


def test_a_node_view_is_the_run_as_that_node_saw_it():
    document = fixture("format2")
    own = {**document["nodes"][0]["figures"], "window_seconds": 1.0}
    node = {**document["nodes"][0], "name": "b", "figures": own, "capabilities": {"engine": "mysql"}}
    r = load({**document, "nodes": [*document["nodes"], node]})
    view = r.node_view(r.nodes[-1])
    assert isinstance(view, Result) and view.nodes == (r.nodes[-1],)
    assert view.figures["window_seconds"] == 1.0 and view.document["figures"] is view.figures
    assert view.capabilities["engine"] == "mysql"  # a merge's node is a host: its own facts
    assert r.node_view(r.nodes[0]).capabilities == r.capabilities
    assert view.config == r.config and view.status == r.status


def test_what_surrounded_the_run_is_typed_leniently():
    """The environment, fio's baseline, the setup, the waits and the whole histograms: a value not of its
    shape is left out or absent, as the report sections skipped it when they read the document by path."""
    r = of({
        "format": "dbio-result",
        "environment": {"server": "pg", "host": {"cpus": 4}, "limits": [{"cpus_allowed": 2}, None, "x"],
                        "storage": {"data_directory": {"path": "/d"}, "wal": {"path": "/w"},
                                    "tablespaces": [{"path": "/t1"}, None, {}, {"path": "/t2"}]}},
        "baseline": {"version": "fio-3.36", "started_at": "soon", "runs": {"sync": {"reads_per_s": 900, "jobs": 4,
                                                                                   "options": ["--rw", 8]},
                                                                          "deep": "not a run"},
                     "write_side": {"writes": None, "redo_sync": {"syncs_per_s": "many", "command": ["fio"]}}},
        "setup": {"setup_id": "s1", "loaded_bytes": 1 << 30, "seconds": True},
        "waits": {"counts": {"CPU": 3, "IO:DataFileRead": 9}, "samples": "12"},
        "histograms": {"bounds_us": [10, 100], "select": {"counts": [1, 2, 3]}, "update": {"counts": None}},
        "plans": {"select": {"nodes": ["Index Scan", 7]}, "scan": "none"},
        "series": [{"k": 1}, None], "sessions": "s", "cluster": [], "stalls": [{"offset": 1}, 2],
    })
    env = r.environment
    assert env.server == {} and env.host == {"cpus": 4} and env.limits == ({"cpus_allowed": 2},)
    assert env.client_limits == () and env.settings == {}
    # each place in order, an empty one left out; tablespaces count as places outside the data directory
    assert [role for role, _ in env.storage.places()] == ["data directory", "tablespace 1", "tablespace 3", "WAL"]
    assert env.storage.has_layout
    assert r.baseline is not None and list(r.baseline.runs) == ["sync"]  # "deep" is no run
    sync = r.baseline.runs["sync"]
    assert (sync.reads_per_s, sync.jobs, sync.options, sync.avg_read_us) == (900, 4, ("--rw", "8"), None)
    assert r.baseline.started_at is None and r.baseline.writes is None
    assert r.baseline.redo_sync is not None and r.baseline.redo_sync.syncs_per_s is None
    assert (r.setup.setup_id, r.setup.loaded_bytes, r.setup.seconds) == ("s1", 1 << 30, None)
    assert dict(r.waits.counts) == {"CPU": 3, "IO:DataFileRead": 9} and r.waits.samples is None
    assert r.histograms.bounds_us == (10, 100) and dict(r.histograms.counts) == {"select": (1, 2, 3)}
    assert r.plans == {"select": ("Index Scan", "7"), "scan": ()}
    assert r.series == [{"k": 1}] and r.sessions == [] and r.cluster == {} and r.stalls == [{"offset": 1}]


def test_a_storage_of_the_data_directory_alone_has_no_layout_of_its_own():
    from dbio.result_context import Storage

    inside = Storage.of({"data_directory": {"path": "/d/"}, "wal": {"path": "/d/pg_wal"}})
    assert not inside.has_layout and [role for role, _ in inside.places()] == ["data directory", "WAL"]
    assert Storage.of({"data_directory": {"path": "/d"}, "wal": {"path": "/dw"}}).has_layout  # /dw is not in /d
    assert Storage.of(None).places() == [] and not Storage.of("x").has_layout


def test_a_result_without_a_baseline_has_none():
    assert of({"format": "dbio-result"}).baseline is None
    assert of({"format": "dbio-result", "baseline": ["fio"]}).baseline is None


def test_a_node_is_typed_leniently_where_its_reports_were():
    from dbio.result_records import Node

    stopped = Node.of({"name": "n2", "role": "standby", "stopped": {"since_start": 3.5, "reason": "frozen",
                                                                     "figures_cover_seconds": "x"},
                       "figures": {"replication": {"replay_lag_seconds_max": 2.0}}, "weight": True})
    assert stopped.stopped is not None
    assert (stopped.stopped.since_start, stopped.stopped.reason, stopped.stopped.figures_cover_seconds) == \
        (3.5, "frozen", None)
    assert stopped.replication == {"replay_lag_seconds_max": 2.0} and stopped.weight is None
    for nothing in ({}, None, "stopped"):  # nothing written, or no record of a stop: the node did not stop
        kept = Node.of({"name": "n1", "role": "primary", "stopped": nothing, "figures": {"replication": 5}})
        assert kept.stopped is None and kept.replication == {}


def test_the_capabilities_the_reports_read_are_typed_and_a_damaged_one_is_absent():
    caps = of({"capabilities": {"engine": "postgres", "local": True, "direct_io": False, "page_bytes": 16384,
                                "settings_shown": ["shared_buffers", 3], "missing": [{"figure": "x"}, "y"],
                                "maintenance_name": ""}}).caps
    assert caps.engine == "postgres" and caps.local is True and caps.direct_io is False and caps.page_bytes == 16384
    assert caps.settings_shown == ("shared_buffers",) and caps.missing == ({"figure": "x"},)
    assert caps.maintenance_name is None and caps.cache_name is None
    damaged = of({"capabilities": {"local": None, "direct_io": "yes", "page_bytes": -1}}).caps
    assert damaged.local is False and damaged.direct_io is None and damaged.page_bytes is None
    assert of({}).caps.settings_shown == () and of({}).caps.missing == ()


def test_the_workload_knobs_the_verdict_reads_are_typed():
    w = of({"config": {"workload": {"run_time": 30, "work_loop": 0, "update_pct": 0, "hotspot": True,
                                    "hotspot_frequency": 3}}}).config
    assert (w.run_time, w.work_loop, w.update_pct, w.hotspot_every) == (30, False, 0, 3)
    off = of({"config": {"workload": {"run_time": "30", "hotspot": False, "hotspot_frequency": 3}}}).config
    assert (off.run_time, off.update_pct, off.hotspot_every) == (None, None, None)
    assert of({"config": {"workload": {"hotspot": True, "hotspot_frequency": 0}}}).config.hotspot_every is None
