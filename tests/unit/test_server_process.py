"""Programs of the server user never hold root's terminal (issue: trust round 3, item 1).

A process of the server user's uid can ptrace another of that uid and push keystrokes into its
controlling terminal (TIOCSTI): run from root's shell, such a program would reach root's shell."""

import ast
import json
import os
import sys
from pathlib import Path

import pytest

from dbio.managed import server_process
from tests.terminal import run_under_terminal

DBIO = Path(server_process.__file__).resolve().parents[1]

# What the program sees of itself: its controlling terminal, its session, its descriptors.
PROBE = """
import json, os
fds = {}
for fd in range(256):
    try:
        os.fstat(fd)
    except OSError:
        continue
    fds[fd] = os.readlink(f"/proc/self/fd/{fd}")
fields = open("/proc/self/stat").read().rsplit(")", 1)[1].split()
print(json.dumps({"tty_nr": int(fields[4]), "session": int(fields[3]), "pid": os.getpid(),
                  "uid": os.getuid(), "groups": os.getgroups(), "fds": fds}))
"""

# dbio's side, run under a terminal: one program started the way dbio starts the server's.
LAUNCH = """
import json, os, sys
from pathlib import Path
from dbio.managed import server_process, server_user
user = server_user.lookup("dbio") if os.geteuid() == 0 else None
user = user or server_user.current_user()
inherited = os.open("/dev/null", os.O_RDONLY)  # a descriptor of dbio's, not for the program
os.set_inheritable(inherited, True)
done = server_process.run(user, [sys.argv[2], "-c", sys.argv[1]], cwd=Path("/"))
print("PROBE" + done.stdout.strip())
"""


def _probe_under_terminal() -> dict:
    # the system's python: the server user may not reach the one running the tests
    probe_python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    code, out = run_under_terminal([sys.executable, "-c", LAUNCH, PROBE, probe_python], timeout=60,
                                   env={**os.environ, "PYTHONPATH": str(DBIO.parent)})
    assert code == 0, out
    return json.loads(out.split("PROBE", 1)[1].strip())


def test_a_server_program_has_no_terminal_and_reads_nothing_of_dbios():
    seen = _probe_under_terminal()
    assert seen["tty_nr"] == 0, f"the program has a controlling terminal: {seen}"
    assert seen["session"] == seen["pid"], "the program shares dbio's session"
    assert set(seen["fds"]) == {"0", "1", "2"}, f"inherited descriptors: {seen['fds']}"
    assert seen["fds"]["0"] == "/dev/null"
    assert all(target.startswith("pipe:") for fd, target in seen["fds"].items() if fd != "0"), seen["fds"]


def test_as_root_the_program_runs_as_the_server_user_with_its_own_group_only():
    if os.geteuid() != 0:
        pytest.skip("not root: the program runs as the user running dbio, which the first test covers")
    from dbio.managed.server_user import lookup

    user = lookup("dbio")
    if user is None:
        pytest.skip("no server user 'dbio' yet: the first instance dbio creates makes it")
    seen = _probe_under_terminal()
    assert seen["uid"] == user.uid
    assert set(seen["groups"]) <= {user.gid}, seen["groups"]


def _calls_with(tree: ast.AST, keywords: set[str]) -> list[int]:
    """Lines passing one of keywords to a call, or holding it as a dict key (arguments kept for **)."""
    return [node.lineno for node in ast.walk(tree)
            if (isinstance(node, ast.Call) and any(k.arg in keywords for k in node.keywords))
            or (isinstance(node, ast.Dict) and any(isinstance(k, ast.Constant) and k.value in keywords
                                                   for k in node.keys))]


def test_only_one_helper_starts_programs_as_another_user():
    """Every program run as the server user goes through server_process (one way, both engines)."""
    helper = Path(server_process.__file__).resolve()
    switching = {"user", "group", "extra_groups", "preexec_fn"}
    offenders = []
    for path in DBIO.rglob("*.py"):
        tree = ast.parse(path.read_text())
        text = path.read_text()
        if path.resolve() == helper:
            assert _calls_with(tree, switching), "server_process no longer switches user: update this test"
            continue
        lines = _calls_with(tree, switching) if "subprocess" in text else []
        lines += [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Attribute)
                  and n.attr in {"setuid", "seteuid", "setresuid", "setreuid", "fork", "forkpty"}
                  and isinstance(n.value, ast.Name) and n.value.id == "os"]
        offenders += [f"{path.relative_to(DBIO.parent)}:{line}" for line in lines]
    assert not offenders, f"programs started as another user outside server_process: {offenders}"
