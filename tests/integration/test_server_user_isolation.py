"""As root, no process of the server user ever holds root's terminal, and a privileged server user
is refused before anything is made (issue: trust round 3, items 1 and 3).

dbio runs here under a terminal of its own, as from root's shell; every few milliseconds the test
looks at every process of the server user's uid (initdb and the bootstrap backends it starts,
pg_ctl, the postmaster and its children, pg_basebackup for a standby, mariadb-install-db and the
bootstrap mariadbd, the managed mariadbd) for a controlling terminal or an open terminal."""

import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.conftest import _base_dir
from tests.terminal import run_under_terminal, terminal_holders

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the server then runs as another user")


class Watch:
    """What the server user's processes held of a terminal while dbio ran."""

    def __init__(self):
        self.uid: int | None = None
        self.looks = 0
        self.seen_processes = False
        self.holders: set[str] = set()

    def __call__(self) -> None:
        if self.uid is None:  # the user is created by the first instance dbio makes
            try:
                self.uid = pwd.getpwnam("dbio").pw_uid
            except KeyError:
                return
        self.looks += 1
        self.holders.update(terminal_holders(self.uid))


def _dbio_under_terminal(watch: Watch, *args: str) -> str:
    code, out = run_under_terminal([sys.executable, "-m", "dbio", *args], timeout=300, each_moment=watch,
                                   env={**os.environ, "COLUMNS": "200"})
    assert code == 0, out
    return out


@pytest.fixture
def root_dir():
    root = _base_dir()
    yield root
    shutil.rmtree(root, ignore_errors=True)


def test_the_embedded_server_and_its_tools_never_hold_roots_terminal(root_dir):
    watch = Watch()
    data_dir = str(root_dir / "pg")
    try:
        _dbio_under_terminal(watch, "instance", "init", "--data-dir", data_dir, "--shared-buffers", "16MiB",
                             "--standbys", "1")
        _dbio_under_terminal(watch, "instance", "stop", "--data-dir", data_dir)
        _dbio_under_terminal(watch, "instance", "start", "--data-dir", data_dir)
    finally:
        _dbio_under_terminal(watch, "instance", "destroy", "--yes", "--data-dir", data_dir)
    assert watch.looks > 20, "the test looked too seldom to see the programs dbio ran"
    assert not watch.holders, f"server-user processes held a terminal: {sorted(watch.holders)}"


def test_the_managed_mariadb_and_its_installer_never_hold_roots_terminal(root_dir):
    from dbio.engines.mysql.instance import binaries
    from dbio.errors import UsageError

    try:
        binaries.locate()
    except UsageError as exc:
        pytest.skip(f"no usable MariaDB/MySQL server binaries (Debian package mariadb-server): {exc}")
    watch = Watch()
    here = ["--engine", "mysql", "--data-dir", str(root_dir / "my")]
    try:
        _dbio_under_terminal(watch, "instance", "init", *here, "--buffer-pool", "8MiB")
    finally:
        _dbio_under_terminal(watch, "instance", "destroy", "--yes", *here)
    assert watch.looks > 20
    assert not watch.holders, f"server-user processes held a terminal: {sorted(watch.holders)}"


def _with_accounts(root: Path, passwd: str, group: str, *args: str) -> subprocess.CompletedProcess:
    """dbio with these account files in place of the machine's, seen by it alone (a mount namespace
    of its own): the machine's users, and the tests running beside this one, are untouched."""
    (root / "passwd").write_text(passwd)
    (root / "group").write_text(group)
    script = ('mount --bind "$1" /etc/passwd && mount --bind "$2" /etc/group && shift 2 && exec "$@"')
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh",
                           str(root / "passwd"), str(root / "group"), sys.executable, "-m", "dbio", *args],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "200"})


def _accounts_with_privileged_dbio(how: str) -> tuple[str, str]:
    passwd = Path("/etc/passwd").read_text().splitlines()
    group = Path("/etc/group").read_text().splitlines()
    if not any(line.startswith("dbio:") for line in passwd):
        passwd.append("dbio:x:64999:64999:dbio:/nonexistent:/usr/sbin/nologin")
        group.append("dbio:x:64999:")
    if how == "primary group root":
        passwd = [":".join(f[:3] + ["0"] + f[4:]) if f[0] == "dbio" else line
                  for line in passwd for f in [line.split(":")]]
    else:  # a member of sudo
        if not any(line.startswith("sudo:") for line in group):
            group.append("sudo:x:27:")
        group = [line + ("," if not line.endswith(":") else "") + "dbio" if line.startswith("sudo:") else line
                 for line in group]
    return "\n".join(passwd) + "\n", "\n".join(group) + "\n"


@pytest.mark.parametrize("how,named", [("primary group root", "primary group root (gid 0)"),
                                       ("member of sudo", "group sudo (gid ")])
@pytest.mark.parametrize("engine", ["postgresql", "mysql"])
def test_a_privileged_server_user_is_refused_before_anything_is_made(root_dir, how, named, engine):
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare (util-linux) to show dbio other account files")
    passwd, group = _accounts_with_privileged_dbio(how)
    data_dir = root_dir / "instance"
    done = _with_accounts(root_dir, passwd, group, "instance", "init", "--engine", engine,
                          "--data-dir", str(data_dir))
    if data_dir.exists():  # made despite the refusal: never leave its server running
        subprocess.run([sys.executable, "-m", "dbio", "instance", "destroy", "--yes", "--engine", engine,
                        "--data-dir", str(data_dir)], capture_output=True, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert f"refusing to run the server as 'dbio': its {named}" in lines[0]
    assert not data_dir.exists(), "the instance's directory was made before the refusal"
