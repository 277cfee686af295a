"""What a MySQL or MariaDB server is and offers: version, settings, Capabilities."""

from __future__ import annotations

import re

import pymysql

from dbio.engines.base import Capabilities, ServerInfo
from dbio.engines.mysql import catalog, facts, pfs, replica, sqlfiles, wsrep
from dbio.engines.mysql.connection import ONE_THREAD_EACH, Connection, is_local_server
from dbio.engines.mysql.dsn import describe
from dbio.errors import UsageError

MIN_MARIADB = 100600  # 10.6
MIN_MYSQL = 80000  # 8.0
# Rows are half a page with a partner the other half (loader.py), tried at 4-16 KiB pages. At 64 KiB a
# half-page row passes InnoDB's 16 KiB record cap and goes off-page, into pages n_leaf_pages counts too.
MAX_PAGE_SIZE = 16384


def version_num(version: str) -> int:
    match = re.match(r"(\d+)\.(\d+)\.(\d+)", version)
    if not match:
        return 0
    major, minor, patch = (int(g) for g in match.groups())
    return major * 10000 + minor * 100 + patch


def product(version: str) -> str:
    return "MariaDB" if "mariadb" in version.lower() else "MySQL"


def check_version(version: str) -> None:
    num, name = version_num(version), product(version)
    low = num < (MIN_MARIADB if name == "MariaDB" else MIN_MYSQL)
    if low:
        raise UsageError(f"the server runs {name} {version.split('-')[0]}; dbio needs MySQL 8.0+ or MariaDB 10.6+",
                         "use a newer server")


def read_settings(conn: Connection) -> dict[str, dict[str, object]]:
    marks = ", ".join(["%s"] * len(facts.SETTINGS_READ))
    rows = conn.query(f"SHOW GLOBAL VARIABLES WHERE Variable_name IN ({marks})", facts.SETTINGS_READ)
    return {name: {"setting": value, "unit": None, "source": None} for name, value in rows}


def status(conn: Connection, names: tuple[str, ...]) -> dict[str, str]:
    marks = ", ".join(["%s"] * len(names))
    return dict(conn.query(f"SHOW GLOBAL STATUS WHERE Variable_name IN ({marks})", names))


def probe(conn: Connection) -> ServerInfo:
    """Version, settings and capabilities; refuses servers dbio does not support."""
    version, database, user = conn.one_row("SELECT VERSION(), DATABASE(), CURRENT_USER()")
    check_version(version)
    settings = read_settings(conn)
    page_size = int(facts.setting(settings, "innodb_page_size") or 16384)
    if page_size > MAX_PAGE_SIZE:
        raise UsageError(f"the server uses {page_size}-byte InnoDB pages; dbio sizes its rows for 4 to 16 KiB pages",
                         "use a server with innodb_page_size of 16k or less")
    name = product(version)
    short = version.split("-")[0]
    where = describe(conn.dsn).split(" at ", 1)[1]
    why = replica.why_not_writable(facts.setting(settings, "read_only"), facts.setting(settings, "super_read_only"),
                                   replica.sources(conn, name))
    if why:
        raise UsageError(f"{name} {short} at {where} {why}, and dbio would write its tables, procedures and "
                         "run records there", "point --dsn at a server that takes writes (for a replica, its "
                         "source: the replica receives the load)")
    galera = wsrep.read_state(conn)
    wsrep.check_ready(galera, f"{name} {short} at {where}")
    if galera is not None:  # recorded beside the settings: which node of which cluster, of how many
        settings[wsrep.SETTING] = {"setting": galera.to_dict(), "unit": None, "source": None}
    counted = status(conn, ("Threads_connected", "Innodb_os_log_fsyncs"))
    local = is_local_server(conn)
    datadir = facts.setting(settings, "datadir")
    data_directory = datadir.rstrip("/") or "/" if datadir and local else None
    performance_schema = facts.setting(settings, "performance_schema") in ("ON", "1")
    seen = pfs.probe(conn, performance_schema, f"{name} {short}")
    if performance_schema:  # the result records what it did not instrument
        settings[facts.PFS_OFF] = {"setting": pfs.instruments_off(conn), "unit": None, "source": None}
    pool = facts.setting(settings, "thread_handling")
    pool = pool if pool and pool not in ONE_THREAD_EACH else None  # sessions served in turn: no thread is one's
    missing = _missing(seen, local, counted, f"{name} {short}", pool)
    held = catalog.held_privileges(conn)
    if held is not None and "PROCESS" not in held and "ALL PRIVILEGES" not in held:
        # the processlist then lists this account's own sessions only: another user's work is not seen
        missing.append(("other users' sessions on the server", f"the user {user} lacks the PROCESS privilege, so the "
                        "processlist shows only its own sessions (GRANT PROCESS ON *.* TO it to see them)"))
    caps = Capabilities(
        engine="mysql", server_version=f"{name} {short}", version_num=version_num(version), has_io_view=False,
        io_view_has_wal=False, has_backend_cpu=local and not pool, can_see_waits=seen.waits,
        data_directory=data_directory,
        local=local, direct_io=facts.direct_io(settings), missing=tuple(missing), counts_at_call_end=False,
        **facts.capability_facts(settings, local=local, data_io_timed=seen.data_io, redo_io_timed=seen.redo_io))
    max_connections = int(facts.setting(settings, "max_connections") or 151)
    identity = server_identity(conn, settings)
    return ServerInfo(caps=caps, settings=settings, database=database or conn.dsn.database, user=user,
                      cluster=galera.cluster if galera is not None else None,
                      description=f"{name} {short} at {where}",
                      cache_bytes=int(facts.setting(settings, "innodb_buffer_pool_size") or 0),
                      max_connections=max_connections, reserved_connections=1,  # one more for SUPER
                      connections_in_use=int(counted.get("Threads_connected") or 0),
                      backend_pid=conn.os_tid or conn.thread_id, identity=identity)


def server_identity(conn: Connection, settings: dict[str, dict[str, object]]) -> str:
    """The server itself, the same from any client host and any database: its generated id (MySQL's
    server_uuid, unique to its data directory; MariaDB's server_uid, a hash of a MAC address and the
    port, alike for instances of one host), when it started, its host name, port and data directory."""
    ids = dict(conn.query("SHOW GLOBAL VARIABLES WHERE Variable_name IN ('server_uuid', 'server_uid')"))
    generated = ids.get("server_uuid") or ids.get("server_uid") or "?"
    started = "?"
    statement = sqlfiles.statement("server_started.sql")
    for table in ("information_schema.GLOBAL_STATUS", "performance_schema.global_status"):
        try:
            row = conn.one(statement.replace("information_schema.GLOBAL_STATUS", table))
        except pymysql.err.MySQLError:
            continue
        if row and row[0] is not None:
            started = str(int(row[0]))
            break
    where = ":".join(str(facts.setting(settings, k)) for k in ("hostname", "port", "datadir"))
    return f"{generated}:{started}:{where}"


def _missing(seen: pfs.Instrumented, local: bool, counted: dict[str, str], server: str,
             pool: str | None = None) -> list[tuple[str, str]]:
    """The figures this server cannot give, each with why (reports list them)."""
    missing = [("checkpoints", "InnoDB's status counters do not count checkpoints"),
               ("I/O by process kind", "InnoDB counts only its page cleaners' writes apart: purge, read-ahead "
                "and log writes are in the server's totals")]
    if not seen.data_io:
        missing += [("physical read and write latency", seen.why_not_data),
                    ("the run's own sessions' I/O", f"InnoDB's status counters are server-wide ({seen.why_not_data})")]
    if not seen.redo_io:
        missing.append(("redo log write and sync latency", seen.why_not_redo))
    if not seen.waits:
        missing.append(("wait events of the sessions", seen.why_not_waits))
    if "Innodb_os_log_fsyncs" not in counted:
        missing.append(("redo log syncs", f"{server} does not count them in its status"))
    if local and pool:
        missing.append(("DB CPU of the sessions", f"the server runs sessions on a pool of threads (thread_handling = "
                        f"{pool}): no thread is one session's"))
    if not local:
        missing += [("DB CPU of the sessions", "the server is not on this host (or its threads are not visible)"),
                    ("device statistics of the data directory", "the server is not on this host"),
                    ("host CPU of the server", "the server is not on this host (host CPU is dbio's own host)")]
    return missing


def page_size(info: ServerInfo) -> int:
    return int(facts.setting(info.settings, "innodb_page_size") or 16384)
