"""--event on the mysql engine's managed instance (the machine's mariadbd): a program of the user's runs in the window
and its dip is measured as on PostgreSQL; a stall stops the whole server process (its sessions are its threads) and
says so; a checkpoint, which the engine does not time, is refused in one line before anything is made. Skipped
where the machine has no MariaDB/MySQL server binaries."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dbio.stats import disruptions

from tests.integration.conftest import _base_dir, dbio, load_result, result_dir
from tests.integration.test_mysql_instance import SMALL, Managed, _binaries_or_skip

WINDOW = ["--scale", "32MiB", "--scan-table-size", "8MiB", "--warmup", "1s", "--run-time", "12s"]  # and --allow-cached

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def loaded():
    _binaries_or_skip()
    root = _base_dir()
    inst = Managed(root, "events")
    done = dbio("instance", "init", *inst.here("--innodb-page-size", "8k", "--buffer-pool", "8MiB"))
    assert done.code == 0, done.text
    try:
        done = dbio("setup", *inst.args(*SMALL))
        assert done.code == 0, done.text
        yield inst
    finally:
        dbio("instance", "destroy", "--yes", *inst.here())
        shutil.rmtree(root, ignore_errors=True)


def test_exec_in_a_mariadb_run(loaded):
    program = loaded.data_dir.parent / "event-program.sh"
    program.write_text("#!/bin/sh\nsleep 1\necho done\n")
    program.chmod(0o755)
    done = dbio("run", *loaded.args(*WINDOW, "--allow-cached", "--event", f"4s=exec:{program}"), timeout=180)
    assert done.code == 0, done.text
    result = load_result(result_dir(done))
    [record] = result["disruptions"]
    assert record["outcome"] == "done" and record["exit_status"] == 0
    [dip] = result["figures"]["disruptions"]
    assert dip["before"] is not None and dip["before_reads_per_s"] is not None


def test_a_stall_stops_the_whole_mariadb_server_and_continues_it(loaded):
    window = [*WINDOW[:-1], "16s"]  # MariaDB's counters publish less often: a longer steady state before it
    done = dbio("run", *loaded.args(*window, "--allow-cached", "-t", "2", "--event", "10s=stall:2s"), timeout=180)
    assert done.code == 0, done.text
    result = load_result(result_dir(done))
    [record] = result["disruptions"]
    assert record["outcome"] == "done" and record["processes"] == 1 and record["whole_server_process"] is True
    pid = int((loaded.data_dir / "socket" / "mysqld.pid").read_text().split()[0])
    state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    assert state != "T"  # continued
    [dip] = result["figures"]["disruptions"]
    assert dip["before"] is not None, dip  # its steady state before
    # the whole server stopped, its samples too: what the series could see of it is measured or said to be absent
    assert dip.get("floor_pct") is not None or dip["absent"] in (disruptions.DURING_GAP, disruptions.NO_STRETCH)

@pytest.mark.parametrize("action", ["checkpoint", "vacuum", "index", "backup:"])
def test_an_operation_mariadb_does_not_time_is_refused_before_anything(loaded, action):
    target = loaded.results.parent / "event-backup-never-made"  # a destination ops backup would take
    action += str(target) if action == "backup:" else ""
    before = set(loaded.results.glob("*")) if loaded.results.exists() else set()
    done = dbio("run", *loaded.args(*WINDOW, "--allow-cached", "--event", f"4s={action}"))
    assert done.code == 2, done.text
    kind = action.split(":")[0]
    says = f"--event {kind}: the mysql engine of node1 has no timed {kind}"
    assert says in done.err and len(done.err.strip().splitlines()) == 1
    assert (set(loaded.results.glob("*")) if loaded.results.exists() else set()) == before
    assert not target.exists()
