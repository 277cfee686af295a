"""The linter (ruff) and the type checker (mypy) run with the tests, so the README's one test command,
the one CI runs, checks the code too. Their configuration is pyproject.toml's; their versions are
pinned in the [test] extra and constraints.txt. A finding fails the test with the tool's own output."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    # the venv's own tools (sys.executable -m), from the repository's root so pyproject.toml is read
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)


def test_ruff_finds_nothing():
    done = _run("ruff", "check", "--no-fix", "--output-format", "concise", "dbio", "tests", "bench", "tools")
    assert done.returncode == 0, f"ruff check:\n{done.stdout}{done.stderr}"


def test_mypy_finds_nothing():
    done = _run("mypy", "dbio")
    assert done.returncode == 0, f"mypy dbio:\n{done.stdout}{done.stderr}"
