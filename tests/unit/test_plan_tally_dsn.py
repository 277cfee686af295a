import pytest

from dbio.config import Sources, load_config
from dbio.engines.base import SliceResult
from dbio.engines.postgres.dsn import dsn_has_password, redact_dsn, scrub
from dbio.run import plan as run_plan
from dbio.run.slice_totals import Tally, dense


def workload(tmp_path, **cli):
    return load_config(Sources(cli={"allow_cached": True, **cli}, cwd=tmp_path)).workload


def test_plan_maps_sessions_to_schemas_and_offs_to_never(tmp_path):
    w = workload(tmp_path, schemas="3", threads_per_schema="2", warmup="2.5s")
    p = run_plan.make_plan(w)
    assert p.schema_of == (1, 1, 2, 2, 3, 3)
    assert p.warmup == 3.0  # whole slices: the window opens on a slice boundary
    assert p.control.hot_every == run_plan.NEVER and p.control.think_every == run_plan.NEVER
    assert p.control.fill_bytes == 256


def test_plan_hot_spot_in_blocks(tmp_path):
    w = workload(tmp_path, hotspot=True, hotspot_size="8MiB", hotspot_offset="16MiB", hotspot_frequency="4",
                 redo_stress="HEAVY")
    c = run_plan.make_plan(w).control
    assert c.hot_lo == 16 * 128 + 1 and c.hot_rows == 8 * 128 and c.hot_every == 4
    assert c.fill_bytes == 2432


def slice_result(**kw):
    base = dict(iterations=10, selects=8, updates=2, scans=0, rows=80, think_seconds=0.0,
                sum_us=[800.0, 400.0, 0.0, 0.0], max_us=[150.0, 300.0, 0.0, 0.0],
                hist=[[0, 8, 0], [0, 1, 1], [0, 0, 0], [0, 0, 0]], slice_end=1.0, done=False)
    base.update(kw)
    return SliceResult(**base)


def test_tally_adds_slices():
    t = Tally(3)
    t.add(slice_result())
    t.add(slice_result(max_us=[500.0, 100.0, 0.0, 0.0]))
    assert t.counts()["iterations"] == 20 and t.rows == 160
    h = t.histograms([1.0, 2.0])
    assert h["select"]["counts"] == [0, 16, 0] and h["select"]["max_us"] == 500.0
    assert h["update"]["sum_us"] == 800.0
    sparse = t.sparse()
    assert sparse["update"]["hist"] == {"1": 2, "2": 2}
    assert dense(sparse["update"]["hist"], 3) == [0, 2, 2]
    assert "scan" not in sparse and "hot" not in sparse


def test_tally_keeps_the_hot_spot_s_selects_apart():
    """The hot spot's SELECTs: counted in selects, timed as their own kind, their rows apart; an interval
    record read back (from_sparse) keeps them, and one written before them reads with none."""
    t = Tally(3)
    t.add(slice_result(selects=8, rows=80, hot_rows=20, sum_us=[600.0, 400.0, 0.0, 4.0],
                       max_us=[150.0, 300.0, 0.0, 2.0], hist=[[0, 6, 0], [0, 1, 1], [0, 0, 0], [1, 1, 0]]))
    assert t.selects == 8 and t.hot_rows == 20 and t.counts()["hot_rows"] == 20
    h = t.histograms([1.0, 2.0])
    assert h["hot"]["counts"] == [1, 1, 0] and h["hot"]["sum_us"] == 4.0 and h["select"]["counts"] == [0, 6, 0]
    back = Tally.from_sparse(t.sparse(), 3)
    assert back.hot_rows == 20 and back.hist[3].tolist() == [1, 1, 0] and back.max_us[3] == 2.0
    older = {k: v for k, v in t.sparse().items() if k not in ("hot", "hot_rows")}
    assert Tally.from_sparse(older, 3).hot_rows == 0 and not Tally.from_sparse(older, 3).hist[3].any()
    t.remove(slice_result(selects=8, rows=80, hot_rows=20, sum_us=[600.0, 400.0, 0.0, 4.0],
                          hist=[[0, 6, 0], [0, 1, 1], [0, 0, 0], [1, 1, 0]]))
    assert t.hot_rows == 0 and not t.hist.any() and t.max_us[3] == 2.0  # a statement that long ran


@pytest.mark.parametrize("dsn", ["host=db user=u password=s3cret dbname=x", "postgresql://u:s3cret@db/x"])
def test_passwords_never_survive_redaction(dsn):
    assert dsn_has_password(dsn)
    assert "s3cret" not in redact_dsn(dsn)
    assert "s3cret" not in scrub(f"failed to connect with {dsn}")


@pytest.mark.parametrize("dsn", [
    "postgresql://u:s3cret pw@db/x",  # a space: libpq quotes the part it could not read
    "postgresql://u:s3c%zzret@db/x",  # a bad percent-encoding: quoted too
    "postgresql://u:s3c@ret@db/x",  # an '@' not written %40: the rest of it became the host
    "host=db dbname=x password='s3cret",  # an unterminated quote
])
@pytest.mark.parametrize("where", ["--dsn", "DBIO_DSN"])
def test_a_password_in_a_connection_string_libpq_cannot_read_is_never_shown(tmp_path, dsn, where):
    import os

    from tests import forked_dbio

    env = {k: v for k, v in os.environ.items() if not k.startswith(("DBIO_", "PG"))}
    args = ["--dsn", dsn] if where == "--dsn" else []
    if where == "DBIO_DSN":
        env["DBIO_DSN"] = dsn
    done = forked_dbio.completed(["run", *args], cwd=tmp_path, env={**env, "COLUMNS": "200"})
    assert done.returncode == 2 and "is not a valid connection string" in done.stderr, done.stderr
    for part in ("s3cret", "s3c", "ret@db", "zzret"):
        assert part not in done.stdout + done.stderr, done.stderr


def test_dsn_without_password_is_kept():
    assert not dsn_has_password("host=/tmp port=5 dbname=x")
    assert "dbname=x" in redact_dsn("host=/tmp port=5 dbname=x")


def test_grid_aligns_intervals_on_the_end_of_warm_up():
    from itertools import islice

    grid = run_plan.Grid(warmup=5, interval=10)
    assert list(islice(grid.points(), 4)) == [5, 15, 25, 35]
    assert grid.key(6) == 15 and grid.key(15) == 15 and grid.key(16) == 25
    one = run_plan.Grid(warmup=3, interval=1)
    assert list(islice(one.points(), 3)) == [1, 2, 3] and one.key(7) == 7
    aligned = run_plan.Grid(warmup=30, interval=10)
    assert list(islice(aligned.points(), 4)) == [10, 20, 30, 40] and aligned.key(31) == 40


@pytest.mark.parametrize("version_num, version", [(140012, "14.12"), (130020, "13.20"), (90624, "9.6.24")])
def test_servers_older_than_15_are_refused_in_one_line(version_num, version):
    from dbio.engines.postgres.server import check_version
    from dbio.errors import UsageError

    with pytest.raises(UsageError) as exc:
        check_version(version_num, version)
    assert f"PostgreSQL {version}; dbio needs PostgreSQL 15 or newer" in str(exc.value)
    assert exc.value.exit_code == 2


def test_supported_servers_pass():
    from dbio.engines.postgres.server import check_version

    for version_num in (150000, 160004, 170002, 180006):
        check_version(version_num, "x")
