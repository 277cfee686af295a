"""Each command's own flags, as rows of the one option format (option.py's Option, section OWN): what a
command takes besides the configuration's options (run --baseline, sweep --vary, ops --wal, kubernetes
--image, ...). They are never set in dbio.toml, slob.conf or DBIO_*: each reaches its command as a parameter.

A row names the commands that take it (`commands`), in the order their --help lists them (the table's order);
one flag may have a row per meaning (run's --baseline and ops' --baseline), never two for one command.
"""

from __future__ import annotations

from pathlib import Path

from typing import Any

from dbio import engine_table
from dbio.option import COMMANDS, LOADS, OWN, RUNS, STARTS, Option
from dbio.option_table import LAYOUT_KNOBS, MAX_LABEL, RESTART_KNOBS

_MiB = 1 << 20

ROOT = ""  # the root command (dbio --debug ...): its options are also every command's (cli_group)

_BASELINE_PATH = ("For the baseline: a directory on this host on the storage under test, where fio reads a "
                  "scratch file it writes first (and removes); needed when the server runs on another host.")
_FORMAT_DEFAULT = "[default: the --out file's suffix (.html, .md, .json), text otherwise]"
_FORMATS = ("text", "md", "html", "json")


def _own(key: str, kind: str, help: str, commands: tuple[str, ...], **more: Any) -> Option:
    return Option(key, OWN, kind, more.pop("default", None), help, commands=commands, file=False, **more)


def _password_envs() -> str:
    from dbio.engines import registry

    return " or ".join(f"{registry.entry(name).password_env} (--engine {name})" for name in registry.names())


def _engine_titles() -> str:
    from dbio.engines import registry

    return ", ".join(f"{name}: {registry.entry(name).title}" for name in registry.names())


COMMAND_OPTIONS: tuple[Option, ...] = (
    # -- loading ------------------------------------------------------------------------------------------------
    _own("reload", "bool", "Replace a data set loaded with a different configuration.", ("quickstart",)),
    _own("verify", "bool", "Check the load: one row per block, keys, index, scattering.", ("setup",)),
    _own("reload", "bool", "Replace a load made with a different configuration.", ("setup",)),
    # -- ops ------------------------------------------------------------------------------------------------------
    _own("target", "path", "backup: an empty or new directory for the base backup (checked before anything "
         "starts).", ("ops",), param="destination"),
    _own("wal", "size", "recovery: WAL to accumulate before the crash.", ("ops",), default=256 * _MiB, unset=True,
         metavar="SIZE"),
    _own("changes_per_block", "int",
         "recovery: change each block N times after the checkpoint, over a span of blocks four times "
         "the buffer cache or more, so that redo reads back the blocks it evicted (random reads, as the "
         "white paper's recovery test) [default: 1: each block once, redo replays full-page images and "
         "reads only WAL].", ("ops",), param="changes", min=1, max=64, metavar="N"),
    _own("dirty", "size", "checkpoint: data to dirty before the timed checkpoint, at most 90% of shared_buffers.",
         ("ops",), default=64 * _MiB, unset=True, metavar="SIZE"),
    _own("baseline", "bool", "backup: fio reads the data files sequentially first, and the backup's "
         "MB/s is given against that rate (needs fio).", ("ops",)),
    _own("cold", "bool", "backup: stop the instance and copy its files (a cold backup) instead of "
         "pg_basebackup's online one.", ("ops",)),
    # -- sweep's steps ------------------------------------------------------------------------------------------
    _own("vary", "strs", "A knob and its values (repeatable, each knob once): any run knob, or "
         f"{', '.join(RESTART_KNOBS)} (these restart the embedded instance), or "
         f"{', '.join(LAYOUT_KNOBS)} (layouts: places joined with ':', 'none' for the data directory; "
         "each layout moves the WAL or reloads the tables).", ("sweep",), repeat="per_name", metavar="KEY=V1,V2,..."),
    _own("sessions", "str", "Total sessions per step (sessions = schemas x threads_per_schema).", ("sweep",),
         metavar="N1,N2,..."),
    _own("rate", "str", "One step per rate: R1,R2,... or LOW..HIGH:N.", ("sweep",),
         param="rates", metavar="RATES"),
    _own("until_peak", "bool", "Double the sessions until reads/s stop growing.", ("sweep",)),
    _own("objective", "str", "Search the sessions for the most reads/s within it: 'read_p99<2ms', 'avg_read<1ms'...",
         ("sweep",), metavar="STAT<LIMIT"),
    _own("max_sessions", "int", "--objective's most sessions.", ("sweep",), default=4096, unset=True, metavar="N"),
    _own("max_rate", "int", "--objective's highest --rate.", ("sweep",), min=1, metavar="N"),
    _own("peak_gain", "float", "--until-peak stops when doubling adds less than this share of reads/s.", ("sweep",),
         default=0.05),
    _own("knee_gain", "float", "The knee is where more sessions add less than this share of reads/s while latency "
         "rises.", ("sweep",), default=0.10),
    _own("resume", "path", "Finish an interrupted sweep (its directory).", ("sweep",), param="resume_dir"),
    # -- the baseline (fio) -------------------------------------------------------------------------------------
    _own("baseline", "bool", "Run fio on the same data files right before the run, at the same sessions, and "
         "report the database's efficiency (needs fio).", ("run",)),
    _own("baseline", "bool", "Run fio on the same data files right before each step, at the step's sessions: the "
         "raw curve beside the database's (needs fio).", ("sweep",)),
    _own("baseline_path", "path", _BASELINE_PATH, ("run", "baseline", "sweep")),
    _own("out", "path", "Also write the baseline's record (JSON) here.", ("baseline",)),
    _own("op", "str", "Each step is a maintenance operation instead of a run (see dbio ops): index, recovery=WAL "
         "or checkpoint=DIRTY (e.g. recovery=256MB).", ("sweep",), metavar="OPERATION[=SIZE]"),
    # -- repeats ------------------------------------------------------------------------------------------------
    _own("repeat", "int", "Run N times, one after the other, each its own result, in one directory with "
         "repeat.json: each figure's median, min and max over the runs; dbio compare judges against that spread "
         "[default: 1].", ("run",), metavar="N"),
    _own("repeat", "int", "Run each step N times, interleaved (round 1 of every step, then round 2, ...): each "
         "step's median and spread in the report [default: 1].", ("sweep",), metavar="N"),
    # -- reports ------------------------------------------------------------------------------------------------
    _own("format", "choice", "text (AWR style), md (Markdown), html (self-contained, with charts), json (the "
         f"report's figures, unformatted).  {_FORMAT_DEFAULT}", ("report",), param="form", choices=_FORMATS),
    _own("out", "path", "Write the report here instead of stdout.", ("report",)),
    # -- capacity -----------------------------------------------------------------------------------------------
    _own("target_iops", "float", "Capacity: the I/O requests/s to reach; the report says from the measured steps "
         "how many sessions reach it, or that it lies beyond them.", ("sweep", "report"), metavar="N"),
    _own("latency_slo", "str", "Capacity: the latency objective the target must meet, as --objective's "
         "(p99: SELECT).", ("sweep", "report"), metavar="STAT<LIMIT"),
    _own("price", "strs", "Cost (repeatable, each price once): instance=.../month, volume=.../GB-month, "
         "iops=.../provisioned-IOPS-month; a [cost] table in dbio.toml gives them too.", ("sweep", "report"),
         param="prices", repeat="per_name", metavar="NAME=AMOUNT/UNIT"),
    # -- compare, history, merge --------------------------------------------------------------------------------
    _own("out", "path", "A new directory for the merged result.", ("merge",), required=True),
    _own("names", "str", "Names for the inputs, comma-separated (default: their labels).", ("compare", "merge")),
    _own("format", "choice", f"Output format.  {_FORMAT_DEFAULT}", ("compare",), param="form", choices=_FORMATS),
    _own("format", "choice", f"Output format (html: the trend page, with its chart).  {_FORMAT_DEFAULT}",
         ("history",), param="form", choices=_FORMATS),
    _own("out", "path", "Write here instead of stdout.", ("compare", "history")),
    _own("label", "str", f"The merged result's label (at most {MAX_LABEL} characters).", ("merge",), max=MAX_LABEL),
    # -- kubernetes: the pods -----------------------------------------------------------------------------------
    _own("image", "str", "Container image that has dbio in it (each pod runs `dbio run`): build it from the "
         "repository's Containerfile and push it where the cluster pulls from (docs/kubernetes.md).",
         ("kubernetes",), required=True),
    _own("pods", "int", "Pods per target (each --dsn is a target).", ("kubernetes",), default=1),
    _own("out", "path", "A new directory for the manifests.", ("kubernetes",), default=Path("dbio-kubernetes")),
    _own("name", "str", "Prefix of every object's name.", ("kubernetes",), param="job_name", default="dbio"),
    _own("namespace", "str", "Namespace of every object (default: kubectl's).", ("kubernetes",)),
    _own("password_secret", "str", "A Secret whose key 'password' becomes the pods' {password_envs}.",
         ("kubernetes",)),
    _own("results_size", "str", "Size of the shared results volume.", ("kubernetes",), default="1Gi"),
    _own("storage_class", "str", "Storage class of the results volume (ReadWriteMany).", ("kubernetes",)),
    _own("pod_cpu", "str", "CPU each pod requests.", ("kubernetes",), default="1"),
    _own("pod_memory", "str", "Memory each pod requests (and its limit).", ("kubernetes",), default="512Mi"),
    # where the pods run, as what, and how long their Jobs stay: the options of kubectl cnpg pgbench and its kind
    _own("node_selector", "strs", "A label every pod's node must have, e.g. disk=nvme (repeat it: all of them).",
         ("kubernetes",), repeat="per_key", metavar="KEY=VALUE"),
    _own("tolerate", "strs", "A taint the pods' nodes may have, as kubectl taint writes it, e.g. "
         "dedicated=storage:NoSchedule (without =VALUE: any value; without :EFFECT: every effect; repeatable).",
         ("kubernetes",), repeat="adds_up", metavar="KEY[=VALUE][:EFFECT]"),
    _own("ttl", "duration", "Delete each finished Job and its pods (their logs) this long after, e.g. 600s "
         "(ttlSecondsAfterFinished); the results volume stays.  [default: kept]", ("kubernetes",),
         metavar="DURATION"),
    _own("service_account", "str", "The pods' ServiceAccount (default: the namespace's); no API token is mounted "
         "in them.", ("kubernetes",)),
    _own("cnpg_cluster", "str", "The target: CloudNativePG cluster NAME, each pod reading host, port, username, "
         "password and dbname from its Secret NAME-app (instead of --dsn and --password-secret).", ("kubernetes",),
         metavar="NAME"),
    # -- the built-in SQL, what dbio made ------------------------------------------------------------------------
    _own("engine", "str", "The engine whose SQL to list or print ({engine_titles}).  "
         f"[default: {engine_table.DEFAULT}]", ("sql",), metavar="|".join(engine_table.names())),
    _own("yes", "bool", "Do not ask before dropping a loaded data set (scripts must pass it).", ("teardown",)),
    _own("yes", "bool", "Do not ask for confirmation (scripts must pass it).", ("instance destroy",)),
    # -- the configuration's: its files, the server's password, the total of sessions (each command that reads
    #    a configuration: cli_config places the files before each engine's repeatable flags, the others after)
    _own("config", "path", "TOML configuration file [default: ./dbio.toml when it exists].", COMMANDS,
         param="config_file"),
    _own("slob_conf", "path", "A SLOB-style slob.conf (KEY=VALUE lines with SLOB's names).", RUNS),
    # not for the pods of dbio kubernetes: they read their password from a Secret (--password-secret)
    _own("password", "bool", "Ask for the server's password (it is never shown, stored or written anywhere).",
         LOADS + ("teardown",), param="ask_password", unset=True),  # None when not given: sweep --resume tells
    # wherever threads_per_schema is taken but by sweep, whose --sessions is its own (a total per step)
    _own("sessions", "int", "(workload) Total sessions: threads_per_schema = N / schemas (N itself with one schema; "
         "with several, a multiple of them). Instead of --threads-per-schema.",
         tuple(c for c in RUNS + STARTS if c != "sweep"), param="total_sessions", min=1, metavar="N"),
    # -- the root's, also every command's (before or after its name: cli_group.GLOBAL_OPTIONS) --------------------
    _own("debug", "bool", "Show tracebacks of unexpected errors.", (ROOT,)),
    _own("quiet", "bool", "Only errors and the final summary.", (ROOT,), aliases=("-q",)),
)

# The configuration's own flags, by the name their command receives: the files come before each engine's
# repeatable flags (--pg-setting), the others after them (cli_config.config_options).
FILES = ("config_file", "slob_conf")
AFTER_ENGINE_FLAGS = ("ask_password", "total_sessions")

# What a row's help names that only the engines know, filled in when a command's flags are made.
HELP_FIELDS = {"password_envs": _password_envs, "engine_titles": _engine_titles}


def of(command: str) -> list[Option]:
    """The command's own flags (as typed: 'instance destroy'), in the order its help lists them."""
    return [option for option in COMMAND_OPTIONS if command in option.commands]


def commands() -> list[str]:
    """The commands that have flags of their own, in the order the table first names them."""
    return list(dict.fromkeys(c for option in COMMAND_OPTIONS for c in option.commands))


def default(command: str, key: str) -> Any:
    """A command's own flag's default, as its row says it (the one place it is said)."""
    return next(option.default for option in of(command) if option.key == key)


def checked(rows: tuple[Option, ...]) -> None:
    """A flag once per command: two rows of one flag never name the same command."""
    for command in sorted({c for option in rows for c in option.commands}):
        flags = [option.flag for option in rows if command in option.commands]
        twice = sorted({flag for flag in flags if flags.count(flag) > 1})
        if twice:
            raise AssertionError(f"{command}: {', '.join(twice)} declared twice")


checked(COMMAND_OPTIONS)
