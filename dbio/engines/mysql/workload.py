"""The run side of the MySQL engine: install the loop, the start barrier, slices, plans.

The barrier is a named lock (GET_LOCK) the control connection holds; each session asks for it
before its first slice and gives it back at once, so all pass when the control releases it."""

from __future__ import annotations

import functools
import re
from typing import Any, Callable

from dbio.engines.base import SliceResult
from dbio.engines.mysql import catalog, exclusive, histmap, sqlfiles, stats, wsrep
from dbio.engines.mysql.connection import Connection
from dbio.errors import DbioError, UsageError

BARRIER_WAIT_SECONDS = 86400  # a session waits for the start as long as the control holds the lock


def barrier_lock(conn: Connection, run_id: int) -> str:
    return f"dbio:run:{conn.dsn.database}:{run_id}"[:64]


def install(conn: Connection) -> None:
    """(Re)create the work loop, one procedure per schema table: a newer dbio brings its loop without a new load.
    The parts of one run install at once: one after the other (a named lock), and a loop already current
    is left alone (dropping it would fail the CALLs of another part's sessions already running). On a
    Galera node the control connection's writes stay on the node (wsrep.keep_local): each node of a
    run has its own loop and control row, as separate servers have."""
    wsrep.keep_local(conn)
    name = exclusive.install_name(conn.dsn.database)
    got, = conn.one_row("SELECT GET_LOCK(%s, %s)", (name, exclusive.INSTALL_WAIT))
    if got != 1:
        raise DbioError("another dbio has been installing the work loop in this database for "
                        f"{exclusive.INSTALL_WAIT} s", "check the other dbio processes on this database, then "
                        "run again")
    try:
        _install(conn)
    finally:
        conn.one("SELECT RELEASE_LOCK(%s)", (name,))


def _install(conn: Connection) -> None:
    record = catalog.read_setup(conn)
    if record is None:
        raise UsageError("this database holds no dbio setup", "load it first with dbio setup")
    routines = catalog.dbio_routines(conn)
    template = loop_template(catalog.literal(conn, catalog.tag(record.setup_id)))
    wanted = {catalog.procedure(i): template.replace("{procedure}", sqlfiles.ident(catalog.procedure(i)))
              .replace("{table}", sqlfiles.ident(catalog.data_table(i))) for i in range(1, record.spec.schemas + 1)}
    if _current(conn, record.setup_id, routines, wanted):
        return
    for name in catalog.loop_procedures(record.spec.schemas):
        if name in routines:
            if catalog.tag_id(routines[name]) != record.setup_id:
                raise catalog.foreign_procedure(name)
            conn.execute(f"DROP PROCEDURE {sqlfiles.ident(name)}")
    for statement in wanted.values():
        conn.execute(statement)
    # a load made before UPDATEs had their own range, or before --rate (MySQL 8 has no ADD COLUMN IF NOT EXISTS)
    if not _has_column(conn, "update_work_unit"):
        conn.execute("ALTER TABLE dbio_run_control ADD COLUMN update_work_unit INT AFTER work_unit")
    if not _has_column(conn, "latency_limit_us"):
        conn.execute("ALTER TABLE dbio_run_control ADD COLUMN rate_per_s DOUBLE AFTER think_max, "
                     "ADD COLUMN rate_uniform TINYINT NOT NULL DEFAULT 0 AFTER rate_per_s, "
                     "ADD COLUMN latency_limit_us DOUBLE NOT NULL DEFAULT 0 AFTER rate_uniform")
    if not _has_column(conn, "rate_sessions"):  # before a node's sessions shared one schedule
        conn.execute("ALTER TABLE dbio_run_control ADD COLUMN rate_sessions INT AFTER latency_limit_us")
        tag = catalog.literal(conn, catalog.tag(record.setup_id))
        conn.execute("CREATE TABLE IF NOT EXISTS dbio_rate_ticket (run_id BIGINT NOT NULL PRIMARY KEY, "
                     f"k BIGINT NOT NULL) ENGINE = MEMORY COMMENT = {tag}")


def _has_column(conn: Connection, column: str) -> bool:
    has, = conn.one_row("SELECT count(*) FROM information_schema.columns WHERE table_schema = DATABASE() "
                        "AND table_name = 'dbio_run_control' AND column_name = %s", (column,))
    return bool(has)


def _current(conn: Connection, setup_id: str, routines: dict[str, str], wanted: dict[str, str]) -> bool:
    """This dbio's loop is installed for this setup (each procedure's body as this dbio makes it, no older
    dbio's procedure beside them) with the control table's latest column."""
    if set(routines) & set(catalog.loop_procedures(len(wanted))) != set(wanted):
        return False
    if any(catalog.tag_id(routines[name]) != setup_id for name in wanted):
        return False
    bodies = dict(conn.query(sqlfiles.statement("loop_bodies.sql")))
    return all(bodies.get(name) == _body(text) for name, text in wanted.items()) \
        and _has_column(conn, "update_work_unit") and _has_column(conn, "rate_sessions")


def _body(statement: str) -> str:
    """A CREATE PROCEDURE's body as information_schema.ROUTINES keeps it (ROUTINE_DEFINITION)."""
    return statement[statement.index("\nBEGIN") + 1:]


# A latency VALUE counted in the histogram of KIND (0-based): slice.sql's {count VALUE KIND}, written once for
# the statements' own latencies and --rate's two, inline because a stored function's call costs per statement.
COUNT = """SET v_b = CAST(SUBSTRING(v_map, IF(VALUE < 8, GREATEST(FLOOR(VALUE), 0),
                                   LEAST(8 + (FLOOR(LOG2(VALUE)) - 3) * {sub}
                                         + FLOOR((VALUE / POW(2, FLOOR(LOG2(VALUE))) - 1) * {sub}), {last_key}))
                                * {map_width} + 1, {map_width}) AS UNSIGNED);
SET v_pos = (KIND * v_buckets + v_b
             + (VALUE >= SUBSTRING(v_bound, v_b * {bound_width} + 1, {bound_width}) + 0e0)) * {count_width} + 1;
SET v_hist = INSERT(v_hist, v_pos, {count_width},
                    LPAD(CAST(SUBSTRING(v_hist, v_pos, {count_width}) AS UNSIGNED) + 1, {count_width}, '0'));"""


def _counted(found: re.Match[str]) -> str:
    """One {count VALUE KIND} of slice.sql written out, at its line's indent."""
    indent, value, kind = found.group(1), found.group(2), found.group(3)
    return "\n".join(indent + line for line in COUNT.replace("VALUE", value).replace("KIND", kind).splitlines())


def loop_template(tag_literal: str) -> str:
    """slice.sql with the histogram's constants and the tag; {procedure} and {table} are left per schema."""
    text = sqlfiles.statement("slice.sql").replace("{tag}", tag_literal)
    text = re.sub(r"(?m)^( *)\{count (\w+) (\w+|\([^)]*\))\}$", _counted, text)
    for key, value in {"sub": histmap.SUB, "last_key": histmap.KEYS - 1, "map_width": histmap.MAP_WIDTH,
                       "bound_width": histmap.BOUND_WIDTH, "count_width": histmap.COUNT_WIDTH,
                       "nonprimary_seconds": wsrep.NONPRIMARY_SECONDS}.items():
        text = text.replace("{" + key + "}", str(value))
    return text


def prepare_run(conn: Connection, run_id: int, params: dict[str, Any]) -> None:
    values = {"rate_sessions": None, **{k: v for k, v in params.items() if k != "bounds_us"}}
    conn.execute(sqlfiles.statement("run_control.sql"), {"run_id": run_id, **values})
    if values.get("rate_per_s") is not None and values["rate_sessions"]:
        conn.execute("REPLACE INTO dbio_rate_ticket (run_id, k) VALUES (%s, 0)", (run_id,))


def hold_barrier(conn: Connection, run_id: int) -> None:
    got, = conn.one_row("SELECT GET_LOCK(%s, 10)", (barrier_lock(conn, run_id),))
    if got != 1:
        raise DbioError("could not take the run's start barrier (a lock of the same name is held)",
                        "make sure no other dbio runs on this database")


def waiting_at_barrier(conn: Connection, run_id: int) -> int:
    return barrier_waiters(stats.processlist(conn, full=True), barrier_lock(conn, run_id), conn.thread_id)


def barrier_waiters(connections: list[stats.Process], lock: str, own_id: int) -> int:
    """How many connections wait for the barrier's lock (pure): in a user lock, on a statement that names it."""
    return sum(1 for i, _, _, state, statement in connections
               if i != own_id and "user lock" in state.lower() and lock in statement)


def release(conn: Connection, run_id: int, *, warmup: float, run_time: float,
            start: float | None = None) -> tuple[float, float, float | None]:
    if start is None:
        start = float(conn.one_row("SELECT UNIX_TIMESTAMP(SYSDATE(6))")[0])
    conn.execute(sqlfiles.statement("release.sql"),
                 {"run_id": run_id, "start": start, "warmup": warmup, "run_time": run_time})
    conn.one("SELECT RELEASE_LOCK(%s)", (barrier_lock(conn, run_id),))
    return start, start + warmup, start + warmup + run_time if run_time > 0 else None


def forget_run(conn: Connection, run_id: int) -> None:
    conn.execute("DELETE FROM dbio_run_control WHERE run_id = %s", (run_id,))
    conn.execute("DELETE FROM dbio_rate_ticket WHERE run_id = %s", (run_id,))
    conn.one("SELECT RELEASE_ALL_LOCKS()")


def forget_abandoned_runs(conn: Connection, alive: Callable[[str], bool]) -> int:
    """Runs whose dbio process is gone: their sessions end with their slice (the client is gone)."""
    rows = conn.query("SELECT run_id, client, created_at < UNIX_TIMESTAMP() - 86400 FROM dbio_run_control")
    gone = [run_id for run_id, client, old in rows if (client and not alive(client)) or (not client and old)]
    for run_id in gone:
        conn.execute("DELETE FROM dbio_run_control WHERE run_id = %s", (run_id,))
        conn.execute("DELETE FROM dbio_rate_ticket WHERE run_id = %s", (run_id,))
    return len(gone)


def init_session(conn: Connection, schema_index: int, bounds: list[float]) -> None:
    """The session's histogram map and bounds (histmap.py), kept in its user variables for every slice."""
    map_text, bounds_text = session_histogram(tuple(bounds))
    conn.execute(sqlfiles.statement("session_init.sql"), {"map": map_text, "bounds": bounds_text})
    conn.schema_index = schema_index


@functools.lru_cache(maxsize=8)
def session_histogram(bounds: tuple[float, ...]) -> tuple[str, str]:
    """The map and bounds strings of a run's bounds, made once for all its sessions (the map walks the bounds for
    each of its 1,608 fine keys: 20-50 ms of the client's CPU a session, seconds of a 64-session start)."""
    return histmap.build_map(bounds), histmap.build_bounds(bounds)


def pass_barrier(conn: Connection, run_id: int) -> None:
    name = barrier_lock(conn, run_id)
    conn.one("SELECT GET_LOCK(%s, %s)", (name, BARRIER_WAIT_SECONDS))
    conn.one("SELECT RELEASE_LOCK(%s)", (name,))


def call_slice(conn: Connection, buckets: int, *, run_id: int, session: int, barrier: bool, iterations_before: int,
               selects_before: int, max_iterations: int | None, think_left: float, due: float | None = None
               ) -> SliceResult:
    if barrier:
        pass_barrier(conn, run_id)
    with conn.raw.cursor() as cur:
        cur.execute(f"CALL {sqlfiles.ident(catalog.procedure(conn.schema_index))}(%s, %s, %s, %s, %s, %s, %s)",
                    (run_id, session, iterations_before, selects_before, max_iterations, think_left, due))
        packed, counts = cur.fetchone()
        while cur.nextset():  # the CALL's own status result
            pass
    return slice_result(packed, counts, buckets)


SLICE_FIELDS = 26  # the numbers of slice.sql's first column, in its order
DUE_FIELD = 19  # the one that may be empty: the next intended start, absent without a rate


def slice_fields(packed: str | bytes) -> list[str]:
    """The numbers of a slice's first column, as their text (pure): slice.sql writes them in one column, its
    histogram in the second. Only the next due time may be empty."""
    text = packed.decode("ascii") if isinstance(packed, (bytes, bytearray)) else packed
    fields = text.split(",")
    if len(fields) != SLICE_FIELDS:
        raise ValueError(f"the loop's slice gave {len(fields)} numbers, expected {SLICE_FIELDS}")
    if any(not field for i, field in enumerate(fields) if i != DUE_FIELD):
        raise ValueError("the loop's slice left a counter empty")
    return fields


def slice_result(packed: str | bytes, counts: str | bytes, buckets: int) -> SliceResult:
    """A slice's result from slice.sql's two columns (pure)."""
    (iterations, selects, updates, scans, rows, think_s, think_owed, s1, s2, s3, m1, m2, m3, s4, m4, hot_rows,
     retries, end, done, next_due, late, s5, m5, s6, m6, early) = slice_fields(packed)
    hist = histmap.parse_counts(counts, buckets)
    kinds = 6 if len(hist) > 4 else 4  # with a rate, kinds 5 and 6: from the intended start, and the schedule lag
    return SliceResult(iterations=int(iterations), selects=int(selects), updates=int(updates), scans=int(scans),
                       rows=int(rows), hot_rows=int(hot_rows), think_seconds=float(think_s),
                       sum_us=[float(v) for v in (s1, s2, s3, s4, s5, s6)[:kinds]],
                       max_us=[float(v) for v in (m1, m2, m3, m4, m5, m6)[:kinds]], hist=hist,
                       slice_end=float(end), done=done == "1", think_left=float(think_owed), retries=int(retries),
                       due=float(next_due) if next_due else None, late=int(late), due_before_window=int(early))


EXPECTED_KEY = "custid"


def plans(conn: Connection, schema_index: int, *, scans: bool = False) -> dict[str, Any]:
    """The loop's statements as the optimizer plans them; refused unless both use the custid index.
    scans: the scan table's full scan too (its plan recorded, not checked)."""
    table = sqlfiles.ident(catalog.data_table(schema_index))
    out: dict[str, Any] = {}
    for kind in ("select", "update"):
        rows = _explained(conn, sqlfiles.statement(f"explain_{kind}.sql").replace("{table}", table))
        nodes = [f"{r.get('type')} on {r.get('key') or 'no index'}" for r in rows]
        if not any(r.get("key") == EXPECTED_KEY for r in rows):
            raise DbioError(f"the {kind} statement would run as {', '.join(nodes)}, not through the index on custid",
                            "check the table (dbio setup --verify) and the server's optimizer settings")
        out[kind] = {"nodes": nodes, "plan": [{k: _plain(v) for k, v in r.items()} for r in rows]}
    if scans:
        rows = _explained(conn, sqlfiles.statement("explain_scan.sql").replace("{table}",
                                                                               sqlfiles.ident(catalog.SCAN_TABLE)))
        out["scan"] = {"nodes": [f"{r.get('type')} on {r.get('key') or 'no index'}" for r in rows],
                       "plan": [{k: _plain(v) for k, v in r.items()} for r in rows]}
    return {**out, "access_path": "index", "expected_node": f"range on {EXPECTED_KEY}"}


def _explained(conn: Connection, statement: str) -> list[dict[str, Any]]:
    with conn.raw.cursor() as cur:
        cur.execute(statement)
        names = [d[0].lower() for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]


def _plain(value: Any) -> Any:
    return value if value is None or isinstance(value, (int, float, str)) else str(value)


def server_clock(conn: Connection) -> float:
    return float(conn.one_row("SELECT UNIX_TIMESTAMP(SYSDATE(6))")[0])
