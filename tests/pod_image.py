"""dbio's image, built here from the repository's Containerfile with no container registry, for the tests that
run the generated pods in it (tests/kube_pods.py, podman).

The recipe names a public Python image; no registry is reachable here, so its base is made from Debian 12's
own packages instead (debootstrap --variant=minbase, with python3.11 and its venv), imported into podman,
and the Containerfile is built FROM it: dbio installed as the recipe installs it, from this checkout, with
constraints.txt's pins. pip in the build reaches the package index as this machine's pip does: its CA bundle
and pip configuration given as build secrets (never in the image), on the host's network.

Built once per machine and kept in root's podman storage (root-owned, 0700), in two steps, each under a tag
named by what it is made of: the base by the debootstrap recipe below (about a minute), the image by the
Containerfile, constraints.txt, pyproject.toml and dbio's own files. podman's layer cache keeps the
dependencies' layer, keyed by the Containerfile's lines and the files they copy, so a change to dbio
alone rebuilds only its last layer (seconds); a change of the recipe or of a pin rebuilds the dependencies
(about a minute and a half), a fresh machine the base as well (missing_tools() names what is missing,
build_note() how long a build would take). A lock in a root-owned directory keeps two test runs from
building at once.

A run of the whole suite starts the build as it begins (`build_ahead`, from tests/conftest.py), in a process
of its own beside the tests, so that its minutes (mostly downloads: Debian's packages, the dependencies'
wheels) pass while the other modules run rather than before the image's test: that test still builds from
nothing on a fresh machine, it finds the build under way and waits on its lock for it, or builds it itself
if the early build failed.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

REPO = Path(__file__).resolve().parent.parent
CACHE = Path("/var/cache/dbio-tests")  # root's, for the lock and the base's root filesystem while it is made
BASE = "localhost/dbio-test-base"
IMAGE = "localhost/dbio-test"
RUNTIME = "runc"  # Debian 12's crun 1.8 fails to start containers here
SUITE, MIRROR = "bookworm", "http://deb.debian.org/debian"
PACKAGES = ("python3", "python3-venv")  # python3.11, as the recipe's python:3.11-slim-bookworm; sh, tar: minbase's
TRIM = ("usr/share/doc", "usr/share/man", "usr/share/info", "usr/share/locale", "var/cache/apt", "var/lib/apt/lists",
        "var/log")
# what the image is made of besides the base: the recipe, the files it copies (.dockerignore keeps the rest out)
RECIPE = ("Containerfile", ".dockerignore", "constraints.txt", "pyproject.toml", "README.md")
PIP_CONFIG = Path("/etc/pip.conf")
CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
BUILD_TIMEOUT = 1200  # each step's: a mirror or index that stops answering fails the test, never hangs it


def missing_tools() -> str | None:
    """Why the image cannot be built or run here (None: it can)."""
    if os.geteuid() != 0:
        return "needs root (podman's storage, the pods' network namespaces)"
    for tool in ("podman", RUNTIME, "debootstrap"):
        if shutil.which(tool) is None:
            return f"needs {tool} (Debian packages podman, {RUNTIME} and debootstrap)"
    return None


def base_tag() -> str:
    recipe = repr((SUITE, MIRROR, "minbase", PACKAGES, TRIM)).encode()
    return f"{BASE}:{hashlib.sha256(recipe).hexdigest()[:16]}"


def image_tag() -> str:
    """The image's tag: the base's, the recipe's files and every file of dbio the build copies."""
    digest = hashlib.sha256(base_tag().encode())
    files = [REPO / name for name in RECIPE] + sorted(
        path for path in (REPO / "dbio").rglob("*") if path.is_file() and "__pycache__" not in path.parts)
    for path in files:
        digest.update(str(path.relative_to(REPO)).encode() + b"\0" + path.read_bytes() + b"\0")
    return f"{IMAGE}:{digest.hexdigest()[:16]}"


def exists(tag: str) -> bool:
    return subprocess.run(["podman", "image", "exists", tag], capture_output=True).returncode == 0


def build_note() -> str | None:
    """What building the image would take before the tests can run (None: it is built)."""
    if exists(image_tag()):
        return None
    if exists(base_tag()):
        return "building dbio's image on its base (seconds for a change to dbio, 1-2 minutes for a new pin)"
    return "building dbio's image on a fresh machine: its Debian base, then its dependencies (3-4 minutes, once)"


def build_ahead(log: Path) -> subprocess.Popen | None:
    """The image's build begun in a process of its own (its output to log, its priority below the tests'), when
    it can be built here and is not yet: the process, for `stop_ahead` at the end of the test run."""
    if missing_tools() is not None or build_note() is None:
        return None
    with log.open("a") as out:
        return subprocess.Popen(
            ["nice", "-n", "10", sys.executable, "-c", f"from tests import pod_image; pod_image.image({str(log)!r})"],
            cwd=REPO, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def stop_ahead(proc: subprocess.Popen) -> bool:
    """The early build ended at the end of the test run: stopped with its podman (its process group) if it is
    still under way (no test waited for it); whether it had ended on its own."""
    if proc.poll() is not None:
        return True
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    return False


def image(log: Path | str) -> str:
    """dbio's image, built if this checkout's is not yet (its output to log); its tag."""
    tag = image_tag()
    if exists(tag):
        return tag
    with _locked():
        if not exists(tag):  # another test run may have built it meanwhile
            with Path(log).open("a") as out:
                _build(tag, out)
    return tag


def _build(tag: str, out) -> None:
    base = base_tag()
    if not exists(base):
        _make_base(base, out)
    secrets = []  # this machine's pip configuration and CA bundle, for pip in the build only
    for name, path in (("pip.conf", PIP_CONFIG), ("ca.pem", CA_BUNDLE)):
        if path.is_file():
            secrets += ["--secret", f"id={name},src={path}"]
    started = time.monotonic()
    _run(["podman", "build", "--runtime", RUNTIME, "--network", "host", "--layers", "--pull=never",
          "--build-arg", f"BASE={base}", *secrets, "-f", "Containerfile", "-t", tag, "."], out, cwd=REPO)
    out.write(f"built {tag} in {time.monotonic() - started:.0f} s\n")
    _forget_older(tag, out)


def _make_base(tag: str, out) -> None:
    """Debian 12's minimal root filesystem with Python 3.11, trimmed, imported as the image's base."""
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="base-", dir=CACHE))  # root's, 0700
    try:
        root = work / "rootfs"
        _run(["debootstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}", SUITE, str(root), MIRROR], out)
        for part in TRIM:
            for child in (root / part).glob("*"):
                shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
        tar = subprocess.Popen(["tar", "-C", str(root), "--numeric-owner", "-c", "."], stdout=subprocess.PIPE)
        _run(["podman", "import", "-", tag], out, stdin=tar.stdout)
        if tar.wait() != 0:
            raise RuntimeError(f"tar of {root} failed")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out.write(f"made {tag} in {time.monotonic() - started:.0f} s\n")


def _forget_older(kept: str, out) -> None:
    """Other checkouts' images of dbio built over an hour ago (a test that built one since may be about to run
    it): removed, unless a container uses one (podman refuses). Their dependencies' layers stay, shared."""
    listed = subprocess.run(["podman", "images", "--filter", "until=1h", "--filter", f"reference={IMAGE}",
                             "--format", "{{.Repository}}:{{.Tag}}"], capture_output=True, text=True).stdout.split()
    for tag in listed:
        if tag != kept:
            subprocess.run(["podman", "rmi", tag], stdout=out, stderr=subprocess.STDOUT)


@contextmanager
def _locked() -> Iterator[None]:
    CACHE.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = CACHE.lstat()  # as root, trust only a directory no one else can write
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != 0 or st.st_mode & 0o022:
        raise RuntimeError(f"{CACHE} is not a directory only root can write")
    with (CACHE / "image.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _run(argv: list[str], out, **kw) -> None:
    out.write(f"$ {' '.join(argv)}\n")
    out.flush()
    done = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, timeout=BUILD_TIMEOUT, **kw)
    if done.returncode != 0:
        raise RuntimeError(f"{argv[0]} {argv[1]} failed ({done.returncode}); see {out.name}")
