"""The MySQL / MariaDB engine as the registry sees it: its spec (engines/spec.EngineSpec).

Imported whichever engine runs (its options are part of the option table), so it imports
PyMySQL, and anything that does, only inside the functions that need it: the spec's factories
are lazy, each imported at its first call."""

from __future__ import annotations

import sys
from typing import Any

from dbio.engines.mysql import dsn as dsns
from dbio.engines.mysql.facts import FEATURES
from dbio.engines.mysql.instance.layout import RECORD_NAME
from dbio.engines.mysql.engine_options import LAYOUT_KNOBS, OPTIONS, REMEMBERED, RESTART_KNOBS, InstanceConfig
from dbio.engines.spec import PROTOCOL_VERSION, EngineSpec, lazy


def instance_config(values: dict[str, Any], workload: dict[str, Any]) -> InstanceConfig:
    from pathlib import Path

    # each Galera node's directory, absolute as the data directory is (relative to where dbio runs)
    node_dirs = values.pop("galera_data_dir", None) or ()
    return InstanceConfig(**values, galera_data_dir=tuple(Path(d).expanduser().resolve() for d in node_dirs))


def relayout(config: Any, notify: Any, *, check_only: bool = False) -> None:
    """No layout options yet: nothing to move."""


def server_error_text(exc: BaseException) -> str | None:
    if "pymysql" not in sys.modules:
        return None  # PyMySQL never loaded: it cannot have raised
    from dbio.engines.mysql.connection import server_error_text as mysql

    return mysql(exc)


def builtin_scripts() -> dict[str, str]:
    from dbio.engines.mysql import sqlfiles

    return {name: sqlfiles.text(name) for name in sqlfiles.names()}


SPEC = EngineSpec(
    name="mysql", title="MySQL and MariaDB", protocol=PROTOCOL_VERSION, features=FEATURES, options=OPTIONS,
    dsn_schemes=dsns.SCHEMES,
    password_env="MYSQL_PWD",  # what dsn.password() reads, as the mysql client does
    instance_record=RECORD_NAME, restart_knobs=RESTART_KNOBS, layout_knobs=LAYOUT_KNOBS, remembered=REMEMBERED,
    create_engine=lazy("dbio.engines.mysql.engine:MysqlEngine"),
    check=lazy("dbio.engines.mysql.checks:check"),
    instance_config=instance_config,
    default_data_dir=lazy("dbio.engines.mysql.instance.layout:default_data_dir"),
    resolve=lazy("dbio.engines.mysql.target:resolve"),
    instance_for=lazy("dbio.engines.mysql.target:instance_for"),
    exclusive=lazy("dbio.engines.mysql.target:exclusive"),
    relayout=relayout,
    redact_dsn=dsns.redact,
    has_password=dsns.has_password,
    same_server=dsns.same_server,
    scrub=dsns.scrub,
    server_error_text=server_error_text,
    builtin_scripts=builtin_scripts,
    complete_result=lazy("dbio.engines.mysql.legacy:complete_result"),
    complete_manifest=lazy("dbio.engines.mysql.legacy:complete_manifest"),
)
