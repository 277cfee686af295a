"""sweep --rate: the rates' grammar (sweep/rates.py), the search over rates (sweep/rate_search.py), the knee over
rates (stats/knee.py) and the curve's report (report/rate_curve.py), on recorded step figures."""

from __future__ import annotations

import pytest

from dbio.errors import UsageError
from dbio.stats import knee
from dbio.stats.capacity import parse_slo
from dbio.sweep import plan, rate_search
from dbio.sweep.rate_search import RateProbe
from dbio.sweep_records import of as typed_sweep
from tests.result_builder import a_document

# A loop measured by hand (rate asked -> achieved, held, p99 from the intended start in us): held to 8,000/s, its
# p99 crossing 5 ms between 6,000 and 7,000; 9,000/s and more not held, the queue's seconds in the p99.
CURVE = {1000: (1_000, True, 900), 2000: (2_003, True, 1_000), 4000: (3_990, True, 1_900), 5000: (5_010, True, 3_000),
         5500: (5_480, True, 3_900), 6000: (6_020, True, 4_800), 6250: (6_240, True, 5_400),
         6500: (6_490, True, 6_100), 7000: (6_980, True, 7_500), 8000: (7_950, True, 9_800),
         9000: (8_100, False, 900_000), 10000: (8_110, False, 1_200_000), 12000: (8_120, False, 1_800_000),
         16000: (8_150, False, 2_500_000), 3000: (3_001, True, 1_400), 500: (500, True, 880), 250: (251, True, 870),
         125: (125, True, 860)}


def probe(rate: int, curve=CURVE, **kw) -> RateProbe:
    achieved, held, p99 = curve[rate]
    return RateProbe(f"{rate}", rate, float(achieved), held, float(p99), **kw)


def run(start=(1000,), slo="intended_p99<5ms", max_rate=10**9, curve=CURVE, **kw) -> tuple[list[int],
                                                                                             rate_search.RateDecision]:
    probes = [probe(r, curve) for r in start]
    while True:
        decision = rate_search.decide(probes, parse_slo(slo), max_rate, **kw)
        if decision.rate is None:
            return [p.rate for p in probes], decision
        assert decision.rate not in [p.rate for p in probes], "a rate is never probed twice"
        probes.append(probe(decision.rate, curve))


def test_the_rates_are_a_list_or_a_range_and_the_same_as_vary_rate():
    assert plan.rate_vary("1000..8000:8").values == tuple(str(r) for r in range(1000, 8001, 1000))
    assert plan.rate_vary("2000, 4000,8000") == plan.parse_vary("rate=2000,4000,8000")
    assert plan.rate_vary("100..300:3") == plan.parse_vary("rate=100..300:3") == plan.parse_vary("rate=100,200,300")
    assert plan.rate_vary("1000..2000:3").values == ("1000", "1500", "2000")


@pytest.mark.parametrize("text, says", [
    ("0,100", "--rate 0,100: 0:"), ("100,100", "a value is repeated"), ("nan", "--rate nan: nan"),
    ("300..100:3", "the range must rise"), ("100..200:1", "a range takes 2 to 64"), ("10..12:5", "repeat a whole"),
    ("100..200", "a range is LOW..HIGH:STEPS"), ("", "no values"),
])
def test_a_bad_rate_list_is_one_line_naming_the_flag(text, says):
    with pytest.raises(UsageError) as raised:
        plan.rate_vary(text)
    assert says in str(raised.value) and "\n" not in str(raised.value), str(raised.value)


def test_the_search_grows_while_held_within_then_bisects_to_within_the_resolution():
    order, decision = run()
    assert order == [1000, 2000, 4000, 8000, 6000, 7000, 6500]  # 6,000 and 6,500 within 10% of each other
    assert decision.reason == "crossed" and decision.best == "6000"
    assert decision.line == ("6,000 statements/s held (achieved 6,020/s) with p99 from the intended start 4.80 ms "
                             "(<= 5.00 ms); 6,500/s: p99 from the intended start 6.10 ms")


def test_a_rate_not_held_never_meets_the_objective_whatever_its_latency():
    # a generous objective: 16,000/s's p99 is within it but its rate was not held, so the answer stays below it
    order, decision = run(start=(2000, 8000, 16000), slo="intended_p99<10s", resolution=0.2)
    assert order == [2000, 8000, 16000, 12000, 10000, 9000]
    assert decision.best == "8000" and decision.line.endswith("9,000/s: rate not held, achieved 8,100/s")


def test_the_rates_given_run_first_and_max_rate_bounds_the_growth():
    order, decision = run(start=(1000, 2000), max_rate=3000, slo="intended_p99<10ms")
    assert order == [1000, 2000, 3000]
    assert decision.reason == "limit" and "still within the objective at 3,000/s" in decision.line


def test_no_rate_within_and_an_invalid_or_unmeasured_probe_stop_the_search():
    order, decision = run(start=(1000,), slo="intended_p99<100us", max_probes=4)
    assert order == [1000, 500, 250, 125] and decision.reason == "limit" and decision.best is None
    invalid = rate_search.decide([probe(1000, valid=False, why="a cache")], parse_slo("intended_p99<5ms"), 10**9)
    assert invalid.reason == "invalid" and "not a storage result (a cache)" in invalid.line
    absent = rate_search.decide([RateProbe("a", 1000, 1000.0, True, None, why="no rate")],
                                parse_slo("intended_p99<5ms"), 10**9)
    assert absent.reason == "absent" and absent.rate is None


def test_the_knee_over_rates_is_where_the_rate_asked_stops_being_achieved():
    points = [knee.Point(r, CURVE[r][0], CURVE[r][2]) for r in (1000, 2000, 4000, 8000, 16000)]
    found = knee.find_over_rates(points)
    assert found is not None and (found.after.sessions, found.next.sessions) == (8000, 16000)
    assert found.statement(what="the rate achieved", latency="p99", read_latency=False, beyond="8,000/s asked") == \
        "beyond 8,000/s asked, the rate achieved +3% while p99 +25410%: queueing"
    # every rate asked achieved: no knee, however the latency rose; the sessions' knee would see one at 4000->5000
    held = [knee.Point(r, CURVE[r][0], CURVE[r][2]) for r in (4000, 5000, 5500)]
    assert knee.find_over_rates(held) is None


def _step_doc(asked: int, **rate) -> dict:
    achieved, held, p99 = CURVE[asked]
    return a_document(figures__rate={"asked_per_s": asked, "achieved_per_s": achieved, "held": held,
                                     "achieved_pct": 100 * achieved / asked, "intended_p50_us": p99 / 3,
                                     "intended_p99_us": p99, "lag_p99_us": p99 / 2, **rate},
                      figures__latency__statements__select__p99_us=700.0)


def _rate_sweep(rates=(2000, 8000, 16000), search=None) -> tuple[dict, dict]:
    steps = [{"index": i + 1, "name": f"{i + 1:02d}-rate{r}", "status": "complete", "values": {"rate": str(r)}}
             for i, r in enumerate(rates)]
    doc = {"status": "complete", "base": {"schemas": 1}, "vary": [["rate", [str(r) for r in rates]]],
           "steps": steps, **({"search": search} if search else {})}
    return doc, {s["name"]: _step_doc(r) for s, r in zip(steps, rates)}


def test_the_report_traces_the_curve_against_the_rate_achieved_and_marks_the_rate_not_held():
    from dbio.report import charts, render_model, sweep_model

    doc, results = _rate_sweep()
    model = sweep_model.build(typed_sweep(doc), results)
    section = next(s for s in model["sections"] if s["id"] == "rate_curve")
    [tab] = section["tables"]
    assert tab["columns"][:5] == ["Step", "Asked/s", "Achieved/s", "Held", "p50 from intended"]
    assert [row[3] for row in tab["rows"]] == ["yes", "yes", "NOT HELD"]
    assert [row[6] for row in tab["rows"]] == [700.0] * 3  # the service p99: the SELECTs' own
    assert section["lines"][0].startswith("beyond 8,000 statements/s asked, the rate achieved +3% while the p99 "
                                          "from the intended start")
    assert section["lines"][1].startswith("rate not held: 03-rate16000, asked 16,000/s, achieved 8,150/s")
    assert section["lines"][0] in model["knees"]
    # the headline: the highest rate held, never the most reads/s of the step whose rate was not held
    assert model["headline_text"] == ("highest rate held 8,000 statements/s (achieved 7,950/s, 02-rate8000), p99 "
                                      "from the intended start 9.80 ms; 1 of 3 rates not held")
    # never a chart against the rate asked, which would join the step not held to the others as if it ran at it
    assert model["charts"] == [["sweep_rate_latency", "rate_curve"], ["sweep_latency_vs_iops", "curves"]]
    svg = charts.sweep_rate_latency(model["rate_curve"])
    assert svg and svg.startswith("<svg")
    text = render_model(model, "text")
    assert "Latency against the rate" in text and "NOT HELD" in text
    assert 'id="chart-sweep_rate_latency"' in render_model(model, "html")
    assert "NOT HELD" in render_model(model, "md")


def test_a_sweep_not_over_rates_has_no_rate_curve():
    from dbio.report import sweep_model

    doc, results = _rate_sweep()
    doc["vary"] = [["update_pct", ["0", "20"]]]
    for step, pct in zip(doc["steps"], ("0", "20", "0")):
        step["values"] = {"update_pct": pct}
    model = sweep_model.build(typed_sweep(doc), results)
    assert "rate_curve" not in model and all(s["id"] != "rate_curve" for s in model["sections"])
    assert model["charts"][0] == ["sweep_iops", "curves"]


def test_the_report_states_the_search_over_rates():
    from dbio.report import sweep_model

    line = "2,000 statements/s held (achieved 2,003/s) with p99 from the intended start 1.00 ms (<= 5.00 ms); ..."
    search = {"objective": "intended_p99<5ms", "axis": "rate", "max_rate": 10**9, "max_sessions": 4096,
              "resolution": 0.1, "gain": 0.05, "answers": [{"group": "", "line": line, "best": "01-rate2000",
                                                            "reason": "crossed"}]}
    doc, results = _rate_sweep(search=search)
    model = sweep_model.build(typed_sweep(doc), results)
    assert model["headline_text"] == line
    section = next(s for s in model["sections"] if s["id"] == "search")
    assert "probed 3 rates in this order: 2,000/s, 8,000/s, 16,000/s" in section["lines"]
    about = dict(next(s for s in model["sections"] if s["id"] == "sweep")["pairs"])
    assert "rates searched for the highest held within intended_p99<5ms" in about["Varied"]


def test_an_objective_over_rates_is_on_the_latency_from_the_intended_start():
    from dbio.commands.sweep import search_request

    rates = [plan.rate_vary("1000,2000")]
    asked = search_request("intended_p99<5ms", None, varies=rates, max_rate=50_000)
    assert asked["axis"] == "rate" and asked["max_rate"] == 50_000 and asked["limit_us"] == 5000
    for kwargs, words in ((dict(objective="select_p99<5ms"), "bounds the latency from the intended start"),
                          (dict(max_sessions=8), "no --max-sessions"), (dict(until_peak=True), "no --until-peak"),
                          (dict(repeat=2), "no --repeat"), (dict(objective=None, max_rate=5), "--max-rate bounds"),
                          (dict(varies=[], max_rate=5), "--max-rate bounds a search over rates")):
        args = {"objective": "intended_p99<5ms", "max_sessions": None, "varies": rates, **kwargs}
        with pytest.raises(UsageError, match=words.replace("-", r"\-")):
            search_request(args.pop("objective"), args.pop("max_sessions"), **args)
