"""An option given twice on one command's line is refused in one line (exit 2), before anything runs: click
alone takes the last (`--price instance=300/month --price instance=200/month` priced the sweep at 200, said
nowhere). A repeatable flag either sets one thing per item, two items of one name being refused, or adds its
items up, in order, as documented below. Table-driven over every option of every command, parsed in-process
(parsing alone: nothing is run, no server is needed)."""

from __future__ import annotations

import click
import pytest

from dbio import cli, config_resolver
from dbio.config import load_config
from dbio.errors import ConfigErrors


def _commands() -> list[tuple[str, click.Command]]:
    """Every command as typed ("" for dbio itself, "instance init"), the groups' own options included."""
    found: list[tuple[str, click.Command]] = []

    def walk(command: click.Command, path: str) -> None:
        found.append((path, command))
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                walk(sub, f"{path} {name}".strip())

    walk(cli.cli, "")
    return found


COMMANDS = _commands()
# what a command needs on its line besides the option under test (a positional argument, a required option)
NEEDS = {"report": ["r"], "compare": ["a"], "merge": ["a", "--out", "o"], "kubernetes": ["--image", "i"],
         "ops": ["index"]}

# The repeatable flags, each with two items naming one thing (refused), or two items kept both, in order.
# Every repeatable flag of every command is in one of them (test_every_repeatable_flag_is_documented_here).
ONE_PER_NAME = {
    "--price": ("instance=300/month", "Instance=200/month"),  # the sweep's cost: one price per name
    "--vary": ("update_pct=0,20", "update-pct=50"),  # a knob varied once: the grid is its values' product
    "--pg-setting": ("work_mem=1MB", "WORK_MEM=2MB"),  # postgresql.conf takes the last: dbio refuses the pair
    "--allow-setting": ("archive_command", "ARCHIVE_COMMAND"),
    "--node-selector": ("disk=nvme", "disk=ssd"),  # a node label has one value (its keys are case-sensitive)
}
OTHER_NAME = {"--price": "volume=0.08/GB-month", "--vary": "scan_pct=0,5", "--pg-setting": "temp_buffers=8MB",
              "--allow-setting": "shared_preload_libraries", "--node-selector": "Disk=ssd"}
ADDS_UP = {  # each one more: a node, a node's name or weight, a directory (their own checks judge the whole list)
    "--dsn": ("host=a", "host=b"),
    "--node-names": ("a", "b"),
    "--weights": ("3", "3"),  # two nodes of one weight: a weight is per node, so a repeated value is no repeat
    "--data-dirs": ("/a", "/b"),
    "--standby-data-dir": ("/a", "/b"),
    "--galera-data-dir": ("/a", "/b"),  # one per Galera node, in order
    "--tolerate": ("dedicated=a:NoSchedule", "dedicated=a:NoExecute"),  # one more each (dbio kubernetes judges)
    "--event": ("10s=stall:1s", "20s=stall:1s"),  # one more disruption each (their overlap is judged together)
}


def _parse(path: str, args: list[str]) -> click.Context:
    command: click.Command = cli.cli
    for word in path.split():
        assert isinstance(command, click.Group)
        command = command.commands[word]
    needs = NEEDS.get(path, [])
    for i, word in enumerate(needs):  # an option needed, under test itself: given by the test alone
        if word in args and word.startswith("-"):
            needs = needs[:i] + needs[i + 2:]
    return command.make_context(f"dbio {path}".strip(), [*args, *needs])


def _value(param: click.Option) -> list[str]:
    """A value the option reads (so that only the repetition can be refused), none for a flag."""
    if param.is_flag:
        return []
    if isinstance(param.type, click.Choice):
        return [str(param.type.choices[0])]
    return ["1"]


def _single(include_alias: bool) -> list[tuple[str, str, str, str]]:
    """(command, flag, the same option's other spelling, option name) of every option given once at most."""
    cases = []
    for path, command in COMMANDS:
        for param in command.params:
            if not isinstance(param, click.Option) or param.multiple:
                continue
            spellings = param.opts + param.secondary_opts
            if include_alias and len(spellings) == 1:
                continue
            cases.append((path, spellings[0], spellings[-1] if include_alias else spellings[0], str(param.name)))
    return cases


@pytest.mark.parametrize("path, first, second, name", _single(False) + _single(True))
def test_an_option_given_twice_is_refused(path, first, second, name):
    param = next(p for p in dict(COMMANDS)[path].params if p.name == name)
    assert isinstance(param, click.Option)
    value = _value(param)
    with pytest.raises(click.UsageError, match=r" is given twice; give it once$") as refused:
        _parse(path, [first, *value, second, *value])
    assert first in str(refused.value.message) and "\n" not in refused.value.message


def _repeatable() -> list[tuple[str, str, str]]:
    """(command, flag, option name) of every repeatable flag."""
    return [(path, param.opts[0], str(param.name)) for path, command in COMMANDS for param in command.params
            if isinstance(param, click.Option) and param.multiple]


def test_every_repeatable_flag_is_documented_here():
    # a repeatable flag added later (--event) says here whether it adds up or sets one thing per name
    found = {flag for _, flag, _ in _repeatable()}
    assert found == set(ONE_PER_NAME) | set(ADDS_UP)


@pytest.mark.parametrize("path, flag, name", [case for case in _repeatable() if case[1] in ONE_PER_NAME])
def test_a_repeatable_flag_naming_one_thing_twice_is_refused(path, flag, name):
    first, second = ONE_PER_NAME[flag]
    with pytest.raises(click.UsageError, match=r" is given twice; give each [A-Z]+ once$") as refused:
        _parse(path, [flag, first, flag, second])
    assert refused.value.message.startswith(f"{flag} {first.partition('=')[0].lower()} is given twice")
    assert _parse(path, [flag, first, flag, OTHER_NAME[flag]]).params[name] == (first, OTHER_NAME[flag])


@pytest.mark.parametrize("path, flag, name", [case for case in _repeatable() if case[1] in ADDS_UP])
def test_a_repeatable_list_adds_up_in_order(path, flag, name):
    first, second = ADDS_UP[flag]
    assert _parse(path, [flag, first, flag, second]).params[name] == (first, second)


def test_the_same_server_given_twice_is_refused_before_any_is_reached(tmp_path):
    # two --dsn of one connection string: one server twice (its I/O would count twice); a file's list too
    params = dict(_parse("run", ["--dsn", "host=a", "--dsn", "host=a"]).params)
    with pytest.raises(ConfigErrors, match=r"--dsn = .*: the same connection string is given twice"):
        load_config(config_resolver.command_sources(params, None, "run"))
    params = dict(_parse("run", ["--dsn", "host=a", "--dsn", "host=b", "--weights", "3", "--weights", "1"]).params)
    config = load_config(config_resolver.command_sources(params, None, "run"))
    assert config.connection.dsns == ("host=a", "host=b") and config.connection.weights == ("3", "1")


def test_the_refusal_is_one_line_and_exit_2_before_anything(tmp_path, capsys):
    place = tmp_path / "instance"
    with pytest.raises(SystemExit) as exited:
        cli.main(["instance", "status", "--data-dir", str(place), "--data-dir", str(tmp_path / "other")])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and err == ("dbio: --data-dir is given twice; give it once; "
                                              "see dbio instance status --help\n")
    with pytest.raises(SystemExit) as priced:
        cli.main(["report", str(tmp_path / "sweep"), "--price", "instance=300/month", "--price",
                  "instance=200/month"])
    assert priced.value.code == 2 and capsys.readouterr().err == (
        "dbio: --price instance is given twice; give each NAME once; see dbio report --help\n")
    assert not place.exists() and not (tmp_path / "other").exists()


def test_the_global_options_before_and_after_a_command_are_one_each():
    # -q before the command and after it: each place once, so `dbio -q run -q` is accepted as documented
    assert _parse("", ["-q", "run", "-q"]).params["quiet"] is True
    with pytest.raises(click.UsageError, match="--quiet/-q is given twice"):
        _parse("run", ["-q", "--quiet"])


def test_a_command_or_a_repeatable_flag_that_does_not_say_how_cannot_join():
    # the guard that keeps a later flag (--event) from taking the last value: checked as a command is added
    from dbio.cli_group import Commands, Repeatable, command

    group = Commands("g")
    with pytest.raises(AssertionError, match="made with cli_group.command"):
        group.add_command(click.Command("plain"))
    loose = command("loose")(click.option("--event", multiple=True)(lambda event: None))
    with pytest.raises(AssertionError, match=r"--event repeat without saying how"):
        group.add_command(loose)
    with pytest.raises(AssertionError, match="an item_key or adds up"):
        Repeatable(["--event"])
    keyed = command("keyed")(click.option("--event", cls=Repeatable, item_key=str.lower)(lambda event: None))
    group.add_command(keyed)
    with pytest.raises(click.UsageError, match="--event a is given twice"):
        keyed.make_context("keyed", ["--event", "a", "--event", "A"])
