"""The table of a report model (pure): raw numbers and a kind per column saying how each reads."""

from __future__ import annotations

from typing import Any


def table(table_id: str, title: str, columns: list[str], kinds: list[str], rows: list[list[Any]],
          notes: list[str] | None = None) -> dict[str, Any]:
    return {"id": table_id, "title": title, "columns": columns, "kinds": kinds, "rows": rows, "notes": notes or []}


def present_sum(*values: float | None) -> float | None:
    """The values there are, added up; None when none is."""
    present = [v for v in values if v is not None]
    return sum(present) if present else None
