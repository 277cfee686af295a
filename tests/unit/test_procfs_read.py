"""/proc read with os.read (collect/procfs.read_proc): the text Path.read_text gives, for the files a reading reads."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from dbio.collect import procfs


@pytest.mark.parametrize("path", ["/proc/version", "/proc/self/cmdline", "/proc/self/limits"])
def test_a_file_that_holds_still_reads_as_read_text_reads_it(path):
    assert procfs.read_proc(path) == Path(path).read_text()


@pytest.mark.parametrize("path", ["/proc/stat", "/proc/diskstats", f"/proc/{os.getppid()}/status"])
def test_a_file_of_counters_reads_its_lines_and_names(path):
    got, want = procfs.read_proc(path), Path(path).read_text()  # the counters move between the two reads

    def names(text: str) -> list[list[str]]:
        # each line's first word that is not a number: a field's or a device's name (a process's State moves too)
        return [[word for word in line.split() if not word.isdigit()][:1] for line in text.splitlines()]

    assert names(got) == names(want) and len(names(got)) > 0


def test_a_long_file_is_read_to_its_end(tmp_path):
    big = tmp_path / "big"
    big.write_text("x" * 200_000 + "\nend\n")
    assert procfs.read_proc(big) == big.read_text()


def test_the_cpu_of_a_thread_is_the_same_figure_as_before(tmp_path):
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        tid = thread.native_id
        tasks: dict[int, procfs.Task] = {}
        cpu = procfs.read_pid_cpu([os.getpid(), tid], tasks)
        assert set(cpu) == {os.getpid(), tid} and tasks[tid].stat == Path(f"/proc/{os.getpid()}/task/{tid}/stat")
        assert cpu[tid] == sum(procfs.parse_pid_stat(tasks[tid].stat.read_text()))  # a waiting thread's CPU is still
    finally:
        stop.set()
        thread.join()


def test_a_process_gone_is_left_out():
    assert procfs.read_pid_cpu([2 ** 22 + 1]) == {}
