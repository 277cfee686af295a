"""dbio merge never counts one reading twice (dbio/merge_inputs.py, refuse_same_readings), whatever the fields a
user can edit say (run id, part, server identity, times): two servers' cumulative counters never agree, so
readings that agree are one server's; on it, readings at the same instants, or the same sessions (their
process ids), are one reading found twice, and one server under two identities would have its counters counted
twice. Each is refused in one line. The parts of one run on one server (tests/fixtures/parts: three real
parts, recorded by record_parts.py) agree on the server's counters too, but read it at instants of their own
with sessions of their own: they merge, the server counted once."""

from __future__ import annotations

import copy
import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from dbio import cli, merge, merge_readings, result
from tests.unit.test_merge_parts import OTHER_SERVER, moved

FIXTURES = Path(__file__).parent.parent / "fixtures"
FORMAT1 = FIXTURES / "result_complete.json"  # result format 1: no server identity
PARTS = [result.read(FIXTURES / "parts" / f"part{i}.json") for i in (1, 2, 3)]


def _whole(doc: dict) -> dict:
    """A part's result as a whole run's (hosts given one --dsn without --part): the same readings."""
    return {k: v for k, v in copy.deepcopy(doc).items() if k != "part"}


def _edited(doc: dict, run_id: str = "edited", identity: str | None = None) -> dict:
    out = copy.deepcopy(doc)
    out["run_id"] = run_id
    if identity is not None:
        for node in out["nodes"]:
            node["server"]["identity"] = identity
    return out


def _shifted(doc: dict, seconds: float) -> dict:
    """A copy whose times were all moved (its window, its server's clock at each reading): the same counters."""
    later = copy.deepcopy(doc)
    later["timeline"]["window_start"] = (datetime.fromisoformat(doc["timeline"]["window_start"])
                                         + timedelta(seconds=seconds)).isoformat()
    return moved(_edited(doc, f"shifted-{seconds}"), onto=later)


def _reads(doc: dict) -> float:
    return doc["figures"]["load_profile"]["physical_reads_per_s"]


def test_a_format_1_result_and_its_copy_under_another_run_id_are_refused_in_one_line(tmp_path: Path, capsys):
    """Issue 41: merged, the copy doubled the reads (8,569 -> 17,138/s) and called the total complete."""
    original = json.loads(FORMAT1.read_text())
    for name, doc in (("a", original), ("b", {**original, "run_id": "edited"})):
        (tmp_path / name).mkdir()
        (tmp_path / name / "result.json").write_text(json.dumps(doc))
    with pytest.raises(SystemExit) as exc:
        cli.main(["merge", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "merged")])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and len(err.strip().splitlines()) == 1, err
    assert "a and b hold the same sessions (their server read at the same instants)" in err
    assert not (tmp_path / "merged").exists()


@pytest.mark.parametrize("doc", [PARTS[0], _whole(PARTS[0])], ids=["part", "whole"])
def test_a_fresh_result_and_its_copy_with_another_run_id_and_server_identity_are_refused(doc):
    copied = _edited(doc, identity="1:1.0:1")
    if "part" in copied:
        copied["part"] = {**copied["part"], "index": 2}
    with pytest.raises(merge.NotMergeable, match="a and b hold the same sessions"):
        merge.merge([("a", doc), ("b", copied)], "m")


@pytest.mark.parametrize("seconds", [0.25, 1.5])
@pytest.mark.parametrize("doc", [result.read(FORMAT1), _whole(PARTS[0])], ids=["format1", "fresh"])
def test_a_copy_with_its_times_shifted_is_the_same_sessions(doc, seconds):
    """Its instants are no longer the original's, but its counters are: one server's, and on one server two
    sessions at once never share a process id. With another identity as well, still refused."""
    later = _shifted(doc, seconds)
    with pytest.raises(merge.NotMergeable, match=r"hold the same sessions \(their sessions are the same processes"):
        merge.merge([("a", doc), ("b", later)], "m")
    with pytest.raises(merge.NotMergeable, match="hold the same sessions"):
        merge.merge([("a", doc), ("b", _edited(later, "again", identity="1:1.0:1"))], "m")


@pytest.mark.parametrize("doc", [result.read(FORMAT1), _whole(PARTS[0])], ids=["format1", "fresh"])
def test_a_copy_with_a_counter_edited_is_still_the_same_reading(doc):
    """One field changed (at both ends) and the identity too: every other counter still agrees, the instants are
    the original's. Shifted as well, its sessions are still the original's."""
    edited = _edited(doc, identity="1:1.0:1")
    for reading in edited["nodes"][0]["normalized"].values():
        reading["data"]["reads"] += 1000
    with pytest.raises(merge.NotMergeable, match="same instants"):
        merge.merge([("a", doc), ("b", edited)], "m")
    with pytest.raises(merge.NotMergeable, match="same processes"):
        merge.merge([("a", doc), ("b", _shifted(edited, 0.5))], "m")


def test_a_merged_result_merged_again_with_one_of_its_runs_or_a_copy_of_itself_is_refused():
    """A merged result holds its runs' nodes with their readings: merged with one of them, or with a copy of
    itself, each of their reads would count again."""
    a, b = result.read(FIXTURES / "result_format2.json"), OTHER_SERVER
    merged = merge.merge([("a", a), ("b", b)], "m")
    assert _reads(merged) == pytest.approx(_reads(a) + _reads(b), rel=0.02)  # two servers: they add up
    with pytest.raises(merge.NotMergeable, match="m/a and a hold the same sessions"):
        merge.merge([("m", merged), ("a", a)], "again")
    with pytest.raises(merge.NotMergeable, match="m/a and copy/a hold the same sessions"):
        merge.merge([("m", merged), ("copy", _edited(merged))], "again")


def test_a_merged_result_of_parts_merged_with_one_of_its_parts_is_refused():
    merged = merge.merge([(f"p{i}", d) for i, d in enumerate(PARTS, 1)], "m")
    with pytest.raises(merge.NotMergeable, match="is a part of a run"):
        merge.merge([("m", merged), ("p2", PARTS[1])], "again")
    with pytest.raises(merge.NotMergeable, match="m/p2 and p2 hold the same sessions"):
        merge.merge([("m", merged), ("p2", _whole(PARTS[1]))], "again")


def test_the_parts_of_one_run_agree_on_their_server_s_counters_and_merge_counted_once():
    """Real parts: their readings of the server agree (at the end, on every counter: its counters had not moved
    between their readings), yet each read at its own instants with its own sessions. They merge; the server's
    reads are taken once, and the parts' own reads agree with them."""
    ends = [p["nodes"][0]["normalized"]["end"] for p in PARTS]
    same, held = merge_readings.counters_agreeing(ends[1], ends[2])
    assert same == held > 100  # this recording's p2 and p3 read one snapshot of the server's counters
    doc = merge.merge([(f"p{i}", d) for i, d in enumerate(PARTS, 1)], "m")
    [counted] = doc["counting"]
    assert counted["agree"] is True and counted["nodes"] == ["p1", "p2", "p3"]
    assert _reads(doc) == pytest.approx(counted["server_reads_per_s"], rel=0.05)
    assert _reads(doc) < 0.5 * sum(_reads(p) for p in PARTS)  # the server once, not three times
    wholes = merge.merge([(f"h{i}", _whole(d)) for i, d in enumerate(PARTS, 1)], "m")  # one --dsn, no --part
    assert wholes["counting"][0]["agree"] is True


def test_one_server_under_two_identities_is_refused():
    """A part whose identity was edited (not a copy: its own instants, its own sessions): its readings agree with
    the other parts' server's, so its counters would be taken as another server's, every part's reads again.
    A whole run whose result names no identity, on the same server as another, the same."""
    edited = _edited(PARTS[1], PARTS[1]["run_id"], identity="1:1.0:1")
    with pytest.raises(merge.NotMergeable, match=r"p1 and p2 read one server \(their counters at the window's end "
                                                 r"agree, as two servers' never do\), but their results name two "
                                                 "identities for it: its counters would count twice"):
        merge.merge([("p1", PARTS[0]), ("p2", edited), ("p3", PARTS[2])], "m")
    unnamed = _whole(PARTS[2])
    unnamed["nodes"][0]["server"].pop("identity")
    with pytest.raises(merge.NotMergeable, match="but h3's result names no identity for it"):
        merge.merge([("h2", _whole(PARTS[1])), ("h3", unnamed)], "m")


def test_two_servers_results_without_identities_still_add_up():
    """Format 1 beside format 2, two instances, at one start: nothing agrees, nothing is refused."""
    a, b = result.read(FIXTURES / "result_format2.json"), OTHER_SERVER
    for x, y in ((a, b), (b, a)):
        for end in ("begin", "end"):
            same, held = merge_readings.counters_agreeing(x["nodes"][0]["normalized"][end],
                                                        y["nodes"][0]["normalized"][end])
            assert same < 0.5 * held
    assert merge.merge([("a", a), ("b", b)], "m")["figures"]["load_profile"]
