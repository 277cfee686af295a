"""The devices' reads against the engine's, one judgement for the verdict and the live view (stats/device_reads.py):
requests for single-block reads, bytes for multi-block ones, with the run's page size. Each case starts from a
recorded window of tests/fixtures/live/ (direct I/O, the device reading what the engine did) and changes what the
device did the way the block layer or another process would."""

from __future__ import annotations

import json
from pathlib import Path

from dbio import result as results
from dbio.report import storage_findings, verdict
from dbio.stats import live
from dbio.result_records import of

FIXTURES = Path(__file__).parent.parent / "fixtures"
RECORDED = FIXTURES / "live"
MiB = 1 << 20


def _window(name: str, *, requests: float = 1.0, extra_requests: float = 0.0, byte_share: float = 1.0,
            extra_bytes: float = 0.0) -> dict:
    """A recorded window's reads, the device's scaled and added to."""
    window = dict(json.loads((RECORDED / f"{name}.json").read_text())["window"])
    window["device_reads"] = window["device_reads"] * requests + extra_requests
    window["device_read_bytes"] = window["device_read_bytes"] * byte_share + extra_bytes
    return window


def _figures(window: dict) -> dict:
    return {"validity": {**window, "device_to_db_read_ratio": window["device_reads"] / window["db_reads"]}}


def _verdict(window: dict) -> dict:
    """The verdict's findings on the recorded format-2 result (direct I/O, its data on the devices dbio read)
    given the window's reads."""
    doc = results.completed(json.loads((FIXTURES / "result_format2.json").read_text()))
    doc["figures"]["validity"].update(_figures(window)["validity"])
    return {f.code: f for f in verdict.findings(of(doc))}


def _live_says(window: dict, page_bytes: int = 8192) -> list[str]:
    """What the live view says of two readings with the window's reads between them: its first, every session at
    rest, and its last, taken once every session had published."""
    def reading(t: float, engine_reads: float, engine_bytes: float, device_reads: float, device_bytes: float,
                **record) -> dict:
        return {"t": t, "engine": {"t": t, "data": {"reads": engine_reads, "read_bytes": engine_bytes, "writes": 0},
                                   "client": {"reads": engine_reads, "read_time_ms": 0.0}, "wal": {"bytes": 0.0}},
                "os": {"t": t, "disks": {"vda": {"reads": device_reads, "sectors_read": device_bytes / 512}}},
                "statements": {}, **record}

    findings = live.Findings(live.RunFacts(page_bytes=page_bytes))
    findings.check(reading(0.0, 0, 0, 0, 0))
    return findings.check(reading(15.0, window["db_reads"], window["db_read_bytes"], window["device_reads"],
                                  window["device_read_bytes"], k=15, answered=15.02, published_to=15.0,
                                  published_by_all=15.03, final=True))


def test_another_process_s_large_reads_are_other_work_by_bytes():
    """The scan's recorded window and another process reading 300 MiB in 1 MiB requests: 7.9% more bytes, 0.26%
    more requests. main's verdict judged the requests first and found nothing (None) while its live view, by
    bytes, said other work: the two disagreed on one window. Both say it now."""
    window = _window("scan", extra_requests=300, extra_bytes=300 * MiB)
    said = storage_findings.read_excess(_figures(window), 8192)
    assert said == ("the device read 108.5% of the engine's bytes (device 3.8 GiB, engine 3.5 GiB: multi-block "
                    "reads are judged by bytes)")
    assert _live_says(window) == ["the device read at least 308.6 MiB more than the engine's 3.5 GiB so far "
                                  "(multi-block reads, judged by bytes): other work shares the device"]
    assert storage_findings.read_excess(_figures(_window("scan")), 8192) is None  # as recorded: the same reads
    assert _live_says(_window("scan")) == []


def test_merged_requests_are_no_cache():
    """One parallel-worker scan's recorded window with the block layer merging each two adjacent 128 KiB reads
    into one request: half the requests, every byte. main's verdict judged the requests and said "only 50.0% of
    the engine's physical reads reached the device": invalid. The bytes say the device read them all."""
    window = _window("scan_workers", requests=0.5)
    found = _verdict(window)
    assert "page_cache" not in found and "shared_device" not in found, found.get("page_cache")
    assert _live_says(window) == []


def test_a_cache_of_split_reads_is_a_cache():
    """A cache served a fifth of the scan's bytes while the device split each read it did into two requests
    (1.6 requests for each of the engine's): main's verdict found neither a cache (requests over 0.9) nor other
    work (bytes within 2%): nothing. Judged by bytes: 80% reached the device."""
    window = _window("scan", requests=1.6, byte_share=0.8)
    assert storage_findings.read_excess(_figures(window), 8192) is None
    found = _verdict(window).get("page_cache")
    assert found is not None and found.level == "invalid", found
    assert found.message == ("only 80.2% of the bytes the engine read reached the device (multi-block reads, judged "
                             "by bytes): with direct I/O on, check which device the data directory is on")
    assert _live_says(window) == ["the device read 80% of the 3.5 GiB the engine read so far (multi-block reads, "
                                  "judged by bytes): a cache serves the rest, so reads/s is not the storage's alone"]


def test_single_page_reads_are_judged_by_requests_with_the_engine_s_page():
    """InnoDB's 16 KiB pages read one at a time are single-block: requests, though they are twice PostgreSQL's
    8 KiB (a fixed 24 KiB threshold judged either way); two pages a read are multi-block on PostgreSQL."""
    window = {"db_reads": 10_000, "db_read_bytes": 10_000 * 16384, "device_reads": 10_400,
              "device_read_bytes": 10_000 * 16384}
    assert storage_findings.read_excess(_figures(window), 16384) == (
        "the device did 104.0% of the engine's physical reads (device 10,400, engine 10,000 read requests)")
    assert storage_findings.read_excess(_figures(window), 8192) is None  # 16 KiB reads of 8 KiB pages: bytes
