"""--event AT=throttle:IOPS:DURATION's means: the server's reads on its data device limited to IOPS a second by the
cgroup v1 blkio controller (blkio.throttle.read_iops_device), the kernel's own limit, so that the disruption has
a known depth. The processes that read for the sessions (their server processes, the server's I/O workers) are
moved into a cgroup of dbio's own for the event's length and back into the cgroups they came from after it,
also when the run is interrupted; the cgroup is removed then. Root only; refused in one line before the run
where the machine has no such controller (check)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from dbio.errors import UsageError

BLKIO = Path("/sys/fs/cgroup/blkio")  # cgroup v1's blkio hierarchy
LIMIT_FILE = "blkio.throttle.read_iops_device"
SYS_BLOCK = Path("/sys/class/block")


def check(devices: list[str], *, root: Path = BLKIO, sys_block: Path = SYS_BLOCK) -> list[str]:
    """The whole disks ("MAJ:MIN") under the data directory's devices, or one line saying why a throttle cannot
    be: not root, no blkio controller, no block device known for the data directory."""
    if os.geteuid() != 0:
        raise UsageError("--event throttle: limiting the server's reads takes root (the blkio cgroup controller)",
                         "run dbio as root, or give another event")
    if not (root / LIMIT_FILE).is_file():
        raise UsageError(f"--event throttle: this machine has no cgroup v1 blkio controller ({root / LIMIT_FILE} "
                         "is not there)", "mount the blkio controller, or give another event")
    disks = sorted({d for name in devices if (d := whole_disk(name, sys_block))})
    if not disks:
        raise UsageError("--event throttle: the data directory is on no block device dbio can find on this host",
                         "run the server's data directory on a local disk, or give another event")
    return disks


def whole_disk(name: str, sys_block: Path = SYS_BLOCK) -> str | None:
    """The MAJ:MIN of the disk a block device is (or is a partition of): the throttle's rule is per disk."""
    place = sys_block / name
    try:
        if (place / "partition").exists():
            place = place.resolve().parent
        return (place / "dev").read_text().strip() or None
    except OSError:
        return None


def blkio_cgroup(pid: int) -> str | None:
    """The process's cgroup in the blkio hierarchy ("/" or "/system.slice/x.service"), None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/cgroup").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        _, controllers, path = line.split(":", 2)
        if "blkio" in controllers.split(","):
            return path
    return None


@dataclass
class Throttle:
    """One event's limit: made (apply), then taken away (remove), whatever happened between."""

    name: str  # the cgroup's, under root: one of dbio's own (dbio-event-RUN-N)
    disks: list[str]
    iops: int
    root: Path = BLKIO
    moved: dict[int, str] = field(default_factory=dict)  # pid -> the cgroup it came from

    @property
    def place(self) -> Path:
        return self.root / self.name

    def apply(self, pids: list[int]) -> int:
        """The cgroup made with its limit on every disk, and each process moved into it: how many were."""
        self.place.mkdir(mode=0o755)
        for disk in self.disks:
            (self.place / LIMIT_FILE).write_text(f"{disk} {self.iops}\n")
        for pid in pids:
            came_from = blkio_cgroup(pid)
            if came_from is None:
                continue  # gone since the run began: nothing of it to limit
            try:
                (self.place / "cgroup.procs").write_text(f"{pid}\n")
            except ProcessLookupError:
                continue
            self.moved[pid] = came_from
        return len(self.moved)

    def undo_plan(self) -> dict[str, object]:
        """What a guard needs to lift the limit should dbio be killed first (disruption_actions.GUARD)."""
        return {"root": str(self.root), "place": str(self.place), "limit_file": LIMIT_FILE, "disks": self.disks}

    def moved_from(self) -> dict[str, str]:
        """pid -> the cgroup it came from: what a guard needs to move the processes back."""
        return {str(pid): came_from for pid, came_from in self.moved.items()}

    def remove(self) -> list[str]:
        """Each process back where it came from, the cgroup removed: what could not be done (empty: all)."""
        problems = []
        for disk in self.disks if self.place.is_dir() else ():  # first the limit lifted: 0 is none
            try:
                (self.place / LIMIT_FILE).write_text(f"{disk} 0\n")
            except OSError as exc:
                problems.append(f"the limit on {disk} could not be lifted: {exc.strerror or exc}")
        for pid, came_from in list(self.moved.items()):
            try:
                (self.root / came_from.lstrip("/") / "cgroup.procs").write_text(f"{pid}\n")
            except ProcessLookupError:
                pass  # it ended meanwhile
            except OSError as exc:
                problems.append(f"process {pid} could not go back to {came_from}: {exc.strerror or exc}")
                continue
            del self.moved[pid]
        if self.place.is_dir():
            try:
                self.place.rmdir()
            except OSError as exc:
                problems.append(f"{self.place} could not be removed: {exc.strerror or exc}")
        return problems
