"""What the bench scripts share: where dbio is, a fresh working directory, the machine line, cleanup."""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DBIO = [sys.executable, "-m", "dbio"]
RESULTS = REPO / "bench" / "results"


def fresh_directory(base: Path) -> Path:
    """Create the bench's own directory; refuse to reuse one, so no earlier data is overwritten."""
    if base.exists():
        raise SystemExit(f"{base} exists: remove it or choose another --dir")
    base.mkdir(parents=True)
    base.chmod(0o755)  # the unprivileged server user must reach the instance below it
    return base


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def machine() -> dict:
    return {"host": platform.node(), "cpus": os.cpu_count(), "kernel": platform.release()}


def heading(date: str, extra: str = "") -> str:
    m = machine()
    return f"### {date[:10]} on {m['host']} ({m['cpus']} CPUs, kernel {m['kernel']}{extra})"


def destroy(data_dir: Path, base: Path | None = None) -> None:
    """Stop and remove the bench's instance (and, with base, the whole bench directory)."""
    subprocess.run(DBIO + ["instance", "destroy", "--yes", "--data-dir", str(data_dir)], cwd=REPO, capture_output=True)
    if base is not None:
        shutil.rmtree(base, ignore_errors=True)


def dbio(*args: str) -> subprocess.CompletedProcess:
    """dbio from this checkout; a failure ends the bench with its output."""
    proc = subprocess.run(DBIO + list(args), text=True, capture_output=True, cwd=REPO)
    if proc.returncode != 0:
        raise SystemExit(f"dbio {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def result_of(proc: subprocess.CompletedProcess) -> dict:
    """The result.json a dbio run names in its output."""
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("result: "))
    return json.loads(Path(line.split(": ", 1)[1]).read_text())


def standard_options(data_dir: Path, results: Path, scale: str) -> list[str]:
    """The benches' common setup: direct I/O, shared_buffers 128MB, one schema of `scale`, no scan
    table, work unit 8, update pct 0 (the index plan's random reads)."""
    return ["--data-dir", str(data_dir), "--shared-buffers", "128MiB", "--scale", scale, "--scan-table-size", "0",
            "--work-unit", "8", "--update-pct", "0", "--results-dir", str(results)]
