"""Parsing and formatting of sizes, block counts, durations and percentages (pure)."""

from __future__ import annotations

import math
import re

BLOCK_SIZE = 8192

# Binary multipliers for every spelling, as PostgreSQL and SLOB use them (1GB = 1 GiB).
_SIZE_UNITS = {
    "": 1, "b": 1,
    "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
    "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
    "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30,
    "t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40,
}
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?|\.\d+)\s*([a-zA-Z]*)\s*$")

_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0}
_DURATION_PART_RE = re.compile(r"(\d+(?:\.\d+)?|\.\d+)\s*(ms|sec|min|s|m|h|d)")


class UnitError(ValueError):
    """A value that does not parse; the message says what was expected."""


def parse_size(value: object) -> int:
    """Bytes from an integer (bytes) or a string such as '4GiB', '800M', '512kB'."""
    if isinstance(value, bool):
        raise UnitError("expected a size such as 4GiB or 800MB")
    if isinstance(value, int):
        if value < 0:
            raise UnitError("a size cannot be negative")
        return value
    if isinstance(value, float):
        raise UnitError("expected a size with a unit, such as 4GiB")
    m = _SIZE_RE.match(str(value))
    if not m:
        raise UnitError("expected a size such as 4GiB, 800MB or 512KiB")
    number, unit = m.groups()
    mult = _SIZE_UNITS.get(unit.lower())
    if mult is None:
        raise UnitError(f"unknown size unit '{unit}' (use KiB, MiB, GiB or TiB)")
    size = float(number) * mult
    if not math.isfinite(size):  # float("9" * 400) is infinity
        raise UnitError("is beyond any size dbio takes")
    if not size.is_integer() and mult == 1:
        raise UnitError("a size in bytes must be a whole number")
    return int(size)


def parse_blocks(value: object) -> int:
    """8 KiB blocks: a bare integer is a block count (as in SLOB); a size with a unit is converted."""
    if isinstance(value, bool):
        raise UnitError("expected a block count or a size such as 4GiB")
    if isinstance(value, int):
        if value < 0:
            raise UnitError("a block count cannot be negative")
        return value
    text = str(value).strip()
    if text.isascii() and text.isdigit():
        return _whole(text)
    return parse_size(text) // BLOCK_SIZE


def parse_duration(value: object) -> float:
    """Seconds from a number (seconds) or a string such as '300', '30s', '5m', '8h', '1h30m', '500ms'."""
    if isinstance(value, bool):
        raise UnitError("expected a duration such as 300s, 5m or 8h")
    if isinstance(value, (int, float)):
        if value < 0 or math.isnan(value):
            raise UnitError("a duration cannot be negative")
        return float(value)
    text = str(value).strip().lower().replace(" ", "")
    if re.fullmatch(r"\d+(\.\d+)?|\.\d+", text):
        return float(text)
    pos, total = 0, 0.0
    for m in _DURATION_PART_RE.finditer(text):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _DURATION_UNITS[m.group(2)]
        pos = m.end()
    if pos != len(text) or not text:
        raise UnitError("expected a duration such as 300s, 5m, 1h30m or 500ms")
    return total


def parse_instant(value: object) -> float:
    """Epoch seconds from an ISO 8601 time with its zone ('2026-11-22T19:00:00Z', '...+01:00'): an
    instant every host reads the same, so a time without a zone is refused."""
    from datetime import datetime, timezone

    text = str(value).strip()
    if isinstance(value, bool) or not text:
        raise UnitError("expected a time such as 2026-11-22T19:00:00Z")
    try:
        moment = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
    except ValueError:
        raise UnitError("expected an ISO 8601 time such as 2026-11-22T19:00:00Z") from None
    if moment.tzinfo is None:
        raise UnitError("the time has no zone: add Z (UTC) or an offset such as +01:00")
    try:  # 9999-12-31T23:00:00-05:00 is a year the calendar does not hold in UTC
        datetime.fromtimestamp(moment.timestamp(), timezone.utc)
    except (ValueError, OverflowError, OSError):
        raise UnitError("is beyond the calendar's years 1 to 9999 in UTC") from None
    return moment.timestamp()


def parse_bool(value: object) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on", "y", "t"):
        return True
    if text in ("0", "false", "no", "off", "n", "f"):
        return False
    raise UnitError("expected true or false")


def parse_int(value: object) -> int:
    if isinstance(value, bool):
        raise UnitError("expected a whole number")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if value.is_integer():
            return int(value)
        raise UnitError("expected a whole number")
    text = str(value).strip().replace("_", "")
    if re.fullmatch(r"[+-]?\d+", text):
        return _whole(text)
    raise UnitError("expected a whole number")


MAX_DIGITS = 30  # no count dbio takes is near this long; int() of 5000 digits is Python's ValueError


def _whole(digits: str) -> int:
    if len(digits.lstrip("+-")) > MAX_DIGITS:
        raise UnitError(f"a number of {len(digits.lstrip('+-'))} digits, beyond any value dbio takes")
    return int(digits)


def format_bytes(n: float) -> str:
    """Human size with binary units: 4.0 GiB, 128 MiB, 8 KiB."""
    for unit, mult in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(n) >= mult:
            value = n / mult
            return f"{value:.0f} {unit}" if value.is_integer() else f"{value:.1f} {unit}"
    return f"{n:.0f} B"


def format_duration(seconds: float) -> str:
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 120:
        return f"{seconds:.1f} s" if not float(seconds).is_integer() else f"{seconds:.0f} s"
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours}h{minutes:02d}m{secs:02d}s"
    return f"{minutes}m{secs:02d}s"
