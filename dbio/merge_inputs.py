"""What dbio merge refuses to add up (pure): the same run or part twice, parts out of their run or whose
server gave no identity, parts mixed with whole runs, other workloads. Each is refused in one line
(NotMergeable): merged, it would count reads twice or read as another run's total."""

from __future__ import annotations

from typing import Any

from dbio import parts as run_parts


class NotMergeable(ValueError):
    """Why the inputs cannot be one result (one line)."""


# Workload options hosts may set apart: how many of the sessions each host runs.
PER_HOST_OPTIONS = run_parts.PER_PART_OPTIONS


def server_identity(node: dict[str, Any]) -> str | None:
    identity = (node.get("server") or {}).get("identity")
    return identity if isinstance(identity, str) and identity else None


def refuse_repeats(inputs: list[tuple[str, dict[str, Any]]]) -> None:
    """The same run given twice (or a copy of it) would count each of its reads twice; so would the
    same part of a run. Parts merge only with the other parts of their own run."""
    seen: dict[str, str] = {}
    for name, doc in inputs:
        run_id = str(doc.get("run_id"))
        if run_id in seen:
            raise NotMergeable(f"{seen[run_id]} and {name} are the same run ({run_id}): each would count its reads "
                               "twice; give each host's run once")
        seen[run_id] = name
    found = [(name, run_parts.part_of(doc)) for name, doc in inputs]
    if not any(part for _, part in found):
        return
    whole = [name for name, part in found if part is None]
    if whole:
        named = next(name for name, part in found if part)
        raise NotMergeable(f"{named} is a part of a run (--part) and {whole[0]} is a whole run: merge a run's parts "
                           "together, or whole runs together")
    for name, part in found:
        assert part is not None
        if not (2 <= part.of <= run_parts.MAX_PARTS and 1 <= part.index <= part.of):
            raise NotMergeable(f"{name} is not a part of a run of 2 to {run_parts.MAX_PARTS} parts (part {part.index} "
                               f"of {part.of}): give the results dbio run --part wrote, as it wrote them")
    first_name, first = found[0]
    assert first is not None
    taken: dict[int, str] = {}
    for name, part in found:
        assert part is not None
        if (part.run, part.of) != (first.run, first.of):
            raise NotMergeable(f"{first_name} and {name} are parts of different runs ({first.run} of {first.of} parts, "
                               f"{part.run} of {part.of}): merge the parts of one run")
        if part.index in taken:
            raise NotMergeable(f"{taken[part.index]} and {name} are both part {part.index}/{part.of} of run "
                               f"{part.run}: "
                               "each would count its reads twice; give each part once")
        taken[part.index] = name


def refuse_unidentified(inputs: list[tuple[str, dict[str, Any]]]) -> None:
    """A part ran on a server the other parts may share: without the server's identity its server-wide
    counters would be taken as another server's, every part's reads once more."""
    for name, doc in inputs:
        if run_parts.part_of(doc) and any(server_identity(node) is None for node in doc.get("nodes") or [{}]):
            raise NotMergeable(f"{name}'s server gave no identity: its counters could not be taken once with the "
                               "other parts' server's (each read would count again); merge results dbio run --part "
                               "wrote")


def refuse_same_readings(nodes: list[dict[str, Any]]) -> None:
    """Two runs read one server at the same instants (its clock, to the microsecond) at both ends of their
    windows only when they are one: a copy of a result under another run id or part, whose sessions,
    statements and latencies would count twice."""
    seen: dict[tuple[Any, ...], str] = {}
    for node in nodes:
        times = [((node.get("normalized") or {}).get(w) or {}).get("t") for w in ("begin", "end")]
        identity = server_identity(node)
        if identity is None or not all(isinstance(t, (int, float)) for t in times):
            continue
        key = (identity, *times)
        if key in seen:
            raise NotMergeable(f"{seen[key]} and {node['name']} hold the same sessions (their server read at the "
                               "same instants): each would count its reads twice; give each run or part once")
        seen[key] = node["name"]


def refuse_other_workloads(inputs: list[tuple[str, dict[str, Any]]]) -> None:
    """Runs of different workloads are no one experiment: their total would be read as the first's."""
    first_name, first = inputs[0]
    reference = ((first.get("config") or {}).get("workload") or {})
    for name, doc in inputs[1:]:
        workload = (doc.get("config") or {}).get("workload") or {}
        differ = sorted(k for k in set(reference) | set(workload)
                        if k not in PER_HOST_OPTIONS and reference.get(k) != workload.get(k))
        if differ:
            shown = ", ".join(f"{k} {reference.get(k)!r} vs {workload.get(k)!r}" for k in differ[:3])
            more = f" and {len(differ) - 3} more" if len(differ) > 3 else ""
            raise NotMergeable(f"{first_name} and {name} ran different workloads ({shown}{more}): runs merge only "
                               "when every workload option but the sessions is the same")
