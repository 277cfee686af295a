"""Storage layouts on the embedded instance (issue 13): the WAL in a directory of its own
(wal_dir) and the tables spread over tablespaces (data_dirs), checked before anything is made,
recorded in the result and the report, and removed by teardown and destroy.

The directories share one virtual disk on the test machine, so only where things live is
checked, never that the devices' figures differ."""

from __future__ import annotations

import json
import os
from pathlib import Path

from dbio.sweep.document import load_steps
from dbio.report import sweep_model
from tests.integration.conftest import BRIEF, SMALL, dbio, load_result, over, result_dir
from dbio.sweep_records import of as typed_sweep


def _two_dirs(dirs):
    return ["--data-dirs", str(dirs[0]), "--data-dirs", str(dirs[1])]


def test_wal_lives_in_wal_dir_and_the_record_names_it(layout_instance):
    inst, wal, _ = layout_instance
    link = inst.data_dir / "pgdata" / "pg_wal"
    assert link.is_symlink() and link.resolve() == (wal / "dbio-wal").resolve()
    assert any(p.name.startswith("0000") for p in (wal / "dbio-wal").iterdir())  # WAL segments
    assert inst.meta["wal_dir"] == str(wal / "dbio-wal")


def test_another_wal_dir_for_the_same_instance_is_refused(layout_instance, workdir):
    inst, _, _ = layout_instance
    done = dbio("instance", "start", "--data-dir", str(inst.data_dir), "--wal-dir", str(workdir / "elsewhere"))
    assert done.code == 2 and "fixed when an instance is created" in done.err, done.text
    assert not (workdir / "elsewhere").exists()


def test_bad_wal_dirs_are_refused_before_anything_is_made(workdir, layout_instance):
    _, wal, _ = layout_instance
    target = workdir / "never"
    inside = dbio("instance", "init", "--data-dir", str(target), "--wal-dir", str(target / "wal"))
    assert inside.code == 2 and "inside the instance's data directory" in inside.err, inside.text
    taken = dbio("instance", "init", "--data-dir", str(target), "--wal-dir", str(wal))
    assert taken.code == 2 and "already holds dbio-wal" in taken.err, taken.text
    a_file = workdir / "a-file"
    a_file.write_text("x")
    on_file = dbio("instance", "init", "--data-dir", str(target), "--wal-dir", str(a_file))
    assert on_file.code == 2 and "is a file" in on_file.err, on_file.text
    assert not target.exists()


def test_data_dirs_need_a_schema_each_and_the_embedded_instance(layout_instance, workdir):
    inst, _, dirs = layout_instance
    three = dbio("setup", *inst.args("layout", *SMALL), *_two_dirs(dirs), "--data-dirs", str(workdir / "d3"),
                 "--schemas", "2")
    assert three.code == 2 and "some would hold no table" in three.err, three.text
    remote = dbio("setup", "--dsn", inst.conninfo("layout"), *_two_dirs(dirs), "--schemas", "2")
    assert remote.code == 2 and "existing server (--dsn)" in remote.err, remote.text
    swept = dbio("sweep", *inst.args("layout", *SMALL), "--vary", f"data_dirs={dirs[0]},{dirs[0]}:{dirs[0]}")
    assert swept.code == 2 and "names a directory twice" in swept.err, swept.text
    a_file = workdir / "not-a-dir"
    a_file.write_text("x")
    moved = dbio("sweep", *inst.args("layout", *SMALL), "--vary", f"wal_dir=none,{a_file}")
    assert moved.code == 2 and "is a file" in moved.err, moved.text
    assert inst.meta["wal_dir"] is not None  # refused before the WAL moved anywhere
    assert not any(d.exists() for d in dirs)


def test_schemas_spread_over_tablespaces_with_per_place_figures(layout_instance):
    inst, wal, dirs = layout_instance
    place = [*_two_dirs(dirs), "--schemas", "2", "--update-pct", "50"]
    args = inst.args("layout", *SMALL, *place)
    done = dbio("setup", *args)
    assert done.code == 0, done.text
    with inst.connect("layout") as conn:
        placed = dict(conn.execute(
            "SELECT n.nspname, pg_tablespace_location(c.reltablespace) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relname = 'cf1'").fetchall())
    assert placed == {"dbio_1": str(dirs[0] / "dbio-tablespace"), "dbio_2": str(dirs[1] / "dbio-tablespace")}

    run = dbio("run", *inst.args("layout", *over(SMALL, *BRIEF), *place))
    assert run.code == 0, run.text
    directory = result_dir(run)
    doc = load_result(directory)
    storage = doc["environment"]["storage"]
    assert [s["path"] for s in storage["tablespaces"]] == [str(d) for d in dirs]
    assert storage["wal"]["path"] == str((wal / "dbio-wal").resolve())
    device = storage["wal"]["device"]
    if device:  # a block device: its diskstats were sampled, and written to by the commits
        assert doc["figures"]["devices"][device]["writes_per_s"] > 0
    report = (directory / "report.txt").read_text()
    assert f"WAL       {(wal / 'dbio-wal').resolve()} on" in report
    assert "Layout (where the data and the WAL live)" in report and "tablespace 2" in report
    assert "WAL sync (engine):" in report

    rebuilt = dbio("ops", "index", *args)  # each index rebuilt where the load put its table
    assert rebuilt.code == 0, rebuilt.text
    with inst.connect("layout") as conn:
        indexes = dict(conn.execute(
            "SELECT n.nspname, pg_tablespace_location(c.reltablespace) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relname = 'cf1_custid'").fetchall())
    assert indexes == placed

    down = dbio("teardown", "--yes", *inst.server_args("layout"))
    assert down.code == 0, down.text
    assert "dropped tablespace dbio_ts_1" in down.out + down.err
    with inst.connect() as conn:
        left = conn.execute("SELECT count(*) FROM pg_tablespace WHERE spcname LIKE 'dbio_ts_%'").fetchone()[0]
    assert left == 0
    assert os.listdir(dirs[0] / "dbio-tablespace") == []  # the directories stay for the instance's destroy
    places = json.loads((inst.data_dir / "dbio-instance.json").read_text())["places"]
    assert [p["path"] for p in places] == [str(wal / "dbio-wal"), *(str(d / "dbio-tablespace") for d in dirs)]


def test_single_schema_split_into_a_part_per_directory(layout_instance):
    """One schema over two directories: its table in two key ranges, each part in its own tablespace,
    verified part by part (rows = blocks, its keys), read through the same index plan."""
    inst, _, dirs = layout_instance
    args = [*inst.args("layout", *SMALL, "--update-pct", "50", "--work-unit", "4"), *_two_dirs(dirs)]
    done = dbio("setup", *args, "--reload", "--verify", "--load-parallel-degree", "2")
    assert done.code == 0, done.text
    assert "2 streams" in done.text, done.text  # the parts load in parallel
    assert "dbio_1.cf1_p1 keys 1..2048" in done.out and "dbio_1.cf1_p2 keys 2049..4096" in done.out, done.out
    assert "dbio_1.cf1_p2 one row per block" in done.out and "verified: all" in done.out, done.out
    with inst.connect("layout") as conn:
        placed = dict(conn.execute(
            "SELECT c.relname, pg_tablespace_location(c.reltablespace) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'dbio_1' AND c.relname LIKE 'cf1%%' "
            "AND c.relkind IN ('r', 'i')").fetchall())
        parent = conn.execute("SELECT relkind FROM pg_class WHERE oid = 'dbio_1.cf1'::regclass").fetchone()[0]
    assert parent == "p"
    assert placed == {"cf1_p1": str(dirs[0] / "dbio-tablespace"), "cf1_p1_custid": str(dirs[0] / "dbio-tablespace"),
                      "cf1_p2": str(dirs[1] / "dbio-tablespace"), "cf1_p2_custid": str(dirs[1] / "dbio-tablespace")}

    run = dbio("run", *args)
    assert run.code == 0, run.text
    doc = load_result(result_dir(run))
    assert "Index Scan" in doc["plans"]["select"]["nodes"] and "Index Scan" in doc["plans"]["update"]["nodes"]
    per_row = doc["figures"]["validity"]["blocks_read_per_row"]
    assert per_row is not None and 0.5 < per_row < 1.6, per_row  # one read per row, as a whole table gives

    rebuilt = dbio("ops", "index", *args)  # each part's index re-created where the load put it, timed together
    assert rebuilt.code == 0, rebuilt.text
    ops = load_result(result_dir(rebuilt))
    assert ops["figures"]["index"]["indexes"] == 2, ops["figures"]["index"]
    parts = ops["detail"]["indexes"]
    assert [i["table"] for i in parts] == ["cf1_p1", "cf1_p2"] and all(i["index_bytes"] > 0 for i in parts), parts
    assert ops["detail"]["seconds"] >= sum(i["seconds"] for i in parts) > 0
    with inst.connect("layout") as conn:
        again = dict(conn.execute(
            "SELECT c.relname, pg_tablespace_location(c.reltablespace) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'dbio_1' AND c.relname LIKE 'cf1%%' "
            "AND c.relkind IN ('r', 'i')").fetchall())
        tags = [conn.execute("SELECT obj_description(%s::regclass, 'pg_class')", (f"dbio_1.cf1_p{n}_custid",))
                .fetchone()[0] for n in (1, 2)]
    assert again == placed and all(t and "for setup" in t for t in tags), (again, tags)

    down = dbio("teardown", "--yes", *inst.server_args("layout"))
    assert down.code == 0, down.text
    assert "dropped table dbio_1.cf1" in down.out + down.err, down.text
    with inst.connect("layout") as conn:
        left = conn.execute("SELECT count(*) FROM pg_class WHERE relname LIKE 'cf1%'").fetchone()[0]
    assert left == 0


def test_sweep_over_layouts_moves_the_wal_and_reloads_the_tables(layout_instance, workdir):
    """--vary wal_dir=none,W --vary data_dirs=D1,D1:D2: each step's WAL and tables where it says,
    the WAL moved while the server is down, the tables loaded again over the step's directories; the
    report places the data_dirs steps by how many directories they name."""
    inst, _, dirs = layout_instance
    wal2 = workdir / "layout" / "wal2"
    done = dbio("sweep", *inst.args("layout", *over(SMALL, *BRIEF), "--sessions", "1"),
                "--vary", f"wal_dir=none,{wal2}", "--vary", f"data_dirs={dirs[0]},{dirs[0]}:{dirs[1]}", timeout=900)
    assert done.code == 0, done.text
    assert "moved the WAL to" in done.text and "loading the tables again over 2 place(s)" in done.text, done.text
    sweep_dir = next(Path(line.split(": ", 1)[1]).parent for line in done.out.splitlines()
                     if line.startswith("sweep: "))
    sweep = json.loads((sweep_dir / "sweep.json").read_text())
    assert [s["status"] for s in sweep["steps"]] == ["complete"] * 4
    placed = []
    for step in sweep["steps"]:
        storage = load_result(sweep_dir / step["name"])["environment"]["storage"]
        placed.append((storage["wal"]["path"], len(storage.get("tablespaces") or [])))
    pgdata = str((inst.data_dir / "pgdata").resolve())
    assert all(p.startswith(pgdata) for p, _ in placed[:2]), placed  # none: the WAL inside the data directory
    assert [p for p, _ in placed[2:]] == [str((wal2 / "dbio-wal").resolve())] * 2, placed
    assert [n for _, n in placed] == [1, 2, 1, 2], placed
    model = sweep_model.build(typed_sweep(sweep), load_steps(sweep_dir, typed_sweep(sweep)))
    assert model["curves"]["x"] == "data_dirs (directories)"
    assert sorted(len(line["points"]) for line in model["curves"]["lines"]) == [2, 2]  # a line per WAL place
    assert all([p["x"] for p in line["points"]] == [1, 2] for line in model["curves"]["lines"])
    assert inst.meta["wal_dir"] == str(wal2 / "dbio-wal")
    assert (inst.data_dir / "pgdata" / "pg_wal").resolve() == (wal2 / "dbio-wal").resolve()
