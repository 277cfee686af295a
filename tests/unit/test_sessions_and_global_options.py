"""`dbio run --sessions 8` as `dbio sweep --sessions` takes it (total sessions), and the global options after
the command's name (`dbio run -q`) as before it."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from dbio import cli, config_resolver
from dbio.config import Sources, load_config
from dbio.engines.base import SetupRecord, SetupSpec
from dbio.errors import UsageError


def _config(command: str, args: list[str], tmp_path: Path):
    """The configuration the command would run with, parsed by its real flags (nothing is run)."""
    words = command.split()
    group = cli.cli
    for word in words[:-1]:
        group = group.commands[word]
    # dbio kubernetes' pods run against --dsn targets: it takes no option of dbio's own instance
    place = [] if command == "kubernetes" else ["--data-dir", str(tmp_path / "none")]
    ctx = group.commands[words[-1]].make_context(command, [*args, *place])
    params = {k: v for k, v in ctx.params.items()}
    return load_config(config_resolver.command_sources(params, None, command))


@pytest.mark.parametrize("command", ["run", "quickstart", "baseline", "instance init", "kubernetes"])
def test_sessions_are_accepted_wherever_threads_are(command, tmp_path):
    # dbio run --sessions 8 was refused: "No such option '--sessions'"
    extra = ["--image", "x"] if command == "kubernetes" else []
    config = _config(command, ["--sessions", "8", *extra], tmp_path)
    assert config.workload.sessions == 8 and config.workload.threads_per_schema == 8
    spread = _config(command, ["--sessions", "8", "--schemas", "4", *extra], tmp_path)
    assert (spread.workload.schemas, spread.workload.threads_per_schema, spread.workload.sessions) == (4, 2, 8)


def test_sessions_that_cannot_be_spread_over_the_schemas_are_refused_in_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as exited:
        cli.main(["run", "--sessions", "8", "--schemas", "3", "--data-dir", str(tmp_path / "none")])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and err.count("\n") == 1, err
    assert err.startswith("dbio: --sessions 8 cannot be spread evenly over 3 schemas; give a multiple of 3")
    assert not (tmp_path / "none").exists()
    with pytest.raises(SystemExit) as both:
        cli.main(["run", "--sessions", "8", "-t", "2", "--data-dir", str(tmp_path / "none")])
    assert both.value.code == 2 and "--sessions and --threads-per-schema" in capsys.readouterr().err


def test_run_spreads_sessions_over_the_schemas_of_the_load(tmp_path):
    # run takes the data set's shape from the load: --sessions 8 over 4 loaded schemas is 2 threads each
    def loaded(schemas):
        return SetupRecord(setup_id="s1", spec=SetupSpec(131072, schemas, 8192, "random"), status="ready",
                           started_at="")

    sources = Sources(cli={"data_dir": str(tmp_path / "i")}, env={}, cwd=tmp_path, discover=False, sessions=8)

    def settled(record):
        return config_resolver.settle(sources, config_resolver.Facts(loaded=record, shape=config_resolver.LOADED))

    adopted = settled(loaded(4))
    assert (adopted.workload.schemas, adopted.workload.threads_per_schema) == (4, 2)
    assert settled(loaded(1)).workload.threads_per_schema == 8
    with pytest.raises(UsageError, match=r"^--sessions 8 cannot be spread evenly over 3 schemas \(the loaded"):
        settled(loaded(3))


def test_a_sweep_keeps_its_own_sessions_list():
    sweep = cli.cli.commands["sweep"]
    ctx = sweep.make_context("sweep", ["--sessions", "1,2,4"])
    assert ctx.params["sessions"] == "1,2,4"


@pytest.mark.parametrize("words", [["run", "-q"], ["run", "--debug"], ["instance", "status", "-q"],
                                   ["sweep", "--quiet"], ["report", "-q"], ["compare", "--debug"], ["options", "-q"]])
def test_global_options_are_accepted_after_the_command(words):
    # dbio run -q was refused: "No such option '-q'" (only dbio -q run worked)
    done = CliRunner().invoke(cli.cli, [*words, "--help"])
    assert done.exit_code == 0, done.output


def test_quiet_after_the_command_is_quiet(tmp_path):
    loud = CliRunner().invoke(cli.cli, ["instance", "status", "--data-dir", str(tmp_path)])
    before = CliRunner().invoke(cli.cli, ["-q", "instance", "status", "--data-dir", str(tmp_path)])
    after = CliRunner().invoke(cli.cli, ["instance", "status", "-q", "--data-dir", str(tmp_path)])
    assert loud.exit_code == before.exit_code == after.exit_code == 3
    assert loud.output and after.output == before.output != loud.output
