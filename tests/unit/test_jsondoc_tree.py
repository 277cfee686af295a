"""A tree's numbers checked by one walk that names no place, and walked again only when one is wrong: the same
verdict and the same message as the walk that names each place (pure, on a recorded PostgreSQL snapshot)."""

import json
from pathlib import Path

import pytest

from dbio import file_formats, jsondoc

SNAPSHOT = json.loads((Path(__file__).parent.parent / "fixtures" / "pg18_snapshot.json").read_text())


def _message(shape, value):
    try:
        jsondoc.check(value, shape)
    except jsondoc.Malformed as exc:
        return str(exc)
    return None


def test_a_recorded_snapshot_holds():
    assert _message(file_formats.READING, SNAPSHOT) is None


@pytest.mark.parametrize("bad, says", [
    (-1, "expected a count (a number >= 0)"), (-0.5, "expected a count (a number >= 0)"),
    (float("nan"), "out of the range of any real figure"), (float("inf"), "out of the range of any real figure"),
    (2 ** 64, "out of the range of any real figure"), (-(2 ** 64), "out of the range of any real figure"),
])
def test_a_wrong_number_deep_in_a_reading_is_named_where_it_is(bad, says):
    doc = json.loads(json.dumps(SNAPSHOT))
    doc["database"]["blks_read"] = bad
    message = _message(file_formats.READING, doc)
    assert message is not None and message.startswith("database.blks_read is ") and message.endswith(says)


def test_what_is_no_number_is_left_alone_as_before():
    doc = {"a": [True, None, "x", (1, -2)], "b": {"c": False}}  # a bool is no number; a tuple is no JSON list
    assert _message(jsondoc.tree(jsondoc.count), doc) is None


def test_a_subclass_of_the_json_types_gets_the_walk_that_names_places():
    class Number(int):
        pass

    assert _message(jsondoc.tree(jsondoc.count), {"a": [Number(3)]}) is None
    assert _message(jsondoc.tree(jsondoc.count), {"a": [Number(-3)]}) == "a[0] is -3, expected a count (a number >= 0)"


def test_another_leaf_is_called_for_each_number():
    seen = []
    jsondoc.check({"a": [1, {"b": 2.5}]}, jsondoc.tree(lambda value, where: seen.append(value)))
    assert sorted(seen) == [1, 2.5]


SEPARATE = jsondoc.both(jsondoc.real_numbers, jsondoc.tree(jsondoc.count),
                        jsondoc.obj({"t": jsondoc.number}, required=("t",)))


@pytest.mark.parametrize("where, bad", [
    (("database", "blks_read"), -1), (("database", "blks_read"), float("nan")), (("t",), float("inf")),
    (("database", "blks_read"), 2 ** 64), (("t",), "noon"), (("database", "blks_read"), -0.0),
    (("database", "blks_read"), 2.0 ** 63), (("database", "blks_read"), True),
])
def test_a_reading_checked_in_one_walk_says_what_the_separate_walks_say(where, bad):
    doc = json.loads(json.dumps(SNAPSHOT))
    doc[where[0]] = {**doc[where[0]], where[1]: bad} if len(where) == 2 else bad
    assert _message(file_formats.READING, doc) == _message(SEPARATE, doc)
    counters = {"data": {"reads": bad}}
    assert _message(file_formats.COUNTER_RECORD, counters) == \
        _message(jsondoc.both(jsondoc.real_numbers, jsondoc.tree(jsondoc.count)), counters)


def test_a_reading_without_its_time_is_refused_by_the_one_walk_too():
    doc = {k: v for k, v in SNAPSHOT.items() if k != "t"}
    assert _message(file_formats.READING, doc) == _message(SEPARATE, doc) == "lacks t"
