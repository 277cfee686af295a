"""Results for tests: a recorded result (tests/fixtures/result_<name>.json, completed as dbio reads an older
one) with the fields a test is about set, then typed, instead of a fixture's dict mutated in each test.

A keyword names its field's path with `__` between keys (`figures__latency__avg_read_us=310.0`); the
value ABSENT removes the key. Each call starts from a fresh copy of the fixture."""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

from dbio import result as results
from dbio.result_records import Result, of

FIXTURES = Path(__file__).parent / "fixtures"
ABSENT = object()  # an override's value that removes its key


@functools.cache
def _recorded(fixture: str) -> dict[str, Any]:
    return results.completed(json.loads((FIXTURES / f"result_{fixture}.json").read_text()))


def a_document(fixture: str = "complete", **overrides: Any) -> dict[str, Any]:
    """The fixture's document with each override set (a path's missing mappings made); a fresh copy."""
    doc = copy.deepcopy(_recorded(fixture))
    for name, value in overrides.items():
        *parents, key = name.split("__")
        where = doc
        for part in parents:
            if not isinstance(where.get(part), dict):
                where[part] = {}
            where = where[part]
        if value is ABSENT:
            where.pop(key, None)
        else:
            where[key] = value
    return doc


def a_result(fixture: str = "complete", **overrides: Any) -> Result:
    """The fixture's result with each override set, typed as a report reads it."""
    return of(a_document(fixture, **overrides))
