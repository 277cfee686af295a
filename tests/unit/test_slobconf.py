import re

import pytest

from dbio import slobconf
from dbio.errors import ConfigErrors

SLOB_CONF = """
#### SLOB 2.5.3.0 slob.conf

UPDATE_PCT=20
SCAN_PCT=0
RUN_TIME=300
WORK_LOOP=0
SCALE=80M
SCAN_TABLE_SZ=1M
WORK_UNIT=64
REDO_STRESS=LITE
LOAD_PARALLEL_DEGREE=2

THREADS_PER_SCHEMA=1

DATABASE_STATISTICS_TYPE=awr   # Permitted values: [statspack|awr]

#### Settings for SQL*Net connectivity:
#ADMIN_SQLNET_SERVICE=slob
#SQLNET_SERVICE_BASE=slob
#SYSDBA_PASSWD=change_on_install

#########################
#### Advanced settings:

DO_HOTSPOT=FALSE
HOTSPOT_MB=8
HOTSPOT_OFFSET_MB=16
HOTSPOT_FREQUENCY=3

HOT_SCHEMA_FREQUENCY=0

THINK_TM_FREQUENCY=0
THINK_TM_MIN=.1
THINK_TM_MAX=.5
EXTERNAL_SCRIPT=''
#########################

export UPDATE_PCT RUN_TIME SCALE WORK_UNIT LOAD_PARALLEL_DEGREE REDO_STRESS
export DO_HOTSPOT HOTSPOT_MB HOTSPOT_OFFSET_MB HOTSPOT_FREQUENCY HOT_SCHEMA_FREQUENCY THINK_TM_FREQUENCY THINK_TM_MIN THINK_TM_MAX
"""


def test_reads_the_shipped_slob_conf():
    entries, ignored = slobconf.parse_text(SLOB_CONF)
    values = {e.option.key: e.value for e in entries}
    assert values["update_pct"] == "20"
    assert values["scale"] == "80M"
    assert values["think_time_min"] == ".1"
    assert values["hotspot"] == "FALSE"
    assert {i.name for i in ignored} == {"DATABASE_STATISTICS_TYPE"}  # EXTERNAL_SCRIPT='': no script
    line = next(e.line for e in entries if e.name == "WORK_UNIT")
    assert SLOB_CONF.splitlines()[line - 1] == "WORK_UNIT=64"


def test_accepts_quotes_export_and_pgio_names():
    entries, _ = slobconf.parse_text('export UPDATE_PCT="10"\nNUM_SCHEMAS=4\nNUM_THREADS=2\n')
    values = {e.option.key: e.value for e in entries}
    assert values == {"update_pct": "10", "schemas": "4", "threads_per_schema": "2"}


@pytest.mark.parametrize("text, fragment", [
    ("UPDATE_PCT = 20", "not a KEY=VALUE line"),
    ("UPDATE_PCT=20 30", "more than one value"),
    ("UPDATE_PCT='20", "unbalanced quote"),
    ("UPDATE_PTC=20", "did you mean UPDATE_PCT"),
    ("SCALE=", "has no value"),
    ("just some words", "not a KEY=VALUE line"),
])
def test_malformed_lines_name_the_line_and_the_fix(text, fragment):
    with pytest.raises(ConfigErrors) as exc:
        slobconf.parse_text("# header\n" + text + "\n", "my.conf")
    message = str(exc.value)
    assert "my.conf line 2" in message
    assert fragment in message
    assert "\n" not in message


PGIO_CONF = """UPDATE_PCT=0
RUN_TIME=120
NUM_SCHEMAS=2
NUM_THREADS=2
WORK_UNIT=255
UPDATE_WORK_UNIT=8
SCALE=64M
DBNAME=pg10
CONNECT_STRING="pg10"
CREATE_BASE_TABLE=TRUE
SYSDBA_PASSWD=secret-value-42
SQLNET_SERVICE_MAX=4
"""


def test_pgio_conf_keys_are_used_or_named_on_stderr_without_their_values(tmp_path):
    from dbio import cli_config
    from dbio.config import Sources, load_config

    conf = tmp_path / "pgio.conf"
    conf.write_text(PGIO_CONF)
    conf.chmod(0o600)
    config = load_config(Sources(slob_conf=conf, cli={"allow_cached": True}, cwd=tmp_path, discover=False))
    assert config.connection.dbname == "pg10" and config.workload.work_unit == 255
    assert config.workload.update_work_unit == 8 and config.workload.update_rows == 8
    from rich.console import Console

    from dbio.ui import UI

    err = tmp_path / "err.txt"
    with err.open("w") as fh:
        ui = UI(quiet=True)
        ui.err = Console(file=fh, width=400)
        cli_config.say_files_read(config, ui)
    lines = err.read_text().strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dbio: pgio.conf: not used: ")
    for name in ("CONNECT_STRING", "CREATE_BASE_TABLE", "SYSDBA_PASSWD", "SQLNET_SERVICE_MAX"):
        assert name in lines[0]
    assert "UPDATE_WORK_UNIT" not in lines[0]  # used: the UPDATEs' own range
    assert "secret-value-42" not in lines[0] and "pg10" not in lines[0] and "several" not in lines[0]
    assert "--dsn once per node" in lines[0]


def test_an_empty_key_needs_no_explanation(tmp_path):
    from dbio.config import Sources, load_config

    conf = tmp_path / "slob.conf"
    conf.write_text(SLOB_CONF)
    conf.chmod(0o600)
    config = load_config(Sources(slob_conf=conf, cli={"allow_cached": True}, cwd=tmp_path, discover=False))
    assert len(config.notices) == 1 and "DATABASE_STATISTICS_TYPE" in config.notices[0]
    assert "EXTERNAL_SCRIPT" not in config.notices[0]


def private_file(tmp_path, name: str, text: str):
    """A configuration file dbio trusts: its user's, writable by nobody else."""
    path = tmp_path / name
    path.write_text(text)
    path.chmod(0o600)
    return path


def load_slob_conf(tmp_path, text: str, **cli):
    from dbio.config import Sources, load_config

    return load_config(Sources(slob_conf=private_file(tmp_path, "slob.conf", text), cli={"allow_cached": True, **cli},
                               cwd=tmp_path, discover=False))


# Every key SLOB's own slob.conf has carried in its 2.x versions (SLOB 2.0-2.5.x: the shipped files, the
# keys runit.sh and setup.sh take from it, and the connect strings runit.sh prints and users copy into
# it), with a value such a file holds. Sources: docs/research/anchors-slob-pgio.md section 1.2; SLOB
# 2.5.3.0's runit.sh; the 2.2 announcement (kevinclosson.net, 2014-12-04).
SLOB_KEYS = {
    # 2.0 .. 2.1
    "UPDATE_PCT": "20", "RUN_TIME": "300", "WORK_LOOP": "0", "SCALE": "10000", "WORK_UNIT": "64",
    "REDO_STRESS": "LITE", "LOAD_PARALLEL_DEGREE": "2", "SHARED_DATA_MODULUS": "0",
    "ADMIN_SQLNET_SERVICE": "slob", "SQLNET_SERVICE_BASE": "slob", "SQLNET_SERVICE_MAX": "2",
    "SYSDBA_PASSWD": "change_on_install", "ADMIN_CONNECT_STRING": "'/ as sysdba'",
    "NON_ADMIN_CONNECT_STRING": "@slob",
    # 2.2
    "DO_UPDATE_HOTSPOT": "FALSE", "HOTSPOT_PCT": "10", "THINK_TM_MODULUS": "0", "THINK_TM_MIN": ".1",
    "THINK_TM_MAX": ".5",
    # 2.3
    "THREADS_PER_SCHEMA": "1", "DO_HOTSPOT": "FALSE", "HOTSPOT_MB": "8", "HOTSPOT_OFFSET_MB": "16",
    "HOTSPOT_FREQUENCY": "3", "HOT_SCHEMA_FREQUENCY": "0", "THINK_TM_FREQUENCY": "0", "DBA_PRIV_USER": "system",
    # 2.4
    "SCAN_PCT": "0", "SCAN_TABLE_SZ": "1M", "DATABASE_STATISTICS_TYPE": "statspack", "EXTERNAL_SCRIPT": "''",
    # 2.5 (undocumented, read from slob.conf or the environment)
    "OBFUSCATE_COLUMNS": "FALSE", "BLOCK_SZ": "8192", "UNIQUE_INDEX": "UNIQUE",
    # runit.sh's environment knobs, which a sourced slob.conf sets as well
    "NO_OS_PERF_DATA": "TRUE", "SLOB_DEBUG": "FALSE", "SLOB_TEMPDIR": "/tmp", "OS_TEMP": "/tmp",
}
# the keys whose meaning dbio has: each sets the option named
SLOB_USED = {
    "UPDATE_PCT": "update_pct", "RUN_TIME": "run_time", "WORK_LOOP": "work_loop", "SCALE": "scale",
    "WORK_UNIT": "work_unit", "REDO_STRESS": "redo_stress", "LOAD_PARALLEL_DEGREE": "load_parallel_degree",
    "SHARED_DATA_MODULUS": "hot_schema_frequency", "HOT_SCHEMA_FREQUENCY": "hot_schema_frequency",
    "THINK_TM_MODULUS": "think_time_frequency", "THINK_TM_FREQUENCY": "think_time_frequency",
    "THINK_TM_MIN": "think_time_min", "THINK_TM_MAX": "think_time_max", "THREADS_PER_SCHEMA": "threads_per_schema",
    "DO_HOTSPOT": "hotspot", "HOTSPOT_MB": "hotspot_size", "HOTSPOT_OFFSET_MB": "hotspot_offset",
    "HOTSPOT_FREQUENCY": "hotspot_frequency", "SCAN_PCT": "scan_pct", "SCAN_TABLE_SZ": "scan_table_size",
    "EXTERNAL_SCRIPT": "external_script",
}


@pytest.mark.parametrize("key", sorted(SLOB_KEYS))
def test_every_key_of_slob_s_own_slob_conf_is_used_or_named_as_not_used(key):
    from dbio.option_table import BY_SLOB

    entries, ignored = slobconf.parse_text(f"{key}={SLOB_KEYS[key]}\n")
    if key in SLOB_USED:
        assert SLOB_USED[key] == BY_SLOB[key].key
        assert [e.option.key for e in entries] == ([SLOB_USED[key]] if SLOB_KEYS[key] != "''" else [])
        assert not ignored
        return
    assert not entries and [i.name for i in ignored] == [key]
    why = ignored[0].why
    assert why and "\n" not in why
    # the hint names only what dbio uses: a slob.conf key it reads, or one of its own options' flags
    named = set(re.findall(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b", why))
    assert named <= set(BY_SLOB), f"{key}'s notice names keys dbio does not use: {named - set(BY_SLOB)}"


def test_a_slob_conf_with_every_key_runs_with_one_notice_of_what_is_not_used(tmp_path):
    config = load_slob_conf(tmp_path, "".join(f"{key}={value}\n" for key, value in SLOB_KEYS.items()))
    # SLOB's services are taken as nodes when libpq knows them, or said apart why not (slob_services.py)
    services, notice = config.notices
    assert services.startswith("slob.conf lines 10, 11: SQLNET_SERVICE_BASE, SQLNET_SERVICE_MAX: not used")
    assert notice.startswith("slob.conf: not used: ") and "\n" not in notice
    for key in set(SLOB_KEYS) - set(SLOB_USED) - {"SQLNET_SERVICE_BASE", "SQLNET_SERVICE_MAX"}:
        assert key in notice, key
    assert "change_on_install" not in notice
    assert config.workload.hot_schema_frequency == 0 and config.workload.think_time_frequency == 0


def test_older_names_set_what_their_successors_set():
    entries, _ = slobconf.parse_text("SHARED_DATA_MODULUS=7\nTHINK_TM_MODULUS=11\n")
    assert {e.option.key: e.value for e in entries} == {"hot_schema_frequency": "7", "think_time_frequency": "11"}


def test_a_misspelt_key_is_never_pointed_at_a_key_dbio_does_not_use():
    with pytest.raises(ConfigErrors) as exc:  # close to DATABASE_STATISTICS_TYPE, which dbio does not use
        slobconf.parse_text("DATABASE_STATISTIC_TYPE=awr\n")
    assert "DATABASE_STATISTICS_TYPE" not in str(exc.value)


@pytest.mark.parametrize("conf, cli, scope", [
    ("WORK_LOOP=5000\n", {}, "session"),  # SLOB's meaning, where SLOB's name gave it
    ("WORK_LOOP=5000\n", {"work_loop_scope": "window"}, "window"),
    ("WORK_LOOP=5000\n", {"work_loop": 3000}, "window"),  # dbio's flag gave it: dbio's meaning
    ("UPDATE_PCT=0\n", {"work_loop": 3000}, "window"),
    ("UPDATE_PCT=0\n", {}, "window"),
])
def test_work_loop_from_a_slob_conf_has_slob_s_meaning(tmp_path, conf, cli, scope):
    config = load_slob_conf(tmp_path, conf, **cli)
    assert config.workload.work_loop_scope == scope


def test_the_help_says_which_meaning_of_work_loop_applies():
    from dbio.command_flags import help_text
    from dbio.option_table import BY_KEY

    text = help_text(BY_KEY["work_loop"]) + " " + help_text(BY_KEY["work_loop_scope"])
    assert "work_loop_scope" in text and "slob.conf" in text and "warm-up" in text
