"""The options only the MySQL engine has, and the record Config.instance holds for it.

This first step works on an existing server (--dsn); the managed local instance comes later,
so it declares no option yet. Imported to assemble the option table: it imports no driver."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dbio.option import Option

OPTIONS: tuple[Option, ...] = ()
RESTART_KNOBS: dict[str, str] = {}
LAYOUT_KNOBS: dict[str, str] = {}


@dataclass(frozen=True)
class InstanceConfig:
    """No managed instance yet: only where one would live."""

    data_dir: Path

    def to_dict(self) -> dict[str, Any]:
        return {"data_dir": str(self.data_dir)}
