"""The read probe on the embedded PostgreSQL: single reads timed by the engine during a run, in result.json and
the report; a role that cannot turn the engine's I/O timer on gets why, and the run goes on."""

from __future__ import annotations

import asyncio

import pytest

from dbio.engines.postgres import read_probe
from dbio.errors import DbioError
from tests.integration.conftest import SMALL, dbio, dbio_backends, load_result, result_dir

pytestmark = pytest.mark.integration


def test_a_run_times_single_reads_with_the_engine_s_timer(instance, loaded_db):
    done = dbio("run", *instance.args(loaded_db, *SMALL), "--label", "read-probe", "--html-report")
    assert done.code == 0, done.text
    doc = load_result(result_dir(done))
    probe = doc["read_probe"]["node1"]
    seconds = doc["figures"]["window_seconds"]
    # 25 lookups a second, a batch each second, while the window is open; a loaded host may make some late
    # (skipped, never bunched)
    assert 0.3 * probe["rate_per_s"] * seconds <= probe["lookups"] <= probe["rate_per_s"] * (seconds + 1), probe
    assert probe["lookups"] == probe["single"] + probe["cached"] + probe["multi"] + probe["untimed"]
    assert probe["errors"] == 0 and "why" not in probe
    single = doc["figures"]["latency"]["single_reads"]
    # 32 MiB of rows against 16 MiB of shared_buffers, read with direct I/O: most lookups read their block
    assert single["count"] == probe["single"] > 0, single
    assert 0 < single["p50_us"] <= single["p90_us"] <= single["p99_us"] <= single["p99_9_us"] <= single["max_us"]
    assert single["probe_share_pct"] < 10  # against the sessions' reads, next to nothing
    assert "track_io_timing" in single["method"]
    text = (result_dir(done) / "report.txt").read_text()
    assert "Single read latency" in text and "sampled by a probe session" in text
    assert f"{single['count']:,} single-block reads" in text
    assert "chart-single_read_histogram" in (result_dir(done) / "report.html").read_text()
    assert not [b for b in dbio_backends(instance) if (b[1] or "").startswith(read_probe.PROBE_NAME)]  # closed


def test_a_role_that_may_not_turn_the_timer_on_is_told_why(instance):
    with instance.connect() as conn:
        conn.execute("DROP ROLE IF EXISTS probe_untimed")
        conn.execute("CREATE ROLE probe_untimed LOGIN")
        conn.execute("ALTER ROLE probe_untimed SET track_io_timing = off")  # as a server without it would be
    conninfo = instance.conninfo("postgres").replace("user=dbio", "user=probe_untimed")
    try:
        with pytest.raises(DbioError, match="track_io_timing is off and this role may not SET it"):
            asyncio.run(read_probe.connect(conninfo, "index"))
        with instance.connect() as conn:  # and the superuser's session turns it on for itself only
            async def timed() -> bool:
                probe, _ = await read_probe.connect(instance.conninfo("postgres"), "index")
                async with probe:
                    await probe.execute("SET track_io_timing = off")  # as a server without it would be
                    await probe.execute(read_probe.sqlfiles.text("read_probe_timing.sql"))
                    return (await (await probe.execute("SHOW track_io_timing")).fetchone())[0] == "on"
            assert asyncio.run(timed())
            assert conn.execute("SELECT setting FROM pg_settings WHERE name = 'track_io_timing'").fetchone()[0] == "on"
    finally:
        with instance.connect() as conn:
            conn.execute("DROP ROLE IF EXISTS probe_untimed")
