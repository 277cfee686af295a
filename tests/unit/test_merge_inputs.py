"""dbio merge given what cannot be one run's parts (dbio/merge.py, dbio/file_formats.py): a part record out of
its range, a part whose server gave no identity (its counters would be taken once per part), the same
sessions given twice under another run id, and an edited result whose counts are not numbers. Each is
refused in one line, never merged into a total that counts reads twice, never an internal error."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from dbio import merge, result
from dbio.errors import UsageError
from tests.unit.test_merge_parts import on_server, part


@pytest.mark.parametrize("index, of", [(4, 3), (0, 3), (-1, 3), (1, 1), (2, 1)])
def test_a_part_outside_its_run_is_refused(index, of):
    """part 4 of 3 (or 0, or a run of one part) is no part of the run the others are."""
    odd = part(index, 0.33, of=of)
    with pytest.raises(merge.NotMergeable, match="is not a part of a run of 2 to"):
        merge.merge([("p1", part(1, 0.33, of=of)), ("odd", odd)], "m")


def test_a_part_whose_server_gave_no_identity_is_refused():
    """Without the server's identity the total would take that part's server-wide counters as another
    server's: every part's reads again (three parts: three times the server's)."""
    docs = [part(i, 0.33) for i in (1, 2, 3)]
    docs[2]["nodes"][0]["server"]["identity"] = None
    with pytest.raises(merge.NotMergeable, match="p3's server gave no identity"):
        merge.merge([(f"p{i}", d) for i, d in enumerate(docs, 1)], "m")
    for doc in docs:
        doc["nodes"][0]["server"].pop("identity")
    with pytest.raises(merge.NotMergeable, match="gave no identity"):
        merge.merge([(f"p{i}", d) for i, d in enumerate(docs, 1)], "m")


def test_the_same_sessions_given_twice_under_another_run_id_are_refused():
    """A copy of part 2 whose run id and index were edited: its sessions are part 2's (the same backends of
    the same server in the same seconds), and their statements and latencies would count twice."""
    two = part(2, 0.33)
    copied = copy.deepcopy(two)
    copied["run_id"], copied["part"]["index"] = "edited", 3
    with pytest.raises(merge.NotMergeable, match="p2 and p3 hold the same sessions"):
        merge.merge([("p1", part(1, 0.33)), ("p2", two), ("p3", copied)], "m")
    whole = {k: v for k, v in two.items() if k != "part"}
    again = {**copy.deepcopy(whole), "run_id": "edited"}
    with pytest.raises(merge.NotMergeable, match="hold the same sessions"):
        merge.merge([("a", whole), ("b", again)], "m")


def test_runs_on_distinct_servers_may_have_sessions_of_the_same_pids():
    """Process ids are one server's: two servers' sessions may have the same (their hosts' pid spaces)."""
    docs = [on_server(1), on_server(2)]
    for session, other in zip(docs[1]["sessions"], docs[0]["sessions"]):
        session["pid"] = other["pid"]
    assert merge.merge([(f"h{i}", d) for i, d in enumerate(docs, 1)], "m")["figures"]["load_profile"]


@pytest.mark.parametrize("edit, where", [
    (lambda d: d["nodes"][0]["normalized"]["end"]["sessions"].update(reads="many"), "sessions.reads"),
    (lambda d: d.update(part={"index": 3, "of": 3, "run": {"x": 1}}), "part.run"),
    (lambda d: d.update(part={"index": "3", "of": 3, "run": "run-abc"}), "part.index"),
    (lambda d: d["nodes"][0]["server"].update(identity=7), "server.identity"),
])
def test_an_edited_result_is_refused_in_one_line_not_an_internal_error(tmp_path: Path, edit, where):
    doc = part(3, 0.33)
    edit(doc)
    path = tmp_path / "result.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(UsageError, match=where.replace(".", r"\.")):
        result.read(path)


def test_inputs_given_as_files_of_the_current_directory_are_named_after_it(tmp_path: Path, monkeypatch):
    """`dbio merge result.json ../b/result.json` or `dbio merge .`: names from the directories, never empty."""
    from dbio.jobs.inputs import input_names

    for name in ("20261122-182718-host-a", "b"):
        (tmp_path / name).mkdir()
    monkeypatch.chdir(tmp_path / "20261122-182718-host-a")
    assert input_names([Path("result.json"), Path("../b/result.json")], None) == ["host-a", "b"]
    assert input_names([Path("."), Path("../b")], None) == ["host-a", "b"]



def test_a_latency_kind_one_input_lacks_is_absent_not_partial():
    """A result that timed no scans into a histogram (edited, or of another dbio): the merged scans'
    histogram would hold only the others' while the totals count every input's scans. It is absent,
    whichever input lacks it; kinds every input has still add up."""
    for lacking in (0, 1):
        docs = [part(1, 0.5), part(2, 0.5)]
        del docs[lacking]["histograms"]["scan"]
        doc = merge.merge([("p1", docs[0]), ("p2", docs[1])], "m")
        assert "scan" not in doc["histograms"]
        assert sum(doc["histograms"]["select"]["counts"]) == sum(sum(d["histograms"]["select"]["counts"]) for d in docs)
