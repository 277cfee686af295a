"""A session's settings travel in its connection's startup packet (PostgreSQL): the same settings
as session_init.sql, after whatever options the connection string or PGOPTIONS already gave."""

import re
from pathlib import Path

from dbio.engines.postgres import workload

INIT_SQL = Path(workload.__file__).parent / "sql" / "session_init.sql"


def settings_of(options: str) -> dict[str, str]:
    """-c name=value pairs of a libpq options string, unescaped (later ones win, as in the server)."""
    out = {}
    for token in re.findall(r"(?:\\.|\S)+", options):
        if token == "-c":
            continue
        name, _, value = re.sub(r"\\(.)", r"\1", token).partition("=")
        out[name] = value
    return out


def test_the_startup_options_set_what_session_init_sets():
    sql_names = set(re.findall(r"set_config\('(\w+)'", INIT_SQL.read_text()))
    got = settings_of(workload.startup_options(3, "index", 180006, ""))
    assert set(got) == sql_names
    assert got["search_path"] == '"dbio_3"'
    assert (got["enable_indexscan"], got["enable_bitmapscan"]) == ("on", "off")
    assert got["plan_cache_mode"] == "force_generic_plan" and got["transaction_timeout"] == "0"


def test_bitmap_path_and_an_older_server():
    got = settings_of(workload.startup_options(1, "bitmap", 160004, ""))
    assert (got["enable_indexscan"], got["enable_bitmapscan"]) == ("off", "on")
    assert "transaction_timeout" not in got  # PostgreSQL 16 refuses a setting it does not know


def test_existing_options_are_kept_and_dbio_settings_come_last():
    options = workload.startup_options(1, "index", 180006, " -c work_mem=8MB -c jit=on ")
    assert options.startswith("-c work_mem=8MB -c jit=on -c ")
    got = settings_of(options)
    assert got["work_mem"] == "8MB" and got["jit"] == "off"


def test_spaces_and_backslashes_in_a_value_are_escaped():
    assert workload._escape_option(r"a b\c") == r"a\ b\\c"
