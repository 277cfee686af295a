"""sweep --rate on the embedded PostgreSQL 18: a real latency-throughput curve over a few rates, one of them far
beyond what the sessions' loops can start, and the search over rates for the highest one held within an objective."""

from __future__ import annotations

import json

from dbio.stats.capacity import parse_slo
from dbio.sweep import rate_search

from tests.integration.conftest import SMALL, dbio, over
from tests.integration.test_sweep_compare import sweep_dir

STEP = ("--warmup", "0", "--run-time", "2s", "-t", "2")
DB = "ratesweep"  # one data set for both: the first sweep loads it


def test_a_curve_over_rates_marks_the_rate_not_held_and_draws_the_latency_from_the_intended_start(instance):
    done = dbio("sweep", *instance.args(DB, *over(SMALL, *STEP), "--label", "ratecurve"),
                "--rate", "200,400,150000", timeout=180)
    assert done.code == 0, done.text
    directory = sweep_dir(done)
    doc = json.loads((directory / "sweep.json").read_text())
    assert doc["vary"] == [["rate", ["200", "400", "150000"]]]  # the same as --vary rate=200,400,150000
    rates = {}
    for step in doc["steps"]:
        result = json.loads((directory / step["name"] / "result.json").read_text())
        rates[step["values"]["rate"]] = result["figures"]["rate"]
        assert result["figures"]["rate"]["asked_per_s"] == int(step["values"]["rate"])
    assert rates["150000"]["held"] is False  # two sessions' loops cannot start 150,000 a second
    # the queue it built shows from the intended start, never hidden by the statements' own (service) time
    assert rates["150000"]["intended_p99_us"] > 10 * result_of(directory, "03-rate150000")["figures"]["latency"][
        "statements"]["select"]["p99_us"]
    text = (directory / "sweep.txt").read_text()
    assert "Latency against the rate" in text
    row = next(line for line in text.splitlines() if "150000" in line and "NOT HELD" in line)
    assert "150,000" in row, row
    assert "rate not held: 03-rate150000, asked 150,000/s" in text
    assert 'id="chart-sweep_rate_latency"' in (directory / "sweep.html").read_text()
    # the headline is the highest rate held, never the most reads/s of a step whose rate was not
    assert "highest rate held" in done.out or "no rate was held" in done.out


def result_of(directory, step: str) -> dict:
    return json.loads((directory / step / "result.json").read_text())


def test_the_search_over_rates_runs_to_its_answer(instance):
    objective = "intended_p99<10s"  # generous: the rates held are within it, so the search grows to --max-rate
    done = dbio("sweep", *instance.args(DB, *over(SMALL, *STEP), "--label", "ratesearch"),
                "--rate", "200,400", "--max-rate", "800", "--objective", objective, timeout=180)
    assert done.code == 0, done.text
    directory = sweep_dir(done)
    doc = json.loads((directory / "sweep.json").read_text())
    assert doc["search"]["axis"] == "rate" and doc["search"]["max_rate"] == 800
    probes = [rate_search.RateProbe(s["name"], int(s["values"]["rate"]), s["probe"]["achieved_per_s"],
                                    s["probe"]["held"], s["probe"]["value_us"], s["probe"]["valid"], s["probe"]["why"])
              for s in doc["steps"]]
    slo = parse_slo(objective)
    assert [p.rate for p in probes[:2]] == [200, 400]
    for taken in range(2, len(probes)):  # each probe after the rates given is the one the search asked for
        assert rate_search.decide(probes[:taken], slo, 800).rate == probes[taken].rate
    final = rate_search.decide(probes, slo, 800)
    assert final.rate is None and len(probes) <= 6
    [answer] = doc["search"]["answers"]
    assert answer["line"] == final.line and answer["best"] == final.best
    assert f"answer: {final.line}" in (directory / "sweep.txt").read_text() and final.line in done.out
    # as on an idle host, every probe held and valid: 800/s the answer, the most --max-rate allows (a loaded host
    # can make a step NOT VALID, other work sharing its window, and the search then stops below it)
    if all(rate_search.met(slo, p) for p in probes):
        assert final.reason == "limit" and final.line.startswith("800 statements/s held")


def test_a_bad_rate_sweep_is_refused_in_one_line_before_anything_is_made(instance):
    results = instance.root / "ratesweep-refused"
    for bad, fragment in ((["--rate", "100", "--vary", "rate=200"], "is also varied by --vary rate"),
                          (["--rate", "0,100"], "--rate 0,100: 0:"),
                          (["--rate", "300..100:3"], "the range must rise"),
                          (["--rate", "100,200", "--objective", "select_p99<2ms"], "from the intended start"),
                          (["--max-rate", "100"], "--max-rate bounds")):
        refused = dbio("sweep", "--data-dir", str(instance.data_dir), "--dbname", DB, "--results-dir", str(results),
                       *bad)
        assert refused.code == 2 and len(refused.err.strip().splitlines()) == 1, refused.text
        assert fragment in refused.err, refused.err
    assert not results.exists()
