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
    assert "[default: 300 s]" in out and "[default: 30 s]" in out and "[default: 100 ms]" in out
