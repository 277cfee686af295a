"""dbio merge of runs that shared one server (dbio/merge.py): the parts of one run (--part i/N), each
read counted once: the server's counters once per server identity, the sessions' own counts from
every part, the two checked against each other; parts given twice, of other runs or mixed with a
whole run refused; parts missing, late or without a window named."""

from __future__ import annotations

import copy
import itertools
import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from dbio import merge, result
from dbio.result_records import of

FIXTURES = Path(__file__).parent.parent / "fixtures"
BASE = json.loads((FIXTURES / "result_format2.json").read_text())
IDENTITY = "7340000000000000001:1795000000.1:5432"
RUN_IDS = itertools.count(1)


def _delta(node: dict, group: str) -> float:
    n = node["normalized"]
    return n["end"][group]["reads"] - n["begin"][group]["reads"]


def moved(doc: dict, onto: dict) -> dict:
    """doc's run as if it had run in onto's window (its times, its server's clock, moved by one delta): another
    host's run at the same start. Its counters stay as recorded."""
    doc = copy.deepcopy(doc)
    delta = (datetime.fromisoformat(onto["timeline"]["window_start"])
             - datetime.fromisoformat(doc["timeline"]["window_start"])).total_seconds()
    for key, value in doc["timeline"].items():
        if isinstance(value, str) and key in ("start", "window_open", "deadline", "window_start", "window_end"):
            doc["timeline"][key] = (datetime.fromisoformat(value) + timedelta(seconds=delta)).isoformat()
    for node in doc["nodes"]:
        for reading in node["normalized"].values():
            reading["t"] += delta
    return doc


# The fixture's workload recorded by another dbio on another instance (result format 1): another server's
# counters, in BASE's window.
OTHER_SERVER = moved(result.read(FIXTURES / "result_complete.json"), onto=BASE)


def part(index: int, share: float, *, of: int = 3, run: str = "run-abc", identity: str = IDENTITY,
         shift: float = 0.0, base: dict = BASE) -> dict:
    """A part's result: the fixture's run against the shared server, its sessions `share` of the server's reads
    (base=OTHER_SERVER: another server's run at the same start)."""
    doc = copy.deepcopy(base)
    doc["run_id"] = f"{next(RUN_IDS):x}"
    doc["part"] = {"index": index, "of": of, "run": run}
    for session in doc["sessions"]:  # its own backends: one server's at one time never share a process id
        session["pid"] += 1000 * index
    node = doc["nodes"][0]
    node["server"]["identity"] = identity
    n = node["normalized"]
    for reading in (n["begin"], n["end"]):  # each part read the server at instants of its own
        reading["t"] -= index * 1e-4
    if "sessions" in n["end"]:
        n["end"]["sessions"]["reads"] = n["begin"]["sessions"]["reads"] + share * _delta(node, "data")
    for key in ("window_start", "window_end"):
        t = datetime.fromisoformat(doc["timeline"][key]) + timedelta(seconds=shift)
        doc["timeline"][key] = t.isoformat()
    return doc


SERVER_READS_PER_S = _delta(BASE["nodes"][0], "data") / BASE["nodes"][0]["figures"]["window_seconds"]


def test_parts_of_one_server_count_its_reads_once_and_agree_with_it():
    doc = merge.merge([(f"p{i}", part(i, share)) for i, share in ((1, 0.33), (2, 0.33), (3, 0.335))], "m")
    # the server's reads once, not three times
    assert doc["figures"]["load_profile"]["physical_reads_per_s"] == pytest.approx(SERVER_READS_PER_S, rel=0.01)
    [counted] = doc["counting"]
    assert counted["nodes"] == ["p1", "p2", "p3"] and counted["counted_by"] == "p1"
    assert counted["own_reads_per_s"] == pytest.approx(0.995 * SERVER_READS_PER_S, rel=1e-6)
    assert counted["difference_pct"] == pytest.approx(0.5, abs=0.01)
    assert counted["agree"] is True and counted["others"] is False
    assert doc["parts"]["missing"] == [] and doc["parts"]["late"] == [] and doc["parts"]["incomplete"] == []
    assert any("they agree" in e["message"] for e in doc["events"])
    # the sessions' own counts add up in the total: what others did is what the server did besides them
    assert doc["figures"]["other_sessions"]["reads"] < 0.01 * _delta(BASE["nodes"][0], "client")


def test_a_server_that_read_more_than_the_parts_sessions_was_shared():
    doc = merge.merge([(f"p{i}", part(i, 0.2)) for i in (1, 2, 3)], "m")
    [counted] = doc["counting"]
    assert counted["agree"] is False and counted["others"] is True
    assert counted["difference_pct"] == pytest.approx(40.0, abs=0.01)
    assert any("other clients" in e["message"] for e in doc["events"])


def on_server(i: int) -> dict:
    """Part i on server i of two (each its identity): server 1's counters the fixture's, server 2's the other's."""
    return part(i, 1.0, identity=f"server-{i}", base=BASE if i == 1 else OTHER_SERVER)


def test_runs_on_distinct_servers_still_add_up():
    docs = [on_server(1), on_server(2)]
    doc = merge.merge([(f"h{i}", d) for i, d in enumerate(docs, 1)], "m")
    each = sum(n["figures"]["load_profile"]["physical_reads_per_s"] for n in doc["nodes"])
    assert doc["figures"]["load_profile"]["physical_reads_per_s"] == pytest.approx(each, rel=0.02)
    assert each > 1.5 * SERVER_READS_PER_S  # the two servers' reads, not one's
    assert "counting" not in doc


@pytest.mark.parametrize("inputs, why", [
    ([("a", part(1, 0.5)), ("b", part(1, 0.5))], "are both part 1/3 of run run-abc"),
    ([("a", part(1, 0.5)), ("b", part(2, 0.5, run="run-other"))], "parts of different runs"),
    ([("a", part(1, 0.5)), ("b", part(2, 0.5, of=4))], "parts of different runs"),
    ([("a", part(1, 0.5)), ("b", {k: v for k, v in part(2, 0.5).items() if k != "part"})], "is a whole run"),
])
def test_parts_twice_of_other_runs_or_with_a_whole_run_are_refused(inputs, why):
    with pytest.raises(merge.NotMergeable, match=why):
        merge.merge(inputs, "m")


def test_a_part_missing_late_or_without_a_window_is_named_and_the_others_stand():
    dead = part(3, 0.33)
    dead["status"], dead["status_reason"] = "failed", "the server refused its sessions"
    dead["timeline"]["window_start"] = dead["timeline"]["window_end"] = None
    doc = merge.merge([("p1", part(1, 0.33)), ("p2", part(2, 0.33, shift=1.5)), ("p3", dead)], "m")
    record = doc["parts"]
    assert [g["index"] for g in record["given"]] == [1, 2, 3] and record["missing"] == []
    assert [(late["name"], round(late["seconds"], 1)) for late in record["late"]] == [("p2", 1.5)]
    assert record["incomplete"] == [{"name": "p3", "status": "failed", "reason": "the server refused its sessions",
                                     "measured": False}]
    assert [n["name"] for n in doc["nodes"]] == ["p1", "p2"]
    messages = " ".join(e["message"] for e in doc["events"])
    assert "p3 is failed and measured no window" in messages and "p2 opened its window 1.5 s after" in messages
    two = merge.merge([("p1", part(1, 0.5)), ("p2", part(2, 0.5))], "m")
    assert two["parts"]["missing"] == [3]
    assert "part(s) 3 of 3 of run run-abc were not given" in " ".join(e["message"] for e in two["events"])


def test_the_report_names_the_parts_the_count_and_a_disagreement():
    from dbio import report, result

    agreed = merge.merge([(f"p{i}", part(i, 0.333)) for i in (1, 2)], "m")
    text = report.render(of(result.with_nodes(agreed)), "text")
    assert "1, 2 of 3 of run run-abc; not given: 3" in text and "Counted once" in text
    assert "part(s) 3 of 3 of run run-abc were not given" in text
    shared = merge.merge([(f"p{i}", part(i, 0.2)) for i in (1, 2, 3)], "m")
    text = report.render(of(result.with_nodes(shared)), "text")
    assert "read 40.0% less than the server: other clients" in text


def test_a_parts_own_report_says_its_other_parts_shared_the_server_as_agreed():
    from dbio.report import conduct_findings

    doc = part(1, 0.33)
    finding = conduct_findings.other_sessions(of(doc))
    assert finding is not None and finding.level == "info", finding
    assert "this run's other parts among them (part 1 of 3)" in finding.message
    whole = {k: v for k, v in doc.items() if k != "part"}
    assert "other parts" not in conduct_findings.other_sessions(of(whole)).message


def test_the_server_is_read_from_the_last_reading_at_each_end_of_the_window():
    """Each part flushes its own sessions' statistics before its readings; the others' reach the server's
    counters a little later: the last end reading holds every part's reads, an earlier one misses some."""
    early, late = part(1, 0.5), part(2, 0.5)
    n1, n2 = early["nodes"][0]["normalized"], late["nodes"][0]["normalized"]
    n2["begin"] = copy.deepcopy(n1["begin"])
    n2["end"] = copy.deepcopy(n1["end"])
    n2["end"]["t"] += 0.25
    n2["end"]["data"]["reads"] += 1000  # what part 1's end reading had not seen yet of part 2's sessions
    n2["end"]["sessions"]["reads"] = n1["end"]["sessions"]["reads"]
    doc = merge.merge([("p1", early), ("p2", late)], "m")
    [counted] = doc["counting"]
    assert counted["counted_by"] == "p1 to p2"  # begin readings at one instant: the first's
    seconds = n2["end"]["t"] - n1["begin"]["t"]
    expected = (n2["end"]["data"]["reads"] - n1["begin"]["data"]["reads"]) / seconds
    assert counted["server_reads_per_s"] == pytest.approx(expected, rel=1e-9)
    n1["begin"]["t"] -= 0.1  # part 2's begin reading is now the later one: the interval runs from it
    doc = merge.merge([("p1", early), ("p2", late)], "m")
    assert doc["counting"][0]["counted_by"] == "p2"
    n2["begin"]["t"] -= 0.2
    doc = merge.merge([("p1", early), ("p2", late)], "m")
    assert doc["counting"][0]["counted_by"] == "p1 to p2"


def test_parts_opened_together_compare_counts_whatever_their_readings_lateness_made_of_their_windows():
    """A busy host reads a part's end late: its window is longer by that, though its sessions stopped at the
    deadline like the others'. The counts over one interval still agree; rates over each window would not."""
    parts = [part(i, 1 / 3) for i in (1, 2, 3)]
    for doc in parts[1:]:
        doc["nodes"][0]["normalized"]["begin"] = copy.deepcopy(parts[0]["nodes"][0]["normalized"]["begin"])
    for doc in parts[1:]:
        n = doc["nodes"][0]
        n["normalized"]["end"]["t"] += 0.6  # read 0.6 s after its sessions stopped
        n["figures"]["window_seconds"] += 0.6
    doc = merge.merge([(f"p{i}", d) for i, d in enumerate(parts, 1)], "m")
    [counted] = doc["counting"]
    assert counted["compared"] == "counts"
    assert counted["difference_pct"] == pytest.approx(0.0, abs=0.01) and counted["agree"] is True
    # windows opened apart (a late part): its reads are outside the server's interval, rates compare instead
    late = part(2, 1 / 3, shift=2.0)
    late["nodes"][0]["normalized"]["begin"]["t"] += 2.0
    late["nodes"][0]["normalized"]["end"]["t"] += 2.0
    doc = merge.merge([("p1", part(1, 1 / 3)), ("p2", late), ("p3", part(3, 1 / 3))], "m")
    assert doc["counting"][0]["compared"] == "rates"


def test_a_part_cut_short_on_the_shared_server_is_named_and_the_server_counted_over_its_interval():
    """A part whose sessions died half way: its window is half as long. The parts of one run on one server
    still merge (the server's counters hold what its sessions did before), the part is named, and the
    total's rate is the server's count over the server's own interval, not over the parts' mean length."""
    parts = [part(i, 1 / 3) for i in (1, 2, 3)]
    cut = parts[2]
    start = datetime.fromisoformat(cut["timeline"]["window_start"])
    end = datetime.fromisoformat(cut["timeline"]["window_end"])
    cut["timeline"]["window_end"] = (start + (end - start) / 2).isoformat()
    cut["status"], cut["status_reason"] = "failed", "its sessions were terminated"
    doc = merge.merge([(f"p{i}", d) for i, d in enumerate(parts, 1)], "m")
    assert [s["name"] for s in doc["parts"]["short"]] == ["p3"]
    assert doc["figures"]["load_profile"]["physical_reads_per_s"] == pytest.approx(SERVER_READS_PER_S, rel=0.01)
    assert any("p3 measured" in e["message"] and "cut short" in e["message"] for e in doc["events"])
    # whole runs (not parts) of such different lengths are still refused
    wholes = [{k: v for k, v in d.items() if k != "part"} for d in parts]
    with pytest.raises(merge.NotMergeable, match="windows last"):
        merge.merge([(f"h{i}", d) for i, d in enumerate(wholes, 1)], "m")


def _cut(doc: dict, seconds: float) -> dict:
    start = datetime.fromisoformat(doc["timeline"]["window_start"])
    doc["timeline"]["window_end"] = (start + timedelta(seconds=seconds)).isoformat()
    return doc


def test_whole_runs_whose_windows_differ_by_a_late_reading_merge_and_a_cut_short_one_is_refused():
    """Whole runs of one --run-time: a busy host reading a 2 s window's end 0.1 s late (5% of it) still merges
    (seen refused in test_many_hosts under load); a window cut to half is refused, naming the run."""
    def whole(i: int) -> dict:
        return {k: v for k, v in on_server(i).items() if k != "part"}
    merge.merge([("h1", _cut(whole(1), 2.0)), ("h2", _cut(whole(2), 2.1))], "m")
    with pytest.raises(merge.NotMergeable, match="h2's was cut short"):
        merge.merge([("h1", _cut(whole(1), 5.0)), ("h2", _cut(whole(2), 2.5))], "m")


def test_the_parts_single_reads_add_up_as_histograms():
    """Each part's probe timed its own single reads: the merged distribution is their histograms added
    (issue 28: latency merged as histograms, never averaged percentiles)."""
    from dbio.engines.base import ProbeRead
    from dbio.run.read_probe import ProbeTally

    bounds = BASE["histograms"]["bounds_us"]

    def probe(values):
        tally = ProbeTally(len(bounds) + 1)
        for v in values:
            tally.add(ProbeRead(1, v), bounds)
        return {"rate_per_s": 25, "method": "EXPLAIN", **tally.to_dict()}

    fast, slow = part(1, 0.5), part(2, 0.5)
    fast["read_probe"] = {fast["nodes"][0]["name"]: probe([100.0] * 99)}
    slow["read_probe"] = {slow["nodes"][0]["name"]: probe([100.0] * 90 + [9000.0] * 10)}
    doc = merge.merge([("p1", fast), ("p2", slow)], "m")
    reads = doc["figures"]["latency"]["single_reads"]
    assert reads["count"] == 199 and reads["nodes"] == 2
    assert reads["p99_us"] > 5000.0  # the slow part's tail: 10 of 199 reads, beyond the 99th percentile's 2
    assert set(doc["read_probe"]) == {"p1", "p2"}


def test_one_part_alone_merges_naming_the_missing_ones():
    """A merge Job where only one pod wrote: dbio merge took two results or more, so it merged nothing and
    said nothing of the parts missing."""
    doc = merge.merge([("p2", part(2, 0.33))], "m")
    assert [g["index"] for g in doc["parts"]["given"]] == [2] and doc["parts"]["missing"] == [1, 3]
    assert doc["figures"]["window_seconds"] == pytest.approx(BASE["nodes"][0]["figures"]["window_seconds"], rel=0.01)
    assert [e["kind"] for e in doc["events"]] == ["merged", "parts_missing"]
    assert "part(s) 1, 3 of 3 of run run-abc were not given" in doc["events"][1]["message"]
    whole = {k: v for k, v in part(1, 0.5).items() if k != "part"}
    with pytest.raises(merge.NotMergeable, match="give at least two results"):
        merge.merge([("a", whole)], "m")  # a whole run alone is no merge
    dead = part(1, 0.5)
    dead["status"], dead["status_reason"] = "failed", "the server refused its sessions"
    dead["timeline"]["window_start"] = dead["timeline"]["window_end"] = None
    with pytest.raises(merge.NotMergeable, match="no result given measured a window .p1: the server refused"):
        merge.merge([("p1", dead)], "m")


@pytest.mark.parametrize("given", [(1,), (1, 2)])
def test_a_merge_with_parts_missing_marks_its_figure_as_not_the_whole_runs(given):
    """Its reads/s stood in the headline (and in a comparison, a history) as the run's, the missing parts
    named only at the end as "(also: parts)"."""
    from dbio import report, result
    from dbio.report import verdict

    doc = merge.merge([(f"p{i}", part(i, 0.33)) for i in given], "m")
    missing = [i for i in (1, 2, 3) if i not in given]
    mark = f"part{'s' if len(missing) > 1 else ''} {', '.join(map(str, missing))} of 3 missing: not the whole run's"
    by_figure, _ = verdict.headline_caveats(of(doc))
    assert mark in by_figure["reads_per_s"]
    assert mark in verdict.reads_caveats(of(doc))  # what a comparison or a sweep's table quotes beside it
    text = report.render(of(result.with_nodes(doc)), "text")
    assert f"not given: {', '.join(map(str, missing))}" in text
    whole = merge.merge([(f"p{i}", part(i, 0.33)) for i in (1, 2, 3)], "m")
    assert not any("missing" in c for c in verdict.headline_caveats(of(whole))[0].get("reads_per_s", []))


def _with_rate(doc: dict, asked: float) -> dict:
    """A part run with --rate: its share asked, its statements timed from their intended start (a lag of 50 us each:
    the schedule's two histogram kinds, as the loops give them)."""
    hists, totals = doc["histograms"], doc["totals"]
    statements = totals["selects"] + totals["updates"] + totals["scans"]
    for kind, us in (("lag", 50.0), ("intended", 150.0)):
        counts = [0] * (len(hists["bounds_us"]) + 1)
        counts[next(i for i, b in enumerate(hists["bounds_us"]) if b > us)] = statements
        hists[kind] = {"counts": counts, "sum_us": us * statements, "max_us": us}
    doc["figures"]["rate"] = {"asked_per_s": asked, "achieved_per_s": statements / doc["figures"]["window_seconds"]}
    doc["config"]["workload"].update(rate=int(3 * asked), rate_schedule="uniform")
    return doc


def test_the_parts_rates_asked_and_achieved_add_up_and_the_total_is_judged():
    parts = [(f"p{i}", _with_rate(part(i, 0.33), 1000.0)) for i in (1, 2, 3)]
    achieved = sum(doc["figures"]["rate"]["achieved_per_s"] for _, doc in parts)
    doc = merge.merge(parts, "m")
    rate = doc["figures"]["rate"]
    assert rate["asked_per_s"] == 3000.0
    assert rate["achieved_per_s"] == pytest.approx(achieved, rel=0.01)  # over the merged window's seconds
    assert rate["lag_p50_us"] <= 64 and rate["held"] is (abs(rate["achieved_pct"] - 100) <= 1)
    without = merge.merge([(f"p{i}", part(i, 0.33)) for i in (1, 2, 3)], "m")
    assert "rate" not in without["figures"]  # a closed loop's parts: no rate


def test_a_part_s_late_end_reading_does_not_lower_the_rate_achieved():
    # on a busy host one part read the server 0.3 s after the others: the server's interval (last begin to last end)
    # outlasts each part's window, and the parts' statements over it said 92% achieved where each part held its own
    parts = [(f"p{i}", _with_rate(part(i, 0.33), 1000.0)) for i in (1, 2, 3)]
    parts[2][1]["nodes"][0]["normalized"]["end"]["t"] += 0.3
    achieved = sum(doc["figures"]["rate"]["achieved_per_s"] for _, doc in parts)
    rate = merge.merge(parts, "m")["figures"]["rate"]
    assert rate["achieved_per_s"] == pytest.approx(achieved, rel=1e-9)
    assert rate["achieved_pct"] == pytest.approx(100.0 * achieved / 3000.0)
