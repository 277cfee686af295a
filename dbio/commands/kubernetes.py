"""dbio kubernetes: write the manifests for many pods measuring at one start, and for merging them."""

from __future__ import annotations

import re
import shlex
import time
from pathlib import Path
from typing import Any, Callable, TypeVar

import yaml

from dbio import kubernetes as k8s
from dbio import parts
from dbio import command_flags
from dbio import trust
from dbio import units
from dbio.config import Config
from dbio.config_checks import display_key
from dbio.errors import UsageError
from dbio.option_table import BY_KEY, MAX_LABEL, OPTIONS
from dbio.ui import UI

LEAD_SECONDS = 120  # pods must be scheduled, pull the image and connect before the start
MAX_PODS = 100_000  # Kubernetes' most completions of an Indexed Job
MAX_TTL = 2**31 - 1  # ttlSecondsAfterFinished is an int32
# a Job deleted sooner takes its pods' logs with it before the `kubectl wait` and `kubectl logs` printed here can
# read them (the wait returns at completion; a person pastes the next line within a minute)
MIN_TTL = 60
# the results volume: under 64 MiB no result with its samples fits; beyond 64 TiB is no size a cluster provisions
MIN_RESULTS_SIZE = 64 << 20
MAX_RESULTS_SIZE = 64 << 40
T = TypeVar("T")

# What dbio kubernetes does with each option it takes (command_flags: `dbio options kubernetes`): every one is
# in exactly one of these, so that none is dropped unsaid (tests/unit/test_kubernetes_options.py fails on one in
# none; docs/kubernetes.md lists them, tools/make_docs.py).
TO_THE_PODS = frozenset({  # each run pod's own flag, when it is set here (a flag, the environment, a file)
    "scale", "schemas", "threads_per_schema", "run_time", "work_loop", "work_loop_scope", "warmup", "update_pct",
    "scan_pct", "scan_table_size", "work_unit", "update_work_unit", "redo_stress", "hotspot", "hotspot_size",
    "hotspot_offset", "hotspot_frequency", "hot_schema_frequency", "think_time_frequency", "think_time_min",
    "think_time_max", "key_order", "allow_cached", "access_path", "scan_workers", "interval", "wait_sample_interval",
    "rate", "rate_schedule", "latency_limit"})  # --rate: each pod a part, its share of the run's rate
IN_THE_MANIFESTS = {  # used by the manifests themselves, as said
    "dsn": "a target each, its Job's pods' --dsn",
    "engine": "every pod's --engine, and the variable its password goes to",
    "start_at": "every pod's --start-at, the run's id and directory, the deadlines",
    "label": "the merged result's label, and each part's with its target and index",
    "node_names": "one per target, its pods' --node-names",
    "metrics_port": "each run pod's --metrics-port, its container port and scrape annotations",
    "metrics_address": "where each run pod's metrics listen (default: every address of the pod)",
}
NOT_USED = {  # why, and the fix: given as a flag, refused in one line; from a file or the environment, a note
    "results_dir": ("the pods write on the results volume, under /results/RUN-ID",
                    "remove --results-dir (the volume is --results-size, --storage-class)"),
    "external_script": ("it names a program on this machine, which the pods' image does not hold",
                        "remove --external-script, and bracket the window from outside the pods"),
    "event": ("a stall or a throttle acts on the server's processes on this host, an exec: runs a program of this "
              "machine's, and the pods run on neither",
              "remove --event, and disrupt the targets from outside the pods"),
    "baseline_seconds": ("fio's baseline (dbio run --baseline) reads the disk of its own host, and a pod runs on "
                         "none of the targets", "remove --baseline-seconds, and run dbio baseline on a target's host"),
    "load_parallel_degree": ("the pods run against the loaded data set; loading it is dbio setup's",
                             "give it to dbio setup"),
    "weights": ("each pod runs against one target: all of its sessions go there",
                "remove --weights; --pods and --sessions size each target's share"),
    "dbname": ("it names the database of dbio's own instance; a pod's is its --dsn's",
               "name the database in --dsn (dbname=...)"),
    "password_in_config": ("a manifest never holds a password: the pods read it from --password-secret's Secret",
                           "remove it"),
}
OWN = {  # the command's own flags (cli_offline_commands.py), each making the manifests as said
    "--image": "every pod's image (the repository's Containerfile builds one)",
    "--pods": "each target's Job: its completions and parallelism",
    "--out": "the new directory the manifests are written in",
    "--name": "the prefix of every object's name and of the run's id",
    "--namespace": "every object's namespace (default: kubectl's)",
    "--password-secret": "the Secret (key password) of every run pod's PGPASSWORD or MYSQL_PWD",
    "--results-size": "the results volume's size",
    "--storage-class": "the results volume's storage class (ReadWriteMany)",
    "--pod-cpu": "each pod's CPU request",
    "--pod-memory": "each pod's memory request and limit",
    "--node-selector": "every pod's nodeSelector, the merge's too",
    "--tolerate": "every pod's tolerations, the merge's too",
    "--ttl": "every Job's ttlSecondsAfterFinished: the Job and its pods deleted then, the volume kept",
    "--service-account": "every pod's serviceAccountName (no pod mounts an API token)",
    "--cnpg-cluster": "the one target: every run pod's PGHOST, PGPORT, PGUSER, PGDATABASE and PGPASSWORD from "
                      "Secret NAME-app's keys host, port, username, dbname and password",
}
UNCLASSIFIED = ("dbio kubernetes does not pass it to the pods", "remove it")  # none: the test keeps it so


NAME = re.compile(r"[a-z]([-a-z0-9]{0,38}[a-z0-9])?")  # a DNS label, with room for the objects' suffixes


def write(config: Config, ui: UI, *, image: str, pods: int, out: Path, name: str, namespace: str | None,
          password_secret: str | None, results_size: str, storage_class: str | None, cpu: str, memory: str,
          node_selector: tuple[str, ...] = (), tolerate: tuple[str, ...] = (), ttl: str | None = None,
          service_account: str | None = None, cnpg_cluster: str | None = None) -> None:
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
                                ("--pod-memory", memory, "quantity"),
                                ("--service-account", service_account, "dns-subdomain"),
                                ("--cnpg-cluster", cnpg_cluster, "dns-label")):
        problem = None if value is None else k8s.syntax_problem(value, syntax)
        if problem:
            raise UsageError(f"{flag} {value!r} is not what Kubernetes takes there", problem)
    _results_size(results_size)
    scheduling = _scheduling(node_selector, tolerate, ttl)
    notes = _unused(config)
    if config.run.metrics_port == 0:
        raise UsageError("--metrics-port 0 picks any free port, and a pod's scrape annotation names one",
                         "give a port, e.g. --metrics-port 9464")
    start_at, now = _start_at(config), time.time()
    plan = k8s.Plan(name=name, image=image, targets=_targets(config, cnpg_cluster, password_secret),
                    pods_per_target=pods,
                    start_at=start_at, run_args=tuple(run_args(config)),
                    run_seconds=config.workload.warmup + config.workload.run_time,
                    lead_seconds=max(0.0, (config.run.start_at or now) - config.workload.warmup - now),
                    namespace=namespace,
                    password_secret=password_secret, results_size=results_size, storage_class=storage_class,
                    cpu=cpu, memory=memory, engine=config.connection.engine,
                    password_env=config.spec.password_env,
                    metrics_port=config.run.metrics_port, metrics_address=_metrics_address(config),
                    label=config.run.label, node_names=config.connection.node_names, **scheduling,
                    service_account=service_account, cnpg_cluster=cnpg_cluster)
    total = k8s.parts(plan)
    longest = f"{plan.label or plan.name}-t{len(plan.targets) - 1}-{pods - 1}"  # the last pod's --label
    if len(longest) > MAX_LABEL:
        raise UsageError(f"--label is {len(plan.label)} characters long: the last pod's label, {longest[-20:]!r} at "
                         f"its end, would be longer than {MAX_LABEL}",
                         f"give a label of at most {MAX_LABEL - len(longest) + len(plan.label)} characters")
    if total > parts.MAX_PARTS:  # every pod would refuse its --part job-index/N
        raise UsageError(f"--pods {pods} for {len(plan.targets)} target(s) make {total} parts; a run has at most "
                         f"{parts.MAX_PARTS} parts", f"give --pods {parts.MAX_PARTS // len(plan.targets)} or fewer")
    if out.exists():
        raise UsageError(f"--out {out} already exists", "give a new directory for the manifests")
    for note in notes:
        ui.warn(note)
    trust.make_private_directory(out, "the manifests")
    files = {"run": out / f"{name}-run.yaml", "merge": out / f"{name}-merge.yaml", "read": out / f"{name}-read.yaml"}
    trust.write_output(files["run"], yaml.safe_dump_all(k8s.run_manifests(plan), sort_keys=False))
    if total > 1:
        trust.write_output(files["merge"], yaml.safe_dump(k8s.merge_manifest(plan), sort_keys=False))
    else:  # a single pod is a whole run (no --part): its result is the run's, with nothing to merge
        del files["merge"]
    trust.write_output(files["read"], yaml.safe_dump(k8s.read_manifest(plan), sort_keys=False))
    _say_what_next(ui, plan, files)


def _say_what_next(ui: UI, plan: k8s.Plan, files: dict[str, Path]) -> None:
    """What was written, and the kubectl commands that run it and read it, with the user's names, to paste."""
    kubectl = shlex.join(["kubectl", *(["-n", plan.namespace] if plan.namespace else [])])  # every word quoted
    jobs = [f"job/{plan.name}-t{i}" for i in range(len(plan.targets))]
    if "merge" in files:
        ui.say(f"wrote {files['run']} and {files['merge']}: the {k8s.parts(plan)} parts of run {k8s.run_id(plan)}, "
               f"window at {plan.start_at}; the merge Job waits for every part's result in {k8s.run_directory(plan)} "
               f"and merges them into {k8s.merged_directory(plan)} on the results volume")
        jobs.append(f"job/{plan.name}-merge")
        result = k8s.merged_directory(plan)
    else:
        result = k8s.part_directory(plan, 0).replace("$(POD_INDEX)", "0")
        ui.say(f"wrote {files['run']}: 1 pod, window at {plan.start_at}; its result is in {result} on the results "
               "volume")
    if plan.cnpg_cluster:
        ui.say(f"the run pods connect with Secret {plan.cnpg_cluster}-app (CloudNativePG's: host, port, username, "
               "password, dbname), in the cluster's namespace")
    if plan.ttl_seconds is not None:
        ui.say(f"each Job and its pods are deleted {plan.ttl_seconds} s after it finishes: read its logs before")
    files_of = {key: shlex.quote(str(path)) for key, path in files.items()}
    reader = k8s.read_pod(plan)
    ui.say(f"  {kubectl} apply -f {files_of['run']}")
    if "merge" in files:
        ui.say(f"  {kubectl} apply -f {files_of['merge']}")
    ui.say(f"  {kubectl} wait --for=condition=complete --timeout=-1s {shlex.join(jobs)}")
    ui.say(f"  {kubectl} logs {jobs[-1]}")
    ui.say(f"then read the results from {files['read'].name}'s pod (an hour), and delete what was applied (the "
           "results volume too):")
    ui.say(f"  {kubectl} apply -f {files_of['read']}")
    ui.say(f"  {kubectl} wait --for=condition=Ready pod/{reader}")
    if "merge" in files:
        ui.say(f"  {kubectl} exec {reader} -- dbio report {result}")
    else:  # the pod's result is in the directory dbio run made in its --results-dir, named when it ran
        ui.say(f"  {kubectl} exec {reader} -- sh -c {shlex.quote(f'dbio report {result}/*/')}")
    ui.say(f"  {kubectl} cp {reader}:{k8s.run_directory(plan)} {k8s.run_id(plan)}")
    ui.say(f"  {kubectl} delete {' '.join('-f ' + files_of[key] for key in ('read', 'merge', 'run') if key in files)}")


def _scheduling(node_selector: tuple[str, ...], tolerate: tuple[str, ...], ttl: str | None) -> dict[str, Any]:
    """Where the pods may run and how long their Jobs stay once finished, each checked as Kubernetes reads it."""
    selector = _each("--node-selector", node_selector, k8s.selector_entry)
    tolerations = _each("--tolerate", tolerate, k8s.toleration)
    for n, toleration in enumerate(tolerations):
        if any((t.key, t.effect) == (toleration.key, toleration.effect) for t in tolerations[:n]):
            raise UsageError(f"--tolerate {toleration.key}{':' + toleration.effect if toleration.effect else ''} "
                             "is given twice", "give each key and effect once")
    return {"node_selector": tuple(selector), "tolerations": tuple(tolerations),
            "ttl_seconds": None if ttl is None else _ttl(ttl)}


def _each(flag: str, items: tuple[str, ...], parse: Callable[[str], T]) -> list[T]:
    parsed = []
    for item in items:
        try:
            parsed.append(parse(item))
        except ValueError as exc:
            raise UsageError(f"{flag} {item!r} is not what Kubernetes takes there", str(exc)) from None
    return parsed


def _ttl(ttl: str) -> int:
    """--ttl as ttlSecondsAfterFinished: whole seconds, an int32."""
    try:
        seconds = units.parse_duration(ttl)
    except units.UnitError as exc:
        raise UsageError(f"--ttl {ttl!r}: {exc}", "give how long a finished Job stays, e.g. --ttl 600s") from None
    if not seconds.is_integer() or seconds > MAX_TTL:
        raise UsageError(f"--ttl {ttl!r}: ttlSecondsAfterFinished is whole seconds, at most {MAX_TTL}",
                         "give whole seconds, e.g. --ttl 600s or --ttl 1h")
    if seconds < MIN_TTL:
        raise UsageError(f"--ttl {ttl!r}: a Job deleted under {MIN_TTL} s after it finishes takes its pods' logs "
                         "with it before `kubectl logs` can read them",
                         f"give --ttl {MIN_TTL}s or more (e.g. 600s), or leave --ttl out to keep the Jobs")
    return int(seconds)


def _results_size(size: str) -> int:
    """--results-size in bytes (its Kubernetes syntax already checked), refused outside what a volume can be."""
    value = k8s.quantity_bytes(size)
    if not MIN_RESULTS_SIZE <= value <= MAX_RESULTS_SIZE:
        why = "under 64Mi: no result fits" if value < MIN_RESULTS_SIZE else "over 64Ti: no volume is that size"
        raise UsageError(f"--results-size {size!r} is {why}", "give a size from 64Mi to 64Ti, e.g. --results-size 1Gi")
    return value


def _targets(config: Config, cnpg_cluster: str | None, password_secret: str | None) -> tuple[str, ...]:
    """Every --dsn, each a target of its own Job; a password goes to a Secret, never a manifest. A CloudNativePG
    cluster is the one target, its connection and password all in its application Secret."""
    if cnpg_cluster is not None:
        for given, why in ((config.connection.dsns, "--dsn"), (password_secret, "--password-secret")):
            if given:
                raise UsageError(f"--cnpg-cluster and {why}: the pods read the connection and its password from "
                                 f"Secret {cnpg_cluster}-app", f"remove {why}, or --cnpg-cluster")
        if config.connection.engine != "postgresql":
            raise UsageError(f"--cnpg-cluster with --engine {config.connection.engine}: a CloudNativePG cluster "
                             "is PostgreSQL", "remove --engine, or give the target's --dsn")
        return (k8s.CNPG_TARGET,)
    if not config.connection.dsns:
        raise UsageError("the pods need a server to run against", "give --dsn (repeat it for several targets) "
                         "or --cnpg-cluster NAME")
    entry = config.spec
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
    """The run's options the pods take as they are (TO_THE_PODS) that were set (by flag, environment or file
    here), as flags for the pods."""
    passed = {key for key in TO_THE_PODS if config.origins.get(key, "default") != "default"}
    if "work_loop" in passed:  # its scope follows where work_loop came from (a slob.conf: session): say it
        passed.add("work_loop_scope")
    args: list[str] = []
    for option in OPTIONS:
        if option.key in passed:
            value = getattr(getattr(config, option.section), option.key)
            args += _flag(option.flag, option.kind, value)
    return args


def _unused(config: Config) -> list[str]:
    """The options set that the pods would not use: one given as a flag refused in one line (exit 2), before
    anything is written; one a file or the environment set (which may serve other commands) named in a note."""
    notes = []
    for option in OPTIONS:
        origin = config.origins.get(option.key, "default")
        if origin == "default" or not command_flags.takes("kubernetes", option) or option.key in TO_THE_PODS \
                or option.key in IN_THE_MANIFESTS:
            continue
        why, fix = NOT_USED.get(option.key, UNCLASSIFIED)
        if origin.startswith("--"):
            raise UsageError(f"{origin} is not used by dbio kubernetes: {why}", fix)
        notes.append(f"{display_key(option, origin)}: not used by dbio kubernetes: {why}")
    if config.run.metrics_port is None and config.origins.get("metrics_address", "default") != "default":
        origin = config.origins["metrics_address"]
        if origin.startswith("--"):
            raise UsageError("--metrics-address without --metrics-port: no pod would listen on it",
                             "give --metrics-port too, or remove --metrics-address")
        notes.append(f"{display_key(BY_KEY['metrics_address'], origin)}: not used by dbio kubernetes without "
                     "--metrics-port")
    return notes


def _metrics_address(config: Config) -> str:
    """Where the pods' metrics listen: as given, or every address of the pod (this machine's default,
    127.0.0.1, would be the pod's own loopback, which the cluster's Prometheus cannot reach)."""
    given = config.origins.get("metrics_address", "default") != "default"
    return config.run.metrics_address if given else "0.0.0.0"


def _flag(flag: str, kind: str, value: Any) -> list[str]:
    if kind == "bool":
        return [flag if value else "--no-" + flag[2:]]
    if isinstance(value, (list, tuple)):
        return [part for item in value for part in (flag, str(item))]
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return [flag, str(value)]
