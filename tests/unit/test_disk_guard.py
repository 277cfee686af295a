"""The disk guard's decision on recorded readings (time, free bytes)."""

from dbio.run import disk_guard

MIB = 1 << 20


def test_the_first_second_is_not_blind_to_a_fast_fill():
    # a managed MariaDB on a tmpfs with 48 MiB free: 8 MiB used in the first 0.1 s, the disk full 0.2 s later
    assert disk_guard.runs_out([(0.0, 48 * MIB), (0.1, 40 * MIB)])


def test_one_burst_at_the_start_is_no_alarm():
    # PostgreSQL making a 16 MiB WAL segment at once, with 100 MiB free
    assert not disk_guard.runs_out([(0.0, 100 * MIB), (0.1, 84 * MIB)])
    assert not disk_guard.runs_out([(0.0, 100 * MIB)])


def test_after_a_second_the_last_seconds_rate_counts():
    history = [(t / 10, (200 - 6 * t) * MIB) for t in range(12)]  # 60 MiB/s, 134 MiB left
    assert not disk_guard.runs_out(history)
    assert disk_guard.runs_out([*history, (1.2, 60 * MIB)])



def test_the_floor_keeps_two_of_a_servers_growth_steps_free_besides():
    assert disk_guard.floor_of(0) == disk_guard.FLOOR
    # InnoDB's autoextend increment: one growth before the guard sees it, one more while its cancel takes
    assert disk_guard.floor_of(64 * MIB) == 160 * MIB
    # recorded on a managed MariaDB (tmpfs, 2 sessions, HEAVY updates): ibdata1 grew 64 MiB within 0.1 s with 173
    # MiB free; a 32 MiB floor let the run go on to the next growth, which the filesystem could not give
    grown = [(0.0, 173 * MIB), (0.1, 109 * MIB)]
    assert disk_guard.runs_out(grown, disk_guard.floor_of(64 * MIB))


def test_a_run_does_not_start_under_its_floor_and_a_margin(tmp_path):
    free = disk_guard.tightest([str(tmp_path)])[0]
    assert disk_guard.too_little_to_start([str(tmp_path)], disk_guard.floor_of(0)) is None or free < 64 * MIB
    short = disk_guard.too_little_to_start([str(tmp_path)], free)  # a floor as large as the room there
    starts = (free + disk_guard.START_MARGIN) >> 20
    assert short == f"{free >> 20} MiB free where {tmp_path} is, under the {starts} MiB it starts with"
    assert disk_guard.too_little_to_start([], free) is None  # nothing to watch


def test_the_rate_is_the_last_seconds_and_none_when_room_grew():
    history = [(t / 10, (200 - 6 * t) * MIB) for t in range(12)]  # 60 MiB/s
    assert round(disk_guard.rate(history) / MIB) == 60
    assert disk_guard.rate([(0.0, 60 * MIB), (1.0, 100 * MIB)]) == 0.0  # a checkpoint removed WAL
    assert disk_guard.rate([(0.0, 100 * MIB)]) == 0.0
    assert round(disk_guard.rate([(0.0, 173 * MIB), (0.1, 109 * MIB)]) / MIB) == 256  # one 64 MiB growth, over 0.25 s
