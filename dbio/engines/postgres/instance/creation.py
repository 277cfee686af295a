"""A new embedded instance made: the server user and the binaries it runs, initdb into a directory
claimed for it (nothing half-made is left on failure), then, once it runs, its catalogs settled and
the database created."""

from __future__ import annotations

import os
import shutil
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from dbio import trust
from dbio.engines.postgres.instance import as_server, binaries, placement
from dbio.engines.postgres.instance.paths import Layout
from dbio.engines.postgres.instance.paths import running_as_root
from dbio.engines.postgres.instance.ports import free_port
from dbio.engines.postgres.instance.record import Meta
from dbio.engines.postgres.instance.standbys import Member
from dbio.engines.postgres.engine_options import InstanceConfig
from dbio.errors import NoDatabase, UsageError
from dbio.managed.location import claim_directory
from dbio.managed.server_user import ServerUser, ensure_server_user

SUPERUSER = "dbio"


def server_user_and_binaries(cfg: InstanceConfig,
                             notify: Callable[[str], None]) -> tuple[ServerUser, binaries.Binaries]:
    user = ensure_server_user()
    if user.created:
        notify(f"running as root: PostgreSQL refuses to run as root, so created the system user "
               f"'{user.name}' to run the embedded server")
    elif running_as_root():
        notify(f"running as root: the embedded server runs as the unprivileged system user '{user.name}'")
    bins = binaries.locate(user)
    if bins.copied:
        notify(f"server binaries placed in {bins.bin_dir.parent} where '{user.name}' can execute them")
    if cfg.io_method not in bins.io_methods():
        raise UsageError(f"io_method = {cfg.io_method} is not available in this PostgreSQL build",
                         f"use one of {', '.join(bins.io_methods())}")
    return user, bins


def create(layout: Layout, user: ServerUser, bins: binaries.Binaries, dbname: str, wal_dir: Path | None) -> Meta:
    """initdb into a directory claimed for the instance; nothing half-made is left on failure."""
    wal_place: placement.Place | None = None
    preexisting_mode = claim_directory(layout.root)
    created_root = preexisting_mode is None
    try:
        # The directory and the instance record stay ours (root's, run as root): only the server's
        # own directories belong to the server user, who can then change nothing dbio relies on.
        os.chmod(layout.root, (preexisting_mode or 0) | 0o755)  # the server user passes through
        for d in (layout.pgdata, layout.socket_dir, layout.log_dir):
            d.mkdir(mode=0o700)
            os.chown(d, user.uid, user.gid)
            os.chmod(d, 0o700)
        if wal_dir is not None:
            wal_place = placement.make(wal_dir, placement.WAL_SUBDIR, user)
        as_server.run(user, [str(bins.tool("initdb")), "-D", str(layout.pgdata), "-U", SUPERUSER,
                             "-E", "UTF8", "--locale=C", "--auth-local=trust", "--auth-host=reject",
                             "--no-instructions", *(["--waldir", wal_place.path] if wal_place else [])],
                      cwd=layout.root, log_file=layout.log_file, what="initdb")
        conf = layout.pgdata / "postgresql.conf"
        trust.write_for(conf, trust.read_no_follow(conf)
                        + "\n# dbio's settings for I/O testing\ninclude_if_exists = 'dbio.conf'\n",
                        user.uid, user.gid)
        meta = Meta(port=free_port(), server_user=user.name, bin_dir=str(bins.bin_dir),
                    wheel_version=bins.wheel_version, pg_version=bins.server_version(), dbname=dbname,
                    created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                    preexisting_mode=preexisting_mode, places=[wal_place.to_dict()] if wal_place else [],
                    wal_dir=wal_place.path if wal_place else None)
        meta.members = [Member("primary", "primary", layout.root, meta.port).to_dict()]
        meta.write(layout.meta_file)
    except BaseException:
        if wal_place is not None:
            placement.remove(wal_place.to_dict())
        # Nothing half-made is left behind: remove what this call created.
        if created_root:
            shutil.rmtree(layout.root, ignore_errors=True)
        else:
            for d in (layout.pgdata, layout.socket_dir, layout.log_dir, layout.meta_file):
                shutil.rmtree(d, ignore_errors=True) if d.is_dir() else d.unlink(missing_ok=True)
            os.chmod(layout.root, preexisting_mode or 0)
        raise
    return meta


def settle_catalogs(conninfo: Callable[[str], str]) -> None:
    """initdb leaves the catalogs of template1 and postgres never analysed, and autovacuum
    gets to them a minute later, in the first measured window. Do it now (about a second);
    databases created from template1 afterwards inherit the result."""
    import psycopg

    for dbname in ("template1", "postgres"):
        with psycopg.connect(conninfo(dbname), autocommit=True) as conn:
            conn.execute("VACUUM (FREEZE, ANALYZE)")
        # Analysing the tables after pg_statistic's turn left dead rows in it, which a second
        # VACUUM only removes from a new session (ANALYZE never touches pg_statistic itself).
        with psycopg.connect(conninfo(dbname), autocommit=True) as conn:
            conn.execute("VACUUM (FREEZE) pg_catalog.pg_statistic")
            # publish the counters now, not when the backend exits after we have moved on
            conn.execute("SELECT pg_stat_force_next_flush()")
            conn.execute("SELECT 1")


def create_database(conninfo: str, data_dir: Path, dbname: str, *, look: bool = False) -> None:
    """The database made if it is not there (conninfo: the instance's postgres database); look: made by no one
    (NoDatabase when it is not there)."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(conninfo, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (dbname,)).fetchone()
        if not exists and look:
            raise NoDatabase(f"no database {dbname!r} in {data_dir}")
        if not exists:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(dbname)))
