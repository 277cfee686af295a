"""--rate on the embedded PostgreSQL 18: an open loop on a schedule in the loop itself, each statement's latency
from its intended start and its schedule lag as histograms, the rate asked against the rate achieved."""

import pytest

from dbio.stats import histogram
from tests.integration.conftest import SMALL, dbio, load_result, over, result_dir


def rate_run(instance, db, label, *extra):
    done = dbio("run", *instance.args(db, *over(SMALL, "--label", label, "--run-time", "4s", *extra)))
    assert done.code == 0, done.text
    directory = result_dir(done)
    return directory, load_result(directory)


def p(hist: dict, bounds: list, q: float) -> float:
    value = histogram.percentile(hist["counts"], bounds, q, hist["max_us"])
    assert value is not None
    return value


def test_a_uniform_rate_is_held_and_each_statement_is_timed_from_its_intended_start(instance, loaded_db):
    _, doc = rate_run(instance, loaded_db, "rate-uniform", "-t", "2", "--rate", "300", "--rate-schedule", "uniform",
                      "--latency-limit", "0.001ms")
    assert doc["status"] == "complete"
    totals, hists, f = doc["totals"], doc["histograms"], doc["figures"]
    statements = totals["selects"] + totals["updates"] + totals["scans"]
    # equal gaps, 150/s each session: the window holds the schedule's statements (a slice boundary's one either way)
    assert statements == pytest.approx(300 * f["window_seconds"], rel=0.01)
    bounds = hists["bounds_us"]
    for kind in ("intended", "lag"):
        assert sum(hists[kind]["counts"]) == statements, kind
    # latency from the intended start is the schedule's lag plus the service time: never below either
    assert hists["intended"]["sum_us"] >= hists["select"]["sum_us"]
    assert hists["intended"]["sum_us"] == pytest.approx(hists["lag"]["sum_us"] + hists["select"]["sum_us"], rel=0.01)
    assert p(hists["intended"], bounds, 0.5) >= p(hists["select"], bounds, 0.5) * 0.9
    # a limit of 1 us: every statement is late from its intended start
    assert totals["late"] == statements
    rate = f["rate"]
    assert rate["held"] is True and rate["achieved_pct"] == pytest.approx(100, abs=1) and rate["behind"] is None
    assert rate["late"] == statements and rate["late_pct"] == 100


def test_a_poisson_rate_far_above_the_loop_is_not_held_and_the_lag_grows(instance, loaded_db):
    directory, doc = rate_run(instance, loaded_db, "rate-over", "-t", "1", "--rate", "90000")
    assert doc["status"] == "complete"
    totals, hists, f = doc["totals"], doc["histograms"], doc["figures"]
    statements = totals["selects"] + totals["updates"] + totals["scans"]
    assert statements < 0.9 * 90000 * f["window_seconds"]  # one session's loop cannot start 90,000 a second
    # a queue behind: its statements started ever later than intended, by far more than they took
    assert p(hists["lag"], hists["bounds_us"], 0.5) > 10 * p(hists["select"], hists["bounds_us"], 0.5)
    assert "late" not in totals or totals["late"] == 0  # no limit given: nothing counted late
    rate = f["rate"]
    assert rate["held"] is False and rate["asked_per_s"] == 90000
    assert rate["achieved_per_s"] == pytest.approx(statements / f["window_seconds"])
    assert rate["lag_last_us"] > rate["lag_first_us"] + 500_000  # the queue grew through the window
    assert rate["behind"]["from_s"] < rate["behind"]["to_s"]
    report = (directory / "report.txt").read_text()
    warnings = [line for line in report.splitlines() if line.startswith("WARNING:")]
    assert warnings[0].startswith("WARNING: rate not held: asked 90,000 statements/s"), warnings
    assert "rate 90,000 statements/s (poisson)" in report and "Latency from the intended start" in report


@pytest.mark.parametrize("extra, says", [
    (("--rate", "0"), "--rate"),
    (("--rate", "-5"), "--rate"),
    (("--rate", "nan"), "--rate"),
    (("--rate", "1", "-t", "2"), "below the 1/s"),
    (("--rate", "200001", "-t", "2"), "one session's loop can start"),
    (("--rate", "100", "--think-time-frequency", "3"), "think time"),
    (("--latency-limit", "5ms"), "without --rate"),
])
def test_a_rate_the_sessions_cannot_keep_is_refused_before_anything_starts(instance, loaded_db, extra, says):
    done = dbio("run", *instance.args(loaded_db, *over(SMALL, "--label", "rate-bad", *extra)))
    assert done.code == 2, done.text
    assert says in done.err and len(done.err.strip().splitlines()) == 1, done.err
    assert "dbio-results" not in done.out
