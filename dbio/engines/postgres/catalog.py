"""dbio's objects in a PostgreSQL database: the setup record, its schemas, teardown and verify.

Every object dbio creates carries a comment starting with "dbio:". dbio never alters or drops
an object without that tag, and never uses a schema with one of its names that lacks it.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from dbio import __version__
from dbio.engines.base import Check, SetupRecord, SetupSpec
from dbio.engines.postgres import sqlfiles
from dbio.errors import UsageError

CONTROL_SCHEMA = "dbio"
TAG_PREFIX = "dbio:"
DATA_TABLE = "cf1"
SCAN_TABLE = "cf2"
DATA_INDEX = "cf1_custid"
CONTROL_TABLES = ("setup", "setup_tables", "run_control", "pool")
POOL_BYTES = 64 * 1024


def tag(setup_id: str) -> str:
    return f"{TAG_PREFIX} created by dbio {__version__} for setup {setup_id}; dbio teardown removes it"


def data_schema(index: int) -> str:
    return f"dbio_{index}"


def table_location(kind: str, schema_index: int) -> tuple[str, str]:
    return (data_schema(schema_index), DATA_TABLE) if kind == "data" else (data_schema(1), SCAN_TABLE)


def _schema_tags(conn: psycopg.Connection, names: list[str]) -> dict[str, str | None]:
    rows = conn.execute(
        "SELECT nspname, obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = ANY(%s)",
        (names,)).fetchall()
    return {name: comment for name, comment in rows}


def _is_ours(comment: str | None) -> bool:
    return bool(comment) and comment.startswith(TAG_PREFIX)


def read_setup(conn: psycopg.Connection) -> SetupRecord | None:
    tags = _schema_tags(conn, [CONTROL_SCHEMA])
    if CONTROL_SCHEMA not in tags:
        return None
    if not _is_ours(tags[CONTROL_SCHEMA]):
        raise UsageError(f"this database has a schema named '{CONTROL_SCHEMA}' that dbio did not create",
                         "point dbio at another database (dbname=... in --dsn); dbio will not touch that schema")
    exists = conn.execute("SELECT to_regclass('dbio.setup') IS NOT NULL").fetchone()[0]
    if not exists:
        return None
    with conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute("SELECT * FROM dbio.setup").fetchone()
        if row is None:
            return None
        tables = cur.execute("SELECT * FROM dbio.setup_tables ORDER BY schema_name, table_name").fetchall()
    return SetupRecord(
        setup_id=row["setup_id"], spec=SetupSpec.from_dict(row["spec"]), status=row["status"],
        started_at=_iso(row["started_at"]), finished_at=_iso(row["finished_at"]), seconds=row["seconds"],
        loaded_bytes=row["loaded_bytes"], streams=row["streams"], steps=row["steps"] or {},
        dbio_version=row["dbio_version"], server_version=row["server_version"],
        tables_done=[{k: (_iso(v) if isinstance(v, datetime) else v) for k, v in t.items()} for t in tables])


def check_namespace(conn: psycopg.Connection, spec: SetupSpec) -> None:
    """Before creating anything: no schema dbio needs may belong to someone else."""
    names = [CONTROL_SCHEMA] + [data_schema(i) for i in range(1, spec.schemas + 1)]
    for name, comment in _schema_tags(conn, names).items():
        if not _is_ours(comment):
            raise UsageError(f"schema '{name}' exists in this database and was not created by dbio",
                             "point dbio at another database (dbname=... in --dsn); dbio will not touch that schema")
    can_create = conn.execute("SELECT has_database_privilege(current_database(), 'CREATE')").fetchone()[0]
    if not can_create:
        raise UsageError(f"role {conn.info.user} may not create schemas in database {conn.info.dbname}",
                         f"GRANT CREATE ON DATABASE {conn.info.dbname} TO {conn.info.user}, or connect as another role")


def begin_setup(conn: psycopg.Connection, spec: SetupSpec, *, setup_id: str, server_version: str) -> SetupRecord:
    """Create the control schema, the setup record (status loading) and the data schemas, atomically."""
    started = datetime.now(timezone.utc)
    literal = sql.Literal(tag(setup_id))
    with conn.transaction():
        if not _schema_tags(conn, [CONTROL_SCHEMA]):
            conn.execute(sqlfiles.composed("control.sql", tag=literal))
        conn.execute("DELETE FROM dbio.setup")
        conn.execute("DELETE FROM dbio.setup_tables")
        conn.execute(
            "INSERT INTO dbio.setup (setup_id, spec, status, started_at, dbio_version, server_version) "
            "VALUES (%s, %s, 'loading', %s, %s, %s)",
            (setup_id, json.dumps(spec.to_dict()), started, __version__, server_version))
        conn.execute("DELETE FROM dbio.pool")
        conn.execute("INSERT INTO dbio.pool (id, bytes) VALUES (1, %s)", (_random_bytes(POOL_BYTES),))
        existing = _schema_tags(conn, [data_schema(i) for i in range(1, spec.schemas + 1)])
        for i in range(1, spec.schemas + 1):
            name = data_schema(i)
            if name in existing:
                conn.execute(sql.SQL("COMMENT ON SCHEMA {} IS {}").format(sql.Identifier(name), literal))
            else:
                conn.execute(sqlfiles.composed("data_schema.sql", schema=sql.Identifier(name), tag=literal))
    return SetupRecord(setup_id=setup_id, spec=spec, status="loading", started_at=started.isoformat(),
                       dbio_version=__version__, server_version=server_version)


def finish_setup(conn: psycopg.Connection, record: SetupRecord) -> SetupRecord:
    finished = datetime.now(timezone.utc)
    conn.execute(
        "UPDATE dbio.setup SET status = 'ready', finished_at = %s, seconds = %s, loaded_bytes = %s, "
        "streams = %s, steps = %s",
        (finished, record.seconds, record.loaded_bytes, record.streams, json.dumps(record.steps)))
    record.status = "ready"
    record.finished_at = finished.isoformat()
    return record


def drop_table_if_ours(conn: psycopg.Connection, schema: str, table: str) -> None:
    comment = conn.execute(
        "SELECT obj_description(to_regclass(%s), 'pg_class')", (f"{_q(schema)}.{_q(table)}",)).fetchone()[0]
    exists = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (f"{_q(schema)}.{_q(table)}",)).fetchone()[0]
    if not exists:
        return
    if not _is_ours(comment):
        raise UsageError(f"table {schema}.{table} exists and was not created by dbio",
                         "remove or rename it yourself, or use another database; dbio will not touch it")
    conn.execute(sql.SQL("DROP TABLE {}.{}").format(sql.Identifier(schema), sql.Identifier(table)))


def teardown(conn: psycopg.Connection) -> tuple[list[str], list[str]]:
    """Drop what dbio created and nothing else: (dropped, kept with the reason)."""
    dropped: list[str] = []
    kept: list[str] = []
    rows = conn.execute(
        "SELECT nspname, obj_description(oid, 'pg_namespace') FROM pg_namespace "
        "WHERE nspname = 'dbio' OR nspname ~ '^dbio_[0-9]+$' ORDER BY nspname <> 'dbio', length(nspname), nspname"
    ).fetchall()
    ours = [name for name, comment in rows if _is_ours(comment)]
    kept += [f"schema {name} (not created by dbio)" for name, comment in rows if not _is_ours(comment)]
    for schema in [s for s in ours if s != CONTROL_SCHEMA] + [s for s in ours if s == CONTROL_SCHEMA]:
        _drop_tagged_objects(conn, schema, dropped, kept)
        try:
            with conn.transaction():
                conn.execute(sql.SQL("DROP SCHEMA {}").format(sql.Identifier(schema)))
            dropped.append(f"schema {schema}")
        except psycopg.errors.DependentObjectsStillExist:
            others = conn.execute(
                "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = %s AND c.relkind IN ('r','v','m','p','f','S') ORDER BY 1", (schema,)).fetchall()
            names = ", ".join(r[0] for r in others) or "objects"
            kept.append(f"schema {schema} (it holds objects dbio did not create: {names})")
    return dropped, kept


def _drop_tagged_objects(conn: psycopg.Connection, schema: str, dropped: list[str], kept: list[str]) -> None:
    tables = conn.execute(
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = %s AND c.relkind = 'r' AND obj_description(c.oid, 'pg_class') LIKE 'dbio:%%'",
        (schema,)).fetchall()
    for (table,) in tables:
        try:
            with conn.transaction():
                conn.execute(sql.SQL("DROP TABLE {}.{}").format(sql.Identifier(schema), sql.Identifier(table)))
            dropped.append(f"table {schema}.{table}")
        except psycopg.errors.DependentObjectsStillExist as exc:
            kept.append(f"table {schema}.{table} (objects dbio did not create depend on it: "
                        f"{(exc.diag.message_detail or '').splitlines()[0] if exc.diag.message_detail else 'see the server'})")
    procs = conn.execute(
        "SELECT p.oid::regprocedure::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
        "WHERE n.nspname = %s AND obj_description(p.oid, 'pg_proc') LIKE 'dbio:%%'", (schema,)).fetchall()
    for (signature,) in procs:
        conn.execute(sql.SQL("DROP ROUTINE {}").format(sql.SQL(signature)))
        dropped.append(f"procedure {signature.split('(')[0]}")


def verify(conn: psycopg.Connection, record: SetupRecord) -> list[Check]:
    """Prove the load: one row per block, every key once, a valid index, scattered keys, varied rows."""
    checks: list[Check] = []
    spec = record.spec
    if record.status != "ready":
        checks.append(Check("setup complete", False, f"status is {record.status}: the load was interrupted"))
    for i in range(1, spec.schemas + 1):
        schema = data_schema(i)
        checks += _verify_table(conn, schema, DATA_TABLE, spec.scale, spec.key_order, indexed=True)
    if spec.scan_table_blocks:
        checks += _verify_table(conn, data_schema(1), SCAN_TABLE, spec.scan_table_blocks, "contiguous", indexed=False)
    return checks


def _verify_table(conn: psycopg.Connection, schema: str, table: str, rows_expected: int, key_order: str,
                  *, indexed: bool) -> list[Check]:
    qualified = f"{_q(schema)}.{_q(table)}"
    name = f"{schema}.{table}"
    if not conn.execute("SELECT to_regclass(%s) IS NOT NULL", (qualified,)).fetchone()[0]:
        return [Check(f"{name} exists", False, "missing: run dbio setup")]
    ident = sql.SQL("{}.{}").format(sql.Identifier(schema), sql.Identifier(table))
    rows, blocks_with_rows, lo, hi, distinct_keys = conn.execute(sql.SQL(
        "SELECT count(*), count(DISTINCT (ctid::text::point)[0]), min(custid), max(custid), count(DISTINCT custid) "
        "FROM {}").format(ident)).fetchone()
    blocks = conn.execute("SELECT pg_relation_size(%s::regclass) / 8192", (qualified,)).fetchone()[0]
    checks = [
        Check(f"{name} rows", rows == rows_expected, f"{rows} rows (expected {rows_expected})"),
        Check(f"{name} one row per block", blocks_with_rows == rows,
              f"{rows} rows in {blocks_with_rows} distinct blocks; table has {blocks} blocks"
              + (f" ({blocks - rows} more from UPDATEs that could not stay in their block)" if blocks > rows else "")),
        Check(f"{name} keys 1..{rows_expected}", lo == 1 and hi == rows_expected and distinct_keys == rows,
              f"keys {lo}..{hi}, {distinct_keys} distinct"),
    ]
    sample = conn.execute(sql.SQL(
        "SELECT count(*), count(DISTINCT md5(filler)), min(length(filler)) FROM "
        "(SELECT filler FROM {} LIMIT 1000) s").format(ident)).fetchone()
    checks.append(Check(f"{name} rows varied", sample[0] == sample[1],
                        f"{sample[1]} distinct fillers of {sample[2]} bytes in {sample[0]} sampled rows"))
    if indexed:
        valid = conn.execute(
            "SELECT bool_and(i.indisvalid) FROM pg_index i WHERE i.indrelid = %s::regclass", (qualified,)).fetchone()[0]
        with conn.transaction():
            conn.execute("SET LOCAL enable_seqscan = off")
            conn.execute("SET LOCAL enable_bitmapscan = off")
            entries = conn.execute(sql.SQL("SELECT count(*) FROM {} WHERE custid >= 1").format(ident)).fetchone()[0]
        checks.append(Check(f"{name} index", bool(valid) and entries == rows,
                            f"{'valid' if valid else 'INVALID'}, {entries} entries for {rows} rows"))
        corr = conn.execute(
            "SELECT correlation FROM pg_stats WHERE schemaname = %s AND tablename = %s AND attname = 'custid'",
            (schema, table)).fetchone()
        corr_value = None if corr is None else corr[0]
        if key_order == "random":
            ok = corr_value is not None and abs(corr_value) < 0.1
            checks.append(Check(f"{name} keys scattered", ok,
                                f"key/block correlation {_fmt_corr(corr_value)} (random order: near 0)"))
        else:
            ok = corr_value is not None and corr_value > 0.9
            checks.append(Check(f"{name} keys contiguous", ok,
                                f"key/block correlation {_fmt_corr(corr_value)} (contiguous order: near 1)"))
    return checks


def _fmt_corr(value: float | None) -> str:
    return "unknown (run ANALYZE)" if value is None else f"{value:+.3f}"


def _q(ident: str) -> str:
    return '"' + ident.replace('"', '""') + '"'


def _iso(value: Any) -> str | None:
    return value.isoformat() if isinstance(value, datetime) else value


def _random_bytes(n: int) -> bytes:
    import os

    return os.urandom(n)
