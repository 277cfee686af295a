"""Results and run manifests an older dbio wrote for PostgreSQL, completed with what it did not record.

Before capabilities carried the facts reports consult (facts.py), before the counter record had
its neutral checkpoint group, and while the cache figure and the manifest's server block were
named after shared_buffers, PostgreSQL's documents held all of it in its own terms. These
functions fill in the neutral facts from what such a document recorded, so that it reads,
renders and compares as before. Pure and idempotent: a complete document comes back unchanged,
and anything malformed is left for the shape check to refuse.
"""

from __future__ import annotations

from typing import Any

from dbio.engines.postgres import facts, stats

OLD_CACHE_KEY = "shared_buffers_bytes"  # figures' validity group and run.json's server block, until now
CACHE_KEY = "cache_bytes"


def complete_result(document: dict[str, Any]) -> dict[str, Any]:
    """A result (format 1 or 2) with every fact of this dbio; its own nodes' too."""
    out = dict(document)
    environment = out.get("environment")
    server = environment.get("server") if isinstance(environment, dict) else None
    out["capabilities"] = _capabilities(out.get("capabilities"), server)
    out["figures"] = _figures(out.get("figures"))
    out["normalized"] = _normalized(out.get("normalized"))
    if isinstance(out.get("nodes"), list):
        out["nodes"] = [_result_node(node) for node in out["nodes"]]
    return out


def complete_manifest(manifest: dict[str, Any]) -> dict[str, Any]:
    """A run.json (of a run whose dbio process died) with every fact this dbio reads."""
    out = dict(manifest)
    out["server"] = _server(out.get("server"))
    out["capabilities"] = _capabilities(out.get("capabilities"), out["server"])
    if isinstance(out.get("nodes"), list):
        out["nodes"] = [_manifest_node(node) for node in out["nodes"]]
    return out


def _result_node(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    return {**node, "capabilities": _capabilities(node.get("capabilities"), node.get("server")),
            "figures": _figures(node.get("figures")), "normalized": _normalized(node.get("normalized"))}


def _manifest_node(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    server = _server(node.get("server"))
    return {**node, "server": server, "capabilities": _capabilities(node.get("capabilities"), server)}


def _capabilities(caps: Any, server: Any) -> Any:
    settings = server.get("settings") if isinstance(server, dict) else None
    if not isinstance(caps, dict) or not isinstance(settings, dict):
        return caps
    data_directory = caps.get("data_directory") if isinstance(caps.get("data_directory"), str) else None
    known = facts.capability_facts(settings, data_directory=data_directory, local=caps.get("local") is True)
    known["settings_shown"] = list(known["settings_shown"])  # as JSON holds it
    return {**known, **caps}


def _server(server: Any) -> Any:
    if not isinstance(server, dict) or OLD_CACHE_KEY not in server or CACHE_KEY in server:
        return server
    return _renamed(server, OLD_CACHE_KEY, CACHE_KEY)


def _figures(figures: Any) -> Any:
    validity = figures.get("validity") if isinstance(figures, dict) else None
    if not isinstance(validity, dict) or OLD_CACHE_KEY not in validity or CACHE_KEY in validity:
        return figures
    return {**figures, "validity": _renamed(validity, OLD_CACHE_KEY, CACHE_KEY)}


def _normalized(normalized: Any) -> Any:
    if not isinstance(normalized, dict):
        return normalized
    return {name: _with_checkpoints(reading) for name, reading in normalized.items()}


def _with_checkpoints(reading: Any) -> Any:
    if not isinstance(reading, dict) or "checkpoints" in reading:
        return reading
    writers = reading.get("writers")
    if not isinstance(writers, dict) or not writers or \
            not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in writers.values()):
        return reading
    return {**reading, "checkpoints": stats.checkpoints(writers)}


def _renamed(values: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    """values with one key renamed where it stood (reports list figures in their order)."""
    return {new if key == old else key: value for key, value in values.items()}
