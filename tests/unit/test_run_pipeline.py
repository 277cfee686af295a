"""The whole run pipeline on the fake engine (tests/fake_engine.py): no database.

connect -> barrier -> slices -> samples -> assemble -> result.json -> reports in every format.
The fake engine's counters are exact (every session runs fake_engine.ITERATIONS_PER_SECOND
statements a second, each reading work_unit blocks at READ_US a read), so the figures dbio
derives can be checked, not only their presence. The runs are in virtual time (dbio/run/clock.py: the
timeline exact, milliseconds of wall time each), but the disk guard's cancel, timed on the machine's clock.
"""

from __future__ import annotations

import dataclasses
import re
import json
from pathlib import Path

import pytest

from dbio import report
from dbio import result as results
from dbio.jobs import run as run_job
from dbio.config import Sources, load_config
from dbio.errors import UsageError
from dbio.report import verdict
from dbio.run.plan import make_plan
from dbio.target import Target
from dbio.ui import UI
from tests import fake_engine
from tests.virtual_time import VirtualTime
from tests.fake_engine import FakeEngine
from tests.lateness import Lateness
from tests.fake_runs import READS_PER_S, SESSIONS, STATEMENTS_PER_S, WORK_UNIT
from tests.fake_runs import run_config as _config, run_loaded as _run
from dbio.result_records import of

FIXTURES_FORMAT2 = Path(__file__).parent.parent / "fixtures" / "result_format2.json"

@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """The shared run, in virtual time (dbio/run/clock.py): its timeline exact, in milliseconds of wall time."""
    engine = FakeEngine(time=VirtualTime())
    return engine, _run(tmp_path_factory.mktemp("fake"), engine, update_pct=25)


def test_a_run_on_the_fake_engine_completes_and_leaves_no_connection(finished):
    engine, outcome = finished
    assert outcome.status == "complete", outcome.document["status_reason"]
    assert not engine.server.connections
    assert not engine.server.runs


def test_window_figures_are_the_engine_s_rates(finished):
    _, outcome = finished
    figures = outcome.document["figures"]
    assert figures["window_seconds"] == pytest.approx(3.0, abs=0.3)
    assert figures["load_profile"]["physical_reads_per_s"] == pytest.approx(READS_PER_S, rel=0.1)
    assert figures["load_profile"]["statements_per_s"] == pytest.approx(STATEMENTS_PER_S, rel=0.1)
    assert figures["load_profile"]["updates_per_s"] == pytest.approx(STATEMENTS_PER_S / fake_engine.UPDATE_EVERY,
                                                                     rel=0.1)
    assert figures["latency"]["avg_read_us"] == pytest.approx(fake_engine.READ_US)
    statements = figures["latency"]["statements"]["select"]
    assert statements["mean_us"] == pytest.approx(WORK_UNIT * fake_engine.READ_US)


def test_every_measured_interval_is_a_sample_with_the_engine_s_rate(finished):
    _, outcome = finished
    rows = [r for r in outcome.document["series"] if r.get("phase") == "measured" and not r.get("gap")]
    assert len(rows) == 3
    for row in rows:
        assert row["reads_per_s"] == pytest.approx(READS_PER_S, rel=0.15)
    lines = (outcome.directory / results.SAMPLES_FILE).read_text().splitlines()
    assert len(lines) >= 4  # the start, three measured seconds (and the warm-up second)


@pytest.fixture(scope="module")
def rendered(finished):
    """The shared run's result as read back, and its report in every format: rendered once for the tests
    that only read them (the HTML's charts take about a second)."""
    _, outcome = finished
    document = results.read(outcome.directory)
    return document, {form: report.render(of(document), form) for form in report.FORMATS}


def test_the_result_reads_back_and_renders_in_every_format(finished, rendered):
    _, outcome = finished
    document, texts = rendered
    assert document["capabilities"]["engine"] == "fake"
    lines = texts["text"].splitlines()
    # the verdict first; no finding stands above the headline (the run is valid), only what the fake engine
    # cannot measure
    assert lines[0] == "VALID storage result"
    assert document["verdict"] == {"valid": True, "reasons": []}  # machine-readable, in result.json
    assert texts["md"].startswith("**VALID storage result**") and 'id="verdict">VALID storage result' in texts["html"]
    assert lines[3] == "NOT MEASURED: process CPU (why: see Verdict and warnings)" and lines[4].startswith("Headline:")
    for form in report.FORMATS:
        assert "Fake 1.0" in texts[form], form
    json.loads(texts["json"])
    assert (outcome.directory / results.REPORT_FILE).exists()
    assert (outcome.directory / results.HTML_REPORT_FILE).exists()


def test_the_report_words_itself_with_the_engine_s_own_facts(rendered):
    """Cache name, settings listed, timed I/O: what the fake engine's capabilities declare, never
    PostgreSQL's names."""
    document, texts = rendered
    assert document["figures"]["validity"]["cache_bytes"] == 16 * fake_engine.BLOCK
    for form in report.FORMATS:
        text = texts[form]
        assert f"x {fake_engine.CACHE_NAME} (128 KiB)" in text, form
        assert "fake_cache_blocks 16, fake_sync on" in text and "fake_hidden" not in text, form
        for postgres_name in ("shared_buffers", "track_io_timing", "autovacuum", "pg_wal"):
            assert postgres_name not in text, (form, postgres_name)
    assert document["figures"]["latency"]["avg_wal_write_us"] is None  # times_redo_io is False


def test_a_data_set_the_engine_caches_is_refused_in_its_own_words(tmp_path):
    engine = FakeEngine()
    conn = engine.connect("fake:", application_name="test")
    info = dataclasses.replace(engine.probe(conn), cache_bytes=1 << 30)
    with pytest.raises(UsageError, match=f"fits in {fake_engine.CACHE_NAME} \\(1 GiB\\)"):
        run_job.check_server(info, _config(tmp_path, scale=40000, allow_cached=False))


def test_a_checkpoint_in_the_window_is_found_from_the_neutral_counters(finished):
    _, outcome = finished
    document = results.read(outcome.directory)  # a copy of its own: the shared run is left as it was
    assert "checkpoint" not in {f.code for f in verdict.findings(of(document))}
    begin = document["normalized"]["begin"]["checkpoints"]
    document["normalized"]["end"]["checkpoints"] = {"done": begin["done"] + 2,
                                                    "buffers_written": begin["buffers_written"] + 64}
    (finding,) = [f for f in verdict.findings(of(document)) if f.code == "checkpoint"]
    assert finding.message.startswith("2 checkpoint(s) ran inside the window and wrote 64 buffers")


def test_the_fake_engine_fills_the_neutral_counter_record():
    import asyncio

    from dbio.engines import counters

    engine = FakeEngine()
    conn = engine.connect("fake:", application_name="test")
    raw = asyncio.run(engine.snapshot(conn, engine.probe(conn)))
    assert counters.problems(engine.normalize(raw)) == []


def test_a_run_of_one_node_has_no_nodes_section(finished):
    _, outcome = finished
    assert "\nNodes\n" not in report.render(of(outcome.document), "text")


def test_an_agreed_start_too_near_is_refused_before_anything_runs():
    from dbio.errors import UsageError
    from dbio.run.plan import RunPlan

    plan = RunPlan(1, (1,), 5.0, 10.0, 0, {}, (), 1, start=1000.0)
    with pytest.raises(UsageError, match="needs 10 s to connect and 5 s of warm-up"):
        run_job.check_start_at(plan, now=995.0)
    with pytest.raises(UsageError, match="passed"):
        run_job.check_start_at(plan, now=1010.0)
    run_job.check_start_at(plan, now=980.0)


def test_runs_that_did_not_measure_the_same_seconds_are_not_merged(finished, tmp_path):
    from dbio.errors import UsageError
    from dbio.commands import merge as merge_command

    _, outcome = finished
    with pytest.raises(UsageError, match="windows do not overlap"):
        merge_command.merge([outcome.directory, FIXTURES_FORMAT2], None, tmp_path / "m", None, UI(quiet=True))
    assert not (tmp_path / "m").exists()


def test_updates_with_their_own_range_are_priced_row_for_row(tmp_path):
    """update_work_unit: the UPDATEs' rows count as theirs in the rows-per-block check."""
    engine = FakeEngine(time=VirtualTime())
    outcome = _run(tmp_path, engine, update_pct=25, update_work_unit=2, run_time=1, warmup=0)  # exact rates: any length
    f = outcome.document["figures"]
    assert f["validity"]["blocks_read_per_row"] == pytest.approx(1.0)
    update = f["latency"]["statements"]["update"]
    assert update["mean_us"] == pytest.approx(2 * fake_engine.READ_US)


class _LastSessionRefused(FakeEngine):
    """The last session cannot connect, after the others went to wait at the barrier."""

    async def connect_session(self, conninfo, *, application_name, schema_index, access_path, info):
        if application_name.endswith(f":{SESSIONS}"):
            import asyncio

            await asyncio.sleep(0.2)
            raise UsageError("cannot connect to the fake server: too many clients", "raise max_connections")
        return await super().connect_session(conninfo, application_name=application_name, schema_index=schema_index,
                                             access_path=access_path, info=info)


def test_a_session_that_cannot_connect_sends_the_waiting_ones_away_and_leaves_nothing(tmp_path):
    engine = _LastSessionRefused(time=VirtualTime())
    with pytest.raises(Exception) as caught:
        _run(tmp_path, engine)
    assert f"1 of {SESSIONS} sessions could not connect: cannot connect to the fake server" in str(caught.value)
    assert not engine.server.connections  # the sessions at the barrier were released and closed
    assert not engine.server.runs


class _EverySessionRefused(FakeEngine):
    """No session can connect: nothing started, so nothing is waiting at the barrier."""

    async def connect_session(self, conninfo, *, application_name, schema_index, access_path, info):
        raise UsageError("cannot connect to the fake server: too many clients", "raise max_connections")


def test_no_session_that_can_connect_is_said_in_one_line_not_an_internal_error(tmp_path):
    engine = _EverySessionRefused(time=VirtualTime())
    with pytest.raises(Exception) as caught:
        _run(tmp_path, engine)
    said = str(caught.value)
    assert f"{SESSIONS} of {SESSIONS} sessions could not connect: cannot connect to the fake server" in said
    assert not engine.server.connections
    assert not engine.server.runs


class _SixteenKiBPages(FakeEngine):
    """The fake engine with InnoDB's default page: a row a 16 KiB page, as the mysql engine loads it."""

    def probe(self, conn):
        info = super().probe(conn)
        return dataclasses.replace(info, caps=dataclasses.replace(info.caps, page_bytes=16384))


def test_the_data_set_is_the_engine_s_pages_a_row_each(tmp_path):
    """--scale counts 8 KiB rows; with a row a 16 KiB page the table, and so the data set the result
    records and the cache check weighs, is twice that."""
    engine = _SixteenKiBPages(time=VirtualTime())
    outcome = _run(tmp_path, engine, run_time=1, warmup=0)  # only the data set's size is checked
    assert outcome.document["figures"]["validity"]["data_bytes"] == 2000 * 16384
    info = dataclasses.replace(engine.probe(engine.connect("fake:", application_name="test")), cache_bytes=400 << 20)
    run_job.check_server(info, _config(tmp_path, scale=40000, allow_cached=False))  # 625 MiB of pages
    eight = dataclasses.replace(info, caps=dataclasses.replace(info.caps, page_bytes=8192))
    with pytest.raises(UsageError, match="the data set \\(312"):
        run_job.check_server(eight, _config(tmp_path, scale=40000, allow_cached=False))


def test_setup_asks_for_the_space_of_a_page_a_row():
    from dbio.jobs.setup import space_needed
    from dbio.engines.base import SetupSpec

    spec = SetupSpec(40000, 2, 1000, "random")
    assert space_needed(spec, page_bytes=16384) - space_needed(spec) == (2 * 40000 + 1000) * 8192 * 11 // 10


def test_an_update_run_stops_before_the_disk_fills(tmp_path, monkeypatch):
    """The servers' filesystem loses room fast: the run stops at once, failed, with what ran kept."""
    from dbio.run import disk_guard

    left = iter([900 << 20, 900 << 20, 800 << 20, 700 << 20, 20 << 20])  # the check before the start, then the run's
    monkeypatch.setattr(run_job, "written_paths", lambda storages: (str(tmp_path),))
    monkeypatch.setattr(disk_guard, "tightest", lambda paths: (next(left, 20 << 20), str(tmp_path)))
    outcome = _run(tmp_path, FakeEngine(time=VirtualTime()), update_pct=25, run_time=10, warmup=0)
    doc = outcome.document
    assert doc["status"] == "failed"
    # with why it stopped with room left: the floor kept there, and the rate half a second more would use
    assert re.fullmatch(f"stopped before the disk filled: 20 MiB left on the filesystem of {re.escape(str(tmp_path))}, "
                        r"where the server writes \(32 MiB are kept free there, and it was using [\d,]+ MiB/s\)",
                        doc["status_reason"]), doc["status_reason"]
    assert doc["timeline"]["window_seconds"] < 5  # stopped at once, not at the end of the 10 s
    assert doc["figures"]["load_profile"]["physical_reads_per_s"] > 0  # what ran is kept


def test_an_update_run_with_no_room_to_write_is_refused_before_it_starts(tmp_path, monkeypatch):
    from dbio.run import disk_guard

    monkeypatch.setattr(run_job, "written_paths", lambda storages: (str(tmp_path),))
    monkeypatch.setattr(disk_guard, "tightest", lambda paths: (19 << 20, str(tmp_path)))
    with pytest.raises(UsageError, match=f"an update run needs room to write: 19 MiB free where {tmp_path} is"):
        _run(tmp_path, FakeEngine(time=VirtualTime()), update_pct=25, run_time=10, warmup=0)
    assert not list((tmp_path / "results").glob("*/result.json"))  # nothing ran
    _run(tmp_path, FakeEngine(time=VirtualTime()), update_pct=0, run_time=1, warmup=0)  # reads only: no room needed


def test_the_servers_growth_step_is_kept_free_besides_the_floor(tmp_path, monkeypatch):
    """A server that grows a file 64 MiB at once (InnoDB's autoextend increment) needs twice 64 MiB more to start,
    and the guard stops its run that much earlier."""
    from dbio.run import disk_guard

    engine = FakeEngine(time=VirtualTime())
    probe = engine.probe
    monkeypatch.setattr(engine, "probe", lambda conn: dataclasses.replace(probe(conn), caps=dataclasses.replace(
        probe(conn).caps, growth_step_bytes=64 << 20, growth_step_setting="innodb_autoextend_increment")))
    monkeypatch.setattr(run_job, "written_paths", lambda storages: (str(tmp_path),))
    monkeypatch.setattr(disk_guard, "tightest", lambda paths: (180 << 20, str(tmp_path)))
    with pytest.raises(UsageError, match=f"180 MiB free where {tmp_path} is, under the 192 MiB it starts with "
                                         "\\(innodb_autoextend_increment lets the server grow a file by 64 MiB"):
        _run(tmp_path, engine, update_pct=25, run_time=10, warmup=0)
    left = iter([300 << 20, 300 << 20, 300 << 20, 150 << 20])  # 150 MiB: room for the 32 MiB floor and one step
    monkeypatch.setattr(disk_guard, "tightest", lambda paths: (next(left, 150 << 20), str(tmp_path)))
    doc = _run(tmp_path, engine, update_pct=25, run_time=10, warmup=0).document
    assert doc["status"] == "failed" and doc["status_reason"].startswith("stopped before the disk filled: 150 MiB left")


def test_the_disk_guard_cancels_the_running_statements_at_once_even_in_the_warm_up(tmp_path, monkeypatch):
    """The guard's stop only set the flag the drain reads, and in the warm-up the drain came to it once the
    sessions had ended their slices (1.0-1.1 s after the stop on a managed MariaDB with 8 sessions updating, time
    for InnoDB to grow ibdata1 by 64 MiB twice more): the guard cancels them itself. On the machine's clock: this
    file's run in real time."""
    import time

    from dbio.run import disk_guard

    engine = FakeEngine()
    cancels: list[float] = []

    async def cancel(conn, timeout):
        cancels.append(time.monotonic())
        return True

    monkeypatch.setattr(engine, "cancel_statement", cancel)
    monkeypatch.setattr(run_job, "written_paths", lambda storages: (str(tmp_path),))
    left, stopped = iter([300 << 20, 300 << 20]), []  # the start check's, the guard's first; then 40 MiB

    def tightest(paths):
        free = next(left, 40 << 20)
        if free < 300 << 20 and not stopped:
            stopped.append(time.monotonic())
        return free, str(tmp_path)

    monkeypatch.setattr(disk_guard, "tightest", tightest)
    with Lateness() as late:
        doc = _run(tmp_path, engine, update_pct=25, run_time=10, warmup=5).document
    assert doc["status_reason"].startswith("stopped before the disk filled: 40 MiB left")
    assert cancels and cancels[0] - stopped[0] < late.allow(0.1), (cancels[0] - stopped[0], late.worst)


def test_room_runs_out_when_half_a_second_more_at_the_last_second_s_rate_would_use_the_floor():
    from dbio.run import disk_guard

    mib = 1 << 20
    assert not disk_guard.runs_out([(0.0, 100 * mib)])  # the first check: room enough
    assert disk_guard.runs_out([(0.0, 20 * mib)])  # under the floor
    steady = [(t / 10, (200 - 6 * t) * mib) for t in range(11)]  # 60 MiB/s, 140 MiB left: 30 more leave 110
    assert not disk_guard.runs_out(steady)
    assert disk_guard.runs_out([*steady, (1.1, 55 * mib)])  # 85 MiB in a second: 42 more leave 13 MiB, under 32
    burst = [(0.0, 100 * mib), (0.9, 100 * mib), (1.0, 68 * mib)]  # a 32 MiB segment at once, over a second
    assert not disk_guard.runs_out(burst)  # 32 MiB/s: 16 more leave 52 MiB
    assert not disk_guard.runs_out([(0.0, 60 * mib), (1.0, 100 * mib)])  # room freed (a checkpoint removed WAL)


def test_the_places_an_update_run_guards_are_where_the_servers_write():
    storages = [{"data_directory": {"path": "/d"}, "wal": {"path": "/w"}, "tablespaces": [{"path": "/t"}]},
                {"data_directory": {"path": "/d2", "error": "unreadable"}, "wal": None}, {"data_directory": None}]
    assert run_job.written_paths(storages) == ("/d", "/t", "/w")


def test_one_session_is_not_plural_in_the_progress(tmp_path):
    import io

    from rich.console import Console

    engine = FakeEngine(time=VirtualTime())
    config = _config(tmp_path, threads_per_schema=1, run_time=1, warmup=0)
    conn = engine.connect("fake:", application_name="test")
    from dbio.engines.base import SetupSpec

    record = engine.begin_setup(conn, SetupSpec(2000, 1, 0, config.workload.key_order), setup_id="s1",
                                server_version=engine.version)
    engine.finish_setup(conn, record)
    engine.close(conn)
    ui = UI(Console(file=io.StringIO(), force_terminal=False, width=200))
    run_job.run_on([Target(engine, "fake:", None)], config, ui, run_job.run_directory(config),
                       make_plan(config.workload, 1), clock=engine.time)
    out = ui.console.file.getvalue()
    assert "connecting 1 session\n" in out, out


def test_quickstart_says_its_data_set_in_the_units_reports_use(tmp_path, monkeypatch):
    import io

    from rich.console import Console

    from dbio.commands import quickstart
    from dbio.jobs import setup as setup_job

    class Stop(Exception):
        pass

    def no_setup(*_, **__):
        raise Stop  # only quickstart's first line matters: nothing is created

    monkeypatch.setattr(setup_job, "setup", no_setup)
    config = load_config(Sources(env={}, cli={"scale": "256MiB", "threads_per_schema": 1,
                                              "data_dir": str(tmp_path / "instance")}, cwd=tmp_path))
    ui = UI(Console(file=io.StringIO(), width=200))
    with pytest.raises(Stop):
        quickstart.quickstart(config, ui)
    first = ui.console.file.getvalue().splitlines()[0]
    assert first.startswith("dbio quickstart: 1 session, 256 MiB data set"), first  # it said "0.2 GiB"


def test_a_read_only_run_settles_what_an_earlier_run_left_and_says_so(tmp_path):
    engine = FakeEngine(time=VirtualTime())
    engine.server.unsettled = True  # an earlier run's changes, still to be done
    done = _run(tmp_path, engine, update_pct=0, run_time=1, warmup=0)  # settling comes before the window: any length
    settled = [e for e in done.document["events"] if e["kind"] == "settled"]
    assert engine.server.settles == 1 and not engine.server.unsettled
    assert len(settled) == 1 and "the fake server's pending work (0.2 s)" in settled[0]["message"]
    assert "before this read-only run" in settled[0]["message"] and settled[0]["seconds"] == 0.25


def test_a_data_set_at_rest_is_settled_silently_and_an_update_run_never_settles(tmp_path):
    engine = FakeEngine(time=VirtualTime())
    at_rest = _run(tmp_path / "a", engine, update_pct=0, run_time=1, warmup=0)  # settling is before the window
    assert engine.server.settles == 1 and not [e for e in at_rest.document["events"] if e["kind"] == "settled"]
    engine.server.unsettled = True
    _run(tmp_path / "b", engine, update_pct=20, run_time=1, warmup=0)
    assert engine.server.settles == 1 and engine.server.unsettled


# 400 iterations a second each: 1 s of warm-up holds about 400 of a session's 1,000
WORK_LOOP = 1000


@pytest.mark.parametrize("scope", ["session", "window"])
def test_work_loop_bounds_each_session_s_total_or_its_window_s_iterations(tmp_path, scope):
    """SLOB's WORK_LOOP bounds each session's whole work, warm-up included (scope session); dbio's own
    meaning (window) bounds the measured part, after the warm-up."""
    outcome = _run(tmp_path, FakeEngine(time=VirtualTime()), run_time=0, warmup=1, work_loop=WORK_LOOP,
                   work_loop_scope=scope)
    assert outcome.status == "complete", outcome.document["status_reason"]
    assert outcome.document["config"]["workload"]["work_loop_scope"] == scope
    sessions = outcome.document["sessions"]
    assert len(sessions) == SESSIONS and all(s["warmup_iterations"] > 0 for s in sessions)
    for s in sessions:
        counted = s["warmup_iterations"] + s["iterations"] if scope == "session" else s["iterations"]
        assert counted == WORK_LOOP, s


def test_a_work_loop_the_warm_up_uses_up_is_a_failed_run_that_says_why(tmp_path):
    outcome = _run(tmp_path, FakeEngine(time=VirtualTime()), run_time=0, warmup=2, work_loop=100,
                   work_loop_scope="session")
    assert outcome.status == "failed"
    reason = outcome.document["status_reason"]
    assert "during the 2 s warm-up" in reason and "work_loop_scope" in reason, reason


def test_the_report_says_which_iterations_work_loop_counted(tmp_path):
    outcome = _run(tmp_path, FakeEngine(time=VirtualTime()), run_time=0, warmup=1, work_loop=WORK_LOOP,
                   work_loop_scope="session")
    assert f"work loop {WORK_LOOP} per session, warm-up included" in report.render(of(outcome.document), "text")
    window = dict(outcome.document, config={**outcome.document["config"], "workload": {
        **outcome.document["config"]["workload"], "work_loop_scope": "window"}})
    assert f"work loop {WORK_LOOP} per session, in the window" in report.render(of(window), "text")


def test_single_reads_are_the_probe_s_lookups_timed_by_the_engine(finished):
    """The fake engine times every probe read at READ_US: the distribution sits there, its count is about
    the probe's rate over the window, and the result says how it was measured."""
    from dbio.run.read_probe import RATE_PER_S
    from dbio.stats import catalogue

    _, done = finished
    doc = json.loads((done.directory / results.RESULT_FILE).read_text())
    figures = catalogue.figures_of(doc)
    single = catalogue.single_reads(figures)
    seconds = figures["window_seconds"]
    assert 0.5 * RATE_PER_S * seconds <= single["count"] <= 1.2 * RATE_PER_S * seconds + 2
    for name in ("single_read_p50_us", "single_read_p99_us", "single_read_p99_9_us"):
        assert fake_engine.READ_US * 0.875 <= catalogue.value(figures, name) <= fake_engine.READ_US, name
    assert single["method"] == FakeEngine.read_probe_method and single["rate_per_s"] == RATE_PER_S
    assert single["blocks_read"] == single["lookups"] == single["count"]
    assert doc["read_probe"]["node1"]["single"] == single["count"]



@pytest.mark.parametrize("warmup", [0, 1])
def test_a_release_answered_late_waits_for_it_and_counts_every_measured_slice_once(tmp_path, warmup):
    """The server lets the sessions go, but its answer to dbio's release comes 1.5 s later (a loaded host or
    network): the sessions' first slices come back before dbio knows the start (they once failed on the
    window's unknown opening), wait for it, and the window's statements are those its sessions counted."""
    engine = FakeEngine(time=VirtualTime())
    engine.server.release_answer_late = 1.5
    outcome = _run(tmp_path, engine, warmup=warmup)
    document = outcome.document
    assert outcome.status == "complete", document["status_reason"]
    assert [s["state"] for s in document["sessions"]] == ["done"] * SESSIONS
    figures = document["figures"]
    counted = sum(s["iterations"] for s in document["sessions"])
    assert figures["load_profile"]["statements_per_s"] * figures["window_seconds"] == pytest.approx(counted)
    # the sessions never sat idle for it: with no warm-up they worked on, with one they waited inside it
    assert figures["load_profile"]["statements_per_s"] == pytest.approx(STATEMENTS_PER_S, rel=0.02)
    # the start the late answer carried was not "now" on its arrival (that made the server's clock 1.5 s
    # behind this host's): the clocks' offset is measured apart; the fake server's clock is this host's
    assert document["timeline"]["clock_offset_seconds"] == pytest.approx(0.0, abs=0.01)
    assert not engine.server.connections and not engine.server.runs


def test_a_release_answered_late_leaves_each_interval_at_its_rate(tmp_path):
    """No warm-up, the release's answer 1.5 s late: the sessions worked on, and their first slices ended (their
    counters published) before dbio knew the start. The interval those slices cover is read at the rate they
    ran, not over the 1.5 s the answer took (it read 2/3 of it: its slices were not yet placed when sampled)."""
    engine = FakeEngine(time=VirtualTime())
    engine.server.release_answer_late = 1.5
    document = _run(tmp_path, engine, warmup=0).document
    rows = document["series"]
    assert rows, "no interval in the series"
    for row in rows:
        assert row["seconds"] == pytest.approx(1.0, abs=0.01), row["k"]
        assert row["statements_per_s"] == pytest.approx(STATEMENTS_PER_S, rel=0.02), row["k"]
        assert row["reads_per_s"] == pytest.approx(READS_PER_S, rel=0.02), row["k"]
