"""The dbio command line: its root command, and the one place that turns errors into messages and exit codes.
The commands are made in `cli_run_commands.py`, `cli_offline_commands.py` and `cli_admin_commands.py`, each
from its flags and Config (`cli_config.py`) as one of dbio's commands (`cli_group.py`)."""

from __future__ import annotations

import os
import sys
import traceback

import click

from dbio import __version__, cli_admin_commands, cli_offline_commands, cli_run_commands, command_help, controls
from dbio.cli_config import own_options
from dbio.cli_group import EXIT_INTERRUPTED, EXIT_USAGE, Commands
from dbio.command_options import ROOT
from dbio.errors import ConfigErrors, DbioError
from dbio.ui import UI


@click.group(cls=Commands, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(__version__, prog_name="dbio")
@own_options(ROOT)
@click.pass_context
def cli(ctx: click.Context, debug: bool, quiet: bool) -> None:
    """dbio: can this platform serve SQL-driven database physical I/O, and at what latency and CPU cost?

    The SLOB method for PostgreSQL, and for MySQL and MariaDB (--engine mysql): one-row-per-block
    tables much larger than the buffer cache, many synchronized zero-think-time sessions running a
    server-side work loop, and AWR-style reports from the engine's own counters. Without --dsn,
    dbio uses an embedded PostgreSQL 18 instance it creates itself, or with --engine mysql a
    MariaDB/MySQL instance of the server programs on the machine (put either on the storage under
    test with --data-dir).
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug
    ctx.obj["ui"] = UI(quiet=quiet)


cli.epilog = command_help.epilog("")
for made in (*cli_run_commands.COMMANDS, *cli_offline_commands.COMMANDS, *cli_admin_commands.COMMANDS):
    cli.add_command(made)
for made in cli_admin_commands.INSTANCE_COMMANDS:  # after the group is added: their help is "instance NAME"'s
    cli_admin_commands.instance.add_command(made)


def _command_path(argv: list[str]) -> str:
    """The command the words name ('dbio sweep'), for an error click raised without its context."""
    command: click.Command = cli
    path = ["dbio"]
    for word in argv:
        if not isinstance(command, click.Group):
            break
        if word in command.commands:
            command = command.commands[word]
            path.append(word)
    return " ".join(path)


def _error(message: str) -> None:
    """One line on stderr: a control character in it (a label's, a path's, a server's) is shown, not sent."""
    print(f"dbio: {controls.visible(message)}", file=sys.stderr)


def main(argv: list[str] | None = None) -> None:
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    try:
        code = cli.main(args=argv, prog_name="dbio", standalone_mode=False)
        if isinstance(code, int) and code:
            sys.exit(code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        _error("interrupted")
        sys.exit(EXIT_INTERRUPTED)
    except click.exceptions.NoArgsIsHelpError as exc:  # `dbio instance` alone: its help is the answer
        exc.show()
        sys.exit(EXIT_USAGE)
    except click.UsageError as exc:  # one line, as dbio's own refusals: what is wrong, where the help is
        where = exc.ctx.command_path if exc.ctx is not None else _command_path(sys.argv[1:] if argv is None else argv)
        _error(f"{exc.format_message().rstrip('.')}; see {where} --help")
        sys.exit(EXIT_USAGE)
    except click.ClickException as exc:
        _error(exc.format_message())
        sys.exit(exc.exit_code)
    except ConfigErrors as exc:
        from dbio.engines import scrub

        for error in exc.errors:  # scrubbed again: no message may carry a password, whoever wrote it
            _error(scrub(str(error)))
        sys.exit(exc.exit_code)
    except DbioError as exc:
        from dbio.engines import scrub

        _error(scrub(str(exc)))
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        _error("interrupted")
        sys.exit(EXIT_INTERRUPTED)
    except Exception as exc:
        from dbio.engines import scrub, server_error_text

        first = server_error_text(exc)
        if first is not None:
            _error(f"the server reported an error: {first}")
            if debug:
                traceback.print_exc()
            sys.exit(1)
        if debug or os.environ.get("DBIO_DEBUG"):
            traceback.print_exc()
        _error(f"internal error: {scrub(str(exc)) or type(exc).__name__} (run with --debug for details)")
        sys.exit(1)

