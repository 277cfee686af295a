"""Whether a server may take dbio's writes. dbio creates tables, procedures and run records; on a
replica they would make it differ from its source (and a later load on the source, replicated,
would collide with them and stop replication), and a server set read_only was declared so by its
administrator, whose users with SUPER still could write. dbio refuses both before writing."""

from __future__ import annotations

import pymysql

from dbio.engines.mysql.connection import Connection

NOT_ALLOWED = (1227, 1045, 1142)  # the user may not see replication status
NO_SUCH_STATEMENT = 1064  # a MySQL 8.0 before 8.0.22 knows only SHOW SLAVE STATUS


def sources(conn: Connection, product: str) -> list[str] | None:
    """The sources this server is set to replicate from ('host:port', running or not), [] for none,
    None when the user may not see replication status."""
    statements = ["SHOW ALL REPLICAS STATUS"] if product == "MariaDB" else ["SHOW REPLICA STATUS", "SHOW SLAVE STATUS"]
    for sql in statements:
        try:
            with conn.raw.cursor(pymysql.cursors.DictCursor) as cur:
                cur.execute(sql)
                return [source_of(row) for row in cur.fetchall() or []]
        except pymysql.err.MySQLError as exc:
            code = exc.args[0] if exc.args else None
            if code in NOT_ALLOWED:
                return None
            if code != NO_SUCH_STATEMENT:
                raise
    return None


def source_of(row: dict) -> str:
    """'host:port' of a replication status row, in either generation's column names (pure)."""
    host = row.get("Source_Host", row.get("Master_Host")) or "?"
    port = row.get("Source_Port", row.get("Master_Port"))
    return f"{host}:{port}" if port else str(host)


def why_not_writable(read_only: str | None, super_read_only: str | None,
                     replicates_from: list[str] | None) -> str | None:
    """Why dbio must not write to this server, or None (pure)."""
    if replicates_from:
        return f"is a replica of {', '.join(sorted(set(replicates_from)))}"
    if (super_read_only or "").upper() in ("ON", "1"):
        return "is read-only (super_read_only = ON)"
    if (read_only or "").upper() in ("ON", "1"):
        return "is read-only (read_only = ON)"
    return None
