"""Control characters: refused in what the user gives, made visible in what dbio shows (pure).

A label, a node name, a path, a server's version, a setting or an error message read back from a
result or a server may hold an escape sequence (which recolours, moves the cursor, retitles the
window or rewrites a line when printed to a terminal) or a bidirectional override (which shows
text in another order than it is read). Options refuse them (`problem`); what dbio prints and
writes as text shows each as a visible character instead (`visible`, `visible_tree`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

# C0, DEL and C1; the bidirectional embeddings, overrides (U+202A..U+202E) and isolates (U+2066..U+2069)
_C0, _DEL, _C1 = range(0x00, 0x20), 0x7F, range(0x80, 0xA0)
_BIDI = (*range(0x202A, 0x202F), *range(0x2066, 0x206A))
_UNDECODED = range(0xD800, 0xE000)  # bytes that are not UTF-8, as Python keeps them (surrogateescape)

# Each shown as one character, so that widths (a text table's columns) and rich's styled spans stay
# where they were: a C0 character as its Control Picture (ESC as U+241B), DEL as U+2421, the others as
# the replacement character.
_SHOWN = {**{code: 0x2400 + code for code in _C0}, _DEL: 0x2421,
          **{code: 0xFFFD for code in (*_C1, *_BIDI, *_UNDECODED)}}

LINE_BREAKS = "\n\t"  # what a terminal's or a file's own lines are made of


def problem(text: str) -> str | None:
    """What is wrong with text a user gave, when it holds a control character (None: nothing)."""
    for char in text:
        if ord(char) in _UNDECODED:
            return "contains bytes that are not UTF-8 text"
        if ord(char) in _SHOWN:
            return f"contains a control character (U+{ord(char):04X})"
    return None


def visible(text: str, keep: str = "") -> str:
    """text with every control character shown as a visible one, but those in keep (e.g. LINE_BREAKS)."""
    return text.translate(_table(keep))


@lru_cache(maxsize=8)
def _table(keep: str) -> dict[int, int]:
    return {code: shown for code, shown in _SHOWN.items() if chr(code) not in keep}


def visible_tree(value: Any) -> Any:
    """A report model (dicts, lists, tuples) with every string in it, keys too, made visible."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, dict):
        return {visible_tree(key): visible_tree(item) for key, item in value.items()}
    if isinstance(value, list):
        return [visible_tree(item) for item in value]
    if isinstance(value, tuple):
        return tuple(visible_tree(item) for item in value)
    return value
