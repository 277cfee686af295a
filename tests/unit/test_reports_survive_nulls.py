"""A report never crashes on a result dbio wrote (issue 26, item 9): a server may answer NULL for any
value it is asked (a backend still authenticating has no name yet), so every recorded result is
rendered again with its fields nulled.

A case nulls one group: every value of one object at once (the same field of every element of a list,
and of every interval's entry), or the object itself; when the reader refuses a group, each of its
values alone. The reader may refuse a case (in one line: tests/unit/test_malformed_files.py); what it
accepts, the text and Markdown reports render. A group is tried on the first result that has it (the
results share most of their fields), so that each result adds the fields only it has."""

from __future__ import annotations

import functools
import json
import pickle
from pathlib import Path
from typing import Any, Iterator

import pytest

from dbio import jsondoc, report, file_formats
from dbio import result as results
from dbio.report import model as report_model
from dbio.result_records import of

FIXTURES = Path(__file__).parent.parent / "fixtures"
RESULTS = ("result_complete.json", "result_interrupted.json", "result_cached.json", "result_pg15.json",
           "result_format2.json", "result_unnamed_session.json", "mysql/result_mariadb_10_11_pfs.json",
           "sweep_capacity/03-t4/result.json")
EACH, NUMBERED = "*", "#"  # every element of a list; every entry of an object keyed by numbers (intervals)

Path_ = tuple[str, ...]


def _children(value: Any, step: str) -> list[tuple[Any, Any]]:
    """(container, key) of what step names in value."""
    if step == EACH:
        return [(value, i) for i in range(len(value))] if isinstance(value, list) else []
    if not isinstance(value, dict):
        return []
    if step == NUMBERED:
        return [(value, k) for k in value if k.isdigit()]
    return [(value, step)] if step in value else []


def _slots(value: Any, path: Path_) -> list[tuple[Any, Any]]:
    """(container, key) of every value the path names."""
    found = [(None, value)]
    places: list[tuple[Any, Any]] = []
    for i, step in enumerate(path):
        places = [slot for parent, key in found
                  for slot in _children(parent[key] if parent is not None else key, step)]
        found = places
    return places


def _nulled(doc: dict[str, Any], paths: list[Path_]) -> dict[str, Any]:
    out = pickle.loads(pickle.dumps(doc))
    for path in paths:
        for parent, key in _slots(out, path):
            parent[key] = None
    return out


def _shapes(value: Any, path: Path_ = ()) -> Iterator[tuple[Path_, bool]]:
    """Every path of the document, once, with whether it holds an object or a list."""
    seen: set[Path_] = set()

    def walk(item: Any, at: Path_) -> Iterator[tuple[Path_, bool]]:
        if at and at not in seen:
            seen.add(at)
            yield at, isinstance(item, (dict, list))
        if isinstance(item, dict):
            for key, child in item.items():
                yield from walk(child, at + (NUMBERED if key.isdigit() else key,))
        elif isinstance(item, list):
            for child in item:
                yield from walk(child, at + (EACH,))

    yield from walk(value, path)


def cases(doc: dict[str, Any]) -> Iterator[tuple[Path_, list[Path_]]]:
    """The groups of fields to null, each under the path of the object it belongs to: the object
    itself, then every value in it that holds no object or list."""
    found = list(_shapes(doc))
    for path, nested in found:
        if nested:
            yield path + ("itself",), [path]
            members = [p for p, inner in found if not inner and len(p) == len(path) + 1 and p[:-1] == path]
            if members:
                yield path + ("members",), members


def accepted(doc: dict[str, Any]) -> bool:
    try:
        jsondoc.check(doc, file_formats.result(results.FORMAT_VERSION))
    except jsondoc.Malformed:
        return False
    return True


@functools.cache
def recorded(name: str) -> dict[str, Any]:
    """The result as dbio's reader gives it (an older format completed), before its shape check."""
    return results.completed(json.loads((FIXTURES / name).read_text()))


@functools.cache
def assigned(name: str) -> list[list[Path_]]:
    """The groups tried on this result: those no result before it in RESULTS has."""
    earlier = {key for other in RESULTS[:RESULTS.index(name)] for key, _ in cases(recorded(other))}
    return [group for key, group in cases(recorded(name)) if key not in earlier]


def render(doc: dict[str, Any], forms: tuple[str, ...] = ("text", "md")) -> None:
    model = report_model.build(of(results.with_nodes(doc)))
    for form in forms:
        report.render_model(model, form)


@pytest.mark.parametrize("name", RESULTS)
def test_every_result_renders_with_any_field_nulled(name):
    doc = recorded(name)
    assert accepted(doc)
    tried = rendered = 0
    failures: list[str] = []
    refused_groups: list[list[Path_]] = []
    for group in assigned(name):
        nulled = _nulled(doc, group)
        tried += 1
        if not accepted(nulled):
            if len(group) > 1:
                refused_groups.append(group)
            continue
        rendered += 1
        try:
            render(nulled)
        except Exception as exc:  # noqa: BLE001 - any crash is the finding
            failures.append(f"{'; '.join('.'.join(p) for p in group)}: {type(exc).__name__}: {exc}")
    for group in refused_groups:  # each member of a refused group alone
        for path in group:
            nulled = _nulled(doc, [path])
            tried += 1
            if accepted(nulled):
                rendered += 1
                try:
                    render(nulled)
                except Exception as exc:  # noqa: BLE001
                    failures.append(f"{'.'.join(path)}: {type(exc).__name__}: {exc}")
    assert tried < 10 or rendered > tried // 2, \
        f"only {rendered} of {tried} cases were accepted: the test reaches too little"
    assert not failures, f"{len(failures)} of {rendered} nulled results crash the report:\n" + "\n".join(failures[:20])


def test_a_result_with_an_unnamed_session_renders_in_every_form():
    """Recorded on main before the fix: a backend authenticating during the run (no user, no name yet)
    left [null] among the other sessions' names; `dbio report` crashed on it."""
    doc = recorded("result_unnamed_session.json")
    assert any(None in (row.get("other_session_names") or []) for row in doc["series"])
    render(doc, ("text", "md", "html", "json"))
