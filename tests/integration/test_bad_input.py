"""Bad input, one case per row: a one-line message naming the problem and the fix, exit status 2,
and nothing created or changed (no file or directory, no database object, no server restart)."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import psycopg

from dbio.engines.postgres.instance.embedded import EmbeddedInstance
from tests.integration.conftest import PASSWORD, SMALL, Instance, dbio


@dataclass
class Case:
    name: str
    args: list[str]  # {sandbox}, {dsn}, {results}, {pgdata} are filled in
    fragments: list[str]
    env: dict[str, str] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)  # sandbox-relative files the case reads
    root_only: bool = False


# Runs against an embedded instance that does not exist: a new one must not be created.
NEW = ["--data-dir", "{sandbox}/instance", "--results-dir", "{sandbox}/results"]
DSN = ["--dsn", "{dsn}", "--results-dir", "{results}", *SMALL]
IN_AN_HOUR = (datetime.now(timezone.utc) + timedelta(hours=1)).isoformat(timespec="seconds")
IN_EIGHT_DAYS = (datetime.now(timezone.utc) + timedelta(days=8)).isoformat(timespec="seconds")
K8S = ["kubernetes", "--dsn", "host=db1 dbname=dbio", "--start-at", IN_AN_HOUR, "--out", "{sandbox}/k8s"]

CASES = [
    # -- knobs out of range, of the wrong type or unit ------------------------------------------
    Case("scale unit", ["setup", *NEW, "--scale", "4XB"], ["--scale = 4XB", "unknown size unit", "use"]),
    Case("scale too small", ["setup", *NEW, "--scale", "10"], ["--scale = 10", "below the minimum 64"]),
    Case("schemas zero", ["setup", *NEW, "--schemas", "0"], ["--schemas = 0", "below the minimum 1"]),
    Case("schemas too many", ["run", *NEW, "--schemas", "5000"], ["--schemas = 5000", "above the maximum 4096"]),
    Case("threads not a number", ["run", *NEW, "-t", "abc"], ["--threads-per-schema = abc", "whole number"]),
    Case("run time words", ["run", *NEW, "--run-time", "5 minutes"], ["--run-time", "expected a duration"]),
    Case("run time negative", ["run", *NEW, "--run-time=-5s"], ["--run-time", "duration"]),
    Case("warmup unit", ["run", *NEW, "--warmup", "3 weeks"], ["--warmup", "duration"]),
    Case("update pct range", ["run", *NEW, "--update-pct", "120"], ["--update-pct = 120", "use 0..100"]),
    Case("update pct fraction", ["run", *NEW, "--update-pct", "12.5"], ["--update-pct = 12.5", "whole number"]),
    Case("scan pct negative", ["run", *NEW, "--scan-pct=-1"], ["--scan-pct = -1", "below the minimum 0"]),
    Case("scan table size unit", ["setup", *NEW, "--scan-table-size", "100XB"], ["--scan-table-size", "unit"]),
    Case("scan workers too many", ["run", *NEW, "--scan-workers", "33"], ["--scan-workers = 33", "use 0..32"]),
    Case("scan workers on mysql", ["run", *NEW, "--engine", "mysql", "--scan-workers", "2"],
         ["--scan-workers = 2:", "applies only to engine postgresql"]),  # what was given, not the default
    Case("work unit zero", ["run", *NEW, "--work-unit", "0"], ["--work-unit = 0", "minimum 1"]),
    Case("work unit too big", ["run", *NEW, "--work-unit", "2000"], ["--work-unit = 2000", "maximum 1024"]),
    Case("redo stress", ["run", *NEW, "--redo-stress", "MEDIUM"], ["--redo-stress = MEDIUM", "LITE or HEAVY"]),
    Case("hotspot bool", ["run", *NEW, "--hotspot-size", "4KiB"], ["--hotspot-size = 4KiB", "below the minimum"]),
    Case("hotspot frequency", ["run", *NEW, "--hotspot-frequency", "0"], ["--hotspot-frequency = 0", "minimum 1"]),
    Case("think time unit", ["run", *NEW, "--think-time-min", "soon"], ["--think-time-min = soon", "duration"]),
    Case("key order", ["setup", *NEW, "--key-order", "sorted"], ["--key-order = sorted", "random or contiguous"]),
    Case("access path", ["run", *NEW, "--access-path", "seqscan"], ["--access-path = seqscan", "index or bitmap"]),
    Case("load degree", ["setup", *NEW, "--load-parallel-degree", "0"], ["--load-parallel-degree = 0", "minimum"]),
    Case("shared buffers", ["setup", *NEW, "--shared-buffers", "1MiB"], ["--shared-buffers = 1MiB", "16 MiB"]),
    Case("io method", ["setup", *NEW, "--io-method", "aio"], ["--io-method = aio", "sync or worker or io_uring"]),
    Case("io workers", ["setup", *NEW, "--io-workers", "64"], ["--io-workers = 64", "maximum 32"]),
    Case("max connections", ["run", *NEW, "--max-connections=-1"], ["--max-connections = -1", "minimum 0"]),
    Case("wal level", ["setup", *NEW, "--wal-level", "archive"], ["--wal-level = archive", "minimal or replica"]),
    Case("interval fraction", ["run", *NEW, "--interval", "2.5s"], ["--interval", "whole number of seconds"]),
    Case("start at without zone", ["run", *NEW, "--start-at", "2026-11-22T19:00:00"], ["--start-at", "no zone"]),
    Case("start at passed", ["run", *NEW, "--start-at", "2020-01-01T00:00:00Z"],
         ["--start-at 2020-01-01T00:00:00.000+00:00 passed", "at least"]),
    Case("start at on a sweep", ["sweep", *NEW, "--vary", "update_pct=0,10", "--start-at", IN_AN_HOUR],
         ["--start-at", "a sweep runs many windows", "dbio run"]),
    Case("start at beyond the calendar", ["run", *NEW, "--start-at", "9999-12-31T23:59:59-05:00"],
         ["--start-at = 9999-12-31T23:59:59-05:00", "beyond the calendar", "within the next 7 days"]),
    Case("start at centuries ahead", ["run", *NEW, "--start-at", "2500-01-01T00:00:00Z"],
         ["--start-at = 2500-01-01T00:00:00+00:00", "more than 7 days ahead"]),
    Case("start at eight days ahead", ["run", *DSN, "--start-at", IN_EIGHT_DAYS], ["more than 7 days ahead"]),
    Case("start at eight days ahead for pods", [*K8S[:4], IN_EIGHT_DAYS, *K8S[5:], "--image", "dbio"],
         ["more than 7 days ahead"]),
    Case("scale of 5000 digits", ["setup", *NEW, "--scale", "9" * 5000],
         ["--scale = 9999", "(5000 characters)", "a number of 5000 digits"]),
    Case("size beyond a float", ["setup", *NEW, "--scale", "9" * 400 + "GiB"], ["is beyond any size dbio takes"]),
    Case("label with an escape sequence", ["run", *DSN, "--label", "run\x1b]0;owned\x07"],
         ["--label = run␛]0;owned␇", "contains a control character (U+001B)"]),
    Case("label with a bidi override", ["run", *DSN, "--label", "abc\u202edef"], ["control character (U+202E)"]),
    Case("wait sampling", ["run", *NEW, "--wait-sample-interval", "1ms"], ["--wait-sample-interval", "minimum"]),
    Case("direct io bool", ["setup", *NEW], ["DBIO_DIRECT_IO = maybe", "true or false"],
         env={"DBIO_DIRECT_IO": "maybe"}),
    Case("pg setting dbio owns", ["setup", *NEW, "--pg-setting", "port=5432"], ["'port' is set by dbio"]),
    Case("pg setting shape", ["setup", *NEW, "--pg-setting", "checkpoint timeout"], ["expected name=value"]),
    Case("pg setting runs a program", ["setup", *NEW, "--pg-setting", "archive_command=touch /tmp/x"],
         ["--pg-setting = archive_command = ...", "run a program", "--allow-setting archive_command"]),
    Case("pg setting loads code", ["setup", *NEW, "--pg-setting", "shared_preload_libraries=auto_explain",
                                   "--allow-setting", "archive_command"],
         ["sets shared_preload_libraries", "--allow-setting shared_preload_libraries"]),
    Case("allowed only on the command line", ["setup", *NEW, "--config", "{sandbox}/dbio.toml"],
         ["instance.allow_settings", "only from the command line"],
         files={"dbio.toml": "[instance]\nallow_settings = ['archive_command']\n"}),
    Case("pg setting the server does not know", ["setup", *NEW, "--pg-setting", "checkpoint_timeuot=5min"],
         ["server refuses", 'unrecognized configuration parameter "checkpoint_timeuot"']),
    Case("pg setting out of range", ["setup", *NEW, "--pg-setting", "checkpoint_timeout=5"],
         ["server refuses", "outside the valid range", "(30 s .. 86400 s)"]),
    Case("pg setting not an enum value", ["setup", *NEW, "--pg-setting", "wal_compression=best"],
         ["server refuses", '"wal_compression": "best"', "Available values"]),
    Case("pg setting unit", ["setup", *NEW, "--pg-setting", "work_mem=4 parsecs"], ['"work_mem"', "server refuses"]),
    Case("bad setting for a running instance", ["run", "--data-dir", "{datadir}", "--dbname", "badinput_loaded",
                                                "--shared-buffers", "16MiB",
                                                *SMALL, "--pg-setting", "checkpoint_timeout=1s"],
         ["server refuses", "checkpoint_timeout"]),
    # -- unknown keys, broken files ---------------------------------------------------------------
    Case("unknown key", ["setup", *NEW, "--config", "{sandbox}/dbio.toml"],
         ["workload.update_pcd", "unknown key", "did you mean 'update_pct'"],
         files={"dbio.toml": "[workload]\nupdate_pcd = 20\n"}),
    Case("key in wrong section", ["setup", *NEW, "--config", "{sandbox}/dbio.toml"],
         ["workload.shared_buffers", "belongs in section [instance]"],
         files={"dbio.toml": "[workload]\nshared_buffers = '1GiB'\n"}),
    Case("invalid toml", ["setup", *NEW, "--config", "{sandbox}/dbio.toml"], ["not valid TOML"],
         files={"dbio.toml": "[workload\nscale = 1\n"}),
    Case("toml number of 5000 digits", ["setup", *NEW, "--config", "{sandbox}/dbio.toml"],
         ["dbio.toml", "a whole number beyond the 64 bits TOML allows"],
         files={"dbio.toml": "[workload]\nscale = " + "9" * 5000 + "\n"}),
    Case("toml hex number beyond 64 bits", ["setup", *NEW, "--config", "{sandbox}/dbio.toml"],
         ["beyond the 64 bits TOML allows"], files={"dbio.toml": "[workload]\nscale = 0x" + "f" * 5000 + "\n"}),
    Case("toml nested thousands deep", ["setup", *NEW, "--config", "{sandbox}/dbio.toml"],
         ["dbio.toml", "nested more than 8 deep"], files={"dbio.toml": "x = " + "[" * 5000 + "]" * 5000 + "\n"}),
    Case("toml tables nested thousands deep", ["setup", *NEW, "--config", "{sandbox}/dbio.toml"],
         ["nested more than 8 deep"], files={"dbio.toml": "[" + "a." * 3000 + "a]\nb = 1\n"}),
    Case("toml label with an escape sequence", ["run", *NEW, "--config", "{sandbox}/dbio.toml"],
         ["dbio.toml: run.label", "control character (U+001B)"], files={"dbio.toml": '[run]\nlabel = "a\\u001b[2J"\n'}),
    Case("missing config file", ["setup", *NEW, "--config", "{sandbox}/nope.toml"], ["file not found"]),
    Case("environment value", ["run", *NEW], ["DBIO_UPDATE_PCT = lots", "whole number"],
         env={"DBIO_UPDATE_PCT": "lots"}),
    # -- contradictions ---------------------------------------------------------------------------
    Case("hot spot outside data", ["run", *NEW, "--scale", "1GiB", "--hotspot", "--hotspot-offset", "1GiB"],
         ["beyond the data set", "lower hotspot_offset"]),
    Case("work unit not below scale", ["run", *NEW, "--scale", "128", "--work-unit", "200", "--allow-cached"],
         ["must be smaller than scale", "raise scale"]),
    Case("no end", ["run", *NEW, "--run-time", "0", "--work-loop", "0"], ["without an end", "work_loop"]),
    Case("sessions above max connections", ["run", *NEW, "-t", "64", "--max-connections", "50"],
         ["too small for 64 sessions", "max_connections >= 69"]),
    Case("hot schema with one schema", ["run", *NEW, "--hot-schema-frequency", "3"], ["more than one schema"]),
    Case("think time backwards", ["run", *NEW, "--think-time-frequency", "2", "--think-time-min", "2s",
                                  "--think-time-max", "1s"], ["larger than think_time_max"]),
    Case("scans without a table", ["run", *NEW, "--scan-pct", "10", "--scan-table-size", "0"],
         ["needs a scan table"]),
    Case("data set fits in cache", ["setup", *NEW, "--scale", "64MiB"], ["fits in shared_buffers", "--allow-cached"]),
    # -- SLOB files -------------------------------------------------------------------------------
    Case("slob.conf malformed line", ["setup", *NEW, "--slob-conf", "{sandbox}/slob.conf"],
         ["slob.conf line 2", "not a KEY=VALUE line"], files={"slob.conf": "UPDATE_PCT=20\nSCALE = 80M\n"}),
    Case("slob.conf unknown name", ["setup", *NEW, "--slob-conf", "{sandbox}/slob.conf"],
         ["UPDATE_PTC", "did you mean UPDATE_PCT"], files={"slob.conf": "UPDATE_PTC=20\n"}),
    Case("slob.conf value", ["setup", *NEW, "--slob-conf", "{sandbox}/slob.conf"],
         ["slob.conf line 1: UPDATE_PCT", "above the maximum 100"], files={"slob.conf": "UPDATE_PCT=200\n"}),
    Case("slob.conf missing", ["setup", *NEW, "--slob-conf", "{sandbox}/none.conf"], ["file not found"]),
    # -- disk and directories ---------------------------------------------------------------------
    Case("scale beyond free disk", ["setup", *NEW, "--scale", "1TiB"], ["free but the load needs about",
                                                                        "lower scale"]),
    Case("data dir is a file", ["setup", "--data-dir", "{sandbox}/a-file", "--results-dir", "{sandbox}/results"],
         ["is a file, not a directory"], files={"a-file": "x"}),
    Case("data dir not empty", ["setup", "--data-dir", "{sandbox}/full", "--results-dir", "{sandbox}/results"],
         ["is not empty and is not a dbio instance"], files={"full/notes.txt": "keep"}),
    Case("data dir inside another instance", ["setup", "--data-dir", "{pgdata}/base/mine"],
         ["inside another PostgreSQL data directory"]),
    Case("data dir the server user cannot reach", ["setup", "--data-dir", "/root/dbio-test-unreachable/x"],
         ["unreachable for the server user", "chmod o+x /root"], root_only=True),
    Case("socket path too long", ["setup", "--data-dir", "{sandbox}/" + "d" * 90], ["too long", "unix socket path"]),
    Case("data dir with a comma", ["setup", "--data-dir", "{sandbox}/a,b"], ["contains ','", "without quotes"]),
    Case("empty database name", ["setup", *NEW, "--dbname", ""], ["--dbname = ''", "empty database"]),
    Case("template database", ["setup", *NEW, "--dbname", "template1"], ["'template1'", "keeps for itself"]),
    Case("postgres database over dsn", ["setup", "--dsn", "{dsn_postgres}", *SMALL],
         ["'postgres'", "CREATE DATABASE dbio", "dbname=... in --dsn"]),
    Case("--dbname beside --dsn", ["run", "--dsn", "{dsn_nodb}", "--dbname", "other", *SMALL],
         ["--dbname = other", "with --dsn the DSN names it", "put the database in the DSN"]),
    # -- servers ----------------------------------------------------------------------------------
    Case("unknown host", ["run", "--dsn", "host=nonexistent.invalid connect_timeout=3", *SMALL],
         ["cannot connect", "check the host name"]),
    Case("wrong port", ["run", "--dsn", "host=127.0.0.1 port=1 connect_timeout=3", *SMALL],
         ["cannot connect", "is the server running"]),
    Case("missing database", ["run", "--dsn", "{dsn_nodb}", *SMALL], ["does not exist", "create the database"]),
    Case("wrong password", ["setup", "--dsn", "{dsn_pw}", *SMALL], ["password authentication failed",
                                                                     "PGPASSWORD or ~/.pgpass"],
         env={"PGPASSWORD": "not-the-password"}),
    Case("password on the command line", ["setup", "--dsn", "{dsn_pw} password=hunter2", *SMALL],
         ["visible to every user of this host", "--password"]),
    Case("role without CREATE", ["setup", "--dsn", "{dsn_noperm}", *SMALL],
         ["may not create schemas", "GRANT CREATE ON DATABASE"]),
    Case("run before setup", ["run", *DSN], ["nothing is loaded", "run dbio setup first"]),
    Case("run after another setup", ["run", "--dsn", "{dsn_loaded}", "--results-dir", "{results}", "--scale",
                                     "40MiB", "--scan-table-size", "8MiB"],
         ["--scale = 5120 blocks (40 MiB): larger than the 4,096 rows loaded", "dbio setup --reload"]),
    Case("run with another key order", ["run", "--dsn", "{dsn_loaded}", "--results-dir", "{results}", *SMALL,
                                        "--key-order", "contiguous"], ["key_order = contiguous",
                                                                       "reload with dbio setup --reload"]),
    Case("results dir is a file", ["run", "--dsn", "{dsn_loaded}", "--results-dir", "{sandbox}/a-file", *SMALL],
         ["is not a directory", "--results-dir"], files={"a-file": "x"}),
    Case("results dir under a file", ["run", "--dsn", "{dsn_loaded}", "--results-dir", "{sandbox}/a-file/results",
                                      *SMALL], ["a-file on the way is not one", "--results-dir"],
         files={"a-file": "x"}),
    # -- reports ----------------------------------------------------------------------------------
    Case("truncated result", ["report", "{sandbox}/result.json"], ["not valid JSON", "truncated"],
         files={"result.json": '{"format": "dbio-result", "format_version": 1, "status": "comp'}),
    Case("not a result", ["report", "{sandbox}/result.json"], ["is not a dbio result"],
         files={"result.json": '{"hello": 1}'}),
    Case("newer result format", ["report", "{sandbox}/result.json"], ["result format 7", "newer dbio"],
         files={"result.json": '{"format": "dbio-result", "format_version": 7}'}),
    Case("missing result", ["report", "{sandbox}/none"], ["does not exist"]),
    Case("result with a count of 5000 digits", ["report", "{sandbox}/result.json"],
         ["result.json holds a whole number of 5000 digits"],
         files={"result.json": '{"format": "dbio-result", "format_version": 2, "totals": {"selects": ' + "9" * 5000
                + "}}"}),
    # -- kubernetes -------------------------------------------------------------------------------
    Case("pod image not a reference", [*K8S, "--image", "dbio;rm -rf /"],
         ["--image 'dbio;rm -rf /' is not what Kubernetes takes there", "an image reference"]),
    Case("namespace not a DNS label", [*K8S, "--image", "dbio", "--namespace", "Storage_Test"],
         ["--namespace 'Storage_Test'", "RFC 1123 DNS label"]),
    Case("storage class not a DNS subdomain", [*K8S, "--image", "dbio", "--storage-class", "nfs class"],
         ["--storage-class 'nfs class'", "DNS subdomain"]),
    Case("pod memory not a quantity", [*K8S, "--image", "dbio", "--pod-memory", "512MB"],
         ["--pod-memory '512MB'", "Kubernetes quantity"]),
    Case("pod cpu zero", [*K8S, "--image", "dbio", "--pod-cpu", "0"], ["--pod-cpu '0'", "positive"]),
]


def _snapshot(sandbox: Path, instance: Instance) -> dict:
    files = {str(p.relative_to(sandbox)): p.stat().st_mtime_ns for p in sandbox.rglob("*")}
    results = sorted(p.name for p in instance.results.iterdir()) if instance.results.exists() else []
    with instance.connect() as conn:
        databases = sorted(r[0] for r in conn.execute("SELECT datname FROM pg_database").fetchall())
    objects = {}
    for db in ("badinput", "badinput_loaded"):
        with instance.connect(db) as conn:
            objects[db] = sorted(conn.execute(
                "SELECT n.nspname || '.' || c.relname || ':' || c.relfilenode FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname NOT IN ('pg_catalog', "
                "'information_schema', 'pg_toast')").fetchall())
    conf = (instance.data_dir / "pgdata" / "dbio.conf").read_text()
    pid = (instance.data_dir / "pgdata" / "postmaster.pid").read_text().splitlines()[0]
    return {"files": files, "results": results, "databases": databases, "objects": objects, "conf": conf, "pid": pid}


@pytest.fixture(scope="module")
def servers(instance, roles):
    """Databases the server cases point at: one empty (no CREATE for PUBLIC), one loaded."""
    instance.create_database("badinput")
    instance.create_database("badinput_loaded")
    assert dbio("setup", *instance.args("badinput_loaded", *SMALL)).code == 0
    with instance.connect() as conn:
        conn.execute("REVOKE CREATE ON DATABASE badinput FROM PUBLIC")
    base = f"host={instance.data_dir / 'socket'} port={instance.meta['port']}"
    return {"{dsn}": f"{base} user=dbio dbname=badinput", "{dsn_nodb}": f"{base} user=dbio dbname=no_such_db",
            "{dsn_pw}": f"{base} user={roles['password']} dbname=badinput",
            "{dsn_noperm}": f"{base} user={roles['plain']} dbname=badinput",
            "{dsn_loaded}": f"{base} user=dbio dbname=badinput_loaded", "{results}": str(instance.results),
            "{dsn_postgres}": f"{base} user=dbio dbname=postgres", "{datadir}": str(instance.data_dir),
            "{pgdata}": str(instance.data_dir / "pgdata")}


def test_there_are_at_least_forty_distinct_cases():
    assert len({c.name for c in CASES}) == len(CASES) >= 40


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input(case: Case, instance: Instance, servers: dict):
    if case.root_only and os.geteuid() != 0:
        pytest.skip("only root runs the server as another user")
    sandbox = Path(instance.root / f"bad-{abs(hash(case.name))}")
    sandbox.mkdir()
    for rel, content in case.files.items():
        (sandbox / rel).parent.mkdir(parents=True, exist_ok=True)
        (sandbox / rel).write_text(content)
    replacements = {"{sandbox}": str(sandbox), **servers}
    args = []
    for arg in case.args:
        for key, value in replacements.items():
            arg = arg.replace(key, value)
        args.append(arg)
    env = {"PGPASSWORD": "", **case.env} if "PGPASSWORD" in case.env else dict(case.env)
    before = _snapshot(sandbox, instance)
    done = dbio(*args, env=env)
    after = _snapshot(sandbox, instance)
    assert done.code == 2, done.text
    lines = done.err.strip().splitlines()
    assert len(lines) == 1, done.err
    for fragment in case.fragments:
        assert fragment in lines[0], lines[0]
    assert PASSWORD not in done.text and "hunter2" not in done.text
    assert before == after, "something was created or changed"


def test_a_refused_run_on_a_stopped_instance_leaves_it_stopped_and_as_it_was(workdir):
    """The resolver reads the loaded data set's shape from the instance before its one validation, which
    starts a stopped instance: it must start it as it was last configured, never with the request's
    settings (an archive_command not allowed reached the server's dbio.conf), and stop it again when
    the request is refused."""
    data_dir = workdir / "stopped-instance"
    results = workdir / "stopped-results"
    common = ["--data-dir", str(data_dir), "--results-dir", str(results)]
    done = dbio("setup", *common, "--shared-buffers", "16MiB", *SMALL)
    assert done.code == 0, done.text
    try:
        assert dbio("instance", "stop", "--data-dir", str(data_dir)).code == 0
        brief = SMALL[4:]  # no shape given: the loaded one's is read from the instance, before the validation
        refused = dbio("run", *common, *brief, "--pg-setting", "archive_command=true")
        assert refused.code == 2 and "--allow-setting archive_command" in refused.err, refused.text
        assert len(refused.err.strip().splitlines()) == 1, refused.err
        status = dbio("instance", "status", "--data-dir", str(data_dir))
        assert "stopped" in status.out, status.text
        conf = (data_dir / "pgdata" / "dbio.conf").read_text()
        assert "archive_command" not in conf
        # the refused request named a database not there: reading what is loaded looks, it makes none
        refused = dbio("run", *common, *brief, "--dbname", "named_by_refused", "--pg-setting", "archive_command=true")
        assert refused.code == 2 and "--allow-setting archive_command" in refused.err, refused.text
        assert dbio("instance", "start", "--data-dir", str(data_dir)).code == 0
        with psycopg.connect(EmbeddedInstance(data_dir).conninfo("postgres")) as conn:
            assert conn.execute("SELECT datname FROM pg_database WHERE datname = 'named_by_refused'").fetchall() == []
        assert dbio("instance", "stop", "--data-dir", str(data_dir)).code == 0
        ran = dbio("run", *common, *brief)  # the shape still comes from the loaded data set
        assert ran.code == 0 and "using the loaded data set" in ran.out + ran.err, ran.text
    finally:
        dbio("instance", "destroy", "--yes", "--data-dir", str(data_dir))


def test_commands_on_what_is_there_make_nothing_first(instance, workdir):
    """teardown, ops checkpoint and baseline work on what is loaded: a database or an instance not there is
    refused in one line, and not made first (each made the database, or a whole instance, then refused)."""
    commands = [["teardown", "--yes"], ["ops", "checkpoint"]]
    commands += [["baseline"]] if shutil.which("fio") else []  # without fio, baseline is refused for that first
    for args in commands:
        done = dbio(*args, "--data-dir", str(instance.data_dir), "--dbname", "not_there_yet")
        assert done.code == 2 and "no database 'not_there_yet'" in done.err, (args, done.text)
        assert len(done.err.strip().splitlines()) == 1, done.err
    with instance.connect() as conn:
        assert conn.execute("SELECT datname FROM pg_database WHERE datname = 'not_there_yet'").fetchall() == []
    if not shutil.which("fio"):
        return
    empty = workdir / "no-instance-here"
    done = dbio("baseline", "--data-dir", str(empty))
    assert done.code == 2 and "no dbio instance in" in done.err and "run dbio setup first" in done.err, done.text
    assert not empty.exists() or not any(empty.iterdir())
