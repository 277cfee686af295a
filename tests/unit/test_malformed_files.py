"""Malformed result.json, sweep.json, run.json and samples.jsonl: through the real CLI entry, one
line naming the file and what is wrong, exit 2, never "internal error" (issue 8, item 15)."""

import copy
import json
import os
import re
import resource
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from dbio import cli, result
from dbio.engines.postgres.engine import PostgresEngine
from dbio.run import abandoned

FIXTURES = Path(__file__).parent.parent / "fixtures"
COMPLETE = json.loads((FIXTURES / "result_complete.json").read_text())


def run_cli(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def _set(doc, path, value):
    *parents, last = path.split(".")
    for key in parents:
        doc = doc[int(key)] if isinstance(doc, list) else doc[key]
    if isinstance(doc, list):
        doc[int(last)] = value
    else:
        doc[last] = value
    return doc


def _drop(doc, path):
    *parents, last = path.split(".")
    for key in parents:
        doc = doc[key]
    del doc[last]


def mutated(path, value):
    doc = copy.deepcopy(COMPLETE)
    _set(doc, path, value)
    return json.dumps(doc)


def dropped(path):
    doc = copy.deepcopy(COMPLETE)
    _drop(doc, path)
    return json.dumps(doc)


def raw(path, token):
    """The fixture with one value replaced by a JSON token json.dumps would not write (NaN, 1e400)."""
    return mutated(path, "@@").replace('"@@"', token)


RESULT_CASES = [
    (raw("figures.load_profile.physical_reads_per_s", "NaN"), "holds NaN"),
    (raw("figures.latency.avg_read_us", "Infinity"), "holds Infinity"),
    (raw("figures.latency.avg_read_us", "-Infinity"), "holds -Infinity"),
    (raw("figures.cpu.db_cpu_cores", "1e400"), "figures.cpu.db_cpu_cores is inf"),
    (raw("figures.load_profile.statements_per_s", "1e308"), "figures.load_profile.statements_per_s is 1e+308"),
    (mutated("totals.selects", -5), "totals.selects is -5, expected a count"),
    (mutated("totals.selects", None), "totals.selects is null, expected a count"),
    (mutated("histograms.select.counts.3", -1), "histograms.select.counts[3] is -1"),
    (mutated("snapshots.end.engine.database.blks_read", -10), "snapshots.end.engine.database.blks_read is -10"),
    (mutated("figures.load_profile.physical_reads_per_s", "fast"), "physical_reads_per_s is \"fast\""),
    (mutated("figures.load_profile", []), "figures.load_profile is a list, expected an object"),
    (mutated("figures", "none"), "figures is \"none\", expected an object"),
    (mutated("series.2", None), "series[2] is null, expected an object"),
    (mutated("series.2.reads_per_s", "x"), "series[2].reads_per_s is \"x\""),
    (mutated("waits.counts.CPU", None), "waits.counts.CPU is null"),
    (mutated("timeline.start_seconds", None), "timeline.start_seconds is null"),
    (mutated("events.0", "x"), "events[0] is \"x\""),
    (mutated("config.workload", 7), "config.workload is 7"),
    (mutated("format_version", "1"), "format_version \"1\", not an integer"),
    (mutated("format_version", 1.0), "format_version 1.0, not an integer"),
    (mutated("format_version", True), "format_version true, not an integer"),
    (mutated("format_version", 0), "format version 0"),
    (mutated("format_version", 3), "result format 3, from a newer dbio"),
    (dropped("format_version"), "format_version null, not an integer"),
    (dropped("figures.latency"), "figures lacks latency"),
    (dropped("figures.load_profile.statements_per_s"), "figures.load_profile lacks statements_per_s"),
    (dropped("config"), "lacks config"),
    (json.dumps(COMPLETE)[:5000], "is not valid JSON"),
    ("[1, 2]", "is not a dbio result"),
    ("null", "is not a dbio result"),
    ("", "is not valid JSON"),
    ("[" * 100000, "nested too deeply"),
    (raw("totals.selects", "9" * 5000), "a whole number of 5000 digits"),  # int() refuses > 4300 digits
    (raw("totals.selects", "-" + "9" * 41), "a whole number of 41 digits"),
    (mutated("timeline.window_start", "yesterday"), 'timeline.window_start is "yesterday", expected a time'),
    (mutated("timeline.window_end", "2026-11-21T23:02:37"), "timeline.window_end is \"2026-11-21T23:02:37\""),
    (mutated("timeline.window_start", 5), "timeline.window_start is 5, expected a time with its zone"),
]


@pytest.mark.parametrize("command", ["report", "compare"])
@pytest.mark.parametrize("content, fragment", RESULT_CASES, ids=range(len(RESULT_CASES)))
def test_a_malformed_result_is_one_line_and_exit_2(tmp_path, capsys, command, content, fragment):
    run = tmp_path / "bad"
    run.mkdir()
    (run / "result.json").write_text(content)
    good = tmp_path / "good"
    result.write(good.mkdir() or good, COMPLETE)
    argv = ["report", str(run)] if command == "report" else ["compare", str(good), str(run)]
    code, out, err = run_cli(argv, capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "internal error" not in err and "Traceback" not in err
    assert str(run / "result.json") in lines[0] and fragment in lines[0]


def test_a_result_that_is_not_utf8_is_named(tmp_path, capsys):
    path = tmp_path / "result.json"
    path.write_bytes(json.dumps(COMPLETE).encode().replace(b'"complete"', b'"compl\xffte"', 1))
    code, _, err = run_cli(["report", str(path)], capsys)
    assert code == 2 and f"{path} is not UTF-8 text" in err and len(err.strip().splitlines()) == 1


SWEEP = {"format": "dbio-sweep", "format_version": 1, "dbio_version": "0.1.0",
         "created_at": "2026-11-21T23:00:00+00:00",
         "label": "s", "status": "complete", "base": {"schemas": 1}, "vary": [["threads_per_schema", ["1", "2"]]],
         "until_peak": False, "peak_gain": 0.05, "knee_gain": 0.1, "wall_seconds": 10.0,
         "steps": [{"index": 1, "name": "01-threads_per_schema-1", "values": {"threads_per_schema": "1"},
                    "status": "complete", "headline": {"reads_per_s": 10.0, "avg_read_us": 100.0}}]}


def sweep_mutated(path, value):
    doc = copy.deepcopy(SWEEP)
    _set(doc, path, value)
    return json.dumps(doc)


SWEEP_CASES = [
    (sweep_mutated("steps.0.headline.reads_per_s", "@@").replace('"@@"', "NaN"), "holds NaN"),
    (sweep_mutated("wall_seconds", "@@").replace('"@@"', "1e999"), "wall_seconds is inf"),
    (sweep_mutated("steps.0.headline.reads_per_s", "many"), "steps[0].headline.reads_per_s is \"many\""),
    (sweep_mutated("steps.0.name", "../../elsewhere"), "not the name of a step directory"),
    (sweep_mutated("steps.0", None), "steps[0] is null"),
    (sweep_mutated("steps", {}), "steps is an object, expected a list"),
    (sweep_mutated("steps.0.values", {"threads_per_schema": 1}), "steps[0].values.threads_per_schema is 1"),
    (sweep_mutated("peak_gain", -1), "peak_gain is -1"),
    (sweep_mutated("format_version", "1"), "format_version \"1\", not an integer"),
    (sweep_mutated("format_version", 7), "result format 7, from a newer dbio"),
    (json.dumps({k: v for k, v in SWEEP.items() if k != "steps"}), "lacks steps"),
    (json.dumps(SWEEP)[:100], "is not valid JSON"),
    ("[]", "is not a dbio sweep"),
]


@pytest.mark.parametrize("command", ["report", "compare", "resume"])
@pytest.mark.parametrize("content, fragment", SWEEP_CASES, ids=range(len(SWEEP_CASES)))
def test_a_malformed_sweep_is_one_line_and_exit_2(tmp_path, capsys, command, content, fragment):
    bad, good = tmp_path / "bad", tmp_path / "good"
    for directory, text in ((bad, content), (good, json.dumps(SWEEP))):
        directory.mkdir()
        (directory / "sweep.json").write_text(text)
    argv = {"report": ["report", str(bad)], "compare": ["compare", str(good), str(bad)],
            "resume": ["sweep", "--resume", str(bad)]}[command]
    code, out, err = run_cli(argv, capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "internal error" not in err and "Traceback" not in err
    assert str(bad / "sweep.json") in lines[0] and fragment in lines[0]


# -- compare never prints nan or inf ---------------------------------------------------------

def _without_figures(doc):
    out = copy.deepcopy(doc)
    out["figures"] = {"window_seconds": None}
    out["series"] = []
    return out


def _zero_figures(doc):
    out = copy.deepcopy(doc)

    def zero(x):
        if isinstance(x, dict):
            return {k: zero(v) for k, v in x.items()}
        if isinstance(x, list):
            return [zero(v) for v in x]
        return 0 if isinstance(x, (int, float)) and not isinstance(x, bool) else x
    out["figures"] = {**zero(out["figures"]), "window_seconds": out["figures"]["window_seconds"]}
    out["series"] = zero(out["series"])
    return out


def _null_figures(doc):
    out = copy.deepcopy(doc)
    for section in ("load_profile", "io_profile", "latency", "cpu"):
        for key, value in list(out["figures"][section].items()):
            if not isinstance(value, (dict, list)):
                out["figures"][section][key] = None
    for row in out["series"]:
        for key in list(row):
            if key.endswith(("_per_s", "_us", "_pct")):
                row[key] = None
    return out


@pytest.mark.parametrize("variant", [_without_figures, _zero_figures, _null_figures])
@pytest.mark.parametrize("form", ["text", "md", "html", "json"])
def test_compare_never_prints_nan_or_inf(tmp_path, capsys, variant, form):
    docs = [COMPLETE, variant(COMPLETE), json.loads((FIXTURES / "result_pg15.json").read_text())]
    paths = []
    for i, doc in enumerate(docs):
        directory = tmp_path / f"r{i}"
        directory.mkdir()
        result.write(directory, doc)
        paths.append(str(directory))
    for order in (paths, paths[::-1]):
        try:
            cli.main(["compare", "--format", form, *order])
        except SystemExit as exc:
            assert exc.code in (0, None)
        out, err = capsys.readouterr()
        assert err == "" and out
        assert not re.search(r"\b-?(nan|inf|infinity)\b", out, re.IGNORECASE), \
            re.search(r".{40}\b-?(nan|inf|infinity)\b.{40}", out, re.IGNORECASE | re.DOTALL)


# -- samples.jsonl and recovery --------------------------------------------------------------

BAD_LINES = [b"null\n", b"[1, 2]\n", b'{"k": 9, "t": NaN}\n', b"\xff\xfe not utf-8\n", b'{"k": -3, "t": 1.0}\n',
             b'{"k": 9, "t": 1.0, "engine": {"t": 1.0, "database": {"blks_read": -1}}}\n',
             b'{"k": 9, "t": 1.0, "statements": {"selects": null}}\n', b'{"k": 9, "t": 1e999}\n',
             b'{"k": 9, "t": 1.0, "late_statements": {"x": {}}}\n', b'{"k": "9", "t": 1.0}\n', b"{\"k\": 9, \"t\n",
             b'{"k": 9, "t": 1.0, "engine": {"t": 1.0, "database": {"blks_read": ' + b"9" * 5000 + b"}}}\n"]


def _abandoned_copy(tmp_path, bad_lines=()):
    directory = tmp_path / "results" / "20261122-151220-dsn"
    shutil.copytree(FIXTURES / "abandoned_run", directory)
    manifest = json.loads((directory / "run.json").read_text())
    manifest["client"] = f"{socket.gethostname()}:999999999"  # a dbio process of this host that no longer runs
    (directory / "run.json").write_text(json.dumps(manifest))
    if bad_lines:
        lines = (directory / "samples.jsonl").read_bytes().splitlines(keepends=True)
        (directory / "samples.jsonl").write_bytes(b"".join(lines[:2] + list(bad_lines) + lines[2:]))
    return directory


def test_bad_sample_lines_are_skipped_and_counted(tmp_path):
    directory = _abandoned_copy(tmp_path, BAD_LINES)
    skipped: list[str] = []
    records = result.read_samples(directory / "samples.jsonl", skipped)
    assert [r["k"] for r in records] == [0, 1, 2, 3, 4]
    assert len(skipped) == len(BAD_LINES)
    assert skipped[0].startswith("line 3 ") and "not UTF-8" in skipped[3] and "blks_read is -1" in skipped[5]
    assert skipped[11].startswith("line 14 holds a whole number of 5000 digits")


def test_a_run_recovers_past_bad_sample_lines_and_records_how_many(tmp_path):
    clean = abandoned.recover(_abandoned_copy(tmp_path / "a"), lambda _name: PostgresEngine())
    damaged = abandoned.recover(_abandoned_copy(tmp_path / "b", BAD_LINES), lambda _name: PostgresEngine())
    assert damaged["figures"] == clean["figures"] and damaged["series"] == clean["series"]
    assert damaged["totals"] == clean["totals"] and damaged["totals"]["selects"] > 0
    event = [e for e in damaged["events"] if e["kind"] == "samples_skipped"]
    assert len(event) == 1 and event[0]["skipped_lines"] == len(BAD_LINES)
    assert "samples_skipped" not in [e["kind"] for e in clean["events"]]


@pytest.mark.parametrize("manifest, fragment", [
    ("[]", "the document is a list, expected an object"),
    ('{"client": "%s:999999999"}' % socket.gethostname(), "lacks run_id, created, plan"),
    ('{"client": 5}', "lacks run_id"),
    ("{not json", "is not valid JSON"),
])
def test_a_damaged_manifest_is_named_and_does_not_block_the_next_recovery(tmp_path, manifest, fragment):
    from dbio.jobs.run import recover_abandoned

    good = _abandoned_copy(tmp_path)
    bad = good.with_name("20261122-151000-damaged")
    shutil.copytree(good, bad)
    (bad / "run.json").write_text(manifest)
    warnings, notes = [], []

    class UI:
        warn = warnings.append
        note = notes.append

    recovered = recover_abandoned(good.parent, UI())
    assert recovered == [good] and (good / "result.json").exists() and not (bad / "result.json").exists()
    if fragment == "is not valid JSON":  # a manifest being written (or unreadable) is left alone, as before
        assert warnings == []
    else:
        assert len(warnings) == 1 and str(bad / "run.json") in warnings[0] and fragment in warnings[0]
        assert "Error" not in warnings[0]


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("result_*.json")))
def test_every_recorded_result_passes_the_check(name):
    """The check declares what the reports read; a result dbio wrote must always pass it."""
    assert result.read(FIXTURES / name)["format"] == "dbio-result"


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give a directory to another user")
def test_an_abandoned_run_in_a_directory_another_user_may_change_is_not_recovered(tmp_path):
    """A run directory another user owns (a manifest is easily copied, and dbio run recovers what it finds in
    --results-dir) would have root write result.json and the reports through the links they put there."""
    from dbio.jobs.run import recover_abandoned

    tmp_path.chmod(0o755)
    good = _abandoned_copy(tmp_path)
    theirs = good.with_name("shared")
    shutil.copytree(good, theirs)
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (theirs / "report.txt").symlink_to(victim)
    for path in (theirs, *theirs.iterdir()):
        os.lchown(path, 4242, 4242)
    theirs.chmod(0o777)
    warnings, notes = [], []

    class UI:
        warn = warnings.append
        note = notes.append

    assert recover_abandoned(good.parent, UI()) == [good]
    assert victim.read_text() == "precious" and not (theirs / "result.json").exists()


def test_a_run_without_its_result_says_what_it_is_and_how_to_get_it(tmp_path, capsys, monkeypatch):
    # a run directory whose dbio was killed holds run.json and samples.jsonl: "result.json does not exist;
    # give a run directory" told the user to give what they gave
    killed = tmp_path / "results" / "20261123-183921-killed"
    killed.mkdir(parents=True)
    (killed / "run.json").write_text(json.dumps({"client": f"{socket.gethostname()}:999999999"}))
    (killed / "samples.jsonl").write_text("")
    for argv in (["report", str(killed)], ["compare", str(killed), str(killed)]):
        code, out, err = run_cli(argv, capsys)
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        assert "ended before writing its result" in err and f"--results-dir {tmp_path / 'results'}" in err
        assert "marked lost" in err
    from dbio.run import identity

    monkeypatch.setattr(identity, "client_alive", lambda client: client == "vm:42")
    (killed / "run.json").write_text(json.dumps({"client": "vm:42"}))
    code, out, err = run_cli(["report", str(killed)], capsys)  # its dbio still runs
    assert code == 2 and "still going" in err and "wait for it" in err


def test_a_run_whose_result_was_rescued_says_where_it_is_not_that_it_will_be_rebuilt(tmp_path, capsys):
    # a results directory on a full filesystem: the result went to the rescue directory and the run's directory
    # holds rescued-to; report (and history) said "the next dbio run rebuilds it (marked lost)", which no run does
    # (abandoned() passes over a rescued run), and not where the result is
    full = tmp_path / "results" / "20261202-070228"
    full.mkdir(parents=True)
    (full / "run.json").write_text(json.dumps({"client": f"{socket.gethostname()}:999999999"}))
    rescue = tmp_path / "rescued" / "20261202-070228-1796194965"
    (full / "rescued-to").write_text(f"{rescue}\n")
    code, out, err = run_cli(["report", str(full)], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"it was written to {rescue}" in err and f"dbio report {rescue}" in err and "rebuild" not in err
    (full / "rescued-to").write_text("")  # the full disk kept even the path out
    code, out, err = run_cli(["report", str(full)], capsys)
    assert code == 2 and "dbio's rescue directory" in err and "dbio/rescued" in err and "rebuild" not in err


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another user")
def test_a_rescue_mark_another_user_planted_does_not_stop_roots_recovery(tmp_path, monkeypatch):
    """Results go to <temp>/dbio-rescued when their run directory cannot be written, with a mark naming
    the run; any user can write in the shared temporary directory, and a mark they plant there naming
    root's run made root skip rebuilding it."""
    import tempfile

    from dbio.jobs.run import recover_abandoned

    tmp_path.chmod(0o755)
    shared_temp = tmp_path / "tmp"
    shared_temp.mkdir(mode=0o1777)
    shared_temp.chmod(0o1777)
    monkeypatch.setattr(tempfile, "tempdir", str(shared_temp))
    run_dir = _abandoned_copy(tmp_path)
    planted = shared_temp / "dbio-rescued" / "20261122-151220-dsn" / abandoned.RESCUE_MARK
    planted.parent.mkdir(parents=True)
    planted.write_text(f"{run_dir}\n")
    for path in (planted.parent.parent, planted.parent, planted):  # as that user would have made them
        os.lchown(path, 65534, 65534)

    class UI:
        warn = note = staticmethod(lambda _text: None)

    assert str(run_dir) not in abandoned.rescued_runs()
    assert recover_abandoned(run_dir.parent, UI()) == [run_dir] and (run_dir / "result.json").exists()


def test_a_rescue_mark_dbio_made_still_counts(tmp_path, monkeypatch):
    import tempfile

    from dbio import trust

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    run_dir = _abandoned_copy(tmp_path)
    rescue = tmp_path / "dbio-rescued" / run_dir.name
    trust.make_private_directory(rescue, "the rescued result")
    (rescue / abandoned.RESCUE_MARK).write_text(f"{run_dir}\n")
    assert str(run_dir) in abandoned.rescued_runs()
    assert abandoned.abandoned(run_dir.parent) == []


@pytest.mark.parametrize("start", ["yesterday", "2026-11-21T23:02:37", 1795374000, "9999-12-31T23:59:59-05:00"])
def test_a_merge_input_whose_window_start_is_not_a_time_is_one_line(tmp_path, capsys, start):
    good, bad = tmp_path / "good", tmp_path / "bad"
    result.write(good.mkdir() or good, COMPLETE)
    (bad.mkdir() or bad / "result.json").write_text(mutated("timeline.window_start", start))
    code, _, err = run_cli(["merge", str(good), str(bad), "--out", str(tmp_path / "merged")], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "internal error" not in err
    assert str(bad / "result.json") in err and "timeline.window_start is" in err and "expected a time" in err
    assert not (tmp_path / "merged").exists()


@pytest.mark.parametrize("command", [["report"], ["compare", "{other}"]])
@pytest.mark.parametrize("plant", ["fifo", "device", "huge"])
def test_a_result_that_is_no_plain_file_or_too_large_is_refused_unread(tmp_path, command, plant):
    """Another user's result.json that is a FIFO, or a link to a device, once hung `dbio report` for
    ever (reading /dev/zero without end); a sparse file of gigabytes ended in "internal error:
    MemoryError" after filling memory. Run as a program with its memory bounded, so that today's
    reading fails instead of taking the machine's memory."""
    other = tmp_path / "other"
    other.mkdir()
    (other / "result.json").write_text(json.dumps(COMPLETE))
    planted = tmp_path / "planted"
    planted.mkdir()
    target = planted / "result.json"
    if plant == "fifo":
        os.mkfifo(target)
    elif plant == "device":
        target.symlink_to("/dev/zero")
    else:
        with target.open("wb") as fh:  # sparse: takes no room on disk
            fh.truncate(4 * 1024 ** 3)
    argv = [part.format(other=other) for part in command] + [str(planted)]
    limit = 2 * 1024 ** 3  # address space: far above what comparing real results needs

    def bounded():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    try:
        done = subprocess.run([sys.executable, "-m", "dbio", *argv], capture_output=True, text=True,
                              timeout=30, preexec_fn=bounded)
    except subprocess.TimeoutExpired:
        pytest.fail(f"dbio {' '.join(argv)} still reading after 30 s")
    err = done.stderr
    assert done.returncode == 2, err
    assert len(err.strip().splitlines()) == 1, err
    assert str(target) in err
    assert ("not a plain file" if plant != "huge" else "larger than") in err
