"""The raw-device baseline, mostly without running fio (one test runs it, when installed): its options,
reading its output, the efficiency figures from recorded numbers, where it may read and write, the
report and the verdict."""

import copy
import json
import os
import shutil
from dataclasses import fields, replace
from pathlib import Path

import pytest

from dbio import jsondoc, report, file_formats
from dbio import result as results
from dbio.collect import fio
from dbio.jobs import baseline as baseline_command
from dbio.jobs import baseline as baselines
from dbio.engines.base import Capabilities, ServerInfo
from dbio.errors import DbioError, UsageError
from dbio.report import baseline_section, verdict
from dbio.stats import catalogue
from dbio.result_records import of

FIXTURES = Path(__file__).parent.parent / "fixtures"


def recorded_fio():
    return (FIXTURES / "fio_randread.json").read_text()


def run_record(reads_per_s, avg_read_us, host_cpu_us_per_read, name="sync", jobs=2, iodepth=1):
    return {"name": name, "engine": "psync" if iodepth == 1 else "libaio", "iodepth": iodepth, "jobs": jobs,
            "options": ["--name=dbio-" + name], "reads": 1000, "seconds": 2.0, "reads_per_s": reads_per_s,
            "avg_read_us": avg_read_us, "p99_read_us": 3 * avg_read_us, "host_cpu_us_per_read": host_cpu_us_per_read,
            "started_at": 1.0e9, "ended_at": 1.0e9 + 2}


def baseline_record(sync_reads=10_000.0, sync_us=200.0, sync_cpu=20.0, deep_reads=40_000.0):
    return {"tool": "fio", "version": "fio-3.33", "place": "the data files", "files": 3, "bytes": 1 << 20,
            "scratch": False, "sessions": 2, "started_at": 1.0e9, "ended_at": 1.0e9 + 4, "seconds": 4.0,
            "runs": {"sync": run_record(sync_reads, sync_us, sync_cpu),
                     "deep": run_record(deep_reads, 800.0, 5.0, "deep", 2, 32)}}


def with_baseline(doc, record):
    doc = copy.deepcopy(doc)
    baselines.attach(doc, record)
    return doc


@pytest.fixture
def complete():
    return results.completed(json.loads((FIXTURES / "result_complete.json").read_text()))


def test_the_job_reads_8k_at_random_with_o_direct_and_never_writes_the_instance_files():
    options = fio.Job("dbio-sync", ("/d/base/1/2", "/d/base/1/3"), 4, 10).options()
    assert {"--rw=randread", "--bs=8k", "--direct=1", "--ioengine=psync", "--numjobs=4", "--runtime=10s",
            "--readonly", "--filename=/d/base/1/2:/d/base/1/3"} <= set(options)
    scratch = fio.Job("dbio-ceiling", ("/s/x:y",), 2, 3, engine="libaio", iodepth=32, size=1 << 26).options()
    assert "--readonly" not in scratch and "--size=67108864" in scratch and "--iodepth=32" in scratch
    assert "--filename=/s/x\\:y" in scratch  # fio separates names with ':'


def test_fio_output_is_read_from_its_json(tmp_path):
    figures = fio.parse("note: a line fio printed first\n" + recorded_fio())
    read = json.loads(recorded_fio())["jobs"][0]["read"]
    assert figures["reads"] == read["total_ios"] and figures["reads_per_s"] == read["iops"]
    assert figures["avg_read_us"] == pytest.approx(read["lat_ns"]["mean"] / 1000)
    assert figures["p99_read_us"] == pytest.approx(read["clat_ns"]["percentile"]["99.000000"] / 1000)
    assert figures["fio_cpu_pct"] == pytest.approx(json.loads(recorded_fio())["jobs"][0]["usr_cpu"] +
                                                   json.loads(recorded_fio())["jobs"][0]["sys_cpu"])
    assert figures["job_seconds"] is None  # this fio did not say how long its jobs ran: seconds x jobs stands in
    newer = json.loads(recorded_fio())
    newer["jobs"][0]["job_runtime"] = 4002  # two jobs of 2,001 ms (group_reporting sums them)
    assert fio.parse(json.dumps(newer))["job_seconds"] == 4.002
    with pytest.raises(Exception, match="not the JSON"):
        fio.parse("fio: no such engine")


def test_fio_missing_is_one_line_naming_the_package(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(UsageError) as caught:
        baselines.request(None)
    assert caught.value.exit_code == 2
    assert "fio" in str(caught.value) and "apt-get install fio" in str(caught.value) and "\n" not in str(caught.value)


def test_efficiency_figures_from_recorded_numbers(complete):
    doc = with_baseline(complete, baseline_record())
    f = catalogue.figures_of(doc)
    db_reads = f["load_profile"]["physical_reads_per_s"]
    db_cpu_us = 1e6 / f["cpu"]["reads_per_host_cpu_second"]
    assert catalogue.value(f, "raw_reads_per_s") == 10_000.0
    assert catalogue.value(f, "efficiency_reads") == pytest.approx(db_reads / 10_000.0)
    assert catalogue.value(f, "efficiency_latency") == pytest.approx(f["latency"]["avg_read_us"] / 200.0)
    assert catalogue.value(f, "host_cpu_us_per_read") == pytest.approx(db_cpu_us)
    assert catalogue.value(f, "efficiency_cpu") == pytest.approx(db_cpu_us / 20.0)
    assert catalogue.value(f, "efficiency_ceiling") == pytest.approx(db_reads / 40_000.0)
    # no baseline: no efficiency, never a division by zero
    assert catalogue.value(catalogue.figures_of(complete), "efficiency_reads") is None
    doc["figures"]["baseline"]["reads_per_s"] = 0.0
    assert catalogue.value(catalogue.figures_of(doc), "efficiency_reads") is None


def test_the_report_opens_with_efficiency_and_has_a_baseline_section(complete):
    doc = with_baseline(complete, baseline_record())
    # the result with its baseline has the declared shape
    jsondoc.check(doc, file_formats.result(results.FORMAT_VERSION))
    broken = copy.deepcopy(doc)
    broken["baseline"]["runs"]["sync"]["reads_per_s"] = "fast"
    with pytest.raises(jsondoc.Malformed):
        jsondoc.check(broken, file_formats.result(results.FORMAT_VERSION))
    text = report.render(of(doc), "text")
    eff = catalogue.value(catalogue.figures_of(doc), "efficiency_reads")
    first = text.splitlines()[:6]
    assert any(line.startswith(f"Database efficiency at 2 sessions: {eff:.2f} of the device's") for line in first)
    assert "Baseline (raw device, fio)" in text and "fio-3.33" in text and "fio sync: fio --name=dbio-sync" in text
    plain = report.render(of(complete), "text")
    assert "efficiency" not in plain.lower() and "Baseline" not in plain  # results without one render as before
    r = of(doc)
    assert "Database efficiency" in report.render(r, "md") and "Database efficiency" in report.render(r, "html")


def _finding(doc):
    return [x for x in verdict.findings(of(doc)) if x.code in ("efficiency", "below_device", "beyond_device")]


def test_verdict_database_beyond_the_device_is_a_cache_finding(complete):
    db_reads = catalogue.value(catalogue.figures_of(complete), "reads_per_s")
    [found] = _finding(with_baseline(complete, baseline_record(sync_reads=db_reads / 2)))
    assert found.code == "beyond_device" and found.level == "warning" and "cache" in found.message


def test_verdict_database_near_the_device_is_information(complete):
    db_reads = catalogue.value(catalogue.figures_of(complete), "reads_per_s")
    [found] = _finding(with_baseline(complete, baseline_record(sync_reads=db_reads)))
    assert found.code == "efficiency" and found.level == "info" and "1.00 of the device" in found.message


def test_verdict_database_well_below_the_device_says_why(complete):
    db_reads = catalogue.value(catalogue.figures_of(complete), "reads_per_s")
    doc = with_baseline(complete, baseline_record(sync_reads=db_reads * 4))
    doc["figures"]["cpu"]["host"]["busy_pct"] = 95.0
    [found] = _finding(doc)
    assert found.code == "below_device" and "0.25 of the device" in found.message and "CPU-bound" in found.message
    doc["figures"]["cpu"]["host"]["busy_pct"] = 10.0
    doc["waits"]["counts"] = {"CPU": 5, "IO:DataFileRead": 10, "LWLock:BufferMapping": 85}
    [found] = _finding(doc)
    assert "lock-bound" in found.message and "LWLock:BufferMapping" in found.message
    doc["waits"]["counts"] = {"CPU": 5, "IO:DataFileRead": 95}
    [found] = _finding(doc)
    assert "neither CPU nor locks" in found.message and "the CPU fio's jobs spent" not in found.message
    doc["baseline"]["runs"]["sync"]["process_cpu_us_per_read"] = doc["figures"]["cpu"]["db_cpu_us_per_read"] / 1.5
    doc["figures"]["baseline"] = baselines.figures(doc["baseline"])
    [found] = _finding(doc)
    assert "and cost the sessions 1.5x the CPU fio's jobs spent on one; the engine's own path per read is the gap" \
        in found.message
    # measured: the sessions queued for a CPU, which their wait samples count as the read's I/O event
    avg = doc["figures"]["latency"]["avg_read_us"]
    doc["figures"]["cpu"].update(cpu_wait_us_per_read=0.4 * avg, cpu_wait_pct=31.0)
    [found] = _finding(doc)
    assert found.message.endswith(f"CPU-queued: the sessions waited {0.4 * avg:,.0f} us of the {avg:,.0f} us the "
                                  "engine timed per read for a CPU (31% of their time)")
    doc["figures"]["cpu"]["cpu_wait_us_per_read"] = 0.99 * avg  # more than the read beyond the device: not in reads
    [found] = _finding(doc)
    assert found.message.endswith("CPU-queued: the sessions waited for a CPU 31% of their time")


def _info(local, data_directory):
    caps = Capabilities(engine="x", server_version="1", version_num=1, has_io_view=True, io_view_has_wal=True,
                        has_backend_cpu=local, can_see_waits=True, data_directory=data_directory, local=local,
                        direct_io=True)
    return ServerInfo(caps, {}, "db", "u", "a server", 1 << 20, 100, 3, 1, 1)


OTHER = 4242  # a user who is neither root nor the one running the tests


def astuple_rest(info):
    """ServerInfo's fields after its capabilities, in order (a copy with other capabilities)."""
    return [getattr(info, f.name) for f in fields(info)[1:]]


class _Files:
    def __init__(self, files):
        self.files = files

    def data_files(self, conn, info):
        return self.files


def test_a_server_on_another_host_has_no_device_to_read():
    with pytest.raises(UsageError) as caught:
        baselines.data_place(_Files(["/x"]), None, _info(False, "/srv/pg"))
    assert "another host" in str(caught.value) and "--baseline-path DIR" in str(caught.value)
    with pytest.raises(UsageError, match="does not say where"):
        baselines.data_place(_Files(["/x"]), None, _info(True, None))


def test_the_local_data_files_are_read_and_a_scratch_path_is_checked(tmp_path):
    files = []
    for name in ("1", "2"):
        (tmp_path / name).write_bytes(b"\0" * 16384)
        files.append(str(tmp_path / name))
    place = baselines.data_place(_Files(files), None, _info(True, str(tmp_path)))
    assert place.files == tuple(files) and place.bytes == 32768 and not place.scratch
    with pytest.raises(UsageError, match="no data files"):
        baselines.data_place(_Files([]), None, _info(True, str(tmp_path)))
    scratch = baselines.scratch_place(tmp_path, 10 << 30)
    assert scratch.scratch and scratch.bytes == baselines.SCRATCH_LIMITS[1]
    with pytest.raises(UsageError, match="not a directory"):
        baselines.scratch_place(tmp_path / "missing", 1)


def test_a_data_file_that_is_not_a_regular_file_is_refused_before_fio_reads_it(tmp_path):
    """The server's owner may turn a data file into a FIFO (fio, root's, then hung on it) or a device node."""
    (tmp_path / "1").write_bytes(b"\0" * 16384)
    os.mkfifo(tmp_path / "2")
    with pytest.raises(UsageError, match=f"the data file {tmp_path / '2'} is not a regular file"):
        baselines.data_place(_Files([str(tmp_path / "1"), str(tmp_path / "2")]), None, _info(True, str(tmp_path)))
    (tmp_path / "3").symlink_to("/dev/null")
    with pytest.raises(UsageError, match="is not a regular file"):
        baselines.data_place(_Files([str(tmp_path / "3")]), None, _info(True, str(tmp_path)))


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the server's directories to another user")
def test_the_write_side_never_writes_where_the_servers_user_could_plant_a_link(tmp_path):
    """The scratch files of fio and pg_test_fsync (root's, opened by name, following a link) never go in a
    directory the server's user owns: a link planted there would make root overwrite the file it names."""
    from dbio.jobs import baseline_writes

    tmp_path.chmod(0o755)
    victim = tmp_path / "victim"
    victim.write_text("precious")
    server = tmp_path / "pg"  # a local server's directories, its user's (/var/lib/postgresql/15 and main)
    (server / "data" / "pg_wal").mkdir(parents=True)
    for path in (server, server / "data", server / "data" / "pg_wal"):
        os.chown(path, OTHER, OTHER)
    for name in (baseline_writes.SCRATCH_NAME, "dbio-baseline-fsync.scratch"):
        (server / name).symlink_to(victim)
        os.lchown(server / name, OTHER, OTHER)
    info = _info(True, str(server / "data"))
    info = ServerInfo(replace(info.caps, redo_directory=str(server / "data" / "pg_wal")), *astuple_rest(info))
    with pytest.raises(UsageError, match=f"scratch files in {server}/data: {server} is owned by uid "
                                         f"{OTHER}.*--baseline-path"):
        baseline_writes.plan(_Files([]), info, None, 64 << 20)
    assert victim.read_text() == "precious"
    for path in (server, server / "data", server / "data" / "pg_wal"):  # the server run by the user running dbio
        os.chown(path, 0, 0)
    side = baseline_writes.plan(_Files([]), info, None, 64 << 20)
    assert side.data_directory == server and side.redo_directory == server


def test_the_baseline_adds_about_a_fifth_to_a_run():
    sync, deep = baselines.durations(300)
    assert (sync + deep) / 300 <= 0.25 and sync >= deep >= 1
    assert baselines.durations(3) == (baselines.SYNC_LIMITS[0], baselines.DEEP_LIMITS[0])
    assert baselines.durations(0) == baselines.durations(baselines.NO_RUN_TIME)


def test_the_synchronous_seconds_are_split_around_the_run():
    assert baselines.halves(45) == (23, 22) and baselines.halves(3) == (2, 1) and baselines.halves(2) == (1, 1)
    assert baselines.brackets(baselines.Place(("/d/1",), "files", 1)) is True
    assert baselines.brackets(baselines.Place(("/d/s",), "a scratch file", 1, scratch=True)) is False


def test_runs_before_and_after_pool_into_one_and_give_the_drift():
    before = dict(run_record(10_000.0, 100.0, 20.0), reads=20_000, seconds=2.0, host_busy_seconds=0.4,
                  process_cpu_seconds=0.3)
    after = dict(run_record(5_000.0, 200.0, 40.0, "sync_after"), reads=5_000, seconds=1.0, host_busy_seconds=0.2,
                 process_cpu_seconds=0.2)
    both = baselines.pooled([before, after])
    assert both["reads"] == 25_000 and both["seconds"] == 3.0
    assert both["reads_per_s"] == pytest.approx(25_000 / 3.0)
    assert both["avg_read_us"] == pytest.approx((20_000 * 100.0 + 5_000 * 200.0) / 25_000)
    assert both["p99_read_us"] == 600.0  # the higher of the two: percentiles do not pool
    assert both["host_cpu_us_per_read"] == pytest.approx(0.6e6 / 25_000)
    assert both["process_cpu_us_per_read"] == pytest.approx(0.5e6 / 25_000)
    record = baseline_record()
    assert baselines.drift(record) is None and baselines.figures(record)["drift"] is None
    record["runs"]["sync"], record["runs"]["sync_after"] = before, after
    assert baselines.drift(record) == 0.5
    fig = baselines.figures(record)
    assert fig["reads_per_s"] == both["reads_per_s"] and fig["drift"] == 0.5
    assert fig["process_cpu_us_per_read"] == both["process_cpu_us_per_read"]
    # a run without busy seconds (an old record) has no CPU figure rather than a wrong one
    assert baselines.pooled([before, {**after, "host_busy_seconds": None}])["host_cpu_us_per_read"] is None
    assert baselines.pooled([before, {**after, "process_cpu_seconds": None}])["process_cpu_us_per_read"] is None


def test_the_readers_own_cpu_ratio_is_the_sessions_against_fios_processes(complete):
    record = baseline_record()
    record["runs"]["sync"]["process_cpu_us_per_read"] = 16.0
    doc = with_baseline(complete, record)
    f = catalogue.figures_of(doc)
    assert catalogue.value(f, "raw_process_cpu_us_per_read") == 16.0
    assert catalogue.value(f, "efficiency_reader_cpu") == pytest.approx(f["cpu"]["db_cpu_us_per_read"] / 16.0)
    text = report.render(of(doc), "text")
    assert "Readers' own CPU per read (us)" in text
    assert f"the sessions' own CPU per read was {catalogue.value(f, 'efficiency_reader_cpu'):.2f}x fio's" in text
    # a record from before fio's own CPU was kept: the figure is absent, not zero
    assert catalogue.value(catalogue.figures_of(with_baseline(complete, baseline_record())),
                           "efficiency_reader_cpu") is None


def test_a_program_s_cpu_counts_the_children_it_reaped_and_a_timeout_ends_it(tmp_path):
    """fio forks its jobs and waits for them: wait4 gives their CPU with its own."""
    import sys
    import time

    burn = ("import os, time\n"
            "def spin():\n"
            "    end = time.process_time() + 0.3\n"
            "    while time.process_time() < end: pass\n"
            "pid = os.fork()\n"
            "spin()\n"
            "if pid: os.waitpid(pid, 0)\n"
            "else: os._exit(0)\n"
            "print('done')\n")
    code, out, err, cpu = fio.run_counting_cpu([sys.executable, "-c", burn], 30, "burn")
    assert (code, out.strip(), err) == (0, "done", "")
    assert 0.6 <= cpu < 3.0  # both processes' 0.3 s, and the interpreters' start
    began = time.monotonic()
    parent, job = tmp_path / "parent-still-running", tmp_path / "job-still-running"
    forks = (f"import os, time\nif os.fork() == 0:\n    time.sleep(2); open({str(job)!r}, 'w'); os._exit(0)\n"
             f"time.sleep(2); open({str(parent)!r}, 'w')\n")  # as fio and a job it forked
    with pytest.raises(DbioError, match=r"fio \(slow\) did not finish within 1 s"):
        fio.run_counting_cpu([sys.executable, "-c", forks], 1, "slow")
    assert time.monotonic() - began < 2.5
    time.sleep(1.5)  # past the 2 s they would have slept
    assert not parent.exists() and not job.exists()  # both stopped, none left to run on


def test_verdict_a_device_that_changed_speed_during_the_run(complete):
    db_reads = catalogue.value(catalogue.figures_of(complete), "reads_per_s")

    def drifted(before, after):
        record = baseline_record(sync_reads=before)
        record["runs"]["sync_after"] = dict(run_record(after, 200.0, 20.0, "sync_after"))
        return with_baseline(complete, record)

    doc = drifted(db_reads, db_reads * 1.5)
    [found] = [x for x in verdict.findings(of(doc)) if x.code == "device_drift"]
    assert found.level == "warning" and "x1.50" in found.message
    assert f"between {1 / 1.5:.2f} and 1.00" in found.message
    assert not [x for x in verdict.findings(of(drifted(db_reads, db_reads * 1.1))) if x.code == "device_drift"]
    assert not [x for x in verdict.findings(of(with_baseline(complete, baseline_record()))) if x.code == "device_drift"]
    text = report.render(of(doc), "text")
    assert "synchronous (psync), after" in text and "right after it" in text
    # the drift recorded without one of fio's two runs it came from (a null reads/s): no finding, no crash
    del doc["baseline"]["runs"]["sync_after"]
    assert not [x for x in verdict.findings(of(doc)) if x.code == "device_drift"]
    doc = drifted(db_reads, db_reads * 1.5)
    doc["baseline"]["runs"]["sync"]["reads_per_s"] = None
    assert not [x for x in verdict.findings(of(doc)) if x.code == "device_drift"] and report.render(of(doc), "text")


def test_a_relation_is_its_first_file_and_then_its_segments():
    from dbio.engines.postgres.files import segment_paths

    assert segment_paths("base/5/16384", 8192, 1 << 30) == ["base/5/16384"]
    assert segment_paths("base/5/16384", 1 << 30, 1 << 30) == ["base/5/16384"]
    assert segment_paths("base/5/16384", (2 << 30) + 8192, 1 << 30) == ["base/5/16384", "base/5/16384.1",
                                                                          "base/5/16384.2"]


PG_TEST_FSYNC = """1 second per test
O_DIRECT supported on this platform for open_datasync and open_sync.

Compare file sync methods using one 8kB write:
(in "wal_sync_method" preference order, except fdatasync is Linux's default)
        open_datasync                      8341.641 ops/sec     120 usecs/op
        fdatasync                          7913.596 ops/sec     126 usecs/op
        fsync                              9673.110 ops/sec     103 usecs/op
        fsync_writethrough                              n/a
        open_sync                          7819.429 ops/sec     128 usecs/op

Compare file sync methods using two 8kB writes:
        fdatasync                          6353.015 ops/sec     157 usecs/op
"""  # pg_test_fsync 18.6's output on this project's VM (recorded)


def test_the_redo_sync_rate_is_pg_test_fsyncs_first_comparison():
    from dbio.engines.postgres.wal_sync_rate import parse_first_block

    methods = parse_first_block(PG_TEST_FSYNC.splitlines())
    assert methods["fdatasync"] == {"syncs_per_s": 7913.596, "avg_sync_us": 126.0}  # not the two-write figure
    assert set(methods) == {"open_datasync", "fdatasync", "fsync", "open_sync"}  # n/a is no figure


def test_the_write_side_shows_beside_the_database(complete):
    record = baseline_record()
    record["write_side"] = {"writes": {**run_record(9000.0, 150.0, 30.0, "writes"), "writes_per_s": 9000.0,
                                       "avg_write_us": 150.0, "p99_write_us": 400.0, "host_cpu_us_per_write": 30.0},
                            "redo_sync": {"tool": "pg_test_fsync", "method": "fdatasync", "command": ["pg_test_fsync"],
                                          "syncs_per_s": 5000.0, "avg_sync_us": 200.0}}
    doc = with_baseline(complete, record)
    jsondoc.check(doc, file_formats.result(results.FORMAT_VERSION))
    f = catalogue.figures_of(doc)
    assert catalogue.value(f, "raw_avg_write_us") == 150.0 and catalogue.value(f, "raw_wal_syncs_per_s") == 5000.0
    model = report.model.build(of(doc))
    [section] = [s for s in model["sections"] if s["id"] == "baseline"]
    rows = {row[0]: row for row in section["tables"][0]["rows"]}
    wal = f["latency"]["avg_wal_sync_us"]
    assert rows["Avg WAL sync (us)"][1:] == [wal, 200.0, pytest.approx(wal / 200.0)]
    assert any(line.startswith("redo log sync test: 5,000 syncs/s") for line in section["lines"])
    assert "random writes (scratch file)" in [row[0] for row in section["tables"][1]["rows"]]



@pytest.mark.skipif(shutil.which("fio") is None, reason="needs fio")
def test_baselines_out_is_never_written_through_a_planted_link(tmp_path, monkeypatch):
    """dbio baseline --out /tmp/b.json: a link another user put there (fio runs for minutes) is not followed
    into the file it names; fio really runs, on a scratch file in --baseline-path."""
    from dbio.config import Sources, load_config
    from dbio.ui import UI

    scratch = tmp_path / "storage"
    scratch.mkdir()
    monkeypatch.setattr(baseline_command, "place_for", lambda config, path, ui: baselines.scratch_place(path, 8 << 20))
    config = load_config(Sources(cli={"run_time": "1s", "scale": "8MiB", "allow_cached": True}, cwd=tmp_path,
                                 discover=False))
    victim = tmp_path / "victim"
    victim.write_text("precious")
    out = tmp_path / "b.json"
    out.symlink_to(victim)
    with pytest.raises(UsageError, match=f"--out {out} cannot be written"):
        baseline_command.baseline(config, UI(quiet=True), scratch, out)
    assert victim.read_text() == "precious" and out.is_symlink()
    out.unlink()
    record = baseline_command.baseline(config, UI(quiet=True), scratch, out)
    assert json.loads(out.read_text())["runs"]["sync"]["reads"] == record["runs"]["sync"]["reads"] > 0


def test_a_baseline_has_seconds_enough_on_each_side_of_a_short_run():
    """run --baseline on a 20 s run gave fio 2 s before and 1 s after, on a device whose speed changed 2x."""
    sync, deep = baselines.durations(20)
    assert baselines.halves(sync) == (3, 3) and deep >= 2


def _with_rounds(*rates):
    record = baseline_record(sync_reads=rates[0])
    record["runs"]["sync_after"] = dict(run_record(rates[1], 200.0, 20.0, "sync_after"))
    return record


@pytest.mark.parametrize("rates, extra", [
    ((10_000, 5_000, 5_200), [5_200]),  # disagree, then one more round agrees with the last: stop
    ((10_000, 5_000, 9_000, 4_000), [9_000, 4_000]),  # they keep disagreeing: EXTRA_ROUNDS at most
    ((10_000, 10_500), []),  # within 1.2x: nothing more
])
def test_fio_reads_again_while_its_rounds_disagree(rates, extra):
    record = _with_rounds(*rates[:2])
    queue = [dict(run_record(r, 100.0, 20.0, "sync_more")) for r in rates[2:]]
    notes: list[str] = []
    assert baselines.more_rounds(record, lambda: queue.pop(0), 3, notes.append) is None
    assert [r["reads_per_s"] for r in baselines.sync_rounds(record)[2:]] == extra
    assert len(notes) == len(extra) and (not notes or "the device changed speed, so fio reads 3 s more" in notes[0])
    fig = baselines.figures(record)
    rounds = rates[:2 + len(extra)]
    assert fig["reads_per_s_low"] == min(rounds) and fig["reads_per_s_high"] == max(rounds)
    assert fig["rounds"] == len(rounds)


def test_the_efficiency_is_given_with_its_spread_over_fios_rounds(complete):
    db_reads = catalogue.value(catalogue.figures_of(complete), "reads_per_s")
    record = _with_rounds(db_reads, db_reads * 2)
    record["runs"]["sync_more_1"] = dict(run_record(db_reads * 1.6, 100.0, 20.0, "sync_more"))
    doc = with_baseline(complete, record)
    line = baseline_section.efficiency_line(of(doc))
    assert "(0.50-1.00 over fio's 3 rounds)" in line, line
    [drift] = [x for x in verdict.findings(of(doc)) if x.code == "device_drift"]
    assert "in 1 more round after it" in drift.message and "between 0.50 and 1.00" in drift.message


def test_dbio_baseline_alone_runs_for_seconds_not_a_runs_five_minutes(tmp_path):
    from dbio.config import Sources, load_config

    default = load_config(Sources(env={}, cli={}, cwd=tmp_path))
    alone = baseline_command.ALONE_SECONDS
    assert baseline_command.alone_seconds(default) == alone and sum(alone) <= 60
    given = load_config(Sources(env={}, cli={"run_time": 120}, cwd=tmp_path))
    assert baseline_command.alone_seconds(given) == (120, 30)


def test_baseline_seconds_sets_fios_synchronous_seconds():
    assert baselines.durations(300, 2) == (2, 1) and baselines.durations(20, 12) == (12, 4)
    assert baselines.durations(20, 0) == baselines.durations(20)
