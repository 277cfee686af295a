"""CPU time of processes and threads from /proc, with each id's stat file found once (real /proc)."""

import os
import signal
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from dbio.collect import procfs


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
        paths: dict = {}
        first = procfs.read_pid_cpu([os.getpid(), tid], paths)
        assert set(first) == {os.getpid(), tid}
        assert paths[os.getpid()] == Path(f"/proc/{os.getpid()}/stat")
        assert paths[tid] == Path(f"/proc/{os.getpid()}/task/{tid}/stat")  # the thread's own, not its process's
        sum(range(2_000_000))  # this process uses CPU between two readings
        second = procfs.read_pid_cpu([os.getpid(), tid], paths)
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
    paths: dict = {}
    assert procfs.read_pid_cpu([2 ** 22 + 12345], paths) == {}  # above any pid_max: no such process


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
    assert waited[sleeper] < 0.05, waited


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
