"""The help tells the truth: every name `dbio options` prints exists where it says, and every
command a message tells the user to run exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import click
from click.testing import CliRunner

from dbio import cli
from dbio.config_files import read_env

PACKAGE = Path(__file__).resolve().parents[2] / "dbio"


def _command(path: str) -> click.Command | None:
    command: click.Command | None = cli.cli
    for word in path.split():
        if not isinstance(command, click.Group):
            return None
        command = command.commands.get(word)
    return command


def _flags(command: click.Command) -> set[str]:
    return {name for param in command.params for name in (*param.opts, *param.secondary_opts)}


def _options_output() -> list[list[str]]:
    done = CliRunner().invoke(cli.cli, ["options"], terminal_width=300)
    assert done.exit_code == 0, done.output
    blocks: list[list[str]] = []
    for line in done.output.splitlines():
        if line.startswith("    "):
            blocks[-1].append(line.strip())
        else:
            blocks.append([line])
    return blocks


def test_every_flag_dbio_options_prints_is_accepted_by_each_command_it_names():
    blocks = _options_output()
    assert len(blocks) > 30
    for block in blocks:
        names = block[0].split()
        flag = next((n for n in names if n.startswith("--")), None)
        accepted = next((line for line in block if line.startswith("flag accepted by: ")), None)
        assert (flag is None) == (accepted is None), block
        if flag is None:
            continue
        commands = [c.strip()[len("dbio "):] for c in accepted[len("flag accepted by: "):].split(",")]
        for name in commands:
            command = _command(name)
            assert command is not None, f"dbio {name} does not exist"
            assert flag in _flags(command), f"dbio {name} does not take {flag}"
    assert "--pg-settings" not in str(blocks) and "--password-in-config" not in str(blocks)


def test_every_variable_dbio_options_prints_is_read():
    for block in _options_output():
        for name in (n for n in block[0].split() if n.startswith("DBIO_")):
            assert read_env({name: "1"}), f"{name} is printed but not read"


def test_commands_that_only_reach_the_instance_take_only_its_options():
    for name in ("instance stop", "instance status", "instance destroy"):
        flags = _flags(_command(name))
        assert "--data-dir" in flags and "--scale" not in flags and "--shared-buffers" not in flags, name
    teardown = _flags(_command("teardown"))
    assert "--dsn" in teardown and "--scale" not in teardown and "--run-time" not in teardown
    assert "--scale" in _flags(_command("run")) and "--schemas" in _flags(_command("instance init"))


# "run dbio X", "(dbio X", "`dbio X": the words a message uses to send the user to a command
_NAMED = re.compile(r"(?:\b(?:run|with|see|then|or|use|try)\s+|[(`])dbio ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?")
_PROSE = {"as", "with", "process"}  # "run dbio as the user who made it", "(dbio process 4242)"


def _strings(path: Path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.JoinedStr):
            yield "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.value


def test_every_command_a_message_names_exists():
    named = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        for text in _strings(path):
            for first, second in _NAMED.findall(text):
                if first not in _PROSE:
                    named.add((path.name, first, second))
    assert ("run.py", "setup", "first") in named  # the scan sees the messages
    for where, first, second in sorted(named):
        command = _command(first)
        assert command is not None, f"{where} names dbio {first}, which does not exist"
        if isinstance(command, click.Group):
            assert second in command.commands, f"{where} names dbio {first} {second}, which does not exist"


def test_the_help_of_the_instance_and_of_dsn_names_the_mysql_engine_too():
    # `dbio instance --help` said "The embedded PostgreSQL instance" and --dsn "an existing PostgreSQL
    # server", though both serve --engine mysql (the managed MariaDB, mysql://...)
    runner = CliRunner()
    assert "--engine mysql" in runner.invoke(cli.cli, ["instance", "--help"]).output
    assert "--engine mysql" in runner.invoke(cli.cli, ["--help"]).output
    run_help = " ".join(runner.invoke(cli.cli, ["run", "--help"], terminal_width=200).output.split())
    assert "mysql://user@host:port/dbname with --engine mysql" in run_help
