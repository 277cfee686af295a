"""dbio kubernetes' merge Job, run: its container's command as its pod runs it (`sh -c`, Kubernetes' $(NAME)
expansion, the results volume a directory here, `dbio` this checkout's), over part results placed where the
run Jobs' pods write them (their --results-dir). On a volume that other runs share it reads only its own
run's parts; it waits for a part that is late; it merges the parts that wrote, one alone too, naming the
others; with none, it says so and fails."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from dbio import kubernetes as k8s
from dbio import results_dir
from tests import kube_pods
from tests.unit.test_merge_parts import part as part_result

REPO = Path(__file__).resolve().parents[2]
RUN_SECONDS = 35.0  # warm-up and run time


def _plan(start: float, pods: int = 3) -> k8s.Plan:
    return k8s.Plan(name="dbio", image="dbio", targets=("host=db1 dbname=dbio user=dbio",), pods_per_target=pods,
                    start_at=datetime.fromtimestamp(start, timezone.utc).isoformat(), run_args=(),
                    run_seconds=RUN_SECONDS)


def _on_host(text: str, volume: Path, env: dict[str, str] | None = None) -> str:
    return kube_pods.mounted(kube_pods.expand(text, env or {}), {k8s.RESULTS: volume})


def _write_part(plan: k8s.Plan, volume: Path, index: int) -> Path:
    """Part index (1-based)'s result, whole, where its pod's dbio run writes it: a directory of its own in the
    pod's --results-dir, named as dbio run names it (when it started, its label)."""
    job = k8s.run_manifests(plan)[1]
    command = job["spec"]["template"]["spec"]["containers"][0]["command"]
    pod = {"POD_INDEX": str(index - 1)}
    label = _on_host(command[command.index("--label") + 1], volume, pod)
    started = datetime.fromtimestamp(datetime.fromisoformat(plan.start_at).timestamp())  # local, as dbio run's
    directory = Path(_on_host(command[command.index("--results-dir") + 1], volume, pod)) / results_dir.run_name(
        label, now=started)
    directory.mkdir(parents=True)
    document = part_result(index, 0.3, of=k8s.parts(plan), run=k8s.run_id(plan))
    (directory / "result.json.tmp").write_text(json.dumps(document))
    os.replace(directory / "result.json.tmp", directory / "result.json")
    return directory


def _merge_job(plan: k8s.Plan, volume: Path, tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    """The merge Job's pod started, and where its command says the merged result goes (on the host)."""
    (container,) = k8s.merge_manifest(plan)["spec"]["template"]["spec"]["containers"]
    command = [_on_host(word, volume) for word in container["command"]]
    shims = tmp_path / "bin"
    if not shims.exists():
        shims.mkdir()
        (shims / "dbio").write_text(f"#!/bin/sh\nexec '{sys.executable}' -m dbio \"$@\"\n")
        (shims / "dbio").chmod(0o755)
    env = {"PATH": f"{shims}:/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(REPO)}
    process = subprocess.Popen(command, env=env, cwd="/", stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, text=True)
    return process, Path(re.search(r"--out (\S+)", command[-1]).group(1))


def _finished(process: subprocess.Popen, timeout: float = 60) -> tuple[int, str]:
    out, _ = process.communicate(timeout=timeout)
    return process.returncode, out


def _merged(out: Path) -> dict:
    return json.loads((out / "result.json").read_text())


def test_a_second_run_on_the_same_volume_merges_its_own_parts_never_the_first_runs(tmp_path):
    """The docs write a second run's manifests for the same claim: its merge Job took the first run's parts
    at once (or failed on the first run's merged/), and a run's parts never shared a directory with another's."""
    volume = tmp_path / "volume"
    volume.mkdir()
    now = time.time()
    first, second = _plan(now - 7200), _plan(now - 3600)  # both past giving up: each merges what is there
    first_parts = [_write_part(first, volume, index) for index in (1, 2, 3)]
    _write_part(second, volume, 2)  # the second run's parts 1 and 3 wrote nothing
    (process, out), (first_process, first_out) = _merge_job(second, volume, tmp_path), _merge_job(first, volume,
                                                                                                   tmp_path)
    code, said = _finished(process)
    assert code == 0, said
    doc = _merged(out)
    assert doc["parts"]["run"] == k8s.run_id(second)
    assert [g["index"] for g in doc["parts"]["given"]] == [2] and doc["parts"]["missing"] == [1, 3]
    assert f"part(s) 1, 3 of 3 of run {k8s.run_id(second)} were not given" in said
    assert "parts 1, 3 of 3 missing: not the whole run's" in said  # the headline it printed carries the mark
    # the first run's merge, beside it: its own three parts, into a directory of its own
    code, said = _finished(first_process)
    assert code == 0, said
    assert first_out.parent != out.parent
    doc = _merged(first_out)
    assert doc["parts"]["run"] == k8s.run_id(first) and doc["parts"]["missing"] == []
    # <date>-<time>-<label>: dbio merge names an input by its label
    assert sorted(m["name"] for m in doc["merged_from"]) == sorted(p.name.split("-", 2)[2] for p in first_parts)


def test_the_merge_job_waits_for_a_part_that_is_late_then_merges_every_part(tmp_path, monkeypatch):
    monkeypatch.setattr(k8s, "POLL_SECONDS", 1)
    volume = tmp_path / "volume"
    volume.mkdir()
    plan = _plan(time.time() - RUN_SECONDS - k8s.SETTLE_SECONDS + 90, pods=2)  # it gives up 90 s from now
    _write_part(plan, volume, 1)
    process, out = _merge_job(plan, volume, tmp_path)
    time.sleep(3)
    assert process.poll() is None and not out.exists()  # still waiting for part 2
    _write_part(plan, volume, 2)
    code, said = _finished(process)
    assert code == 0, said
    doc = _merged(out)
    assert [g["index"] for g in doc["parts"]["given"]] == [1, 2] and doc["parts"]["missing"] == []


def test_with_no_part_written_the_merge_job_says_so_in_one_line_and_fails(tmp_path):
    volume = tmp_path / "volume"
    volume.mkdir()
    plan = _plan(time.time() - 3600)
    _write_part(_plan(time.time() - 7200), volume, 1)  # another run's part: not this run's
    process, out = _merge_job(plan, volume, tmp_path)
    code, said = _finished(process)
    assert code == 1
    assert said.startswith(f"dbio: no part of run {k8s.run_id(plan)} wrote a result in ") and said.count("\n") == 1
    assert not out.exists()
