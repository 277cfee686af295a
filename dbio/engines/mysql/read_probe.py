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
from typing import Any

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


def read_one(conn: Connection, schema_index: int, key: int) -> ProbeRead:
    query = sqlfiles.statement("read_probe.sql").replace("{table}", sqlfiles.ident(catalog.data_table(schema_index)))
    return parse_analyze(conn.one_row(query, {"key": int(key)})[0])
