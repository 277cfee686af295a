"""dbio kubernetes' options for where and as what the pods run (issue 40, item 2): --node-selector, --tolerate,
--ttl, --service-account and --cnpg-cluster, as kubectl cnpg pgbench, fio's and sysbench's Jobs take them. Each
reaches every pod (the merge's too) as Kubernetes' schemas take it, and a value Kubernetes would refuse is
refused in one line before anything is written; a CloudNativePG cluster's connection and password come from
its application Secret, never a manifest."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

kubernetes_validate = pytest.importorskip("kubernetes_validate", reason="kubernetes-validate is a test dependency")

from dbio import config_resolver  # noqa: E402
from dbio import kubernetes as k8s  # noqa: E402
from dbio.cli import cli  # noqa: E402
from dbio.commands import kubernetes as k8s_command  # noqa: E402
from dbio.config import Sources, load_config  # noqa: E402
from dbio.errors import UsageError  # noqa: E402
from dbio.ui import UI  # noqa: E402
from tests import kube_pods  # noqa: E402

KUBERNETES = "1.30.0"
TARGET = "host=db1.example port=5432 dbname=dbio user=dbio"
SECRET = {"host": "pg1-rw", "port": "5432", "username": "app", "dbname": "app", "password": "not-in-a-manifest"}


def _config(tmp_path: Path, dsns=(TARGET,), **cli_values):
    start = datetime.fromtimestamp(time.time() + 900, timezone.utc).isoformat()
    values = {"dsn": dsns, "start_at": start, "run_time": 60, **cli_values}
    return load_config(Sources(cli={k: v for k, v in values.items() if v is not None}, cwd=tmp_path, discover=False))


def _write(tmp_path: Path, config, **kw) -> list[dict]:
    """Every manifest written: the volume, the run Jobs, the merge Job (validated against Kubernetes' schemas)."""
    out = tmp_path / "k8s"
    options = {"image": "registry.example/dbio:0.1", "pods": 2, "out": out, "name": "dbio", "namespace": "db",
               "password_secret": "dbio-pg", "results_size": "1Gi", "storage_class": None, "cpu": "1",
               "memory": "512Mi", **kw}
    k8s_command.write(config, UI(quiet=True), **options)
    manifests = [*yaml.safe_load_all((out / "dbio-run.yaml").read_text()),
                 *(yaml.safe_load((out / f"dbio-{kind}.yaml").read_text()) for kind in ("merge", "read"))]
    for manifest in manifests:
        kubernetes_validate.validate(manifest, KUBERNETES, strict=True)
    return manifests


def _jobs(manifests: list[dict]) -> list[dict]:
    return [m for m in manifests if m["kind"] == "Job"]


def _container(job: dict) -> dict:
    (container,) = job["spec"]["template"]["spec"]["containers"]
    return container


def test_node_selector_and_ttl_reach_every_job_and_validate_and_the_merge_names_its_run(tmp_path):
    """The brief's check: --node-selector disk=nvme --ttl 600s, every pod on such a node, every Job gone 600 s
    after it finished, the merge Job's inputs its own run's directory."""
    manifests = _write(tmp_path, _config(tmp_path), node_selector=("disk=nvme",), ttl="600s")
    jobs = _jobs(manifests)
    assert [job["metadata"]["name"] for job in jobs] == ["dbio-t0", "dbio-merge"]
    for job in jobs:
        assert job["spec"]["ttlSecondsAfterFinished"] == 600
        assert job["spec"]["template"]["spec"]["nodeSelector"] == {"disk": "nvme"}
    command = _container(jobs[0])["command"]
    run_id = command[command.index("--run-id") + 1]
    script = _container(jobs[1])["command"][2]
    assert f"/results/{run_id}/t[0-9]*-[0-9]*/*/result.json" in script and f"--out /results/{run_id}/merged" in script
    assert script.count("/results/") == script.count(f"/results/{run_id}")  # no other run's directory


def test_without_them_the_manifests_say_nothing_of_them(tmp_path):
    for job in _jobs(_write(tmp_path, _config(tmp_path))):
        pod = job["spec"]["template"]["spec"]
        assert "ttlSecondsAfterFinished" not in job["spec"]
        assert not {"nodeSelector", "tolerations", "serviceAccountName"} & set(pod)
        assert pod["automountServiceAccountToken"] is False  # dbio never talks to the API server


def test_several_selectors_tolerations_and_a_service_account_reach_every_pod(tmp_path):
    manifests = _write(tmp_path, _config(tmp_path), node_selector=("disk=nvme", "topology.kubernetes.io/zone=eu-1a",
                                                                   "example.com/empty="),
                       tolerate=("dedicated=storage:NoSchedule", "example.com/bench", "spot:NoExecute"),
                       service_account="dbio-runner")
    for job in _jobs(manifests):
        pod = job["spec"]["template"]["spec"]
        assert pod["nodeSelector"] == {"disk": "nvme", "topology.kubernetes.io/zone": "eu-1a",
                                       "example.com/empty": ""}
        assert pod["tolerations"] == [
            {"key": "dedicated", "operator": "Equal", "value": "storage", "effect": "NoSchedule"},
            {"key": "example.com/bench", "operator": "Exists"},  # any value, every effect
            {"key": "spot", "operator": "Exists", "effect": "NoExecute"}]
        assert pod["serviceAccountName"] == "dbio-runner" and pod["automountServiceAccountToken"] is False


def test_the_flags_reach_the_manifests_from_the_command_line(tmp_path):
    """The command's own flags as a user types them, through click and the option table, into the files."""
    start = datetime.fromtimestamp(time.time() + 900, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    out = tmp_path / "k8s"
    done = CliRunner().invoke(cli, ["kubernetes", "--image", "registry.example/dbio:0.1", "--cnpg-cluster", "pg1",
                                    "--pods", "2", "--start-at", start, "--node-selector", "disk=nvme",
                                    "--node-selector", "zone=a", "--tolerate", "dedicated=storage:NoSchedule",
                                    "--ttl", "10m", "--service-account", "bench", "--out", str(out)])
    assert done.exit_code == 0, done.output
    run = list(yaml.safe_load_all((out / "dbio-run.yaml").read_text()))
    pod = run[1]["spec"]["template"]["spec"]
    assert (pod["nodeSelector"], pod["serviceAccountName"], run[1]["spec"]["ttlSecondsAfterFinished"]) == \
        ({"disk": "nvme", "zone": "a"}, "bench", 600)
    assert pod["tolerations"] == [{"key": "dedicated", "operator": "Equal", "value": "storage",
                                   "effect": "NoSchedule"}]
    assert "pg1-app" in done.output  # it says which Secret the pods read


BAD = {
    "node_selector": ["disk", "=nvme", "Disk Type=nvme", "disk=nv me", "-disk=nvme", "disk=-nvme", "disk=nvme-",
                      "a/b/c=x", "Example.com/disk=x", f"{'k' * 64}=x", f"disk={'v' * 64}", "disk=a=b",
                      "disk=$(PGPASSWORD)", f"{'p' * 254}/disk=x", "disk=nvme\n"],
    "tolerate": ["dedicated=storage:NoWhere", "dedicated:noschedule", ":NoSchedule", "=x:NoSchedule", "a b",
                 "dedicated=st orage", "dedicated=storage:", f"{'k' * 64}:NoSchedule"],
    "ttl": ["-5s", "1.5s", "soon", "99999999999s", "10 parsecs", "0s", "59s"],
    "service_account": ["Runner", "runner_1", "-runner", "a" * 254],
    "cnpg_cluster": ["Pg1", "pg_1", "pg.1", "-pg", "p" * 64],
}
FLAGS = {"node_selector": "--node-selector", "tolerate": "--tolerate", "ttl": "--ttl",
         "service_account": "--service-account", "cnpg_cluster": "--cnpg-cluster"}


@pytest.mark.parametrize("option, value", [(o, v) for o, values in BAD.items() for v in values])
def test_a_value_kubernetes_would_refuse_is_refused_in_one_line_before_anything_is_written(tmp_path, option, value):
    given = (value,) if option in ("node_selector", "tolerate") else value
    config = _config(tmp_path, dsns=None if option == "cnpg_cluster" else (TARGET,))
    secret = None if option == "cnpg_cluster" else "dbio-pg"
    with pytest.raises(UsageError) as refused:
        _write(tmp_path, config, password_secret=secret, **{option: given})
    message = str(refused.value)
    assert message.startswith(f"{FLAGS[option]} {value!r}") and "\n" not in message, message
    assert not (tmp_path / "k8s").exists()


def test_a_ttl_that_deletes_the_logs_before_kubectl_reads_them_is_refused_saying_why(tmp_path, capsys):
    """Issue 41: --ttl 0s deleted every Job (its pods' logs) before the printed `kubectl logs` could read them."""
    from dbio import cli as dbio_cli

    start = datetime.fromtimestamp(time.time() + 900, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    out = tmp_path / "k8s"
    with pytest.raises(SystemExit) as done:
        dbio_cli.main(["kubernetes", "--image", "dbio", "--dsn", TARGET, "--start-at", start, "--ttl", "0s",
                       "--out", str(out)])
    err = capsys.readouterr().err
    assert done.value.code == 2 and err.count("\n") == 1 and not out.exists(), err
    assert "--ttl '0s'" in err and "kubectl logs" in err and "give --ttl 60s or more" in err, err
    manifests = _write(tmp_path, _config(tmp_path), ttl="60s")  # the shortest taken
    assert all(job["spec"]["ttlSecondsAfterFinished"] == 60 for job in _jobs(manifests))


def test_a_selector_key_or_a_toleration_given_twice_is_refused(tmp_path):
    start = datetime.fromtimestamp(time.time() + 900, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    base = ["kubernetes", "--image", "dbio", "--dsn", TARGET, "--start-at", start, "--out", str(tmp_path / "k8s")]
    done = CliRunner().invoke(cli, [*base, "--node-selector", "disk=nvme", "--node-selector", "disk=ssd"])
    assert done.exit_code == 2 and "--node-selector disk is given twice" in done.output
    with pytest.raises(UsageError, match="^--tolerate dedicated:NoSchedule is given twice"):
        _write(tmp_path, _config(tmp_path), tolerate=("dedicated=a:NoSchedule", "dedicated:NoSchedule"))
    _write(tmp_path, _config(tmp_path), tolerate=("dedicated:NoSchedule", "dedicated:NoExecute"))  # two effects


def _pod_env(container: dict, secrets: dict[str, dict[str, str]]) -> dict[str, str]:
    """The pod's environment as the kubelet makes it: values expanded, secretKeyRef read from the Secret."""
    env: dict[str, str] = {"POD_INDEX": "0"}
    for variable in container["env"]:
        ref = variable.get("valueFrom", {}).get("secretKeyRef")
        if ref is not None:
            env[variable["name"]] = secrets[ref["name"]][ref["key"]]
        elif "value" in variable:
            env[variable["name"]] = kube_pods.expand(variable["value"], env)
    return env


def test_a_cloudnativepg_cluster_is_reached_from_its_application_secret_never_a_manifest(tmp_path, monkeypatch):
    manifests = _write(tmp_path, _config(tmp_path, dsns=None), password_secret=None, cnpg_cluster="pg1")
    run, merge = _jobs(manifests)
    container = _container(run)
    refs = {e["name"]: e["valueFrom"]["secretKeyRef"] for e in container["env"] if "valueFrom" in e
            and "secretKeyRef" in e["valueFrom"]}
    assert refs == {"PGHOST": {"name": "pg1-app", "key": "host"}, "PGPORT": {"name": "pg1-app", "key": "port"},
                    "PGUSER": {"name": "pg1-app", "key": "username"},
                    "PGDATABASE": {"name": "pg1-app", "key": "dbname"},
                    "PGPASSWORD": {"name": "pg1-app", "key": "password"}}
    assert "secretKeyRef" not in str(_container(merge))  # the merge reaches no server: no password in its pod
    written = (tmp_path / "k8s" / "dbio-run.yaml").read_text() + (tmp_path / "k8s" / "dbio-merge.yaml").read_text()
    assert SECRET["password"] not in written
    # the pod's own dbio run, given the Secret's values as the kubelet gives them, targets the cluster's service
    env = _pod_env(container, {"pg1-app": SECRET})
    assert env["DBIO_TARGET"] == "host=pg1-rw port=5432"
    words = [kube_pods.expand(word, env) for word in container["command"]]
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("JOB_COMPLETION_INDEX", "0")
    params = dict(cli.commands["run"].make_context("run", words[2:]).params)
    pod = load_config(config_resolver.command_sources(params, None, "run"))
    assert pod.connection.dsns == ("host=pg1-rw port=5432",) and pod.connection.engine == "postgresql"
    from psycopg.conninfo import conninfo_to_dict

    # libpq: the connection string's host and port, the user, database and password from the environment
    assert conninfo_to_dict(pod.connection.dsns[0]) == {"host": "pg1-rw", "port": "5432"}


@pytest.mark.parametrize("given, match", [
    ({"dsns": (TARGET,)}, "^--cnpg-cluster and --dsn: the pods read the connection and its password from Secret "
                          "pg1-app"),
    ({"password_secret": "dbio-pg"}, "^--cnpg-cluster and --password-secret"),
    ({"engine": "mysql"}, "^--cnpg-cluster with --engine mysql: a CloudNativePG cluster is PostgreSQL"),
])
def test_a_cloudnativepg_cluster_is_the_one_target_and_its_secret_the_one_password(tmp_path, given, match):
    config = _config(tmp_path, dsns=given.get("dsns"), engine=given.get("engine"))
    with pytest.raises(UsageError, match=match):
        _write(tmp_path, config, password_secret=given.get("password_secret"), cnpg_cluster="pg1")
    assert not (tmp_path / "k8s").exists()


def test_the_merge_pod_is_given_no_password(tmp_path):
    """Only a run pod connects to a server: the merge reads the volume, and a Secret it need not read stays out."""
    run, merge = _jobs(_write(tmp_path, _config(tmp_path)))
    assert {"name": "PGPASSWORD", "valueFrom": {"secretKeyRef": {"name": "dbio-pg", "key": "password"}}} in \
        _container(run)["env"]
    assert [e["name"] for e in _container(merge)["env"]] == ["HOME", "MPLCONFIGDIR"]


def test_a_toleration_and_a_selector_read_as_kubectl_writes_them():
    assert k8s.toleration("dedicated=storage:NoSchedule") == k8s.Toleration("dedicated", "storage", "NoSchedule")
    assert k8s.toleration("dedicated=:PreferNoSchedule") == k8s.Toleration("dedicated", "", "PreferNoSchedule")
    assert k8s.toleration("example.com/spot") == k8s.Toleration("example.com/spot")
    assert k8s.Toleration("dedicated", "").manifest() == {"key": "dedicated", "operator": "Equal", "value": ""}
    assert k8s.selector_entry("kubernetes.io/arch=amd64") == ("kubernetes.io/arch", "amd64")
    with pytest.raises(ValueError, match="^its value must be a label value"):
        k8s.selector_entry("disk=a/b")


def test_the_pod_to_read_the_results_by_mounts_the_volume_read_only_and_goes_within_the_hour(tmp_path):
    manifests = _write(tmp_path, _config(tmp_path), node_selector=("disk=nvme",), tolerate=("spot",),
                       service_account="bench")
    (reader,) = [m for m in manifests if m["kind"] == "Pod"]
    run = _jobs(manifests)[0]["spec"]["template"]["spec"]
    spec = reader["spec"]
    assert reader["metadata"]["name"] == "dbio-read" and reader["metadata"]["namespace"] == "db"
    assert spec["activeDeadlineSeconds"] == k8s.READ_SECONDS and spec["restartPolicy"] == "Never"
    (container,) = spec["containers"]
    assert container["command"] == ["sleep", str(k8s.READ_SECONDS)] and "secretKeyRef" not in str(container)
    assert {"name": "results", "mountPath": "/results", "readOnly": True} in container["volumeMounts"]
    for key in ("securityContext", "volumes", "nodeSelector", "tolerations", "serviceAccountName",
                "automountServiceAccountToken"):  # it runs where and as the run's pods, on the same claim
        assert spec[key] == run[key], key
    assert container["securityContext"] == run["containers"][0]["securityContext"]
