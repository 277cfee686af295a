"""dbio history: runs and sweeps found under results directories, grouped by configuration, each change judged
against the configuration's earlier runs (or, with too few, the two runs' own noise); a trend page. On recorded
results (tests/fixtures), copied with their time and reads/s changed as a series of runs would have them."""

from __future__ import annotations

import copy
import json
import shutil
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from dbio import cli
from dbio.commands import history as history_command
from dbio.report import history_model, verdict
from dbio.stats import history
from dbio.result_records import of

FIXTURES = Path(__file__).parent.parent / "fixtures"
BASE = json.loads((FIXTURES / "result_complete.json").read_text())


def _run(hours: int, reads: float, **workload) -> dict:
    doc = copy.deepcopy(BASE)
    start = datetime.fromisoformat(doc["timeline"]["window_start"]) + timedelta(hours=hours)
    doc["timeline"]["window_start"] = start.isoformat()
    doc["figures"]["load_profile"]["physical_reads_per_s"] = reads
    doc["config"]["workload"].update(workload)
    return doc


def _entries(docs: list[dict]) -> list[history.Entry]:
    return [history.entry(of(doc), f"runs/r{i}", verdict.summary(of(doc))) for i, doc in enumerate(docs)]


def test_a_change_beyond_the_spread_of_earlier_runs_is_marked_and_one_within_it_is_not():
    docs = [_run(0, 10_000), _run(1, 10_150), _run(2, 9_900), _run(3, 10_050), _run(4, 7_000), _run(5, 10_020)]
    ordered = history.group(_entries(docs))
    assert len({e.group for e in ordered}) == 1
    assert ordered[0].change is None  # the first of its configuration: nothing to compare with
    dropped, back = ordered[4].change, ordered[5].change
    # against the median of the four before it (10,025), judged by their spread
    assert dropped.judged == "beyond noise" and dropped.pct == pytest.approx(-30.17, abs=0.01)
    assert "median and spread of its 4 earlier valid runs" in dropped.against
    assert back.judged == "noise" and back.pct == pytest.approx(0.2) and "its 5 earlier" in back.against


def test_with_few_runs_a_change_is_judged_on_the_runs_own_noise_and_says_it_cannot_see_run_to_run_noise():
    ordered = history.group(_entries([_run(0, 10_000), _run(1, 10_300)]))
    change = ordered[1].change
    # the fixture has 4 measured intervals: too few to judge even the runs' own noise
    assert change.judged == "cannot judge" and "too few runs of this configuration" in change.against


def test_another_configuration_is_another_group_and_what_changed_is_named():
    ordered = history.group(_entries([_run(0, 10_000), _run(1, 4_000, update_pct=50), _run(2, 10_100)]))
    assert ordered[0].group == ordered[2].group != ordered[1].group
    assert ordered[1].changed == ["workload.update_pct"] and ordered[2].changed == ["workload.update_pct"]
    assert ordered[1].change is None  # never compared with a run of another configuration
    assert ordered[2].change.pct == pytest.approx(1.0)


def test_a_sweep_is_one_line_with_its_best_valid_step(tmp_path):
    shutil.copytree(FIXTURES / "sweep_capacity", tmp_path / "20261121-230000-sweep-disks")
    entries, unreadable = history_command.read_all([tmp_path])
    assert unreadable == []
    (sweep,) = entries
    sweep_dir = tmp_path / "20261121-230000-sweep-disks"
    steps = [json.loads(p.read_text()) for p in sorted(sweep_dir.glob("*/result.json"))]
    valid = [s for s in steps if verdict.summary(of(s))["valid"]]
    best = max(valid, key=lambda s: s["figures"]["load_profile"]["physical_reads_per_s"])
    assert sweep.kind == "sweep" and sweep.steps == len(steps) and sweep.label == "disks"
    assert sweep.reads_per_s == pytest.approx(best["figures"]["load_profile"]["physical_reads_per_s"])
    assert "workload.threads_per_schema" not in sweep.configuration  # what the steps varied is no setting of it


def _results(tmp_path: Path, docs: list[dict]) -> Path:
    top = tmp_path / "dbio-results"
    for i, doc in enumerate(docs):
        (top / f"run{i}").mkdir(parents=True)
        (top / f"run{i}" / "result.json").write_text(json.dumps(doc))
    return top


def test_the_command_lists_the_runs_says_what_it_could_not_read_and_writes_a_trend_page(tmp_path):
    top = _results(tmp_path, [_run(h, r) for h, r in enumerate([10_000, 10_150, 9_900, 10_050, 7_000])])
    (top / "broken").mkdir()
    (top / "broken" / "result.json").write_text("{not json")
    text = CliRunner().invoke(cli.cli, ["history", str(top)])
    assert text.exit_code == 0, text.output
    assert "5 runs and 0 sweeps in 1 configuration" in text.output and "1 change beyond the runs' noise" in text.output
    assert "-30.2% (beyond noise)" in text.output
    assert "WARNING: not listed:" in text.output and "broken" in text.output
    page = tmp_path / "trend.html"
    html = CliRunner().invoke(cli.cli, ["history", str(top), "--out", str(page)])
    assert html.exit_code == 0, html.output
    body = page.read_text()
    assert body.count("<svg") == 1 and 'id="chart-history_trend"' in body and "beyond noise" in body


def test_the_model_has_a_trend_per_configuration_with_the_marked_changes():
    model = history_model.build(_entries([_run(0, 10_000), _run(1, 10_100), _run(2, 9_950), _run(3, 6_000),
                                          _run(4, 3_000, update_pct=80)]), ["x"], [])
    assert len(model["trend"]) == 2
    marked = [g["beyond"] for g in model["trend"].values() if len(g["t"]) == 4][0]
    assert marked == [False, False, False, True]
    assert [f["code"] for f in model["findings"]] == ["change_beyond_noise"]


@pytest.mark.parametrize("args, message", [
    (["history", "/nonexistent/dbio-results"], "is not a directory"),
    (["history", "EMPTY"], "no dbio results under"),
])
def test_bad_directories_are_refused_in_one_line(tmp_path, args, message, capsys):
    (tmp_path / "empty").mkdir()
    with pytest.raises(SystemExit) as exited:
        cli.main([str(tmp_path / "empty") if a == "EMPTY" else a for a in args])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and message in err and len(err.strip().splitlines()) == 1, err


def test_history_passes_over_planted_files_each_named_in_one_line_and_lists_the_rest(tmp_path):
    """Another user's directory, read as root: a sparse result.json just over the limit (today read whole: 1.28 GB
    of memory and 4 s for 600 MiB), a FIFO and a link to a device. History names the first two, never follows the
    link, and lists the two real runs; its memory stays what reading them takes."""
    import os

    from dbio import readback
    from tests.bounded_program import CLI, PEAK_MIB, run_program

    top = _results(tmp_path, [_run(0, 10_000), _run(1, 10_100)])
    for name in ("huge", "fifo", "device"):
        (top / name).mkdir()
    with (top / "huge" / "result.json").open("wb") as fh:
        fh.truncate(readback.RESULT.max_bytes + 1)
    os.mkfifo(top / "fifo" / "result.json")
    (top / "device" / "result.json").symlink_to("/dev/zero")
    code, out, err, peak = run_program(CLI, "history", str(top), timeout=60)
    assert code == 0, err
    assert "2 runs and 0 sweeps in 1 configuration" in out
    (warning,) = [line for line in out.splitlines() if "not listed:" in line]
    assert f"{top / 'huge' / 'result.json'} is larger than any result dbio writes" in warning, warning
    assert f"{top / 'fifo' / 'result.json'} is not a plain file" in warning
    assert f"{top / 'device' / 'result.json'} is a link" in warning and "/dev/zero" not in out  # named, not followed
    assert peak < PEAK_MIB, f"{peak:.0f} MiB"


def test_history_names_a_run_without_a_result_and_says_how_it_is_rebuilt(tmp_path):
    """A run whose dbio was killed (kill -9) left its manifest and samples and no result.json: history listed the
    others and passed over it without a word (and with no other run said "no dbio results"). It names it, with how
    the next run rebuilds it; a planted FIFO for a manifest blocks nothing."""
    import os
    import socket

    top = _results(tmp_path, [_run(0, 10_000)])
    killed, fifo = top / "20261202-063113", top / "planted"
    killed.mkdir()
    (killed / "run.json").write_text(json.dumps({"client": f"{socket.gethostname()}:99999999"}))
    (killed / "samples.jsonl").write_text("")
    fifo.mkdir()
    os.mkfifo(fifo / "run.json")
    text = CliRunner().invoke(cli.cli, ["history", str(top)])
    assert text.exit_code == 0, text.output
    (warning,) = [line for line in text.output.splitlines() if "not listed:" in line]
    assert f"{killed} is a run whose dbio process ended before writing its result" in warning, warning
    assert f"the next dbio run with --results-dir {top.resolve()} rebuilds it" in warning
    assert f"{fifo} is a run whose dbio process ended" in warning
    assert "1 run and 0 sweeps" in text.output
    shutil.rmtree(top / "run0")
    alone = CliRunner().invoke(cli.cli, ["history", str(top)])
    refused = str(alone.exception)
    assert alone.exit_code != 0 and "no dbio results under" in refused and "ended before writing its result" in refused


def test_history_looks_at_a_bounded_number_of_directory_entries_and_says_where_it_stopped(tmp_path, monkeypatch):
    """A directory of millions of entries is neither listed whole in memory nor walked to its end (today: os.walk
    lists every directory it enters whole, and enters all of them)."""
    monkeypatch.setattr(history_command, "MAX_ENTRIES", 40, raising=False)
    top = _results(tmp_path, [_run(0, 10_000)])
    crowded = top / "crowded"
    crowded.mkdir()
    for i in range(100):
        (crowded / f"entry{i}").mkdir()
    entries, unreadable = history_command.read_all([top])
    assert len(unreadable) == 1 and unreadable[0].startswith(f"{top}: the looking stopped after 40 directory entries")
    assert f"(in {crowded})" in unreadable[0]
    assert len(entries) <= 1



def test_a_run_at_a_rate_shows_its_rate_asked_achieved_and_held_and_a_closed_loop_none():
    closed = _run(0, 10_000)
    rated = _run(1, 9_000, rate=4000)
    rated["figures"]["rate"] = {"asked_per_s": 4000, "achieved_per_s": 3120.4, "held": False}
    model = history_model.build(_entries([closed, rated]), ["runs"], [])
    [tab] = next(s for s in model["sections"] if s["id"] == "runs")["tables"]
    at = tab["columns"].index("Rate")
    assert [row[at] for row in tab["rows"]] == ["-", "4,000/s asked, 3,120 achieved (NOT HELD)"]
    # no run at a rate: no Rate column (the history of closed loops reads as before)
    [plain] = next(s for s in history_model.build(_entries([closed]), ["runs"], [])["sections"]
                   if s["id"] == "runs")["tables"]
    assert "Rate" not in plain["columns"]
