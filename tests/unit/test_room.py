"""The disk guard's decision on recorded readings (time, free bytes)."""

from dbio.run import room

MIB = 1 << 20


def test_the_first_second_is_not_blind_to_a_fast_fill():
    # a managed MariaDB on a tmpfs with 48 MiB free: 8 MiB used in the first 0.1 s, the disk full 0.2 s later
    assert room.runs_out([(0.0, 48 * MIB), (0.1, 40 * MIB)])


def test_one_burst_at_the_start_is_no_alarm():
    # PostgreSQL making a 16 MiB WAL segment at once, with 100 MiB free
    assert not room.runs_out([(0.0, 100 * MIB), (0.1, 84 * MIB)])
    assert not room.runs_out([(0.0, 100 * MIB)])


def test_after_a_second_the_last_seconds_rate_counts():
    history = [(t / 10, (200 - 6 * t) * MIB) for t in range(12)]  # 60 MiB/s, 134 MiB left
    assert not room.runs_out(history)
    assert room.runs_out([*history, (1.2, 60 * MIB)])

