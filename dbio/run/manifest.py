"""run.json, the run's manifest (written when a run starts, read back to build its result): the
configuration, the plan, every node's server and capabilities, the setup, the storage and the host.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dbio import __version__
from dbio import engines, jsondoc, parts, file_formats, readback
from dbio import result as results
from dbio.collect import host
from dbio.config import Config, option_values
from dbio.engines.base import ServerInfo
from dbio.errors import UsageError
from dbio.filesystem import write_whole
from dbio.run.clock import REAL_TIME, TimeSource
from dbio.run.identity import client_id
from dbio.run.nodes import Node
from dbio.run.plan import RunPlan
from dbio.run.readings import ONLY_NODE

MANIFEST_FILE = results.RUN_MANIFEST


def manifest(config: Config, plan: RunPlan, nodes: list[Node], setup: dict[str, Any], storage: dict[str, Any],
             run_id: int, time: TimeSource = REAL_TIME) -> dict[str, Any]:
    """run.json: what a run's result is built from besides its outcome. "server" and "capabilities"
    are the first node's (what format-1 readers read); "nodes" has every node's."""
    described = [{"name": n.name, "engine": n.engine.name, "role": n.role, "server": _server(n.info),
                  "capabilities": n.info.caps.to_dict(), "devices": sorted(n.devices), "weight": n.weight}
                 for n in nodes]
    return {
        "format": "dbio-run-manifest", "format_version": 2, "dbio_version": __version__,
        "run_id": run_id, "created": time.wall(), "client": client_id(),
        "config": config.to_dict(), "options": option_values(config),
        "plan": {"warmup": plan.warmup, "run_time": plan.run_time, "interval": plan.interval,
                 "slice_seconds": plan.control.slice_seconds, "bounds_us": list(plan.bounds_us),
                 "window_at": None if plan.start is None else plan.start + plan.warmup,
                 "rate_per_session": plan.control.rate_per_s},  # --rate: each session's share
        "server": described[0]["server"], "capabilities": described[0]["capabilities"], "nodes": described,
        "setup": setup, "storage": storage, "host": host.host_facts(),
        "part": None if (part := parts.of_config(config.run.part, config.run.run_id, config.run.start_at,
                                                 config.to_dict()["workload"])) is None else part.to_dict(),
    }


def _server(info: ServerInfo) -> dict[str, Any]:
    # identity: the server itself, however it was reached (dbio merge takes its counters once)
    return {"description": info.description, "identity": info.identity, "version": info.caps.server_version,
            "version_num": info.caps.version_num, "settings": info.settings,
            "max_connections": info.max_connections, "cache_bytes": info.cache_bytes}


def manifest_nodes(man: dict[str, Any]) -> list[dict[str, Any]]:
    """The nodes of a manifest; one written before nodes existed describes its one node at the top."""
    if man.get("nodes"):
        return man["nodes"]
    return [{"name": ONLY_NODE, "engine": man["capabilities"].get("engine"), "role": "primary",
             "server": man["server"], "capabilities": man["capabilities"]}]


def write_manifest(directory: Path, data: dict[str, Any]) -> None:
    write_whole(directory / MANIFEST_FILE, json.dumps(data, indent=1) + "\n")


def read_manifest(directory: Path) -> dict[str, Any]:
    """run.json, checked against what `build` reads (UsageError naming the file otherwise)."""
    path = directory / MANIFEST_FILE
    man = results.load(path, "the run cannot be recovered; remove its directory", readback.MANIFEST, follow=False)
    man = engines.complete_manifest(man)  # one an older dbio wrote lacks facts this one reads
    try:
        jsondoc.check(man, file_formats.MANIFEST)
    except jsondoc.Malformed as exc:
        raise UsageError(f"{path}: {exc}", "the run cannot be recovered; remove its directory") from None
    return man
