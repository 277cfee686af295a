"""Every flag of every command is made from its row (issue 35, item 2): none hand-written beside the table,
each command's own flags those of command_options.py, a default said once (its row) and applied as said."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from dbio import command_flags, command_options, units
from dbio.cli import cli
from dbio.cli_config import engine_flags
from dbio.cli_group import GLOBAL_OPTIONS
from dbio.jobs import ops as ops_verb
from dbio.commands import sweep as sweep_verb
from dbio.option import OWN, REPEATS
from dbio.option_table import OPTIONS

PACKAGE = Path(__file__).resolve().parents[2] / "dbio"
EXTRAS = {"--help", "--version"}  # click's own


def test_no_click_option_is_written_by_hand():
    written = [f"{path.relative_to(PACKAGE.parent)}:{n}" for path in sorted(PACKAGE.rglob("*.py"))
               for n, line in enumerate(path.read_text().splitlines(), 1) if "@click.option" in line]
    assert not written, f"a flag is a row (option_table.py, command_options.py), not a decorator: {written}"


def _commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    found: list[tuple[str, click.Command]] = []
    for name, command in group.commands.items():
        path = f"{prefix}{name}"
        found += _commands(command, f"{path} ") if isinstance(command, click.Group) else [(path, command)]
    return found


COMMANDS = [("", cli), *_commands(cli)]  # the root's own flags too (dbio --debug)


def test_the_walk_finds_every_command():
    names = {name for name, _ in COMMANDS}
    assert {"run", "sweep", "ops", "kubernetes", "report", "sql", "instance destroy", "instance init"} <= names
    assert len(names) == 20 and "" in names  # 19 commands and the root


@pytest.mark.parametrize("name,command", COMMANDS, ids=[name or "dbio" for name, _ in COMMANDS])
def test_each_flag_of_a_command_is_its_row(name, command):
    """A command's flags are its own rows, the table's options it takes, the extras and the global ones:
    nothing else (a flag added any other way fails here)."""
    own = {option.flag: option for option in command_options.of(name)}
    table = {flag for option in OPTIONS if name in command_flags.COMMANDS and command_flags.takes(name, option)
             for flag in command_flags.flags_of(option)} | {option.flag for option, _ in engine_flags()}
    globals_ = {opt for param in GLOBAL_OPTIONS for opt in param.opts}
    for param in command.params:
        if not isinstance(param, click.Option):
            continue
        first = param.opts[0]
        assert first in own or first in table or first in EXTRAS or first in globals_, f"{name} {first}"
        if first in own:  # made from that row: its name, how it repeats, whether it must be given
            row = own[first]
            assert param.name == row.name and param.required == row.required
            assert param.multiple == (row.kind == "strs") and (row.repeat != "") == (row.kind == "strs")
    flags = {opt for param in command.params for opt in param.opts}
    assert set(own) <= flags, f"{name}: rows without their flag: {set(own) - flags}"


def test_the_configuration_s_flags_are_rows_in_their_place():
    """--config, --slob-conf, --password, --sessions: rows too, taken where their rows say, placed as before
    (the files before each engine's repeatable flags, the others after them)."""
    def flags(name: str) -> list[str]:
        command = dict(COMMANDS)[name]
        return [param.opts[0] for param in command.params if isinstance(param, click.Option)]

    init = flags("instance init")
    assert init.index("--config") < init.index("--pg-setting") < init.index("--sessions") < init.index("--engine")
    assert "--password" not in flags("kubernetes") and "--password" in flags("teardown")
    assert "--slob-conf" in flags("run") and "--slob-conf" not in flags("instance start")
    assert flags("sweep").count("--sessions") == 1  # its own: a total per step
    own = {(o.flag, c) for o in command_options.COMMAND_OPTIONS for c in o.commands}
    assert ("--sessions", "sweep") in own and ("--config", "instance status") in own


def test_the_rows_are_well_formed():
    for option in command_options.COMMAND_OPTIONS:
        assert option.section == OWN and not option.file and option.commands, option.key
        assert option.repeat in REPEATS and (option.kind == "strs") == bool(option.repeat), option.key
        assert not option.unset or option.default is not None or option.kind == "bool", option.key
    assert all(not option.commands or option.section != OWN for option in OPTIONS)


def test_each_table_row_names_the_commands_that_take_it():
    """The table's rows say their commands (no predicate over key names): every one a real command, and
    each scope the commands a reader of the row expects."""
    from dbio import option

    for row in OPTIONS:
        assert row.commands and set(row.commands) <= set(option.COMMANDS), row.key
    by_key = {row.key: set(row.commands) for row in OPTIONS}
    assert by_key["part"] == {"run"} and by_key["engine"] == set(option.COMMANDS)
    assert by_key["data_dir"] >= set(option.INSTANCE) and "kubernetes" not in by_key["data_dir"]
    assert by_key["metrics_port"] == {"run", "sweep", "kubernetes"}
    assert by_key["standbys"] == by_key["galera"] == {"quickstart", "setup", "sweep", "instance init"}


def _stated_default(command: str, flag: str) -> str:
    text = " ".join(cli.commands[command].get_help(click.Context(cli.commands[command], info_name=command)).split())
    found = re.search(re.escape(flag) + r" \S+ .*?\[default: ([^]]+)\]", text)
    assert found, f"{command} {flag}: no default in its help"
    return found.group(1)


def test_ops_applies_the_defaults_its_help_states():
    """--wal and --dirty: the help's default is the size ops uses when the flag is not given (said once)."""
    recovery = ops_verb.request("recovery", None, None, None, False)
    checkpoint = ops_verb.request("checkpoint", None, None, None, False)
    assert recovery.wal_bytes == units.parse_size(_stated_default("ops", "--wal")) == 256 << 20
    assert checkpoint.dirty_bytes == units.parse_size(_stated_default("ops", "--dirty")) == 64 << 20


def test_a_sweep_searches_up_to_the_sessions_its_help_states():
    find = sweep_verb.search_request("read_p99<2ms", None)
    assert find is not None and find["max_sessions"] == int(_stated_default("sweep", "--max-sessions")) == 4096


def test_a_flag_twice_in_one_command_is_refused_at_import():
    rows = (*command_options.COMMAND_OPTIONS, command_options.COMMAND_OPTIONS[0])
    with pytest.raises(AssertionError, match="quickstart: --reload declared twice"):
        command_options.checked(rows)


def test_dbio_options_lists_each_command_s_own_flags_from_their_rows(capsys):
    from dbio import cli as cli_module

    cli_module.main(["options", "ops"])
    out = capsys.readouterr().out
    assert "dbio ops's own flags (command line only):" in out
    assert "  --wal SIZE\n    recovery: WAL to accumulate before the crash. [default: 256 MiB]\n" in out
    cli_module.main(["options", "report"])  # a command of no configuration option: its own flags
    out = capsys.readouterr().out
    assert out.startswith("dbio report's own flags") and "  --price NAME=AMOUNT/UNIT\n" in out
    cli_module.main(["options"])
    out = capsys.readouterr().out
    listed = out.split("Each command's own flags (command line only):\n")[1]
    assert listed.count("    flag accepted by: ") == len(command_options.COMMAND_OPTIONS)
    assert ("  --pods N\n    Pods per target (each --dsn is a target). [default: 1]\n"
            "    flag accepted by: dbio kubernetes\n") in listed
    assert "  -q, --quiet\n    Only errors and the final summary.\n    flag accepted by: dbio\n" in listed


def test_docs_list_each_command_s_own_flags():
    text = (PACKAGE.parent / "docs" / "configuration.md").read_text()
    for option in command_options.COMMAND_OPTIONS:
        assert re.search(rf"\| `(-\w, )?{option.flag}[ `]", text), option.flag


def test_the_sweep_s_gains_are_the_ones_its_help_states():
    """--peak-gain's default is the row's (sweep/growth reads it); --knee-gain's row and stats/knee's
    DEFAULT_GAIN are two declarations (statistics import nothing of the command line): kept equal here."""
    from dbio.stats import knee
    from dbio.sweep import growth

    assert growth.PEAK_GAIN == command_options.default("sweep", "peak_gain") == 0.05
    assert knee.DEFAULT_GAIN == command_options.default("sweep", "knee_gain")


def test_a_resumed_sweep_is_not_refused_for_flags_it_was_not_given(tmp_path):
    """sweep --resume takes no other flag: one not given reaches it as None (--password's unset row), never as a
    given False."""
    from click.testing import CliRunner

    done = CliRunner().invoke(cli, ["sweep", "--resume", str(tmp_path / "none")])
    assert done.exception is not None and "takes no other options" not in str(done.exception)
    assert "none" in str(done.exception)  # refused for the directory it names, which is not there
    given = CliRunner().invoke(cli, ["sweep", "--resume", str(tmp_path / "none"), "--password"], input="x\n")
    assert "--resume takes no other options (got ask_password)" in str(given.exception)
