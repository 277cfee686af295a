"""dbio's objects in a PostgreSQL database: the setup record, its schemas, teardown and verify.

Every object dbio creates carries a comment naming the setup it belongs to (tag()). The control
schema "dbio" and its setup table name the same setup, which their record holds: that setup's
tag, and no other, marks dbio's objects. A comment that only looks like dbio's (it begins with
"dbio:", or names another setup) marks nothing: dbio never alters or drops such an object, never
uses a schema with one of its names that is not its own, and names what it leaves in place.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from dbio import __version__
from dbio.engines.base import Check, SetupRecord, SetupSpec, TableJob, Teardown
from dbio.engines.postgres import sqlfiles
from dbio.engines.postgres.rows import one_row
from dbio.errors import UsageError

CONTROL_SCHEMA = "dbio"
DATA_TABLE = "cf1"
SCAN_TABLE = "cf2"
DATA_INDEX = "cf1_custid"
SETUP_TABLE = "setup"
POOL_BYTES = 64 * 1024
_TAG = re.compile(r"dbio: created by dbio \S+ for setup ([0-9a-f]{12}); dbio teardown removes it")
_SCHEMA_NAME = re.compile(r"dbio(_[0-9]+)?")
# How dbio tagged its work loop before its tags named the setup: trusted in dbio's own schema only.
LEGACY_LOOP_TAG = "dbio: the work loop (created by dbio; dbio teardown removes it)"


def tag(setup_id: str) -> str:
    return f"dbio: created by dbio {__version__} for setup {setup_id}; dbio teardown removes it"


def tag_id(comment: str | None) -> str | None:
    """The setup a comment tags its object for; None when it is not a tag dbio writes."""
    match = _TAG.fullmatch(comment or "")
    return match.group(1) if match else None


def control_owner(schema_tag: str | None, record_tag: str | None, recorded_ids: list[str]) -> str | None:
    """The setup dbio's control schema belongs to: its tag, its setup table's tag and the setup
    record (empty after a teardown that had to keep the schema) must all name it."""
    owner = tag_id(schema_tag)
    if owner is None or tag_id(record_tag) != owner or any(i != owner for i in recorded_ids):
        return None
    return owner


def is_dbio_schema_name(name: str) -> bool:
    return _SCHEMA_NAME.fullmatch(name) is not None


def data_schema(index: int) -> str:
    return f"dbio_{index}"


def table_location(kind: str, schema_index: int) -> tuple[str, str]:
    return (data_schema(schema_index), DATA_TABLE) if kind == "data" else (data_schema(1), SCAN_TABLE)


def partition_name(part: int) -> str:
    return f"{DATA_TABLE}_p{part}"


def part_of(table: str) -> int:
    """The part number of a split table's part (cf1_p2 -> 2); 0 for any other table (pure)."""
    prefix = f"{DATA_TABLE}_p"
    rest = table[len(prefix):] if table.startswith(prefix) else ""
    return int(rest) if rest.isdigit() else 0


def job_table(job: TableJob) -> tuple[str, str]:
    """Where a load job's table is: a part of the split table is a table of its own in schema 1."""
    return (data_schema(1), partition_name(job.part)) if job.part else table_location(job.kind, job.schema_index)


def index_name(job: TableJob) -> str:
    return f"{partition_name(job.part)}_custid" if job.part else DATA_INDEX


def _schema_tags(conn: psycopg.Connection, names: list[str]) -> dict[str, str | None]:
    rows = conn.execute(
        "SELECT nspname, obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = ANY(%s)",
        (names,)).fetchall()
    return {name: comment for name, comment in rows}


def _owner(conn: psycopg.Connection) -> tuple[bool, str | None]:
    """(whether schema dbio exists, the setup it belongs to: None when it is not dbio's)."""
    row = conn.execute(sqlfiles.text("owner_of_control.sql")).fetchone()
    if row is None:
        return False, None
    schema_tag, record_tag = row
    if control_owner(schema_tag, record_tag, []) is None:
        return True, None
    recorded = [r[0] for r in conn.execute("SELECT setup_id FROM dbio.setup").fetchall()]
    return True, control_owner(schema_tag, record_tag, recorded)


def owner(conn: psycopg.Connection) -> str | None:
    """The setup dbio's objects in this database belong to (None: there is none)."""
    return _owner(conn)[1]


def _foreign_control_schema() -> UsageError:
    return UsageError(f"this database has a schema named '{CONTROL_SCHEMA}' that dbio did not create "
                      "(or whose setup record is gone)",
                      "point dbio at another database (dbname=... in --dsn), or move what that schema holds and "
                      "drop it yourself; dbio will not touch it")


def read_setup(conn: psycopg.Connection) -> SetupRecord | None:
    exists, setup_id = _owner(conn)
    if not exists:
        return None
    if setup_id is None:
        raise _foreign_control_schema()
    with conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute("SELECT * FROM dbio.setup").fetchone()
        if row is None:
            return None
        tables = cur.execute("SELECT * FROM dbio.setup_tables ORDER BY schema_name, table_name").fetchall()
    return SetupRecord(  # started_at: NOT NULL in dbio.setup
        setup_id=row["setup_id"], spec=SetupSpec.from_dict(row["spec"]), status=row["status"],
        started_at=row["started_at"].isoformat(), finished_at=_iso(row["finished_at"]), seconds=row["seconds"],
        loaded_bytes=row["loaded_bytes"], streams=row["streams"], steps=row["steps"] or {},
        dbio_version=row["dbio_version"], server_version=row["server_version"],
        tables_done=[{k: (_iso(v) if isinstance(v, datetime) else v) for k, v in t.items()} for t in tables])


def places_of_setup(conn: psycopg.Connection) -> tuple[str, ...]:
    """The directories (data_dirs) the load dbio records in this database spread its tables over: its
    tablespaces are there. None when nothing of dbio's is recorded here (or it is not dbio's)."""
    try:
        record = read_setup(conn)
    except UsageError:  # a schema dbio that dbio did not create
        return ()
    return record.spec.places if record is not None else ()


def check_namespace(conn: psycopg.Connection, spec: SetupSpec) -> None:
    """Before creating anything: no schema or control table dbio needs may belong to someone else."""
    exists, setup_id = _owner(conn)
    if exists and setup_id is None:
        raise _foreign_control_schema()
    names = [data_schema(i) for i in range(1, spec.schemas + 1)]
    for name, comment in _schema_tags(conn, names).items():
        if setup_id is None or tag_id(comment) != setup_id:
            raise UsageError(f"schema '{name}' exists in this database and was not created by dbio "
                             "(or is left from a load dbio no longer records)",
                             f"move what it holds elsewhere and drop it (DROP SCHEMA {name}), or point dbio at "
                             "another database (dbname=... in --dsn)")
    if exists:
        for table in ("setup_tables", "run_control", "pool"):
            comment = one_row(conn, "SELECT obj_description(to_regclass(%s), 'pg_class')", (f"dbio.{table}",))[0]
            present = one_row(conn, "SELECT to_regclass(%s) IS NOT NULL", (f"dbio.{table}",))[0]
            if present and tag_id(comment) != setup_id:
                raise UsageError(f"table dbio.{table} exists in dbio's schema and was not created by dbio",
                                 "move it elsewhere or drop it yourself; dbio will not touch it")
    can_create = one_row(conn, "SELECT has_database_privilege(current_database(), 'CREATE')")[0]
    if not can_create:
        raise UsageError(f"role {conn.info.user} may not create schemas in database {conn.info.dbname}",
                         f"GRANT CREATE ON DATABASE {conn.info.dbname} TO {conn.info.user}, or connect as another role")


def begin_setup(conn: psycopg.Connection, spec: SetupSpec, *, setup_id: str, server_version: str) -> SetupRecord:
    """Create the control schema, the setup record (status loading) and the data schemas, atomically."""
    started = datetime.now(timezone.utc)
    literal = sql.Literal(tag(setup_id))
    with conn.transaction():
        exists, previous = _owner(conn)
        if not exists:
            conn.execute(sqlfiles.composed("control.sql", tag=literal))
        elif previous is not None:
            _retag(conn, previous, setup_id)  # a control schema teardown kept: now this setup's
        else:
            raise _foreign_control_schema()
        conn.execute(sqlfiles.composed("control_tables.sql", tag=literal))
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
            if data_schema(i) not in existing:
                conn.execute(sqlfiles.composed("data_schema.sql", schema=sql.Identifier(data_schema(i)), tag=literal))
        if spec.partitions:  # its parts attach to it as they are loaded, each in its own transaction
            drop_table_if_ours(conn, data_schema(1), DATA_TABLE, setup_id)
            conn.execute(sqlfiles.composed("data_parent.sql", schema=sql.Identifier(data_schema(1)),
                                           table=sql.Identifier(DATA_TABLE), tag=literal))
    return SetupRecord(setup_id=setup_id, spec=spec, status="loading", started_at=started.isoformat(),
                       dbio_version=__version__, server_version=server_version)


def _retag(conn: psycopg.Connection, old: str, new: str) -> None:
    """dbio's schemas tagged for setup old become setup new's (control_tables.sql tags its tables)."""
    for name, comment in conn.execute(
            "SELECT nspname, obj_description(oid, 'pg_namespace') FROM pg_namespace "
            "WHERE nspname ~ '^dbio(_[0-9]+)?$'").fetchall():
        if tag_id(comment) == old:
            conn.execute(sql.SQL("COMMENT ON SCHEMA {} IS {}").format(sql.Identifier(name), sql.Literal(tag(new))))


def finish_setup(conn: psycopg.Connection, record: SetupRecord) -> SetupRecord:
    finished = datetime.now(timezone.utc)
    conn.execute(
        "UPDATE dbio.setup SET status = 'ready', finished_at = %s, seconds = %s, loaded_bytes = %s, "
        "streams = %s, steps = %s",
        (finished, record.seconds, record.loaded_bytes, record.streams, json.dumps(record.steps)))
    record.status = "ready"
    record.finished_at = finished.isoformat()
    return record


def drop_table_if_ours(conn: psycopg.Connection, schema: str, table: str, setup_id: str) -> None:
    qualified = f"{_q(schema)}.{_q(table)}"
    exists = one_row(conn, "SELECT to_regclass(%s) IS NOT NULL", (qualified,))[0]
    if not exists:
        return
    comment = one_row(conn, "SELECT obj_description(to_regclass(%s), 'pg_class')", (qualified,))[0]
    if tag_id(comment) != setup_id:
        raise UsageError(f"table {schema}.{table} exists and was not created by this dbio setup",
                         "remove or rename it yourself, or use another database; dbio will not touch it")
    conn.execute(sql.SQL("DROP TABLE {}.{}").format(sql.Identifier(schema), sql.Identifier(table)))


def default_schema_clash(conn: psycopg.Connection) -> str | None:
    """The schema of dbio's that "$user" in this session's search_path names, if any: objects the
    role creates without naming a schema would land in it."""
    user, search_path = one_row(conn, "SELECT current_user, current_setting('search_path')")
    return user if is_dbio_schema_name(user) and reaches_user_schema(search_path, user) else None


def reaches_user_schema(search_path: str, user: str) -> bool:
    entries = [entry.strip().strip('"') for entry in search_path.split(",")]
    return "$user" in entries or user in entries


def keep_default_schema_out(conn: psycopg.Connection) -> bool:
    """For a role that dbio owns (the embedded superuser): make its default schema public, not
    dbio's schema of the same name; True when that was changed now."""
    clash = default_schema_clash(conn)
    if clash is None:
        return False
    conn.execute(sql.SQL("ALTER ROLE {} SET search_path = public").format(sql.Identifier(clash)))
    return True


def teardown(conn: psycopg.Connection) -> Teardown:
    """Drop what dbio created and nothing else; name what goes with it and what stays."""
    done = Teardown()
    conn.execute("SET search_path = pg_catalog")  # objects are described with their schema
    try:
        exists, setup_id = _owner(conn)
        if exists and setup_id is None:
            done.kept.append(f"schema {CONTROL_SCHEMA} (not created by dbio)")
        rows = conn.execute(
            "SELECT nspname, obj_description(oid, 'pg_namespace') FROM pg_namespace "
            "WHERE nspname ~ '^dbio_[0-9]+$' ORDER BY length(nspname), nspname").fetchall()
        ours = [name for name, comment in rows if setup_id is not None and tag_id(comment) == setup_id]
        done.kept += [f"schema {name} (not created by dbio, or left from a load dbio no longer records)"
                      for name, _ in rows if name not in ours]
        if setup_id is not None:  # else none is ours: nothing of dbio's to drop
            kept_data = [schema for schema in ours if not _drop_schema(conn, schema, setup_id, done)]
            _drop_control(conn, setup_id, kept_data, done)
    finally:
        conn.execute("RESET search_path")
    return done


def _drop_schema(conn: psycopg.Connection, schema: str, setup_id: str, done: Teardown) -> bool:
    """Drop a data schema's tagged tables and routines, then the schema if nothing else is left."""
    _drop_tagged_objects(conn, schema, setup_id, done)
    foreign = _foreign_members(conn, schema, setup_id)
    if foreign:
        done.kept.append(f"schema {schema} (it holds objects dbio did not create: {', '.join(foreign)})")
        return False
    try:
        with conn.transaction():
            conn.execute(sql.SQL("DROP SCHEMA {}").format(sql.Identifier(schema)))
    except psycopg.errors.DependentObjectsStillExist as exc:  # something schema_members.sql does not list
        done.kept.append(f"schema {schema} (it holds objects dbio did not create: "
                         f"{(exc.diag.message_detail or 'see the server').splitlines()[0]})")
        return False
    done.dropped.append(f"schema {schema}")
    return True


def _drop_control(conn: psycopg.Connection, setup_id: str, kept_data: list[str], done: Teardown) -> None:
    """The control schema goes last. It stays, with an empty setup record, while it holds something
    dbio did not create, or while a data schema stays: dbio then still knows them as its own."""
    _drop_tagged_objects(conn, CONTROL_SCHEMA, setup_id, done, spare=SETUP_TABLE)
    foreign = _foreign_members(conn, CONTROL_SCHEMA, setup_id)
    if foreign or kept_data:
        conn.execute("DELETE FROM dbio.setup")
        several = len(kept_data) > 1
        why = (f"it holds objects dbio did not create: {', '.join(foreign)}" if foreign else
               f"schema{'s' if several else ''} {', '.join(kept_data)} stay{'' if several else 's'}")
        done.kept.append(f"schema {CONTROL_SCHEMA} with an empty setup record ({why}; "
                         "dbio setup uses it again, dbio teardown drops it once that is gone)")
        return
    with conn.transaction():
        conn.execute(sql.SQL("DROP TABLE dbio.{}").format(sql.Identifier(SETUP_TABLE)))
        conn.execute(sql.SQL("DROP SCHEMA {}").format(sql.Identifier(CONTROL_SCHEMA)))
    done.dropped += [f"table dbio.{SETUP_TABLE}", f"schema {CONTROL_SCHEMA}"]


def _foreign_members(conn: psycopg.Connection, schema: str, setup_id: str) -> list[str]:
    rows = conn.execute(sqlfiles.text("schema_members.sql"), {"schema": schema}).fetchall()
    return [obj for _, _, obj, comment in rows if tag_id(comment) != setup_id]


def _drop_tagged_objects(conn: psycopg.Connection, schema: str, setup_id: str, done: Teardown,
                         spare: str | None = None) -> None:
    tables = [table for (table, comment) in conn.execute(
        "SELECT c.relname, obj_description(c.oid, 'pg_class') FROM pg_class c "
        "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind IN ('r', 'p') "
        "AND NOT c.relispartition ORDER BY 1",
        (schema,)).fetchall() if tag_id(comment) == setup_id and table != spare]
    for table in tables:
        qualified = f"{_q(schema)}.{_q(table)}"
        try:
            with conn.transaction():
                going = [obj for obj, comment in conn.execute(sqlfiles.text("table_dependents.sql"),
                                                              {"table": qualified}).fetchall()
                         if tag_id(comment) != setup_id]
                conn.execute(sql.SQL("DROP TABLE {}.{}").format(sql.Identifier(schema), sql.Identifier(table)))
            done.dropped.append(f"table {schema}.{table}")
            done.with_it += [f"{obj} (not created by dbio), with table {schema}.{table}" for obj in going]
        except psycopg.errors.DependentObjectsStillExist as exc:
            detail = exc.diag.message_detail
            done.kept.append(f"table {schema}.{table} (objects dbio did not create depend on it: "
                             f"{detail.splitlines()[0] if detail else 'see the server'})")
    routines = conn.execute(
        "SELECT p.oid::regprocedure::text, obj_description(p.oid, 'pg_proc') FROM pg_proc p "
        "JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = %s", (schema,)).fetchall()
    for signature, comment in routines:
        if tag_id(comment) == setup_id or (schema == CONTROL_SCHEMA and comment == LEGACY_LOOP_TAG):
            conn.execute(sql.SQL("DROP ROUTINE {}").format(sql.SQL(signature)))
            done.dropped.append(f"procedure {signature.split('(')[0]}")


def verify(conn: psycopg.Connection, record: SetupRecord) -> list[Check]:
    """Prove the load: one row per block, every key once, a valid index, scattered keys, varied rows."""
    checks: list[Check] = []
    spec = record.spec
    if record.status != "ready":
        checks.append(Check("setup complete", False, f"status is {record.status}: the load was interrupted"))
    if spec.partitions:  # each part is a table of its own: rows = blocks, its keys, its index
        for part, keys in enumerate(spec.part_keys(), start=1):
            checks += _verify_table(conn, data_schema(1), partition_name(part), keys[1] - keys[0] + 1, spec.key_order,
                                    indexed=True, first_key=keys[0])
    else:
        for i in range(1, spec.schemas + 1):
            checks += _verify_table(conn, data_schema(i), DATA_TABLE, spec.scale, spec.key_order, indexed=True)
    if spec.scan_table_blocks:
        checks += _verify_table(conn, data_schema(1), SCAN_TABLE, spec.scan_table_blocks, "contiguous", indexed=False)
    return checks


def _verify_table(conn: psycopg.Connection, schema: str, table: str, rows_expected: int, key_order: str,
                  *, indexed: bool, first_key: int = 1) -> list[Check]:
    qualified = f"{_q(schema)}.{_q(table)}"
    name = f"{schema}.{table}"
    if not one_row(conn, "SELECT to_regclass(%s) IS NOT NULL", (qualified,))[0]:
        return [Check(f"{name} exists", False, "missing: run dbio setup")]
    ident = sql.SQL("{}.{}").format(sql.Identifier(schema), sql.Identifier(table))
    rows, blocks_with_rows, lo, hi, distinct_keys = one_row(conn, sql.SQL(
        "SELECT count(*), count(DISTINCT (ctid::text::point)[0]), min(custid), max(custid), count(DISTINCT custid) "
        "FROM {}").format(ident))
    blocks = one_row(conn, "SELECT pg_relation_size(%s::regclass) / 8192", (qualified,))[0]
    last_key = first_key + rows_expected - 1
    checks = [
        Check(f"{name} rows", rows == rows_expected, f"{rows} rows (expected {rows_expected})"),
        Check(f"{name} one row per block", blocks_with_rows == rows,
              f"{rows} rows in {blocks_with_rows} distinct blocks; table has {blocks} blocks"
              + (f" ({blocks - rows} more from UPDATEs that could not stay in their block)" if blocks > rows else "")),
        Check(f"{name} keys {first_key}..{last_key}", lo == first_key and hi == last_key and distinct_keys == rows,
              f"keys {lo}..{hi}, {distinct_keys} distinct"),
    ]
    sample = one_row(conn, sql.SQL(
        "SELECT count(*), count(DISTINCT md5(filler)), min(length(filler)) FROM "
        "(SELECT filler FROM {} LIMIT 1000) s").format(ident))
    checks.append(Check(f"{name} rows varied", sample[0] == sample[1],
                        f"{sample[1]} distinct fillers of {sample[2]} bytes in {sample[0]} sampled rows"))
    if indexed:
        valid = one_row(
            conn, "SELECT bool_and(i.indisvalid) FROM pg_index i WHERE i.indrelid = %s::regclass", (qualified,))[0]
        with conn.transaction():
            conn.execute("SET LOCAL enable_seqscan = off")
            conn.execute("SET LOCAL enable_bitmapscan = off")
            entries = one_row(conn, sql.SQL("SELECT count(*) FROM {} WHERE custid >= %s").format(ident),
                              (first_key,))[0]
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
