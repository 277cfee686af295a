"""Tablespaces for data_dirs: one per directory, the schemas' tables spread over them in turn.

The embedded instance makes each directory's subdirectory for the server (instance/placement.py);
here the tablespaces are created in them, named for the load and marked as dbio's with a comment,
so a teardown drops those, once empty, and no other."""

from __future__ import annotations

from pathlib import Path

import psycopg
from psycopg import sql

from dbio.engines.base import SetupSpec, TableJob, Teardown
from dbio.engines.postgres.instance.placement import TABLESPACE_SUBDIR

MARK = "dbio tablespace"  # the comment that marks a tablespace as dbio's
PREFIX = "dbio_ts_"


def location(place: str) -> str:
    """Where the tablespace of one of data_dirs lives: the server's subdirectory in it."""
    return str(Path(place) / TABLESPACE_SUBDIR)


def for_job(spec: SetupSpec, job: TableJob) -> str | None:
    """The directory a table goes to: a part of the split table to its own, a schema's tables in turn
    (the scan table with schema 1); None: the default tablespace."""
    if not spec.places:
        return None
    index = job.part if job.part else (job.schema_index or 1)
    return spec.places[(index - 1) % len(spec.places)]


def _existing(conn: psycopg.Connection) -> dict[str, tuple[str, str | None]]:
    """location -> (name, comment) of every tablespace with a location."""
    rows = conn.execute("SELECT spcname, pg_tablespace_location(oid), shobj_description(oid, 'pg_tablespace') "
                        "FROM pg_tablespace").fetchall()
    return {loc: (name, comment) for name, loc, comment in rows if loc}


def ensure(conn: psycopg.Connection, spec: SetupSpec) -> None:
    """Create the tablespace of each directory that has none (outside a transaction, as PostgreSQL needs)."""
    existing = _existing(conn)
    names = {name for name, _ in existing.values()}
    for place in spec.places:
        where = location(place)
        if where in existing:
            continue
        number = 1
        while f"{PREFIX}{number}" in names:
            number += 1
        name = f"{PREFIX}{number}"
        conn.execute(sql.SQL("CREATE TABLESPACE {} LOCATION {}").format(sql.Identifier(name), sql.Literal(where)))
        conn.execute(sql.SQL("COMMENT ON TABLESPACE {} IS {}").format(sql.Identifier(name), sql.Literal(MARK)))
        names.add(name)
        existing[where] = (name, MARK)


def name_of(conn: psycopg.Connection, place: str) -> str:
    found = _existing(conn).get(location(place))
    if found is None:
        raise RuntimeError(f"no tablespace at {location(place)}: the setup creates it first")
    return found[0]


def use_for(conn: psycopg.Connection, spec: SetupSpec, job: TableJob | int) -> None:
    """Inside the load's transaction: what it creates next (table, index) goes to the job's tablespace
    (a schema's number: its whole data table's, as dbio ops rebuilds an index)."""
    place = for_job(spec, TableJob(job, "data", 0) if isinstance(job, int) else job)
    if place is not None:
        conn.execute(sql.SQL("SET LOCAL default_tablespace = {}").format(sql.Identifier(name_of(conn, place))))


def drop_ours(conn: psycopg.Connection, done: Teardown, places: tuple[str, ...]) -> None:
    """Drop the tablespaces this database's load made (one in each of its places, data_dirs) that nothing
    uses any more; one still used (another database's tables, the user's objects) stays, said why.

    A tablespace is the whole server's: one that only looks like dbio's (its name and mark, at another
    place: another database's load, or the user's own) is never dropped from here."""
    ours = {location(place) for place in places}
    for where, (name, comment) in sorted(_existing(conn).items()):
        if comment != MARK or not name.startswith(PREFIX) or not where.endswith("/" + TABLESPACE_SUBDIR):
            continue
        if where not in ours:
            done.kept.append(f"tablespace {name} at {where} (not made by this database's load: a teardown of the "
                             "database whose load made it drops it, or DROP TABLESPACE once it is empty)")
            continue
        try:
            conn.execute(sql.SQL("DROP TABLESPACE {}").format(sql.Identifier(name)))
        except psycopg.errors.ObjectNotInPrerequisiteState:
            done.kept.append(f"tablespace {name} at {where} (it still holds objects, maybe another database's)")
            continue
        done.dropped.append(f"tablespace {name} at {where}")
