"""dbio kubernetes: write the manifests for many pods measuring at one start, and for merging them."""

from __future__ import annotations

import re
import shlex
import time
from pathlib import Path
from typing import Any

import yaml

from dbio import kubernetes as k8s
from dbio import parts
from dbio import trust
from dbio.config import Config
from dbio.engines import registry
from dbio.errors import UsageError
from dbio.option_table import OPTIONS
from dbio.ui import UI

LEAD_SECONDS = 120  # pods must be scheduled, pull the image and connect before the start
MAX_PODS = 100_000  # Kubernetes' most completions of an Indexed Job
NOT_PASSED = {"dsn", "results_dir", "label", "start_at", "engine", "metrics_port", "metrics_address",  # per pod
              "part", "run_id"}


NAME = re.compile(r"[a-z]([-a-z0-9]{0,38}[a-z0-9])?")  # a DNS label, with room for the objects' suffixes


def write(config: Config, ui: UI, *, image: str, pods: int, out: Path, name: str, namespace: str | None,
          password_secret: str | None, results_size: str, storage_class: str | None, cpu: str, memory: str) -> None:
    if not NAME.fullmatch(name):
        raise UsageError(f"--name {name!r} is not a Kubernetes name", "use lowercase letters, digits and '-' "
                                                                     "(at most 40, starting with a letter)")
    if pods < 1:
        raise UsageError(f"--pods {pods}: at least one pod per target", "give --pods 1 or more")
    if pods > MAX_PODS:
        raise UsageError(f"--pods {pods}: an Indexed Job runs at most {MAX_PODS} pods", f"give --pods {MAX_PODS} "
                                                                                         "or fewer")
    for flag, value, syntax in (("--image", image, "image"), ("--namespace", namespace, "dns-label"),
                                ("--password-secret", password_secret, "dns-subdomain"),
                                ("--storage-class", storage_class, "dns-subdomain"),
                                ("--results-size", results_size, "quantity"), ("--pod-cpu", cpu, "quantity"),
                                ("--pod-memory", memory, "quantity")):
        problem = None if value is None else k8s.syntax_problem(value, syntax)
        if problem:
            raise UsageError(f"{flag} {value!r} is not what Kubernetes takes there", problem)
    if config.run.metrics_port == 0:
        raise UsageError("--metrics-port 0 picks any free port, and a pod's scrape annotation names one",
                         "give a port, e.g. --metrics-port 9464")
    start_at, now = _start_at(config), time.time()
    plan = k8s.Plan(name=name, image=image, targets=_targets(config), pods_per_target=pods,
                    start_at=start_at, run_args=tuple(run_args(config)),
                    run_seconds=config.workload.warmup + config.workload.run_time,
                    lead_seconds=max(0.0, (config.run.start_at or now) - config.workload.warmup - now),
                    namespace=namespace,
                    password_secret=password_secret, results_size=results_size, storage_class=storage_class,
                    cpu=cpu, memory=memory, engine=config.connection.engine,
                    password_env=registry.entry(config.connection.engine).password_env,
                    metrics_port=config.run.metrics_port)
    total = k8s.parts(plan)
    if total > parts.MAX_PARTS:  # every pod would refuse its --part job-index/N
        raise UsageError(f"--pods {pods} for {len(plan.targets)} target(s) make {total} parts; a run has at most "
                         f"{parts.MAX_PARTS} parts", f"give --pods {parts.MAX_PARTS // len(plan.targets)} or fewer")
    if out.exists():
        raise UsageError(f"--out {out} already exists", "give a new directory for the manifests")
    trust.make_private_directory(out, "the manifests")
    run_file, merge_file = out / f"{name}-run.yaml", out / f"{name}-merge.yaml"
    trust.write_output(run_file, yaml.safe_dump_all(k8s.run_manifests(plan), sort_keys=False))
    kubectl = shlex.join(["kubectl", *(["-n", namespace] if namespace else [])])  # to paste: every word quoted
    jobs = [f"job/{name}-t{i}" for i in range(len(plan.targets))]
    if total > 1:
        trust.write_output(merge_file, yaml.safe_dump(k8s.merge_manifest(plan), sort_keys=False))
        ui.say(f"wrote {run_file} and {merge_file}: the {total} parts of run {k8s.run_id(plan)}, window at "
               f"{plan.start_at}; the merge Job waits for every part's result")
        jobs.append(f"job/{name}-merge")
    else:  # dbio merge takes two results or more: one pod's result is the run's
        ui.say(f"wrote {run_file}: 1 pod, window at {plan.start_at}; its result is in {k8s.RESULTS}/{name}-t0-0 "
               "on the results volume")
    ui.say(f"  {kubectl} apply -f {shlex.quote(str(run_file))}")
    if total > 1:
        ui.say(f"  {kubectl} apply -f {shlex.quote(str(merge_file))}")
    ui.say(f"  {kubectl} wait --for=condition=complete --timeout=-1s {shlex.join(jobs)}")


def _targets(config: Config) -> tuple[str, ...]:
    """Every --dsn, each a target of its own Job; a password goes to a Secret, never a manifest."""
    if not config.connection.dsns:
        raise UsageError("the pods need a server to run against", "give --dsn (repeat it for several targets)")
    entry = registry.entry(config.connection.engine)
    for dsn in config.connection.dsns:
        if entry.has_password(dsn):
            raise UsageError("a --dsn holds a password, which a manifest would show to anyone who can read it",
                             "keep it in a Secret (key 'password') and give --password-secret NAME")
    return config.connection.dsns


def _start_at(config: Config, now: float | None = None) -> str:
    start = config.run.start_at
    if start is None:
        raise UsageError("the pods need one start", "give --start-at (ISO 8601 with its zone, minutes ahead)")
    ahead = start - config.workload.warmup - (time.time() if now is None else now)
    if ahead < LEAD_SECONDS:
        raise UsageError(f"--start-at is {max(ahead, 0):.0f} s before the warm-up must begin; pods need time to be "
                         "scheduled and to start", f"give a time at least {LEAD_SECONDS + config.workload.warmup:.0f} "
                                                   "s ahead")
    from dbio.result import iso

    return iso(start) or ""


def run_args(config: Config) -> list[str]:
    """The run's options that were set (by flag, environment or file here), as flags for the pods."""
    args: list[str] = []
    for option in OPTIONS:
        if option.section not in ("workload", "run") or option.key in NOT_PASSED or not option.cli:
            continue
        if config.origins.get(option.key, "default") == "default":
            continue
        value = getattr(getattr(config, option.section), option.key)
        args += _flag(option.flag, option.kind, value)
    return args


def _flag(flag: str, kind: str, value: Any) -> list[str]:
    if kind == "bool":
        return [flag if value else "--no-" + flag[2:]]
    if isinstance(value, (list, tuple)):
        return [part for item in value for part in (flag, str(item))]
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return [flag, str(value)]
