"""The verdict's rules on the run's conduct (pure): how it ended, whether its window opened and lasted, stalled
or saw its counters go back, who else worked on the server in it (other sessions, the engine's checkpoints and
background maintenance), and what the engine could not measure."""

from __future__ import annotations

from dbio.report import node_verdicts
from dbio.report.finding import Finding, found as _found
from dbio.result_records import Result
from dbio.stats import catalogue
from dbio.stats import figures as figure_math
from dbio.stats.catalogue import value
from dbio.stats.counters import get

MAINTENANCE_SHARE_LIMIT = 1.0  # % of the window's I/O requests; below, routine checks of the catalog are noise
OTHER_SESSIONS_SHARE_LIMIT = figure_math.OTHER_SESSIONS_SHARE_LIMIT_PCT  # % of the clients' I/O not dbio's
# A complete run given a run time (no work_loop) whose window lasted less than this share of it measured something
# else than the run asked: a few slices (seen: 0.014 s of 4 s, its window opened past the deadline) are no rate.
SHORT_WINDOW_SHARE = 0.5


def _window(r: Result) -> bool:
    return catalogue.measured(r.figures)


def status(r: Result) -> Finding | None:
    state = r.status
    if state == "complete":
        return None
    reason = r.status_reason or "no reason recorded"
    covers = "" if "the figures cover" in reason else "; the figures cover the part that ran"  # a lost run's says so
    return Finding("warning", "status", f"run {str(state).upper()}: {reason}{covers}")


def rate_not_held(r: Result) -> Finding | None:
    """--rate: the sessions did not keep their schedule (stats/rate.py's judgement): achieved fell short of asked, or
    the lag behind the intended starts kept growing. Said first: every latency of the window is then a queue's."""
    f = r.figures
    if value(f, "rate_held") is not False:
        return None
    asked, achieved = value(f, "rate_asked_per_s"), value(f, "rate_achieved_per_s")
    behind = get(f, "rate", "behind")
    where = "" if not isinstance(behind, dict) else \
        f"; it fell behind from +{behind['from_s']:.0f} s to +{behind['to_s']:.0f} s of the window"
    first, last = value(f, "schedule_lag_first_us"), value(f, "schedule_lag_last_us")
    growth = "" if first is None or last is None else \
        f", the schedule's lag going from {_lag(first)} to {_lag(last)}"
    p99 = value(f, "intended_p99_us")
    queue = "" if p99 is None else f"; p99 from the intended start {_lag(p99)}"
    served, carried = get(f, "rate", "served_pct"), get(f, "rate", "due_before_window")
    own = "" if not carried or served is None else \
        f", the window's own arrivals {served:.1f}% ({carried:,} statements were the warm-up's queue)"
    return _found("warning", "rate_not_held",
                  f"rate not held: asked {asked:,.0f} statements/s, achieved {achieved:,.0f}/s "
                  f"({100 * achieved / asked:.1f}%{own}){where}{growth}{queue}: the sessions could not start "
                  "statements as fast as asked, and the latencies from the intended start hold the queue; "
                  "lower --rate, or read the capacity off a sweep over rates",
                  "rate_achieved_pct", value(f, "rate_achieved_pct"))


def _lag(us: float) -> str:
    return f"{us / 1e6:.2f} s" if us >= 100_000 else f"{us / 1000:.1f} ms" if us >= 1000 else f"{us:.0f} us"


def stalled(r: Result) -> Finding | None:
    """The window holds stretches in which nothing was measured or nothing moved (stats/stalls.py, the live
    view's judgement too): its averages include them. The status stays complete (the window ran to its end);
    this says when and how long."""
    stalls = [s for s in r.stalls if all(isinstance(s.get(k), (int, float)) for k in ("offset", "seconds"))]
    if not _window(r) or not stalls:
        return None
    total = sum(s["seconds"] for s in stalls)
    window = value(r.figures, "window_seconds")
    where = ", ".join(f"at +{s['offset']:.0f} s for {s['seconds']:.0f} s" for s in stalls)
    share = 100 * total / window
    return Finding("warning", "stalled", f"the window stalled {where} ({share:.0f}% of the window): no sample "
                                         "could be taken, or no statement finished and nothing showed the "
                                         "sessions working (the engine's counters or, with a statement in "
                                         "progress, their CPU and the devices); the window's averages include it",
                   "stalls.seconds", total)


def counters_reset(r: Result) -> Finding | None:
    """An engine counter went back inside the window (run/assemble, stats/resets.py): its statistics were reset or
    its server restarted. What it counted in the window is unknown, so are the figures built on it (absent)."""
    resets = [x for x in r.counter_resets if isinstance(x.get("counter"), str)]
    if not resets:
        return None
    several = len(r.nodes) > 1
    told = []
    for x in resets[:3]:
        where = f" of {x['node']}" if several and isinstance(x.get("node"), str) else ""
        when = f" at +{x['since_start']:.1f} s" if isinstance(x.get("since_start"), (int, float)) else ""
        values = f" ({x['before']:,.0f} to {x['after']:,.0f})" \
            if all(isinstance(x.get(k), (int, float)) for k in ("before", "after")) else ""
        told.append(f"{x['counter']}{where}{when}{values}")
    more = f" and {len(resets) - 3} more" if len(resets) > 3 else ""
    return Finding("invalid", "counter_reset",
                   f"the engine's counters went back inside the window: {'; '.join(told)}{more}: its statistics were "
                   "reset or its server restarted, so the figures built on them are absent; run again without "
                   "resetting statistics during the run", "counter_resets", len(resets))


def short_window(r: Result) -> Finding | None:
    """A complete run whose measured window lasted far less than the run time it was given (the configuration's
    workload.run_time, when no work_loop ends it earlier on purpose): why, when the result tells."""
    asked, window = r.config.run_time, value(r.figures, "window_seconds")
    if r.status != "complete" or r.config.work_loop or not _window(r) \
            or not isinstance(asked, (int, float)) or asked <= 0 or not isinstance(window, (int, float)) \
            or window >= SHORT_WINDOW_SHARE * asked:
        return None
    why = []
    opened = next((e.since_start for e in r.events if e.kind == "window_open"), None)
    warmup = r.config.warmup
    if isinstance(opened, (int, float)) and isinstance(warmup, (int, float)) and opened > warmup + asked / 2:
        why.append(f"it opened +{opened:.1f} s after the start, not after the {warmup:g} s warm-up")
    for node in r.nodes:
        if node.stopped:
            why.append(node_verdicts.stopped_briefly(node, r.config.warmup))
    told = f": {'; '.join(why)}" if why else ""
    return _found("invalid", "short_window", f"the measured window lasted {window:.2f} s of the {asked:g} s asked"
                                             f"{told}; its figures are no rate over the run asked: run again",
                  "window_seconds", window)


def no_window(r: Result) -> Finding | None:
    if _window(r):
        return None
    return Finding("invalid", "no_window", "no measured window: nothing was measured")


def other_sessions(r: Result) -> Finding | None:
    """Client sessions that are not dbio's worked on the server during the window."""
    if not _window(r):
        return None
    f = r.figures
    measured = [row for row in r.series if row.get("phase") == "measured"]
    active = [row for row in measured if row.get("other_sessions_active")]
    shares = {k: value(f, f"other_{k}_share_pct") for k in ("read", "write")}
    worst = max((v for v in shares.values() if v is not None), default=None)
    if not active and not worst:
        return None
    # a server's NULL (a connection still authenticating) is in results written before names were made safe
    names = sorted({n if isinstance(n, str) else "(no name yet)" for row in active
                    for n in row.get("other_session_names") or []})
    who = (f"{max(row['other_sessions_active'] for row in active):.0f} other session(s)"
           + (f" ({', '.join(names[:5])})" if names else "")
           + f" active in {len(active)} of {len(measured)} intervals") if active else "other sessions"
    if worst is None:
        return Finding("warning", "other_sessions", f"{who} of the window: they shared the server and its storage "
                                                    "(their share of the I/O is measured from PostgreSQL 18 on)")
    share = ", ".join(f"{v:.1f}% of the client sessions' {k}s" for k, v in shares.items() if v)
    level = "warning" if worst >= OTHER_SESSIONS_SHARE_LIMIT else "info"
    part = r.part
    if part:  # the run's other parts share the server by design: dbio merge counts each read once
        return _found("info", "other_sessions", f"{who} did {share or 'no I/O'} in the window, this run's other "
                      f"parts among them (part {part.get('index')} of {part.get('of')}): the server's figures "
                      "include their I/O; dbio merge of the parts counts each read once", "other_read_share_pct",
                      shares["read"])
    return _found(level, "other_sessions", f"{who} did {share or 'no I/O'} in the window: the engine's figures "
                                           "include their I/O", "other_read_share_pct", shares["read"])


def checkpoint_in_window(r: Result) -> Finding | None:
    norm = r.normalized
    begin, end = get(norm, "begin", "checkpoints") or {}, get(norm, "end", "checkpoints") or {}
    if not _window(r) or not begin or not end:
        return None
    done = (end.get("done") or 0) - (begin.get("done") or 0)
    if done <= 0:
        return None
    wrote = ""
    if end.get("buffers_written") is not None and begin.get("buffers_written") is not None:
        wrote = f" and wrote {end['buffers_written'] - begin['buffers_written']:,.0f} buffers"
    return Finding("warning", "checkpoint", f"{done:.0f} checkpoint(s) ran inside the window{wrote}: writes and "
                                            "latency include them", "checkpoints.done", done)


def maintenance_in_window(r: Result) -> Finding | None:
    """The engine's background maintenance (the process kind its capabilities name) did I/O."""
    process, name = r.caps.maintenance_process, r.caps.maintenance_name or "background maintenance"
    work = catalogue.by_backend(r.figures).get(process) if process else None
    if not _window(r) or not work:
        return None
    requests = sum(catalogue.member(catalogue.BACKEND_FIGURES, figure_name).value(work) or 0
                   for figure_name in ("read_requests_per_s", "write_requests_per_s"))
    if requests <= 0:
        return None
    total = value(r.figures, "total_requests_per_s") or 0
    share = 100.0 * requests / total if total else 100.0
    ref = f"io_profile.by_backend.{process}"
    if share < MAINTENANCE_SHARE_LIMIT:
        return Finding("info", "maintenance", f"{name} did {requests:,.1f} I/O requests/s inside the window, "
                       f"{share:.2g}% of all: too little to matter", ref, requests)
    return Finding("warning", "maintenance", f"{name} worked inside the window ({requests:,.1f} I/O requests/s, "
                   f"{share:.1f}% of all I/O requests)", ref, requests)


def not_measured(given: Result) -> list[dict[str, str]]:
    """The figures the engine could not give on this server, each with why (its capabilities say)."""
    return [{"figure": str(m.get("figure")), "why": str(m.get("why"))} for m in given.caps.missing]


def unavailable(r: Result) -> Finding | None:
    missing = not_measured(r)
    if not missing:
        return None
    names = "; ".join(f"{m['figure']} ({m['why']})" for m in missing)
    return Finding("info", "unavailable", f"not measured: {names}")


def run_events(r: Result) -> list[Finding]:
    """What the run's events say the verdict must: a cancelled or failed session, readings refused, writes left
    pending, a part late or missing (dbio merge)."""
    out: list[Finding] = []
    for event in r.events:
        if event.kind in ("cancelled", "session_failed", "readings_refused"):
            out.append(Finding("warning", event.kind, str(event.message)))
        if event.kind == "pending_writes" and not event.finished:  # written out before: nothing to say
            out.append(Finding("warning", "pending_writes", str(event.message)))
        if event.kind in ("parts", "parts_missing"):  # a part late, without a window or not given (dbio merge)
            out.append(Finding("warning", event.kind, str(event.message)))
    return out


def counting(r: Result) -> list[Finding]:
    """Runs that shared a server (dbio merge): where their counts and the server's disagreed."""
    out: list[Finding] = []
    for counted in r.counting:
        if counted.agree is False:
            diff = counted.difference_pct or 0.0
            out.append(Finding("warning", "counting", f"on {counted.description} the runs' sessions read "
                               f"{abs(diff):.1f}% {'less' if diff > 0 else 'more'} than the server: "
                               + ("other clients or the server's own processes shared it" if counted.others
                                  else "the sessions' count exceeds the server's (windows apart?)"),
                               "counting_difference_pct", counted.difference_pct))
    return out


# The headline's caveats of these rules' warnings (report/verdict_rules.py): a few words beside the figure.

def rate_not_held_caveat(r: Result, finding: Finding) -> str:
    asked, achieved = value(r.figures, "rate_asked_per_s"), value(r.figures, "rate_achieved_per_s")
    return f"rate not held: {achieved:,.0f} of the {asked:,.0f} statements/s asked"


def status_caveat(r: Result, finding: Finding) -> str:
    return f"run {str(r.status).upper()}: the figures cover the part that ran"


def stalled_caveat(r: Result, finding: Finding) -> str:
    window = value(r.figures, "window_seconds")
    share = f" {100 * finding.value / window:.0f}% of its time" if finding.value is not None and window else ""
    return f"the window stalled{share}"


def other_sessions_caveat(r: Result, finding: Finding) -> str:
    share = value(r.figures, "other_read_share_pct")
    return f"other sessions did {share:.1f}% of the client reads" if share else "other sessions were active"


def checkpoint_caveat(r: Result, finding: Finding) -> str | None:
    return None if finding.value is None else f"{finding.value:.0f} checkpoint(s) in the window"


def maintenance_caveat(r: Result, finding: Finding) -> str:
    name = r.caps.maintenance_name or "background maintenance"
    return f"{name} did I/O in the window"


def readings_refused_caveat(r: Result, finding: Finding) -> str:
    return "readings refused: gaps in the series"


def parts_missing_caveat(r: Result, finding: Finding) -> str | None:
    """dbio cannot vouch for a merge of some parts as the run's: it says so."""
    if r.parts is None:
        return None
    missing = ", ".join(map(str, r.parts.missing))
    return f"part{'s' if len(r.parts.missing) > 1 else ''} {missing} of {r.parts.of} missing: not the whole run's"


# What the headline of an invalid result says instead of its figures (report/verdict_rules.py).

def counters_reset_instead(finding: Finding) -> str:
    return ("the engine's counters went back inside the window (statistics reset or server restarted): what they "
            "counted in it is unknown")


def short_window_instead(finding: Finding) -> str:
    return finding.message
