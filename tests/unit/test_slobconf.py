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
