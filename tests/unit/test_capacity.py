"""Capacity and queueing from a sweep's measured points: the pure statements (stats/capacity.py),
and the Capacity section of a recorded sweep (golden text: tests/golden/sweep_capacity.txt)."""

import os
from pathlib import Path

import pytest

from dbio import report
from dbio.sweep.document import load_steps
from dbio.report import sweep_model
from dbio.stats import capacity
from dbio.stats.capacity import Point, parse_slo
from dbio.sweep import document
from dbio.sweep_records import of as typed_sweep

FIXTURES = Path(__file__).parent.parent / "fixtures"
GOLDEN = Path(__file__).parent.parent / "golden"

# bench/RESULTS.md, sweep of 2026-11-22, update pct 0: sessions, reads/s, avg read us, SELECT p99 us
BENCH = [(1, 12_749, 75, 1_966), (2, 20_101, 96, 2_672), (4, 31_433, 123, 2_885), (8, 49_567, 156, 3_182),
         (16, 67_104, 231, 4_315), (32, 74_464, 420, 6_599)]


def bench_points(slo_stat="p99"):
    return [Point(f"0{i + 1}-t{s}", s, float(r), float(a), float(p99 if slo_stat == "p99" else a))
            for i, (s, r, a, p99) in enumerate(BENCH)]


def test_parse_slo():
    assert parse_slo("p99<2ms") == capacity.Slo("p99", 2000.0)
    assert parse_slo(" avg <= 500us ") == capacity.Slo("avg", 500.0)
    assert parse_slo("P99.9<1.5s").limit_us == 1.5e6 and parse_slo("p99.9<1s").figure == "select_p99_9_us"
    for bad in ("p99", "p99>2ms", "p98<2ms", "p99<2 hours", "<2ms", ""):
        with pytest.raises(ValueError, match="STAT<LIMIT"):
            parse_slo(bad)


def test_bench_sweep_target_met_checked_by_hand_against_its_table():
    """50,000/s with SELECT p99 under 5 ms: 8 sessions gave 49,567/s (short), 16 gave 67,104/s at 4,315 us."""
    lines = capacity.statements(bench_points(), 50_000, parse_slo("p99<5ms"))
    assert lines[1] == ("target 50,000 I/O requests/s with p99 < 5,000 us (SELECT p99): met at 16 sessions, the "
                        "fewest measured that reach it (67,104/s, SELECT p99 4,315 us, step 05-t16); 8 sessions "
                        "gave 49,567/s and the counts between were not measured")
    assert lines[3] == "Little's law at 16 sessions: 67,104 reads/s x 231 us = 15.5 reads in flight for 16 sessions"


def test_target_beyond_the_measured_range_is_said_plainly_never_extrapolated():
    lines = capacity.statements(bench_points(), 100_000, None)
    assert "beyond the measured range: the most measured is 74,464/s at 32 sessions (74% of the target); dbio " \
           "does not extrapolate" in lines[1]
    assert lines[2] == ("from 16 to 32 sessions the rate still grew +11%: sweep more sessions (beyond 32) to see "
                        "whether the target can be reached")
    flat = bench_points()[:-1] + [Point("06-t32", 32, 68_000.0, 420.0, 6_599.0)]
    assert "more sessions are unlikely to reach the target" in capacity.statements(flat, 100_000, None)[2]


def test_rate_reached_but_objective_broken():
    lines = capacity.statements(bench_points(), 60_000, parse_slo("p99<3ms"))
    assert lines[1] == ("target 60,000 I/O requests/s with p99 < 3,000 us (SELECT p99): not met within the measured "
                        "range: the rate is reached at 16 sessions (67,104/s) but SELECT p99 there is 4,315 us; "
                        "within the objective the most measured is 31,433/s at 4 sessions")


def test_objective_alone_and_average_latency():
    lines = capacity.statements(bench_points("avg"), None, parse_slo("avg<200us"))
    assert lines[1] == ("within avg < 200 us (avg physical read) the most measured is 49,567 I/O requests/s at 8 "
                        "sessions (avg physical read 156 us)")


def test_device_utilisation_law_and_the_devices_own_queue():
    p = Point("04-t8", 8, 49_567.0, 156.0, None, "vda", 50_000.0, 80.0, 7.9)
    lines = capacity.statements([p], 40_000, None)
    assert lines[2].startswith("device vda at 8 sessions: 80% busy for 50,000 completions/s, so 16.0 us of busy time "
                               "per I/O (utilisation law S = U / X)")
    assert lines[3].endswith("= 7.7 reads in flight for 8 sessions; the device's own average queue (diskstats) was 7.9")
    assert lines[4] == "knee: one step, no curve"
    assert "utilisation not measured" in capacity.statements(bench_points(), 40_000, None)[2]


def test_the_knee_is_stated_from_the_points():
    points = bench_points()[:-1] + [Point("06-t32", 32, 68_000.0, 420.0, 6_599.0)]
    assert capacity.statements(points, 40_000, None)[-1].startswith(
        "knee: beyond 16 sessions, I/O requests/s +1% while read latency +82%: queueing")
    assert capacity.statements(bench_points(), 40_000, None)[-1].startswith("knee: none between 1 and 32 sessions")


REQUESTS = {
    "within": {"target_iops": 3000, "latency_slo": "p99<50ms"},
    "beyond": {"target_iops": 1_000_000, "latency_slo": None},
    "slo": {"target_iops": None, "latency_slo": "avg<1ms"},
    "cost": {"target_iops": None, "latency_slo": None,
             "prices": {"instance": 300.0, "volume": 0.08, "iops": 0.065, "currency": "$"}},
}


def capacity_text(request):
    directory = FIXTURES / "sweep_capacity"
    doc = document.read(directory)
    model = sweep_model.build(typed_sweep(doc), load_steps(directory, typed_sweep(doc)), request)
    text = report.render_model(model, "text")
    return text[text.index("Capacity and queueing"):].split("\n\n\n")[0]


def test_capacity_of_a_recorded_sweep_golden():
    got = "\n".join(f"== {name}\n{capacity_text(request)}" for name, request in REQUESTS.items()) + "\n"
    golden = GOLDEN / "sweep_capacity.txt"
    if os.environ.get("DBIO_UPDATE_GOLDEN"):
        golden.write_text(got)
    assert got == golden.read_text()


class Done:
    def __init__(self, proc):
        self.exit_code, self.output = proc.returncode, proc.stdout + proc.stderr


def _cli(*args):
    """dbio as a user runs it, a program of its own: the one error funnel decides the exit code and the message."""
    from tests import forked_dbio

    return Done(forked_dbio.completed(list(args), env={**os.environ, "COLUMNS": "200"}, timeout=60))


def test_report_of_a_sweep_takes_a_target_and_prices():
    done = _cli("report", str(FIXTURES / "sweep_capacity"), "--target-iops", "1000000", "--price", "iops=0.065")
    assert done.exit_code == 0, done.output
    assert "beyond the measured range" in done.output and "Cost of the measured rates" in done.output


@pytest.mark.parametrize("args, fragment", [
    (["--latency-slo", "p99 under 2ms"], "--latency-slo"), (["--price", "volume=0.08/month"], "per GB-month"),
    (["--target-iops", "-5"], "not a rate"), (["--target-iops", "1e999"], "--target-iops inf is not a rate"),
    (["--target-iops", "inf"], "not a rate"), (["--latency-slo", "p99<" + "9" * 400 + "ms"], "beyond any latency"),
])
def test_bad_capacity_input_is_one_line_and_exit_2_before_anything_runs(args, fragment, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for command in (["sweep", "--sessions", "1,2", "--data-dir", str(tmp_path / "none"), "--results-dir",
                     str(tmp_path / "results")], ["report", str(FIXTURES / "sweep_capacity")]):
        done = _cli(*command, *args)
        assert done.exit_code == 2, done.output
        assert fragment in done.output and len(done.output.strip().splitlines()) == 1
    assert not (tmp_path / "results").exists() and not (tmp_path / "none").exists()


def test_report_of_one_result_refuses_capacity_flags():
    done = _cli("report", str(FIXTURES / "sweep_capacity" / "01-t1"), "--target-iops", "5000")
    assert done.exit_code == 2 and "sweep's measured steps" in done.output


def test_a_cost_table_in_dbio_toml_is_read_and_checked(tmp_path):
    from dbio.jobs import capacity as capacity_command

    toml = tmp_path / "dbio.toml"
    toml.write_text('[workload]\nscale = "1GiB"\n[cost]\ninstance = "300/month"\nvolume = 0.08\n')
    toml.chmod(0o600)
    from dbio.config import Sources, load_config

    config = load_config(Sources(config_file=toml, cwd=tmp_path, env={}))  # [cost] is no unknown section
    table = config.cost
    assert table == {"instance": "300/month", "volume": 0.08}
    assert capacity_command.request(None, None, ["iops=0.065"], table)["prices"] == {
        "instance": 300.0, "volume": 0.08, "iops": 0.065, "currency": ""}
    with pytest.raises(Exception, match=r"dbio.toml \[cost\] cpu"):
        capacity_command.request(None, None, (), {"cpu": 3})
    assert config.files == (toml,)


def test_statements_asked_for_neither_a_target_nor_an_objective_say_only_what_was_measured():
    """The pure function alone (the report asks it only with one of them): it once said 'within None'."""
    lines = capacity.statements(bench_points(), None, None)
    assert lines[0].startswith("measured: 6 step(s), 1..32 sessions")
    assert not any("objective" in line or "target" in line or "within" in line for line in lines), lines
