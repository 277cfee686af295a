"""sweep --objective: a real search against the embedded instance, to its end, and resumed."""

from __future__ import annotations

import json

from dbio.stats.capacity import parse_slo
from dbio.sweep import search

from tests.integration.conftest import SMALL, dbio, over
from tests.integration.test_sweep_compare import sweep_dir

OBJECTIVE = "read_p99<2ms"


def _probes(doc: dict) -> list[search.Probe]:
    return [search.Probe(s["name"], int(s["values"]["threads_per_schema"]), int(s["values"]["threads_per_schema"]),
                         s["headline"]["reads_per_s"], s["probe"]["value_us"], s["probe"]["valid"], s["probe"]["why"])
            for s in doc["steps"]]


def test_search_runs_to_its_answer_each_probe_a_step(instance):
    # a loaded host moves single reads' p99 around: whatever it measured, the search must have followed its
    # own rule on those figures, stopped, and said its answer with the evidence of the steps it quotes
    done = dbio("sweep", *instance.args("search", *over(SMALL, "--warmup", "0"), "--label", "search"),
                "--objective", OBJECTIVE, "--max-sessions", "8", timeout=120)
    assert done.code == 0, done.text
    directory = sweep_dir(done)
    doc = json.loads((directory / "sweep.json").read_text())
    slo = parse_slo(OBJECTIVE)
    probes = _probes(doc)
    assert all(s["status"] == "complete" and (directory / s["name"] / "result.json").exists() for s in doc["steps"])
    for taken in range(1, len(probes)):  # each probe is the one the search asked for after the ones before
        assert search.decide(probes[:taken], slo, 8).threads == probes[taken].threads
    final = search.decide(probes, slo, 8)
    # 1, 2, 4, 8, then the bisection between the last met and the first missed: 4..8 takes two (6, then 5 or 7)
    assert final.threads is None and len(probes) <= 6
    [answer] = doc["search"]["answers"]
    assert answer["line"] == final.line and answer["best"] == final.best and answer["reason"] == final.reason
    assert f"complete: {final.line}" in done.out and f"answer: {final.line}" in done.out
    assert f"answer: {final.line}" in (directory / "sweep.txt").read_text()
    if final.best:  # the answer quotes a step that met it, with its own result's figure
        best = next(s for s in doc["steps"] if s["name"] == final.best)
        result = json.loads((directory / final.best / "result.json").read_text())
        assert result["verdict"]["valid"] and best["probe"]["value_us"] == \
            result["figures"]["latency"]["single_reads"]["p99_us"] <= slo.limit_us
    # resumed with its answer lost (interrupted after the last step), the search decides again from the
    # steps recorded, running none
    doc["search"]["answers"], doc["status"] = [], "interrupted"
    (directory / "sweep.json").write_text(json.dumps(doc))
    resumed = dbio("sweep", "--resume", str(directory))
    assert resumed.code == 0, resumed.text
    again = json.loads((directory / "sweep.json").read_text())
    assert again["status"] == "complete" and len(again["steps"]) == len(doc["steps"])
    assert [a["line"] for a in again["search"]["answers"]] == [final.line]
