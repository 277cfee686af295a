"""Run a generated Job's pods on this machine, as a kubelet would start them (no cluster needed).

Each pod of a Job (each completion index of an Indexed Job) becomes one process: its container's
command with the pod's environment (values, a Secret's key as the Secrets given hold it, the
completion index from the annotation the Job controller sets, JOB_COMPLETION_INDEX, and Kubernetes'
$(NAME) expansion), as the pod's user with fsGroup as a supplementary group, in a network namespace
of its own linked to this host by a veth pair on a bridge. Volumes are host directories prepared as
the kubelet prepares them: group-owned by fsGroup, setgid and group-writable (a PersistentVolumeClaim
2775, an emptyDir 2777).

A pod runs one of two ways:
- in the image (`Pod.in_image`): podman runs the container's command in dbio's image
  (tests/pod_image.py) as the container's securityContext says (its user and fsGroup, a read-only root
  filesystem, every capability dropped, no privilege escalation) and its resources' memory limit, the
  claim's directory mounted at its mountPath, an emptyDir a tmpfs, in the pod's network namespace;
- on this host (`Pod.argv`, setpriv): a mountPath in the command or the environment is replaced by its
  directory (this host has no /results to mount it on), and `dbio` is this checkout's `python -m dbio`,
  through an executable shim on PATH, with an interpreter the pod's user can run (the test's own may
  live under root's home).
"""

from __future__ import annotations

import json
import os
import pwd
import re
import resource
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
INDEX_ANNOTATION = "metadata.annotations['batch.kubernetes.io/job-completion-index']"


def missing_tools() -> str | None:
    """Why pods cannot be run here (None: they can)."""
    if os.geteuid() != 0:
        return "needs root (network namespaces, another user's identity)"
    for tool in ("ip", "setpriv"):
        if shutil.which(tool) is None:
            return f"needs {tool}"
    probe = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"ip netns is unavailable: {probe.stderr.strip()}"
    return None


def pod_python(uid: int, gid: int) -> tuple[str, dict[str, str]]:
    """An interpreter the user uid can run with dbio and its libraries importable, and the environment that
    makes them so: the test's own, or the system's of the same version given the virtualenv's packages."""
    paths = {"PYTHONPATH": os.pathsep.join([str(REPO), sysconfig.get_paths()["purelib"]])}
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    for python in (sys.executable, f"/usr/bin/python{version}"):
        # through sh, as the shim runs it (setpriv itself finds a program the user could not)
        check = subprocess.run(["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "sh", "-c",
                                'exec "$0" -c "import dbio.cli, psycopg"', python], capture_output=True,
                               env={**paths, "HOME": "/", "PATH": "/usr/bin:/bin"})
        if check.returncode == 0:
            return python, paths
    raise RuntimeError(f"no interpreter user {uid} can run dbio with (tried {sys.executable} and python{version})")


def make_shim(directory: Path, uid: int, gid: int) -> Path:
    """A directory holding `dbio`: this checkout's python -m dbio, for the pods' PATH."""
    python, paths = pod_python(uid, gid)
    directory.mkdir(mode=0o755)
    shim = directory / "dbio"
    shim.write_text(f"#!/bin/sh\nPYTHONPATH='{paths['PYTHONPATH']}' exec '{python}' -m dbio \"$@\"\n")
    shim.chmod(0o755)
    return directory


def expand(text: str, env: dict[str, str]) -> str:
    """Kubernetes' expansion in a command or an env value: $(NAME) of a variable defined before, $$ a $."""
    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)",
                  lambda m: "$" if m.group(0) == "$$" else env.get(m.group(1), m.group(0)), text)


def prepare_volume(path: Path, fs_group: int, mode: int) -> Path:
    """A volume's directory as the kubelet leaves it for fsGroup: root's, in fsGroup, setgid."""
    path.mkdir(parents=True)
    os.chown(path, 0, fs_group)
    path.chmod(mode)
    return path


def mounted(text: str, mounts: dict[str, Path]) -> str:
    """text with each mountPath in it replaced by the host directory that stands for it."""
    for mount, where in mounts.items():
        text = re.sub(rf"(?<![\w/]){re.escape(mount)}(?=/|\b|$)", str(where), text)
    return text


@dataclass
class Pod:
    name: str
    command: list[str]  # on this host: each mountPath replaced by its directory
    env: dict[str, str]
    uid: int
    gid: int
    fs_group: int
    container: list[str] = field(default_factory=list)  # the command as the container sees it
    container_env: dict[str, str] = field(default_factory=dict)
    mounts: dict[str, tuple[Path | None, bool]] = field(default_factory=dict)  # mountPath: directory (None:
    # an emptyDir), read-only
    read_only_root: bool = False
    memory: int | None = None  # the container's memory limit, bytes

    def argv(self, namespace: str | None) -> list[str]:
        """The command as the pod's user (fsGroup a supplementary group), in its network namespace."""
        ident = ["setpriv", f"--reuid={self.uid}", f"--regid={self.gid}", f"--groups={self.fs_group}",
                 "--no-new-privs", "--inh-caps=-all"]
        return (["ip", "netns", "exec", namespace] if namespace else []) + ident + self.command

    def in_image(self, image: str, namespace: str | None, env_file: Path, container: str, *,
                 detach: bool = False) -> list[str]:
        """podman running the container's command in image, as its securityContext says, its environment read
        from env_file (written by write_env: a Secret's value is never on a command line); the container is
        named container (unique on this machine: other tests may run pods of the same names)."""
        argv = ["podman", "run", "--rm", "--name", container, "--runtime", "runc", "--pull=never",
                "--hostname", self.name, "--user", f"{self.uid}:{self.gid}", "--group-add", str(self.fs_group),
                "--cap-drop", "all", "--security-opt", "no-new-privileges", "--passwd=false",
                "--env-file", str(env_file), "--entrypoint", json.dumps(self.container),
                # under this machine's hard limits (_limits)
                *(f"--ulimit={name}={limit}:{limit}" for name, limit in _limits().items())]
        if namespace:
            argv += ["--network", f"ns:/run/netns/{namespace}"]
        if self.read_only_root:
            argv += ["--read-only", "--read-only-tmpfs=false"]
        if self.memory is not None:
            argv += ["--memory", str(self.memory), "--memory-swap", str(self.memory)]
        for mount, (where, read_only) in self.mounts.items():
            if where is None:  # an emptyDir: scratch space of the pod's own
                argv += ["--tmpfs", f"{mount}:rw,exec,nosuid,nodev,mode=777"]
            else:
                argv += ["--volume", f"{where}:{mount}:{'ro' if read_only else 'rw'}"]
        return argv + (["--detach"] if detach else []) + [image]

    def write_env(self, path: Path) -> Path:
        """The container's environment as podman's --env-file reads it, private to root."""
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            for name, value in self.container_env.items():
                assert "\n" not in value, name
                out.write(f"{name}={value}\n")
        return path


POD_LIMIT = 20_000  # files and processes: more than a pod here opens, within what runc may set on this machine


def _limits() -> dict[str, int]:
    """podman's default limits are above what runc may set here (it fails: "error setting rlimits ... operation
    not permitted"), and so was this process's own hard NPROC: POD_LIMIT, or less where this process has less."""
    return {name: min(POD_LIMIT, resource.getrlimit(which)[1])
            for name, which in (("nofile", resource.RLIMIT_NOFILE), ("nproc", resource.RLIMIT_NPROC))}


def podman_env() -> dict[str, str]:
    """podman's own environment: root's, never the pod's (HOME=/tmp would have it read configuration from a
    directory anyone can write)."""
    return {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": pwd.getpwuid(0).pw_dir}


def quantity_bytes(text: str) -> int:
    """A Kubernetes memory quantity in bytes (the suffixes the manifests use)."""
    suffixes = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "k": 10**3, "M": 10**6, "G": 10**9}
    for suffix, factor in suffixes.items():
        if text.endswith(suffix):
            return int(float(text[:-len(suffix)]) * factor)
    return int(float(text))


def pods_of(job: dict[str, Any], volumes: dict[str, Path], shim: Path, scratch: Path,
            secrets: dict[str, dict[str, str]] | None = None) -> list[Pod]:
    """Every pod of a Job (or the one of a Pod): its claims' volumes are volumes[claimName]; an emptyDir is a
    new directory of its own under scratch, prepared for fsGroup; secrets[name][key] is a Secret's value."""
    if job["kind"] == "Pod":
        spec, template = {"completions": 1}, job["spec"]
    else:
        spec = job["spec"]
        template = spec["template"]["spec"]
    context = template["securityContext"]
    uid, gid, fs_group = context["runAsUser"], context.get("runAsGroup", 0), context["fsGroup"]
    (container,) = template["containers"]
    security = container.get("securityContext", {})
    limit = container.get("resources", {}).get("limits", {}).get("memory")
    pods = []
    for index in range(spec.get("completions", 1)):
        name = f"{job['metadata']['name']}-{index}" if job["kind"] == "Job" else job["metadata"]["name"]
        mounts: dict[str, Path] = {}
        in_image: dict[str, tuple[Path | None, bool]] = {}
        for volume in template["volumes"]:
            mount = next(m for m in container["volumeMounts"] if m["name"] == volume["name"])
            if "persistentVolumeClaim" in volume:
                where = volumes[volume["persistentVolumeClaim"]["claimName"]]
                in_image[mount["mountPath"]] = (where, bool(mount.get("readOnly")))
            else:
                where = prepare_volume(scratch / name / volume["name"], fs_group, 0o2777)
                in_image[mount["mountPath"]] = (None, False)
            mounts[mount["mountPath"]] = where

        def on_host(text: str) -> str:
            return mounted(text, mounts)

        env: dict[str, str] = {"PATH": f"{shim}:/usr/bin:/bin"}
        seen: dict[str, str] = {}  # as the container sees them
        if spec.get("completionMode") == "Indexed":  # the Job controller adds it to each pod
            env["JOB_COMPLETION_INDEX"] = seen["JOB_COMPLETION_INDEX"] = str(index)
        for variable in container.get("env", []):
            source = variable.get("valueFrom")
            if source is None:
                seen[variable["name"]] = expand(variable["value"], seen)
                env[variable["name"]] = on_host(expand(variable["value"], env))
                continue
            if source.get("fieldRef", {}).get("fieldPath") == INDEX_ANNOTATION:
                value = str(index)
            elif "secretKeyRef" in source and source["secretKeyRef"]["name"] in (secrets or {}):
                value = (secrets or {})[source["secretKeyRef"]["name"]][source["secretKeyRef"]["key"]]
            else:
                raise ValueError(f"{name}: {variable['name']} comes from {source}, which this harness cannot give")
            env[variable["name"]] = seen[variable["name"]] = value
        command = [on_host(expand(word, env)) for word in container["command"]]
        pods.append(Pod(name, command, env, uid, gid, fs_group, container=[expand(w, seen) for w in
                                                                           container["command"]],
                        container_env=seen, mounts=in_image,
                        read_only_root=bool(security.get("readOnlyRootFilesystem")),
                        memory=None if limit is None else quantity_bytes(limit)))
    return pods


class Network:
    """A bridge on this host (its address: the server's) and a namespace per pod on it, removed on exit."""

    def __init__(self, pods: int, tag: str):
        self.tag = tag
        self.prefix = f"10.{200 + os.getpid() % 50}.{os.getpid() % 250}"
        self.server = f"{self.prefix}.1"
        self.namespaces = [f"{tag}-p{n}" for n in range(pods)]

    def _sh(self, *args: str) -> None:
        subprocess.run(args, check=True, capture_output=True, text=True)

    def __enter__(self) -> Network:
        bridge = f"{self.tag}-br"
        try:
            self._sh("ip", "link", "add", bridge, "type", "bridge")
            self._sh("ip", "addr", "add", f"{self.server}/24", "dev", bridge)
            self._sh("ip", "link", "set", bridge, "up")
            for n, namespace in enumerate(self.namespaces):
                veth = f"{self.tag}-v{n}"
                self._sh("ip", "netns", "add", namespace)
                self._sh("ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", namespace)
                self._sh("ip", "link", "set", veth, "master", bridge)
                self._sh("ip", "link", "set", veth, "up")
                self._sh("ip", "-n", namespace, "addr", "add", f"{self.prefix}.{10 + n}/24", "dev", "eth0")
                self._sh("ip", "-n", namespace, "link", "set", "eth0", "up")
                self._sh("ip", "-n", namespace, "link", "set", "lo", "up")
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        for n, namespace in enumerate(self.namespaces):
            subprocess.run(["ip", "netns", "del", namespace], capture_output=True)
            subprocess.run(["ip", "link", "del", f"{self.tag}-v{n}"], capture_output=True)
        subprocess.run(["ip", "link", "del", f"{self.tag}-br"], capture_output=True)


def start(pod: Pod, namespace: str | None, log: Path) -> subprocess.Popen:
    """The pod's process (its output to log), from / as a container without a working directory."""
    out = log.open("w")
    return subprocess.Popen(pod.argv(namespace), env=pod.env, cwd="/", stdout=out, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, text=True)


def start_in_image(pod: Pod, image: str, namespace: str | None, log: Path, private: Path, container: str, *,
                   detach: bool = False) -> subprocess.Popen:
    """The pod's container in image (its output to log); its environment in a file under private, root's."""
    env_file = pod.write_env(private / f"{container}.env")
    out = log.open("w")
    return subprocess.Popen(pod.in_image(image, namespace, env_file, container, detach=detach), env=podman_env(),
                            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True)


def remove_container(container: str) -> None:
    """A container stopped and removed, if it is there (a failed test's, still running)."""
    subprocess.run(["podman", "rm", "--force", "--time", "0", container], capture_output=True, env=podman_env())
