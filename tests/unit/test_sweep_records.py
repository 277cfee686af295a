"""sweep_records: `load` is the one way sweep.json's document becomes a Sweep (its kind and version
refused in one line, its shape checked); `of` types a document as it is, with the defaults the sweep
report always read an absent field as."""

import copy
import json
from pathlib import Path

import pytest

from dbio import jsondoc
from dbio.errors import UsageError
from dbio.stats.knee import DEFAULT_GAIN
from dbio.sweep import document
from dbio.sweep_records import NotASweep, UnknownVersion, load, of

FIXTURE = Path(__file__).parent.parent / "fixtures" / "sweep_capacity"


def recorded() -> dict:
    return json.loads((FIXTURE / "sweep.json").read_text())


@pytest.mark.parametrize("doc", [None, [], "dbio-sweep", {}, {"format": "dbio-result", "format_version": 1}])
def test_a_document_of_another_kind_is_refused(doc):
    with pytest.raises(NotASweep, match="is not a dbio sweep"):
        load(doc)


@pytest.mark.parametrize("version, says", [(2, "from a newer dbio (this one reads formats 1 to 1)"),
                                           ("1", 'has format_version "1", not an integer'),
                                           (0, "has format version 0")])
def test_a_version_this_dbio_does_not_read_is_refused(version, says):
    with pytest.raises(UnknownVersion, match=says.replace("(", r"\(").replace(")", r"\)")):
        load({**recorded(), "format_version": version})


@pytest.mark.parametrize("field, value, says", [
    ("op", {"wal_bytes": 1}, "op lacks operation"),
    ("op", {"operation": 5}, "op.operation is 5"),
    ("counted", ["data_dirs", 2], "counted[1] is 2"),
])
def test_what_the_reports_read_is_checked_on_loading(field, value, says):
    with pytest.raises(jsondoc.Malformed, match=says.replace("[", r"\[").replace("]", r"\]")) as refused:
        load({**recorded(), field: value})
    assert not isinstance(refused.value, (NotASweep, UnknownVersion))


def test_the_recorded_sweep_is_typed_and_left_unchanged():
    doc = recorded()
    kept = copy.deepcopy(doc)
    sweep = load(doc)
    assert doc == kept and sweep.document is doc
    assert (sweep.status, sweep.label, sweep.created_at) == (doc["status"], doc["label"], doc["created_at"])
    assert sweep.vary == (("threads_per_schema", ("1", "2", "4", "8")),) and sweep.varied == ["threads_per_schema"]
    assert sweep.knee_gain == doc["knee_gain"] and sweep.wall_seconds == doc["wall_seconds"]
    assert [s.name for s in sweep.steps] == [s["name"] for s in doc["steps"]]
    assert all(s.group == s.name and s.round is None for s in sweep.steps)  # no --repeat: each step its own group
    assert sweep.complete() == 4 and sweep.repeat == 1 and sweep.search is None and sweep.operation is None


def test_a_document_as_it_is_reads_absent_fields_as_the_report_did():
    sweep = of({"steps": [{"name": "01-t1-r2", "group": "01-t1", "round": 2, "status": "complete",
                           "values": {"threads_per_schema": "1"}}]})
    assert (sweep.repeat, sweep.knee_gain, sweep.peak_gain, sweep.wall_seconds) == (1, DEFAULT_GAIN, 0.05, 0.0)
    assert (sweep.vary, sweep.counted, sweep.until_peak, sweep.capacity, sweep.base) == ((), (), False, None, {})
    (step,) = sweep.steps
    assert (step.group, step.round, step.peak) == ("01-t1", 2, False)


def test_a_search_and_an_operation_are_typed():
    search = {"objective": "p99<2ms", "max_sessions": 64, "resolution": 0.1, "gain": 0.05,
              "answers": [{"group": "", "line": "8 sessions", "reason": "met", "best": "03-t8"}, "not an answer"]}
    sweep = of({**recorded(), "search": search, "op": {"operation": "checkpoint"}})
    assert sweep.search is not None and sweep.search.objective == "p99<2ms" and sweep.search.max_sessions == 64
    assert [(a.group, a.line, a.best) for a in sweep.search.answers] == [("", "8 sessions", "03-t8")]
    assert sweep.operation == "checkpoint"


def test_reading_a_directory_refuses_in_one_line_naming_the_file(tmp_path):
    (tmp_path / "sweep.json").write_text(json.dumps({**recorded(), "format_version": 9}))
    with pytest.raises(UsageError) as refused:
        document.read_sweep(tmp_path)
    assert str(tmp_path / "sweep.json") in str(refused.value) and "newer dbio" in str(refused.value)
    assert document.read_sweep(FIXTURE).steps == load(recorded()).steps
    assert document.read(FIXTURE) == recorded()  # the document, for resume to rewrite
