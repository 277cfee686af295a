"""dbio kubernetes: the manifests validate against Kubernetes' own schemas (offline), every pod
runs the same agreed start against its target, and no password is ever written into one."""

from __future__ import annotations

import re
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml

kubernetes_validate = pytest.importorskip("kubernetes_validate", reason="kubernetes-validate is a test dependency")

from dbio import kubernetes as k8s  # noqa: E402
from dbio import parts  # noqa: E402
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
    merge = out / "dbio-merge.yaml"  # none for a single pod
    return list(yaml.safe_load_all((out / "dbio-run.yaml").read_text())), yaml.safe_load(
        merge.read_text()) if merge.exists() else None, out


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


def test_the_pods_are_the_parts_of_one_run_each_its_completion_index_after_the_earlier_targets(tmp_path):
    """Two targets of 3 pods: one run of 6 parts, the second Job's pods parts 4 to 6; one --run-id."""
    run, _, _ = _write(tmp_path, _config(tmp_path))
    commands = [job["spec"]["template"]["spec"]["containers"][0]["command"] for job in run[1:]]
    assert [c[c.index("--part") + 1] for c in commands] == ["job-index/6", "job-index+3/6"]
    run_ids = {c[c.index("--run-id") + 1] for c in commands}
    assert len(run_ids) == 1 and re.fullmatch(r"dbio-\d{8}T\d{6}Z", run_ids.pop())
    resolved = [parts.parse(c[c.index("--part") + 1], {"JOB_COMPLETION_INDEX": str(i)})
                for c in commands for i in range(3)]
    assert resolved == [(n, 6) for n in range(1, 7)]
    (run_id,) = {c[c.index("--run-id") + 1] for c in commands}
    for target, command in enumerate(commands):  # each pod its own directory of the results volume, in the run's
        assert command[command.index("--results-dir") + 1] == f"/results/{run_id}/t{target}-$(POD_INDEX)"
    one, _, _ = _write(tmp_path / "one", _config(tmp_path, dsns=TARGETS[:1]), pods=1)
    command = one[1]["spec"]["template"]["spec"]["containers"][0]["command"]
    assert "--part" not in command and "--run-id" not in command  # a single pod is a whole run


@pytest.mark.parametrize("ahead", [300, 3600])
def test_the_deadline_allows_for_the_wait_until_the_start(tmp_path, ahead):
    """A Job applied an hour before its window is not killed before the window opens."""
    config = _config(tmp_path, ahead=ahead, warmup=30, run_time=120)
    run, merge, _ = _write(tmp_path, config)
    for job in run[1:]:
        deadline = job["spec"]["activeDeadlineSeconds"]
        assert ahead + 120 + 60 < deadline <= ahead + 120 + k8s.SETTLE_SECONDS + 1
    assert merge["spec"]["activeDeadlineSeconds"] > run[1]["spec"]["activeDeadlineSeconds"]


def test_the_results_volume_is_prepared_for_the_pods_non_root_user(tmp_path):
    run, merge, _ = _write(tmp_path, _config(tmp_path))
    for job in [*run[1:], merge]:
        context = job["spec"]["template"]["spec"]["securityContext"]
        assert context["runAsNonRoot"] and context["runAsUser"] != 0 and context["fsGroup"] == context["runAsUser"]


def test_the_merge_job_waits_for_every_part_of_its_run_then_merges_what_is_there(tmp_path):
    """Its wait and its inputs are the run's own directory's (tests/unit/test_kubernetes_merge_job.py runs it)."""
    config = _config(tmp_path)
    run, merge, _ = _write(tmp_path, config)
    script = merge["spec"]["template"]["spec"]["containers"][0]["command"][2]
    assert "$(" not in script.replace("$$(", "")  # "$$(": the shell's, not a Kubernetes variable
    assert '-ge 6 ]' in script  # both targets' 3 pods
    give_up = int(re.search(r'date \+%s\)" -ge (\d+)', script).group(1))
    end = config.run.start_at + 60  # the window's end: warm-up before the start, 60 s of run time
    assert end < give_up <= end + config.workload.warmup + k8s.SETTLE_SECONDS
    command = run[1]["spec"]["template"]["spec"]["containers"][0]["command"]
    run_id = command[command.index("--run-id") + 1]
    assert f"for f in /results/{run_id}/t[0-9]*-[0-9]*/*/result.json;" in script
    assert script.count("/results/") == script.count(f"/results/{run_id}")  # nothing of another run's
    assert f"--out /results/{run_id}/merged" in script


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
    with pytest.raises(UsageError, match="at most 100000 pods"):
        _write(tmp_path, _config(tmp_path), pods=99_999_999_999)
    assert not (tmp_path / "k8s").exists()


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


# -- Kubernetes' own syntax (issue 26, item 5): refused here, in one line, saying what is allowed ------------

GOOD = {
    "image": ["dbio", "registry.example/dbio:0.1", "localhost:5000/team/dbio:v1.2-rc_3", "ghcr.io/org/a__b/c-d:1",
              "[::1]:5000/dbio@sha256:" + "a" * 64, "registry.example/dbio:0.1@sha256:" + "0f" * 32],
    "namespace": ["storage-test", "a", "0ns", "x" * 63],
    "password_secret": ["dbio-pg", "pg.secret.v1", ".".join(["a" * 63, "b" * 63, "c" * 63, "d" * 61])],
    "storage_class": ["nfs", "nfs.csi.k8s.io", "standard-rwx"],
    "results_size": ["1Gi", "500M", "64Mi", "1.5Ti", "1e9", "64Ti"],
    "cpu": ["1", "500m", "0.5", ".25", "2k"],
    "memory": ["512Mi", "1G", "1e9", "128974848"],
}
BAD = {
    "image": ["", "Dbio", "dbio:", "a b", "dbio;rm -rf /", "dbio:0.1 --privileged", "-dbio", "dbio$(PGPASSWORD)",
              "dbio@sha256:abc", "registry.example/" + "a" * 260, "dbio:" + "t" * 129, "dbio\x1b[2J"],
    "namespace": ["", "Storage", "storage_test", "-ns", "ns-", "a.b", "x" * 64, "ns\n"],
    "password_secret": ["Secret", "a..b", "pg_secret", ".pg", "a" * 64, ".".join(["a" * 63] * 4), "pg secret"],
    "storage_class": ["NFS", "nfs/rwx", "nfs class", "nfs;x"],
    "results_size": ["0", "-1Gi", "1GB", "lots", "1 Gi", "0.0Gi", "1Gi\n"],
    "cpu": ["0", "-1", "one", "1 ", "500 m", "1.5cpu"],
    "memory": ["0Mi", "512MB", "1g", "1e", "$(PGPASSWORD)", "9" * 65],
}
FLAGS = {"image": "--image", "namespace": "--namespace", "password_secret": "--password-secret",
         "storage_class": "--storage-class", "results_size": "--results-size", "cpu": "--pod-cpu",
         "memory": "--pod-memory"}


@pytest.mark.parametrize("option, value", [(o, v) for o, values in BAD.items() for v in values])
def test_a_value_kubernetes_would_refuse_is_refused_in_one_line_before_anything_is_written(tmp_path, option, value):
    with pytest.raises(UsageError) as exc:
        _write(tmp_path, _config(tmp_path), **{option: value})
    message = str(exc.value)
    assert message.startswith(f"{FLAGS[option]} {value!r} is not what Kubernetes takes there; must be ")
    assert "\n" not in message and not (tmp_path / "k8s").exists()


@pytest.mark.parametrize("option, value", [(o, v) for o, values in GOOD.items() for v in values])
def test_a_value_kubernetes_takes_is_written_as_given(tmp_path, option, value):
    run, merge, _ = _write(tmp_path, _config(tmp_path), **{option: value})
    for manifest in [*run, merge]:
        kubernetes_validate.validate(manifest, KUBERNETES, strict=True)
    written = yaml.safe_dump_all([*run, merge])
    assert value in written or option == "results_size" and value in str(run[0])


@pytest.mark.parametrize("size, taken", [("1e400", False), ("2Ei", False), ("64Ti", True), ("10Ti", True),
                                         ("1Gi", True), ("64Mi", True), ("67108863", False), ("1Ki", False),
                                         ("500m", False), ("1e-400", False), ("1e999999999", False)])
def test_a_results_size_no_volume_can_be_is_refused_in_one_line(tmp_path, size, taken):
    """Issue 41: 1e400 is Kubernetes' syntax, and no volume; under 64Mi no result fits (64Mi..64Ti are taken)."""
    if taken:
        run, _, _ = _write(tmp_path, _config(tmp_path), results_size=size)
        assert run[0]["spec"]["resources"]["requests"]["storage"] == size
        return
    with pytest.raises(UsageError) as refused:
        _write(tmp_path, _config(tmp_path), results_size=size)
    message = str(refused.value)
    assert message.startswith(f"--results-size {size!r} is ") and "64Mi to 64Ti" in message, message
    assert "\n" not in message and not (tmp_path / "k8s").exists()


def test_the_results_size_refused_through_the_command_line_exits_2(tmp_path, capsys):
    from dbio import cli as dbio_cli

    out = tmp_path / "k8s"
    with pytest.raises(SystemExit) as done:
        dbio_cli.main(["kubernetes", "--image", "dbio", "--dsn", TARGETS[0], "--start-at", _iso(900),
                       "--results-size", "1e400", "--out", str(out)])
    err = capsys.readouterr().err
    assert done.value.code == 2 and err.count("\n") == 1 and "--results-size '1e400'" in err and not out.exists()


def test_a_label_too_long_for_the_last_pod_is_refused_before_anything_is_written(tmp_path):
    """Issue 41: each pod's --label is the run's with -tT-I after it, and a run takes at most 200 characters:
    the manifests are refused here, not every pod at its start."""
    with pytest.raises(UsageError, match=r"^--label is 196 characters long: the last pod's label") as refused:
        _write(tmp_path, _config(tmp_path, label="x" * 196))  # 2 targets, 3 pods: the last's -t1-2 makes 201
    assert "at most 195 characters" in str(refused.value) and not (tmp_path / "k8s").exists()
    run, _, _ = _write(tmp_path, _config(tmp_path, label="x" * 195))
    assert f"{'x' * 195}-t1-$(POD_INDEX)" in run[2]["spec"]["template"]["spec"]["containers"][0]["command"]


def test_the_printed_kubectl_commands_quote_what_they_interpolate(tmp_path):
    import io
    import shlex

    from rich.console import Console

    out, console = tmp_path / "my manifests; rm -rf ~", io.StringIO()
    k8s_command.write(_config(tmp_path), UI(Console(file=console, width=400)), image="dbio", pods=1, out=out,
                      name="dbio", namespace="storage-test", password_secret=None, results_size="1Gi",
                      storage_class=None, cpu="1", memory="512Mi")
    commands = [shlex.split(line) for line in console.getvalue().splitlines() if line.strip().startswith("kubectl")]
    kubectl, run_id = ["kubectl", "-n", "storage-test"], _run_id(out / "dbio-run.yaml")
    assert commands == [
        [*kubectl, "apply", "-f", str(out / "dbio-run.yaml")], [*kubectl, "apply", "-f", str(out / "dbio-merge.yaml")],
        [*kubectl, "wait", "--for=condition=complete", "--timeout=-1s", "job/dbio-t0", "job/dbio-t1", "job/dbio-merge"],
        [*kubectl, "logs", "job/dbio-merge"],  # then to read and clean up:
        [*kubectl, "apply", "-f", str(out / "dbio-read.yaml")], [*kubectl, "wait", "--for=condition=Ready",
                                                                  "pod/dbio-read"],
        [*kubectl, "exec", "dbio-read", "--", "dbio", "report", f"/results/{run_id}/merged"],
        [*kubectl, "cp", f"dbio-read:/results/{run_id}", run_id],
        [*kubectl, "delete", *(word for kind in ("read", "merge", "run")
                               for word in ("-f", str(out / f"dbio-{kind}.yaml")))]]


def _run_id(run_file: Path) -> str:
    command = list(yaml.safe_load_all(run_file.read_text()))[1]["spec"]["template"]["spec"]["containers"][0]["command"]
    return command[command.index("--run-id") + 1]


def test_a_dollar_in_a_run_option_or_a_target_stays_itself_in_the_pods(tmp_path):
    """Kubernetes expands $(NAME) in a command and an env value: $(PGPASSWORD) would be the Secret's password."""
    config = _config(tmp_path, dsns=("host=db1 dbname=dbio user=a$(PGPASSWORD)",), label="$(PGPASSWORD) it's")
    run, merge, _ = _write(tmp_path, config)
    container = run[1]["spec"]["template"]["spec"]["containers"][0]
    command = container["command"]
    assert command[command.index("--label") + 1] == "$$(PGPASSWORD) it's-t0-$(POD_INDEX)"
    target = {e["name"]: e for e in container["env"]}["DBIO_TARGET"]
    assert target["value"] == "host=db1 dbname=dbio user=a$$(PGPASSWORD)"
    script = merge["spec"]["template"]["spec"]["containers"][0]["command"][2]
    assert script.endswith("--label '$$(PGPASSWORD) it'\"'\"'s'")  # one word for the shell, as given


def test_with_a_metrics_port_each_run_pod_serves_it_on_its_address_and_is_annotated_for_scraping(tmp_path):
    run, merge, _ = _write(tmp_path, _config(tmp_path, metrics_port=9464))
    for manifest in [*run, merge]:
        kubernetes_validate.validate(manifest, KUBERNETES, strict=True)
    for job in run[1:]:
        template = job["spec"]["template"]
        (container,) = template["spec"]["containers"]
        assert container["command"][-4:] == ["--metrics-port", "9464", "--metrics-address", "0.0.0.0"]
        assert container["command"].count("--metrics-port") == 1
        assert container["ports"] == [{"name": "metrics", "containerPort": 9464}]
        assert template["metadata"]["annotations"] == {"prometheus.io/scrape": "true", "prometheus.io/port": "9464",
                                                       "prometheus.io/path": "/metrics"}
    assert "annotations" not in merge["spec"]["template"]["metadata"]  # the merge serves nothing
    with pytest.raises(UsageError, match="--metrics-port 0 picks any free port"):
        _write(tmp_path / "again", _config(tmp_path, metrics_port=0))


def test_more_parts_than_a_run_takes_are_refused_before_anything_is_written(tmp_path):
    """Every pod would refuse --part job-index/N with N above parts.MAX_PARTS: the Job could never run."""
    with pytest.raises(UsageError, match=f"at most {parts.MAX_PARTS} parts"):
        _write(tmp_path, _config(tmp_path), pods=parts.MAX_PARTS // 2 + 1)  # two targets
    assert not (tmp_path / "k8s").exists()
    run, _, _ = _write(tmp_path, _config(tmp_path), pods=parts.MAX_PARTS // 2)
    command = run[1]["spec"]["template"]["spec"]["containers"][0]["command"]
    assert parts.parse(command[command.index("--part") + 1], {"JOB_COMPLETION_INDEX": "0"}) == (1, parts.MAX_PARTS)


def test_a_single_pod_has_no_merge_job_that_could_only_fail(tmp_path):
    """dbio merge takes two results or more: a merge Job over one pod's result would always fail."""
    import io

    from rich.console import Console

    out, console = tmp_path / "k8s", io.StringIO()
    config = _config(tmp_path, dsns=TARGETS[:1])
    k8s_command.write(config, UI(Console(file=console, width=400)), image="dbio", pods=1,
                      out=out, name="dbio", namespace=None, password_secret=None, results_size="1Gi",
                      storage_class=None, cpu="1", memory="512Mi")
    assert sorted(p.name for p in out.iterdir()) == ["dbio-read.yaml", "dbio-run.yaml"]
    said = console.getvalue()
    run_id = k8s.run_id(k8s.Plan(name="dbio", image="dbio", targets=(), pods_per_target=1, run_args=(),
                                 start_at=datetime.fromtimestamp(config.run.start_at, timezone.utc).isoformat(),
                                 run_seconds=0))
    assert "dbio-merge" not in said and "job/dbio-t0" in said and f"/results/{run_id}/t0-0 " in said
    assert "kubectl logs job/dbio-t0\n" in said and f"-- sh -c 'dbio report /results/{run_id}/t0-0/*/'\n" in said
