"""The one configuration resolver: each command's Config is made here, once, before the command runs.

The layers, lowest first (config.LAYERS), each option taken from the highest that sets it:

    defaults < the command's preset < what the instance remembers < the loaded data set's shape
             < dbio.toml < slob.conf < DBIO_* environment < flags

In four steps:
1. The request (the flags, the files named, the environment) is read to find where the configuration
   points: engine, server, data directory. A value that does not read is refused here, before anything.
2. The results directory, as given (links on the way not followed yet), passes the trust rules, for the
   commands that write results: a link another user could swap is refused before anything follows it.
   The command's own flags are checked too (a sweep's grid, --repeat), before any server is reached.
3. The facts, each read once: the options dbio's own instance keeps in its record (the settings options
   the last command that configured it was given: `dbio instance init --shared-buffers 16MiB` need not be
   repeated), and, for a command that works on the loaded data set, the shape of what is loaded (its
   setup record, read holding the server alone), so that scale and schemas need not be repeated after
   setup. Each is said in one line when it changes anything.
4. Every layer with those facts, and one validation (config_checks.validate): the final, frozen Config.
   What the facts could not be read for (a server that does not answer) is said after the validation,
   which names a configuration's own faults first.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from dbio import command_flags, results_dir
from dbio import target as targets
from dbio.jobs import dataset
from dbio.config import (LOADED_ORIGIN, SESSIONS_FLAG, Config, FileLayers, Sources, checked, environment,
                         load_config, read_files)
from dbio.config_checks import dsn_dbname, show_value
from dbio.engines import registry
from dbio.engines.base import SetupRecord
from dbio.errors import ConfigErrors, UsageError
from dbio.option_table import BY_KEY, OPTIONS
from dbio.units import BLOCK_SIZE

# What a command takes of the loaded data set's shape where the user gives none.
NO_SHAPE = "none"  # its own shape (it loads one, or works on no data set)
LOADED = "loaded"  # the loaded one (run, sweep); an interrupted load's silently: the command refuses it
RESUMING = "resuming"  # the loaded one, an interrupted load's too (setup --verify, ops load)
INTERRUPTED = "interrupted"  # an interrupted load's alone, so that `dbio setup` again finishes it

# Commands that configure no instance take nothing of what it remembers: they work on it as it is, and its
# settings (shared_buffers 1 GiB after a setup with --allow-cached, an allowed archive_command) would be judged
# against a workload they neither have nor take flags for, refusing to stop, show or destroy it.
CONFIGURE_NOTHING = ("instance stop", "instance status", "instance destroy", "teardown", "kubernetes")


@dataclass(frozen=True)
class Facts:
    """What the middle layers hold, read once: the instance's kept options and the loaded data set."""

    remembered: Mapping[str, Any] = field(default_factory=dict)
    loaded: SetupRecord | None = None
    shape: str = NO_SHAPE  # what the command takes of loaded (NO_SHAPE ... INTERRUPTED)


def command_sources(params: dict[str, Any], preset: dict[str, Any] | None = None, command: str = "") -> Sources:
    """The command's flags (taken out of params), the files it names and the environment."""
    if params.pop("ask_password", None):
        import getpass

        # each driver reads it from this process's environment (the engine is not known before the
        # configuration is read, so every engine's variable); nothing else ever sees it
        password = getpass.getpass("password for the server: ")
        for name in registry.names():
            os.environ[registry.entry(name).password_env] = password
    cli_values = {o.key: params.pop(o.key, None) for o in OPTIONS if o.cli}
    total_sessions = params.pop("total_sessions", None)
    if total_sessions is not None and cli_values.get("threads_per_schema") is not None:
        raise UsageError(f"{SESSIONS_FLAG} and --threads-per-schema both set the sessions",
                         "give one: --sessions N is the total, --threads-per-schema N each schema's")
    for option in OPTIONS:  # a repeatable flag not given at all arrives as ()
        if option.kind == "strs" and not cli_values.get(option.key):
            cli_values[option.key] = None
    for name in registry.names():  # each engine's own repeatable flags (--pg-setting): () when not given
        for key in registry.entry(name).flags:
            items = params.pop(key, ())
            if items:
                cli_values[key] = list(items)
    if command in command_flags.COMMANDS and not command_flags.takes(command, BY_KEY["scale"]):
        # no data set: the rule that the cache must not hold one is for the commands that load or run it
        # (instance init --shared-buffers 2GiB was refused for the default scale it cannot be given)
        preset = {"allow_cached": True, **(preset or {})}
    passwords = {registry.entry(name).password_env for name in registry.names()}  # the drivers', not options
    env = {k: v for k, v in environment().items() if k not in passwords}
    return Sources(config_file=params.pop("config_file", None), slob_conf=params.pop("slob_conf", None),
                   env=env, cli={k: v for k, v in cli_values.items() if v is not None}, cwd=Path.cwd(),
                   preset=preset or {}, sessions=total_sessions)


def resolve_config(sources: Sources, *, command: str = "", shape: str = NO_SHAPE, writes_results: bool = False,
                   notify: Callable[[str], None] = lambda _: None,
                   request_check: Callable[[Config], object] | None = None) -> Config:
    """The command's one Config (the module's four steps). shape: what it takes of the loaded data set;
    writes_results: its results directory is judged as given, before anything; request_check: the command's
    own flags checked against where the configuration points (a sweep's grid), before a fact is read from a
    server (which may start a stopped instance)."""
    files = read_files(sources)  # dbio.toml and slob.conf, read once for every layer made of them
    located = load_config(sources, check=False, files=files)  # 1: values that do not read are refused here
    if command != "kubernetes":  # whose pods take their --dsn: it says what it does not use itself
        refused, told = dsn_dbname(located)
        if refused:
            raise ConfigErrors(refused)
        for line in told:
            notify(line)
    if writes_results:  # 2
        results_dir.check(located.run.results_dir)
    if request_check is not None:
        request_check(located)
    instance = _own_instance(located)
    stopped = instance if instance is not None and not instance.is_running() else None
    facts, unread = read_facts(located, instance, command, shape, notify)  # 3
    try:
        config = settle(sources, facts, located, notify, files)  # 4
    except UsageError:
        # refused: the instance is left as the command found it (started only to read its setup record)
        if stopped is not None and stopped.is_running():
            stopped.stop(quiet=True)
        raise
    if unread is not None:
        raise unread
    return config


def read_facts(located: Config, instance: Any | None, command: str, shape: str,
               notify: Callable[[str], None]) -> tuple[Facts, Exception | None]:
    """The facts, and what kept one from being read (said once the configuration is known to be sound).
    instance: dbio's own instance where the configuration points (_own_instance)."""
    # commands that configure nothing, and a --dsn's server (no instance of dbio's), take nothing remembered
    remembered = {} if instance is None or command in CONFIGURE_NOTHING else _kept_options(located, instance)
    if shape == NO_SHAPE or all(dataset.given(located, key) for key in dataset.SHAPE):
        return Facts(remembered), None
    if located.connection.embedded and instance is None:
        return Facts(remembered, shape=shape), None  # nothing loaded, and nothing made to say so
    reader = _as_last_configured(located, remembered) if instance is not None else located
    try:
        if located.run.part is not None:  # its lock is named by the run's workload, this shape's among it
            loaded = dataset.loaded_record(reader, notify)  # a look: the parts share the server anyway
        else:
            with targets.exclusive(located, command or "dbio", notify):
                loaded = dataset.loaded_record(reader, notify)
    except Exception as exc:  # noqa: BLE001 -- a configuration's own fault is named first, by the validation
        return Facts(remembered, shape=shape), exc
    return Facts(remembered, loaded, shape), None


# What places dbio's own instance and its database: the request's, even to read the instance as it was.
# Not the WAL's or the tablespaces' directories: the instance keeps its own, and the request's would be
# made (tablespace directories) or checked before the validation has judged them.
LOCATING = ("engine", "data_dir", "standby_data_dir", "galera_data_dir", "dbname")


def _as_last_configured(located: Config, remembered: Mapping[str, Any]) -> Config:
    """Where the request points, with the instance's settings as it was last configured (what it keeps):
    a stopped instance is started to read its setup record as it was, never with the request's settings,
    which are not validated yet (an --pg-setting archive_command without --allow-setting must not reach
    the server), nor is it restarted for them."""
    given = {key: located.given[key] for key in LOCATING if key in located.given}
    return load_config(Sources(cli=given, cwd=Path.cwd(), discover=False), check=False, remembered=remembered)


def _own_instance(located: Config) -> Any | None:
    """dbio's own instance where the configuration points, when one is there (None with --dsn)."""
    if not located.connection.embedded:
        return None
    instance = targets.instance_for(located, lambda _: None)
    try:
        return instance if instance.exists() else None
    except OSError:  # a directory that cannot be looked into: the configuration's checks say so in one line
        return None


def _kept_options(located: Config, instance: Any) -> dict[str, Any]:
    """The settings options dbio's own instance keeps in its record, of those its engine's spec remembers."""
    kept = instance.meta().options or {}
    return {key: kept[key] for key in located.spec.remembered if key in kept}


def settle(sources: Sources, facts: Facts, located: Config | None = None,
           notify: Callable[[str], None] = lambda _: None, files: FileLayers | None = None) -> Config:
    """Every layer with the facts, validated once (ConfigErrors, UsageError); says what the facts changed.
    located: the request's layers alone (to say what the instance's options changed); files: the
    configuration files as read once (read here when not given)."""
    files = files if files is not None else read_files(sources)
    located = located or load_config(sources, check=False, files=files)
    config = load_config(sources, check=False, remembered=facts.remembered, loaded=_shape_layer(facts), files=files)
    _say_remembered(located, config, facts.remembered, notify)  # before the rules: one may refuse what it took
    config = checked(config)  # the one validation
    _say_loaded(config, facts, notify)
    return config


def _shape_layer(facts: Facts) -> dict[str, Any]:
    record = facts.loaded
    if record is None or facts.shape == NO_SHAPE or (facts.shape == INTERRUPTED and not dataset.unfinished(record)):
        return {}
    spec = record.spec
    return {"scale": spec.scale, "schemas": spec.schemas, "scan_table_size": spec.scan_table_blocks * BLOCK_SIZE,
            "key_order": spec.key_order}


def _say_loaded(config: Config, facts: Facts, notify: Callable[[str], None]) -> None:
    record = facts.loaded
    if record is None or not any(origin == LOADED_ORIGIN for origin in config.origins.values()):
        return
    spec = record.spec
    if not dataset.unfinished(record):
        notify(f"using the loaded data set (setup {record.setup_id}): {dataset.describe(spec.scale, spec.schemas)}; "
               "give --scale or --schemas to use a part of it")
    elif facts.shape != LOADED:  # run and sweep refuse an interrupted load, naming dbio setup
        notify(f"the interrupted load's own shape: {dataset.describe(spec.scale, spec.schemas)}; "
               "give --reload with other options to load another")


def _say_remembered(located: Config, config: Config, remembered: Mapping[str, Any],
                    notify: Callable[[str], None]) -> None:
    """One line naming the instance's options taken, where they changed what the request alone gave."""
    taken = [key for key in remembered if _takes(key, located.origins.get(key, "default"))]
    shown = {key: _taken(key, getattr(located.instance, key), getattr(config.instance, key)) for key in taken}
    shown = {key: text for key, text in shown.items() if text}
    if not shown:
        return
    flags = ", ".join(BY_KEY[key].flag + (" NAME=VALUE (NAME= drops one)" if BY_KEY[key].kind == "settings" else "")
                      for key in shown)
    notify(f"using the instance's {', '.join(f'{key} {text}' for key, text in shown.items())}, as it was last "
           f"configured; give {flags} to change {'them' if len(shown) > 1 else 'it'}")


def _takes(key: str, origin: str) -> bool:
    """Whether the remembered value is taken: where the user set none, and for settings (--pg-setting) under
    those given on the command line, which add to them name by name, as they add to a file's."""
    return origin == "default" or (BY_KEY[key].kind == "settings" and origin.startswith("--"))


def _taken(key: str, before: Any, after: Any) -> str:
    """What the remembered value changed, in the user's units ('' when nothing): of settings, those added."""
    option = BY_KEY[key]
    if option.kind == "settings":
        given = {name for name, _ in before}
        return show_value(option, tuple(pair for pair in after if pair[0] not in given)) if set(after) - set(before) \
            else ""
    return show_value(option, after) if after != before else ""


def shape_of(command: str, params: Mapping[str, Any]) -> str:
    """What the command (as typed, with its own flags) takes of the loaded data set."""
    if command in ("run", "sweep"):
        return LOADED
    if command == "setup" and not params.get("reload"):
        return RESUMING if params.get("verify") else INTERRUPTED
    if command == "ops" and params.get("operation") == "load":  # the data set loaded is the one timed again
        return RESUMING
    return NO_SHAPE

