"""The most a server adds to one file at once while writing, from its recorded settings: the disk guard keeps it
free besides its floor."""

import pytest

from dbio.engines.mysql import facts as mysql_facts
from dbio.engines.postgres import facts as pg_facts


def settings(**values: str) -> dict:
    return {name: {"setting": value, "unit": None, "source": None} for name, value in values.items()}


MARIADB = settings(version="10.11.19-MariaDB-0+deb12u1", innodb_autoextend_increment="64",
                   innodb_data_file_path="ibdata1:12M:autoextend", innodb_temp_data_file_path="ibtmp1:12M:autoextend")


@pytest.mark.parametrize("recorded, step, why", [
    (MARIADB, 64 << 20, "innodb_autoextend_increment"),
    ({**MARIADB, **settings(innodb_autoextend_increment="8")}, 8 << 20, "innodb_autoextend_increment"),
    # fixed-size system and temporary tablespaces never grow: their files are in the floor
    ({**MARIADB, **settings(innodb_data_file_path="ibdata1:512M", innodb_temp_data_file_path="ibtmp1:12M")}, 0, None),
    # MySQL 8.0.23+ doubles an undo tablespace's extension when they come fast, up to 256 MB
    ({**MARIADB, **settings(version="8.0.36")}, 256 << 20, "MySQL's undo tablespace extension"),
    ({**MARIADB, **settings(version="8.0.22")}, 64 << 20, "innodb_autoextend_increment"),
    (settings(version="10.6.1-MariaDB"), 0, None),  # not readable: nothing beyond the floor claimed
])
def test_innodb(recorded, step, why):
    assert mysql_facts.growth_step(recorded) == {"growth_step_bytes": step, "growth_step_setting": why}


@pytest.mark.parametrize("recorded, step", [
    (settings(wal_segment_size="16777216"), 16 << 20), (settings(wal_segment_size="1073741824"), 1 << 30),
    ({}, 16 << 20)])  # a server that hid it: PostgreSQL's default
def test_postgresql_a_wal_segment(recorded, step):
    assert pg_facts.growth_step(recorded) == {"growth_step_bytes": step, "growth_step_setting": "wal_segment_size"}
