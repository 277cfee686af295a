"""--event AT=ACTION: each action parsed, every bad one refused in one line before anything runs (dbio/disruption.py,
config_checks.event_errors)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from dbio import disruption
from tests import forked_dbio


def dbio(*args: str, cwd) -> subprocess.CompletedProcess:
    return forked_dbio.completed(list(args), cwd=cwd, timeout=60)


@pytest.mark.parametrize("text, at, action, seconds, iops, path", [
    ("10s=stall:3s", 10.0, "stall", 3.0, None, None),
    ("1m30s=stall:500ms", 90.0, "stall", 0.5, None, None),
    ("10=throttle:500:10s", 10.0, "throttle", 10.0, 500, None),
    ("5s=checkpoint", 5.0, "checkpoint", None, None, None),
    ("20s=exec:/opt/migrate vm1", 20.0, "exec", None, None, "/opt/migrate vm1"),
    ("20s=exec:/x:y", 20.0, "exec", None, None, "/x:y"),
    ("5s=vacuum", 5.0, "vacuum", None, None, None),
    ("5s=stall:3s@standby1", 5.0, "stall", 3.0, None, None),
    ("5s=throttle:500:4s@node2", 5.0, "throttle", 4.0, 500, None),
    ("5s=INDEX", 5.0, "index", None, None, None),
    ("5s=backup:/srv/b k", 5.0, "backup", None, None, "/srv/b k"),
])
def test_each_action_parsed(text, at, action, seconds, iops, path):
    event = disruption.parse(text)
    assert (event.at, event.action, event.seconds, event.iops, event.path) == (at, action, seconds, iops, path)
    assert event.text == text


@pytest.mark.parametrize("text, says", [
    ("stall:3s", "is not AT=ACTION"),
    ("10s=", "is not AT=ACTION"),
    ("soon=stall:3s", "its offset AT soon is not a duration"),
    ("10s=stall", "gives no DURATION"),
    ("10s=stall:0s", "must be more than 0"),
    ("10s=throttle:many:3s", "IOPS many is not a whole number"),
    ("10s=throttle:0:3s", "is not between 1 and"),
    ("10s=throttle:100", "gives no DURATION"),
    ("10s=checkpoint:now", "checkpoint takes no argument"),
    ("10s=exec:", "names no program"),
    ("10s=vacuum:full", "vacuum takes no argument"),
    ("10s=stall:3s@", r"stall.s node \(none\) is not a node.s name"),
    ("10s=stall:3s@a/b", "stall's node a/b is not a node's name"),
    ("10s=stall:@n1", "gives no DURATION"),
    ("10s=index:x", "index takes no argument"),
    ("10s=backup", "backup: names no destination"),
    ("10s=backup: ", "backup: names no destination"),
    ("10s=reboot", "reboot is not an action"),
])
def test_a_bad_event_says_what_is_wrong(text, says):
    with pytest.raises(ValueError, match=says):
        disruption.parse(text)


def test_events_together_fit_the_window():
    events = tuple(disruption.parse(t) for t in ("10s=stall:3s", "12s=checkpoint", "29s=stall:3s", "40s=checkpoint"))
    found = disruption.problems(events, 30.0)
    assert found == ["29s=stall:3s ends after the window's end (30 s)",
                     "40s=checkpoint starts at or after the window's end (30 s)",
                     "12s=checkpoint begins before 10s=stall:3s ends: their dips could not be told apart"]
    assert disruption.problems(events[:1] + events[2:3], 0) == []  # a window bounded by work_loop: no end known


def test_a_stall_names_its_node():
    event = disruption.parse("5s=stall:3s@standby1")
    assert event.node == "standby1" and event.describe() == "stall of standby1 3 s"
    assert disruption.parse("5s=stall:3s").node is None
    throttle = disruption.parse("5s=throttle:500:4s@node2")
    assert throttle.node == "node2" and throttle.describe() == "throttle of node2 to 500 reads/s for 4 s"
    with pytest.raises(ValueError, match="throttle's node a b is not a node's name"):
        disruption.parse("5s=throttle:500:4s@a b")


def test_two_backups_to_one_destination_are_refused():
    events = tuple(disruption.parse(t) for t in ("5s=backup:/srv/b", "15s=backup:/srv/b", "25s=backup:/srv/c"))
    assert disruption.problems(events, 30.0) == ["two backups to /srv/b: the second would find it not empty"]
    assert disruption.parse("5s=backup:/srv/b").describe() == "backup to /srv/b"


@pytest.mark.parametrize("args, says", [
    (["--event", "10s=stall"], "--event = 10s=stall: gives no DURATION (stall:DURATION)"),
    (["--event", "31s=checkpoint"], "31s=checkpoint starts at or after the window's end"),
    (["--event", "5s=stall:2s", "--event", "6s=checkpoint"], "6s=checkpoint begins before 5s=stall:2s ends"),
])
def test_the_run_refuses_a_bad_event_in_one_line_before_anything(tmp_path, args, says):
    results = tmp_path / "results"
    out = dbio("run", "--dsn", f"host={tmp_path}/nowhere", "--run-time", "30s", "--results-dir", str(results), *args,
               cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    assert says in out.stderr
    assert len([line for line in out.stderr.splitlines() if line.strip()]) == 1
    assert not results.exists()


def test_a_list_in_dbio_toml(tmp_path):
    (tmp_path / "dbio.toml").write_text('[run]\nevent = ["10s=stall:3s", "20s=stall"]\n')
    out = dbio("run", "--config", str(tmp_path / "dbio.toml"), "--dsn", f"host={tmp_path}/nowhere", "--run-time",
               "30s", cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip().splitlines() == [
        "dbio: dbio.toml: run.event = 20s=stall: gives no DURATION (stall:DURATION); give AT=ACTION, e.g. "
        "10s=stall:3s, 10s=throttle:500:10s, 5s=checkpoint, 5s=vacuum, 5s=index, 5s=backup:/path/to/empty-dir or "
        "20s=exec:/path/to/program"]


def test_a_sweep_varies_the_event_one_a_step():
    from dbio.errors import UsageError
    from dbio.sweep import plan

    vary = plan.parse_vary("event=10s=stall:1s,10s=stall:3s,10s=throttle:500:5s")
    assert vary.values == ("10s=stall:1s", "10s=stall:3s", "10s=throttle:500:5s") and not vary.restarts
    assert [plan.step_name(i + 1, {"event": v}) for i, v in enumerate(vary.values)] == [
        "01-ev10sstall1s", "02-ev10sstall3s", "03-ev10sthrottle5005s"]
    with pytest.raises(UsageError, match="10s=stall: gives no DURATION"):
        plan.parse_vary("event=10s=stall:1s,10s=stall")


def _guard_world(tmp_path):
    """A blkio hierarchy as files: dbio's cgroup (its limit and its processes) and the two it moved them from."""
    from dbio.jobs import blkio_throttle

    root = tmp_path / "blkio"
    for origin in ("system.slice/db.service", "user.slice"):
        (root / origin).mkdir(parents=True)
        (root / origin / "cgroup.procs").write_text("")
    limit = blkio_throttle.Throttle("dbio-event-1-1", ["253:0", "8:0"], 200, root=root)
    limit.place.mkdir()
    (limit.place / blkio_throttle.LIMIT_FILE).write_text("")
    limit.moved = {101: "/system.slice/db.service", 102: "/user.slice", 103: "/user.slice"}
    (limit.place / "cgroup.procs").write_text("101\n102\n")  # 103 left dbio's cgroup since (ended, its pid reused)
    return root, limit


def _throttle_guard(limit, seconds):
    from dbio.jobs import disruption_actions

    guard = disruption_actions._guard("throttle", seconds, limit.undo_plan())
    disruption_actions._tell(guard, limit.moved_from())
    return guard


def test_the_throttle_guard_undoes_at_once_when_dbio_is_gone(tmp_path):
    from dbio.jobs import blkio_throttle

    root, limit = _guard_world(tmp_path)
    guard = _throttle_guard(limit, 60.0)
    guard.stdin.close()  # what dbio's death does to the guard's stdin
    assert guard.wait(timeout=30) == 0  # long before its 60 s
    assert (limit.place / blkio_throttle.LIMIT_FILE).read_text() == "8:0 0\n"  # each disk's written in turn: the last
    assert (root / "system.slice/db.service/cgroup.procs").read_text() == "101\n"
    assert (root / "user.slice/cgroup.procs").read_text() == "102\n"  # 103 is not in dbio's cgroup: left alone


def test_the_throttle_guard_undoes_after_its_seconds_should_dbio_hang(tmp_path):
    from dbio.jobs import blkio_throttle

    root, limit = _guard_world(tmp_path)
    guard = _throttle_guard(limit, 0.5)
    assert guard.wait(timeout=30) == 0
    assert guard.stdin is not None and not guard.stdin.closed  # dbio still there: its time ran out
    assert (limit.place / blkio_throttle.LIMIT_FILE).read_text() == "8:0 0\n"
    assert (root / "system.slice/db.service/cgroup.procs").read_text() == "101\n"


def test_a_throttle_guard_told_nothing_yet_still_lifts_the_limit(tmp_path):
    from dbio.jobs import blkio_throttle, disruption_actions

    root, limit = _guard_world(tmp_path)
    guard = disruption_actions._guard("throttle", 60.0, limit.undo_plan())
    guard.stdin.close()  # dbio died between making the cgroup and saying what it moved
    assert guard.wait(timeout=30) == 0
    assert (limit.place / blkio_throttle.LIMIT_FILE).read_text() == "8:0 0\n"
    assert (root / "user.slice/cgroup.procs").read_text() == ""  # where they came from is not known: not guessed


def test_a_guard_waits_while_dbio_lives_and_is_ended_when_dbio_undid_the_action(tmp_path):
    from dbio.jobs import blkio_throttle, disruption_actions

    root, limit = _guard_world(tmp_path)
    guard = _throttle_guard(limit, 30.0)
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            guard.wait(timeout=1.0)
        assert (limit.place / blkio_throttle.LIMIT_FILE).read_text() == ""  # nothing undone before its time
    finally:
        disruption_actions._end(guard)
    assert guard.returncode is not None


def test_a_stall_guard_continues_its_processes_when_dbio_is_gone():
    import signal
    import time

    from dbio.jobs import disruption_actions

    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        sleeper.send_signal(signal.SIGSTOP)
        guard = disruption_actions._guard("stall", 60.0, {"pids": [sleeper.pid]})
        guard.stdin.close()
        assert guard.wait(timeout=30) == 0
        deadline = time.monotonic() + 10
        state = "T"
        while state == "T" and time.monotonic() < deadline:
            state = open(f"/proc/{sleeper.pid}/stat").read().rsplit(")", 1)[1].split()[0]
            time.sleep(0.05)
        assert state != "T"
    finally:
        sleeper.kill()
        sleeper.wait()


def test_an_event_names_the_part_that_runs_it():
    event = disruption.parse("10s@part2=stall:3s")
    assert (event.at, event.action, event.seconds, event.part) == (10.0, "stall", 3.0, 2)
    assert disruption.parse("10s=checkpoint").part is None
    with pytest.raises(ValueError, match="host2 after AT@ is not a part"):
        disruption.parse("10s@host2=checkpoint")
    with pytest.raises(ValueError, match="part0 after AT@ is not a part"):
        disruption.parse("10s@part0=checkpoint")


def test_each_event_runs_on_one_part_only():
    # the same dbio.toml on every host: an event that names no part is part 1's, one naming part K is K's alone
    events = tuple(disruption.parse(t) for t in ("5s=checkpoint", "10s@part2=stall:1s", "20s@part1=vacuum"))
    ran = {i: [e.text for e in disruption.of_part(events, (i, 3))] for i in (1, 2, 3)}
    assert ran == {1: ["5s=checkpoint", "20s@part1=vacuum"], 2: ["10s@part2=stall:1s"], 3: []}
    assert disruption.of_part(events, None) == events  # a whole run runs every one
    assert disruption.part_problems(events, (1, 3)) == []
    assert disruption.part_problems(events, None) == [
        "10s@part2=stall:1s names part 2, but this run is not in parts (--part i/N)",
        "20s@part1=vacuum names part 1, but this run is not in parts (--part i/N)"]
    assert disruption.part_problems(events[1:2], (1, 2)) == []
    assert disruption.part_problems((disruption.parse("1s@part3=checkpoint"),), (1, 2)) == [
        "1s@part3=checkpoint names part 3, but the run has 2 parts"]


def test_a_run_not_in_parts_refuses_an_event_naming_a_part(tmp_path):
    results = tmp_path / "results"
    out = dbio("run", "--dsn", f"host={tmp_path}/nowhere", "--run-time", "30s", "--results-dir", str(results),
               "--event", "10s@part2=checkpoint", cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    assert "10s@part2=checkpoint names part 2, but this run is not in parts" in out.stderr
    assert len([line for line in out.stderr.splitlines() if line.strip()]) == 1
    assert not results.exists()


@pytest.mark.parametrize("args, says", [
    (["--vary", "event=5s=backup:{d}/b", "--vary", "work_unit=8,16"],
     "--event 5s=backup:{d}/b: step 1 and step 2 would back up into {d}/b, and the second would find it not empty"),
    (["--vary", "event=5s=checkpoint,5s=backup:{d}/b", "--repeat", "2"],
     "--event 5s=backup:{d}/b: each of its repeated steps would back up into {d}/b"),
    (["--vary", "event=5s=checkpoint,5s=backup:{d}/file"], "--event 5s=backup:{d}/file: the destination {d}/file is a "
     "file"),
])
def test_a_sweep_refuses_a_bad_event_of_any_step_before_its_first(tmp_path, args, says):
    (tmp_path / "file").write_text("not a directory")
    results = tmp_path / "results"
    out = dbio("sweep", "--data-dir", str(tmp_path / "inst"), "--results-dir", str(results), "--run-time", "30s",
               *[a.format(d=tmp_path) for a in args], cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    assert says.format(d=tmp_path) in out.stderr
    assert len([line for line in out.stderr.splitlines() if line.strip()]) == 1
    assert not results.exists()


def test_a_part_says_which_events_it_leaves_to_another(tmp_path):
    from datetime import datetime, timedelta, timezone

    from dbio.config import Sources, load_config
    from dbio.jobs import disruptions

    start = (datetime.now(timezone.utc) + timedelta(days=1)).isoformat()

    def config(part):
        return load_config(Sources(cli={"run_time": "30s", "event": ["5s=checkpoint", "10s@part2=stall:1s"],
                                        "dsn": "host=/nowhere dbname=x", "part": part, "start_at": start},
                                   cwd=tmp_path, discover=False))

    assert disruptions.left_to_other_parts(config("2/3")) == [
        "--event 5s=checkpoint: run by part 1 of 3, not by this part (2): a run in parts runs each event once "
        "(AT@partK=ACTION gives it to part K)"]
    assert disruptions.left_to_other_parts(config("3/3")) == [
        "--event 5s=checkpoint: run by part 1 of 3, not by this part (3): a run in parts runs each event once "
        "(AT@partK=ACTION gives it to part K)",
        "--event 10s@part2=stall:1s: run by part 2 of 3, not by this part (3): a run in parts runs each event once "
        "(AT@partK=ACTION gives it to part K)"]
