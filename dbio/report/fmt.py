"""Number formatting and plain-text tables for reports (pure)."""

from __future__ import annotations

from typing import Any, Sequence


def num(value: Any, digits: int = 0) -> str:
    if value is None:
        return "-"
    if isinstance(value, (int, float)):
        if digits == 0:
            return f"{value:,.0f}"
        return f"{value:,.{digits}f}"
    return str(value)


def smart(value: Any) -> str:
    """Three significant figures for small numbers, thousands separators for large ones."""
    if value is None:
        return "-"
    v = float(value)
    if abs(v) >= 100 or v == 0:
        return f"{v:,.0f}"
    if abs(v) >= 10:
        return f"{v:,.1f}"
    return f"{v:,.2f}"


def us(value: Any) -> str:
    if value is None:
        return "-"
    v = float(value)
    if v >= 1_000_000:
        return f"{v / 1_000_000:.2f} s"
    if v >= 10_000:
        return f"{v / 1000:,.1f} ms"
    return f"{v:,.0f} us"


US_UNITS = {"us": 1, "ms": 1000, "s": 1_000_000}


def us_row_kind(values: Sequence[Any]) -> str:
    """One unit for a row of microsecond values (a figure beside its delta): the unit us() would
    pick for the largest of them, as a kind cell() reads ("us:ms")."""
    largest = max((abs(float(v)) for v in values if isinstance(v, (int, float))), default=0.0)
    return "us:s" if largest >= 1_000_000 else "us:ms" if largest >= 10_000 else "us:us"


def us_in(value: Any, unit: str) -> str:
    if value is None:
        return "-"
    v = float(value) / US_UNITS[unit]
    return f"{v:,.0f} us" if unit == "us" else f"{v:,.1f} ms" if unit == "ms" else f"{v:,.2f} s"


def pct(value: Any, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}%"


def seconds(value: Any) -> str:
    return "-" if value is None else f"{value:,.1f}"


def cell(value: Any, kind: str) -> str:
    """One table cell: kind says how the raw value reads (a 'mixed' cell carries its own kind)."""
    if isinstance(value, dict) and "kind" in value:
        return cell(value.get("value"), value["kind"])
    if value is None:
        return "-"
    if kind == "text":
        return str(value)
    if kind == "count":
        return num(value)
    if kind == "us":
        return us(value)
    if kind.startswith("us:"):
        return us_in(value, kind[3:])
    if kind == "pct":
        return pct(value)
    if kind == "delta_pct":
        return f"{value:+.1f}%"
    if kind == "seconds":
        return seconds(value)
    if kind == "money":
        return f"{value:,.2f}"
    return smart(value)


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], indent: int = 2,
          kinds: Sequence[str] | None = None) -> list[str]:
    """Text left-aligned, numbers right-aligned (without kinds: the first column is the text)."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    left = [k == "text" for k in kinds] if kinds else [i == 0 for i in range(len(headers))]
    lines = []
    for n, row in enumerate(cells):
        parts = [c.ljust(w) if is_left else c.rjust(w) for c, w, is_left in zip(row, widths, left)]
        lines.append(" " * indent + "  ".join(parts).rstrip())
        if n == 0:
            lines.append(" " * indent + "  ".join("-" * w for w in widths))
    return lines


def heading(title: str) -> list[str]:
    return ["", title, "=" * len(title)]


def not_measured(missing: list[dict[str, Any]]) -> str:
    """The figures a run could not measure, named in one line (why is in the Verdict section)."""
    return "; ".join(str(m.get("figure")) for m in missing) + " (why: see Verdict and warnings)"
