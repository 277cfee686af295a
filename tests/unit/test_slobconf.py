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
    assert {i.name for i in ignored} == {"DATABASE_STATISTICS_TYPE", "EXTERNAL_SCRIPT"}
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
    from dbio import cli
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
        cli.say_files_read(config, ui)
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
