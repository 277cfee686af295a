"""Parts of one agreed run (pure): several dbio processes, on one host or several, that run one
workload against one server at one agreed start (--part i/N with --start-at), each a part of it.

Their run is one: its identity is the one they agreed on (--run-id), or else what they all share,
the start instant, the part count and the workload (every option but how many sessions each part
runs). A server admits the parts of one run at once and refuses another run meanwhile; each part
counts its own sessions' I/O, and `dbio merge` adds the parts' own counts and takes the server's
counters once.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# Workload options the parts (or hosts) of one run may set apart: how many sessions each one runs.
PER_PART_OPTIONS = ("threads_per_schema", "sessions")
MAX_PARTS = 1000
# Advisory lock keys at or above this are runs' (see engines/postgres/exclusive.py); below, dbio's own.
FIRST_RUN_KEY = 16
# In each pod of an Indexed Job Kubernetes sets this to the pod's completion index, 0-based; --part
# job-index[+K]/N makes it the part K + index + 1 (dbio kubernetes writes it, docs/kubernetes.md).
JOB_INDEX = "JOB_COMPLETION_INDEX"


@dataclass(frozen=True)
class Part:
    index: int  # 1-based
    of: int
    run: str  # the run's identity, the same in every part

    @property
    def key(self) -> int:
        return lock_key(self.run)

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "of": self.of, "run": self.run}


def parse(text: str, environ: Mapping[str, str] | None = None) -> tuple[int, int]:
    """'i/N' -> (i, N); 'job-index/N' or 'job-index+K/N' -> (K + JOB_COMPLETION_INDEX + 1, N), the index
    read from environ (default: this process's environment); ValueError with a one-line reason."""
    m = re.fullmatch(r"\s*(?:(\d+)|job-index(?:\+(\d+))?)\s*/\s*(\d+)\s*", text or "")
    if not m:
        raise ValueError("is not i/N (this process's part and how many parts the run has, e.g. 2/3) nor "
                         "job-index[+K]/N")
    of = int(m.group(3))
    if m.group(1) is not None:
        index = int(m.group(1))
    else:
        found = (os.environ if environ is None else environ).get(JOB_INDEX)
        if found is None:
            raise ValueError(f"takes the part from {JOB_INDEX}, which is not set (Kubernetes sets it in each pod "
                             "of an Indexed Job)")
        if not re.fullmatch(r"\d{1,6}", found):
            raise ValueError(f"takes the part from {JOB_INDEX}, which is {found[:20]!r}, not a completion index")
        index = int(m.group(2) or 0) + int(found) + 1
    if of < 2 or of > MAX_PARTS:
        raise ValueError(f"N is {of}: a run in parts has 2 to {MAX_PARTS} of them")
    if not 1 <= index <= of:
        raise ValueError(f"names part {index} of {of}: parts are numbered 1 to {of}")
    return index, of


def run_identity(start_at: float, of: int, workload: dict[str, Any], given: str | None = None) -> str:
    """The run's identity: the one given, or one every part derives alike from what they agreed on."""
    if given:
        return given
    shared = {k: v for k, v in sorted(workload.items()) if k not in PER_PART_OPTIONS}
    text = json.dumps({"start_at": round(start_at, 3), "parts": of, "workload": shared}, sort_keys=True, default=str)
    return "run-" + hashlib.sha256(text.encode()).hexdigest()[:12]


def lock_key(identity: str) -> int:
    """A run's advisory lock key: a positive int4 at or above FIRST_RUN_KEY."""
    n = int.from_bytes(hashlib.sha256(identity.encode()).digest()[:4], "big") & 0x7FFFFFFF
    return max(n, FIRST_RUN_KEY)


def of_config(part: str | None, run_id: str | None, start_at: float | None, workload: dict[str, Any]) -> Part | None:
    """The part this process runs, from its options (already checked), or None."""
    if part is None or start_at is None:
        return None
    index, of = parse(part)
    return Part(index, of, run_identity(start_at, of, workload, run_id))


def part_of(doc: dict[str, Any]) -> Part | None:
    """The part a result document was, or None (a whole run)."""
    raw = doc.get("part")
    if not isinstance(raw, dict):
        return None
    try:
        return Part(int(raw["index"]), int(raw["of"]), str(raw["run"]))
    except (KeyError, TypeError, ValueError):
        return None
