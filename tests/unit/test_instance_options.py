"""What dbio's own instance remembers of how it was last configured (target.remember keeps it,
config_resolver.py reads it back): the settings options the user set, as given, never a default nor a
sweep step's value."""

from dbio import target as targets
from dbio.config import Sources, load_config, option_values


def test_the_options_the_user_set_are_kept_as_given(tmp_path):
    config = load_config(Sources(cli={"shared_buffers": "32MiB", "io_method": "auto", "pg_settings": ["work_mem=8MB"],
                                      "access_path": "index", "threads_per_schema": "4"}, cwd=tmp_path, discover=False))
    assert config.instance.io_method == "sync"  # auto, resolved for the index path...
    # ...kept as the user gave it, so that a later bitmap run resolves it again; io_workers, a default, is not kept
    assert targets.options_of(config) == {"shared_buffers": 32 << 20, "io_method": "auto",
                                                   "pg_settings": {"work_mem": "8MB"}}
    assert targets.options_of(load_config(Sources(cwd=tmp_path, discover=False))) == {}
    mysql = load_config(Sources(cli={"engine": "mysql", "buffer_pool": "64MiB", "innodb_page_size": "8k"},
                                cwd=tmp_path, discover=False))
    assert targets.options_of(mysql) == {"buffer_pool": 64 << 20}  # the page size is the instance's own


def test_a_sweep_step_sets_nothing_the_instance_remembers(tmp_path):
    from dbio.sweep import step_config as sweep_step_config

    base = load_config(Sources(cli={"shared_buffers": "32MiB"}, cwd=tmp_path, discover=False))
    step = sweep_step_config.step_config(option_values(base), {"shared_buffers": "64MiB"}, tmp_path, None)
    assert step.instance.shared_buffers == 64 << 20 and targets.options_of(step) == {}


def test_settings_are_shown_name_by_name_and_a_rule_s_own_text_as_it_is():
    from dbio.config_checks import show_value
    from dbio.option_table import BY_KEY

    option = BY_KEY["pg_settings"]
    assert show_value(option, (("work_mem", "8MB"), ("temp_buffers", "16MB"))) == "work_mem=8MB, temp_buffers=16MB"
    assert show_value(option, ()) == "none"
    assert show_value(option, "archive_command = ...") == "archive_command = ..."  # as a rule names one setting


def test_a_record_a_later_dbio_wrote_with_more_fields_is_still_read(tmp_path):
    """An instance a later dbio configured (its record holding fields this one does not know) can still be used
    and destroyed; one that lacks a field this one needs is still refused as not describing an instance."""
    import pytest

    from dbio.engines.postgres.instance.record import Meta
    from dbio.errors import DbioError
    from dbio.managed.record import write_record

    fields = {"port": 5433, "server_user": "dbio", "bin_dir": "/b", "wheel_version": "18.6.3", "pg_version": "18.6",
              "dbname": "dbio", "created_at": "2026-11-23T00:00:00+00:00"}
    path = tmp_path / "dbio-instance.json"
    write_record(path, {**fields, "options": {"shared_buffers": 16 << 20}, "a_later_field": [1, 2]})
    meta = Meta.read(path)
    assert meta.port == 5433 and meta.options == {"shared_buffers": 16 << 20}
    write_record(path, {k: v for k, v in fields.items() if k != "port"})
    with pytest.raises(DbioError, match="does not describe a dbio instance"):
        Meta.read(path)


def test_an_instance_remembering_settings_no_default_workload_passes_is_still_shown_stopped_and_destroyed(tmp_path):
    """After setup --shared-buffers 1GiB --allow-cached (or an allowed archive_command), the instance remembers
    settings the default workload is refused against (a 1 GiB data set fits in 1 GiB); status, stop and
    destroy take no workload flags, and work on the instance as it is."""
    import getpass
    import os

    import pytest

    from dbio.managed.record import write_record
    from tests import forked_dbio

    user = "dbio" if os.geteuid() == 0 else getpass.getuser()  # as root, the unprivileged server user
    if os.geteuid() == 0:
        try:
            pytest.importorskip("pwd").getpwnam(user)
        except KeyError:  # a machine without it has no instance run as root either
            pytest.skip(f"no server user {user!r} yet: the first instance dbio creates makes it")
    data_dir = tmp_path / "instance"
    for sub in ("pgdata", "socket", "log"):
        (data_dir / sub).mkdir(parents=True)
    write_record(data_dir / "dbio-instance.json", {
        "port": 5433, "server_user": user, "bin_dir": "/nonexistent", "wheel_version": "18.6.3",
        "pg_version": "18.6", "dbname": "dbio", "created_at": "2026-11-23T00:00:00+00:00",
        "options": {"shared_buffers": 1 << 30, "pg_settings": {"archive_command": "/bin/true"}}})
    env = {k: v for k, v in os.environ.items() if not k.startswith("DBIO_")}

    def dbio(*args):
        return forked_dbio.completed([*args, "--data-dir", str(data_dir)], cwd=tmp_path, env={**env, "COLUMNS": "200"})

    done = dbio("instance", "status")
    assert done.returncode == 3 and f"instance   {data_dir}" in done.stdout, done.stderr  # 3: stopped
    done = dbio("instance", "stop")
    assert done.returncode == 0 and "was not running" in done.stdout, done.stderr
    done = dbio("instance", "destroy", "--yes")
    assert done.returncode == 0 and not data_dir.exists(), done.stderr
