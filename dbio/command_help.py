"""What each command's --help shows: what it does, its own key options, a few real examples, and where
the rest is (`dbio options COMMAND`). Every other option is still accepted, only not listed there.

tests/unit/test_help_is_true.py runs every example through the real parser and configuration."""

from __future__ import annotations

# The option-table options (keys) and the extra flags each command's help lists; the command's own
# flags (run --baseline, sweep --vary, ...) are always listed.
_PLACE = ("engine", "data_dir", "dsn")
KEY_OPTIONS: dict[str, tuple[str, ...]] = {
    "quickstart": ("engine", "data_dir", "scale", "threads_per_schema", "run_time", "warmup", "--sessions"),
    "setup": (*_PLACE, "scale", "schemas", "load_parallel_degree", "--config", "--slob-conf"),
    "run": (*_PLACE, "threads_per_schema", "run_time", "warmup", "update_pct", "label", "results_dir",
            "start_at", "part", "--sessions", "--config", "--slob-conf"),
    "sweep": (*_PLACE, "run_time", "update_pct", "label", "results_dir", "--config"),
    "baseline": (*_PLACE, "threads_per_schema", "run_time", "--sessions"),
    "ops": (*_PLACE, "label", "results_dir"),
    "kubernetes": ("engine", "dsn", "threads_per_schema", "run_time", "start_at", "--sessions"),
    "teardown": ("engine", "data_dir", "dsn", "dbname", "--password"),
    "instance init": ("engine", "data_dir", "shared_buffers", "buffer_pool", "standbys", "--sessions",
                      "--pg-setting"),
    "instance start": ("engine", "data_dir", "shared_buffers", "buffer_pool", "--pg-setting"),
    "instance stop": ("engine", "data_dir"),
    "instance status": ("engine", "data_dir"),
    "instance destroy": ("engine", "data_dir"),
}

# Each command's examples: the command line, and what it does. Every one is accepted as written.
EXAMPLES: dict[str, tuple[tuple[str, str], ...]] = {
    "": (  # dbio --help: the first hour
        ("dbio quickstart", "an embedded PostgreSQL, a small load, a 30 s run and its report"),
        ("dbio setup --data-dir /mnt/test/dbio --scale 2GiB", "load 2 GiB on the storage under test"),
        ("dbio run --data-dir /mnt/test/dbio --sessions 8 --run-time 5m", "a run: result.json, report.html"),
        ("dbio sweep --data-dir /mnt/test/dbio --sessions 1,2,4,8,16 --run-time 1m", "the curve and its knee"),
        ("dbio compare dbio-results/RUN1 dbio-results/RUN2", "two results: what differs, noise or real"),
    ),
    "quickstart": (
        ("dbio quickstart", "embedded PostgreSQL 18: load, a 30 s run, the report"),
        ("dbio quickstart --data-dir /mnt/test/dbio", "the same, on the storage under test"),
        ("dbio quickstart --engine mysql --data-dir /mnt/test/dbio-my", "a managed MariaDB/MySQL instead"),
    ),
    "setup": (
        ("dbio setup --data-dir /mnt/test/dbio --scale 2GiB", "one 2 GiB table on the storage under test"),
        ("dbio setup --scale 1GiB --schemas 4", "four tables of 1 GiB, one per schema"),
        ("dbio setup --verify", "check the load: one row per block, keys, index"),
        ("dbio setup --dsn 'host=db1 dbname=bench user=dbio' --scale 8GiB", "load an existing server"),
    ),
    "run": (
        ("dbio run --run-time 5m --sessions 8", "8 sessions for 5 minutes after the warm-up"),
        ("dbio run --run-time 2m -t 4 --update-pct 20 --label upd20", "4 sessions, 20% UPDATEs"),
        ("dbio run --sessions 16 --baseline", "fio first, then the database's efficiency against it"),
        ("dbio run --engine mysql --sessions 4 --run-time 1m", "the managed MariaDB/MySQL"),
        ("dbio run --dsn 'host=db1 dbname=bench user=dbio' --sessions 32", "an existing server"),
        ("dbio run --dsn 'host=db1 dbname=bench user=dbio' --part 2/3 --start-at 2026-11-23T09:00:00Z",
         "this host's part of one run of three against one server (dbio merge makes the parts one)"),
    ),
    "sweep": (
        ("dbio sweep --sessions 1,2,4,8,16 --run-time 1m", "a step per session count: the curve and its knee"),
        ("dbio sweep --objective 'read_p99<2ms' --max-sessions 128", "the most reads/s with single-read p99 < 2 ms"),
        ("dbio sweep --vary update_pct=0,20 --sessions 4,16", "every combination: 4 steps"),
        ("dbio sweep --sessions 1,4,16 --baseline", "fio's raw curve beside the database's"),
    ),
    "baseline": (
        ("dbio baseline --sessions 8 --run-time 30s", "fio on the instance's data files, 8 jobs"),
        ("dbio baseline --dsn 'host=db1 dbname=bench' --baseline-path /mnt/test/scratch",
         "a server on another host: fio reads a scratch file here"),
    ),
    "ops": (
        ("dbio ops checkpoint --dirty 256MB", "dirty 256 MB, then time the checkpoint"),
        ("dbio ops backup --target /backup/dbio-base", "time an online base backup"),
        ("dbio ops recovery --wal 1GB", "write 1 GB of WAL, crash, time the restart"),
        ("dbio ops index", "time re-creating dbio's index"),
    ),
    "report": (
        ("dbio report dbio-results/RUN --out run.html", "the HTML report again (charts included)"),
        ("dbio report dbio-results/RUN --format md", "Markdown on stdout"),
        ("dbio report dbio-results/SWEEP --target-iops 50000 --latency-slo 'p99<2ms'",
         "a sweep's capacity for a target"),
    ),
    "compare": (
        ("dbio compare dbio-results/RUN1 dbio-results/RUN2", "side by side, deltas against the first"),
        ("dbio compare dbio-results/RUN1 dbio-results/RUN2 --names before,after --out compare.html", "as HTML"),
        ("dbio compare dbio-results/SWEEP1 dbio-results/SWEEP2", "two sweeps, step by step"),
    ),
    "history": (
        ("dbio history", "every run and sweep under ./dbio-results, in time order"),
        ("dbio history dbio-results /mnt/archive/dbio-results --out trend.html", "the trend page of both"),
    ),
    "merge": (
        ("dbio merge host1/RUN host2/RUN --out merged", "runs of two hosts started with one --start-at"),
        ("dbio merge app1/RUN app2/RUN app3/RUN --out merged", "the parts of one run (--part i/3): the server's "
         "reads once, each part's own added"),
    ),
    "kubernetes": (
        ("dbio kubernetes --image registry.example/dbio:0.1 --dsn 'host=db1 dbname=bench' --pods 4 --sessions 8 "
         "--run-time 10m --start-at $(date -u -d '+15 min' +%Y-%m-%dT%H:%M:%SZ)",
         "4 pods of 8 sessions each, the parts of one run, their window 15 minutes from now"),
        ("dbio kubernetes --image registry.example/dbio:0.1 --cnpg-cluster pg1 --namespace db --pods 3 "
         "--node-selector disk=nvme --ttl 1h --start-at $(date -u -d '+10 min' +%Y-%m-%dT%H:%M:%SZ)",
         "against CloudNativePG cluster pg1 (its Secret pg1-app), on nodes labelled disk=nvme, the Jobs deleted "
         "an hour after they finish"),
    ),
    "teardown": (
        ("dbio teardown", "drop dbio's tables from its own instance (asks first when a data set is loaded)"),
        ("dbio teardown --yes --dsn 'host=db1 dbname=bench user=dbio'", "from an existing server, in a script"),
    ),
    "instance init": (
        ("dbio instance init --data-dir /mnt/test/dbio", "the embedded PostgreSQL on the storage under test"),
        ("dbio instance init --engine mysql --data-dir /mnt/test/dbio-my --buffer-pool 256MiB",
         "a managed MariaDB/MySQL"),
        ("dbio instance init --data-dir /mnt/test/dbio --standbys 1", "with a streaming standby"),
    ),
    "instance start": (("dbio instance start --data-dir /mnt/test/dbio", "start it again"),),
    "instance stop": (("dbio instance stop --data-dir /mnt/test/dbio", "fast shutdown"),),
    "instance status": (
        ("dbio instance status --data-dir /mnt/test/dbio", "the instance there"),
        ("dbio instance status --engine mysql", "the managed MariaDB/MySQL in its default place"),
    ),
    "instance destroy": (
        ("dbio instance destroy --data-dir /mnt/test/dbio", "asks first"),
        ("dbio instance destroy --engine mysql --yes", "in a script: no question"),
    ),
}


def shown(command: str, name: str) -> bool:
    """Whether the command's help lists an option of the table (its key) or an extra flag."""
    return name in KEY_OPTIONS.get(command, ())


def epilog(command: str) -> str:
    """The examples, each under what it does (pasted as it is, the comment does nothing), and where every
    option is described."""
    lines = [f"  # {what}\n  {line}" for line, what in EXAMPLES.get(command, ())]
    parts = ["\b\nExamples:\n" + "\n".join(lines)] if lines else []
    if command in KEY_OPTIONS:
        parts.append(f"More options: dbio options {command} lists every one it takes (TOML key, flag, DBIO_* "
                     "variable, slob.conf name, default). -q and --debug go before or after the command.")
    return "\n\n".join(parts)
