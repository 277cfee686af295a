"""dbio kubernetes: the manifests validate against Kubernetes' own schemas (offline), every pod
runs the same agreed start against its target, and no password is ever written into one."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml

kubernetes_validate = pytest.importorskip("kubernetes_validate", reason="kubernetes-validate is a test dependency")

from dbio.cli import cli  # noqa: E402
from dbio.commands import kubernetes as k8s_command  # noqa: E402
from dbio.config import Sources, load_config  # noqa: E402
from dbio.errors import UsageError  # noqa: E402
from dbio.ui import UI  # noqa: E402

KUBERNETES = "1.30.0"
TARGETS = ["host=db1.example port=5432 dbname=dbio user=dbio", "host=db2.example port=5432 dbname=dbio user=dbio"]


def _iso(seconds_ahead: float) -> str:
    return datetime.fromtimestamp(time.time() + seconds_ahead, timezone.utc).isoformat()


def _config(tmp_path: Path, *, dsns=TARGETS, ahead: float = 900, env=None, **cli):
    values = {"dsn": dsns, "start_at": _iso(ahead), "threads_per_schema": 4, "update_pct": 10, "run_time": 60,
              "allow_cached": True, **cli}
    return load_config(Sources(env=env or {}, cli={k: v for k, v in values.items() if v is not None}, cwd=tmp_path))


def _write(tmp_path: Path, config, **kw):
    options = {"image": "registry.example/dbio:0.1", "pods": 3, "out": tmp_path / "k8s", "name": "dbio",
               "namespace": "storage-test", "password_secret": "dbio-pg", "results_size": "2Gi",
               "storage_class": "nfs", "cpu": "2", "memory": "1Gi", **kw}
    k8s_command.write(config, UI(quiet=True), **options)
    out = options["out"]
    return list(yaml.safe_load_all((out / "dbio-run.yaml").read_text())), yaml.safe_load(
        (out / "dbio-merge.yaml").read_text()), out


def test_the_manifests_validate_against_the_kubernetes_schemas(tmp_path):
    run, merge, _ = _write(tmp_path, _config(tmp_path))
    for manifest in [*run, merge]:
        kubernetes_validate.validate(manifest, KUBERNETES, strict=True)
    kinds = [m["kind"] for m in run]
    assert kinds == ["PersistentVolumeClaim", "Job", "Job"]  # the results volume, a Job per target
    assert run[0]["spec"]["accessModes"] == ["ReadWriteMany"] and run[0]["spec"]["storageClassName"] == "nfs"


def test_every_pod_runs_the_same_start_against_its_target(tmp_path):
    config = _config(tmp_path)
    run, _, _ = _write(tmp_path, config)
    run_flags = {opt for param in cli.commands["run"].params for opt in param.opts}
    starts = set()
    for job, dsn in zip(run[1:], TARGETS):
        spec = job["spec"]
        assert (spec["completionMode"], spec["completions"], spec["parallelism"], spec["backoffLimit"]) == \
            ("Indexed", 3, 3, 0)
        container = spec["template"]["spec"]["containers"][0]
        command = container["command"]
        assert command[:2] == ["dbio", "run"]
        starts.add(command[command.index("--start-at") + 1])
        assert {f for f in command[2:] if f.startswith("-")} <= run_flags  # flags dbio run accepts
        assert command[command.index("--threads-per-schema") + 1] == "4"
        assert command[command.index("--update-pct") + 1] == "10"
        env = {e["name"]: e for e in container["env"]}
        assert env["DBIO_TARGET"]["value"] == dsn
        assert env["PGPASSWORD"]["valueFrom"]["secretKeyRef"] == {"name": "dbio-pg", "key": "password"}
    assert len(starts) == 1
    assert datetime.fromisoformat(starts.pop()).timestamp() == pytest.approx(config.run.start_at, abs=0.001)


def test_the_merge_job_merges_every_pod_s_result(tmp_path):
    _, merge, _ = _write(tmp_path, _config(tmp_path))
    script = merge["spec"]["template"]["spec"]["containers"][0]["command"][2]
    assert script.startswith("set -e; dbio merge $$(ls -d /results/dbio-*/*/")  # "$$(": the shell's, not a variable
    assert "--out /results/merged" in script


def test_no_password_reaches_a_manifest(tmp_path):
    secret = "s3cret-pw-42"
    config = _config(tmp_path, dsns=None, env={"DBIO_DSN": f"host=db1 dbname=dbio password={secret}"})
    with pytest.raises(UsageError, match="holds a password.*--password-secret"):
        _write(tmp_path, config)
    assert not (tmp_path / "k8s").exists()


@pytest.mark.parametrize("change, match", [
    ({"dsns": None}, "give --dsn"),
    ({"ahead": 30}, "pods need time"),
])
def test_what_the_pods_cannot_run_is_refused_before_anything_is_written(tmp_path, change, match):
    with pytest.raises(UsageError, match=match):
        _write(tmp_path, _config(tmp_path, **change))
    assert not (tmp_path / "k8s").exists()


def test_names_and_counts_are_checked(tmp_path):
    with pytest.raises(UsageError, match="not a Kubernetes name"):
        _write(tmp_path, _config(tmp_path), name="My_Run")
    with pytest.raises(UsageError, match="at least one pod"):
        _write(tmp_path, _config(tmp_path), pods=0)


def test_pods_of_a_mysql_target_run_the_mysql_engine_with_its_password_variable(tmp_path):
    config = _config(tmp_path, dsns=("mysql://dbio@db1/dbio",), engine="mysql")
    run, _, _ = _write(tmp_path, config)
    container = run[1]["spec"]["template"]["spec"]["containers"][0]
    command = container["command"]
    assert command[command.index("--engine") + 1] == "mysql"
    env = {e["name"]: e for e in container["env"]}
    assert env["MYSQL_PWD"]["valueFrom"]["secretKeyRef"] == {"name": "dbio-pg", "key": "password"}
    assert "PGPASSWORD" not in env
    pg, _, _ = _write(tmp_path / "pg", _config(tmp_path))
    pg_command = pg[1]["spec"]["template"]["spec"]["containers"][0]["command"]
    assert pg_command[pg_command.index("--engine") + 1] == "postgresql"
