"""The help tells the truth: every name `dbio options` prints exists where it says, and every
command a message tells the user to run exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from dbio import cli, config_resolver
from dbio.commands.quickstart import PRESET as QUICKSTART_PRESET
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
            assert read_env({name: "1"}, []), f"{name} is printed but not read"


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


def _leaves(group: click.Group = cli.cli, prefix: str = ""):
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from _leaves(command, f"{prefix}{name} ")
        else:
            yield f"{prefix}{name}", command


def _accepted(line: str) -> None:
    """The example as a user types it: its words as the shell makes them, parsed by the command's real flags,
    and its configuration valid."""
    import subprocess

    from dbio import command_flags
    from dbio.config import load_config

    words = subprocess.run(["sh", "-c", f"printf '%s\\0' {line}"], capture_output=True, text=True,
                           check=True).stdout.split("\0")[:-1]
    assert words[0] == "dbio", line
    group, path, args = cli.cli, [], words[1:]
    while isinstance(group, click.Group) and args and args[0] in group.commands:
        group = group.commands[args[0]]
        path.append(args.pop(0))
    command = " ".join(path)
    assert not isinstance(group, click.Group), line
    ctx = group.make_context(command, args)  # raises on a flag or value the command does not take
    if command in command_flags.COMMANDS:
        params = dict(ctx.params)
        preset = QUICKSTART_PRESET if command == "quickstart" else None
        # raises on a value the configuration refuses
        load_config(config_resolver.command_sources(params, preset, command))


def test_every_example_in_the_help_is_accepted_as_written():
    from dbio import command_help

    for command, examples in command_help.EXAMPLES.items():
        for line, _ in examples:
            assert line.startswith(f"dbio {command}".rstrip() + " ") or line == f"dbio {command}", line
            _accepted(line)


def test_each_command_s_help_is_short_with_examples_and_points_to_dbio_options():
    # each command's help ran 210-270 lines of options with no example; run's omitted report.html
    from dbio import command_flags

    for name, command in _leaves():
        if name in ("sql", "options"):
            continue
        text = CliRunner().invoke(cli.cli, [*name.split(), "--help"], terminal_width=80).output
        assert len(text.splitlines()) <= 100, f"dbio {name} --help: {len(text.splitlines())} lines"
        assert "Examples:" in text and f"  dbio {name}" in text, name
        if name in command_flags.COMMANDS:
            assert f"dbio options {name} lists every one it takes" in " ".join(text.split()), name
            hidden = {o for param in command.params if getattr(param, "hidden", False) for o in param.opts}
            assert not hidden & {"--debug", "-q"}, name
    run_help = " ".join(CliRunner().invoke(cli.cli, ["run", "--help"]).output.split())
    assert all(f in run_help for f in ("result.json", "report.txt", "report.html"))


def test_the_key_options_a_help_lists_are_the_command_s_own():
    from dbio import command_help
    from dbio.option_table import BY_KEY

    for name, keys in command_help.KEY_OPTIONS.items():
        command = _command(name)
        shown = {o for param in command.params if not getattr(param, "hidden", False) for o in param.opts}
        for key in keys:
            flag = key if key.startswith("--") else BY_KEY[key].flag
            assert flag in shown, f"dbio {name} --help should list {flag}"


def test_dbio_options_for_one_command_lists_what_it_takes():
    done = CliRunner().invoke(cli.cli, ["options", "instance", "status"], terminal_width=300)
    assert done.exit_code == 0
    table, own = done.output.split("dbio instance status's own flags (command line only):\n")
    assert [line.split()[1] for line in table.splitlines() if not line.startswith(" ")] == ["data_dir", "engine"]
    assert [line.split()[0] for line in own.splitlines() if not line.startswith("    ")] == ["--config"]
    with pytest.raises(SystemExit) as refused:
        cli.main(["options", "nope"])
    assert refused.value.code == 2
