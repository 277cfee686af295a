"""--event throttle on cgroup v2 (jobs/blkio_throttle.py): the io controller's io.max ("MAJ:MIN riops=N", lifted with
riops=max) where the machine has no v1 blkio, on a hierarchy made of files as the v1 guard's tests make theirs: the
controller found, the limit made and lifted, the processes moved and moved back, the guard undoing it all should
dbio die; neither controller refused in one line."""

from __future__ import annotations

import os

import pytest

from dbio.errors import UsageError
from dbio.jobs import blkio_throttle as bt
from dbio.jobs import disruption_actions


def _unified(tmp_path):
    """A cgroup v2 hierarchy as files, with the io controller, two cgroups processes come from, and /proc."""
    root = tmp_path / "cgroup"
    for origin in ("system.slice/db.service", "user.slice"):
        (root / origin).mkdir(parents=True)
        (root / origin / "cgroup.procs").write_text("")
    (root / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (root / "cgroup.subtree_control").write_text("cpu memory\n")
    proc = tmp_path / "proc"
    for pid, where in ((101, "/system.slice/db.service"), (102, "/user.slice")):
        (proc / str(pid)).mkdir(parents=True)
        (proc / str(pid) / "cgroup").write_text(f"0::{where}\n")
    return root, proc


def test_v2_is_used_where_there_is_no_v1_blkio(tmp_path):
    root, _ = _unified(tmp_path)
    found = bt.controller(tmp_path / "no-blkio", root)
    assert (found.version, found.root, found.limit_file) == (2, root, "io.max")
    assert found.limit("8:0", 500) == "8:0 riops=500\n" and found.lift("8:0") == "8:0 riops=max\n"
    (tmp_path / "blkio").mkdir()
    (tmp_path / "blkio" / bt.LIMIT_FILE).write_text("")
    assert bt.controller(tmp_path / "blkio", root).version == 1  # v1's blkio as today where it is mounted
    (root / "cgroup.controllers").write_text("cpu memory\n")
    assert bt.controller(tmp_path / "no-blkio", root) is None


@pytest.mark.skipif(os.geteuid() != 0, reason="check() refuses a throttle without root first")
def test_neither_controller_is_refused_in_one_line(tmp_path):
    (tmp_path / "cgroup").mkdir()
    (tmp_path / "cgroup" / "cgroup.controllers").write_text("cpu memory\n")
    with pytest.raises(UsageError, match="neither cgroup v1's blkio controller .* nor cgroup v2's io controller"):
        bt.check(["vda"], root=tmp_path / "no-blkio", unified=tmp_path / "cgroup")


def test_the_v2_limit_is_made_and_lifted(tmp_path):
    root, proc = _unified(tmp_path)
    limit = bt.Throttle("dbio-event-1-1", ["253:0", "8:0"], 200, root=root, version=2, proc=proc)
    assert limit.apply([101, 102, 999]) == 2  # 999 is gone: nothing of it to limit
    assert (root / "cgroup.subtree_control").read_text() == "+io\n"  # the root gives its children io
    assert (limit.place / "io.max").read_text() == "8:0 riops=200\n"  # each disk's written in turn: the last
    assert (limit.place / "cgroup.procs").read_text() == "102\n"  # (a file here; the kernel's moves each one)
    assert limit.moved == {101: "/system.slice/db.service", 102: "/user.slice"}
    problems = limit.remove()
    assert (limit.place / "io.max").read_text() == "8:0 riops=max\n"
    assert (root / "system.slice/db.service/cgroup.procs").read_text() == "101\n"
    assert (root / "user.slice/cgroup.procs").read_text() == "102\n"
    assert limit.moved == {}
    # a directory of files is not the kernel's cgroup, which is removed with its interface files in it
    assert problems == [f"{limit.place} could not be removed: Directory not empty"]


def test_the_v2_guard_undoes_it_when_dbio_is_gone(tmp_path):
    root, proc = _unified(tmp_path)
    limit = bt.Throttle("dbio-event-1-2", ["8:0"], 300, root=root, version=2, proc=proc)
    limit.apply([101, 102])
    (limit.place / "cgroup.procs").write_text("101\n102\n")  # both inside dbio's cgroup, as the kernel shows it
    guard = disruption_actions._guard("throttle", 60.0, limit.undo_plan())
    disruption_actions._tell(guard, limit.moved_from())
    guard.stdin.close()  # what dbio's death does to the guard's stdin
    assert guard.wait(timeout=30) == 0
    assert (limit.place / "io.max").read_text() == "8:0 riops=max\n"
    assert (root / "system.slice/db.service/cgroup.procs").read_text() == "101\n"
    assert (root / "user.slice/cgroup.procs").read_text() == "102\n"
    assert limit.undo_plan()["lift"] == ["8:0 riops=max\n"]
