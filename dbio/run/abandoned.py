"""Runs their dbio process never finished: found (a manifest, no result, no live dbio process, not
rescued elsewhere) and their result rebuilt from samples.jsonl, where every interval was written
(with its statement counts) as it ended, marked lost. Also where a result goes when its run
directory cannot take it, and the marks that say so.
"""

from __future__ import annotations

import platform
import time
from pathlib import Path
from typing import Any, Callable

from dbio import readback, trust
from dbio import result as results
from dbio.engines.base import Engine
from dbio.run.assemble import build, interval_statements
from dbio.run.identity import client_alive
from dbio.run.manifest import MANIFEST_FILE, manifest_nodes, read_manifest
from dbio.run.phase import Phase
from dbio.run.readings import answered, normalizer, raw_nodes, reading_time
from dbio.run.result_events import samples_skipped
from dbio.run.outcome import RunOutcome, WindowReadings
from dbio.run.run_status import RunStatus, Status
from dbio.run.sessions import Clock
from dbio.run.slice_totals import Tally
from dbio.run import wait_sampling

RESCUE_MARK = "rescued-from"  # in a rescue directory: the run directory its result could not be written to
RESCUED_TO = results.RESCUED_TO  # in that run directory, as far as its full disk allowed: where the result went


def rescue_bases() -> list[Path]:
    """Where results go when their run directory cannot be written (the first that can be made)."""
    import platformdirs
    import tempfile

    return [platformdirs.user_state_path("dbio") / "rescued", Path(tempfile.gettempdir()) / "dbio-rescued"]


def rescued_runs() -> set[str]:
    """Run directories whose result was written to a rescue directory instead. A mark counts only
    when dbio's user (or root) made it where nobody else can change it: one base is in the shared
    temporary directory, where any user could plant a mark to keep root from recovering a run."""
    origins = set()
    for base in rescue_bases():
        for mark in base.glob(f"*/{RESCUE_MARK}") if base.is_dir() else []:
            if trust.path_problem(mark.parent):
                continue
            try:
                origins.add(trust.read_trusted(mark, readback.MARK).decode(errors="replace").strip())
            except (OSError, trust.UntrustedFile, readback.Refused):
                continue
    return origins


def abandoned(results_dir: Path) -> list[Path]:
    """Run directories (also inside sweeps) with a manifest, no result, and no live dbio process.
    A run whose result was rescued elsewhere is not abandoned, nor one in a directory another user could
    change (a manifest is copied easily: it would make root write a result where they choose)."""
    found: list[Path] = []
    if not results_dir.is_dir():
        return found
    rescued = rescued_runs()
    for manifest_path in list(results_dir.glob(f"*/{MANIFEST_FILE}")) + list(results_dir.glob(f"*/*/{MANIFEST_FILE}")):
        directory = manifest_path.parent
        if any((directory / name).exists() for name in (results.RESULT_FILE, RESCUED_TO)) or str(directory) in rescued:
            continue
        if trust.path_problem(directory):  # its result would be written through links another user put there
            continue
        try:
            man = readback.load_json(manifest_path, readback.MANIFEST, follow=False)
        except (OSError, ValueError):  # readback.Refused and jsondoc.Malformed are ValueErrors
            continue  # not yet written whole, or unreadable: nothing to recover from
        client = man.get("client") if isinstance(man, dict) else None
        if not isinstance(client, str) or not client_alive(client):  # recover() says what is wrong
            found.append(directory)
    return sorted(found)


def recover(directory: Path, engine_named: Callable[[str], Engine]) -> dict[str, Any]:
    """result.json for a run whose dbio process died: figures up to its last sample, marked lost.
    Lines of samples.jsonl that cannot be read are skipped; the result's events say how many.
    engine_named: the engine of that name (the manifest names each node's)."""
    man = read_manifest(directory)
    normalize = normalizer({n["name"]: engine_named(n["engine"]) for n in manifest_nodes(man)})
    samples_path = directory / results.SAMPLES_FILE
    skipped: list[str] = []
    plan = man["plan"]
    warmup = plan["warmup"]
    buckets = len(plan["bounds_us"]) + 1
    start = begin = end = None
    last_t = None
    waits: dict[str, int] = {}
    for sample in results.iter_samples(samples_path, skipped):  # one pass: the file may be long
        last_t = sample.get("t", last_t)
        if sample.get("k") == 0:
            start = sample["t"]
        if not answered(sample):
            continue
        if sample.get("k") == int(warmup):
            begin = sample
        if sample.get("phase") != Phase.WINDOW.label:
            continue
        end = sample
        for event, count in (sample.get("waits") or {}).items():
            waits[event] = waits.get(event, 0) + count
    per_interval = interval_statements(results.iter_samples(samples_path), buckets)
    totals = Tally(buckets)
    for counts in per_interval.values():
        totals.merge(Tally.from_sparse(counts, buckets))
    clock = Clock(start=start, window_open=None if start is None else start + warmup,
                  deadline=None if start is None or not plan["run_time"] else start + warmup + plan["run_time"],
                  warmup=warmup)
    reason = (f"the dbio process ({man['client']}) ended before the run finished; the figures cover the window up "
              f"to its last sample ({results.iso(last_t)})")
    outcome = RunOutcome(
        status=RunStatus(Status.LOST, reason), run_id=int(man["run_id"]), clock=clock, start=None,
        window=WindowReadings(_reading(begin), _reading(end), reading_time(begin), reading_time(end)),
        sessions=[], totals=totals, plans={}, records={wait_sampling.KEY: wait_sampling.WaitCounts(waits, None)},
        events=[{"t": last_t, "kind": "lost", "message": reason},
                {"t": time.time(), "kind": "recovered",
                 "message": f"result rebuilt from samples.jsonl by dbio on {platform.node()}"}]
        + ([samples_skipped(skipped)] if skipped else []))
    return build(man, outcome, normalize, lambda: results.iter_samples(samples_path), directory.name, per_interval)


def _reading(sample: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if sample is None else {"nodes": raw_nodes(sample), "os": sample.get("os")}
