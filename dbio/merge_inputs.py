"""What dbio merge refuses to add up (pure): the same run or part twice, parts out of their run or whose
server gave no identity, parts mixed with whole runs, one reading found twice (a copy under whatever run id,
part or identity, a merged result's run again) or one server under two identities, other workloads. Each is
refused in one line (NotMergeable): merged, it would count reads twice or read as another run's total."""

from __future__ import annotations

from typing import Any

from dbio import merge_readings as readings
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


def refuse_same_readings(nodes: list[dict[str, Any]], pids: dict[str, frozenset[int]]) -> None:
    """No reading counts twice (merge_readings: the evidence). Two nodes read one server when they name its
    identity or when their readings of it agree, whatever identity either names; on it, readings at the same
    instants or of the same sessions (pids: each node's sessions' process ids) are one reading found twice,
    whose sessions, statements and latencies would count twice; and one server under two identities would
    have its counters counted twice. Parts of one run on one server read it at instants of their own, each
    with its own sessions: they pass."""
    found = [readings.Readings.of(node, server_identity(node), pids.get(node["name"], frozenset())) for node in nodes]
    for i, j in readings.candidates(found):
        a, b = found[i], found[j]
        same_identity = a.identity is not None and a.identity == b.identity
        alike = [] if same_identity else readings.alike_at(a, b)
        if not same_identity and not alike:
            continue  # two servers, as far as anything tells
        copy = ("their server read at the same instants" if readings.same_instants(a, b)
                else "their sessions are the same processes of one server" if readings.same_sessions(a, b) else None)
        if copy:
            raise NotMergeable(f"{a.name} and {b.name} hold the same sessions ({copy}): each would count its reads "
                               "twice; give each run or part once")
        if not same_identity:
            named = (f"{b.name if b.identity is None else a.name}'s result names no identity for it"
                     if None in (a.identity, b.identity) else "their results name two identities for it")
            raise NotMergeable(f"{a.name} and {b.name} read one server (their counters at the window's {alike[0]} "
                               f"agree, as two servers' never do), but {named}: its counters would count twice; "
                               "merge the results as dbio wrote them")


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
