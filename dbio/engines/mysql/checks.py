"""The MySQL engine's configuration rules that need no server (config_checks.py runs them after its own)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dbio.config import Config, each_node
from dbio.config_checks import cached_data_errors, display_key, problem
from dbio.engines.mysql import dsn as dsns
from dbio.engines.mysql.instance.layout import RECORD_NAME
from dbio.engines.mysql.instance.record import Meta
from dbio.engines.mysql.engine_options import PAGE_SIZES
from dbio.errors import ConfigError, DbioError
from dbio.option_table import BY_KEY

# Databases every MySQL server keeps for itself: dbio loads into a database of its own.
SYSTEM_DATABASES = ("mysql", "information_schema", "performance_schema", "sys")


def check(config: Config) -> list[ConfigError]:
    if config.connection.embedded:
        if config.connection.dbname.lower() in SYSTEM_DATABASES:
            shown = display_key(BY_KEY["dbname"], config.origins.get("dbname", "default"))
            return [ConfigError(shown, config.connection.dbname, "is a database the server keeps for itself",
                                "choose another name (the default is dbio)")]
        # the managed instance: its binaries and place are checked before it is made
        return cache_errors(config) + galera_errors(config)
    errors: list[ConfigError] = []
    for node in each_node(config):
        errors += dsn_errors(node)
    return errors


def cache_errors(config: Config) -> list[ConfigError]:
    """The managed instance's buffer pool cannot hold the data set, as PostgreSQL's shared_buffers: refused
    before the server restarts with it (run --buffer-pool 4GiB restarted it, and remembered it, then refused)."""
    if config.workload.allow_cached:  # no data set judged: the record is not read
        return []
    page_bytes = _page_bytes(config.instance)
    return cached_data_errors(config, config.workload.table_bytes(page_bytes), "innodb_buffer_pool_size",
                              config.instance.buffer_pool, pages=f" ({page_bytes // 1024} KiB pages)")


def galera_errors(config: Config) -> list[ConfigError]:
    """galera: a cluster of at least two nodes (one is a single server), galera_data_dir one directory
    per node at most, each once."""
    i = config.instance
    if i.galera == 1:
        return [problem(config, "galera", "is a cluster of one node", "give 2 or more nodes (3 keep a quorum when "
                                                                      "one is lost), or 0 for a single server")]
    dirs, shown = i.galera_data_dir, ", ".join(str(d) for d in i.galera_data_dir)
    if len(dirs) > i.galera:
        return [problem(config, "galera_data_dir", f"names {len(dirs)} directories for {i.galera} Galera nodes",
                        f"set --galera {max(len(dirs), 2)}, or give one --galera-data-dir per node", value=shown)]
    if len(set(dirs)) != len(dirs):
        return [problem(config, "galera_data_dir", "names a directory twice", "give each node its own directory",
                        value=shown)]
    return []


def _page_bytes(instance: Any) -> int:
    """The page size the instance has (or, new, will have): a row takes a page of its own."""
    if instance.innodb_page_size:
        return PAGE_SIZES[instance.innodb_page_size]
    record = Path(instance.data_dir) / RECORD_NAME
    try:
        return Meta.read(record).page_size if record.is_file() else PAGE_SIZES["16k"]
    except DbioError:  # a record dbio cannot use: the command that uses the instance says why
        return PAGE_SIZES["16k"]


def dsn_errors(config: Config) -> list[ConfigError]:
    """A readable mysql:// DSN naming a database of dbio's own, and never a password."""
    text = config.connection.dsn or ""
    origin = config.origins.get("dsn", "default")
    shown = display_key(BY_KEY["dsn"], origin)
    if dsns.has_password(text):
        where = ("a password on the command line is visible to every user of this host (ps) and stays in shell "
                 "history" if origin == "--dsn" else "passwords are not read from configuration or the environment")
        return [ConfigError(shown, "(contains a password)", where,
                            "put it in MYSQL_PWD or the [client] group of ~/.my.cnf and remove it from the DSN")]
    malformed = dsns.problem(text)
    if malformed is not None:
        return [ConfigError(shown, dsns.redact(text), f"is not a MySQL connection string: {malformed}",
                            "write mysql://user@host:port/dbname or mysql://user@localhost/dbname?unix_socket=/path")]
    database = dsns.parse(text).database
    if database.lower() in SYSTEM_DATABASES:
        return [ConfigError(shown, dsns.redact(text), f"uses the database '{database}', which the server keeps for "
                            "itself", "create a database for dbio (CREATE DATABASE dbio) and name it in --dsn")]
    return []
