"""PostgreSQL's configuration rules that need no server (config_checks.py runs them after its own)."""

from __future__ import annotations

import os

from dbio.config import RESERVED_CONNECTIONS, Config, each_node
from dbio.config_checks import cached_data_errors, display_key, problem
from dbio.engines.postgres.engine_options import runs_code
from dbio.errors import ConfigError
from dbio.option_table import BY_KEY

# Databases every PostgreSQL server has for its own use: dbio loads into a database of its own.
SYSTEM_DATABASES = ("template0", "template1", "postgres")


def check(config: Config) -> list[ConfigError]:
    # with --dsn, every instance option is refused as unused (config_checks.instance_option_errors)
    errors = instance_errors(config) + layout_errors(config) + standby_errors(config) + setting_errors(config) \
        if config.connection.embedded else []
    for node in each_node(config):  # every --dsn on its own
        errors += database_errors(node) + dsn_errors(node)
    return errors


def instance_errors(config: Config) -> list[ConfigError]:
    """The embedded instance can hold the sessions, and its cache cannot hold the data set."""
    w, i = config.workload, config.instance
    errors: list[ConfigError] = []
    if i.max_connections and w.sessions + RESERVED_CONNECTIONS > i.max_connections:
        errors.append(problem(config, "max_connections",
                              f"is too small for {w.sessions} sessions plus {RESERVED_CONNECTIONS} for dbio's own "
                              "connections", f"set max_connections >= {w.sessions + RESERVED_CONNECTIONS} or 0 "
                              "(sized automatically)"))
    errors += cached_data_errors(config, w.data_bytes, "shared_buffers", i.shared_buffers)
    # A value other than the default, not an origin: a sweep step passes every default on as given.
    if i.io_method != "worker" and i.io_workers != BY_KEY["io_workers"].default:
        errors.append(problem(config, "io_workers", f"only applies to io_method = worker (io_method is {i.io_method})",
                              "remove io_workers or set io_method = worker"))
    return errors


def standby_errors(config: Config) -> list[ConfigError]:
    """standby_data_dir: one directory per standby at most, each once; standbys copy no tablespaces."""
    i = config.instance
    dirs, shown = i.standby_data_dir, ", ".join(str(d) for d in i.standby_data_dir)
    if len(dirs) > i.standbys:
        return [problem(config, "standby_data_dir", f"names {len(dirs)} directories for {i.standbys} standbys",
                        f"set --standbys {len(dirs)}, or give one --standby-data-dir per standby", value=shown)]
    if len(set(dirs)) != len(dirs):
        return [problem(config, "standby_data_dir", "names a directory twice", "give each standby its own directory",
                        value=shown)]
    if i.standbys and i.data_dirs:
        return [problem(config, "data_dirs", "spreads the tables over tablespaces, which the embedded standbys do "
                        "not copy yet", "remove data_dirs, or make the instance without --standbys")]
    return []


def layout_errors(config: Config) -> list[ConfigError]:
    """data_dirs: each directory once, and a schema for each (the schemas are spread over them), or one
    schema whose table is split into a part per directory."""
    dirs, schemas = config.instance.data_dirs, config.workload.schemas
    shown = ", ".join(str(d) for d in dirs)
    if len(set(dirs)) != len(dirs):
        return [problem(config, "data_dirs", "names a directory twice", "list each directory once", value=shown)]
    if schemas > 1 and len(dirs) > schemas:
        return [problem(config, "data_dirs", f"has {len(dirs)} directories but there are {schemas} schemas, so some "
                        "would hold no table", f"set schemas >= {len(dirs)} (a multiple spreads them evenly), 1 (the "
                        "one table split into a part per directory), or list fewer directories", value=shown)]
    if schemas == 1 and len(dirs) > config.workload.scale:
        return [problem(config, "data_dirs", f"has {len(dirs)} directories, more than the {config.workload.scale} rows "
                        "to split over them", "raise scale or list fewer directories", value=shown)]
    return []


def database_errors(config: Config) -> list[ConfigError]:
    """The load database must be one dbio may fill and drop objects in."""
    name: str | None
    if config.connection.embedded:
        name, key = config.connection.dbname, "dbname"
    else:
        from dbio.engines.postgres import dsn as dsns  # psycopg: only when there is a DSN to read

        params = dsns.parse_or_none(config.connection.dsn or "")
        if params is None:
            return []  # a malformed DSN is reported on its own
        name = params.get("dbname") or os.environ.get("PGDATABASE")
        key = "dsn"
    if name is None:
        return []
    if not str(name).strip():
        return [problem(config, key, "names an empty database", "give a database name (the default is dbio)",
                        value="''")]
    if name in SYSTEM_DATABASES:
        return [problem(config, key, f"uses the database '{name}', which the server keeps for itself",
                        "create a database for dbio (CREATE DATABASE dbio) and name it"
                        + (" (dbname=... in --dsn)" if key == "dsn" else " with --dbname"),
                        value=name if key == "dbname" else "(dbname=" + str(name) + ")")]
    return []


def setting_errors(config: Config) -> list[ConfigError]:
    """A setting that makes the server run a program or load code is taken only when allowed by name."""
    i = config.instance
    return [problem(config, "pg_settings", f"sets {name}, which makes the server run a program or load code",
                    f"pass --allow-setting {name} if you mean it, or remove the setting (--pg-setting {name}= drops "
                    "it from what the instance remembers)", value=f"{name} = ...")
            for name, _ in i.pg_settings if runs_code(name) and name not in i.allow_settings]


def dsn_errors(config: Config) -> list[ConfigError]:
    """A --dsn libpq can read, and no password where others can see it or where it is kept."""
    dsn = config.connection.dsn
    if dsn is None:
        return []
    from dbio.engines.postgres import dsn as dsns

    origin = config.origins.get("dsn", "default")
    shown = display_key(BY_KEY["dsn"], origin)
    malformed = dsns.problem(dsn)
    if malformed is not None:  # a password in a string libpq cannot read is not surely redacted: none is shown
        value = "(contains a password)" if dsns.dsn_has_password(dsn) else dsns.redact_dsn(dsn)
        return [ConfigError(shown, value, f"is not a valid connection string: {malformed}",
                            "write key=value pairs (host=db port=5432 dbname=dbio) or a URI "
                            "(postgresql://user@db:5432/dbio)")]
    if not dsns.dsn_has_password(dsn):
        return []
    if origin == "--dsn":
        return [ConfigError(shown, "(contains a password)",
                            "a password on the command line is visible to every user of this host (ps) "
                            "and stays in shell history",
                            "use PGPASSWORD, ~/.pgpass or --password (asks for it) instead")]
    if not origin.startswith("DBIO_") and not config.connection.password_in_config:
        return [ConfigError(shown, "(contains a password)", "passwords are not read from configuration files",
                            "put the password in PGPASSWORD or ~/.pgpass and remove it from the file "
                            "(or set password_in_config = true in [connection] if you insist)")]
    return []
