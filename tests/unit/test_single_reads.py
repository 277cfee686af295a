"""Single reads' latency (the read probe): what one lookup's EXPLAIN says it read and how long, the probe's
tally of its lookups, and the window's distribution from every node's probe (all pure)."""

import json
from pathlib import Path

import pytest

from dbio.engines.base import ProbeRead
from dbio.errors import DbioError
from dbio.engines.postgres.read_probe import parse_explain
from dbio.report import single_read_section
from dbio.run.read_probe import ProbeTally, bucket_of
from dbio.stats import catalogue, histogram, single_reads

SAMPLES = json.loads((Path(__file__).parent.parent / "fixtures" / "read_probe_explain.json").read_text())
BOUNDS = histogram.bounds_us()


@pytest.mark.parametrize("name, blocks, us", [
    ("pg18_1_read", 1, 517.0), ("pg18_2_read", 2, 478.0), ("pg18_0_read", 0, 0.0),
    ("pg15_0_read", 0, 0.0),  # 15-16 name it "I/O Read Time"
    ("pg18_untimed", 1, None),  # track_io_timing off: no time, never 0 us
])
def test_a_lookup_s_reads_and_their_time_are_the_top_plan_node_s(name, blocks, us):
    read = parse_explain(SAMPLES[name])
    assert read.blocks_read == blocks
    assert read.read_us == (None if us is None else pytest.approx(us))


def test_planning_reads_are_not_the_lookup_s():
    doc = json.loads(json.dumps(SAMPLES["pg18_1_read"]))
    doc[0]["Planning"].update({"Shared Read Blocks": 7, "Shared I/O Read Time": 3.5})  # a plan read the catalog
    read = parse_explain(json.dumps(doc))
    assert (read.blocks_read, read.read_us) == (1, pytest.approx(517.0))


def test_a_value_s_bucket_is_the_one_the_histograms_put_it_in():
    assert bucket_of(0.5, BOUNDS) == 0  # below the first bound
    assert bucket_of(BOUNDS[0], BOUNDS) == 1  # [bounds[0], bounds[1])
    assert bucket_of(517.0, BOUNDS) == next(i for i, b in enumerate(BOUNDS) if b > 517.0)
    assert bucket_of(1e12, BOUNDS) == len(BOUNDS)


def test_only_lookups_that_read_one_timed_block_are_in_the_histogram():
    tally = ProbeTally(len(BOUNDS) + 1)
    for read in (ProbeRead(1, 100.0), ProbeRead(1, 300.0), ProbeRead(0, 0.0), ProbeRead(2, 900.0),
                 ProbeRead(1, None)):
        tally.add(read, BOUNDS)
    assert (tally.lookups, tally.single, tally.cached, tally.multi, tally.untimed) == (5, 2, 1, 1, 1)
    assert tally.blocks_read == 5 and tally.max_us == 300.0 and tally.sum_us == 400.0
    assert sum(tally.counts) == 2


def _probe(values, **more):
    tally = ProbeTally(len(BOUNDS) + 1)
    for v in values:
        tally.add(ProbeRead(1, v), BOUNDS)
    return {"rate_per_s": 25, "method": "EXPLAIN", **tally.to_dict(), **more}


def test_the_window_s_distribution_adds_every_node_s_probe():
    a = _probe([10.0] * 50 + [200.0] * 45)
    b = _probe([200.0] * 4 + [5000.0])
    out = single_reads.derive({"n1": a, "n2": b}, BOUNDS, window_reads=10_000)
    assert out["count"] == 100 and out["nodes"] == 2 and out["max_us"] == 5000.0
    assert 9.0 <= out["p50_us"] <= 10.0 + 1  # half of them at 10 us (its bucket's width)
    assert 175.0 <= out["p90_us"] <= 200.0 + 25  # inside 200 us's bucket
    assert out["p99_9_us"] > 4000.0  # the one slow read is the tail
    assert out["fast_pct"] == pytest.approx(50.0)
    assert out["probe_share_pct"] == pytest.approx(1.0)
    assert sum(b["count"] for b in out["awr_buckets"]) == 100
    figures = {"latency": {"single_reads": out}}
    assert catalogue.value(figures, "single_read_p99_us") == out["p99_us"]


def test_no_single_read_is_an_absent_figure_that_says_why():
    tally = ProbeTally(len(BOUNDS) + 1)
    tally.add(ProbeRead(0, 0.0), BOUNDS)
    tally.add(ProbeRead(2, 90.0), BOUNDS)
    out = single_reads.derive({"n1": {"rate_per_s": 25, **tally.to_dict()}}, BOUNDS)
    assert "count" not in out and "p99_us" not in out
    assert "1 found it cached, 1 read more than one" in out["why"]
    refused = single_reads.derive({"n1": {"rate_per_s": 25, **ProbeTally(len(BOUNDS) + 1).to_dict(),
                                          "why": "the probe could not time reads: no SET"}}, BOUNDS)
    assert refused["why"] == "the probe could not time reads: no SET"
    assert catalogue.value({"latency": {"single_reads": refused}}, "single_read_p99_us") is None
    section = single_read_section.section({"latency": {"single_reads": refused}})
    assert section["lines"] == ["not measured: single reads' latency (the probe could not time reads: no SET)"]


def test_the_report_says_where_and_how_and_what_the_page_cache_may_be():
    out = single_reads.derive({"n1": _probe([10.0] * 3 + [200.0])}, BOUNDS, window_reads=400)
    f = {"window_seconds": 0.16, "latency": {"single_reads": out}}
    buffered = single_read_section.section(f, direct_io=False)
    notes = " ".join(buffered["tables"][0]["notes"])
    assert "a probe session" in notes and "25 lookups/s asked, 25.0/s made" in notes and "4 single-block reads" in notes
    assert "75.0% took under 20 us: likely the OS page cache" in notes
    assert "1.00% of the client reads" in notes
    direct = " ".join(single_read_section.section(f, direct_io=True)["tables"][0]["notes"])
    assert "never the OS page cache" in direct and "likely" not in direct
    assert [r[0] for r in buffered["tables"][1]["rows"]][0] == "<64us"


MARIADB = json.loads((Path(__file__).parent.parent / "fixtures" / "read_probe_analyze.json").read_text())


@pytest.mark.parametrize("name, pages, us", [
    ("mariadb_1_read", 1, 4305.0), ("mariadb_2_read", 2, 491.9), ("mariadb_0_read", 0, 0.0)])
def test_mariadb_s_analyze_gives_innodb_s_pages_read_and_their_time(name, pages, us):
    from dbio.engines.mysql.read_probe import parse_analyze

    read = parse_analyze(json.dumps(MARIADB[name]))
    assert read.blocks_read == pages and read.read_us == pytest.approx(us, abs=0.1)


def test_pages_read_without_a_time_are_untimed_never_0_us():
    from dbio.engines.mysql.read_probe import parse_analyze

    doc = json.loads(json.dumps(MARIADB["mariadb_1_read"]))
    del doc["query_block"]["nested_loop"][0]["table"]["r_engine_stats"]["pages_read_time_ms"]
    assert parse_analyze(doc) == ProbeRead(1, None)


def test_a_batch_s_lookups_are_the_append_s_branches_in_order():
    # recorded: PostgreSQL 18, three lookups of one second as one prepared UNION ALL (read_probe_prepare.sql),
    # the second's row and index entry in shared buffers
    from dbio.engines.postgres.read_probe import parse_lookups

    doc = SAMPLES["pg18_batch_3"]
    reads = parse_lookups(json.dumps(doc), 3)
    assert [(r.blocks_read, r.read_us) for r in reads] == [(1, pytest.approx(1913.0)), (0, 0.0),
                                                           (1, pytest.approx(1850.0))]
    assert sum(r.read_us for r in reads) == pytest.approx(doc[0]["Plan"]["Shared I/O Read Time"] * 1000)
    assert parse_lookups(SAMPLES["pg18_1_read"], 1) == [parse_explain(SAMPLES["pg18_1_read"])]  # one: no Append
    with pytest.raises(DbioError, match="has 3 lookups where it asked 4"):
        parse_lookups(doc, 4)


def test_mariadb_s_batch_gives_each_union_branch_s_pages_in_select_order():
    from dbio.engines.mysql.read_probe import parse_lookups

    doc = json.loads(json.dumps(MARIADB["mariadb_batch_3"]))
    specs = doc["query_block"]["union_result"]["query_specifications"]
    specs.reverse()  # the select_id orders them, not the list
    reads = parse_lookups(doc, 3)
    assert [r.blocks_read for r in reads] == [1, 2, 2]  # recorded: MariaDB 10.11, three lookups as one UNION ALL
    assert [r.read_us for r in reads] == [pytest.approx(1711.8, abs=0.1), pytest.approx(288.3, abs=0.1),
                                          pytest.approx(194.3, abs=0.1)]
    with pytest.raises(DbioError, match="has 3 lookups where it asked 2"):
        parse_lookups(doc, 2)
