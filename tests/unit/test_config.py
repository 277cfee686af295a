import os
import re
from pathlib import Path

import pytest

from dbio.config import Sources, load_config
from dbio.errors import ConfigErrors


def config(tmp_path: Path, cli=None, toml: str | None = None, slob: str | None = None, env=None, preset=None):
    config_file = slob_file = None
    if toml is not None:
        config_file = tmp_path / "dbio.toml"
        config_file.write_text(toml)
    if slob is not None:
        slob_file = tmp_path / "slob.conf"
        slob_file.write_text(slob)
    return load_config(Sources(config_file=config_file, slob_conf=slob_file, env=env or {}, cli=cli or {},
                               cwd=tmp_path, preset=preset or {}))


def test_defaults_are_a_valid_config(tmp_path):
    cfg = config(tmp_path)
    assert cfg.workload.scale == 131072 and cfg.workload.sessions == 1
    assert cfg.instance.direct_io is True and cfg.instance.shared_buffers == 128 << 20
    assert cfg.connection.embedded


def test_precedence_defaults_file_slob_env_cli(tmp_path):
    toml = '[workload]\nupdate_pct = 10\nwork_unit = 16\nschemas = 2\nrun_time = "2m"\n'
    slob = "UPDATE_PCT=20\nWORK_UNIT=32\n"
    env = {"DBIO_UPDATE_PCT": "30"}
    cfg = config(tmp_path, cli={"update_pct": "40"}, toml=toml, slob=slob, env=env)
    assert cfg.workload.update_pct == 40  # CLI wins
    assert cfg.workload.work_unit == 32  # slob.conf over dbio.toml
    assert cfg.workload.schemas == 2  # dbio.toml over defaults
    assert cfg.workload.run_time == 120.0
    cfg = config(tmp_path, toml=toml, slob=slob, env=env)
    assert cfg.workload.update_pct == 30  # environment over files


def test_slob_units_are_converted(tmp_path):
    cfg = config(tmp_path, slob="SCALE=80M\nSCAN_TABLE_SZ=128\nHOTSPOT_MB=8\nHOTSPOT_OFFSET_MB=16\nDO_HOTSPOT=TRUE\n"
                                "THINK_TM_FREQUENCY=5\nTHINK_TM_MIN=.1\nTHINK_TM_MAX=.5\nREDO_STRESS=heavy\n",
                 cli={"allow_cached": True})
    w = cfg.workload
    assert w.scale == 10240 and w.scan_table_size == 128 * 8192
    assert w.hotspot and w.hotspot_size == 8 << 20 and w.hotspot_offset == 16 << 20
    assert w.think_time_min == pytest.approx(0.1) and w.redo_stress == "HEAVY"


def test_preset_sits_between_defaults_and_user_settings(tmp_path):
    cfg = config(tmp_path, preset={"run_time": "30s", "threads_per_schema": 4}, cli={"threads_per_schema": "2"})
    assert cfg.workload.run_time == 30.0 and cfg.workload.threads_per_schema == 2


def test_toml_keys_without_section_and_pg_settings(tmp_path):
    cfg = config(tmp_path, toml='update_pct = 5\n[instance.pg_settings]\ncheckpoint_timeout = "15min"\n')
    assert cfg.workload.update_pct == 5
    assert dict(cfg.instance.pg_settings) == {"checkpoint_timeout": "15min"}


BAD = [
    # (cli, toml, expected fragments)
    ({"update_pct": "120"}, None, ["--update-pct = 120", "above the maximum 100", "use 0..100"]),
    ({"update_pct": "ten"}, None, ["--update-pct = ten", "whole number"]),
    ({"scale": "4XB"}, None, ["--scale = 4XB", "unknown size unit"]),
    ({"scale": "10"}, None, ["--scale", "below the minimum 64 blocks (512 KiB)"]),
    ({"scale": "10TB"}, None, ["--scale = 10TB", "above the maximum 134,217,728 blocks (1 TiB)"]),
    ({"run_time": "5 minutes"}, None, ["--run-time", "duration"]),
    ({"redo_stress": "MEDIUM"}, None, ["--redo-stress = MEDIUM", "LITE or HEAVY"]),
    ({"work_unit": "0"}, None, ["--work-unit = 0", "minimum 1"]),
    ({"schemas": "0"}, None, ["--schemas = 0", "minimum 1"]),
    ({"shared_buffers": "1MiB"}, None, ["--shared-buffers = 1MiB", "minimum 16 MiB"]),
    ({"io_method": "aio"}, None, ["--io-method = aio", "sync or worker or io_uring"]),
    ({"direct_io": "maybe"}, None, ["--direct-io = maybe", "true or false"]),
    ({"work_unit": "300", "scale": "256", "allow_cached": True}, None, ["work_unit", "smaller than scale",
                                                                        "raise scale"]),
    ({"run_time": "0"}, None, ["run_time", "without an end", "work_loop"]),
    ({"hotspot": True, "hotspot_offset": "1GiB", "scale": "1GiB"}, None, ["--hotspot-offset", "beyond the data set"]),
    ({"hotspot": True, "hotspot_size": "16KiB"}, None, ["hotspot_size", "fewer blocks than work_unit"]),
    ({"think_time_frequency": "2", "think_time_min": "2s", "think_time_max": "1s"}, None,
     ["--think-time-min", "larger than think_time_max"]),
    ({"scan_pct": "10", "scan_table_size": "0"}, None, ["--scan-pct", "needs a scan table"]),
    ({"hot_schema_frequency": "3"}, None, ["--hot-schema-frequency", "more than one schema"]),
    ({"schemas": "100", "threads_per_schema": "100"}, None, ["threads_per_schema", "10000 sessions"]),
    ({"max_connections": "50", "threads_per_schema": "64"}, None, ["--max-connections", "too small for 64 sessions"]),
    ({"scale": "64MiB", "shared_buffers": "128MiB"}, None, ["--scale", "fits in shared_buffers", "--allow-cached"]),
    ({}, "[workload]\nupdate_pcd = 3\n", ["dbio.toml: workload.update_pcd", "unknown key",
                                          "did you mean 'update_pct'"]),
    ({}, "[workload]\nshared_buffers = '1GiB'\n", ["workload.shared_buffers", "belongs in section [instance]"]),
    ({}, "[workloads]\nscale = 5\n", ["dbio.toml: workloads", "did you mean 'workload'"]),
    ({}, "update_pct = [", ["not valid TOML"]),
    ({}, "[connection]\ndsn = 'host=db password=secret'\n", ["passwords are not read from configuration files",
                                                             "PGPASSWORD"]),
]


@pytest.mark.parametrize("cli, toml, fragments", BAD)
def test_bad_input_is_one_line_naming_key_and_fix(tmp_path, cli, toml, fragments):
    with pytest.raises(ConfigErrors) as exc:
        config(tmp_path, cli=cli, toml=toml)
    assert exc.value.exit_code == 2
    assert len(exc.value.errors) == 1
    message = str(exc.value.errors[0])
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message
    assert "secret" not in message


def test_pg_setting_adds_to_the_file_settings_by_name(tmp_path):
    toml = '[instance.pg_settings]\ncheckpoint_timeout = "15min"\nmax_wal_size = "4GB"\n'
    cfg = config(tmp_path, toml=toml, cli={"pg_settings": ["checkpoint_timeout=30min", "wal_buffers=64MB"]})
    assert dict(cfg.instance.pg_settings) == {"checkpoint_timeout": "30min", "max_wal_size": "4GB",
                                              "wal_buffers": "64MB"}
    cfg = config(tmp_path, toml=toml, cli={"pg_settings": ["max_wal_size="]})  # NAME= drops one
    assert dict(cfg.instance.pg_settings) == {"checkpoint_timeout": "15min"}


@pytest.mark.parametrize("toml", ['[instance.pg_settings]\nwork_mem = "8MB"\nmax_wal_size = ""\n',
                                  '[instance]\npg_settings = { work_mem = "8MB", max_wal_size = " " }\n',
                                  'pg_settings = ["work_mem=8MB", "max_wal_size="]\n'])
def test_an_empty_setting_in_the_file_is_refused_and_says_how_to_remove_one(tmp_path, toml):
    """On the command line NAME= drops a remembered setting; the file's table has nothing under it to drop,
    so an empty value there would reach the server as one: refused, naming the file and the key."""
    with pytest.raises(ConfigErrors) as exc:
        config(tmp_path, toml=toml)
    assert exc.value.exit_code == 2
    (line,) = str(exc.value).splitlines()
    assert line.startswith("dbio.toml: ") and "pg_settings.max_wal_size" in line
    assert "delete the line" in line and "--pg-setting max_wal_size=" in line
    assert "work_mem" not in line


@pytest.mark.parametrize("setting, fragment", [("port=5432", "'port' is set by dbio"),
                                               ("shared_buffers=1GB", "use the shared_buffers option"),
                                               ("bad name=1", "not a setting name")])
def test_pg_settings_dbio_owns_are_refused(tmp_path, setting, fragment):
    with pytest.raises(ConfigErrors) as exc:
        config(tmp_path, cli={"pg_settings": [setting]})
    assert fragment in str(exc.value)


def test_every_error_is_reported(tmp_path):
    with pytest.raises(ConfigErrors) as exc:
        config(tmp_path, cli={"update_pct": "101", "scan_pct": "-1", "work_unit": "x"})
    assert len(exc.value.errors) == 3


def test_password_from_the_environment_is_used_but_never_stored(tmp_path):
    cfg = config(tmp_path, env={"DBIO_DSN": "host=db user=u password=hunter2 dbname=x"})
    assert "hunter2" in cfg.connection.dsn
    stored = cfg.to_dict()["connection"]["dsn"]
    assert "hunter2" not in stored and "host=db" in stored


def test_password_on_the_command_line_is_refused(tmp_path):
    with pytest.raises(ConfigErrors) as exc:
        config(tmp_path, cli={"dsn": "postgresql://u:hunter2@db/x"})
    message = str(exc.value)
    assert "visible to every user of this host" in message and "--password" in message
    assert "hunter2" not in message


def test_password_in_the_file_only_when_the_user_insists(tmp_path):
    toml = "[connection]\ndsn = 'host=db password=hunter2'\npassword_in_config = true\n"
    assert "hunter2" in config(tmp_path, toml=toml).connection.dsn


@pytest.mark.parametrize("mode, owner, refused", [
    (0o644, "me", None),
    (0o600, "me", None),
    (0o664, "me", "is writable by its group"),
    (0o646, "me", "is writable by every user"),
    (0o644, "other", "is owned by uid 4242"),
])
def test_a_configuration_file_others_could_write_is_refused_before_it_is_read(tmp_path, mode, owner, refused):
    """Root running dbio where another user wrote dbio.toml would take its archive_command."""
    if owner == "other" and os.geteuid() != 0:
        pytest.skip("needs root to give a file to another user")
    path = tmp_path / "dbio.toml"
    path.write_text("[instance.pg_settings]\nwork_mem = '8MB'\n")
    path.chmod(mode)
    if os.geteuid() == 0:  # a group other than root's, as an ordinary user's file has
        os.chown(path, 4242 if owner == "other" else 0, 1000)
    elif refused == "is writable by its group":
        refused = None  # not root: the file's group is the user's own, whose members it trusts (trust.py)
    for sources in (Sources(cwd=tmp_path), Sources(cwd=tmp_path, config_file=path)):
        if refused is None:
            assert load_config(sources).files == (path,)
            continue
        with pytest.raises(ConfigErrors) as err:
            load_config(sources)
        (line,) = str(err.value).splitlines()
        assert refused in line and "refusing to read it" in line and "chmod go-w" in line
        assert ("found in the current directory" in line) == (sources.config_file is None)


def test_a_slob_conf_others_could_write_is_refused(tmp_path):
    path = tmp_path / "slob.conf"
    path.write_text("UPDATE_PCT=20\n")
    path.chmod(0o666)
    with pytest.raises(ConfigErrors, match="slob.conf = \\(file\\): refusing to read it"):
        load_config(Sources(cwd=tmp_path, slob_conf=path))


def test_several_dsns_are_one_node_each(tmp_path):
    from dbio.config import each_node, option_values

    toml = '[connection]\ndsn = ["host=/tmp/a port=5432 dbname=dbio", "host=db2 port=5433 dbname=dbio"]\n'
    cfg = config(tmp_path, toml=toml)
    assert cfg.connection.dsns == ("host=/tmp/a port=5432 dbname=dbio", "host=db2 port=5433 dbname=dbio")
    assert cfg.connection.dsn == cfg.connection.dsns[0] and not cfg.connection.embedded
    nodes = each_node(cfg)
    assert [n.connection.dsns for n in nodes] == [(d,) for d in cfg.connection.dsns]
    assert all(n.workload == cfg.workload for n in nodes)
    assert option_values(cfg)["dsn"] == ["dbname=dbio host=/tmp/a port=5432", "dbname=dbio host=db2 port=5433"]
    assert cfg.to_dict()["connection"]["dsns"] == option_values(cfg)["dsn"]
    one = config(tmp_path, cli={"dsn": ["host=/tmp/a dbname=dbio"]})
    assert each_node(one) == [one] and "dsns" not in one.to_dict()["connection"]


def test_every_dsn_is_checked(tmp_path):
    with pytest.raises(ConfigErrors) as err:
        config(tmp_path, cli={"dsn": ["host=/tmp/a dbname=dbio", "host=/tmp/b dbname=postgres"]})
    assert "uses the database 'postgres'" in str(err.value)


@pytest.mark.parametrize("name, runs", [
    ("archive_command", True), ("shared_preload_libraries", True), ("archive_library", True),
    ("dynamic_library_path", True), ("basebackup_to_shell.command", True), ("plperl.on_init", True),
    ("plperl.on_plperlu_init", True), ("work_mem", False), ("auto_explain.log_min_duration", False),
    ("log_directory", False),
])
def test_a_setting_that_runs_a_program_or_loads_code_needs_allowing_by_name(tmp_path, name, runs):
    """basebackup_to_shell (bundled) runs its .command for a backup: a module's setting is judged by its own
    name as a server's is."""
    sources = Sources(cli={"pg_settings": [f"{name}=x"]}, cwd=tmp_path, discover=False)
    if not runs:
        assert dict(load_config(sources).instance.pg_settings) == {name: "x"}
        return
    with pytest.raises(ConfigErrors, match=f"sets {re.escape(name)}, which makes the server run a program"):
        load_config(sources)
    allowed = Sources(cli={"pg_settings": [f"{name}=x"], "allow_settings": [name]}, cwd=tmp_path, discover=False)
    assert dict(load_config(allowed).instance.pg_settings) == {name: "x"}


def test_a_metrics_address_without_a_port_is_refused_on_the_line_and_told_from_a_file(tmp_path):
    # --metrics-address 0.0.0.0 alone ran the whole run serving nothing, without a word
    with pytest.raises(ConfigErrors) as refused:
        config(tmp_path, cli={"metrics_address": "0.0.0.0", "allow_cached": True})
    text = str(refused.value)
    assert "--metrics-address" in text and "serves nothing without --metrics-port" in text and "\n" not in text
    told = config(tmp_path, env={"DBIO_METRICS_ADDRESS": "0.0.0.0"}, cli={"allow_cached": True})
    assert any("DBIO_METRICS_ADDRESS: not used without metrics_port" in n for n in told.notices), told.notices
    both = config(tmp_path, cli={"metrics_address": "0.0.0.0", "metrics_port": "0", "allow_cached": True})
    assert both.run.metrics_address == "0.0.0.0" and not any("metrics" in n for n in both.notices)
