"""sweep --objective's search (dbio/sweep/search.py) on recorded step figures."""

from __future__ import annotations

import pytest

from dbio.stats.capacity import parse_slo
from dbio.sweep import search
from dbio.sweep.search import Probe
from dbio.sweep_records import of as typed_sweep

# A device measured by hand (sessions -> reads/s, single-read p99 us): reads/s grow to 32 sessions,
# p99 crosses 2 ms between 24 and 28.
CURVE = {1: (6_100, 310), 2: (12_000, 330), 3: (17_800, 355), 4: (23_500, 380), 8: (41_000, 620), 12: (45_200, 980),
         14: (46_500, 1_200), 16: (47_100, 1_350), 20: (47_900, 1_600), 24: (48_200, 1_800), 26: (48_300, 1_950),
         28: (48_350, 2_150), 30: (48_380, 2_400), 32: (48_400, 2_600), 64: (48_500, 5_100)}


def probe(threads: int, curve=CURVE, schemas: int = 1, **kw) -> Probe:
    reads, p99 = curve[threads]
    return Probe(f"{threads:02d}-t{threads}", threads, threads * schemas, float(reads), float(p99), **kw)


def run(curve=CURVE, slo="read_p99<2ms", start=1, max_threads=4096, **kw) -> tuple[list[int], search.Decision]:
    """The whole search against a recorded curve: the counts probed in order, and the final decision."""
    probes = [probe(start, curve)]
    while True:
        decision = search.decide(probes, parse_slo(slo), max_threads, **kw)
        if decision.threads is None:
            return [p.threads for p in probes], decision
        assert decision.threads not in [p.threads for p in probes], "a count is never probed twice"
        probes.append(probe(decision.threads, curve))


def test_grows_then_bisects_to_within_the_resolution():
    order, decision = run()
    assert order == [1, 2, 4, 8, 16, 32, 24, 28, 26]
    assert decision.reason == "crossed" and decision.best == "26-t26"
    assert decision.line == ("48,300 reads/s at 26 sessions with single-read p99 1.95 ms (< 2.00 ms); "
                             "28 sessions: single-read p99 2.15 ms")


def test_adjacent_counts_without_a_resolution():
    order, decision = run(resolution=0.0, curve={**CURVE, 27: (48_320, 2_050)})
    assert order == [1, 2, 4, 8, 16, 32, 24, 28, 26, 27]
    assert decision.best == "26-t26" and "27 sessions: single-read p99 2.05 ms" in decision.line


def test_peak_within_the_objective_stops_growing():
    order, decision = run(slo="read_p99<10ms")
    assert order == [1, 2, 4, 8, 16, 32]  # 32 added less than 5% to 16's reads/s
    assert decision.reason == "peak" and decision.best == "32-t32"
    assert decision.line.startswith("48,400 reads/s at 32 sessions with single-read p99 2.60 ms (< 10.00 ms); "
                                    "32 sessions: 48,400 reads/s, less than 5% more")


def test_max_sessions_bounds_the_growth():
    order, decision = run(slo="read_p99<10ms", max_threads=12)
    assert order == [1, 2, 4, 8, 12]
    assert decision.reason == "limit" and decision.best == "12-t12" and "--max-sessions" in decision.line


def test_not_met_at_the_first_count():
    order, decision = run(slo="read_p99<300us")
    assert order == [1]
    assert decision.reason == "none" and decision.best is None
    assert decision.line == "no session count meets single-read p99 < 300 us: at 1 session it is 310 us"


def test_a_start_above_the_crossing_bisects_down():
    order, decision = run(start=8, slo="read_p99<350us")
    assert order == [8, 4, 2, 3]
    assert decision.best == "02-t2" and decision.line.endswith("3 sessions: single-read p99 355 us")


def test_an_invalid_step_stops_the_search_with_the_best_before_it():
    probes = [probe(1), probe(2), probe(4, valid=False, why="the data set fits in memory")]
    decision = search.decide(probes, parse_slo("read_p99<2ms"), 4096)
    assert decision.threads is None and decision.reason == "invalid" and decision.best == "02-t2"
    assert decision.line == ("12,000 reads/s at 2 sessions with single-read p99 330 us (< 2.00 ms); the search "
                             "stopped at 4 sessions: step 04-t4 is not a storage result (the data set fits in memory)")


def test_an_invalid_step_never_meets_the_objective_even_when_its_figure_does():
    probes = [probe(1, valid=False, why="cached")]
    decision = search.decide(probes, parse_slo("read_p99<2ms"), 4096)
    assert decision.best is None and decision.line.startswith("no probe met single-read p99 < 2.00 ms; the search "
                                                              "stopped at 1 sessions")


def test_an_absent_figure_stops_the_search_saying_why():
    probes = [probe(1), Probe("02-t2", 2, 2, 12_000.0, None, why="no read probe ran")]
    decision = search.decide(probes, parse_slo("read_p99<2ms"), 4096)
    assert decision.reason == "absent" and decision.best == "01-t1"
    assert decision.line.endswith("step 02-t2 did not measure the single-read p99 (no read probe ran)")


def test_sessions_over_several_schemas():
    probes = [probe(1, schemas=4), probe(2, schemas=4), probe(4, schemas=4)]
    decision = search.decide(probes, parse_slo("avg_read<10ms"), 4096)
    assert decision.threads == 8 and decision.reason == "grow"
    probes = [probe(1, schemas=4), probe(2, schemas=4)]
    decision = search.decide(probes, parse_slo("read_p99<320us"), 4096)
    assert decision.line.startswith("6,100 reads/s at 4 sessions") and decision.line.endswith(
        "8 sessions: single-read p99 330 us")


@pytest.mark.parametrize("text,label", [("read_p99<2ms", "single-read p99"), ("avg_read<500us", "avg physical read"),
                                        ("select_p99<5ms", "SELECT p99"), ("p99<5ms", "SELECT p99")])
def test_objective_names(text, label):
    assert parse_slo(text).label == label


def test_refused_in_one_line_before_anything_runs():
    from dbio.commands.sweep import search_request
    from dbio.errors import UsageError
    from dbio.sweep.plan import Vary

    assert search_request(None, None) is None
    asked = search_request(" read_p99<2ms ", 64)
    assert asked["objective"] == "read_p99<2ms" and asked["max_sessions"] == 64 and asked["answers"] == []
    for kwargs, words in (({"objective": "read_p99>2ms"}, "--objective: latency objective"),
                          ({"objective": "p98<2ms"}, "STAT<LIMIT"),
                          ({"objective": None, "max_sessions": 8}, "--max-sessions bounds"),
                          ({"repeat": 3}, "no --repeat"), ({"op": True}, "no --op"),
                          ({"until_peak": True}, "no --until-peak"), ({"sessions": "1,2"}, "no --sessions"),
                          ({"varies": [Vary("threads_per_schema", ("1", "2"))]}, "--vary threads_per_schema"),
                          ({"max_sessions": 0}, "at least 1 session")):
        args = {"objective": "read_p99<2ms", "max_sessions": None, **kwargs}
        with pytest.raises(UsageError, match=words.replace("-", r"\-")):
            search_request(args.pop("objective"), args.pop("max_sessions"), **args)
    assert search_request("avg_read<1ms", None, sessions="4", varies=[Vary("update_pct", ("0", "20"))])


def test_the_report_states_the_answer_first_and_the_probes_in_order():
    from dbio.report import sweep_model

    steps = [{"index": i + 1, "name": name, "status": "complete", "values": {"threads_per_schema": t},
              "headline": {"reads_per_s": r}} for i, (name, t, r) in
             enumerate([("01-t1", "1", 6100.0), ("02-t2", "2", 12000.0), ("03-t4", "4", 23500.0), ("04-t3", "3",
                                                                                                   17800.0)])]
    line = "17,800 reads/s at 3 sessions with single-read p99 355 us (< 360 us); 4 sessions: single-read p99 380 us"
    doc = {"status": "complete", "base": {"schemas": 1}, "vary": [], "steps": steps,
           "search": {"objective": "read_p99<360us", "max_sessions": 4096, "resolution": 0.1, "gain": 0.05,
                      "answers": [{"group": "", "line": line, "best": "04-t3", "reason": "crossed"}]}}
    model = sweep_model.build(typed_sweep(doc), {})
    assert model["headline_text"] == line
    assert sweep_model.summary_lines(model)[0] == f"complete: {line}"
    section = next(s for s in model["sections"] if s["id"] == "search")
    assert "probed 4 session counts in this order: 1, 2, 4, 3" in section["lines"]
    assert section["lines"][-1] == f"answer: {line}"
    assert model["curves"]["x"] == "sessions"
