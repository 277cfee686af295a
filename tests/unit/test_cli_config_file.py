"""The command line says which configuration file it read (one line, not under -q)."""

import pytest

from dbio import cli


def run(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    out = capsys.readouterr()
    return exit_info.value.code, out.out, out.err


def test_the_configuration_file_read_is_named_once(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "dbio.toml").write_text("[workload]\nupdate_pct = 5\n")
    absent = str(tmp_path / "no-instance")
    code, out, _ = run(["instance", "status", "--data-dir", absent], capsys)
    assert code == 3
    assert out.count("configuration read from") == 1 and f"configuration read from {tmp_path / 'dbio.toml'}" in out
    code, out, _ = run(["-q", "instance", "status", "--data-dir", absent], capsys)
    assert code == 3 and "configuration read from" not in out


def test_no_line_without_a_configuration_file(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(["instance", "status", "--data-dir", str(tmp_path / "none")], capsys)
    assert code == 3 and "configuration read from" not in out


def test_an_empty_setting_in_dbio_toml_is_a_usage_error_of_one_line(tmp_path, capsys, monkeypatch):
    """Refused while the configuration is read, before any command acts (status: 3 had it been read)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "dbio.toml").write_text('[instance.pg_settings]\nlog_line_prefix = ""\n')
    code, _, err = run(["instance", "status", "--data-dir", str(tmp_path / "no-instance")], capsys)
    assert code == 2
    (line,) = [text for text in err.splitlines() if "log_line_prefix" in text]
    assert "dbio.toml: instance.pg_settings.log_line_prefix" in line and "delete the line" in line


def help_text(*command):
    from click.testing import CliRunner

    done = CliRunner().invoke(cli.cli, [*command, "--help"], terminal_width=300)
    assert done.exit_code == 0, done.output
    return done.output


def test_quickstart_help_shows_quickstart_s_own_defaults():
    out = help_text("quickstart")
    assert "[default: 30 s]" in out and "[default: 5 s]" in out and "[default: 4]" in out and "--reload" in out
    assert "[default: 300 s]" not in out
    out = help_text("run")
    assert "[default: 300 s]" in out and "[default: 30 s]" in out
    from click.testing import CliRunner

    every = CliRunner().invoke(cli.cli, ["options", "run"], terminal_width=300).output  # all run takes
    assert "[default: 100 ms]" in every  # think_time_min: listed with every option, not in run's help
