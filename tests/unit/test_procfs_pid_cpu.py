"""CPU time of processes and threads from /proc, with each id's stat file found once (real /proc), and an id
another task took since refused (recorded /proc samples, tests/fixtures/proc_tasks.json, and a real reuse)."""

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from dbio.collect import procfs

RECORDED = json.loads((Path(__file__).parent.parent / "fixtures" / "proc_tasks.json").read_text())


def burn(seconds):
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


@contextmanager
def parked_thread(work=lambda: None):
    """A thread of this process that does `work`, then waits for the block's end: its native id."""
    ready, done = threading.Event(), threading.Event()

    def worker():
        work()
        ready.set()
        done.wait(10)

    thread = threading.Thread(target=worker)
    thread.start()
    ready.wait(10)
    try:
        yield thread.native_id
    finally:
        done.set()
        thread.join()


def test_a_process_and_a_thread_are_read_and_their_stat_files_kept():
    with parked_thread() as tid:
        tasks: dict = {}
        first = procfs.read_pid_cpu([os.getpid(), tid], tasks)
        assert set(first) == {os.getpid(), tid}
        assert tasks[os.getpid()].stat == Path(f"/proc/{os.getpid()}/stat")
        assert tasks[tid].stat == Path(f"/proc/{os.getpid()}/task/{tid}/stat")  # the thread's own, not its process's
        assert tasks[tid].started == procfs.parse_start_time(tasks[tid].stat.read_text())
        sum(range(2_000_000))  # this process uses CPU between two readings
        second = procfs.read_pid_cpu([os.getpid(), tid], tasks)
        assert second[os.getpid()] >= first[os.getpid()]
        assert procfs.read_pid_cpu([os.getpid()]).keys() == {os.getpid()}  # without a cache, as before


def test_a_server_threads_cpu_is_its_own_not_its_processes():
    """A MySQL session is a thread of the server: /proc/<tid>/stat would give the whole process's CPU."""
    burn(0.6)  # the main thread's CPU, which the other thread's figure must not include
    with parked_thread(lambda: burn(0.2)) as tid:
        cpu = procfs.read_pid_cpu([tid, os.getpid()])
    assert 0.1 <= cpu[tid] < 0.5
    assert cpu[os.getpid()] >= cpu[tid] + 0.5


def test_a_process_that_ended_is_left_out():
    tasks: dict = {}
    assert procfs.read_pid_cpu([2 ** 22 + 12345], tasks) == {}  # above any pid_max: no such process
    assert tasks[2 ** 22 + 12345].started is None  # kept as ended: a later process with its id is not it


def test_the_start_time_is_stat_s_field_22_whatever_the_command_s_name():
    assert procfs.parse_start_time(RECORDED["mariadb"]["first"]["stat"]) == 294855
    assert procfs.parse_start_time(RECORDED["process_reuse"]["later"]["stat"]) == 310790
    line = ("4321 (postgres: dbio dbio [local] SELECT) S 4300 4300 4300 0 -1 4194560 1520 0 0 0 "
            "250 130 40 20 20 0 1 0 52101 229732352 3585 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1")
    assert procfs.parse_start_time(line) == 52101  # a name with spaces and brackets: fields count after its ')'


def _proc_files(directory, reading, as_id=None):
    """A recorded stat and schedstat where a task's /proc directory holds them (the id rewritten: another
    task recorded under its own id stands for one the kernel gave this id)."""
    stat = reading["stat"]
    if as_id is not None:
        stat = f"{as_id} {stat.split(' ', 1)[1]}"
    (directory / "stat").write_text(stat + "\n")
    (directory / "schedstat").write_text(reading["schedstat"] + "\n")
    return directory / "stat"


@pytest.mark.parametrize("recorded, first, same_later, other", [
    ("mariadb", "first", "first_later", "second"),  # a session's server thread (MySQL/MariaDB)
    ("process_reuse", "first", None, "later"),  # a session's process (a PostgreSQL backend), its id taken again
])
def test_an_id_another_task_took_since_the_first_reading_is_refused(tmp_path, recorded, first, same_later, other):
    """The window's begin reading keeps the task's start time; at its end, a stat with another start time
    is another task's under the same id: that id's figure is absent, never the other task's counters."""
    sample = RECORDED[recorded]
    tid = int(sample[first]["stat"].split()[0])
    stat = _proc_files(tmp_path, sample[first])
    tasks = {tid: procfs.Task(stat, procfs.parse_start_time(sample[first]["stat"]))}  # as the first reading found it
    begin_cpu, begin_wait = procfs.read_pid_cpu([tid], tasks), procfs.read_pid_run_delay([tid], tasks)
    assert begin_cpu[tid] == pytest.approx(sum(procfs.parse_pid_stat(sample[first]["stat"])))
    assert begin_wait[tid] == pytest.approx(procfs.parse_schedstat(sample[first]["schedstat"]))
    if same_later:  # the same thread at the window's end: read, with the CPU it used meanwhile
        _proc_files(tmp_path, sample[same_later])
        assert procfs.read_pid_cpu([tid], tasks)[tid] > begin_cpu[tid]
        assert procfs.read_pid_run_delay([tid], tasks)[tid] >= begin_wait[tid]
    _proc_files(tmp_path, sample[other], as_id=tid)
    assert procfs.read_pid_cpu([tid], tasks) == {}
    assert procfs.read_pid_run_delay([tid], tasks) == {}
    assert procfs.read_pid_cpu([tid], {tid: procfs.Task(stat, procfs.parse_start_time(sample[other]["stat"]))})


def test_a_task_that_replaced_the_first_between_its_schedstat_and_its_stat_is_refused(tmp_path):
    """The wait is read first and the start time checked after it: a schedstat read from a task that took the
    id before it was read shows another start time in the stat read after it."""
    sample = RECORDED["process_reuse"]
    stat = _proc_files(tmp_path, sample["later"])  # schedstat and stat both the later process's
    task = procfs.Task(stat, procfs.parse_start_time(sample["first"]["stat"]))
    assert procfs.read_pid_run_delay([2], {2: task}) == {}


REUSE = """
import json, os, time
from pathlib import Path
from dbio.run.monitor import Monitor

def sleeper():
    pid = os.fork()
    if pid == 0:
        os.execv("/bin/sleep", ["sleep", "30"])
    return pid

first = sleeper()
time.sleep(0.1)
monitor = Monitor([], True, [first], [], set())
begin = monitor.os_reading(per_process=True)
os.kill(first, 9)
os.waitpid(first, 0)
time.sleep(0.05)  # a later clock tick: start times are counted in ticks
Path("/proc/sys/kernel/ns_last_pid").write_text(str(first - 1))  # the next process takes the ended one's id
second = sleeper()
time.sleep(0.1)
end = monitor.os_reading(per_process=True)
again = Monitor([], True, [second], [], set()).os_reading(per_process=True)  # read afresh, the id is readable
for pid in (second,):
    os.kill(pid, 9)
    os.waitpid(pid, 0)
print(json.dumps({"first": first, "second": second, "begin": begin, "end": end, "again": again}))
"""


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"), reason="needs root and unshare(1)")
def test_a_session_process_whose_id_another_process_took_has_no_end_reading():
    """A real reuse, in a pid namespace of its own (its ns_last_pid set, as CRIU does): a session's process ends
    and another takes its id before the window's end reading; that reading leaves the id out."""
    done = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-c", REUSE],
                          capture_output=True, text=True, timeout=60)
    if done.returncode != 0 and "Operation not permitted" in done.stderr:
        pytest.skip(f"no pid namespace here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    pid = str(seen["first"])
    assert seen["second"] == seen["first"]  # the same id, another process
    assert pid in seen["begin"]["session_cpu"] and pid in seen["begin"]["session_run_delay"]
    assert seen["end"]["session_cpu"] == {} and "session_run_delay" not in seen["end"]
    assert seen["end"]["session_cpu_total"] == 0
    assert pid in seen["again"]["session_cpu"]  # refused for being another task, not for being unreadable


def test_run_delay_is_parsed_from_schedstat():
    assert procfs.parse_schedstat("106278 84319 2\n") == pytest.approx(84319e-9)
    with pytest.raises(ValueError):  # a kernel that keeps no scheduler statistics: not a wait of 0
        procfs.parse_schedstat("0 0 0\n")


def test_processes_sharing_one_cpu_wait_for_it_and_a_sleeper_does_not():
    """Two processes that each need 0.3 s of CPU on one CPU: each waits for the other's turn."""
    children = []
    for _ in range(2):
        pid = os.fork()
        if pid == 0:  # pinned to one CPU, burns, leaves without running the parent's cleanup
            os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
            burn(0.3)
            os._exit(0)
        children.append(pid)
    sleeper = os.fork()
    if sleeper == 0:
        time.sleep(0.8)
        os._exit(0)
    time.sleep(0.4)
    waited = procfs.read_pid_run_delay([*children, sleeper])
    for pid in (*children, sleeper):
        os.waitpid(pid, 0)
    assert set(waited) == {*children, sleeper}
    assert all(waited[pid] >= 0.1 for pid in children), waited
    # the sleeper ran twice (started, woken): on a loaded host those turns wait too (0.58 s at a load of 20 on
    # 2 CPUs, beside the burners' 0.50-0.57 s), but less than the two burners queued behind each other
    assert waited[sleeper] < sum(waited[pid] for pid in children), waited


def test_a_process_tree_s_fields_are_parsed():
    line = ("4321 (postgres: dbio dbio [local] SELECT) S 4300 4300 4300 0 -1 4194560 1520 0 0 0 "
            "250 130 40 20 20 0 1 0 52101 229732352 3585 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1")
    parent, own, reaped = procfs.parse_tree_stat(line)
    assert parent == 4300
    assert own == pytest.approx(380 / procfs.CLK_TCK) and reaped == pytest.approx(60 / procfs.CLK_TCK)


def test_a_server_is_the_process_of_a_session_thread_or_the_parent_of_a_session_process():
    child = os.fork()
    if child == 0:
        time.sleep(0.5)
        os._exit(0)
    try:
        with parked_thread() as tid:
            assert procfs.server_roots([tid]) == [os.getpid()]  # a thread of this process: this process
            assert procfs.server_roots([child]) == [os.getpid()]  # a process of its own: its parent
            assert procfs.server_roots([child, tid, 999_999_999]) == [os.getpid()]  # once; a gone id is left out
    finally:
        os.waitpid(child, 0)


def tree_cpu():
    return procfs.read_trees_cpu([os.getpid()])[os.getpid()]


def test_a_tree_s_cpu_counts_its_children_alive_and_ended():
    """A parallel worker that starts and ends inside the window is counted, as one still running."""
    before = tree_cpu()
    ended = os.fork()
    if ended == 0:
        burn(0.3)
        os._exit(0)
    os.waitpid(ended, 0)  # reaped: its CPU is in this process's children's account now
    alive = os.fork()
    if alive == 0:
        burn(0.3)
        time.sleep(5)
        os._exit(0)
    try:
        deadline = time.monotonic() + 10
        while procfs.read_pid_cpu([alive]).get(alive, 0) < 0.25 and time.monotonic() < deadline:
            time.sleep(0.05)
        after = tree_cpu()
    finally:
        os.kill(alive, signal.SIGKILL)
        os.waitpid(alive, 0)
    assert after - before >= 0.5, (before, after)
    assert procfs.read_trees_cpu([999_999_999]) == {}  # gone


def test_work_a_live_child_s_own_child_did_before_a_window_is_not_counted_in_it():
    """A helper whose own child (an archive_command, say) ran before the window and that ends inside it."""
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    helper = os.fork()
    if helper == 0:
        grandchild = os.fork()
        if grandchild == 0:
            burn(0.3)
            os._exit(0)
        os.waitpid(grandchild, 0)
        os.write(ready_w, b"x")
        os.read(go_r, 1)
        os._exit(0)
    try:
        os.read(ready_r, 1)  # the grandchild ended and was reaped: in the helper's children's account
        before = tree_cpu()
        os.write(go_w, b"x")
        os.waitpid(helper, 0)
        after = tree_cpu()
    finally:
        for fd in (ready_r, ready_w, go_r, go_w):
            os.close(fd)
    assert after - before < 0.1, (before, after)


def test_ids_a_server_gives_that_are_not_process_ids_are_never_read(tmp_path):
    """The I/O workers' pids (and the sessions') are a server's answer: one dbio does not own could answer
    a path ('../tmp/x' puts a directory of the user's in /proc's place: its status, stat and schedstat) or
    a value Python cannot even use as a key (an array); neither is read, nor stops the readings."""
    planted = tmp_path / "proc-of-mine"
    planted.mkdir()
    path = "../" + str(planted).lstrip("/")
    (planted / "status").write_text(f"Name:\tpostgres\nTgid:\t{path}\nPPid:\t1\n")
    (planted / "stat").write_text("1 (postgres) S " + " ".join(["100"] * 20) + "\n")
    (planted / "schedstat").write_text("1000 2000000000 3\n")
    assert procfs.read_pid_run_delay([path, [1], True, -1, 0], {}) == {}
    assert procfs.read_pid_cpu([path, [1], True], {}) == {}
    assert procfs.server_roots([path, [1]]) == []
    me = os.getpid()
    assert set(procfs.read_pid_cpu([path, me], {})) == {me}  # a real id beside them is still read
