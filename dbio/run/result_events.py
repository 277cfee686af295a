"""Events a result records that its readings and samples reveal (pure but for the clock): the window
cut short at the last sample, a server's counters refused, lines of samples.jsonl a recovery skipped.
"""

from __future__ import annotations

import itertools
import time
from typing import Any, Callable, Iterable

from dbio import result as results
from dbio.run.readings import raw_nodes
from dbio.run.outcome import RunOutcome


def window_cut(t: float | None) -> dict[str, Any]:
    """The end reading failed (the server went away): the window ends at the last sample instead."""
    return {"t": t, "kind": "window_cut",
            "message": "no end snapshot: the figures end at the last sample that reached the server"}


def refusals(outcome: RunOutcome, samples: Callable[[], Iterable[dict[str, Any]]]) -> list[dict[str, Any]]:
    """An event per node whose server answered counters that were no reading (run/readings.refused): how many
    of its readings, the first and why. Each such sample has no counters of it (a gap in its series)."""
    seen: dict[str, dict[str, Any]] = {}
    # a stream: the file may be long
    for reading in itertools.chain([outcome.window.begin], samples(), [outcome.window.end]):
        for node, why in ((reading or {}).get("refused") or {}).items():
            entry = seen.setdefault(node, {"count": 0, "why": why, "t": ((reading or {}).get("os") or {}).get("t")})
            entry["count"] += 1
    several = len(raw_nodes(outcome.window.begin) or raw_nodes(outcome.window.end)) > 1
    out = []
    for node, entry in seen.items():
        whose = f"{node}'s" if several else "the server's"
        count = f"{entry['count']} reading{'s' if entry['count'] != 1 else ''}"
        out.append({"t": entry["t"], "kind": "readings_refused",
                    "message": f"{count} of {whose} counters refused, holding a number no counter can be (first: "
                               f"{entry['why']}): those samples have no figures of it"})
    return out


def samples_skipped(skipped: list[str]) -> dict[str, Any]:
    """The event that records the lines of samples.jsonl a recovery could not use."""
    return {"t": time.time(), "kind": "samples_skipped", "skipped_lines": len(skipped),
            "message": f"{len(skipped)} line{'s' if len(skipped) != 1 else ''} of {results.SAMPLES_FILE} could not be "
                       f"read and {'were' if len(skipped) != 1 else 'was'} skipped (first: {skipped[0]})"}
