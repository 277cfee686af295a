"""dbio's objects in a MySQL database: the setup record, its tables, teardown.

MySQL has no schemas inside a database: dbio's objects are tables (and its procedure) named
dbio_* in the database the DSN names. Every one carries a comment naming the setup it belongs
to (tag()); the control table dbio_setup names the setup whose tag marks dbio's objects. An
object with one of dbio's names but another comment is not dbio's: dbio never alters or drops
it, refuses to load over it, and names what it leaves in place.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone

from dbio import __version__
from dbio.engines.base import SetupRecord, SetupSpec, Teardown
from dbio.engines.mysql import sqlfiles
from dbio.engines.mysql.connection import Connection
from dbio.errors import UsageError

SETUP_TABLE = "dbio_setup"
CONTROL_TABLES = ("dbio_setup_tables", "dbio_run_control", "dbio_pool", "dbio_rate_ticket")
SCAN_TABLE = "dbio_cf2"
PROCEDURE = "dbio_slice"  # the work loop: one procedure per schema table, dbio_slice_<n> (older dbio: one, dbio_slice)
POOL_BYTES = 64 * 1024
_TAG = re.compile(r"dbio: created by dbio \S+ for setup ([0-9a-f]{12}); dbio teardown removes it")
# The names dbio gives its tables and procedures. A copy a user makes of one of dbio's tables (CREATE
# TABLE ... LIKE) carries its comment, tag and all: only the name tells that dbio did not make it.
_DATA_NAME = re.compile(r"dbio_cf1_[1-9][0-9]*")
_LOOP_NAME = re.compile(r"dbio_slice(_[1-9][0-9]*)?")


def tag(setup_id: str) -> str:
    return f"dbio: created by dbio {__version__} for setup {setup_id}; dbio teardown removes it"


def tag_id(comment: str | None) -> str | None:
    match = _TAG.fullmatch(comment or "")
    return match.group(1) if match else None


def data_table(index: int) -> str:
    return f"dbio_cf1_{index}"


def procedure(index: int) -> str:
    return f"{PROCEDURE}_{index}"


def loop_procedures(schemas: int) -> list[str]:
    """The work loop's procedures of a setup of this many schemas, and the one an older dbio made."""
    return [PROCEDURE] + [procedure(i) for i in range(1, schemas + 1)]


def is_dbio_table_name(name: str) -> bool:
    return name in (SETUP_TABLE, *CONTROL_TABLES, SCAN_TABLE) or _DATA_NAME.fullmatch(name) is not None


def is_data_table_name(name: str) -> bool:
    return _DATA_NAME.fullmatch(name) is not None


def is_dbio_procedure_name(name: str) -> bool:
    return _LOOP_NAME.fullmatch(name) is not None


def table_of(kind: str, schema_index: int) -> str:
    return data_table(schema_index) if kind == "data" else SCAN_TABLE


def literal(conn: Connection, text: str) -> str:
    return conn.raw.escape(text)


def dbio_tables(conn: Connection) -> dict[str, str]:
    """Tables named like dbio's in this database -> their comment."""
    rows = conn.query("SELECT TABLE_NAME, TABLE_COMMENT FROM information_schema.TABLES "
                      "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'dbio\\_%%'")
    return {name: comment for name, comment in rows}


def dbio_routines(conn: Connection) -> dict[str, str]:
    """Procedures named like dbio's -> their comment. A function has names of its own (DROP PROCEDURE does
    not reach it, and dbio makes none): a user's function dbio_slice_2 is no procedure of dbio's."""
    rows = conn.query("SELECT ROUTINE_NAME, ROUTINE_COMMENT FROM information_schema.ROUTINES "
                      "WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_TYPE = 'PROCEDURE' "
                      "AND ROUTINE_NAME LIKE 'dbio\\_%%'")
    return {name: comment for name, comment in rows}


def owner(conn: Connection, tables: dict[str, str] | None = None) -> tuple[bool, str | None]:
    """(whether dbio_setup exists, the setup dbio's objects belong to: None when it is not dbio's).
    Its tag and every row it records must name the same setup (no row: kept by a teardown)."""
    tables = dbio_tables(conn) if tables is None else tables
    if SETUP_TABLE not in tables:
        return False, None
    setup_id = tag_id(tables[SETUP_TABLE])
    if setup_id is None:
        return True, None
    recorded = [r[0] for r in conn.query(f"SELECT setup_id FROM {SETUP_TABLE}")]
    return True, setup_id if all(r == setup_id for r in recorded) else None


def _foreign_setup_table() -> UsageError:
    return UsageError(f"this database has a table named {SETUP_TABLE} that dbio did not create "
                      "(or whose setup record is gone)",
                      "point dbio at another database (mysql://.../dbname in --dsn), or move that table away; "
                      "dbio will not touch it")


def read_setup(conn: Connection) -> SetupRecord | None:
    exists, setup_id = owner(conn)
    if not exists:
        return None
    if setup_id is None:
        raise _foreign_setup_table()
    row = conn.one(f"SELECT setup_id, spec, status, started_at, finished_at, seconds, loaded_bytes, streams, steps, "
                   f"dbio_version, server_version FROM {SETUP_TABLE}")
    if row is None:
        return None
    tables = conn.query("SELECT table_name, kind, schema_index, `rows`, rows_per_page, page_size, load_seconds, "
                        "index_seconds, analyze_seconds, loaded_at FROM dbio_setup_tables ORDER BY table_name")
    keys = ("table_name", "kind", "schema_index", "rows", "rows_per_page", "page_size", "load_seconds",
            "index_seconds", "analyze_seconds", "loaded_at")
    return SetupRecord(setup_id=row[0], spec=SetupSpec.from_dict(json.loads(row[1])), status=row[2],
                       started_at=row[3], finished_at=row[4], seconds=row[5], loaded_bytes=row[6], streams=row[7],
                       steps=json.loads(row[8]) if row[8] else {}, dbio_version=row[9], server_version=row[10],
                       tables_done=[dict(zip(keys, t)) for t in tables])


def needed_tables(spec: SetupSpec) -> list[str]:
    names = [SETUP_TABLE, *CONTROL_TABLES] + [data_table(i) for i in range(1, spec.schemas + 1)]
    return names + ([SCAN_TABLE] if spec.scan_table_blocks else [])


# What setup does in the database: its tables (create, load, index, analyze, delete the partners, drop
# a kept one) and the work loop's procedures (their creator may run and drop them).
SETUP_PRIVILEGES = ("SELECT", "INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "ALTER", "INDEX", "CREATE ROUTINE")


def held_privileges(conn: Connection) -> set[str] | None:
    """The privileges the account holds on this database, global ones included; None when a role is
    active, which may give more: the views list an account's own grants only."""
    user, role = conn.one_row("SELECT CURRENT_USER(), CURRENT_ROLE()")
    if role not in (None, "NONE"):
        return None
    name, _, host = str(user).rpartition("@")
    grantee = f"'{name}'@'{host}'"
    return {str(r[0]).upper() for r in conn.query(sqlfiles.statement("privileges.sql"), {"grantee": grantee})}


def missing_privileges(conn: Connection) -> list[str]:
    """The setup privileges the account lacks on this database ([] when it has them all, or when a
    role may give them)."""
    held = held_privileges(conn)
    if held is None:
        return []
    return [p for p in SETUP_PRIVILEGES if p not in held and "ALL PRIVILEGES" not in held]


def check_privileges(conn: Connection) -> None:
    lacking = missing_privileges(conn)
    if lacking:
        user, database = conn.one_row("SELECT CURRENT_USER(), DATABASE()")
        raise UsageError(f"user {user} lacks {', '.join(lacking)} on database {database}, which dbio setup needs "
                         "(its tables and the work loop's procedures)",
                         f"GRANT {', '.join(SETUP_PRIVILEGES)} ON `{database}`.* TO the user, or use another account")


def check_namespace(conn: Connection, spec: SetupSpec) -> None:
    """Before creating anything: the account may make dbio's objects, and no table dbio needs may
    belong to someone else."""
    check_privileges(conn)
    tables = dbio_tables(conn)
    exists, setup_id = owner(conn, tables)
    if exists and setup_id is None:
        raise _foreign_setup_table()
    for name in needed_tables(spec):
        if name in tables and (setup_id is None or tag_id(tables[name]) != setup_id):
            raise UsageError(f"table {name} exists in this database and was not created by dbio "
                             "(or is left from a load dbio no longer records)",
                             f"move it elsewhere or drop it yourself (DROP TABLE {name}), or point dbio at another "
                             "database; dbio will not touch it")
    routines = dbio_routines(conn)
    for name in loop_procedures(spec.schemas):
        if name in routines and (setup_id is None or tag_id(routines[name]) != setup_id):
            raise foreign_procedure(name)


def foreign_procedure(name: str) -> UsageError:
    return UsageError(f"procedure {name} exists in this database and was not created by dbio",
                      f"drop it yourself (DROP PROCEDURE {name}) or point dbio at another database")


def begin_setup(conn: Connection, spec: SetupSpec, *, setup_id: str, server_version: str) -> SetupRecord:
    """The control tables (new, or a kept set re-created for this setup) and the setup record."""
    started = datetime.now(timezone.utc)
    tables = dbio_tables(conn)
    exists, previous = owner(conn, tables)
    if exists and previous is None:
        raise _foreign_setup_table()
    for name in (SETUP_TABLE, *CONTROL_TABLES):  # a teardown that kept them: they are dbio's, made anew
        if name in tables and tag_id(tables[name]) == previous:
            conn.execute(f"DROP TABLE {sqlfiles.ident(name)}")
    for statement in sqlfiles.statements("control_tables.sql"):
        conn.execute(statement.replace("{tag}", literal(conn, tag(setup_id))))
    conn.execute(f"INSERT INTO {SETUP_TABLE} (setup_id, spec, status, started_at, dbio_version, server_version) "
                 "VALUES (%s, %s, 'loading', %s, %s, %s)",
                 (setup_id, json.dumps(spec.to_dict()), started.isoformat(), __version__, server_version))
    conn.execute("INSERT INTO dbio_pool (id, bytes) VALUES (1, %s)", (_random_bytes(POOL_BYTES),))
    if previous is not None:  # data tables of the kept setup that this one needs are its own now
        for name, comment in tables.items():
            if tag_id(comment) == previous and name not in (SETUP_TABLE, *CONTROL_TABLES) and is_dbio_table_name(name):
                conn.execute(f"ALTER TABLE {sqlfiles.ident(name)} COMMENT = {literal(conn, tag(setup_id))}")
    return SetupRecord(setup_id=setup_id, spec=spec, status="loading", started_at=started.isoformat(),
                       dbio_version=__version__, server_version=server_version)


def finish_setup(conn: Connection, record: SetupRecord) -> SetupRecord:
    finished = datetime.now(timezone.utc)
    conn.execute(f"UPDATE {SETUP_TABLE} SET status = 'ready', finished_at = %s, seconds = %s, loaded_bytes = %s, "
                 "streams = %s, steps = %s",
                 (finished.isoformat(), record.seconds, record.loaded_bytes, record.streams, json.dumps(record.steps)))
    record.status = "ready"
    record.finished_at = finished.isoformat()
    return record


def drop_table_if_ours(conn: Connection, name: str, setup_id: str) -> None:
    comment = dbio_tables(conn).get(name)
    if comment is None:
        return
    if tag_id(comment) != setup_id:
        raise UsageError(f"table {name} exists and was not created by this dbio setup",
                         "remove or rename it yourself, or use another database; dbio will not touch it")
    conn.execute(f"DROP TABLE {sqlfiles.ident(name)}")


def teardown(conn: Connection) -> Teardown:
    """Drop what dbio created and nothing else; name what stays."""
    import pymysql

    done = Teardown()
    tables = dbio_tables(conn)
    exists, setup_id = owner(conn, tables)
    if exists and setup_id is None:
        done.kept.append(f"table {SETUP_TABLE} (not created by dbio)")
    spec = _recorded_spec(conn) if setup_id is not None else None
    # The recorded load's own names, when it is recorded: a copy of one of its tables (CREATE TABLE dbio_cf1_7
    # LIKE dbio_cf1_1) carries the tag and a name like dbio's, and is the user's.
    names = set(needed_tables(spec)) if spec is not None else None
    procedures = set(loop_procedures(spec.schemas)) if spec is not None else None
    for name, comment in sorted(tables.items()):
        if name == SETUP_TABLE:
            continue
        if setup_id is None or tag_id(comment) != setup_id or not is_dbio_table_name(name) \
                or (names is not None and name not in names):
            done.kept.append(f"table {name} (not created by dbio, or left from a load dbio no longer records)")
            continue
        # DROP TABLE takes the table's triggers with it, a user's among them (dbio makes none): named, as PostgreSQL's
        triggers = [row[0] for row in conn.query(
            "SELECT TRIGGER_NAME FROM information_schema.TRIGGERS WHERE EVENT_OBJECT_SCHEMA = DATABASE() "
            "AND EVENT_OBJECT_TABLE = %s ORDER BY 1", (name,))]
        try:
            conn.execute(f"DROP TABLE {sqlfiles.ident(name)}")
            done.dropped.append(f"table {name}")
            done.with_it += [f"trigger {trigger} (not created by dbio), with table {name}" for trigger in triggers]
        except pymysql.err.MySQLError as exc:  # e.g. a user's foreign key refers to it
            done.kept.append(f"table {name} ({exc.args[-1]})")
    for name, comment in dbio_routines(conn).items():
        if setup_id is not None and tag_id(comment) == setup_id and is_dbio_procedure_name(name) \
                and (procedures is None or name in procedures):
            conn.execute(f"DROP PROCEDURE {sqlfiles.ident(name)}")
            done.dropped.append(f"procedure {name}")
        else:
            done.kept.append(f"procedure {name} (not created by dbio)")
    if setup_id is None:
        return done
    ours_left = [k for k in done.kept if k.startswith("table dbio_") and "not created" not in k]
    if ours_left:  # dbio still knows what stays as its own: the setup table stays, with an empty record
        conn.execute(f"DELETE FROM {SETUP_TABLE}")
        done.kept.append(f"table {SETUP_TABLE} with an empty setup record (some of dbio's tables stay)")
    else:
        conn.execute(f"DROP TABLE {SETUP_TABLE}")
        done.dropped.append(f"table {SETUP_TABLE}")
    return done


def _recorded_spec(conn: Connection) -> SetupSpec | None:
    """The load the setup record describes; None when its record is empty (kept by an earlier teardown)."""
    row = conn.one(f"SELECT spec FROM {SETUP_TABLE}")
    return SetupSpec.from_dict(json.loads(row[0])) if row is not None else None


def _random_bytes(n: int) -> bytes:
    import os

    return os.urandom(n)
