"""--rate's pure parts (rate_schedule.py, stats/rate.py): each session's share, the schedule's gaps, what is
refused, and the judgement of a rate held or not on recorded figures."""

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest

from dbio import rate_schedule
from dbio import result as results
from dbio.engines.base import SliceResult
from dbio.report import model, text, verdict
from dbio.run import assemble, result_figures
from dbio.run.sessions import Clock
from dbio.run.slice_totals import ALL_KINDS, KINDS, Tally
from dbio.stats import histogram, rate
from dbio.result_records import of


def test_each_session_takes_an_equal_share_of_its_part():
    assert rate_schedule.per_session(2000, 8) == 250
    assert rate_schedule.per_session(6000, 4, parts=3) == 500
    with pytest.raises(ValueError):
        rate_schedule.per_session(100, 0)


@pytest.mark.parametrize("asked, sessions, parts, says", [
    (0, 1, 1, "not a positive number"), (-3, 1, 1, "not a positive number"), (math.nan, 1, 1, "not a positive"),
    (math.inf, 1, 1, "not a positive"), (3, 4, 1, "below the 1/s"), (12, 4, 4, "in each of 4 parts"),
    (200_001, 2, 1, "above the 100,000/s one session's loop can start"),
])
def test_a_rate_no_session_can_keep_is_refused_in_one_line(asked, sessions, parts, says):
    why = rate_schedule.problem(asked, sessions, parts)
    assert why is not None and says in why and "\n" not in why


def test_a_rate_each_session_can_keep_is_taken():
    assert rate_schedule.problem(4, 4) is None and rate_schedule.problem(200_000, 2) is None


def test_poisson_gaps_average_one_over_the_rate_and_uniform_ones_are_equal():
    draws = random.Random(7)
    gaps = list(rate_schedule.gaps(500.0, "poisson", (draws.random() for _ in range(200_000))))
    assert np.mean(gaps) == pytest.approx(1 / 500, rel=0.01)
    assert np.std(gaps) == pytest.approx(1 / 500, rel=0.02)  # exponential: its deviation is its mean
    assert set(rate_schedule.gaps(400.0, "uniform", [0.1, 0.9, 0.5])) == {1 / 400}


def test_the_first_intended_start_is_a_gap_after_the_start_or_a_random_phase_of_one():
    assert rate_schedule.first_due(100.0, 10.0, "uniform", 0.5) == pytest.approx(100.05)
    assert rate_schedule.first_due(100.0, 10.0, "poisson", 1 - math.exp(-1)) == pytest.approx(100.1)


def _hist(values_us, bounds):
    counts = histogram.empty(bounds)
    for v in values_us:
        counts[sum(1 for b in bounds if v >= b)] += 1
    return {"counts": counts, "sum_us": float(sum(values_us)), "max_us": float(max(values_us))}


BOUNDS = histogram.bounds_us()
FIXTURES = Path(__file__).parent.parent / "fixtures"


def _derived(asked, statements, seconds, lag_us=50.0, schedule="uniform", late=None, limit=0.0, carried=None):
    hists = {"bounds_us": BOUNDS, "lag": _hist([lag_us] * statements, BOUNDS),
             "intended": _hist([lag_us + 100.0] * statements, BOUNDS)}
    totals = {"selects": statements, "updates": 0, "scans": 0, **({} if late is None else {"late": late}),
              **({} if carried is None else {"due_before_window": carried})}
    return rate.derive(asked, schedule, limit, totals, hists, seconds)


def test_a_shared_uniform_schedule_spaces_the_node_s_arrivals_equally_from_the_start():
    times = [rate_schedule.shared_arrival(100.0, 400, "uniform", k) for k in range(5)]
    assert times == pytest.approx([100.00125, 100.00375, 100.00625, 100.00875, 100.01125])


def test_a_shared_poisson_schedule_is_increasing_each_block_in_its_span_with_exponential_gaps():
    rng = random.Random(7)
    blocks = [[rng.random() for _ in range(rate_schedule.BLOCK)] for _ in range(40)]
    rate = 500.0
    times = [rate_schedule.shared_arrival(0.0, rate, "poisson", k, blocks[k // rate_schedule.BLOCK])
             for k in range(40 * rate_schedule.BLOCK)]
    gaps = np.diff(times)
    assert (gaps >= 0).all()
    span = rate_schedule.BLOCK / rate
    for b in (0, 17, 39):  # block b's arrivals lie in its own span, so blocks never overlap
        mine = times[b * rate_schedule.BLOCK:(b + 1) * rate_schedule.BLOCK]
        assert b * span <= min(mine) and max(mine) < (b + 1) * span
    # spacing of a Poisson process: mean 1/rate, and an exponential's standard deviation equal to its mean
    assert gaps.mean() == pytest.approx(1 / rate, rel=0.01)
    assert gaps.std() == pytest.approx(1 / rate, rel=0.05)
    # the count in quarter-second windows varies as a Poisson count does (variance near its mean; a block fixes its own)
    counts = np.histogram(times, bins=np.arange(0, 80, 0.25))[0]
    assert counts.var() == pytest.approx(counts.mean(), rel=0.35)


def test_a_shared_poisson_arrival_needs_its_block_s_points():
    with pytest.raises(ValueError):
        rate_schedule.shared_arrival(0.0, 10, "poisson", 3)


def test_a_window_without_a_rate_or_without_the_schedule_s_histograms_has_no_rate_figures():
    assert rate.derive(None, "poisson", 0, {"selects": 10}, {"bounds_us": BOUNDS}, 1.0) is None
    assert rate.derive(100.0, "poisson", 0, {"selects": 10}, {"bounds_us": BOUNDS}, 1.0) is None


def test_achieved_within_one_percent_with_a_bounded_lag_is_held():
    r = rate.judge(_derived(1000.0, 9950, 10.0), [(2, 40.0), (3, 60.0), (4, 55.0)], 1, 1)
    assert r["achieved_per_s"] == 995 and r["achieved_pct"] == pytest.approx(99.5)
    assert r["held"] is True and r["behind"] is None
    assert (r["lag_first_us"], r["lag_last_us"]) == (40.0, 55.0)
    assert r["intended_p50_us"] > r["lag_p50_us"]


def test_a_rate_is_achieved_over_the_span_its_statements_were_scheduled_in_not_the_readings_span():
    # a 4 s window read 0.05 s late at its end (every session drained first): 800 statements of 200/s are held
    clock = Clock(start=100.0, window_open=100.0, deadline=104.0)
    span = result_figures.scheduled_seconds(clock, 100.0, 104.05)
    assert span == pytest.approx(4.0)
    r = rate.judge(_derived(200.0, 800, span), [(2, 40.0), (3, 60.0)], 0, 1)
    assert r["seconds"] == pytest.approx(4.0) and r["achieved_pct"] == pytest.approx(100) and r["held"] is True
    assert rate.judge(_derived(200.0, 800, 4.05), [(2, 40.0)], 0, 1)["held"] is False  # the readings' span: short
    # with a warm-up, from the planned opening (the sessions' first measured slice), not the begin reading's time
    warmed = Clock(start=100.0, window_open=102.0, deadline=106.0, warmup=2.0)
    assert result_figures.scheduled_seconds(warmed, 102.03, 106.04) == pytest.approx(4.0)
    # a stop before the deadline: to the window's end; a work loop (no deadline) or no window: none
    assert result_figures.scheduled_seconds(warmed, 102.03, 104.5) == pytest.approx(2.5)
    assert result_figures.scheduled_seconds(Clock(start=100.0, window_open=100.0), 100.0, 104.0) is None
    assert result_figures.scheduled_seconds(clock, None, None) is None


def test_a_begin_reading_taken_late_leaves_the_scheduled_span_whole_and_a_lost_node_cuts_it():
    # seen in CI: the begin reading 0.05 s after the planned opening, the end one 0.038 s after the deadline
    warmed = Clock(start=100.0, window_open=102.0, deadline=106.0, warmup=2.0)
    window = {"seconds": 106.038 - 102.05,
              "scheduled_seconds": result_figures.scheduled_seconds(warmed, 102.05, 106.038)}
    assert window["seconds"] < 4.0 and window["scheduled_seconds"] == pytest.approx(4.0)
    # a node lost 1.5 s into the window: its figures, and its statements' span, end at its last reading
    cut = assemble.lost_window(window, 102.05, 103.55)
    assert cut["seconds"] == pytest.approx(1.5) and cut["scheduled_seconds"] == pytest.approx(1.5)
    assert assemble.lost_window({"seconds": 4.0}, 102.0, 103.0)["scheduled_seconds"] is None  # a closed loop


def test_the_warm_up_s_queue_served_in_the_window_is_work_but_not_the_window_s_rate():
    # seen in CI: the loop 0.115 s behind as the window opened, 23 statements due in the warm-up started in the
    # window (823 of 200/s over 4 s): without them the rate is the window's and held, not 2.9% above it
    over = rate.judge(_derived(200.0, 823, 4.0), [(2, 40.0)], 1, 1)
    assert over["achieved_pct"] == pytest.approx(102.875) and over["held"] is False
    kept = rate.judge(_derived(200.0, 823, 4.0, carried=23), [(2, 40.0)], 1, 1)
    assert kept["served_pct"] == pytest.approx(100.0) and kept["held"] is True
    assert kept["achieved_per_s"] == pytest.approx(205.75) and kept["due_before_window"] == 23  # the work done
    # a loop far behind: nearly all it served was the warm-up's queue, its throughput no rate held
    behind = rate.judge(_derived(90000.0, 20000, 4.0, carried=19990), [(2, 40.0)], 1, 1)
    assert behind["achieved_per_s"] == 5000 and behind["served_pct"] < 1 and behind["held"] is False
    assert _derived(200.0, 800, 4.0)["due_before_window"] == 0  # an older result's totals: none recorded


def test_achieved_short_of_asked_by_more_than_one_percent_is_not_held():
    r = rate.judge(_derived(1000.0, 9800, 10.0), [(2, 40.0), (3, 60.0)], 1, 1)
    assert r["held"] is False and r["behind"] is None


def test_a_poisson_count_of_a_short_window_may_miss_by_chance_but_not_by_more():
    # 1,200 expected: its standard deviation is 35 (2.9%); three of them are allowed, no more
    assert rate.tolerance(1200, "poisson") == pytest.approx(3 * math.sqrt(1200) / 1200)
    assert rate.tolerance(1_000_000, "poisson") == rate.ACHIEVED_WITHIN
    assert rate.tolerance(1200, "uniform") == rate.ACHIEVED_WITHIN
    assert rate.judge(_derived(300.0, 1150, 4.0, schedule="poisson"), [(2, 50.0)], 1, 1)["held"] is True
    assert rate.judge(_derived(300.0, 1050, 4.0, schedule="poisson"), [(2, 50.0)], 1, 1)["held"] is False


def test_a_lag_that_grows_past_the_bound_is_not_held_and_says_from_when():
    # warm-up 10 s, intervals of 5 s: the window's intervals end at 15, 20, 25, 30
    lags = [(15, 200.0), (20, 150_000.0), (25, 400_000.0), (30, 900_000.0)]
    r = rate.judge(_derived(1000.0, 20_000, 20.0), lags, 10, 5)
    assert r["held"] is False
    assert r["behind"] == {"from_s": 5.0, "to_s": 20.0}
    assert r["lag_last_us"] == 900_000.0


def test_late_statements_are_counted_only_with_a_limit():
    assert _derived(100.0, 400, 4.0, late=40, limit=1000.0)["late_pct"] == 10.0
    assert _derived(100.0, 400, 4.0, late=40)["late"] is None


def test_interval_lags_are_the_window_s_intervals_mean_lag():
    per = {1: {"lag": {"count": 10, "sum_us": 1000.0}}, 2: {"lag": {"count": 4, "sum_us": 800.0}},
           3: {"select": {"count": 3}}, 4: {"lag": {"count": 2, "sum_us": 10.0}}}
    assert rate.interval_lags(per, warmup=1) == [(2, 200.0), (4, 5.0)]


def _slice(kinds: int, n: int, late: int = 0, carried: int = 0, rounding: float = 0.0) -> SliceResult:
    hist = np.zeros((kinds, 4), dtype=np.int64)
    hist[0, 1] = n
    if kinds > len(KINDS):
        hist[4, 2] = hist[5, 1] = n
    return SliceResult(iterations=n, selects=n, updates=0, scans=0, rows=8 * n, think_seconds=0.0,
                       sum_us=[10.0 * n, 0, 0, 0] + ([30.0 * n, 20.0 * n] if kinds > 4 else []),
                       max_us=[10.0, 0, 0, 0] + ([30.0, 20.0] if kinds > 4 else []), hist=hist, slice_end=1.0,
                       done=False, late=late, due_before_window=carried, wait_rounding_us=rounding)


def test_a_tally_keeps_the_schedule_s_kinds_only_when_the_loop_had_a_rate():
    closed = Tally(4)
    closed.add(_slice(4, 5))
    assert set(closed.histograms([1.0, 2.0, 3.0])) == {"bounds_us", *KINDS} and "late" not in closed.counts()
    assert "intended" not in closed.sparse()
    scheduled = Tally(4)
    scheduled.add(_slice(6, 5, late=2, carried=4))
    scheduled.add(_slice(6, 3, late=1))
    hists = scheduled.histograms([1.0, 2.0, 3.0])
    assert set(hists) == {"bounds_us", *ALL_KINDS}
    assert hists["intended"]["counts"] == [0, 0, 8, 0] and hists["lag"]["sum_us"] == 160.0
    assert scheduled.counts()["late"] == 3
    again = Tally.from_sparse(scheduled.sparse(), 4)
    assert again.histograms([1.0, 2.0, 3.0]) == hists and again.late == 3 and again.due_before_window == 4
    scheduled.remove(_slice(6, 3, late=1))
    assert scheduled.counts()["due_before_window"] == 4 and "due_before_window" not in closed.counts()
    assert scheduled.counts()["late"] == 2 and scheduled.histograms([1.0, 2.0, 3.0])["intended"]["counts"][2] == 5


def _recorded_with(rate_figures):
    doc = results.completed(json.loads((FIXTURES / "result_complete.json").read_text()))
    doc["figures"]["rate"] = rate_figures
    doc["config"]["workload"].update(rate=1000, rate_schedule="poisson")
    return doc


def test_a_rate_not_held_is_the_verdict_s_first_warning_and_qualifies_the_headline():
    lags = [(40, 2_000.0), (45, 300_000.0), (50, 900_000.0)]
    judged = rate.judge(_derived(1000.0, 20_000, 40.0, schedule="poisson"), lags, 30, 5)
    doc = _recorded_with(judged)
    warnings = [f for f in verdict.findings(of(doc)) if f.level == "warning"]
    assert warnings[0].code == "rate_not_held"
    assert warnings[0].message.startswith("rate not held: asked 1,000 statements/s, achieved 500/s (50.0%); it fell "
                                          "behind from +10 s to +20 s of the window, the schedule's lag going from "
                                          "2.0 ms to 0.90 s")
    assert "(rate not held: 500 of the 1,000 statements/s asked" in verdict.headline(of(doc))
    assert "rate 1,000 statements/s (poisson)" in text.render(model.build(of(doc)))


def test_a_loop_behind_as_the_window_opened_says_its_warm_up_queue_in_the_verdict_and_the_rate_table():
    judged = rate.judge(_derived(1000.0, 20_000, 40.0, carried=2_000), [(40, 900_000.0)], 30, 5)
    doc = _recorded_with(judged)
    warning = next(f for f in verdict.findings(of(doc)) if f.code == "rate_not_held")
    assert "achieved 500/s (50.0%, the window's own arrivals 45.0% (2,000 statements were the warm-up's queue))" \
        in warning.message
    report = text.render(model.build(of(doc)))
    assert "2,000 statements due in the warm-up started in the window" in report and "45.0% of the rate" in report


def test_the_loop_s_own_wait_rounding_is_a_mean_per_statement_said_beside_the_latency_from_the_intended_start():
    hists = {"bounds_us": BOUNDS, "lag": _hist([50.0] * 400, BOUNDS), "intended": _hist([150.0] * 400, BOUNDS)}
    totals = {"selects": 400, "updates": 0, "scans": 0, "late": 0, "due_before_window": 0,
              "wait_rounding_us": 200_000.0}
    derived = rate.derive(100.0, "poisson", 0, totals, hists, 4.0)
    assert derived["wait_rounding_mean_us"] == pytest.approx(500.0)
    report = text.render(model.build(of(_recorded_with(rate.judge(derived, [(40, 60.0)], 30, 5)))))
    assert "rounded up to whole milliseconds by the engine's timer (PostgreSQL's pg_sleep), 500 us a statement" in \
        " ".join(report.split())
    assert _derived(100.0, 400, 4.0)["wait_rounding_mean_us"] is None  # an older result, or MariaDB's SLEEP: nothing
    closed, scheduled = Tally(4), Tally(4)
    closed.add(_slice(4, 5))
    scheduled.add(_slice(6, 5, rounding=1_500.0))
    scheduled.merge(Tally.from_sparse(scheduled.sparse(), 4))
    assert scheduled.counts()["wait_rounding_us"] == 3_000.0 and "wait_rounding_us" not in closed.counts()


def test_a_rate_held_says_nothing_in_the_verdict_and_shows_its_tables():
    doc = _recorded_with(rate.judge(_derived(1000.0, 40_000, 40.0, schedule="poisson"), [(40, 60.0)], 30, 5))
    assert "rate_not_held" not in [f.code for f in verdict.findings(of(doc))]
    report = text.render(model.build(of(doc)))
    assert "Latency from the intended start" in report and "Rate (poisson schedule)" in report


def test_a_sweep_varies_the_rate_as_a_run_knob():
    from dbio.sweep import plan

    varied = plan.parse_vary("rate=2000,4000,8000")
    assert (varied.key, varied.values, varied.restarts, varied.layout) == ("rate", ("2000", "4000", "8000"), False,
                                                                           False)
    assert plan.ABBREVIATIONS["rate"] == "rate"


def test_the_live_line_says_the_rate_achieved_of_the_rate_asked_and_the_schedule_s_lag():
    from dbio.stats import live

    prev = {"t": 10.0}
    cur = {"t": 11.0, "statements": {"select": {"count": 480, "sum_us": 4800.0, "max_us": 90.0, "hist": {"3": 480}},
                                     "lag": {"count": 480, "sum_us": 480 * 1500.0, "max_us": 9000.0,
                                             "hist": {"40": 480}}}}
    figures = live.interval(prev, cur, BOUNDS)
    assert figures["rate_achieved_per_s"] == 480 and figures["schedule_lag_us"] == 1500
    assert "rate 480 of 500/s, lag 1.5 ms" in live.line({**figures, "rate_asked_per_s": 500.0})
    closed = live.interval(prev, {"t": 11.0, "statements": {"select": cur["statements"]["select"]}}, BOUNDS)
    assert "rate_achieved_per_s" not in closed and "rate" not in live.line(closed)
