"""Run a generated Job's pods on this machine, as a kubelet would start them (no cluster needed).

Each pod of a Job (each completion index of an Indexed Job) becomes one process: its container's
command with the pod's environment (values, the completion index from the annotation the Job
controller sets, JOB_COMPLETION_INDEX, and Kubernetes' $(NAME) expansion), as the pod's user with
fsGroup as a supplementary group (setpriv), in a network namespace of its own linked to this
host by a veth pair on a bridge. Volumes are host directories prepared as the kubelet prepares
them: group-owned by fsGroup, setgid and group-writable (a PersistentVolumeClaim 2775, an emptyDir
2777); a mountPath in the command or the environment is replaced by its directory (a container
would see the directory at the mountPath; this host has no /results to mount it on).

`dbio` in a command is this checkout's `python -m dbio`, through an executable shim on PATH, with an
interpreter the pod's user can run (the test's own may live under root's home).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
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
    command: list[str]
    env: dict[str, str]
    uid: int
    gid: int
    fs_group: int

    def argv(self, namespace: str | None) -> list[str]:
        """The command as the pod's user (fsGroup a supplementary group), in its network namespace."""
        ident = ["setpriv", f"--reuid={self.uid}", f"--regid={self.gid}", f"--groups={self.fs_group}",
                 "--no-new-privs", "--inh-caps=-all"]
        return (["ip", "netns", "exec", namespace] if namespace else []) + ident + self.command


def pods_of(job: dict[str, Any], volumes: dict[str, Path], shim: Path, scratch: Path) -> list[Pod]:
    """Every pod of a Job: its claims' volumes are volumes[claimName]; an emptyDir is a new directory of
    its own under scratch, prepared for fsGroup."""
    spec = job["spec"]
    template = spec["template"]["spec"]
    context = template["securityContext"]
    uid, gid, fs_group = context["runAsUser"], context.get("runAsGroup", 0), context["fsGroup"]
    (container,) = template["containers"]
    pods = []
    for index in range(spec.get("completions", 1)):
        name = f"{job['metadata']['name']}-{index}"
        mounts: dict[str, Path] = {}
        for volume in template["volumes"]:
            if "persistentVolumeClaim" in volume:
                where = volumes[volume["persistentVolumeClaim"]["claimName"]]
            else:
                where = prepare_volume(scratch / name / volume["name"], fs_group, 0o2777)
            mount = next(m["mountPath"] for m in container["volumeMounts"] if m["name"] == volume["name"])
            mounts[mount] = where

        def on_host(text: str) -> str:
            return mounted(text, mounts)

        env: dict[str, str] = {"PATH": f"{shim}:/usr/bin:/bin"}
        if spec.get("completionMode") == "Indexed":  # the Job controller adds it to each pod
            env["JOB_COMPLETION_INDEX"] = str(index)
        for variable in container.get("env", []):
            source = variable.get("valueFrom")
            if source is None:
                env[variable["name"]] = on_host(expand(variable["value"], env))
            elif source.get("fieldRef", {}).get("fieldPath") == INDEX_ANNOTATION:
                env[variable["name"]] = str(index)
            else:
                raise ValueError(f"{name}: {variable['name']} comes from {source}, which this harness cannot give")
        command = [on_host(expand(word, env)) for word in container["command"]]
        pods.append(Pod(name, command, env, uid, gid, fs_group))
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
