"""The whole run pipeline on the fake engine (tests/fake_engine.py): no database.

connect -> barrier -> slices -> samples -> assemble -> result.json -> reports in every format.
The fake engine's counters are exact (every session runs fake_engine.ITERATIONS_PER_SECOND
statements a second, each reading work_unit blocks at READ_US a read), so the figures dbio
derives can be checked, not only their presence.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import json
from pathlib import Path
from typing import Any

import pytest

from dbio import report
from dbio import result as results
from dbio.commands import run as run_command
from dbio.config import Sources, load_config
from dbio.errors import UsageError
from dbio.report import verdict
from dbio.run.nodes import Node
from dbio.run.plan import make_plan
from dbio.target import Target
from dbio.ui import UI
from tests import fake_engine
from tests.fake_engine import FakeEngine

FIXTURES_FORMAT2 = Path(__file__).parent.parent / "fixtures" / "result_format2.json"
SESSIONS = 3
WORK_UNIT = 8
STATEMENTS_PER_S = SESSIONS * fake_engine.ITERATIONS_PER_SECOND
READS_PER_S = STATEMENTS_PER_S * WORK_UNIT


def _config(tmp_path: Path, **cli):
    options = {"schemas": 1, "threads_per_schema": SESSIONS, "scale": 2000, "run_time": 3, "warmup": 1,
               "results_dir": str(tmp_path / "results"), "allow_cached": True,
               "work_unit": WORK_UNIT, **cli}
    return load_config(Sources(env={}, cli=options, cwd=tmp_path))


def _run(tmp_path: Path, engine: FakeEngine, **cli) -> run_command.RunResult:
    config = _config(tmp_path, **cli)
    conn = engine.connect("fake:", application_name="test")
    from dbio.engines.base import SetupSpec

    record = engine.begin_setup(conn, SetupSpec(2000, 1, 0, config.workload.key_order), setup_id="s1",
                                server_version=engine.version)
    engine.finish_setup(conn, record)
    engine.close(conn)
    directory = run_command.run_directory(config)
    target = Target(engine, "fake:", None)
    return run_command.run_on([target], config, UI(quiet=True), directory, make_plan(config.workload, 1))


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    engine = FakeEngine()
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
    return document, {form: report.render(document, form) for form in report.FORMATS}


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
        run_command.check_server(info, _config(tmp_path, scale=40000, allow_cached=False))


def test_a_checkpoint_in_the_window_is_found_from_the_neutral_counters(finished):
    _, outcome = finished
    document = results.read(outcome.directory)  # a copy of its own: the shared run is left as it was
    assert "checkpoint" not in {f.code for f in verdict.findings(document)}
    begin = document["normalized"]["begin"]["checkpoints"]
    document["normalized"]["end"]["checkpoints"] = {"done": begin["done"] + 2,
                                                    "buffers_written": begin["buffers_written"] + 64}
    (finding,) = [f for f in verdict.findings(document) if f.code == "checkpoint"]
    assert finding.message.startswith("2 checkpoint(s) ran inside the window and wrote 64 buffers")


def test_the_fake_engine_fills_the_neutral_counter_record():
    import asyncio

    from dbio.engines import counters

    engine = FakeEngine()
    conn = engine.connect("fake:", application_name="test")
    raw = asyncio.run(engine.snapshot(conn, engine.probe(conn)))
    assert counters.problems(engine.normalize(raw)) == []


def test_a_run_over_two_nodes_has_each_node_s_figures_and_their_total(tmp_path, short_start_lead):
    config = _config(tmp_path, threads_per_schema=4)
    nodes = []
    for name in ("a", "b"):
        engine = FakeEngine(version=f"Fake 1.0 {name}")
        conn = engine.connect("fake:", application_name="test")
        nodes.append(Node(name, engine, "fake:", engine.probe(conn)))
        engine.close(conn)
    outcome = run_command.measure(nodes, config, UI(quiet=True), run_command.run_directory(config),
                                  make_plan(config.workload, 1), {}, {"data_directory": None, "wal": None})
    document = results.read(outcome.directory)
    assert document["status"] == "complete", document["status_reason"]
    assert document["format_version"] == results.FORMAT_VERSION
    assert [s["node"] for s in document["sessions"]] == ["a", "b", "a", "b"]  # dealt in turn
    per_node = 2 * fake_engine.ITERATIONS_PER_SECOND * WORK_UNIT
    figures = {n["name"]: n["figures"]["load_profile"]["physical_reads_per_s"] for n in document["nodes"]}
    assert figures == {"a": pytest.approx(per_node, rel=0.1), "b": pytest.approx(per_node, rel=0.1)}
    total = document["figures"]["load_profile"]["physical_reads_per_s"]
    assert total == pytest.approx(2 * per_node, rel=0.1)
    for node in document["nodes"]:
        assert len([r for r in node["series"] if r.get("phase") == "measured"]) >= 3
        assert node["figures"]["load_profile"]["statements_per_s"] == pytest.approx(
            2 * fake_engine.ITERATIONS_PER_SECOND, rel=0.1)
    # one start for both nodes (the first node's release fixes it), and nothing left on either
    assert nodes[0].engine.server.starts == nodes[1].engine.server.starts and nodes[0].engine.server.starts
    assert all(not n.engine.server.runs and not n.engine.server.connections for n in nodes)
    text = report.render(document, "text")
    nodes = text[text.index("\nNodes\n"):]
    rows = {line.split()[0]: line.split() for line in nodes.splitlines()
            if line.split() and line.split()[0] in ("a", "b", "total")}
    assert set(rows) == {"a", "b", "total"}
    assert rows["a"][1:3] == ["primary", "2"] and rows["total"][1:3] == ["-", "4"]
    assert f"{figures['a']:,.0f}" == rows["a"][3] and f"{total:,.0f}" == rows["total"][3]
    for node in document["nodes"]:  # each node's own wait samples: its 2 sessions, half on CPU, half reading
        counts = node["waits"]["counts"]
        assert set(counts) == {"CPU", "IO:DataFileRead"} and counts["CPU"] == counts["IO:DataFileRead"]
    assert rows["a"][-2:] == ["IO:DataFileRead", "50%"]
    for form in report.FORMATS:
        report.render(document, form)


def test_a_run_of_one_node_has_no_nodes_section(finished):
    _, outcome = finished
    assert "\nNodes\n" not in report.render(outcome.document, "text")


def test_a_start_agreed_in_advance_opens_the_window_at_that_instant(tmp_path, short_start_lead):
    """--start-at: runs launched on several hosts each open their window at the same instant."""
    import datetime as dt
    import time as clock

    window_at = clock.time() + 2.0  # start in 1 s (1 s warm-up): time to connect before the barriers open
    iso = dt.datetime.fromtimestamp(window_at, dt.timezone.utc).isoformat()
    config = _config(tmp_path, start_at=iso, warmup=1)
    assert config.run.start_at == pytest.approx(window_at)
    engine = FakeEngine()
    conn = engine.connect("fake:", application_name="test")
    nodes = [Node("a", engine, "fake:", engine.probe(conn))]
    engine.close(conn)
    outcome = run_command.measure(nodes, config, UI(quiet=True), run_command.run_directory(config),
                                  make_plan(config.workload, 1, config.run.start_at), {}, {})
    timeline = results.read(outcome.directory)["timeline"]
    assert outcome.status == "complete"
    assert engine.server.starts == [pytest.approx(window_at - 1.0, abs=1e-6)]  # the start: warm-up before it
    assert 0 <= timeline["released_late_seconds"] < 0.2
    assert timeline["window_at"] == results.iso(window_at)
    opened = dt.datetime.fromisoformat(timeline["window_start"]).timestamp()
    assert opened == pytest.approx(window_at, abs=0.25)


def test_an_agreed_start_too_near_is_refused_before_anything_runs():
    from dbio.errors import UsageError
    from dbio.run.plan import RunPlan

    plan = RunPlan(1, (1,), 5.0, 10.0, 0, {}, (), 1, start=1000.0)
    with pytest.raises(UsageError, match="needs 10 s to connect and 5 s of warm-up"):
        run_command.check_start_at(plan, now=995.0)
    with pytest.raises(UsageError, match="passed"):
        run_command.check_start_at(plan, now=1010.0)
    run_command.check_start_at(plan, now=980.0)


def test_runs_of_two_hosts_at_one_agreed_start_merge_into_one_result(tmp_path, short_start_lead):
    """The many-hosts workflow on fake servers: two independent runs (as two hosts would launch
    them) with one --start-at measure the same seconds; dbio merge makes them one result."""
    import datetime as dt
    import threading
    import time as clock

    from dbio.commands import merge as merge_command

    window_at = clock.time() + 2.0  # start in 1 s (1 s warm-up): time to connect before the barriers open
    iso = dt.datetime.fromtimestamp(window_at, dt.timezone.utc).isoformat()
    outcomes: dict[str, Any] = {}

    def host(name: str, sessions: int) -> None:
        config = _config(tmp_path / name, start_at=iso, threads_per_schema=sessions, label=name)
        engine = FakeEngine(version=f"Fake 1.0 {name}")
        conn = engine.connect("fake:", application_name="test")
        node = Node("node1", engine, "fake:", engine.probe(conn))
        engine.close(conn)
        outcomes[name] = run_command.measure([node], config, UI(quiet=True), run_command.run_directory(config),
                                             make_plan(config.workload, 1, config.run.start_at), {}, {})

    threads = [threading.Thread(target=host, args=(name, n)) for name, n in (("east", 1), ("west", 3))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    merged = merge_command.merge([outcomes["east"].directory, outcomes["west"].directory], None,
                                 tmp_path / "merged", None, UI(quiet=True))
    document = results.read(merged)
    assert [n["name"] for n in document["nodes"]] == ["east", "west"]
    east, west = (n["figures"]["load_profile"]["physical_reads_per_s"] for n in document["nodes"])
    assert west == pytest.approx(3 * east, rel=0.15)
    total = document["figures"]["load_profile"]["physical_reads_per_s"]
    assert total == pytest.approx(4 * fake_engine.ITERATIONS_PER_SECOND * WORK_UNIT, rel=0.1)
    assert total == pytest.approx(east + west, rel=0.02)
    assert document["timeline"]["overlap_seconds"] > 2.8  # 3 s windows that opened within a fraction of a second
    assert [s["node"] for s in document["sessions"]].count("west") == 3
    text = (merged / results.REPORT_FILE).read_text()
    assert "\nNodes\n" in text and "Merged    from 2 runs (east, west)" in text
    assert 0 <= document["timeline"]["start_skew_seconds"] < 0.5
    assert "their starts " in document["events"][0]["message"] and " s apart" in document["events"][0]["message"]
    # the same run twice, or a copy of it, would count its reads twice
    copy = tmp_path / "copy-of-east"
    shutil.copytree(outcomes["east"].directory, copy)
    for twice in ([outcomes["east"].directory, outcomes["east"].directory], [outcomes["east"].directory, copy]):
        with pytest.raises(UsageError, match=r"are the same run \(.*\): each would count its reads twice"):
            merge_command.merge(twice, ["a", "b"], tmp_path / "twice", None, UI(quiet=True))
    assert not (tmp_path / "twice").exists()


def test_runs_of_different_workloads_are_not_merged(tmp_path, short_start_lead):
    import datetime as dt
    import threading
    import time as clock

    from dbio.commands import merge as merge_command

    iso = dt.datetime.fromtimestamp(clock.time() + 2.0, dt.timezone.utc).isoformat()
    outcomes: dict[str, Any] = {}

    def host(name: str, update_pct: int) -> None:
        config = _config(tmp_path / name, start_at=iso, update_pct=update_pct, label=name)
        engine = FakeEngine()
        conn = engine.connect("fake:", application_name="test")
        node = Node("node1", engine, "fake:", engine.probe(conn))
        engine.close(conn)
        outcomes[name] = run_command.measure([node], config, UI(quiet=True), run_command.run_directory(config),
                                             make_plan(config.workload, 1, config.run.start_at), {}, {})

    threads = [threading.Thread(target=host, args=args) for args in (("east", 20), ("west", 100))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    with pytest.raises(UsageError, match=r"ran different workloads \(update_pct 20 vs 100\)"):
        merge_command.merge([outcomes["east"].directory, outcomes["west"].directory], None, tmp_path / "m", None,
                            UI(quiet=True))
    assert not (tmp_path / "m").exists()


def test_runs_that_did_not_measure_the_same_seconds_are_not_merged(finished, tmp_path):
    from dbio.errors import UsageError
    from dbio.commands import merge as merge_command

    _, outcome = finished
    with pytest.raises(UsageError, match="windows do not overlap"):
        merge_command.merge([outcome.directory, FIXTURES_FORMAT2], None, tmp_path / "m", None, UI(quiet=True))
    assert not (tmp_path / "m").exists()


def test_updates_with_their_own_range_are_priced_row_for_row(tmp_path):
    """update_work_unit: the UPDATEs' rows count as theirs in the rows-per-block check."""
    engine = FakeEngine()
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
    engine = _LastSessionRefused()
    with pytest.raises(Exception) as caught:
        _run(tmp_path, engine)
    assert f"1 of {SESSIONS} sessions could not connect: cannot connect to the fake server" in str(caught.value)
    assert not engine.server.connections  # the sessions at the barrier were released and closed
    assert not engine.server.runs


class _SixteenKiBPages(FakeEngine):
    """The fake engine with InnoDB's default page: a row a 16 KiB page, as the mysql engine loads it."""

    def probe(self, conn):
        info = super().probe(conn)
        return dataclasses.replace(info, caps=dataclasses.replace(info.caps, page_bytes=16384))


def test_the_data_set_is_the_engine_s_pages_a_row_each(tmp_path):
    """--scale counts 8 KiB rows; with a row a 16 KiB page the table, and so the data set the result
    records and the cache check weighs, is twice that."""
    engine = _SixteenKiBPages()
    outcome = _run(tmp_path, engine, run_time=1, warmup=0)  # only the data set's size is checked
    assert outcome.document["figures"]["validity"]["data_bytes"] == 2000 * 16384
    info = dataclasses.replace(engine.probe(engine.connect("fake:", application_name="test")), cache_bytes=400 << 20)
    run_command.check_server(info, _config(tmp_path, scale=40000, allow_cached=False))  # 625 MiB of pages
    eight = dataclasses.replace(info, caps=dataclasses.replace(info.caps, page_bytes=8192))
    with pytest.raises(UsageError, match="the data set \\(312"):
        run_command.check_server(eight, _config(tmp_path, scale=40000, allow_cached=False))


def test_setup_asks_for_the_space_of_a_page_a_row():
    from dbio.commands.setup import space_needed
    from dbio.engines.base import SetupSpec

    spec = SetupSpec(40000, 2, 1000, "random")
    assert space_needed(spec, page_bytes=16384) - space_needed(spec) == (2 * 40000 + 1000) * 8192 * 11 // 10


def test_an_update_run_stops_before_the_disk_fills(tmp_path, monkeypatch):
    """The servers' filesystem loses room fast: the run stops at once, failed, with what ran kept."""
    from dbio.run import room

    left = iter([900 << 20, 900 << 20, 800 << 20, 700 << 20, 20 << 20])  # the check before the start, then the run's
    monkeypatch.setattr(run_command, "written_paths", lambda storages: (str(tmp_path),))
    monkeypatch.setattr(room, "tightest", lambda paths: (next(left, 20 << 20), str(tmp_path)))
    outcome = _run(tmp_path, FakeEngine(), update_pct=25, run_time=10, warmup=0)
    doc = outcome.document
    assert doc["status"] == "failed"
    # with why it stopped with room left: the floor kept there, and the rate half a second more would use
    assert re.fullmatch(f"stopped before the disk filled: 20 MiB left on the filesystem of {re.escape(str(tmp_path))}, "
                        r"where the server writes \(32 MiB are kept free there, and it was using [\d,]+ MiB/s\)",
                        doc["status_reason"]), doc["status_reason"]
    assert doc["timeline"]["window_seconds"] < 5  # stopped at once, not at the end of the 10 s
    assert doc["figures"]["load_profile"]["physical_reads_per_s"] > 0  # what ran is kept


def test_an_update_run_with_no_room_to_write_is_refused_before_it_starts(tmp_path, monkeypatch):
    from dbio.run import room

    monkeypatch.setattr(run_command, "written_paths", lambda storages: (str(tmp_path),))
    monkeypatch.setattr(room, "tightest", lambda paths: (19 << 20, str(tmp_path)))
    with pytest.raises(UsageError, match=f"an update run needs room to write: 19 MiB free where {tmp_path} is"):
        _run(tmp_path, FakeEngine(), update_pct=25, run_time=10, warmup=0)
    assert not list((tmp_path / "results").glob("*/result.json"))  # nothing ran
    _run(tmp_path, FakeEngine(), update_pct=0, run_time=1, warmup=0)  # reads only: no room needed


def test_the_servers_growth_step_is_kept_free_besides_the_floor(tmp_path, monkeypatch):
    """A server that grows a file 64 MiB at once (InnoDB's autoextend increment) needs twice 64 MiB more to start,
    and the guard stops its run that much earlier."""
    from dbio.run import room

    engine = FakeEngine()
    probe = engine.probe
    monkeypatch.setattr(engine, "probe", lambda conn: dataclasses.replace(probe(conn), caps=dataclasses.replace(
        probe(conn).caps, growth_step_bytes=64 << 20, growth_step_setting="innodb_autoextend_increment")))
    monkeypatch.setattr(run_command, "written_paths", lambda storages: (str(tmp_path),))
    monkeypatch.setattr(room, "tightest", lambda paths: (180 << 20, str(tmp_path)))
    with pytest.raises(UsageError, match=f"180 MiB free where {tmp_path} is, under the 192 MiB it starts with "
                                         "\\(innodb_autoextend_increment lets the server grow a file by 64 MiB"):
        _run(tmp_path, engine, update_pct=25, run_time=10, warmup=0)
    left = iter([300 << 20, 300 << 20, 300 << 20, 150 << 20])  # 150 MiB: room for the 32 MiB floor and one step
    monkeypatch.setattr(room, "tightest", lambda paths: (next(left, 150 << 20), str(tmp_path)))
    doc = _run(tmp_path, engine, update_pct=25, run_time=10, warmup=0).document
    assert doc["status"] == "failed" and doc["status_reason"].startswith("stopped before the disk filled: 150 MiB left")


def test_the_disk_guard_cancels_the_running_statements_at_once_even_in_the_warm_up(tmp_path, monkeypatch):
    """The guard's stop only set the flag the drain reads, and in the warm-up the drain came to it once the
    sessions had ended their slices (1.0-1.1 s after the stop on a managed MariaDB with 8 sessions updating, time
    for InnoDB to grow ibdata1 by 64 MiB twice more): the guard cancels them itself."""
    import time

    from dbio.run import room

    engine = FakeEngine()
    cancels: list[float] = []

    async def cancel(conn, timeout):
        cancels.append(time.monotonic())
        return True

    monkeypatch.setattr(engine, "cancel_statement", cancel)
    monkeypatch.setattr(run_command, "written_paths", lambda storages: (str(tmp_path),))
    left, stopped = iter([300 << 20, 300 << 20]), []  # the start check's, the guard's first; then 40 MiB

    def tightest(paths):
        free = next(left, 40 << 20)
        if free < 300 << 20 and not stopped:
            stopped.append(time.monotonic())
        return free, str(tmp_path)

    monkeypatch.setattr(room, "tightest", tightest)
    doc = _run(tmp_path, engine, update_pct=25, run_time=10, warmup=5).document
    assert doc["status_reason"].startswith("stopped before the disk filled: 40 MiB left")
    assert cancels and cancels[0] - stopped[0] < 0.1, cancels[0] - stopped[0]


def test_room_runs_out_when_half_a_second_more_at_the_last_second_s_rate_would_use_the_floor():
    from dbio.run import room

    mib = 1 << 20
    assert not room.runs_out([(0.0, 100 * mib)])  # the first check: room enough
    assert room.runs_out([(0.0, 20 * mib)])  # under the floor
    steady = [(t / 10, (200 - 6 * t) * mib) for t in range(11)]  # 60 MiB/s, 140 MiB left: 30 more leave 110
    assert not room.runs_out(steady)
    assert room.runs_out([*steady, (1.1, 55 * mib)])  # 85 MiB in a second: 42 more leave 13 MiB, under 32
    burst = [(0.0, 100 * mib), (0.9, 100 * mib), (1.0, 68 * mib)]  # a 32 MiB segment at once, over a second
    assert not room.runs_out(burst)  # 32 MiB/s: 16 more leave 52 MiB
    assert not room.runs_out([(0.0, 60 * mib), (1.0, 100 * mib)])  # room freed (a checkpoint removed WAL)


def test_the_places_an_update_run_guards_are_where_the_servers_write():
    storages = [{"data_directory": {"path": "/d"}, "wal": {"path": "/w"}, "tablespaces": [{"path": "/t"}]},
                {"data_directory": {"path": "/d2", "error": "unreadable"}, "wal": None}, {"data_directory": None}]
    assert run_command.written_paths(storages) == ("/d", "/t", "/w")


def test_one_session_is_not_plural_in_the_progress(tmp_path):
    import io

    from rich.console import Console

    engine = FakeEngine()
    config = _config(tmp_path, threads_per_schema=1, run_time=1, warmup=0)
    conn = engine.connect("fake:", application_name="test")
    from dbio.engines.base import SetupSpec

    record = engine.begin_setup(conn, SetupSpec(2000, 1, 0, config.workload.key_order), setup_id="s1",
                                server_version=engine.version)
    engine.finish_setup(conn, record)
    engine.close(conn)
    ui = UI(Console(file=io.StringIO(), force_terminal=False, width=200))
    run_command.run_on([Target(engine, "fake:", None)], config, ui, run_command.run_directory(config),
                       make_plan(config.workload, 1))
    out = ui.console.file.getvalue()
    assert "connecting 1 session\n" in out, out


def test_quickstart_says_its_data_set_in_the_units_reports_use(tmp_path, monkeypatch):
    import io

    from rich.console import Console

    from dbio.commands import quickstart
    from dbio.commands import setup as setup_command

    class Stop(Exception):
        pass

    def no_setup(*_, **__):
        raise Stop  # only quickstart's first line matters: nothing is created

    monkeypatch.setattr(setup_command, "setup", no_setup)
    config = load_config(Sources(env={}, cli={"scale": "256MiB", "threads_per_schema": 1,
                                              "data_dir": str(tmp_path / "instance")}, cwd=tmp_path))
    ui = UI(Console(file=io.StringIO(), width=200))
    with pytest.raises(Stop):
        quickstart.quickstart(config, ui)
    first = ui.console.file.getvalue().splitlines()[0]
    assert first.startswith("dbio quickstart: 1 session, 256 MiB data set"), first  # it said "0.2 GiB"


def test_a_read_only_run_settles_what_an_earlier_run_left_and_says_so(tmp_path):
    engine = FakeEngine()
    engine.server.unsettled = True  # an earlier run's changes, still to be done
    done = _run(tmp_path, engine, update_pct=0, run_time=1, warmup=0)  # settling comes before the window: any length
    settled = [e for e in done.document["events"] if e["kind"] == "settled"]
    assert engine.server.settles == 1 and not engine.server.unsettled
    assert len(settled) == 1 and "the fake server's pending work (0.2 s)" in settled[0]["message"]
    assert "before this read-only run" in settled[0]["message"] and settled[0]["seconds"] == 0.25


def test_a_data_set_at_rest_is_settled_silently_and_an_update_run_never_settles(tmp_path):
    engine = FakeEngine()
    at_rest = _run(tmp_path / "a", engine, update_pct=0, run_time=1, warmup=0)  # settling is before the window
    assert engine.server.settles == 1 and not [e for e in at_rest.document["events"] if e["kind"] == "settled"]
    engine.server.unsettled = True
    _run(tmp_path / "b", engine, update_pct=20, run_time=1, warmup=0)
    assert engine.server.settles == 1 and engine.server.unsettled


# -- a node that stops answering (frozen: SIGSTOP, a hung host) ------------------------------------
SILENT = 1.5  # liveness.SILENT_AFTER here: the fake answers in milliseconds, so 1.5 s of silence is a frozen node


def _measure_within(nodes: list[Node], config, seconds: float) -> Any:
    """measure() in a thread given `seconds`: a run that would hang for ever fails the test instead."""
    import threading

    done: dict[str, Any] = {}

    def measure() -> None:
        try:
            done["outcome"] = run_command.measure(nodes, config, UI(quiet=True), run_command.run_directory(config),
                                                  make_plan(config.workload, 1), {},
                                                  {"data_directory": None, "wal": None})
        except BaseException as exc:  # noqa: BLE001 - the test reports it
            done["error"] = exc

    runner = threading.Thread(target=measure, daemon=True)
    runner.start()
    runner.join(seconds)
    assert not runner.is_alive(), f"the run had not ended {seconds:.0f} s after it began"
    if "error" in done:
        raise done["error"]
    return done["outcome"]


def _freeze_in_window(engine: FakeEngine, starts: list[float], after: float) -> dict[str, float]:
    """Freezes engine's server `after` seconds past the run's start (the first node's release), from a thread;
    the dict it returns then holds when it did ("at", seconds since the start: a loaded host's sleep is late)."""
    import threading
    import time

    frozen: dict[str, float] = {}

    def freeze() -> None:
        while not starts:
            time.sleep(0.01)
        time.sleep(max(0.0, starts[0] + after - time.time()))
        engine.server.freeze()
        frozen["at"] = time.time() - starts[0]

    threading.Thread(target=freeze, daemon=True).start()
    return frozen


@pytest.mark.parametrize("frozen_at, late", [(2.0, 0.0), (3.6, 0.0), (3.6, 0.3)])
def test_a_frozen_node_is_lost_within_seconds_and_the_others_finish_the_window(tmp_path, short_start_lead,
                                                                                  monkeypatch, frozen_at, late):
    """A node that stops answering (every call on it waits, as on a SIGSTOPped server) inside a 4 s window:
    the run ended at its deadline plus seconds (it waited for ever), the node is named lost with why, the
    other node's figures cover the window (and no more: not until the frozen node was lost), the frozen
    one's up to its last reading, the total counts each read once, and no stall is claimed for the total
    (the other node ran all along). Frozen at 3.6 s, it is lost after the deadline: the other node's end reading
    is taken at its end, even when its last slices answer late (late: seen in CI, a 10.57 s window for 4 s, the
    end reading begun with that node among the silent ones, then taken again at the loss)."""
    from dbio.run import liveness

    monkeypatch.setattr(liveness, "SILENT_AFTER", SILENT)
    config = _config(tmp_path, threads_per_schema=4, run_time=4, warmup=1)
    engines = [FakeEngine(), FakeEngine(read_only=True)]
    nodes = []
    for name, engine in zip(("p", "s"), engines):
        conn = engine.connect("fake:", application_name="test")
        nodes.append(Node(name, engine, "fake:", engine.probe(conn)))
        engine.close(conn)
    engines[0].server.last_answer_late = late
    frozen = _freeze_in_window(engines[1], engines[0].server.starts, 1.0 + frozen_at)
    try:
        outcome = _measure_within(nodes, config, 30)
    finally:
        engines[1].server.thaw()
    doc = results.read(outcome.directory)
    ended = next(e["since_start"] for e in doc["events"] if e["kind"] == "end")  # it hung for ever
    assert ended < max(5.0, frozen["at"] + SILENT) + 1.5, (ended, frozen)
    assert doc["status"] == "complete", doc["status_reason"]
    by_node = {n["name"]: n for n in doc["nodes"]}
    stopped = by_node["s"]["stopped"]
    assert re.fullmatch(r"it answered nothing for 2 s: frozen, or unreachable", stopped["reason"]), stopped
    # when it last answered (the wait sampler asks every 0.5 s), found SILENT seconds later
    assert frozen["at"] - 0.6 < stopped["since_start"] < frozen["at"] + 0.05, (stopped, frozen)  # an answer under way
    lost_at = next(e for e in doc["events"] if e["kind"] == "node_lost")["since_start"]
    assert frozen["at"] + SILENT - 0.6 < lost_at < frozen["at"] + SILENT + 2.0, (lost_at, frozen)
    window = doc["figures"]["window_seconds"]
    assert window == pytest.approx(4.0 + late, abs=0.4), (doc["events"], frozen)
    assert by_node["p"]["figures"]["window_seconds"] == pytest.approx(window)
    covers = stopped["figures_cover_seconds"]
    assert covers is not None and frozen["at"] - 1.0 - 1.5 <= covers <= frozen["at"] - 1.0, (covers, frozen)
    per_node = 2 * fake_engine.ITERATIONS_PER_SECOND * WORK_UNIT
    assert by_node["p"]["figures"]["load_profile"]["physical_reads_per_s"] == pytest.approx(per_node, rel=0.1)
    assert by_node["s"]["figures"]["load_profile"]["physical_reads_per_s"] == pytest.approx(per_node, rel=0.25)
    # the total: each node's reads once, the frozen one's up to its last reading
    reads = {name: n["normalized"]["end"]["data"]["reads"] - n["normalized"]["begin"]["data"]["reads"]
             for name, n in by_node.items()}
    assert doc["normalized"]["end"]["data"]["reads"] - doc["normalized"]["begin"]["data"]["reads"] == \
        pytest.approx(reads["p"] + reads["s"])
    assert doc["stalls"] == []
    assert doc["cluster"]["stopped_nodes"] == ["s"] and doc["cluster"]["partial"]
    assert all(s["state"] == "done" for s in doc["sessions"] if s["node"] == "p")
    assert all(s["state"] == "failed" for s in doc["sessions"] if s["node"] == "s")
    assert not engines[0].server.runs and not engines[0].server.connections
    assert "s stopped +" in report.render(doc, "text")


def test_a_frozen_only_node_ends_the_run_at_its_deadline_with_a_failed_result(tmp_path, monkeypatch):
    """One node, frozen 2.2 s into a 4 s window: the run fails with why seconds later (it waited for ever), its
    figures end at its last reading, at the rate the node ran, and no stall outlasts the window they cover."""
    from dbio.run import liveness

    monkeypatch.setattr(liveness, "SILENT_AFTER", SILENT)
    config = _config(tmp_path, run_time=4, warmup=1)
    engine = FakeEngine()
    conn = engine.connect("fake:", application_name="test")
    nodes = [Node("a", engine, "fake:", engine.probe(conn))]
    engine.close(conn)
    frozen = _freeze_in_window(engine, engine.server.starts, 1.0 + 2.2)
    try:
        outcome = _measure_within(nodes, config, 30)
    finally:
        engine.server.thaw()
    doc = results.read(outcome.directory)
    ended = next(e["since_start"] for e in doc["events"] if e["kind"] == "end")  # it hung for ever
    assert ended < frozen["at"] + SILENT + 1.5, (ended, frozen)
    assert doc["status"] == "failed"
    assert re.fullmatch(r"the server stopped at \+\d+\.\d s \(it answered nothing for 2 s: frozen, or unreachable\): "
                        "the figures end at its last reading", doc["status_reason"]), doc["status_reason"]
    window = doc["figures"]["window_seconds"]
    assert window is not None and frozen["at"] - 1.0 - 1.6 <= window <= frozen["at"] - 1.0, (window, frozen)
    assert doc["figures"]["load_profile"]["physical_reads_per_s"] == pytest.approx(READS_PER_S, rel=0.25)
    assert all(s["offset"] + s["seconds"] <= window + 1e-6 for s in doc["stalls"]), (doc["stalls"], window)
    for form in report.FORMATS:
        report.render(doc, form)


# 400 iterations a second each: 1 s of warm-up holds about 400 of a session's 1,000
WORK_LOOP = 1000


@pytest.mark.parametrize("scope", ["session", "window"])
def test_work_loop_bounds_each_session_s_total_or_its_window_s_iterations(tmp_path, scope):
    """SLOB's WORK_LOOP bounds each session's whole work, warm-up included (scope session); dbio's own
    meaning (window) bounds the measured part, after the warm-up."""
    outcome = _run(tmp_path, FakeEngine(), run_time=0, warmup=1, work_loop=WORK_LOOP, work_loop_scope=scope)
    assert outcome.status == "complete", outcome.document["status_reason"]
    assert outcome.document["config"]["workload"]["work_loop_scope"] == scope
    sessions = outcome.document["sessions"]
    assert len(sessions) == SESSIONS and all(s["warmup_iterations"] > 0 for s in sessions)
    for s in sessions:
        counted = s["warmup_iterations"] + s["iterations"] if scope == "session" else s["iterations"]
        assert counted == WORK_LOOP, s


def test_a_work_loop_the_warm_up_uses_up_is_a_failed_run_that_says_why(tmp_path):
    outcome = _run(tmp_path, FakeEngine(), run_time=0, warmup=2, work_loop=100, work_loop_scope="session")
    assert outcome.status == "failed"
    reason = outcome.document["status_reason"]
    assert "during the 2 s warm-up" in reason and "work_loop_scope" in reason, reason


def test_the_report_says_which_iterations_work_loop_counted(tmp_path):
    outcome = _run(tmp_path, FakeEngine(), run_time=0, warmup=1, work_loop=WORK_LOOP, work_loop_scope="session")
    assert f"work loop {WORK_LOOP} per session, warm-up included" in report.render(outcome.document, "text")
    window = dict(outcome.document, config={**outcome.document["config"], "workload": {
        **outcome.document["config"]["workload"], "work_loop_scope": "window"}})
    assert f"work loop {WORK_LOOP} per session, in the window" in report.render(window, "text")


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


def test_each_node_s_probe_gives_its_own_single_reads_and_the_total_adds_them(tmp_path, short_start_lead):
    engines = [FakeEngine(), FakeEngine()]
    nodes = []
    for name, engine in zip(("a", "b"), engines):
        conn = engine.connect("fake:", application_name="test")
        nodes.append(Node(name, engine, "fake:", engine.probe(conn)))
        engine.close(conn)
    doc = _measure_within(nodes, _config(tmp_path, threads_per_schema=2, run_time=2, warmup=1), 30).document
    per_node = {n["name"]: n["figures"]["latency"]["single_reads"] for n in doc["nodes"]}
    total = doc["figures"]["latency"]["single_reads"]
    assert all(s["count"] > 0 and s["nodes"] == 1 for s in per_node.values()), per_node
    assert total["count"] == sum(s["count"] for s in per_node.values()) and total["nodes"] == 2
