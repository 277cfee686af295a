"""What a new user reads is consistent: sizes and speeds in one unit family, plain restart reasons,
the same page-cache size in the refusal and in the report, scripts found without their suffix."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from click.testing import CliRunner

from dbio import cli, cli_config
from dbio.collect import host
from dbio.jobs import run as run_job
from dbio.config import Sources, load_config
from dbio.engines.postgres.instance import settings
from dbio.engines.postgres.instance.record import Status
from dbio.errors import UsageError
from tests.fake_engine import FakeEngine
from dbio.result_records import of


def test_a_built_in_script_is_found_without_its_suffix():
    with_suffix = CliRunner().invoke(cli.cli, ["sql", "slice.sql"])
    without = CliRunner().invoke(cli.cli, ["sql", "slice"])
    assert without.exit_code == 0 and without.output == with_suffix.output and "work loop" in without.output


def test_the_restart_says_what_changes_in_plain_words():
    load = settings.describe_restart("load", ["debug_io_direct"], {"debug_io_direct": "''", "wal_level": "minimal"})
    assert load == ("restarting the embedded server for the load: buffered I/O through the OS page cache "
                    "(a fast load with buffered I/O and minimal WAL; runs go back to direct I/O)")
    run = settings.describe_restart("run", ["debug_io_direct", "shared_buffers"],
                                    {"debug_io_direct": "'data'", "shared_buffers": "131072kB"})
    assert run == ("restarting the embedded server for the run: direct I/O (every buffer miss is a device read), "
                   "shared_buffers 128 MiB")


def test_instance_status_shows_sizes_as_reports_do():
    status = Status(Path("/x"), True, True, settings={"shared_buffers": "131072kB", "debug_io_direct": "'data'",
                                                       "io_method": "worker", "max_connections": "20"})
    assert status.profile().startswith("shared_buffers 128 MiB, direct I/O on")


def test_the_refusal_and_the_report_name_the_same_page_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(host, "host_facts", lambda: {"memory_bytes": 8 << 30, "memory_available_bytes": 3 << 30})
    engine = FakeEngine()
    info = engine.probe(engine.connect("fake:", application_name="test"))
    info = dataclasses.replace(info, caps=dataclasses.replace(info.caps, direct_io=False, local=True))
    config = load_config(Sources(cli={"scale": "2GiB", "allow_cached": False}, cwd=tmp_path, discover=False))
    with pytest.raises(UsageError) as refused:
        run_job.check_not_cached(info, config.workload.data_bytes)
    assert "plus the available page cache (3 GiB;" in str(refused.value)


def test_one_thread_is_not_plural():
    from dbio import report, result as results

    doc = results.read(Path(__file__).resolve().parents[1] / "fixtures" / "result_complete.json")
    doc["config"]["workload"].update(threads_per_schema=1, schemas=1, sessions=1)
    text = report.render(of(doc), "text")
    assert "(1 schema x 1 thread)" in text and "1 threads" not in text


def test_a_report_written_to_a_file_named_html_is_html(tmp_path):
    # dbio report RESULT --out report.html wrote the text report into a file named .html
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "result_complete.json"
    for name, start in (("r.html", "<!DOCTYPE html>"), ("r.md", "**VALID storage result**\n\n# dbio report"), ("r.json",
                                                                                                               "{"),
                        ("r.txt", "VALID storage result\ndbio report")):
        done = CliRunner().invoke(cli.cli, ["report", str(fixture), "--out", str(tmp_path / name)])
        assert done.exit_code == 0, done.output
        assert (tmp_path / name).read_text().startswith(start), name
    given = CliRunner().invoke(cli.cli, ["report", str(fixture), "--format", "text", "--out", str(tmp_path / "t.html")])
    assert given.exit_code == 0 and (tmp_path / "t.html").read_text().startswith("VALID storage result\ndbio report")
    compared = CliRunner().invoke(cli.cli, ["compare", str(fixture), str(fixture), "--out", str(tmp_path / "c.html")])
    assert compared.exit_code == 0, compared.output
    assert (tmp_path / "c.html").read_text().startswith("<!DOCTYPE html>")


def test_dbio_sql_shows_either_engines_sql_and_refuses_a_wrong_name_as_bad_input(capsys):
    # the MySQL engine's work loop could not be shown, and an unknown script exited 1, not 2
    listed = CliRunner().invoke(cli.cli, ["sql", "--engine", "mysql"])
    assert listed.exit_code == 0 and "slice.sql" in listed.output and "pfs_files.sql" in listed.output
    loop = CliRunner().invoke(cli.cli, ["sql", "--engine", "mysql", "slice"])
    assert loop.exit_code == 0 and "CREATE PROCEDURE" in loop.output.upper()
    for argv, fragment in ((["sql", "nosuch"], "run dbio sql to list them"),
                           (["sql", "--engine", "mysql", "nosuch"], "run dbio sql --engine mysql to list them"),
                           (["sql", "--engine", "mysqll"], "use one of postgresql, mysql")):
        with pytest.raises(SystemExit) as exited:
            cli.main(argv)
        err = capsys.readouterr().err
        assert exited.value.code == 2 and len(err.strip().splitlines()) == 1 and fragment in err, err


@pytest.mark.parametrize("argv, fragments", [
    (["run", "--sclae", "1G"], ["No such option '--sclae'", "'--scale'", "see dbio run --help"]),
    (["runn"], ["No such command 'runn'", "'run'", "see dbio --help"]),
    (["report", "x", "--format", "pdf"], ["'pdf' is not one of", "see dbio report --help"]),
    (["sweep", "--vary"], ["'--vary' requires an argument", "see dbio sweep --help"]),
    (["instance", "init", "--data-dir"], ["'--data-dir' requires an argument", "see dbio instance init --help"]),
    (["compare"], ["Missing argument", "see dbio compare --help"]),
])
def test_a_mistyped_command_line_is_one_line_too(argv, fragments, capsys):
    # click's own refusals were four lines (Usage, Try, a blank line, Error) where dbio's are one
    with pytest.raises(SystemExit) as exited:
        cli.main(argv)
    err = capsys.readouterr().err
    assert exited.value.code == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith("dbio: ") and all(f in err for f in fragments), err


@pytest.mark.parametrize("command", [["run"], ["instance", "status"], ["run", "--engine", "mysql"], ["teardown"]])
def test_a_data_dir_that_is_a_file_is_named_so_by_every_command(command, tmp_path, capsys):
    # dbio run --data-dir FILE said "no dbio instance in FILE; run dbio setup first", and setup then refused it
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    with pytest.raises(SystemExit) as exited:
        cli.main([*command, "--data-dir", str(a_file)])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and err.strip() == f"dbio: --data-dir = {a_file}: is a file, not a directory; " \
                                                       "choose a directory path"


def test_a_scale_larger_than_the_load_is_named_where_it_was_set():
    # "scale = 131072 rows is larger than the 32768 rows loaded" named neither dbio.toml nor the flag
    from dbio.engines.base import SetupRecord, SetupSpec

    record = SetupRecord(setup_id="s1", spec=SetupSpec(32768, 1, 0, "random"), status="ready", started_at="")
    for sources, name in ((Sources(cli={"scale": "1GiB"}, env={}, discover=False), "--scale"),
                          (Sources(cli={}, env={"DBIO_SCALE": "1GiB"}, discover=False), "DBIO_SCALE")):
        config = load_config(dataclasses.replace(sources, cwd=Path("/")))
        with pytest.raises(UsageError) as refused:
            run_job.check_setup(record, config, "the server")
        assert str(refused.value).startswith(f"{name} = 131072 blocks (1 GiB): larger than the 32,768 rows "
                                             "loaded (256 MiB); lower scale")


def test_commands_without_a_data_set_take_a_large_cache(tmp_path):
    # dbio instance init --shared-buffers 2GiB was refused: "scale = 131072 blocks (1 GiB) ... fits in
    # shared_buffers (2 GiB) ...; raise scale or pass --allow-cached", neither of which it takes
    from dbio.errors import ConfigErrors

    def params():
        return {"shared_buffers": "2GiB", "data_dir": str(tmp_path / "instance")}

    for command in ("instance init", "instance start", "teardown"):
        config = cli_config.build_config(params(), None, None, command)
        assert config.instance.shared_buffers == 2 << 30, command
    with pytest.raises(ConfigErrors, match="fits in shared_buffers"):  # setup loads the scale it is given
        cli_config.build_config(params(), None, None, "setup")
    # run judges the data set it will run on: the load's when one is loaded (config_resolver), else the default
    with pytest.raises(ConfigErrors, match="fits in shared_buffers"):  # nothing loaded in tmp_path/instance
        cli_config.build_config(params(), None, None, "run")


def test_run_judges_the_cache_against_the_loaded_data_set_not_a_default(tmp_path):
    # dbio run --shared-buffers 1GiB on a 1.2 GiB load was refused: "scale = 131072 blocks (1 GiB) ... fits in
    # shared_buffers (1 GiB)", the default scale the run would never use (it takes the load's)
    from dbio import config_resolver
    from dbio.engines.base import SetupRecord, SetupSpec
    from dbio.errors import ConfigErrors

    def loaded(scale):
        return SetupRecord(setup_id="s1", spec=SetupSpec(scale, 1, 8192, "random"), status="ready", started_at="")

    def settled(record):
        return config_resolver.settle(sources, config_resolver.Facts(loaded=record, shape=config_resolver.LOADED))

    sources = Sources(cli={"shared_buffers": "1GiB", "data_dir": str(tmp_path / "i")}, env={}, cwd=tmp_path,
                      discover=False)
    assert settled(loaded(153600)).instance.shared_buffers == 1 << 30  # the default scale is not judged
    with pytest.raises(ConfigErrors,
                       match=r"^the setup record: scale = 4096 blocks \(32 MiB\).*fits in shared_buffers"):
        settled(loaded(4096))
    with pytest.raises(ConfigErrors, match=r"^scale = 131072 blocks \(1 GiB\)"):  # nothing loaded: the default is it
        settled(None)
    with pytest.raises(ConfigErrors, match=r"^--scale = 65536 blocks"):  # given: judged at once
        load_config(dataclasses.replace(sources, cli={**sources.cli, "scale": "512MiB", "schemas": 1}))
