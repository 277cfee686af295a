"""dbio instance init|start|stop|status|destroy on a real embedded PostgreSQL 18."""

import json
import os
import socket
import stat
import subprocess
import threading

import psycopg

from tests.integration.conftest import dbio


def test_instance_lifecycle(workdir):
    data_dir = workdir / "lifecycle"
    args = ["--data-dir", str(data_dir)]
    done = dbio("instance", "init", *args, "--shared-buffers", "16MiB")
    assert done.code == 0, done.text
    if os.geteuid() == 0:
        assert "system user 'dbio'" in done.text  # says what it did about root
        assert (data_dir / "pgdata").stat().st_uid != 0
    assert stat.S_IMODE((data_dir / "socket").stat().st_mode) == 0o700
    assert stat.S_IMODE((data_dir / "pgdata").stat().st_mode) == 0o700

    status = dbio("instance", "status", *args)
    assert status.code == 0 and "running" in status.out and "direct I/O on" in status.out
    # the storage stack under it, in the report's words: filesystem and mount, WAL, host tuning
    lines = {line.split()[0]: line for line in status.out.splitlines() if line.strip()}
    assert "mounted at" in lines["data"] and f"data directory {data_dir}" in lines["data"]
    assert lines["wal"].startswith("wal        same device as data") and "transparent huge pages" in lines["host"]
    port = int(next(line.split("port ")[1].split()[0] for line in status.out.splitlines() if "port " in line))
    with psycopg.connect(f"host={data_dir / 'socket'} port={port} user=dbio dbname=dbio") as conn:
        assert conn.execute("SHOW listen_addresses").fetchone()[0] == ""
        assert conn.execute("SHOW debug_io_direct").fetchone()[0] == "data"
        assert conn.execute("SHOW server_version_num").fetchone()[0].startswith("18")
    for dbname in ("template1", "postgres"):  # autovacuum has nothing left to do there in a run
        with psycopg.connect(f"host={data_dir / 'socket'} port={port} user=dbio dbname={dbname}") as conn:
            # below the base thresholds (50 changes) whatever the table's size; toast tables and
            # pg_statistic are never analysed
            assert conn.execute("SELECT array_agg(relname) FROM pg_stat_sys_tables WHERE n_dead_tup > 50 "
                                "OR (n_mod_since_analyze > 50 AND schemaname <> 'pg_toast' "
                                "AND relname <> 'pg_statistic')").fetchone()[0] is None
    with socket.socket() as s:  # no TCP listener on the instance's port
        assert s.connect_ex(("127.0.0.1", port)) != 0

    assert dbio("instance", "stop", *args).code == 0
    stopped = dbio("instance", "status", *args)
    assert stopped.code == 3 and "stopped" in stopped.out
    assert dbio("instance", "start", *args, "--shared-buffers", "16MiB").code == 0
    assert dbio("instance", "status", *args).code == 0
    # stop, status and destroy take only the options they use
    refused = dbio("instance", "status", *args, "--scale", "1GiB")
    assert refused.code == 2 and "No such option '--scale'" in refused.err

    again = dbio("instance", "init", *args, "--shared-buffers", "16MiB")
    assert again.code == 2 and "already exists" in again.err

    not_asked = dbio("instance", "destroy", *args)  # no terminal to ask on: refused, naming --yes
    assert not_asked.code == 2 and "pass --yes" in not_asked.err and data_dir.exists()
    # it said nothing for its seconds: now what it is doing, before it does it, and when it is done
    destroyed = dbio("instance", "destroy", "--yes", *args)
    assert destroyed.code == 0, destroyed.text
    said = destroyed.out.splitlines()
    assert said[0] == f"dbio: stopping the server of the instance in {data_dir} (a clean shutdown)", said
    assert said[1].startswith("dbio: removing ") and said[1].endswith(f" of data in {data_dir}"), said
    assert said[-1].startswith(f"removed the instance in {data_dir} (") and said[-1].endswith(" s)"), said
    assert not data_dir.exists()
    absent = dbio("instance", "status", *args)
    assert absent.code == 3 and absent.out.startswith(f"no dbio instance in {data_dir} (from --data-dir)")
    gone = dbio("instance", "destroy", "--yes", *args)
    assert gone.code == 2 and "holds no dbio instance" in gone.err


def test_refuses_a_directory_that_is_not_an_instance(workdir):
    foreign = workdir / "not-an-instance"
    foreign.mkdir()
    (foreign / "precious.txt").write_text("keep me")
    done = dbio("instance", "init", "--data-dir", str(foreign))
    assert done.code == 2 and "not empty" in done.err
    destroy = dbio("instance", "destroy", "--yes", "--data-dir", str(foreign))
    assert destroy.code == 2
    assert (foreign / "precious.txt").read_text() == "keep me"


def test_start_after_a_crash_leaves_a_stale_lock_file(workdir):
    """A killed postmaster leaves postmaster.pid behind; its pid may be a zombie for a while (or for
    good, where nothing reaps orphans) or belong to another process later: start still works."""
    data_dir = workdir / "stale-lock"
    place = ["--data-dir", str(data_dir)]
    args = [*place, "--shared-buffers", "16MiB"]
    assert dbio("instance", "init", *args).code == 0
    lock = data_dir / "pgdata" / "postmaster.pid"
    content, owner = lock.read_text().splitlines(keepends=True), lock.stat()
    assert dbio("instance", "stop", *place).code == 0

    # PostgreSQL ignores a pid it may not signal, so the stand-ins run as the server's own user
    as_server = {"user": owner.st_uid, "group": owner.st_gid} if os.geteuid() == 0 else {}

    def stale_lock(pid: int) -> None:
        lock.write_text("".join([f"{pid}\n", *content[1:]]))
        os.chown(lock, owner.st_uid, owner.st_gid)

    try:
        zombie = subprocess.Popen(["true"], **as_server)  # not waited for: a zombie until the timer reaps it
        threading.Timer(1.5, zombie.wait).start()
        stale_lock(zombie.pid)
        started = dbio("instance", "start", *args)
        assert started.code == 0, started.text
        assert dbio("instance", "stop", *place).code == 0

        other = subprocess.Popen(["sleep", "60"], **as_server)  # the crashed server's pid now belongs to someone else
        try:
            stale_lock(other.pid)
            started = dbio("instance", "start", *args)
            assert started.code == 0, started.text
            assert f"removed the stale postmaster.pid of a crashed server (its pid {other.pid} is now another" \
                in started.text
            assert other.poll() is None  # never touched
        finally:
            other.kill()
            other.wait()
    finally:
        dbio("instance", "destroy", "--yes", *place)


def test_a_setting_that_runs_a_program_is_used_only_when_allowed_by_name(workdir):
    data_dir = workdir / "allowed"
    args = ["--data-dir", str(data_dir), "--shared-buffers", "16MiB", "--pg-setting", "archive_command=/bin/true"]
    refused = dbio("instance", "init", *args)
    assert refused.code == 2 and "--allow-setting archive_command" in refused.err
    assert not data_dir.exists()
    done = dbio("instance", "init", *args, "--allow-setting", "archive_command")
    assert done.code == 0, done.text
    try:
        port = json.loads((data_dir / "dbio-instance.json").read_text())["port"]
        with psycopg.connect(f"host={data_dir / 'socket'} port={port} user=dbio dbname=dbio") as conn:
            # SHOW says "(disabled)" while archive_mode is off: ask where the value came from
            assert conn.execute("SELECT sourcefile LIKE '%dbio.conf' FROM pg_settings "
                                "WHERE name = 'archive_command'").fetchone()[0]
        assert "archive_command = '/bin/true'" in (data_dir / "pgdata" / "dbio.conf").read_text()
    finally:
        dbio("instance", "destroy", "--yes", "--data-dir", str(data_dir))


def test_the_instance_remembers_the_settings_it_was_last_given(workdir):
    """init --shared-buffers 16MiB need not be repeated: later commands take the instance's settings where the
    user gives none (before, setup refused a 32 MiB data set as fitting the default 128 MiB and a run restarted
    the instance at it); what the user gives replaces them, for later commands too; a sweep's steps do not."""
    from tests.integration.conftest import BRIEF, SMALL, load_result, over, result_dir

    data_dir, results = workdir / "remembers", workdir / "remembers-results"
    where = ["--data-dir", str(data_dir), "--results-dir", str(results)]
    try:
        done = dbio("instance", "init", "--data-dir", str(data_dir), "--shared-buffers", "16MiB",
                    "--pg-setting", "work_mem=8MB")
        assert done.code == 0, done.text
        assert json.loads((data_dir / "dbio-instance.json").read_text())["options"] == {
            "shared_buffers": 16 << 20, "pg_settings": {"work_mem": "8MB"}}
        done = dbio("setup", *where, *SMALL)
        assert done.code == 0, done.text
        assert "using the instance's shared_buffers 16 MiB, pg_settings work_mem=8MB, as it was last configured; " \
               "give --shared-buffers, --pg-setting NAME=VALUE (NAME= drops one) to change them" in done.text
        done = dbio("run", *where, *over(SMALL, *BRIEF), "--io-method", "worker")  # given: remembered from now on
        assert done.code == 0, done.text
        done = dbio("run", *where, *over(SMALL, *BRIEF))
        assert done.code == 0 and "restarting" not in done.text, done.text  # as it was: nothing to change
        assert "shared_buffers 16 MiB, io_method worker, pg_settings work_mem=8MB, as it" in done.text
        doc = load_result(result_dir(done))
        settings = doc["nodes"][0]["server"]["settings"]
        assert (settings["shared_buffers"]["setting"], settings["io_method"]["setting"]) == ("2048", "worker")
        assert doc["config"]["instance"]["pg_settings"] == {"work_mem": "8MB"}
        # --pg-setting adds to the remembered settings name by name, and NAME= drops one
        done = dbio("run", *where, *over(SMALL, *BRIEF), "--pg-setting", "temp_buffers=16MB")
        assert done.code == 0 and "pg_settings work_mem=8MB, as it" in done.text, done.text
        assert load_result(result_dir(done))["config"]["instance"]["pg_settings"] == {"work_mem": "8MB",
                                                                                      "temp_buffers": "16MB"}
        done = dbio("run", *where, *over(SMALL, *BRIEF), "--pg-setting", "work_mem=")
        assert done.code == 0, done.text
        assert load_result(result_dir(done))["config"]["instance"]["pg_settings"] == {"temp_buffers": "16MB"}
        assert json.loads((data_dir / "dbio-instance.json").read_text())["options"]["pg_settings"] == {
            "temp_buffers": "16MB"}
        done = dbio("sweep", *where, *over(SMALL, *BRIEF), "--vary", "shared_buffers=24MiB")
        assert done.code == 0, done.text
        assert json.loads((data_dir / "dbio-instance.json").read_text())["options"]["shared_buffers"] == 16 << 20
        done = dbio("run", *where, *over(SMALL, *BRIEF), "--shared-buffers", "24MiB")
        assert done.code == 0 and "using the instance's shared_buffers" not in done.text, done.text
        assert json.loads((data_dir / "dbio-instance.json").read_text())["options"]["shared_buffers"] == 24 << 20
    finally:
        dbio("instance", "destroy", "--yes", "--data-dir", str(data_dir))
    assert not data_dir.exists()
