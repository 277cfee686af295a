"""The run side of the PostgreSQL engine: install the loop, start barrier, slices, plans."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any, Callable

import numpy as np
import psycopg
from psycopg import sql

from dbio.engines.base import SliceRequest, SliceResult, application_prefix
from dbio.engines.postgres import catalog, lean_call, sqlfiles
from dbio.engines.postgres.exclusive import INSTALL, LOCK_KEYS
from dbio.engines.postgres.hist_arrays import arrays_of
from dbio.engines.postgres.rows import no_row, one_row, one_row_async
from dbio.errors import DbioError, UsageError

KINDS = ("select", "update", "scan", "hot")  # run/tally.KINDS: the loop's kinds 1 to 4


def install(conn: psycopg.Connection) -> None:
    """(Re)create the work loop procedure: a newer dbio brings its loop without a new load."""
    with conn.transaction():
        # the parts of one run install at once: one after the other, and a loop already current is
        # left alone (re-creating it would lock the run's control table under another part's sessions)
        conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_KEYS[0], INSTALL))
        setup_id = catalog.owner(conn)
        if setup_id is None:
            raise UsageError("this database holds no dbio setup", "load it first with dbio setup")
        if _current(conn, setup_id):
            return
        old = conn.execute(
            "SELECT p.oid::regprocedure::text, obj_description(p.oid, 'pg_proc'), p.prosrc FROM pg_proc p "
            "JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'dbio' AND p.proname = 'slice'"
        ).fetchall()
        # This dbio's loop already there is kept: dropped and made again, it would be another procedure, and a
        # standby's session that found the one replaced fails as the drop is replayed ("cache lookup failed for
        # function", its standby sessions waiting at their barrier while the primary's run installed it again).
        if not (len(old) == 1 and old[0][1] == catalog.tag(setup_id) and old[0][2] == loop_body()):
            for signature, comment, _ in old:  # an older dbio's loop may have another signature
                if catalog.tag_id(comment) == setup_id or comment == catalog.LEGACY_LOOP_TAG:
                    conn.execute(sql.SQL("DROP PROCEDURE {}").format(sql.SQL(signature)))
            conn.execute(sqlfiles.text("slice.sql"))
            signature = one_row(
                conn, "SELECT p.oid::regprocedure::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
                "WHERE n.nspname = 'dbio' AND p.proname = 'slice'")[0]
            conn.execute(sql.SQL("COMMENT ON PROCEDURE {} IS {}").format(sql.SQL(signature),
                                                                        sql.Literal(catalog.tag(setup_id))))
        conn.execute("ALTER TABLE dbio.run_control ADD COLUMN IF NOT EXISTS client text")  # loads made by dbio 0.1
        conn.execute("ALTER TABLE dbio.run_control ADD COLUMN IF NOT EXISTS update_work_unit integer")
        conn.execute("ALTER TABLE dbio.run_control ADD COLUMN IF NOT EXISTS scan_workers integer NOT NULL DEFAULT 0")
        for column in ("rate_per_s double precision", "rate_uniform boolean NOT NULL DEFAULT false",
                       "latency_limit_us double precision NOT NULL DEFAULT 0",
                       "rate_sessions integer"):  # loads of dbio before --rate
            conn.execute(f"ALTER TABLE dbio.run_control ADD COLUMN IF NOT EXISTS {column}")


def _current(conn: psycopg.Connection, setup_id: str) -> bool:
    """This dbio's loop is installed for this setup, with the control table's latest column."""
    rows = conn.execute(sqlfiles.text("loop_current.sql")).fetchall()
    return len(rows) == 1 and rows[0][0] == loop_body() and catalog.tag_id(rows[0][1]) == setup_id and rows[0][2]


def advisory_key(run_id: int) -> tuple[int, int]:
    """pg_locks shows a bigint advisory key as classid (high 32 bits) and objid (low 32 bits)."""
    return (run_id >> 32) & 0xFFFFFFFF, run_id & 0xFFFFFFFF


def rate_sequence(run_id: int) -> sql.Identifier:
    """The node's shared schedule with a rate: each statement's arrival number (slice.sql)."""
    return sql.Identifier("dbio", f"rate_{run_id}")


def prepare_run(conn: psycopg.Connection, run_id: int, params: dict[str, Any]) -> None:
    conn.execute(sqlfiles.text("run_control.sql"), {"run_id": run_id, "rate_sessions": None, **params})
    if params.get("rate_per_s") is not None and params.get("rate_sessions"):
        conn.execute(sql.SQL("CREATE SEQUENCE IF NOT EXISTS {} MINVALUE 1").format(rate_sequence(run_id)))


def hold_barrier(conn: psycopg.Connection, run_id: int) -> None:
    conn.execute("SELECT pg_advisory_lock(%s::bigint)", (run_id,))


def waiting_at_barrier(conn: psycopg.Connection, run_id: int) -> int:
    classid, objid = advisory_key(run_id)
    return int(one_row(conn, sqlfiles.text("barrier_waiting.sql"), {"classid": classid, "objid": objid})[0])


def release(conn: psycopg.Connection, run_id: int, *, warmup: float, run_time: float,
            start: float | None = None) -> tuple[float, float, float | None]:
    """Write the common start (now, or start) and release the barrier; returns (start, window open,
    deadline) in server epoch."""
    row = conn.execute(sqlfiles.text("release.sql"),
                       {"run_id": run_id, "warmup": warmup, "run_time": run_time, "start": start}).fetchone()
    conn.execute("SELECT pg_advisory_unlock(%s::bigint)", (run_id,))
    if row is None:  # its control row, made by prepare_run, was deleted since: the sessions have no start
        raise DbioError(f"run {run_id} cannot start: its row in dbio.run_control was removed after it was made",
                        "something else changed dbio's control tables while the run started; run it again")
    return float(row[0]), float(row[1]), None if row[2] is None else float(row[2])


def forget_abandoned_runs(conn: psycopg.Connection, alive: Callable[[str], bool]) -> int:
    """Runs whose dbio process is gone: end any session still running and remove the run."""
    rows = conn.execute("SELECT run_id, client, started_at < now() - interval '1 day' FROM dbio.run_control").fetchall()
    gone = [run_id for run_id, client, old in rows if (client and not alive(client)) or (not client and old)]
    for run_id in gone:
        conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                     "WHERE application_name LIKE %s AND pid <> pg_backend_pid()",
                     (application_prefix(run_id).replace("%", r"\%") + "%",))
        conn.execute("DELETE FROM dbio.run_control WHERE run_id = %s", (run_id,))
        conn.execute(sql.SQL("DROP SEQUENCE IF EXISTS {}").format(rate_sequence(run_id)))
    return len(gone)


def has_workload(conn: psycopg.Connection) -> bool:
    """This dbio's loop is there, body for body: on a read-only node it can only come from its primary
    (dbio setup or a dbio run there installs it), and a loop another dbio installed there may not do
    what this one's results say."""
    bodies = conn.execute(
        "SELECT p.prosrc FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
        "WHERE n.nspname = 'dbio' AND p.proname = 'slice'").fetchall()
    return any(body == loop_body() for body, in bodies)


def loop_body() -> str:
    """The loop's body as PostgreSQL keeps it (pg_proc.prosrc): slice.sql's text between its dollar quotes."""
    return sqlfiles.text("slice.sql").split("$$")[1]


def release_barrier(conn: psycopg.Connection, run_id: int) -> None:
    """A read-only node's barrier: released without a control row (its sessions carry the control)."""
    conn.execute("SELECT pg_advisory_unlock_all()")


def forget_run(conn: psycopg.Connection, run_id: int) -> None:
    conn.execute("DELETE FROM dbio.run_control WHERE run_id = %s", (run_id,))
    conn.execute(sql.SQL("DROP SEQUENCE IF EXISTS {}").format(rate_sequence(run_id)))
    conn.execute("SELECT pg_advisory_unlock_all()")


def session_settings(schema_index: int, access_path: str) -> dict[str, str]:
    return {
        "search_path": f'"{catalog.data_schema(schema_index)}"',
        "enable_bitmapscan": "on" if access_path == "bitmap" else "off",
        "enable_indexscan": "off" if access_path == "bitmap" else "on",
    }


# session_init.sql's settings, sent in the connection's startup packet instead of a query: one
# round trip and one statement less per session (2,048 sessions connect 15% faster, bench_sessions.py)
STARTUP_SETTINGS = (("plan_cache_mode", "force_generic_plan"), ("max_parallel_workers_per_gather", "0"),
                    ("jit", "off"), ("synchronize_seqscans", "off"), ("statement_timeout", "0"), ("lock_timeout", "0"),
                    ("idle_in_transaction_session_timeout", "0"), ("idle_session_timeout", "0"))


def startup_options(schema_index: int, access_path: str, version_num: int, options: str) -> str:
    """The libpq `options` of a session: what was there (the DSN's, or PGOPTIONS), then dbio's
    settings, which come later and so win (pure). Same settings as session_init.sql."""
    pairs = [*session_settings(schema_index, access_path).items(), *STARTUP_SETTINGS]
    if version_num >= 170000:
        pairs.append(("transaction_timeout", "0"))
    ours = " ".join(f"-c {name}={_escape_option(value)}" for name, value in pairs)
    return f"{options.strip()} {ours}".strip()


def _escape_option(value: str) -> str:
    """libpq splits options at spaces; a backslash keeps one (or itself) in the value."""
    return value.replace("\\", "\\\\").replace(" ", "\\ ")


async def init_session(conn: psycopg.AsyncConnection, schema_index: int, access_path: str) -> int:
    row = await one_row_async(conn, sqlfiles.text("session_init.sql"), session_settings(schema_index, access_path))
    return int(row[-1])


def init_session_sync(conn: psycopg.Connection, schema_index: int, access_path: str) -> int:
    row = one_row(conn, sqlfiles.text("session_init.sql"), session_settings(schema_index, access_path))
    return int(row[-1])


async def call_slice(conn: psycopg.AsyncConnection, request: SliceRequest) -> SliceResult:
    # binary results: the histogram arrays arrive without text parsing (64 sessions call every second), the
    # histogram straight into an array (hist_arrays)
    arrays_of(conn)
    query = sqlfiles.text("slice_call.sql")
    row = await lean_call.one_row(conn, query, {
        "run_id": request.run_id, "session": request.session, "barrier": request.barrier,
        "iterations_before": request.iterations_before, "selects_before": request.selects_before,
        "max_iterations": request.max_iterations, "think_left": request.think_left, "due": request.due,
        "control": None if request.control is None else control_json(request.control)}, binary=True)
    if row is None:
        raise no_row(conn, query)
    (iterations, selects, updates, scans, rows, hot_rows, think_s, think_left, sum_us, max_us, hist, slice_end,
     done, due, late, early, rounding_us) = row
    # with a rate, kinds 5 and 6: each statement's latency from its intended start and its schedule lag
    return SliceResult(iterations=iterations, selects=selects, updates=updates, scans=scans, rows=rows,
                       hot_rows=hot_rows, think_seconds=think_s, sum_us=list(sum_us), max_us=list(max_us),
                       hist=np.asarray(hist, dtype=np.int64), slice_end=slice_end.timestamp(), done=bool(done),
                       think_left=think_left, due=due, late=int(late or 0),
                       due_before_window=int(early or 0), wait_rounding_us=float(rounding_us or 0.0))


TIMES = ("started_at", "window_open", "deadline")  # epoch seconds in the run's control; timestamptz in the row


def control_json(control: dict[str, Any]) -> str:
    """The run's control as the loop reads it into a dbio.run_control row (pure): instants as timestamps."""
    out = dict(control)
    for key in TIMES:
        if out.get(key) is not None:
            out[key] = datetime.fromtimestamp(out[key], timezone.utc).isoformat()
    return json.dumps(out)


def explain(conn: psycopg.Connection, *, update: bool) -> list[dict[str, Any]]:
    """EXPLAIN (FORMAT JSON) of the loop's statement as the sessions run it (generic plan)."""
    name = "dbio_explain_update" if update else "dbio_explain_select"
    conn.execute(sqlfiles.text("explain_update.sql" if update else "explain_select.sql"))
    try:
        args = "(1, 8, '\\x00'::bytea)" if update else "(1, 8)"
        row = one_row(conn, f"EXPLAIN (FORMAT JSON, VERBOSE) EXECUTE {name}{args}")
    finally:
        conn.execute(sql.SQL("DEALLOCATE {}").format(sql.Identifier(name)))
    plan = row[0]
    return json.loads(plan) if isinstance(plan, str) else plan


def explain_scan(conn: psycopg.Connection, workers: int) -> list[dict[str, Any]]:
    """EXPLAIN (FORMAT JSON) of the loop's scan as it runs: with workers > 0, under the parallel settings
    the loop sets around it."""
    with conn.transaction():
        if workers > 0:
            conn.execute(sqlfiles.text("parallel_scan_settings.sql"), {"workers": str(workers)})
        row = one_row(conn, sqlfiles.composed("explain_scan.sql", schema=sql.Identifier(catalog.data_schema(1))))
    plan = row[0]
    return json.loads(plan) if isinstance(plan, str) else plan


ACCESS_PATH_NODES = {"index": "Index Scan", "bitmap": "Bitmap Heap Scan"}


def check_access_path(plans: dict[str, Any], access_path: str) -> dict[str, Any]:
    """plans, marked with the access path asked for; refused when a statement would not use it."""
    expected = ACCESS_PATH_NODES[access_path]
    for kind in ("select", "update"):
        nodes = plans[kind]["nodes"]
        if expected not in nodes:
            raise DbioError(f"the {kind} statement would run as {' > '.join(nodes)}, not as a {expected}",
                            "check the table's statistics (dbio setup --verify) and the server's planner settings")
    return {**plans, "access_path": access_path, "expected_node": expected}


def plan_nodes(plan: list[dict[str, Any]]) -> list[str]:
    """Node types of an EXPLAIN JSON plan, depth first (pure)."""
    out: list[str] = []

    def walk(node: dict[str, Any]) -> None:
        # as EXPLAIN's text names them: "Finalize Aggregate", "Parallel Seq Scan"
        mode = node.get("Partial Mode")
        name = f"{mode} {node['Node Type']}" if mode in ("Partial", "Finalize") else node["Node Type"]
        out.append(f"Parallel {name}" if node.get("Parallel Aware") else name)
        for child in node.get("Plans", []):
            walk(child)

    for entry in plan:
        walk(entry["Plan"])
    return out
