"""Plain Kubernetes manifests: many pods measure at one agreed start, then their results merge (pure).

For storage shared by many hosts (an array, a cloud volume type): the pods are the parts of one
agreed run (`dbio run --part`, one --run-id, one --start-at), an Indexed Job per target whose pod
takes its part from its completion index (--part job-index+K/N), so that a server admits them all
and each counts its own sessions' reads. Everything a run writes on the shared results volume is
under a directory named by its run id: each pod's result in a directory of its own there, and the
merged result beside them; a second Job waits for every part's result there (or the run's end) and
merges what is there (`dbio merge`, which names each part missing), so that another run on the
same volume is never read. dbio writes manifests and stays out of the cluster: no client library,
no cluster state.
"""

from __future__ import annotations

import re
from decimal import ROUND_CEILING, Decimal
import shlex
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

RESULTS = "/results"
SETTLE_SECONDS = 600  # past its window, what a pod may still take: late scheduling, image pulls, its reports
MERGE_SECONDS = 600  # what the merge may take once every part is in
POLL_SECONDS = 10  # how often the merge Job looks for the parts' results
READ_SECONDS = 3600  # how long the Pod to read the results by waits for kubectl exec and cp
USER = 65532  # the pods' user and group (distroless' "nonroot"); the results volume is prepared for it (fsGroup)
INDEX_FIELD = "metadata.annotations['batch.kubernetes.io/job-completion-index']"  # set by the Job controller
# CloudNativePG's application Secret of cluster NAME (NAME-app): each libpq variable a pod reads, from its key
CNPG_SECRET_KEYS = (("PGHOST", "host"), ("PGPORT", "port"), ("PGUSER", "username"), ("PGDATABASE", "dbname"),
                    ("PGPASSWORD", "password"))
CNPG_TARGET = "host=$(PGHOST) port=$(PGPORT)"  # the node's connection string, the service's own; the rest: libpq's
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


# -- Kubernetes' own syntax, so that a bad value is refused here in one line, not by the API server ------------

# RFC 1123 DNS label (a namespace): at most 63 characters
_DNS_LABEL = r"[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?"
# resource.Quantity: a number (no sign: a request is positive) and a binary, decimal or exponent suffix
_QUANTITY = r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[KMGTPE]i|[eE][+-]?[0-9]+|[mkMGTPE])?"
# a label's name (a node selector's key, a taint's, without its prefix) and value: at most 63 characters
_LABEL_NAME = r"[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
# an image reference (the distribution grammar): [registry[:port]/]path[:tag][@digest]
_PATH_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_DOMAIN_COMPONENT = r"[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?"
_DOMAIN = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[[a-fA-F0-9:]+\])"
_IMAGE = (rf"(?P<name>(?:{_DOMAIN}(?::[0-9]+)?/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*)"
          r"(?::[\w][\w.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?")

SYNTAX = {  # what a value must be: its pattern, its most characters, what that allows (said when refused)
    "dns-label": (re.compile(_DNS_LABEL), 63, "an RFC 1123 DNS label: lowercase letters, digits and '-', starting "
                                              "and ending with a letter or digit, at most 63 characters"),
    "dns-subdomain": (re.compile(rf"{_DNS_LABEL}(?:\.{_DNS_LABEL})*"), 253,
                      "an RFC 1123 DNS subdomain: DNS labels (lowercase letters, digits and '-') joined by '.', at "
                      "most 253 characters"),
    "quantity": (re.compile(_QUANTITY), 64, "a positive Kubernetes quantity: a number and an optional suffix "
                                            "(m, k, M, G, Ki, Mi, Gi, ...), e.g. 500m, 2, 512Mi, 1Gi"),
    "label-key": (re.compile(rf"(?:{_DNS_LABEL}(?:\.{_DNS_LABEL})*/)?{_LABEL_NAME}", re.ASCII), 317,
                  "a label key: a name of at most 63 letters, digits, '-', '_' and '.', starting and ending with a "
                  "letter or digit, after an optional DNS subdomain prefix and '/' (e.g. disk, example.com/disk)"),
    "label-value": (re.compile(rf"(?:{_LABEL_NAME})?", re.ASCII), 63,
                    "a label value: empty, or at most 63 letters, digits, '-', '_' and '.', starting and ending with "
                    "a letter or digit"),
    "image": (re.compile(_IMAGE, re.ASCII), 512, "an image reference [registry[:port]/]path[:tag][@digest], e.g. "
                                                 "registry.example:5000/team/dbio:0.1 (the path in lowercase)"),
}


def syntax_problem(value: str, syntax: str) -> str | None:
    """What Kubernetes would refuse in value, as that syntax allows it (None: nothing)."""
    pattern, longest, allowed = SYNTAX[syntax]
    match = pattern.fullmatch(value) if len(value) <= longest else None
    if match is None or (syntax == "image" and len(match.group("name")) > 255) or (
            syntax == "label-key" and "/" in value and len(value.split("/")[0]) > 253):
        return f"must be {allowed}"
    if syntax == "quantity" and float(re.match(r"[0-9.]*", value).group() or 0) == 0:  # type: ignore[union-attr]
        return f"must be {allowed}"
    return None


_SUFFIXES = {"m": Decimal("0.001"), "": Decimal(1), "k": Decimal(10) ** 3, "M": Decimal(10) ** 6,
             "G": Decimal(10) ** 9, "T": Decimal(10) ** 12, "P": Decimal(10) ** 15, "E": Decimal(10) ** 18,
             **{s: Decimal(1024) ** (n + 1) for n, s in enumerate(("Ki", "Mi", "Gi", "Ti", "Pi", "Ei"))}}


def quantity_bytes(value: str) -> int:
    """A quantity that syntax_problem took, as the whole number Kubernetes rounds it up to (Decimal: 1e400 is a
    number, never a float's inf)."""
    number = re.match(r"[0-9]*\.?[0-9]*", value).group()  # type: ignore[union-attr]
    suffix = value[len(number):]
    if suffix in _SUFFIXES:
        amount = Decimal(number) * _SUFFIXES[suffix]
    else:  # an exponent; beyond +-100 the 64 characters' number is out of any range asked, either way
        amount = Decimal(number).scaleb(max(-100, min(100, int(suffix[1:]))))
    return int(amount.to_integral_value(rounding=ROUND_CEILING))


def selector_entry(item: str) -> tuple[str, str]:
    """--node-selector's KEY=VALUE, as a node label is written (ValueError: what it must be)."""
    key, sep, value = item.partition("=")
    if not sep:
        raise ValueError("must be KEY=VALUE, a node label's key and value (e.g. disk=nvme)")
    for part, syntax, what in ((key, "label-key", "its key"), (value, "label-value", "its value")):
        problem = syntax_problem(part, syntax)
        if problem:
            raise ValueError(f"{what} {problem}")
    return key, value


@dataclass(frozen=True)
class Toleration:
    """A pod's toleration of a node's taint: KEY=VALUE (operator Equal) or KEY alone (Exists: any value), for
    one effect or, with none, for every effect."""

    key: str
    value: str | None = None
    effect: str | None = None

    def manifest(self) -> dict[str, str]:
        out = {"key": self.key, "operator": "Exists" if self.value is None else "Equal"}
        if self.value is not None:
            out["value"] = self.value
        if self.effect is not None:
            out["effect"] = self.effect
        return out


def toleration(text: str) -> Toleration:
    """--tolerate's KEY[=VALUE][:EFFECT], as `kubectl taint` writes a taint (ValueError: what it must be).
    Neither a key nor a value holds ':', so the last one starts the effect."""
    rest, colon, effect = text.rpartition(":")
    if not colon:
        rest, effect = text, ""
    elif effect not in TAINT_EFFECTS:
        raise ValueError(f"its effect must be one of {', '.join(TAINT_EFFECTS)} (or none: every effect)")
    key, equals, value = rest.partition("=")
    for part, syntax, what in ((key, "label-key", "its key"), (value, "label-value", "its value")):
        problem = syntax_problem(part, syntax)
        if problem:
            raise ValueError(f"{what} {problem}; write KEY[=VALUE][:EFFECT], e.g. dedicated=storage:NoSchedule")
    return Toleration(key, value if equals else None, effect or None)


def literal(text: str) -> str:
    """text in a container's command or env value as it is: Kubernetes expands $(NAME) there ($$ is a $)."""
    return text.replace("$", "$$")


@dataclass(frozen=True)
class Plan:
    """What the user asked for: pods per target, the agreed start, the image, where results go."""

    name: str  # prefix of every object's name
    image: str
    targets: tuple[str, ...]  # one libpq connection string per target (no password)
    pods_per_target: int
    start_at: str  # ISO 8601 with zone, as given
    run_args: tuple[str, ...]  # dbio run flags besides --dsn, --start-at, --results-dir and --label
    run_seconds: float  # warm-up + run time: how long a pod measures after the start
    lead_seconds: float = 0.0  # from when the manifests are written to the warm-up's beginning
    namespace: str | None = None
    password_secret: str | None = None  # a Secret with key "password", never a value here
    engine: str = "postgresql"  # the engine the pods run (--engine)
    password_env: str = "PGPASSWORD"  # the variable the engine's driver reads the Secret's password from
    results_size: str = "1Gi"
    storage_class: str | None = None
    cpu: str = "1"
    memory: str = "512Mi"
    metrics_port: int | None = None  # each run pod serves /metrics there (--metrics-port), annotated for scraping
    metrics_address: str = "0.0.0.0"  # where it listens: the pod's own addresses, for the cluster's Prometheus
    label: str = ""  # the run's label (--label): the merged result's, and each part's with its target and index
    node_names: tuple[str, ...] = ()  # one per target (--node-names): the node each of its pods' results names
    node_selector: tuple[tuple[str, str], ...] = ()  # the labels a pod's node must have (--node-selector)
    tolerations: tuple[Toleration, ...] = ()  # the taints a pod's node may have (--tolerate)
    ttl_seconds: int | None = None  # a finished Job and its pods deleted this long after (--ttl); the volume stays
    service_account: str | None = None  # the pods' ServiceAccount (--service-account); its token is not mounted
    cnpg_cluster: str | None = None  # the one target: a CloudNativePG cluster, reached from its NAME-app Secret


def run_manifests(plan: Plan) -> list[dict[str, Any]]:
    """The results volume and one Indexed Job per target, every pod a part of one run at one --start-at."""
    return [_volume(plan)] + [_run_job(plan, index, dsn) for index, dsn in enumerate(plan.targets)]


def parts(plan: Plan) -> int:
    """How many parts the run has: every pod of every target's Job (1: a whole run, no --part)."""
    return plan.pods_per_target * len(plan.targets)


def run_id(plan: Plan) -> str:
    """The identity every part shares: the manifests' name and the start, e.g. dbio-20261127T190000Z."""
    start = datetime.fromisoformat(plan.start_at).astimezone(timezone.utc)
    return f"{plan.name}-{start:%Y%m%dT%H%M%SZ}"


def run_directory(plan: Plan) -> str:
    """Where the run writes on the results volume, named by its run id: its parts' directories and the merged
    result. A later run on the same volume has another start, so another directory: no run reads another's."""
    return f"{RESULTS}/{run_id(plan)}"


def part_directory(plan: Plan, target: int) -> str:
    """A pod's --results-dir: target's, and the pod's completion index (expanded by Kubernetes)."""
    return f"{run_directory(plan)}/t{target}-$(POD_INDEX)"


def merged_directory(plan: Plan) -> str:
    return f"{run_directory(plan)}/merged"


def deadline(plan: Plan) -> int:
    """A run pod's activeDeadlineSeconds: counted from when the Job is applied, at the latest as the manifests
    are written, it allows for the wait until the start, the warm-up and run, and the settle margin."""
    return int(plan.lead_seconds + plan.run_seconds + SETTLE_SECONDS + 0.999)


def merge_manifest(plan: Plan) -> dict[str, Any]:
    """The Job that merges the run's parts into one result. Applied with the run Jobs, or after them, it waits
    until every part's result is written in the run's directory, or until no pod can still write one, and
    merges what is there: `dbio merge` names the parts that wrote none (one part alone is merged too, its
    figure marked as not the run's total); with none, it says so and fails."""
    results = f"{run_directory(plan)}/t[0-9]*-[0-9]*/*/result.json"  # this run's parts only
    give_up = int(datetime.fromisoformat(plan.start_at).timestamp() + plan.run_seconds + SETTLE_SECONDS)
    label = shlex.quote(plan.label or plan.name)
    by = datetime.fromtimestamp(give_up, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    # the shell's own globbing (sorted), no other program: a name the glob did not match is left out
    script = (f"found() {{ n=0; for f in {results}; do [ -e \"$f\" ] && n=$((n + 1)); done; echo $n; }}; "
              f"until [ \"$(found)\" -ge {parts(plan)} ] || [ \"$(date +%s)\" -ge {give_up} ]; do "
              f"sleep {POLL_SECONDS}; done; "
              f"set --; for f in {results}; do [ -e \"$f\" ] && set -- \"$@\" \"${{f%/result.json}}\"; done; "
              f"if [ $# -eq 0 ]; then echo \"dbio: no part of run {run_id(plan)} wrote a result in "
              f"{run_directory(plan)} by {by}: nothing to merge\" >&2; exit 1; fi; "
              f"exec dbio merge \"$@\" --out {merged_directory(plan)} --label {label}")
    job = _job(plan, f"{plan.name}-merge", 1, ["sh", "-c", literal(script)], [], indexed=False)  # no password
    job["spec"]["activeDeadlineSeconds"] = deadline(plan) + MERGE_SECONDS
    return job


def _volume(plan: Plan) -> dict[str, Any]:
    spec: dict[str, Any] = {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": plan.results_size}}}
    if plan.storage_class:
        spec["storageClassName"] = plan.storage_class
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": _meta(plan, f"{plan.name}-results"),
            "spec": spec}


def _run_job(plan: Plan, target: int, dsn: str) -> dict[str, Any]:
    name = f"{plan.name}-t{target}"
    args = ["dbio", "run", "--engine", plan.engine, "--dsn", "$(DBIO_TARGET)", "--start-at", plan.start_at]
    if parts(plan) > 1:  # the pod's part: its completion index (0-based), after the earlier targets' pods
        offset = f"+{target * plan.pods_per_target}" if target else ""
        args += ["--part", f"job-index{offset}/{parts(plan)}", "--run-id", run_id(plan)]
    args += ["--results-dir", part_directory(plan, target),
             "--label", f"{literal(plan.label or plan.name)}-t{target}-$(POD_INDEX)"]
    if plan.node_names:
        args += ["--node-names", literal(plan.node_names[target])]
    args += [*map(literal, plan.run_args)]
    if plan.metrics_port is not None:  # on the pod's address, for the cluster's Prometheus
        args += ["--metrics-port", str(plan.metrics_port), "--metrics-address", literal(plan.metrics_address)]
    return _job(plan, name, plan.pods_per_target, args, _connection_env(plan, dsn) + [
        {"name": "POD_INDEX", "valueFrom": {"fieldRef": {"fieldPath": INDEX_FIELD}}}],
        indexed=True, metrics_port=plan.metrics_port)


def _connection_env(plan: Plan, dsn: str) -> list[dict[str, Any]]:
    """How a run pod reaches its target, its password always from a Secret. A CloudNativePG cluster's pods read
    everything from its application Secret as libpq's variables (as `kubectl cnpg pgbench` does), their
    connection string naming the service (Kubernetes expands $(PGHOST): defined before it)."""
    if plan.cnpg_cluster:
        secret = f"{plan.cnpg_cluster}-app"
        return [{"name": variable, "valueFrom": {"secretKeyRef": {"name": secret, "key": key}}}
                for variable, key in CNPG_SECRET_KEYS] + [{"name": "DBIO_TARGET", "value": CNPG_TARGET}]
    env: list[dict[str, Any]] = [{"name": "DBIO_TARGET", "value": literal(dsn)}]
    if plan.password_secret:
        env.append({"name": plan.password_env,
                    "valueFrom": {"secretKeyRef": {"name": plan.password_secret, "key": "password"}}})
    return env


def _job(plan: Plan, name: str, pods: int, command: list[str], env: list[dict[str, Any]], *,
         indexed: bool, metrics_port: int | None = None) -> dict[str, Any]:
    container = _container(plan, command, env)
    pod_meta: dict[str, Any] = {"labels": _labels(plan)}
    if metrics_port is not None:  # the annotations Prometheus' usual pod discovery reads
        container["ports"] = [{"name": "metrics", "containerPort": metrics_port}]
        pod_meta["annotations"] = {"prometheus.io/scrape": "true", "prometheus.io/port": str(metrics_port),
                                   "prometheus.io/path": "/metrics"}
    spec: dict[str, Any] = {
        "completions": pods, "parallelism": pods, "backoffLimit": 0,  # a failed run is not retried: its start passed
        "activeDeadlineSeconds": deadline(plan),
        "template": {"metadata": pod_meta, "spec": _pod_spec(plan, container)},
    }
    if indexed:
        spec["completionMode"] = "Indexed"
    if plan.ttl_seconds is not None:  # the Job and its pods (their logs) go; what they wrote stays on the volume
        spec["ttlSecondsAfterFinished"] = plan.ttl_seconds
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": _meta(plan, name), "spec": spec}


def read_manifest(plan: Plan) -> dict[str, Any]:
    """A Pod to read the results by, once the run is over: it mounts the volume read-only and waits (an hour at
    most), for `kubectl exec ... dbio report` and `kubectl cp`; deleting it leaves the volume as it was."""
    container = _container(plan, ["sleep", str(READ_SECONDS)], [])
    container["volumeMounts"][0]["readOnly"] = True
    spec = {**_pod_spec(plan, container), "activeDeadlineSeconds": READ_SECONDS}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": _meta(plan, read_pod(plan)), "spec": spec}


def read_pod(plan: Plan) -> str:
    return f"{plan.name}-read"


def _container(plan: Plan, command: list[str], env: list[dict[str, Any]]) -> dict[str, Any]:
    # the root filesystem is read-only: HOME and caches (matplotlib's) go to a scratch volume
    variables: list[dict[str, Any]] = [{"name": "HOME", "value": "/tmp"},
                                       {"name": "MPLCONFIGDIR", "value": "/tmp/matplotlib"}, *env]
    return {
        "name": "dbio", "image": plan.image, "command": command, "env": variables,
        "resources": {"requests": {"cpu": plan.cpu, "memory": plan.memory},
                      "limits": {"memory": plan.memory}},
        "volumeMounts": [{"name": "results", "mountPath": RESULTS}, {"name": "scratch", "mountPath": "/tmp"}],
        "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                            "capabilities": {"drop": ["ALL"]}},
    }


def _pod_spec(plan: Plan, container: dict[str, Any]) -> dict[str, Any]:
    pod: dict[str, Any] = {
        "restartPolicy": "Never", "containers": [container],
        # dbio never talks to the cluster: no API token in the pod, whatever its service account
        "automountServiceAccountToken": False,
        # the kubelet makes the results volume group-owned by fsGroup (2775), a group the pod's user is a member
        # of: dbio trusts it when not root (trust.py)
        "securityContext": {"runAsNonRoot": True, "runAsUser": USER, "runAsGroup": USER, "fsGroup": USER},
        "volumes": [{"name": "results", "persistentVolumeClaim": {"claimName": f"{plan.name}-results"}},
                    {"name": "scratch", "emptyDir": {}}]}
    if plan.service_account:
        pod["serviceAccountName"] = plan.service_account
    if plan.node_selector:  # every pod, the merge's too: it mounts the same volume, from the nodes chosen
        pod["nodeSelector"] = dict(plan.node_selector)
    if plan.tolerations:
        pod["tolerations"] = [t.manifest() for t in plan.tolerations]
    return pod


def _labels(plan: Plan) -> dict[str, str]:
    return {"app.kubernetes.io/name": "dbio", "dbio/run": plan.name}


def _meta(plan: Plan, name: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": _labels(plan)}
    if plan.namespace:
        meta["namespace"] = plan.namespace
    return meta
