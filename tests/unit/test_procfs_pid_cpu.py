"""CPU time of processes and threads from /proc, with each id's stat file found once (real /proc)."""

import os
import threading
from pathlib import Path

from dbio.collect import procfs


def test_a_process_and_a_thread_are_read_and_their_stat_files_kept():
    ready, done = threading.Event(), threading.Event()
    tid = []

    def worker():
        tid.append(threading.get_native_id())
        ready.set()
        done.wait(10)

    thread = threading.Thread(target=worker)
    thread.start()
    ready.wait(10)
    try:
        paths: dict = {}
        first = procfs.read_pid_cpu([os.getpid(), tid[0]], paths)
        assert set(first) == {os.getpid(), tid[0]}
        assert paths[os.getpid()] == Path(f"/proc/{os.getpid()}/stat")
        assert paths[tid[0]] == Path(f"/proc/{os.getpid()}/task/{tid[0]}/stat")  # the thread's own, not its process's
        sum(range(2_000_000))  # this process uses CPU between two readings
        second = procfs.read_pid_cpu([os.getpid(), tid[0]], paths)
        assert second[os.getpid()] >= first[os.getpid()]
        assert procfs.read_pid_cpu([os.getpid()]).keys() == {os.getpid()}  # without a cache, as before
    finally:
        done.set()
        thread.join()


def test_a_process_that_ended_is_left_out():
    paths: dict = {}
    assert procfs.read_pid_cpu([2 ** 22 + 12345], paths) == {}  # above any pid_max: no such process
