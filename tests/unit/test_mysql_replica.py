"""Which MySQL/MariaDB servers dbio refuses to write to (pure)."""

import pytest

from dbio.engines.mysql.replica import source_of, why_not_writable


@pytest.mark.parametrize("row, shown", [
    ({"Master_Host": "db1", "Master_Port": 3306}, "db1:3306"),  # MariaDB, MySQL before 8.0.22
    ({"Source_Host": "10.0.0.5", "Source_Port": 3307}, "10.0.0.5:3307"),  # MySQL 8.0.22+
    ({"Master_Host": "", "Master_Port": 0}, "?"),
])
def test_source_of(row, shown):
    assert source_of(row) == shown


@pytest.mark.parametrize("read_only, super_read_only, sources, why", [
    ("OFF", None, [], None),
    ("OFF", "OFF", None, None),  # replication status not visible: read_only alone decides
    ("ON", None, [], "is read-only (read_only = ON)"),
    ("1", "OFF", None, "is read-only (read_only = ON)"),
    ("ON", "ON", [], "is read-only (super_read_only = ON)"),
    ("OFF", None, ["db1:3306"], "is a replica of db1:3306"),  # even with writes allowed, and stopped
    ("ON", "ON", ["b:1", "a:2", "b:1"], "is a replica of a:2, b:1"),
])
def test_why_not_writable(read_only, super_read_only, sources, why):
    assert why_not_writable(read_only, super_read_only, sources) == why
