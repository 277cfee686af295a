"""The options only the MySQL engine has: its managed local instance ([instance]), and the record
Config.instance holds for it. Imported to assemble the option table: it imports no driver."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dbio.option import MAKES, SETTINGS, Option

_MiB = 1 << 20

PAGE_SIZES = {"4k": 4096, "8k": 8192, "16k": 16384}

OPTIONS: tuple[Option, ...] = (
    Option("buffer_pool", "instance", "size", 128 * _MiB,
           "InnoDB buffer pool of the managed MariaDB/MySQL instance (innodb_buffer_pool_size); keep it small so "
           "reads reach storage.", min=8 * _MiB, max=1 << 40, commands=SETTINGS),
    Option("innodb_page_size", "instance", "choice", None,
           "InnoDB page size of the managed MariaDB/MySQL instance, fixed when it is created: 16k (InnoDB's "
           "default, used when not given), 8k (PostgreSQL's block size) or 4k; each row takes a page of its "
           "own at every size.",
           choices=tuple(PAGE_SIZES), commands=SETTINGS),
    Option("galera", "instance", "int", 0,
           "Nodes of a MariaDB Galera cluster (multi-writer) made as the managed instance, each with its own "
           "data directory, socket and loopback Galera and SST ports; a run then uses every node (see --nodes). "
           "0: a single server. Fixed when the instance is created.", min=0, max=9, commands=MAKES),
    Option("galera_data_dir", "instance", "strs", None,
           "Directory for a Galera node's files (repeat it: the first for node1, and so on), e.g. on a device "
           "of its own; fixed when the instance is created (default: inside the instance's directory).",
           commands=MAKES),
)
# A sweep may vary the buffer pool: the managed server restarts with it.
RESTART_KNOBS: dict[str, str] = {"buffer_pool": "bp"}
LAYOUT_KNOBS: dict[str, str] = {}  # no layout options yet
# Remembered by the instance's record for later commands (config_resolver.py); the page size
# is fixed when the instance is made.
REMEMBERED = tuple(RESTART_KNOBS)


@dataclass(frozen=True)
class InstanceConfig:
    """The managed MariaDB/MySQL instance's options, as Config.instance holds them."""

    data_dir: Path
    buffer_pool: int = 128 * _MiB
    innodb_page_size: str | None = None  # None: 16k for a new instance, as it is for an existing one
    galera: int = 0  # nodes of a Galera cluster made with the instance; 0: one server
    galera_data_dir: tuple[Path, ...] = ()  # one per node, in order; the rest inside the instance

    @property
    def cache_bytes(self) -> int:
        """The buffer cache the instance runs with (its running server may still have another)."""
        return self.buffer_pool

    @property
    def direct_io(self) -> bool:
        """Whether it reads its data files with direct I/O: always (innodb_flush_method O_DIRECT, loads too)."""
        return True

    def to_dict(self) -> dict[str, Any]:
        return {"data_dir": str(self.data_dir), "buffer_pool": self.buffer_pool,
                "innodb_page_size": self.innodb_page_size, "galera": self.galera,
                "galera_data_dir": [str(d) for d in self.galera_data_dir] or None}
