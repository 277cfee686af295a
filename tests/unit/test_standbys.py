"""Embedded standbys, the parts that need no server: members' names and --nodes, the places of the
standbys, their settings, replay lag, the status lines and the options' rules."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from dbio import cluster_members
from dbio.commands.admin import member_lines
from dbio.config import Sources, load_config
from dbio.engines.postgres.instance import settings
from dbio.engines.postgres.instance.record import MemberStatus
from dbio.engines.postgres.instance.standbys import Member, lag_seconds, lsn_bytes, planned, standby_settings
from dbio.errors import ConfigErrors, UsageError


def config(tmp_path: Path, **cli):
    return load_config(Sources(cli=cli, cwd=tmp_path, discover=False))


def test_members_are_named_primary_then_each_standby():
    assert cluster_members.names(0) == ["primary"]
    assert cluster_members.names(2) == ["primary", "standby1", "standby2"]
    assert [cluster_members.role_of(n) for n in cluster_members.names(2)] == ["primary", "standby", "standby"]


@pytest.mark.parametrize("text, problem", [
    ("", "names no member"), (" , ", "names no member"), ("primary,replica1", "'replica1' is not a member's name"),
    ("standby0", "'standby0' is not a member's name"), ("standby1,standby1", "names standby1 twice"),
])
def test_nodes_that_name_no_member_are_refused(text, problem):
    with pytest.raises(ValueError, match=problem):
        cluster_members.parse(text)


def test_nodes_choose_in_the_cluster_order():
    available = cluster_members.names(2)
    assert cluster_members.choose(available, None) == available
    assert cluster_members.choose(available, "standby2, primary") == ["primary", "standby2"]
    assert cluster_members.choose(available, "standby1") == ["standby1"]
    with pytest.raises(UsageError, match="has no member standby3 .it has primary, standby1, standby2."):
        cluster_members.choose(available, "primary,standby3")


def test_standbys_live_inside_the_instance_or_in_their_own_directory(tmp_path):
    cfg = config(tmp_path, standbys=3, standby_data_dir=(str(tmp_path / "fast"),)).instance
    root = tmp_path / "inst"
    assert planned(root, cfg) == [("standby1", tmp_path / "fast" / "dbio-standby1", tmp_path / "fast"),
                                  ("standby2", root / "standby2", None), ("standby3", root / "standby3", None)]
    assert planned(root, config(tmp_path).instance) == []


def test_the_record_keeps_each_member():
    member = Member("standby1", "standby", Path("/x/inst/standby1"), 5433, None, stale=True)
    data = member.to_dict()
    assert data["data_dir"] == "/x/inst/standby1/pgdata" and data["socket_dir"] == "/x/inst/standby1/socket"
    assert Member.from_dict(data) == member and member.slot == "dbio_standby1"
    assert Member.from_dict({"name": "primary", "role": "primary", "root": "/x", "port": 1}).stale is False


def test_wal_positions_and_replay_lag():
    assert lsn_bytes("0/0") == 0
    assert lsn_bytes("16/B374D848") == (0x16 << 32) + 0xB374D848
    assert lsn_bytes("0/3000148") - lsn_bytes("0/3000000") == 0x148
    assert lag_seconds(8192, 0.25) == 0.25
    assert lag_seconds(0, None) == 0.0  # nothing left to replay: the primary stopped measuring
    assert lag_seconds(8192, None) is None  # behind, and not measured: unknown, never 0
    assert lag_seconds(None, None) is None


def test_the_primary_streams_except_for_a_load_with_minimal_wal(tmp_path):
    cfg = config(tmp_path).instance
    common = {"port": 5000, "socket_dir": "/s", "sessions": 4}
    run = settings.build_profile(cfg, purpose="run", standbys=2, **common).as_dict()
    assert run["wal_level"] == "replica" and run["max_wal_senders"] == "10" and run["max_replication_slots"] == "10"
    # a stopped standby's slot keeps no more WAL than the filesystem can give
    assert run["max_slot_wal_keep_size"] == f"{settings.WAL_SIZES_MB[0]}MB"
    tight = settings.build_profile(cfg, purpose="run", standbys=2, wal_budget=300 << 20, **common).as_dict()
    assert tight["max_slot_wal_keep_size"] == tight["max_wal_size"] == f"{settings.wal_size_for(300 << 20)}MB"
    load = settings.build_profile(cfg, purpose="load", standbys=2, **common).as_dict()
    assert load["wal_level"] == "minimal" and load["max_wal_senders"] == "0"
    alone = settings.build_profile(cfg, purpose="run", **common).as_dict()
    assert alone["wal_level"] == "minimal" and "max_replication_slots" not in alone
    chosen = config(tmp_path, wal_level="logical").instance
    streamed = settings.build_profile(chosen, purpose="load", standbys=9, **common).as_dict()
    assert streamed["wal_level"] == "logical" and streamed["max_wal_senders"] == "11"


def test_a_standby_runs_with_the_primarys_settings_in_its_own_place():
    primary = Member("primary", "primary", Path("/i"), 5000)
    standby = Member("standby2", "standby", Path("/fast/dbio-standby2"), 6000)
    running = {"port": "5000", "unix_socket_directories": "'/i/socket'", "max_connections": "150",
               "shared_buffers": "16384kB"}
    got = standby_settings(running, standby, primary).as_dict()
    assert got["port"] == "6000" and got["unix_socket_directories"] == "'/fast/dbio-standby2/socket'"
    assert got["max_connections"] == "150" and got["shared_buffers"] == "16384kB"  # a hot standby needs as much
    assert got["primary_conninfo"] == "'host=/i/socket port=5000 user=dbio application_name=standby2'"
    assert got["primary_slot_name"] == "'dbio_standby2'" and got["hot_standby"] == "on"


def test_status_lines_show_role_state_and_lag():
    rows = (MemberStatus("primary", "primary", True, 10, 5000, Path("/i/pgdata")),
            MemberStatus("standby1", "standby", True, 11, 6000, Path("/i/standby1/pgdata"), 0, 0.0),
            MemberStatus("standby2", "standby", True, 12, 6001, Path("/f/pgdata"), 3 << 20, None),
            MemberStatus("standby3", "standby", False, None, 6002, Path("/g/pgdata"), note="stopped"))
    lines = member_lines(rows)
    assert lines[0].split()[:4] == ["member", "role", "state", "port"]
    assert "0 B, 0.000 s" in lines[2] and "3 MiB, -" in lines[3]
    assert " stopped " in lines[4] and lines[4].endswith("(stopped)")
    assert member_lines(()) == []


@pytest.mark.parametrize("cli, problem", [
    ({"standby_data_dir": ("/a",)}, "--standby-data-dir = /a: names 1 directories for 0 standbys"),
    ({"standbys": 2, "standby_data_dir": ("/a", "/a")}, "names a directory twice"),
    ({"standbys": 1, "data_dirs": ("/a",)}, "which the embedded standbys do not copy yet"),
    ({"standbys": 9}, "above the maximum 8"),
    ({"standbys": 1, "dsn": ("host=db1",)}, "--standbys = 1: sets up dbio's own instance; an existing server (--dsn) "
                                            "keeps its own"),
    ({"nodes": "primary", "dsn": ("host=db1",)}, "--nodes = primary: picks members of the embedded instance"),
    ({"nodes": "primary,other"}, "'other' is not a member's name"),
])
def test_bad_standby_options_are_refused_before_anything_starts(tmp_path, cli, problem):
    with pytest.raises(ConfigErrors, match=problem.replace("(", r"\(").replace(")", r"\)")):
        config(tmp_path, **cli)


def test_a_standby_whose_socket_path_would_be_too_long_is_refused_before_anything_is_made(tmp_path):
    from dbio.engines.postgres.instance.standbys import check_new

    cfg = config(tmp_path, standbys=1).instance
    with tempfile.TemporaryDirectory(dir="/tmp") as short:  # whatever pytest's own path (a worker's is longer)
        root = Path(short) / ("d" * (79 - len(short)))  # 80 bytes: the primary's socket fits, standby1's does not
        assert len(str(root / "socket" / ".s.PGSQL.65535")) <= 107 < len(str(root / "standby1/socket/.s.PGSQL.65535"))
        with pytest.raises(UsageError, match=r"is too long for standby1: its socket "
                                             r".*/standby1/socket/\.s\.PGSQL\.65535"):
            check_new(root, cfg)
        assert not root.exists()
        check_new(Path(short) / "s", cfg)  # nothing to refuse
