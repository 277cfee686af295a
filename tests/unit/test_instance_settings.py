from dataclasses import replace
from pathlib import Path

import pytest

from dbio.engines.postgres.engine_options import InstanceConfig
from dbio.engines.postgres.instance import settings


def cfg(**kw):
    base = dict(data_dir=Path("/x"), shared_buffers=128 << 20, direct_io=True, io_method="worker", io_workers=3,
                max_connections=0, wal_level="minimal", pg_settings=())
    base.update(kw)
    return InstanceConfig(**base)


def test_run_profile_is_made_for_io_testing():
    p = settings.build_profile(cfg(), port=5555, socket_dir="/d/socket", sessions=4, purpose="run").as_dict()
    assert p["debug_io_direct"] == "'data'"
    assert p["listen_addresses"] == "''" and p["unix_socket_permissions"] == "0700"
    assert p["track_io_timing"] == "on" and p["shared_buffers"] == "131072kB"
    assert p["max_wal_senders"] == "0" and p["wal_level"] == "minimal"


def test_load_profile_is_buffered_and_direct_io_can_be_off():
    load = settings.build_profile(cfg(), port=1, socket_dir="/s", sessions=1, purpose="load").as_dict()
    assert load["debug_io_direct"] == "''"
    off = settings.build_profile(cfg(direct_io=False), port=1, socket_dir="/s", sessions=1, purpose="run").as_dict()
    assert off["debug_io_direct"] == "''"


def test_connections_are_sized_for_the_sessions():
    assert settings.connections_for(4, 0) == 100
    assert settings.connections_for(512, 0) >= 512 + 5 and settings.connections_for(512, 0) % 50 == 0
    assert settings.connections_for(512, 700) == 700


def test_user_settings_are_added_and_quoted():
    p = settings.build_profile(cfg(pg_settings=(("checkpoint_timeout", "15min"), ("log_line_prefix", "%m [%p] "),
                                                ("application_name", "it's"))),
                               port=1, socket_dir="/s", sessions=1, purpose="run").as_dict()
    assert p["checkpoint_timeout"] == "'15min'"  # PostgreSQL accepts every type quoted
    assert p["log_line_prefix"] == "'%m [%p] '"
    assert p["application_name"] == "'it''s'"  # a quote in a value cannot end it
    assert "log_line_prefix = '%m [%p] '" in settings.render(settings.Profile("run", tuple(p.items())))


def test_restart_needed_only_for_real_changes():
    a = {"shared_buffers": "16384kB", "max_connections": "200", "debug_io_direct": "'data'"}
    assert settings.restart_needed(a, dict(a)) == []
    assert settings.restart_needed(a, {**a, "max_connections": "100"}) == []  # more than enough already
    assert settings.restart_needed(a, {**a, "max_connections": "300"}) == ["max_connections"]
    assert settings.restart_needed(a, {**a, "debug_io_direct": "''"}) == ["debug_io_direct"]


def test_worker_limits_make_room_for_every_sessions_scan_workers():
    assert settings.worker_limits(0) == {} and settings.worker_limits(6) == {}  # PostgreSQL's 8 are enough
    assert settings.worker_limits(32) == {"max_worker_processes": "34", "max_parallel_workers": "32"}
    p = settings.build_profile(cfg(), port=1, socket_dir="/s", sessions=16, purpose="run", parallel_workers=32)
    assert p.as_dict()["max_parallel_workers"] == "32"
    running = p.as_dict()
    fewer = settings.build_profile(cfg(), port=1, socket_dir="/s", sessions=16, purpose="run").as_dict()
    assert settings.restart_needed(running, fewer) == []  # room for more workers than asked: no restart
    assert settings.restart_needed(fewer, running) == ["max_parallel_workers", "max_worker_processes"]


@pytest.mark.parametrize("budget_mib, expected_mb", [
    (10_000, 1024), (2200, 1024), (2100, 512), (600, 256), (300, 64), (100, 32), (10, 32)])
def test_max_wal_size_fits_the_free_space_twice_over(budget_mib, expected_mb):
    assert settings.wal_size_for(budget_mib << 20) == expected_mb


@pytest.mark.parametrize("max_wal_mb, budget_mib, fix", [
    (1024, 300, "lower max_wal_size (--pg-setting max_wal_size=64MB), free some space, or run without updates"),
    (1024, 130, "lower max_wal_size (--pg-setting max_wal_size=32MB), free some space, or run without updates"),
    # already at (or below) the smallest that fits nowhere: a lower setting is no fix, room is
    (32, 120, "free some space there (an update run needs 128 MiB at the smallest max_wal_size, 32 MB), or run "
              "without updates"),
    (64, 120, "free some space there (an update run needs 128 MiB at the smallest max_wal_size, 32 MB), or run "
              "without updates")])
def test_a_max_wal_size_that_does_not_fit_is_answered_with_one_that_does(max_wal_mb, budget_mib, fix):
    assert not settings.wal_fits(max_wal_mb, budget_mib << 20)
    assert settings.wal_room_fix(max_wal_mb, budget_mib << 20) == fix


def test_dbio_bounds_max_wal_size_only_when_the_user_did_not_set_it():
    base = cfg()
    small = settings.build_profile(base, port=1, socket_dir="/s", sessions=1, purpose="run", wal_budget=300 << 20)
    assert small.wal_bounded and small.as_dict()["max_wal_size"] == "64MB" and small.as_dict()["min_wal_size"] == "32MB"
    roomy = settings.build_profile(base, port=1, socket_dir="/s", sessions=1, purpose="run", wal_budget=100 << 30)
    assert not roomy.wal_bounded and "max_wal_size" not in roomy.as_dict()
    mine = settings.build_profile(replace(base, pg_settings=(("max_wal_size", "4GB"),)), port=1, socket_dir="/s",
                                  sessions=1, purpose="run", wal_budget=300 << 20)
    assert not mine.wal_bounded and mine.as_dict()["max_wal_size"] == "'4GB'"


@pytest.mark.parametrize("written, mb", [("'2GB'", 2048), (None, 1024), ("'100'", 100), ("'65536kB'", 64),
                                         ("64MB", 64), ("'lots'", None)])
def test_max_wal_mb_reads_what_the_profile_gives_the_server(written, mb):
    assert settings.max_wal_mb({} if written is None else {"max_wal_size": written}) == mb


def test_io_method_auto_is_chosen_per_access_path_and_an_explicit_one_is_kept():
    from dbio.config import Sources, load_config

    def io(**cli):
        return load_config(Sources(env={}, cli=cli, cwd=Path("/tmp"))).instance.io_method

    assert io() == "sync"  # the index path reads one block at a time: no hand-over to an I/O worker
    assert io(access_path="bitmap") == "worker"  # its reads are prefetched through the workers
    assert io(io_method="worker") == "worker" and io(access_path="bitmap", io_method="sync") == "sync"
