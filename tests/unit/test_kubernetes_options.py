"""Every option dbio kubernetes takes (`dbio options kubernetes`, command_flags.py) is passed to the pods,
used by the manifests, or not used: refused in one line when given as a flag (exit 2, before anything is
written), named in a note when a file or the environment set it. Driven by the option table, so that an
option added to it and to what dbio kubernetes takes, but to none of its classes, fails here."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from dbio import command_flags, config_resolver
from dbio import kubernetes as k8s
from dbio.cli import cli
from dbio.commands import kubernetes as k8s_command
from dbio.config import Sources, load_config
from dbio.errors import UsageError
from dbio.option_table import BY_KEY
from dbio.ui import UI
from tests import kube_pods

TARGETS = ("host=db1.example dbname=dbio user=dbio", "host=db2.example dbname=dbio user=dbio")
TAKEN = [entry.option for entry in command_flags.entries("kubernetes")]
CLASSES = {"to the pods": k8s_command.TO_THE_PODS, "in the manifests": k8s_command.IN_THE_MANIFESTS,
           "not used": k8s_command.NOT_USED}
# A value for each option other than its default, as a user types it (what a new option needs here besides
# its class: the test of its class fails without one)
SAMPLES = {
    "scale": "256MiB", "schemas": "2", "threads_per_schema": "3", "run_time": "2m", "work_loop": "1000",
    "work_loop_scope": "session", "warmup": "45s", "update_pct": "7", "scan_pct": "3", "scan_table_size": "16MiB",
    "work_unit": "16", "update_work_unit": "4", "redo_stress": "HEAVY", "hotspot": True, "hotspot_size": "4MiB",
    "hotspot_offset": "32MiB", "hotspot_frequency": "5", "hot_schema_frequency": "4", "think_time_frequency": "10",
    "think_time_min": "50ms", "think_time_max": "1s", "key_order": "contiguous", "load_parallel_degree": "4",
    "allow_cached": True, "access_path": "bitmap", "scan_workers": "2", "results_dir": "/srv/dbio-results",
    "label": "nightly", "interval": "5s", "wait_sample_interval": "1s", "baseline_seconds": "20s",
    "external_script": "/opt/collect.sh",
    "event": ("10s=stall:1s",), "metrics_port": "9464", "metrics_address": "::", "engine": "mysql",
    "node_names": ("array-a", "array-b"), "weights": ("3", "1"), "dbname": "bench", "password_in_config": True,
    "rate": "4000", "rate_schedule": "uniform", "latency_limit": "20ms",
}
WITH = {"hot_schema_frequency": {"schemas": "2"},  # what a sample needs beside it to be valid
        "rate_schedule": {"rate": "4000"}, "latency_limit": {"rate": "4000"}}


def _iso(seconds_ahead: float) -> str:
    return datetime.fromtimestamp(time.time() + seconds_ahead, timezone.utc).isoformat()


def _config(tmp_path: Path, *, env: dict | None = None, slob_conf: Path | None = None, **cli_values):
    values = {"dsn": TARGETS, "start_at": _iso(900), **cli_values}
    return load_config(Sources(env=env or {}, cli=values, cwd=tmp_path, discover=False, slob_conf=slob_conf))


def _write(tmp_path: Path, config, ui: UI | None = None) -> tuple[list[dict], dict]:
    out = tmp_path / "k8s"
    k8s_command.write(config, ui or UI(quiet=True), image="dbio", pods=2, out=out, name="dbio", namespace=None,
                      password_secret="dbio-pg", results_size="1Gi", storage_class=None, cpu="1", memory="512Mi")
    return list(yaml.safe_load_all((out / "dbio-run.yaml").read_text())), yaml.safe_load(
        (out / "dbio-merge.yaml").read_text())


def _commands(run: list[dict]) -> list[list[str]]:
    return [job["spec"]["template"]["spec"]["containers"][0]["command"] for job in run[1:]]


def _pod_config(job: dict, index: int, monkeypatch):
    """What the pod's own `dbio run` makes of its command: its flags, parsed by dbio run's, as it validates them."""
    (container,) = job["spec"]["template"]["spec"]["containers"]
    env = {"POD_INDEX": str(index)}
    for variable in container["env"]:
        if "value" in variable:
            env[variable["name"]] = kube_pods.expand(variable["value"], env)
    words = [kube_pods.expand(word, env) for word in container["command"]]
    assert words[:2] == ["dbio", "run"]
    monkeypatch.setenv("JOB_COMPLETION_INDEX", str(index))  # the Job controller's, which --part job-index reads
    params = dict(cli.commands["run"].make_context("run", words[2:]).params)
    return load_config(config_resolver.command_sources(params, None, "run"))


def _value(config, key: str):
    option = BY_KEY[key]
    section = {"connection": config.connection, "workload": config.workload, "run": config.run}[option.section]
    return getattr(section, key)


def test_every_option_it_takes_is_in_exactly_one_class():
    for option in TAKEN:
        classes = [name for name, keys in CLASSES.items() if option.key in keys]
        assert len(classes) == 1, f"{option.key}: in {classes or 'no class'} of commands/kubernetes.py"
    taken = {option.key for option in TAKEN}
    for name, keys in CLASSES.items():
        assert set(keys) <= taken, f"{name}: {sorted(set(keys) - taken)} not taken by dbio kubernetes"


def test_every_flag_of_the_command_is_an_option_of_the_table_or_its_own():
    """Its own flags make the manifests (k8s_command.OWN, each said; test_kubernetes.py); --config and --slob-conf
    are read here, and --sessions is threads_per_schema's; nothing else, --password included (a pod's password
    is a Secret)."""
    table = {option.key for option in TAKEN if option.cli}
    params = [param for param in cli.commands["kubernetes"].params if param.name not in table]
    shared = {"config_file", "slob_conf", "total_sessions", "debug", "quiet"}
    assert {param.opts[0] for param in params if param.name not in shared} == set(k8s_command.OWN)
    done = CliRunner().invoke(cli, ["kubernetes", "--image", "dbio", "--dsn", TARGETS[0], "--password"])
    assert done.exit_code == 2 and "No such option '--password'" in done.output


@pytest.mark.parametrize("key", sorted(k8s_command.TO_THE_PODS))
def test_an_option_the_pods_take_reaches_every_run_pods_dbio_run_as_set(tmp_path, monkeypatch, key):
    config = _config(tmp_path, **{key: SAMPLES[key], **WITH.get(key, {})})
    assert config.origins[key] != "default" and _value(config, key) != BY_KEY[key].default
    run, _ = _write(tmp_path, config)
    for job in run[1:]:
        for index in range(job["spec"]["completions"]):
            assert _value(_pod_config(job, index, monkeypatch), key) == _value(config, key)


def test_work_loop_from_a_slob_conf_keeps_its_scope_in_the_pods(tmp_path, monkeypatch):
    """SLOB's WORK_LOOP counts the warm-up (scope session); a pod given only --work-loop would count the window."""
    conf = tmp_path / "slob.conf"
    conf.write_text("WORK_LOOP=5000\n")
    config = _config(tmp_path, slob_conf=conf)
    assert config.workload.work_loop_scope == "session"
    run, _ = _write(tmp_path, config)
    pod = _pod_config(run[1], 0, monkeypatch)
    assert (pod.workload.work_loop, pod.workload.work_loop_scope) == (5000, "session")


def _dsn(tmp_path, monkeypatch):
    run, _ = _write(tmp_path, _config(tmp_path))
    assert [_pod_config(job, 1, monkeypatch).connection.dsns for job in run[1:]] == [(t,) for t in TARGETS]


def _engine(tmp_path, monkeypatch):
    run, _ = _write(tmp_path, _config(tmp_path, engine="mysql", dsn=("mysql://dbio@db1/dbio",)))
    assert _pod_config(run[1], 0, monkeypatch).connection.engine == "mysql"
    env = {e["name"] for e in run[1]["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert "MYSQL_PWD" in env and "PGPASSWORD" not in env


def _start_at(tmp_path, monkeypatch):
    config = _config(tmp_path)
    run, merge = _write(tmp_path, config)
    for job in run[1:]:  # to the millisecond, as ISO 8601 writes it
        assert _pod_config(job, 0, monkeypatch).run.start_at == pytest.approx(config.run.start_at, abs=0.001)
    stamp = datetime.fromtimestamp(config.run.start_at, timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    assert f"/results/dbio-{stamp}/" in merge["spec"]["template"]["spec"]["containers"][0]["command"][2]


def _label(tmp_path, monkeypatch):
    run, merge = _write(tmp_path, _config(tmp_path, label="nightly"))
    assert [_pod_config(job, 1, monkeypatch).run.label for job in run[1:]] == ["nightly-t0-1", "nightly-t1-1"]
    assert merge["spec"]["template"]["spec"]["containers"][0]["command"][2].endswith("--label nightly")


def _node_names(tmp_path, monkeypatch):
    run, _ = _write(tmp_path, _config(tmp_path, node_names=("array-a", "array-b")))
    assert [_pod_config(job, 0, monkeypatch).connection.node_names for job in run[1:]] == [("array-a",),
                                                                                           ("array-b",)]


def _metrics_port(tmp_path, monkeypatch):
    run, _ = _write(tmp_path, _config(tmp_path, metrics_port="9464"))
    pod = _pod_config(run[1], 0, monkeypatch)
    assert (pod.run.metrics_port, pod.run.metrics_address) == (9464, "0.0.0.0")  # the pod's every address
    assert run[1]["spec"]["template"]["spec"]["containers"][0]["ports"] == [{"name": "metrics",
                                                                             "containerPort": 9464}]


def _metrics_address(tmp_path, monkeypatch):
    run, _ = _write(tmp_path, _config(tmp_path, metrics_port="9464", metrics_address="::"))
    assert _pod_config(run[1], 0, monkeypatch).run.metrics_address == "::"
    with pytest.raises(UsageError, match="--metrics-address.*without --metrics-port"):
        _write(tmp_path / "alone", _config(tmp_path, metrics_address="::"))
    assert not (tmp_path / "alone").exists()


MANIFESTS = {"dsn": _dsn, "engine": _engine, "start_at": _start_at, "label": _label, "node_names": _node_names,
             "metrics_port": _metrics_port, "metrics_address": _metrics_address}


@pytest.mark.parametrize("key", sorted(k8s_command.IN_THE_MANIFESTS))
def test_an_option_the_manifests_use_makes_them_as_said(tmp_path, monkeypatch, key):
    MANIFESTS[key](tmp_path, monkeypatch)


def _set_elsewhere(tmp_path: Path, key: str) -> dict:
    """The option set as a file or the environment sets it: its DBIO_* variable, or its slob.conf name."""
    option, value = BY_KEY[key], SAMPLES[key]
    text = ",".join(value) if isinstance(value, tuple) else str(value)
    if command_flags.env_of(option):
        return {"env": {option.env: text}}
    conf = tmp_path / "slob.conf"
    conf.write_text(f"{option.slob[0]}={text}\n")
    return {"slob_conf": conf}


@pytest.mark.parametrize("key", sorted(k8s_command.NOT_USED))
def test_an_option_the_pods_would_not_use_is_refused_as_a_flag_and_noted_from_elsewhere(tmp_path, capsys,
                                                                                         monkeypatch, key):
    option = BY_KEY[key]
    if option.cli:
        with pytest.raises(UsageError) as refused:
            _write(tmp_path, _config(tmp_path, **{key: SAMPLES[key]}))
        message = str(refused.value)
        assert message.startswith(f"{option.flag} is not used by dbio kubernetes: ") and "\n" not in message
        assert not (tmp_path / "k8s").exists()
    config = _config(tmp_path, **_set_elsewhere(tmp_path, key))
    assert config.origins[key] != "default"
    run, merge = _write(tmp_path, config, UI(quiet=True))
    said = capsys.readouterr().err
    assert "not used by dbio kubernetes: " in said and key in said.replace("-", "_").lower() and said.count("\n") == 1
    assert _value(_pod_config(run[1], 0, monkeypatch), key) != _value(config, key)  # the pods go without it


def test_dbio_own_instance_options_are_not_taken_and_noted_from_a_file(tmp_path, capsys):
    """The pods run against their --dsn targets: --shared-buffers was taken, and meant nothing there."""
    done = CliRunner().invoke(cli, ["kubernetes", "--image", "dbio", "--dsn", TARGETS[0], "--shared-buffers", "1GiB"])
    assert done.exit_code == 2 and "No such option '--shared-buffers'" in done.output
    assert not any(option.section == "instance" for option in TAKEN)
    config = _config(tmp_path, env={"DBIO_SHARED_BUFFERS": "1GiB"})
    assert any("DBIO_SHARED_BUFFERS: not used with --dsn" in notice for notice in config.notices)


def test_the_run_directory_is_the_run_ids(tmp_path):
    config = _config(tmp_path)
    plan = k8s.Plan(name="dbio", image="dbio", targets=TARGETS, pods_per_target=2, run_args=(),
                    start_at=datetime.fromtimestamp(config.run.start_at, timezone.utc).isoformat(), run_seconds=0)
    assert k8s.run_directory(plan) == f"/results/{k8s.run_id(plan)}"
    run, _ = _write(tmp_path, config)
    for target, command in enumerate(_commands(run)):
        assert command[command.index("--results-dir") + 1] == f"{k8s.run_directory(plan)}/t{target}-$(POD_INDEX)"
