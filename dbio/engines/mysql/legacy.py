"""Results and manifests an older dbio wrote for MySQL, as this dbio reads them (pure)."""

from __future__ import annotations

from typing import Any

from dbio.engines.mysql import facts


def complete_result(document: dict[str, Any]) -> dict[str, Any]:
    """A result written before the engine declared its words and page size, with them (as probe()
    would declare them from the recorded settings)."""
    out = dict(document)
    server = (out.get("environment") or {}).get("server") if isinstance(out.get("environment"), dict) else None
    out["capabilities"] = _words(out.get("capabilities"), server)
    if isinstance(out.get("nodes"), list):
        out["nodes"] = [{**n, "capabilities": _words(n.get("capabilities"), n.get("server"))} if isinstance(n, dict)
                        else n for n in out["nodes"]]
    return out


def complete_manifest(manifest: dict[str, Any]) -> dict[str, Any]:
    out = dict(manifest)
    out["capabilities"] = _words(out.get("capabilities"), out.get("server"))
    if isinstance(out.get("nodes"), list):
        out["nodes"] = [{**n, "capabilities": _words(n.get("capabilities"), n.get("server"))} if isinstance(n, dict)
                        else n for n in out["nodes"]]
    return out


def _words(caps: Any, server: Any) -> Any:
    if not isinstance(caps, dict):
        return caps
    caps = {"own_instance": facts.OWN_INSTANCE, **caps}  # written before it was declared: "(embedded)" in reports
    if "page_bytes" in caps:
        return caps

    settings = server.get("settings") if isinstance(server, dict) else None
    known = facts.capability_facts(settings if isinstance(settings, dict) else {}, local=False)
    return {**caps, **{k: known[k] for k in ("redo_name", "block_name", "page_bytes")}}
