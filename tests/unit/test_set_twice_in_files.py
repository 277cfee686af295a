"""One option set twice in one layer is refused in one line, before anything, never the last (or the first)
taken silently: dbio.toml (TOML refuses a key twice in one table; dbio refuses its own spellings of one
option: a key with and without its section, [[nodes]] beside a dsn, two case spellings of a setting or a
price), a slob.conf (a shell takes the last of a name set twice; dbio takes neither), and the environment
(each option one variable, so nothing there can repeat). Layers above each other are not a repetition: a
flag over the file is the documented order (tests/unit/test_config.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dbio.config import Sources, load_config
from dbio.config_files import read_env
from dbio.errors import ConfigErrors, UsageError
from dbio.jobs import capacity
from dbio.option_table import OPTIONS


def _load(tmp_path: Path, toml: str | None = None, slob: str | None = None, env: dict[str, str] | None = None):
    config_file = slob_file = None
    if toml is not None:
        config_file = tmp_path / "dbio.toml"
        config_file.write_text(toml)
    if slob is not None:
        slob_file = tmp_path / "slob.conf"
        slob_file.write_text(slob)
    return load_config(Sources(config_file=config_file, slob_conf=slob_file, env=env or {}, cwd=tmp_path,
                               discover=False))


def _refused(tmp_path: Path, **files: str) -> str:
    with pytest.raises(ConfigErrors) as refused:
        _load(tmp_path, **files)
    text = str(refused.value)
    assert text.count("\n") == 0, text  # one line
    return text


@pytest.mark.parametrize("toml, line", [
    # TOML's own rules: a key twice in a table, a table twice (the parser's message, one line)
    ('[workload]\nupdate_pct = 10\nupdate_pct = 20\n', r"not valid TOML \(Cannot overwrite a value"),
    ('[cost]\ninstance = 300\n[cost]\niops = 0.065\n', r"not valid TOML \(Cannot declare \('cost',\) twice"),
    # dbio's spellings of one option: with and without its section, [[nodes]] beside connection's keys
    ('update_pct = 10\n[workload]\nupdate_pct = 20\n', r"workload.update_pct = 20: sets update_pct again "
                                                      r"\(update_pct sets it too\); keep one of them"),
    ('[connection]\ndsn = "host=a"\n[[nodes]]\ndsn = "host=b"\n',
     r"\[\[nodes\]\] = \['host=b'\]: sets dsn again \(connection.dsn sets it too\)"),
    # one setting in two case spellings (PostgreSQL's names are not case-sensitive), one server twice
    ('[instance.pg_settings]\nwork_mem = "1MB"\nWORK_MEM = "2MB"\n', r"'work_mem' is given twice"),
    ('[connection]\ndsn = ["host=a", "host=a"]\n', r"the same connection string is given twice"),
    ('[[nodes]]\ndsn = "host=a"\n[[nodes]]\ndsn = "host=a"\n', r"the same connection string is given twice"),
])
def test_dbio_toml_sets_each_option_once(tmp_path, toml, line):
    assert re.search(line, _refused(tmp_path, toml=toml))


def test_a_cost_table_prices_each_name_once(tmp_path):
    # TOML's keys are case-sensitive, the price names are not: Instance and instance are one price
    toml = tmp_path / "dbio.toml"
    toml.write_text('[cost]\ninstance = "300/month"\nInstance = "200/month"\n')
    with pytest.raises(UsageError, match=r"^dbio.toml \[cost\] Instance: instance is priced twice; give each "
                                         r"price once"):
        capacity.request(None, None, (), load_config(Sources(config_file=toml, cwd=tmp_path, env={})).cost)
    with pytest.raises(UsageError, match=r"^--price: instance is priced twice"):  # a caller past the parser's check
        capacity.request(None, None, ("instance=300/month", "INSTANCE=200/month"))
    toml.write_text('[cost]\ninstance = "300/month"\n')
    priced = load_config(Sources(config_file=toml, cwd=tmp_path, env={})).cost
    over = capacity.request(None, None, ("instance=200/month",), priced)
    assert over is not None and over["prices"]["instance"] == 200.0  # a flag over the file: the layers' order


@pytest.mark.parametrize("slob, line", [
    ("UPDATE_PCT=20\nRUN_TIME=300\nUPDATE_PCT=40\n",
     r"^slob.conf line 3: UPDATE_PCT = 40: sets UPDATE_PCT again \(line 1 sets it\); keep one of the lines: a "
     r"shell takes the last, dbio takes neither silently \(a flag overrides the file: --update-pct\)$"),
    ("THREADS_PER_SCHEMA=4\nNUM_THREADS=8\n",  # SLOB's name and pgio's for one option
     r"^slob.conf line 2: NUM_THREADS = 8: sets what THREADS_PER_SCHEMA sets \(line 1\); keep one of the lines: "
     r"both are dbio's threads_per_schema"),
    ("EXTERNAL_SCRIPT=''\nEXTERNAL_SCRIPT=/x\n", r"line 2: EXTERNAL_SCRIPT = /x: sets EXTERNAL_SCRIPT again"),
    ("SQLNET_SERVICE_BASE=a\nSQLNET_SERVICE_MAX=2\nSQLNET_SERVICE_BASE=b\n",  # read as nodes (slob_services.py)
     r"line 3: SQLNET_SERVICE_BASE = b: sets SQLNET_SERVICE_BASE again"),
    ("export UPDATE_PCT=20\nupdate_pct=30\n", r"line 2: update_pct = 30: sets UPDATE_PCT again"),
])
def test_a_slob_conf_sets_each_name_once(tmp_path, slob, line):
    assert re.search(line, _refused(tmp_path, slob=slob))


def test_two_versions_names_of_one_option_may_agree(tmp_path):
    # a slob.conf kept from SLOB 2.2 to 2.3 holds SHARED_DATA_MODULUS and HOT_SCHEMA_FREQUENCY: with one value,
    # nothing is chosen (SLOB itself reads one of them, whichever its version is)
    config = _load(tmp_path, slob="SHARED_DATA_MODULUS=4\nTHREADS_PER_SCHEMA=2\nHOT_SCHEMA_FREQUENCY=4\nNUM_SCHEMAS=2\n"
                                  "NUM_THREADS=2\n")
    assert config.workload.hot_schema_frequency == 4 and config.workload.threads_per_schema == 2


def test_each_option_is_one_variable_of_the_environment():
    # an environment holds a name once; each option reads one name, and no name is two options'
    names = [option.env for option in OPTIONS]
    assert len(set(names)) == len(names)
    for option in OPTIONS:
        read = read_env({option.env: "1"}, [])
        assert set(read) <= {option.key}, (option.env, read)


def test_dsn_from_the_environment_is_one_server(tmp_path):
    # DBIO_DSN holds one connection string (a list is dbio.toml's); over the file's list, as the layers go
    config = _load(tmp_path, toml='[connection]\ndsn = ["host=a", "host=b"]\n', env={"DBIO_DSN": "host=c"})
    assert config.connection.dsns == ("host=c",)
