"""The read probe's MySQL/MariaDB side: single-row lookups timed by InnoDB itself.

MariaDB's ANALYZE FORMAT=JSON gives each table's r_engine_stats: the pages InnoDB read from its data files
for the statement and the time those reads took, timed inside InnoDB around each read (an older MariaDB's
reads without a time are counted as untimed). A lookup that read exactly one page gives that read's latency as InnoDB
saw it (the OS page cache
included unless innodb_flush_method reads with O_DIRECT). MySQL's EXPLAIN ANALYZE times no reads, and
performance_schema's per-read waits need consumers turned on server-wide, which dbio would have to undo: on
MySQL the probe says so and measures nothing.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from dbio.engines.base import ProbeRead
from dbio.engines.mysql import catalog, server, sqlfiles
from dbio.engines.mysql.connection import Connection
from dbio.errors import DbioError

PROBE_NAME = "dbio:probe"


def parse_analyze(doc: Any) -> ProbeRead:
    """Pages read and their read time over every table of an ANALYZE FORMAT=JSON (pure). MariaDB leaves out a
    counter that stayed 0; pages read with no time: untimed."""
    if isinstance(doc, str):
        doc = json.loads(doc)
    pages, ms, timed = 0, 0.0, True
    for stats in _engine_stats(doc):
        count = int(stats.get("pages_read_count", 0))
        pages += count
        if count and "pages_read_time_ms" not in stats:
            timed = False
        ms += float(stats.get("pages_read_time_ms", 0.0))
    return ProbeRead(blocks_read=pages, read_us=ms * 1000.0 if timed else None)


def parse_lookups(doc: Any, lookups: int) -> list[ProbeRead]:
    """Each lookup's pages and read time (pure), from the ANALYZE of a statement of `lookups` UNION ALL branches:
    each branch's query block in the order of its select_id (a statement of one branch: the whole)."""
    if isinstance(doc, str):
        doc = json.loads(doc)
    if lookups == 1:
        return [parse_analyze(doc)]
    union = _find(doc, "union_result") or {}
    blocks = [spec.get("query_block", spec) for spec in union.get("query_specifications", [])]
    blocks.sort(key=lambda block: int(block.get("select_id", 0)))
    if len(blocks) != lookups:
        raise DbioError(f"the probe's ANALYZE has {len(blocks)} lookups where it asked {lookups}")
    return [parse_analyze(block) for block in blocks]


def _find(node: Any, key: str) -> Any:
    if isinstance(node, dict):
        if key in node:
            return node[key]
        node = list(node.values())
    if isinstance(node, list):
        for item in node:
            found = _find(item, key)
            if found is not None:
                return found
    return None


def _engine_stats(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, dict):
        found = [node["r_engine_stats"]] if isinstance(node.get("r_engine_stats"), dict) else []
        return found + [s for key, value in node.items() if key != "r_engine_stats" for s in _engine_stats(value)]
    if isinstance(node, list):
        return [s for item in node for s in _engine_stats(item)]
    return []


def check(conn: Connection) -> None:
    """DbioError (why) when this server's ANALYZE times no page reads."""
    version = str(conn.one_row("SELECT VERSION()")[0])
    if server.product(version) != "MariaDB":
        raise DbioError("MySQL times no single read without performance_schema consumers turned on server-wide "
                        "(EXPLAIN ANALYZE gives no read time), which dbio does not change")


def statement(lookups: Sequence[int], keys: Sequence[int]) -> str:
    """The ANALYZE of one batch: a UNION ALL branch per lookup, on its schema's table, by its key (pure)."""
    branch = sqlfiles.statement("read_probe_lookup.sql")
    branches = [branch.replace("{table}", sqlfiles.ident(catalog.data_table(schema))).replace("{key}", str(int(key)))
                for schema, key in zip(lookups, keys, strict=True)]
    return sqlfiles.statement("read_probe.sql").replace("{lookups}", " UNION ALL ".join(branches))


def read_many(conn: Connection, keys: Sequence[int]) -> list[ProbeRead]:
    """The lookups of each key (on the connection's probe_lookups' tables), in order, in one statement."""
    return parse_lookups(conn.one_row(statement(conn.probe_lookups, keys))[0], len(keys))
