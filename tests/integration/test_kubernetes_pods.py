"""dbio kubernetes' manifests, run: the generated YAML's pods started as a kubelet would start them
(tests/kube_pods.py: the container's command with the pod's environment and its Secrets' values, as its
user with fsGroup, on a volume prepared for fsGroup, each pod in a network namespace of its own) against
an embedded PostgreSQL 18 listening on the namespaces' bridge, which asks the pods for the password their
Secret holds. The 3 pods are the parts of one run; the merge Job's pod, started with them, waits for their
results and merges them; the merged reads agree with pg_stat_io as this test reads it over the agreed
window. An earlier run's parts and merged result are on the volume, as a second run's manifests for the
same claim find them: they are never read.

Run two ways: on this host (setpriv, this checkout's dbio), the target a --dsn and its password a
--password-secret; and in dbio's image (podman; tests/pod_image.py builds it from the Containerfile, once
per machine: 3-4 minutes on a fresh one, seconds after a change to dbio), the target a CloudNativePG
cluster's application Secret, the pods placed by --node-selector and --tolerate, the Jobs with a --ttl;
there the pod to read the results by then runs `dbio report` on the merged result, as `kubectl exec` would.
"""

from __future__ import annotations

import io
import json
import os
import secrets
import stat
import subprocess
import tarfile
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import psycopg
import psycopg.sql
import pytest
import yaml

from dbio import kubernetes as k8s
from tests import kube_pods, pod_image
from tests.integration.conftest import SMALL, Instance, dbio, kill_left, load_result

kubernetes_validate = pytest.importorskip("kubernetes_validate", reason="kubernetes-validate is a test dependency")

PODS = 3
DB = "k8s"
RUN_TIME, WARMUP = 4.0, 1.0
# four interpreters starting at once; dbio run wants 10 s + warm-up. A loaded host (a 1-minute load of 15 on
# 2 CPUs) took more than 25 s to bring its pods to that point: the lead grows with the load when the test starts.
def _ahead() -> float:
    return 25.0 + min(60.0, 3.0 * max(0.0, os.getloadavg()[0] - 2.0))
WORKLOAD = {"scale": "32MiB", "scan_table_size": "8MiB", "warmup": f"{WARMUP:g}s", "run_time": f"{RUN_TIME:g}s",
            "allow_cached": True, "threads_per_schema": 1}
SETUP = [*SMALL[:-2], "--run-time", f"{RUN_TIME:g}s", "--allow-cached", "-t", "1"]
WAIT = 300
SETTLED = 1.5  # after the window: every session stopped and published its counts (PostgreSQL: within a second)
PASSWORD = secrets.token_urlsafe(18)  # the pods' role's, asked over the bridge: only a Secret gives it to them


@pytest.fixture(scope="module")
def network():
    why = kube_pods.missing_tools()
    if why:
        pytest.skip(f"the pod harness {why}")
    with kube_pods.Network(PODS + 1, f"dk{os.getpid() % 10000}") as net:
        yield net


@pytest.fixture(scope="module")
def server(workdir, network):
    """An instance of its own listening on the bridge, asking the pods' addresses for the role's password,
    loaded; destroyed at the end."""
    root = workdir / "k8s-pods"
    root.mkdir()
    inst = Instance(root, root / "instance", root / "results")
    try:
        done = dbio("instance", "init", "--data-dir", str(inst.data_dir), "--shared-buffers", "16MiB")
        assert done.code == 0, done.text
        with inst.connect() as conn:
            conn.execute(f"ALTER SYSTEM SET listen_addresses = '{network.server}'")
        assert dbio("instance", "stop", "--data-dir", str(inst.data_dir)).code == 0
        done = dbio("instance", "start", "--data-dir", str(inst.data_dir), "--shared-buffers", "16MiB")
        assert done.code == 0, done.text
        hba = inst.data_dir / "pgdata" / "pg_hba.conf"
        hba.write_text(f"host all dbio {network.prefix}.0/24 scram-sha-256\n" + hba.read_text())
        with inst.connect() as conn:
            conn.execute(psycopg.sql.SQL("ALTER ROLE dbio PASSWORD {}").format(psycopg.sql.Literal(PASSWORD)))
            conn.execute("SELECT pg_reload_conf()")
        done = dbio("setup", *inst.args(DB, *SETUP))
        assert done.code == 0, done.text
        yield inst
    finally:
        dbio("instance", "destroy", "--yes", "--data-dir", str(inst.data_dir))
        assert not inst.data_dir.exists()


@pytest.fixture(scope="module")
def dbio_image(workdir):
    """dbio's image, built from this checkout's Containerfile when it is not yet (its log in the work dir)."""
    why = pod_image.missing_tools()
    if why:
        pytest.skip(f"dbio's image {why}")
    note = pod_image.build_note()
    if note:
        import warnings

        warnings.warn(note)  # said in the summary: the first run on a machine waits minutes for it
    started = time.monotonic()
    tag = pod_image.image(workdir / "image-build.log")
    print(f"dbio's image {tag}: ready in {time.monotonic() - started:.0f} s")
    return tag


def _earlier_run(volume: Path, dsn: str, start_at: float) -> Path:
    """An earlier run's parts and its merge, where that run's pods and merge Job wrote them (their manifests'
    --results-dir and --out): complete results, of that run, which a later run's merge must not take."""
    from tests.unit.test_merge_parts import part

    plan = k8s.Plan(name="dbio", image="dbio", targets=(dsn,), pods_per_target=PODS, run_args=(),
                    start_at=datetime.fromtimestamp(start_at, timezone.utc).isoformat(), run_seconds=RUN_TIME)
    (job,) = k8s.run_manifests(plan)[1:]
    command = job["spec"]["template"]["spec"]["containers"][0]["command"]
    for n in range(PODS):
        given = kube_pods.expand(command[command.index("--results-dir") + 1], {"POD_INDEX": str(n)})
        directory = Path(kube_pods.mounted(given, {k8s.RESULTS: volume})) / f"20261127-185830-dbio-t0-{n}"
        directory.mkdir(parents=True)
        (directory / "result.json").write_text(json.dumps(part(n + 1, 0.33, of=PODS, run=k8s.run_id(plan))))
    merged = Path(kube_pods.mounted(k8s.merged_directory(plan), {k8s.RESULTS: volume}))
    merged.mkdir()
    return volume / k8s.run_id(plan)


def _manifests(out: Path, start_at: float, monkeypatch, **flags) -> tuple[list[dict], dict, dict]:
    """dbio kubernetes' own files, as a user writes them (only its lead is shortened: pods here start in
    seconds, where a cluster schedules them and pulls an image)."""
    from dbio.commands import kubernetes as k8s_command
    from dbio.config import Sources, load_config
    from dbio.ui import UI

    monkeypatch.setattr(k8s_command, "LEAD_SECONDS", 5)
    stamp = datetime.fromtimestamp(start_at, timezone.utc).isoformat()
    dsn = flags.pop("dsn", None)
    config = load_config(Sources(cli={**({"dsn": [dsn]} if dsn else {}), "start_at": stamp, **WORKLOAD},
                                 cwd=out.parent, discover=False))
    k8s_command.write(config, UI(quiet=True), image=flags.pop("image"), pods=PODS, out=out, name="dbio",
                      namespace=None, results_size="1Gi", storage_class=None, cpu="1", memory="512Mi", **flags)
    run = list(yaml.safe_load_all((out / "dbio-run.yaml").read_text()))
    merge = yaml.safe_load((out / "dbio-merge.yaml").read_text())
    reader = yaml.safe_load((out / "dbio-read.yaml").read_text())
    for manifest in [*run, merge, reader]:
        kubernetes_validate.validate(manifest, "1.30.0", strict=True)
    return run, merge, reader


def _server_reads(conn: psycopg.Connection) -> tuple[float, float]:
    conn.execute("SELECT pg_stat_clear_snapshot()")
    t, reads = conn.execute("SELECT date_part('epoch', clock_timestamp()), sum(reads) FROM pg_stat_io "
                            "WHERE object = 'relation'").fetchone()
    return float(t), float(reads)


def _watch(conninfo: str, opens: float, closes: float, out: dict) -> None:
    """pg_stat_io at the agreed window's opening, and once every part's sessions stopped and published their
    counts, read by the test on its own (connected beforehand: a connection takes tens of ms to open)."""
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("SET stats_fetch_consistency = snapshot")
        time.sleep(max(0.0, opens - time.time()))
        out["begin"] = _server_reads(conn)
        time.sleep(max(0.0, closes + SETTLED - time.time()))
        out["end"] = _server_reads(conn)


@pytest.mark.parametrize("where", ["host", "image"])
def test_the_generated_jobs_pods_run_as_parts_of_one_run_and_merge_to_the_servers_count(server, network, workdir,
                                                                                          monkeypatch, request, where):
    base = workdir / f"k8s-pods-{where}"
    base.mkdir()
    port = server.meta["port"]
    dsn = f"host={network.server} port={port} user=dbio dbname={DB} connect_timeout=10"
    if where == "image":  # what a platform engineer types: a CloudNativePG cluster, nodes chosen, Jobs that go
        image = request.getfixturevalue("dbio_image")
        flags = {"image": image, "password_secret": None, "cnpg_cluster": "pg", "node_selector": ("disk=nvme",),
                 "tolerate": ("dedicated=storage:NoSchedule",), "ttl": "600s"}
        given = {"pg-app": {"host": network.server, "port": str(port), "username": "dbio", "dbname": DB,
                            "password": PASSWORD}}
    else:
        flags = {"image": "dbio", "dsn": dsn, "password_secret": "dbio-pg"}
        given = {"dbio-pg": {"password": PASSWORD}}
    window_at = time.time() + _ahead()
    run, merge, reader = _manifests(base / "manifests", window_at, monkeypatch, **flags)
    (claim,), jobs = [m for m in run if m["kind"] == "PersistentVolumeClaim"], [m for m in run if m["kind"] == "Job"]
    (job,) = jobs
    if where == "image":
        for manifest in (job, merge):
            assert manifest["spec"]["ttlSecondsAfterFinished"] == 600
            assert manifest["spec"]["template"]["spec"]["nodeSelector"] == {"disk": "nvme"}
    fs_group = job["spec"]["template"]["spec"]["securityContext"]["fsGroup"]
    volume = kube_pods.prepare_volume(base / "volume", fs_group, 0o2775)
    earlier = _earlier_run(volume, dsn, window_at - 3600)
    earlier_files = sorted((p, p.stat().st_mtime_ns) for p in earlier.rglob("*"))
    shim = kube_pods.make_shim(base / "bin", job["spec"]["template"]["spec"]["securityContext"]["runAsUser"],
                               fs_group)
    volumes = {claim["metadata"]["name"]: volume}
    pods = kube_pods.pods_of(job, volumes, shim, base / "scratch", given)
    (merger,) = kube_pods.pods_of(merge, volumes, shim, base / "scratch", given)
    assert [p.env["JOB_COMPLETION_INDEX"] for p in pods] == ["0", "1", "2"]
    assert PASSWORD not in (base / "manifests" / "dbio-run.yaml").read_text()

    watched: dict = {}
    watcher = threading.Thread(target=_watch, args=(server.conninfo(DB), window_at, window_at + RUN_TIME, watched))
    watcher.start()
    logs = base / "logs"
    logs.mkdir()
    containers = [f"{network.tag}-{pod.name}" for pod in [*pods, merger]]
    if where == "image":
        private = base / "env"
        private.mkdir(mode=0o700)
        procs = [kube_pods.start_in_image(pod, image, ns, logs / f"{pod.name}.log", private, name)
                 for pod, ns, name in zip([*pods, merger], network.namespaces, containers)]
    else:
        procs = [kube_pods.start(pod, ns, logs / f"{pod.name}.log") for pod, ns in zip([*pods, merger],
                                                                                      network.namespaces)]
    try:
        for pod, proc in zip(pods, procs):
            assert proc.wait(timeout=WAIT) == 0, (logs / f"{pod.name}.log").read_text()
        assert procs[-1].wait(timeout=WAIT) == 0, (logs / f"{merger.name}.log").read_text()
    finally:
        kill_left(procs)
        if where == "image":
            for name in containers:
                kube_pods.remove_container(name)
        watcher.join()

    # each pod wrote as its user into its own directory of the volume, which stayed as the kubelet left it
    st = os.stat(volume)
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (0, fs_group, 0o2775)
    command = job["spec"]["template"]["spec"]["containers"][0]["command"]
    run_id = command[command.index("--run-id") + 1]
    assert sorted(p.name for p in volume.iterdir()) == sorted([earlier.name, run_id])  # all of it in its run's
    parts = []
    for n in range(PODS):
        (directory,) = (volume / run_id / f"t0-{n}").iterdir()
        assert directory.stat().st_uid == pods[n].uid
        parts.append(load_result(directory))
    assert [(d["status"], d["part"]["index"], d["part"]["of"]) for d in parts] == \
        [("complete", n, PODS) for n in range(1, PODS + 1)]
    assert {d["part"]["run"] for d in parts} == {run_id} and run_id.startswith("dbio-")
    assert PASSWORD not in "".join(p.read_text(errors="replace") for p in volume.rglob("*") if p.is_file())

    doc = load_result(volume / run_id / "merged")
    assert doc["parts"]["run"] == run_id and [g["index"] for g in doc["parts"]["given"]] == [1, 2, 3]
    assert doc["parts"]["missing"] == [] and doc["parts"]["incomplete"] == []
    assert sorted((p, p.stat().st_mtime_ns) for p in earlier.rglob("*")) == earlier_files  # untouched
    [counted] = doc["counting"]
    assert counted["agree"] is True, counted
    (t0, r0), (t1, r1) = watched["begin"], watched["end"]
    server_reads = r1 - r0  # pg_stat_io's reads as this test read it, from the window's opening to after its end
    own = sum(n["end"]["sessions"]["reads"] - n["begin"]["sessions"]["reads"]
              for d in parts for n in [d["nodes"][0]["normalized"]])
    merged = doc["figures"]["load_profile"]["physical_reads_per_s"] * doc["figures"]["window_seconds"]
    skew = doc["timeline"]["start_skew_seconds"]
    figures = {"where": where, "start_skew_ms": round(skew * 1000, 1), "parts_own_reads": round(own),
               "merged_reads": round(merged), "pg_stat_io_reads": round(server_reads),
               "own_over_pg_stat_io": round(own / server_reads, 4),
               "merged_over_pg_stat_io": round(merged / server_reads, 4),
               "merged_reads_per_s": round(doc["figures"]["load_profile"]["physical_reads_per_s"]),
               "test_opened_late_ms": round((t0 - window_at) * 1000, 1), "test_interval_s": round(t1 - t0, 3)}
    print("kubernetes pods:", json.dumps(figures))
    assert server_reads > 100 * PODS
    assert own == pytest.approx(server_reads, rel=0.02), figures
    assert merged == pytest.approx(server_reads, rel=0.02), figures
    assert 0 <= skew < 1.0, figures
    if where == "image":
        _read_in_the_image(reader, volumes, base, image, network, run_id, doc)  # kubectl exec dbio-read -- ...


def _read_in_the_image(reader: dict, volumes: dict, base: Path, image: str, network, run_id: str, doc: dict) -> None:
    """The pod to read the results by, in the image, and `kubectl exec ... dbio report` and `kubectl cp` in it,
    as the command says: the merged result's report and the run's directory, from the volume it mounts
    read-only."""
    (pod,) = kube_pods.pods_of(reader, volumes, base / "bin", base / "scratch")
    name = f"{network.tag}-{pod.name}"
    log = base / "logs" / f"{pod.name}.log"
    started = kube_pods.start_in_image(pod, image, network.namespaces[-1], log, base / "env", name, detach=True)
    try:
        assert started.wait(timeout=60) == 0, log.read_text()
        done = subprocess.run(["podman", "exec", name, "dbio", "report", f"{k8s.RESULTS}/{run_id}/merged"],
                              capture_output=True, text=True, timeout=120, env=kube_pods.podman_env())
        assert done.returncode == 0, done.stdout + done.stderr
        assert run_id in done.stdout and str(round(doc["figures"]["load_profile"]["physical_reads_per_s"])) in \
            done.stdout.replace(",", "")
        # kubectl cp runs tar in the container: the run's directory, as an archive on its standard output
        copied = subprocess.run(["podman", "exec", name, "tar", "cf", "-", "-C", k8s.RESULTS, run_id],
                                capture_output=True, timeout=120, env=kube_pods.podman_env())
        assert copied.returncode == 0, copied.stderr
        with tarfile.open(fileobj=io.BytesIO(copied.stdout)) as archive:
            assert f"{run_id}/merged/result.json" in archive.getnames()
        wrote = subprocess.run(["podman", "exec", name, "touch", f"{k8s.RESULTS}/{run_id}/x"], capture_output=True,
                               text=True, env=kube_pods.podman_env())
        assert wrote.returncode != 0 and "Read-only file system" in wrote.stderr  # it reads, never writes
    finally:
        kube_pods.remove_container(name)
