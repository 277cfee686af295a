"""dbio's own JSON files as they come back from disk: parsed strictly and checked once, here.

Python's json accepts NaN and Infinity and reads 1e400 as infinity; a figure read back must be
a real number. Each file type declares the shape its readers rely on with the small combinators
below, and `check` names the first thing that is wrong ("totals.selects is -5, expected a count"),
so the report code can trust what it is given.
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timezone
from typing import Any, Callable, Mapping

# No counter or figure of PostgreSQL or of the host exceeds what a signed 64-bit integer holds.
LIMIT = 2.0 ** 63

Shape = Callable[[Any, str], None]


class Malformed(ValueError):
    """What is wrong with a document, where in it; the reader adds the file's name."""


def loads(text: str) -> Any:
    """JSON without NaN and Infinity; every number finite and within LIMIT. Every way a text can fail is
    one Malformed: also a number of thousands of digits (int() refuses more than
    sys.get_int_max_str_digits() with a ValueError) and nesting deeper than the stack."""
    try:
        value = json.loads(text, parse_constant=_refuse_constant, parse_int=_bounded_int)
        _check_numbers(value, "")
    except json.JSONDecodeError as exc:
        raise Malformed(f"is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); "
                        f"it may be truncated") from None
    except RecursionError:
        raise Malformed("is nested too deeply to be a dbio document") from None
    return value


INT_DIGITS = 40  # far more than any integer within LIMIT is written with (19 digits)


def _bounded_int(digits: str) -> int:
    """A JSON integer, converted only when it is short enough to be a figure at all."""
    if len(digits.lstrip("-")) > INT_DIGITS:
        raise Malformed(f"holds a whole number of {len(digits.lstrip('-'))} digits, out of the range of any "
                        "real figure")
    return int(digits)


def _refuse_constant(name: str) -> Any:
    raise Malformed(f"holds {name}, which is not a number")


def _check_numbers(value: Any, where: str) -> None:
    tree(_real_figure)(value, where)


def real_numbers(value: Any, where: str) -> None:
    """Every number at any depth finite and within LIMIT (a shape: what loads checks of a whole file)."""
    _check_numbers(value, where)


def real_or_none(value: Any) -> Any:
    """The value with every number that is no real figure (NaN, an infinity, beyond LIMIT) as None: what
    loads would refuse, never written (a figure is true or absent)."""
    if isinstance(value, dict):
        return {key: real_or_none(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [real_or_none(item) for item in value]
    try:
        _real_figure(value, "")
    except Malformed:
        return None
    return value


def _real_figure(value: Any, where: str) -> None:
    if isinstance(value, float) and not (math.isfinite(value) and abs(value) <= LIMIT):
        raise Malformed(f"{where or 'the document'} is {value!r}, out of the range of any real figure")
    elif isinstance(value, int) and not isinstance(value, bool) and abs(value) > LIMIT:
        raise Malformed(f"{where or 'the document'} is {value}, out of the range of any real figure")


def check(value: Any, shape: Shape) -> None:
    shape(value, "")


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else str(key)


def _wrong(value: Any, where: str, expected: str) -> Malformed:
    shown = "null" if value is None else ("a list" if isinstance(value, list) else
                                          "an object" if isinstance(value, dict) else json.dumps(value)[:40])
    return Malformed(f"{where or 'the document'} is {shown}, expected {expected}")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# -- shapes ------------------------------------------------------------------------------------

def anything(value: Any, where: str) -> None:
    """Not read by anything that computes (its numbers are still checked by loads)."""


def number(value: Any, where: str) -> None:
    if not _is_number(value):
        raise _wrong(value, where, "a number")


def count(value: Any, where: str) -> None:
    """A counter, a rate or a duration: never negative."""
    if not _is_number(value) or value < 0:
        raise _wrong(value, where, "a count (a number >= 0)")


def whole(value: Any, where: str) -> None:
    """A non-negative integer (an index, a number of things)."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise _wrong(value, where, "a whole number >= 0")


def text(value: Any, where: str) -> None:
    if not isinstance(value, str):
        raise _wrong(value, where, "a string")


def instant(value: Any, where: str) -> None:
    """A time with its zone, as dbio writes one (ISO 8601), that the calendar holds in UTC too."""
    try:
        if isinstance(value, str) and datetime.fromisoformat(value).tzinfo is not None:
            datetime.fromisoformat(value).astimezone(timezone.utc)
            return
    except (ValueError, OverflowError):
        pass
    raise _wrong(value, where, "a time with its zone (ISO 8601, e.g. 2026-11-22T19:00:00.000+00:00)")


def flag(value: Any, where: str) -> None:
    if not isinstance(value, bool):
        raise _wrong(value, where, "true or false")


def optional(shape: Shape) -> Shape:
    """The shape, or null."""
    def check_optional(value: Any, where: str) -> None:
        if value is not None:
            shape(value, where)
    return check_optional


def either(*shapes: Shape, expected: str) -> Shape:
    def check_either(value: Any, where: str) -> None:
        for shape in shapes:
            try:
                shape(value, where)
                return
            except Malformed:
                continue
        raise _wrong(value, where, expected)
    return check_either


def obj(fields: Mapping[str, Shape] | None = None, *, rest: Shape = anything,
        required: tuple[str, ...] = ()) -> Shape:
    """An object: named fields (absent is allowed unless required), other keys checked by rest."""
    fields = fields or {}

    def check_obj(value: Any, where: str) -> None:
        if not isinstance(value, dict):
            raise _wrong(value, where, "an object")
        missing = [key for key in required if key not in value]
        if missing:
            raise Malformed(f"{where + ' ' if where else ''}lacks {', '.join(missing)}")
        for key, item in value.items():
            fields.get(key, rest)(item, _join(where, key))
    return check_obj


def array(item: Shape) -> Shape:
    def check_array(value: Any, where: str) -> None:
        if not isinstance(value, list):
            raise _wrong(value, where, "a list")
        for i, element in enumerate(value):
            item(element, f"{where}[{i}]")
    return check_array


def tree(leaf: Shape) -> Shape:
    """Objects and lists nested to any depth; numbers at any depth must pass leaf, and strings,
    booleans and nulls are left alone (counter snapshots: a view's column may be null).

    A document that holds is found so by one walk that names no place (`_holds`: every reading of a run,
    each second, is checked); only one that does not is walked again, naming where it is wrong."""
    def check_tree(value: Any, where: str) -> None:
        if not _holds(value, leaf):
            _named(value, where)

    def _named(value: Any, where: str) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                _named(item, _join(where, key))
        elif isinstance(value, list):
            for i, item in enumerate(value):
                _named(item, f"{where}[{i}]")
        elif _is_number(value):
            leaf(value, where)
    return check_tree


def _holds(value: Any, leaf: Shape) -> bool:
    """Whether every number of a tree passes leaf (the plain JSON types only: anything else, as a subclass of
    dict, is left to the walk that names places). count and _real_figure, the leaves of every reading, are
    tested inline."""
    pending = [value]
    while pending:
        item = pending.pop()
        kind = type(item)
        if kind is dict:
            pending.extend(item.values())
        elif kind is list:
            pending.extend(item)
        elif kind is int or kind is float:
            if leaf is count:
                if item < 0:
                    return False
            elif leaf is _real_figure:
                if not (-LIMIT <= item <= LIMIT):  # NaN too: no comparison holds for it
                    return False
            elif leaf is _real_count:
                if not (0 <= item <= LIMIT):
                    return False
            else:
                try:
                    leaf(item, "")
                except Malformed:
                    return False
        elif isinstance(item, (dict, list, int, float)) and kind is not bool:
            return False
    return True


def _real_count(value: Any, where: str) -> None:
    """A real figure that is a count (real_counts' one walk)."""
    _real_figure(value, where)
    count(value, where)


def real_counts(*rest: Shape) -> Shape:
    """both(real_numbers, tree(count), *rest), the two trees' numbers found good by one walk where they are (each
    second's readings): one that is not is checked by each in turn, so that its error is the one they name."""
    each = both(real_numbers, tree(count), *rest)

    def check_real_counts(value: Any, where: str) -> None:
        if not _holds(value, _real_count):
            each(value, where)
            return
        for shape in rest:
            shape(value, where)
    return check_real_counts


def both(*shapes: Shape) -> Shape:
    def check_both(value: Any, where: str) -> None:
        for shape in shapes:
            shape(value, where)
    return check_both


def digits(value: Any, where: str) -> None:
    """A key that is a whole number written as a string (an interval's or a bucket's index)."""
    if not (isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 10):
        raise _wrong(value, where, "a whole number as a string")


def keyed(keys: Shape, values: Shape) -> Shape:
    """An object whose keys themselves have a shape (e.g. interval numbers)."""
    def check_keyed(value: Any, where: str) -> None:
        if not isinstance(value, dict):
            raise _wrong(value, where, "an object")
        for key, item in value.items():
            keys(key, _join(where, key) + " (its key)")
            values(item, _join(where, key))
    return check_keyed
