"""The MySQL engine's configuration rules that need no server (config_checks.py runs them after its own)."""

from __future__ import annotations

from dbio.config import Config, each_node
from dbio.config_checks import display_key
from dbio.engines.mysql import dsn as dsns
from dbio.errors import ConfigError
from dbio.options import BY_KEY

# Databases every MySQL server keeps for itself: dbio loads into a database of its own.
SYSTEM_DATABASES = ("mysql", "information_schema", "performance_schema", "sys")


def check(config: Config) -> list[ConfigError]:
    if config.connection.embedded:
        if config.connection.dbname.lower() in SYSTEM_DATABASES:
            shown = display_key(BY_KEY["dbname"], config.origins.get("dbname", "default"))
            return [ConfigError(shown, config.connection.dbname, "is a database the server keeps for itself",
                                "choose another name (the default is dbio)")]
        return []  # the managed instance: its binaries and place are checked before it is made
    errors: list[ConfigError] = []
    for node in each_node(config):
        errors += dsn_errors(node)
    return errors


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
