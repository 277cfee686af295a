"""Parts of one run: three `dbio run --part i/3` processes against one server (the embedded instance
reached through --dsn, as three hosts would reach one server) at one --start-at. The server admits
the three and refuses an unrelated run meanwhile; `dbio merge` adds the parts' own reads and takes the
server's counters once, and the two agree.
"""

from __future__ import annotations

import os
import time
from datetime import datetime, timezone

import pytest

from tests import forked_dbio
from tests.integration.conftest import (SMALL, assert_other_runs_refused, dbio, dbio_backends, finished_parts,
                                       kill_left, launch_margin, load_result, wait_for)

DB = "parts"
PARTS = 3
WARMUP = 1.0  # SMALL's
RUN = [*SMALL[:-2], "--run-time", "4s", "--allow-cached", "-t", "1"]  # a longer window: reads enough to compare


@pytest.fixture(scope="module")
def loaded(instance):
    done = dbio("setup", *instance.args(DB, *RUN))
    assert done.code == 0, done.text
    return instance


def _args(inst, stamp: str, *extra: str, run: list[str] = RUN) -> list[str]:
    return ["run", "--dsn", inst.conninfo(DB), "--results-dir", str(inst.results), *run, "--start-at", stamp, *extra]


def _launch(inst, stamp: str, *extra: str, run: list[str] = RUN) -> forked_dbio.Started:
    return forked_dbio.start(_args(inst, stamp, *extra, run=run), env={**os.environ, "COLUMNS": "200"})


def _stamp(window_at: float) -> str:
    return datetime.fromtimestamp(window_at, timezone.utc).isoformat()


def test_three_parts_share_one_server_and_merge_counting_each_read_once(loaded, workdir):
    window_at = time.time() + WARMUP + 10 + launch_margin(lambda stamp: _args(loaded, stamp))
    stamp = _stamp(window_at)
    later = _stamp(window_at + 60)  # a start no part has: the runs refused by the parts' hold alone ask it
    procs = [_launch(loaded, stamp, "--part", f"{i}/{PARTS}", "--label", f"p{i}") for i in range(1, PARTS + 1)]
    try:
        # all three hold the database (their lock connections): this run's part 2 a second time is refused
        # meanwhile (first: it names their start, so it must ask before they connect), and so are an unrelated
        # run and another run's part
        wait_for(lambda: sum("part" in (app or "") for _, app, _ in dbio_backends(loaded)) == PARTS,
                 timeout=60, what="three parts holding the database")
        assert_other_runs_refused(lambda *given: _args(loaded, *given), stamp, later, PARTS)
        docs, dirs = finished_parts(procs)
    finally:
        kill_left(procs)
    assert [d["status"] for d in docs] == ["complete"] * PARTS
    assert [d["part"]["index"] for d in docs] == [1, 2, 3]
    assert len({d["part"]["run"] for d in docs}) == 1
    identities = {n["server"]["identity"] for d in docs for n in d["nodes"]}
    assert len(identities) == 1 and None not in identities
    assert identities.pop().split(":")[0].isdigit()  # the system identifier: dbio's role may read it here

    # merged: the server's reads once, the parts' own reads added, and the two agree (within 2%). Counts, not
    # rates: a busy host reads a part's window late by up to a second, which would change its rate, not its count
    out = workdir / "parts-merged"
    merged = dbio("merge", *map(str, dirs), "--out", str(out))
    assert merged.code == 0, merged.text
    doc = load_result(out)
    ends = [d["nodes"][0]["normalized"] for d in docs]
    first, last = max(ends, key=lambda n: n["begin"]["t"]), max(ends, key=lambda n: n["end"]["t"])
    server_reads = last["end"]["data"]["reads"] - first["begin"]["data"]["reads"]  # pg_stat_io, once, every part in
    own_reads = sum(n["end"]["sessions"]["reads"] - n["begin"]["sessions"]["reads"] for n in ends)
    assert server_reads > 100 * PARTS
    assert own_reads == pytest.approx(server_reads, rel=0.02)
    [counted] = doc["counting"]
    assert counted["compared"] == "counts" and counted["agree"] is True, counted
    interval = last["end"]["t"] - first["begin"]["t"]
    assert counted["own_reads_per_s"] * interval == pytest.approx(own_reads, rel=1e-6), counted
    assert counted["server_reads_per_s"] * interval == pytest.approx(server_reads, rel=1e-6), counted
    seconds = doc["figures"]["window_seconds"]
    assert doc["figures"]["load_profile"]["physical_reads_per_s"] * seconds == pytest.approx(server_reads, rel=0.02)
    assert 0 <= doc["timeline"]["start_skew_seconds"] < 1.0
    assert doc["parts"]["missing"] == [] and doc["parts"]["incomplete"] == []
    assert "they agree" in merged.out
    # one part given twice is refused, in one line
    twice = dbio("merge", str(dirs[0]), str(dirs[0]), "--out", str(workdir / "parts-twice"))
    assert twice.code == 2 and len(twice.err.strip().splitlines()) == 1, twice.text


def test_parts_at_a_rate_each_ask_their_share_and_the_merge_adds_asked_and_achieved(loaded, workdir):
    # issue 36's "everywhere a run goes": --rate 400 over two parts is 200/s each, and the merged run asked 400
    window_at = time.time() + WARMUP + 10 + launch_margin(lambda stamp: _args(loaded, stamp))
    stamp = _stamp(window_at)
    procs = [_launch(loaded, stamp, "--part", f"{i}/2", "--label", f"rate{i}", "--rate", "400", "--rate-schedule",
                     "uniform") for i in (1, 2)]
    try:
        docs, dirs = finished_parts(procs)
    finally:
        kill_left(procs)
    assert [d["status"] for d in docs] == ["complete"] * 2
    assert [d["figures"]["rate"]["asked_per_s"] for d in docs] == [200, 200]
    out = workdir / "parts-rate-merged"
    merged = dbio("merge", *map(str, dirs), "--out", str(out))
    assert merged.code == 0, merged.text
    rate = load_result(out)["figures"]["rate"]
    assert rate["asked_per_s"] == 400
    # the parts' achieved added, as asked is: each its statements over its own window (over the server's interval,
    # which a part's late end reading lengthens on a busy host, they said 364/s of 384/s achieved)
    assert rate["achieved_per_s"] == pytest.approx(sum(d["figures"]["rate"]["achieved_per_s"] for d in docs),
                                                   rel=1e-9)
    assert rate["held"] in (True, False) and rate["intended_p99_us"] is not None
    assert "rate 400 statements/s (uniform)" in (out / "report.txt").read_text()


def test_the_loop_is_left_alone_when_current_and_installed_again_when_not(loaded):
    """Parts starting at once each install the loop: a current one is left as it is (re-creating it
    would lock the run's control table under another part's sessions), another one is replaced."""
    from pathlib import Path

    from dbio.engines.postgres import workload

    def loop_row(conn):
        return conn.execute("SELECT p.oid, p.xmin::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
                            "WHERE n.nspname = 'dbio' AND p.proname = 'slice'").fetchone()

    with loaded.connect(DB) as conn:
        workload.install(conn)
        before = loop_row(conn)
        workload.install(conn)
        assert loop_row(conn) == before  # current: untouched
        body = workload.loop_body()
        text = (Path(workload.__file__).parent / "sql" / "slice.sql").read_text()
        conn.execute(text.replace(body, body.replace("BEGIN", "BEGIN\n  -- another dbio's loop", 1)))
        assert not workload.has_workload(conn)
        workload.install(conn)
        assert workload.has_workload(conn) and loop_row(conn) != before


def test_an_event_runs_on_one_parts_side_and_the_merge_measures_it_on_the_whole_server(loaded, workdir):
    """Both parts are given the same events (one dbio.toml on every host): the stall runs on part 1's side only, the
    checkpoint naming part 2 on part 2's; the merge keeps both records, naming the part that ran each, and measures
    each over the merged curve (the server's reads/s: the other part's sessions went on reading through the stall)."""
    run = [*SMALL[:-2], "--run-time", "14s", "--allow-cached", "-t", "1"]
    events = ["--event", "5s=stall:2s", "--event", "10s@part2=checkpoint"]
    margin = launch_margin(lambda stamp: _args(loaded, stamp, "--part", "1/2", *events, run=run))
    window_at = time.time() + WARMUP + 10 + margin
    stamp = _stamp(window_at)
    procs = [_launch(loaded, stamp, "--part", f"{i}/2", "--label", f"ev{i}", *events, run=run) for i in (1, 2)]
    try:
        docs, dirs = finished_parts(procs)
    finally:
        kill_left(procs)
    assert [[r["event"] for r in d["disruptions"]] for d in docs] == [["5s=stall:2s"], ["10s@part2=checkpoint"]]
    assert [d["disruptions"][0]["part"] for d in docs] == [1, 2]
    assert docs[0]["disruptions"][0]["outcome"] == "done" and docs[1]["disruptions"][0]["checkpoint"]
    out = workdir / "parts-events-merged"
    merged = dbio("merge", *map(str, dirs), "--out", str(out))
    assert merged.code == 0, merged.text
    doc = load_result(out)
    names = [m["name"] for m in doc["merged_from"]]
    assert [(r["event"], r["ran_by"], r["part"]) for r in doc["disruptions"]] == [
        ("5s=stall:2s", names[0], 1), ("10s@part2=checkpoint", names[1], 2)]
    stall, checkpoint = doc["figures"]["disruptions"]
    assert stall["ran_by"] == names[0] and checkpoint["ran_by"] == names[1]
    assert stall.get("before_reads_per_s", 0) > 0 and stall["floor_pct"] < 90, stall  # the server's dip
    assert stall["seconds_below_90pct"] > 0.5, stall
    assert "floor_pct" in stall["ran_by_figures"]  # the part's own figures beside the merged ones
    report = (out / "report.txt").read_text()
    assert "Disruptions" in report and f"5s=stall:2s: run by {names[0]} (part 1)" in report
