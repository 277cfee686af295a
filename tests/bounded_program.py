"""A piece of Python run as a program with its address space bounded, and its peak memory read back (getrusage):
how the tests of files planted where dbio reads (tests/unit/test_readback.py, test_history.py) see that a
reader neither blocks nor takes the machine's memory, where today's reading whole would."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

ADDRESS_SPACE = 2 * 1024 ** 3  # far above what reading real files needs (and what a bounded reader takes)
PEAK_MIB = 300  # dbio with its imports takes about 100 MiB; reading a planted file must add little to it

# Run as a program: the code of a case, then its peak resident memory (KiB) on stdout's last line.
WRAPPER = """
import resource, sys
from pathlib import Path
code, sys.argv = sys.argv[1], [sys.argv[0], *sys.argv[2:]]
try:
    exec(compile(code, "<case>", "exec"), {"Path": Path, "sys": sys})
finally:
    print(f"peak {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}", flush=True)
"""
CLI = "from dbio import cli\ncli.main(sys.argv[1:])"  # the command line, as `python -m dbio` runs it


def run_program(code: str, *args: str, timeout: float = 60) -> tuple[int, str, str, float]:
    """(exit code, stdout without its last line, stderr, peak MiB) of code run as a program."""
    def bounded() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))

    # not what another test left in this process's environment (a password typed: MYSQL_PWD), nor dbio's options
    env = {k: v for k, v in os.environ.items() if k not in ("MYSQL_PWD", "PGPASSWORD") and not k.startswith("DBIO_")}
    try:
        done = subprocess.run([sys.executable, "-c", WRAPPER, code, *args], capture_output=True, text=True,
                              timeout=timeout, preexec_fn=bounded, cwd=Path(__file__).parents[1], env=env)
    except subprocess.TimeoutExpired:
        pytest.fail(f"still reading after {timeout} s: {code.splitlines()[-1]}")
    *out, last = done.stdout.splitlines() or ["peak 0"]
    assert last.startswith("peak "), done.stdout + done.stderr
    return done.returncode, "\n".join(out), done.stderr, int(last.split()[1]) / 1024
