"""The headline carries its caveats in its own line (issue 26, item 11): a warning that makes one of its
figures not the storage's alone is said beside that figure, one about none of them at the line's end,
in the text, Markdown and HTML reports (line and cards) and in what `dbio run` prints first. Each
caveat is made alone on the recorded valid run, so that no other warning carries the test."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest

from dbio import report
from dbio import result as results
from dbio.report import verdict
from dbio.result_records import of

FIXTURES = Path(__file__).parent.parent / "fixtures"
BASE = results.read(FIXTURES / "result_complete.json")


def with_(change):
    doc = copy.deepcopy(BASE)
    change(doc)
    return doc


def shared_device(doc):  # the device did 4x the engine's reads
    doc["figures"]["validity"].update(device_reads=4 * 42391.0, device_to_db_read_ratio=4.0)


def small_data_set(doc):  # only 1.5x the cache: a warning, not invalid
    doc["figures"]["validity"].update(data_bytes=1.5 * 16777216, data_to_cache_ratio=1.5)


def stalled(doc):
    doc["stalls"] = [{"offset": 2.0, "seconds": 1.5}]


def lost(doc):
    doc.update(status="lost", status_reason="the dbio process ended before the run finished")


def node_stopped(doc):
    other = {**copy.deepcopy(doc["nodes"][0]), "name": "node2",
             "stopped": {"at": None, "since_start": 2.0, "reason": "server closed the connection",
                         "figures_cover_seconds": 1.0}}
    doc["nodes"] = [doc["nodes"][0], other]
    doc["cluster"] = {"nodes": 2, "stopped_nodes": ["node2"], "partial": ["totals (node2 stopped)"]}


def other_sessions(doc):
    for row in doc["series"]:
        if row.get("phase") == "measured":
            row.update(other_sessions_active=1.0, other_session_names=["psql"])


def refused(doc):
    doc["events"] = [*doc["events"], {"t": 1.0, "kind": "readings_refused",
                                      "message": "1 reading of the server's counters refused"}]


def checkpoint(doc):
    doc["normalized"]["end"]["checkpoints"]["done"] = 3.0


def cpu_queue(doc):  # a warning the headline has no words of its own for
    doc["config"]["workload"]["sessions"] = 64
    doc["figures"]["cpu"].pop("cpu_wait_pct", None)


CASES = [
    (shared_device, "physical reads/s (the device did 4.0x the engine's reads: other work shared the device)"),
    (small_data_set, "physical reads/s (the data set is only 1.5x the cache: some reads may be cache hits)"),
    (stalled, "physical reads/s (the window stalled 30% of its time)"),
    (lost, "physical reads/s (run LOST: the figures cover the part that ran)"),
    (node_stopped, "physical reads/s (node2 stopped: the totals are partial)"),
    (other_sessions, "physical reads/s (other sessions were active)"),
    (refused, "physical reads/s (readings refused: gaps in the series)"),
    (checkpoint, "us avg read (1 checkpoint(s) in the window)"),
    (cpu_queue, "reads per host-CPU-second (also: cpu queue)"),
]


def test_the_recorded_valid_run_has_no_caveat():
    assert verdict.headline(of(BASE)) == ("8,569 physical reads/s, 133 us avg read, 120.4 MiB/s, "
                                      "12,616 reads per host-CPU-second")


@pytest.mark.parametrize("change, caveat", CASES, ids=[c.__name__ for c, _ in CASES])
def test_each_warning_is_said_in_the_headline_line(change, caveat):
    doc = with_(change)
    warned = [f.code for f in verdict.findings(of(doc)) if f.level == "warning"]
    assert warned, "the change makes a warning"
    assert not verdict.invalid(of(doc))
    line = verdict.headline(of(doc))
    assert caveat in line, line
    text = report.render(of(doc), "text")
    assert f"Headline: {line}" in text.splitlines()
    assert f"**Headline:** {line}" in report.render(of(doc), "md")  # nothing in it Markdown escapes


def test_the_html_line_and_cards_carry_the_caveat():
    doc = with_(shared_device)
    html = report.render(of(doc), "html")
    sub = re.search(r'<p class="sub">([^<]*)</p>', html).group(1)
    assert "(the device did 4.0x the engine&#x27;s reads: other work shared the device)" in sub
    cards = re.search(r'<section class="cards" id="headline">.*?</section>', html).group(0)
    card = re.search(r'<div class="card caveat">.*?Physical reads/s.*?</div></div>', cards).group(0)
    assert "the device did 4.0x the engine&#x27;s reads: other work shared the device" in card


def test_several_caveats_of_one_figure_share_its_parenthesis():
    doc = with_(lambda d: (shared_device(d), small_data_set(d)))
    assert ("physical reads/s (the device did 4.0x the engine's reads: other work shared the device; the data set "
            "is only 1.5x the cache: some reads may be cache hits), 133 us avg read") in verdict.headline(of(doc))


def test_what_dbio_run_prints_first_is_the_headline_with_its_caveats(tmp_path):
    from dbio.jobs.run import summary_lines
    from dbio.jobs.run import RunResult

    doc = with_(shared_device)
    first = summary_lines(RunResult(document=doc, directory=tmp_path))[0]
    assert first == f"complete, VALID: {verdict.headline(of(doc))}" and "other work shared the device" in first


def test_a_comparison_quotes_each_side_s_reads_with_its_caveats():
    from dbio.report import compare_model

    line = compare_model.build([("a", of(BASE)), ("b", of(with_(shared_device)))])["headline_text"]
    assert line.startswith("b vs a: reads/s ")
    assert line.endswith("(b: the device did 4.0x the engine's reads: other work shared the device)"), line


def test_the_shared_device_finding_names_an_event_program_that_read_storage():
    """exec:'s program read storage by its own accounting (jobs/disruption_actions.py): the other reader named."""
    doc = with_(shared_device)
    [plain] = [f for f in verdict.findings(of(doc)) if f.code == "shared_device"]
    assert "--event program" not in plain.message
    doc["disruptions"] = [{"event": "4s=exec:/opt/fio-job", "action": "exec", "program": "/opt/fio-job",
                           "read_bytes": 812 << 20, "write_bytes": 0, "exit_status": 0},
                          {"event": "9s=exec:/opt/quiet", "action": "exec", "program": "/opt/quiet",
                           "read_bytes": 0, "write_bytes": 0, "exit_status": 0}]
    [named] = [f for f in verdict.findings(of(doc)) if f.code == "shared_device"]
    assert "(the --event program /opt/fio-job read 812 MiB and wrote 0 B, by its own accounting)" in named.message
    assert "/opt/quiet" not in named.message  # it read and wrote nothing
    doc["disruptions"][1].update(read_bytes=4 << 20)
    [both] = [f for f in verdict.findings(of(doc)) if f.code == "shared_device"]
    assert ("(the --event programs /opt/fio-job read 812 MiB and wrote 0 B; /opt/quiet read 4 MiB and wrote 0 B, "
            "by their own accounting)") in both.message
