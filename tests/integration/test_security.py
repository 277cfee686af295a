"""Credentials never leak; configuration cannot inject SQL; a role with only the documented
privileges runs everything."""

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.integration.conftest import BRIEF, PASSWORD, SMALL, dbio, load_result, over, result_dir

FAST = BRIEF  # what these tests check holds for any window length


def _process_titles() -> list[str]:
    titles = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                titles.append((proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
            except OSError:
                continue
    return titles


def test_a_password_appears_in_no_output_file_log_or_process_title(instance, roles):
    db = "secure"
    instance.create_database(db)
    with instance.connect() as conn:
        conn.execute(f"GRANT CREATE ON DATABASE {db} TO {roles['password']}")
    base = f"host={instance.data_dir / 'socket'} port={instance.meta['port']} user={roles['password']} dbname={db}"
    results = instance.root / "secure-results"
    env = {**os.environ, "PGPASSWORD": PASSWORD, "COLUMNS": "200"}
    outputs = []
    seen_in_titles = []

    def watch(stop: threading.Event) -> None:
        while not stop.is_set():
            seen_in_titles.extend(t for t in _process_titles() if PASSWORD in t)
            time.sleep(0.2)

    stop = threading.Event()
    watcher = threading.Thread(target=watch, args=(stop,))
    watcher.start()
    try:
        for command in (["setup", "--verify"], ["run", "--label", "secure", "-t", "2"]):
            proc = subprocess.run([sys.executable, "-m", "dbio", *command, "--dsn", base, "--results-dir", str(results),
                                   *over(SMALL, *FAST)], capture_output=True, text=True, env=env)
            assert proc.returncode == 0, proc.stdout + proc.stderr
            outputs += [proc.stdout, proc.stderr]
        wrong = subprocess.run([sys.executable, "-m", "dbio", "run", "--dsn", base, *SMALL],
                               capture_output=True, text=True, env={**env, "PGPASSWORD": PASSWORD + "-wrong"})
        assert wrong.returncode == 2 and "password authentication failed" in wrong.stderr
        outputs += [wrong.stdout, wrong.stderr]
    finally:
        stop.set()
        watcher.join()
    directory = next(results.iterdir())
    for path in list(directory.rglob("*")) + list((instance.data_dir / "log").rglob("*")):
        if path.is_file():
            assert PASSWORD not in path.read_text(errors="replace"), f"password in {path}"
    for text in outputs:
        assert PASSWORD not in text
    assert seen_in_titles == []
    doc = load_result(directory)
    assert doc["status"] == "complete" and "password" not in doc["config"]["connection"]["dsn"]
    report = dbio("report", str(directory), "--format", "json")
    assert report.code == 0 and PASSWORD not in report.out


def test_configuration_values_cannot_inject_sql(instance):
    db = "victim"
    instance.create_database(db)
    with instance.connect(db) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS public.keepme (x int)")
    hostile = 'x"; DROP TABLE public.keepme; --'
    done = dbio("setup", *instance.args(hostile, "--scale", "1MiB", "--scan-table-size", "0", "--allow-cached"))
    assert done.code == 0, done.text
    with instance.connect(db) as conn:
        assert conn.execute("SELECT to_regclass('public.keepme') IS NOT NULL").fetchone()[0]
    with instance.connect() as conn:  # the hostile text became a database name, nothing else
        assert conn.execute("SELECT count(*) FROM pg_database WHERE datname = %s", (hostile,)).fetchone()[0] == 1
    label = "../../../../tmp/escape"
    run = dbio("run", *instance.args(hostile, "--scale", "1MiB", "--scan-table-size", "0", "--allow-cached",
                                     *FAST, "--label", label))
    assert run.code == 0, run.text
    directory = result_dir(run)
    assert directory.parent == instance.results and directory.name.endswith("-..-..-..-..-tmp-escape")
    setting = dbio("setup", *instance.args(db, *SMALL, "--pg-setting", "log_line_prefix=x\nport = 1"))
    assert setting.code == 2 and "control character" in setting.err


def test_a_role_with_only_the_documented_privileges_runs_everything(instance, roles):
    db = "limited"
    instance.create_database(db)
    with instance.connect() as conn:
        conn.execute(f"GRANT CONNECT, CREATE ON DATABASE {db} TO {roles['plain']}")
        member = conn.execute("SELECT pg_has_role(%s, 'pg_monitor', 'MEMBER')", (roles["plain"],)).fetchone()[0]
    assert not member
    dsn = f"host={instance.data_dir / 'socket'} port={instance.meta['port']} user={roles['plain']} dbname={db}"
    common = ["--dsn", dsn, "--results-dir", str(instance.results), *over(SMALL, *FAST)]
    assert dbio("setup", *common, "--verify").code == 0
    run = dbio("run", *common, "--label", "limited", "-t", "2")
    assert run.code == 0, run.text
    doc = load_result(result_dir(run))
    assert doc["figures"]["load_profile"]["physical_reads_per_s"] > 0
    assert doc["figures"]["cpu"]["db_cpu_seconds"] is not None  # own sessions are visible without pg_monitor
    # the read probe needs no privilege where the server times I/O already (it sets track_io_timing only if off)
    assert "why" not in doc["read_probe"]["node1"] and doc["read_probe"]["node1"]["lookups"] > 0
    teardown = dbio("teardown", "--yes", "--dsn", dsn)
    assert teardown.code == 0 and "dropped schema dbio" in teardown.out
