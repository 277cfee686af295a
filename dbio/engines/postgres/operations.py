"""Timed maintenance work on PostgreSQL (dbio ops): re-creating dbio's index, a base backup with
the bundled pg_basebackup, crash recovery after a chosen amount of WAL, and a checkpoint after a
chosen amount of dirty data.

dbio ops (dbio/jobs/ops.py) takes the host's readings around what each operation times
(`window`), so that device and CPU figures cover that part only. Settings an operation needs
(no timed checkpoint while WAL accumulates, wal_level for a base backup) are set for it on the
embedded instance and restored after, also when it is interrupted."""

from __future__ import annotations

import math
import shutil
import subprocess
import time
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Iterator

import psycopg
from psycopg import sql

from dbio.engines.base import TableJob
from dbio.engines.postgres import catalog, server, server_log, sqlfiles, tablespaces
from dbio.engines.postgres.instance.embedded import SUPERUSER, EmbeddedInstance
from dbio.engines.postgres.instance.settings import max_wal_mb
from dbio.engines.postgres.engine_options import InstanceConfig
from dbio.engines.postgres.rows import one_row
from dbio.errors import DbioError, UsageError

Window = Callable[[], AbstractContextManager[None]]
UPDATE_ROWS = 64  # rows (= blocks) per UPDATE while WAL or dirty buffers accumulate
REVISIT_SPAN = 4  # recovery with repeated changes: the span of blocks at least this many times the buffer cache
NO_TIMED_CHECKPOINT = "1d"  # checkpoint_timeout's maximum
WAL_ROOM_FACTOR = 3  # max_wal_size for a step: a checkpoint starts near max_wal_size / (1 + completion target)
DIRTY_SHARE = 0.9  # of shared_buffers: at most this much dirty data, or the buffers evict it before the checkpoint
BLOCK = 8192
COUNTERS_WAIT = 5.0  # seconds the checkpointer's counters may take to count a checkpoint


class PostgresOperations:
    """One server's operations: the embedded instance (all of them) or --dsn (index, checkpoint)."""

    def __init__(self, conninfo: str, instance: EmbeddedInstance | None, cfg: InstanceConfig, *, sessions: int,
                 dbname: str, notify: Callable[[str], None]):
        self.conninfo, self.instance, self.cfg = conninfo, instance, cfg
        self.sessions, self.dbname, self.notify = sessions, dbname, notify

    def connect(self) -> psycopg.Connection:
        return server.connect(self.conninfo, application_name="dbio:ops", notify=self.notify)

    # -- facts, checked before anything -------------------------------------------------
    def places(self, conn: psycopg.Connection, data_directory: str | None) -> dict[str, list[str]]:
        """Directories on this host that hold the data set: data, WAL, tablespaces."""
        out: dict[str, list[str]] = {}
        if data_directory:
            out["data"] = [data_directory]
            wal_dir = self.instance.meta().wal_dir if self.instance is not None else None
            out["wal"] = [wal_dir or str(Path(data_directory) / "pg_wal")]
        spaces = [row[0] for row in conn.execute(sqlfiles.text("ops/tablespace_dirs.sql")).fetchall()]
        if spaces:
            out["tablespace"] = spaces
        return out

    def dataset_bytes(self, conn: psycopg.Connection) -> int:
        return int(one_row(conn, sqlfiles.text("ops/dataset_bytes.sql"))[0])

    def loaded(self, conn: psycopg.Connection) -> Any:
        record = catalog.read_setup(conn)
        if record is None or record.status != "ready":
            raise UsageError("no data set is loaded in this database", "run dbio setup first")
        return record

    def embedded(self, what: str) -> EmbeddedInstance:
        if self.instance is None:
            raise UsageError(f"dbio ops {what} stops and starts the server: it needs the embedded instance, not --dsn",
                             "run it without --dsn (on an instance whose --data-dir is the storage under test)")
        return self.instance

    def check_wal_room(self, wal_bytes: int) -> None:
        """Before anything: the WAL the step keeps fits the WAL's filesystem."""
        needed = WAL_ROOM_FACTOR * wal_bytes + (64 << 20)
        instance = self.embedded("recovery")
        budget = instance.wal_budget()
        if budget < needed:
            raise UsageError(f"--wal {wal_bytes >> 20} MiB needs about {needed >> 20} MiB for WAL but the filesystem "
                             f"of {instance.wal_location()} can give {budget >> 20} MiB",
                             "ask for less WAL, or free some space")

    def check_dirty(self, dirty_bytes: int, cache_bytes: int, data_bytes: int) -> None:
        limit = min(int(DIRTY_SHARE * cache_bytes), data_bytes)
        if dirty_bytes > limit:
            raise UsageError(f"--dirty {dirty_bytes >> 20} MiB is more than {limit >> 20} MiB "
                             f"({DIRTY_SHARE:.0%} of shared_buffers, and at most the data set)",
                             "ask for less dirty data, or use larger shared_buffers")

    # -- index ------------------------------------------------------------------------
    def rebuild_indexes(self, conn: psycopg.Connection, window: Window) -> dict[str, Any]:
        """Drop and re-create dbio's own index on each data table, or on each part of the single schema's
        table split over data_dirs (one transaction per table: an interrupted one leaves the index as it
        was), all timed together; only indexes whose tag names this setup."""
        record = self.loaded(conn)
        rows = conn.execute(sqlfiles.text("ops/dbio_indexes.sql"),
                            {"table": catalog.DATA_TABLE, "index": catalog.DATA_INDEX}).fetchall()
        schemas = {catalog.data_schema(n) for n in range(1, record.spec.schemas + 1)}  # the load's, no others
        ours = [r for r in rows if catalog.tag_id(r[3]) == record.setup_id and r[0] in schemas]
        if not ours:
            raise UsageError("dbio's index is not on the loaded tables", "reload with dbio setup --reload")
        done, started = [], time.monotonic()
        with window():
            for schema, table, index, _, table_bytes, _ in ours:
                done.append(self._rebuild_one(conn, record, schema, table, index, table_bytes))
        return {"indexes": done, "table_bytes": sum(d["table_bytes"] for d in done),
                "index_bytes": sum(d["index_bytes"] for d in done), "seconds": time.monotonic() - started,
                "maintenance_work_mem": one_row(conn, sqlfiles.text("ops/server_facts.sql"))[1]}

    def _rebuild_one(self, conn: psycopg.Connection, record: Any, schema: str, table: str, index: str,
                     table_bytes: int) -> dict[str, Any]:
        ident = {"schema": sql.Identifier(schema), "table": sql.Identifier(table), "index": sql.Identifier(index)}
        part = catalog.part_of(table)  # a part of the split table: its own directory
        with conn.transaction():
            where = TableJob(1, "data", 0, part=part) if part else int(schema.split("_")[1])
            tablespaces.use_for(conn, record.spec, where)  # where the load put it
            conn.execute(sqlfiles.composed("ops/drop_index.sql", **ident))
            started = time.monotonic()
            conn.execute(sqlfiles.composed("data_index.sql", tag=sql.Literal(catalog.tag(record.setup_id)), **ident))
            seconds = time.monotonic() - started
        size = one_row(conn, sqlfiles.text("ops/index_size.sql"), {"qualified": f'"{schema}"."{index}"'})[0]
        return {"schema": schema, "table": table, "table_bytes": int(table_bytes), "index_bytes": int(size or 0),
                "seconds": seconds}

    # -- settings for a step -------------------------------------------------------------
    @contextmanager
    def step_settings(self, pg_settings: dict[str, str], wal_level: str | None = None) -> Iterator[InstanceConfig]:
        """The embedded instance restarted with these settings, and with its own again after (also
        when the step is interrupted or fails); --dsn: the server as it is."""
        if self.instance is None:
            yield self.cfg
            return
        step = replace(self.cfg, wal_level=wal_level or self.cfg.wal_level,
                       pg_settings=tuple({**dict(self.cfg.pg_settings), **pg_settings}.items()))
        try:
            self.instance.ensure(step, sessions=self.sessions, purpose="run", dbname=self.dbname)
            yield step
        finally:
            self.instance.ensure(self.cfg, sessions=self.sessions, purpose="run", dbname=self.dbname)

    def _roomy_wal(self, wal_bytes: int) -> dict[str, str]:
        current = max_wal_mb((self.instance.meta().settings if self.instance else {}) or {}) or 1024
        wanted = max(current, math.ceil(WAL_ROOM_FACTOR * wal_bytes / (1 << 20)))
        return {"checkpoint_timeout": NO_TIMED_CHECKPOINT, "max_wal_size": f"{wanted}MB"}

    # -- backup -------------------------------------------------------------------------
    def backup(self, destination: Path, window: Window, cold: bool = False) -> dict[str, Any]:
        """An online base backup with the bundled pg_basebackup (tar format, WAL streamed beside it,
        a fast checkpoint first) into destination, which the command checked and pg_basebackup creates;
        cold: the instance stopped (a clean shutdown) and its files copied."""
        instance = self.embedded("backup")
        if cold:
            return self._cold_backup(instance, destination, window)
        wal_level = "replica" if self.cfg.wal_level == "minimal" else None  # minimal allows no base backup
        with self.step_settings({}, wal_level):
            return self._basebackup(instance, destination, window)

    def _basebackup(self, instance: EmbeddedInstance, destination: Path, window: Window) -> dict[str, Any]:
        """pg_basebackup of the server as it runs (its settings allow it: the caller's to see to)."""
        meta = instance.meta()
        command = [instance.tool("pg_basebackup"), "-D", str(destination), "-h", str(instance.layout.socket_dir),
                   "-p", str(meta.port), "-U", SUPERUSER, "-d", f"dbname={self.dbname} application_name=dbio:ops "
                                                                "require_auth=none",
                   "-F", "t", "-X", "stream", "-c", "fast", "--no-password"]
        # The socket's directory is the server user's: whatever answers there gets no password
        # (require_auth=none) and no password file is read (root's ~/.pgpass stays unread).
        env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C", "LANG": "C", "TZ": "UTC", "PGPASSFILE": "/dev/null"}
        existed = destination.exists()
        started = time.monotonic()
        try:
            with window():
                done = subprocess.run(command, env=env, capture_output=True, text=True)
        except BaseException:  # interrupted: no half backup is left where the user will look for one
            _remove_partial(destination, existed)
            raise
        seconds = time.monotonic() - started
        if done.returncode != 0:
            _remove_partial(destination, existed)
            lines = (done.stderr or done.stdout).strip().splitlines()
            raise DbioError(f"pg_basebackup failed: {lines[-1] if lines else f'exit status {done.returncode}'}",
                            "read the server log; what it had written to the target was removed")
        files = [p for p in destination.rglob("*") if p.is_file()]
        return {"bytes": sum(p.stat().st_size for p in files), "files": len(files), "seconds": seconds,
                "format": "tar", "wal": "stream", "command": [Path(command[0]).name, *command[1:]],
                "target": str(destination)}

    def _cold_backup(self, instance: EmbeddedInstance, destination: Path, window: Window) -> dict[str, Any]:
        from dbio.engines.postgres import cold_copy

        existed = destination.exists()
        instance.stop(quiet=True)
        self.notify("stopped the embedded server for a cold backup; it starts again after the copy")
        try:
            started = time.monotonic()
            with window():
                cold_copy.copy(instance.layout.pgdata, destination, [str(p["path"]) for p in instance.meta().places])
            seconds = time.monotonic() - started
        except BaseException:
            _remove_partial(destination, existed)
            raise
        finally:
            instance.ensure(self.cfg, sessions=self.sessions, purpose="run", dbname=self.dbname)
        files = [p for p in destination.rglob("*") if p.is_file()]
        return {"bytes": sum(p.stat().st_size for p in files), "files": len(files), "seconds": seconds,
                "format": "cold copy", "command": ["copy (each file synced)", str(instance.layout.pgdata)],
                "target": str(destination)}

    # -- during a run's window (--event: jobs/disruption_actions.py) ----------------------------
    def backup_refusal(self, conn: psycopg.Connection) -> str | None:
        """Why no online backup can be taken of the server as it runs (a run cannot restart it for one), or None."""
        level, senders = one_row(conn, sqlfiles.text("ops/backup_settings.sql"))
        senders = int(senders)
        if level == "minimal" or senders < 2:  # pg_basebackup -X stream takes two senders
            return f"the server runs with wal_level = {level} and max_wal_senders = {senders}: no base backup"
        return None

    def backup_now(self, destination: Path) -> dict[str, Any]:
        """An online base backup into destination (checked: disruptions.check) while the run goes on, timed."""
        return self._basebackup(self.embedded("backup"), destination, nullcontext)

    def vacuum_now(self, conn: psycopg.Connection) -> dict[str, Any]:
        """VACUUM of dbio's loaded data tables (those its index's tag names this setup's, no other), timed, with
        the WAL it wrote: what changes is only what VACUUM itself changes (dead rows, hint bits, visibility)."""
        tables = [(schema, table) for schema, table, _, _ in self.tables(conn)]
        start = int(one_row(conn, sqlfiles.text("ops/wal_position.sql"))[0])
        started = time.monotonic()
        for schema, table in tables:
            conn.execute(sqlfiles.composed("settle/vacuum.sql", table=sql.Identifier(schema, table)))
        seconds = time.monotonic() - started
        wal = int(one_row(conn, sqlfiles.text("ops/wal_position.sql"))[0]) - start
        return {"seconds": round(seconds, 3), "tables": [f"{s}.{t}" for s, t in tables], "wal_bytes": wal}

    def tables(self, conn: psycopg.Connection) -> list[tuple[str, str, str, int]]:
        """dbio's data tables of the loaded setup, each with its index and its size."""
        record = self.loaded(conn)
        rows = conn.execute(sqlfiles.text("ops/dbio_indexes.sql"),
                            {"table": catalog.DATA_TABLE, "index": catalog.DATA_INDEX}).fetchall()
        schemas = {catalog.data_schema(n) for n in range(1, record.spec.schemas + 1)}
        ours = [(r[0], r[1], r[2], int(r[4])) for r in rows
                if catalog.tag_id(r[3]) == record.setup_id and r[0] in schemas]
        if not ours:
            raise UsageError("dbio's index is not on the loaded tables", "reload with dbio setup --reload")
        return ours

    # -- crash recovery ------------------------------------------------------------------
    def recovery(self, record: Any, wal_bytes: int, window: Window, changes_per_block: int = 1) -> dict[str, Any]:
        """Updates until wal_bytes of WAL accumulated after a checkpoint (no other checkpoint: the
        step's checkpoint_timeout and max_wal_size), an immediate stop, and the start that recovers.

        changes_per_block 1: the updates walk the table once, so each block's one change carries a
        full-page image and redo restores it without reading it: WAL replay. More: they cycle over a
        span of blocks sized so that each is changed that many times, and at least REVISIT_SPAN times
        the buffer cache, so that redo has evicted a block before its next change and reads it back."""
        instance = self.embedded("recovery")
        with self.step_settings(self._roomy_wal(wal_bytes)) as step:
            conn = self.connect()
            try:
                before, _ = self._checkpoint(conn)
                span = None if changes_per_block <= 1 else self._span(conn, record, wal_bytes, changes_per_block)
                written = self._dirty(conn, record, until_wal=wal_bytes, span=span)
                after = self._writers(conn)
            finally:
                conn.close()
            offset = instance.log_size()
            self.notify(f"crashing the server (immediate stop) after {written['wal_bytes'] / 1e6:,.0f} MB of WAL")
            instance.crash()
            started = time.time()
            with window():
                instance.start_checked(step, sessions=self.sessions)
            wall = time.time() - started
            found = server_log.recovery(instance.log_since(offset))
        scale = record.spec.scale
        return {"changes_per_block": changes_per_block, "span_blocks": span or min(written["rows"], scale),
                "changes_per_block_done": written["rows"] / (span or scale) if span else min(1.0,
                                                                                             written["rows"] / scale),
                "wal_written_bytes": written["wal_bytes"], "rows_updated": written["rows"],
                "checkpoints_during": _checkpoints(after) - _checkpoints(before), "start_wall_seconds": wall,
                "log": found, "wal_replayed_bytes": server_log.replayed_bytes(found),
                "recovery_seconds": server_log.recovery_seconds(found), "redo_seconds": found.get("redo_seconds"),
                "settings": {"checkpoint_timeout": NO_TIMED_CHECKPOINT, **self._roomy_wal(wal_bytes)}}

    # -- checkpoint -----------------------------------------------------------------------
    def checkpoint(self, record: Any, dirty_bytes: int, window: Window) -> dict[str, Any]:
        """A checkpoint after dirtying dirty_bytes of distinct blocks (counted: one row per block),
        timed, with the checkpointer's counters before and after."""
        with self.step_settings(self._roomy_wal(dirty_bytes * 2)):
            conn = self.connect()
            try:
                self._checkpoint(conn)  # start clean: only what follows is dirty
                written = self._dirty(conn, record, rows=max(1, dirty_bytes // BLOCK))
                before = self._writers(conn)
                after, seconds = self._checkpoint(conn, window)
            finally:
                conn.close()
        counted = {k: (after.get(k) or 0) - (before.get(k) or 0) for k in after if isinstance(after.get(k), (int,
                                                                                                             float))}
        return {"dirtied_bytes": written["rows"] * BLOCK, "rows_updated": written["rows"], "seconds": seconds,
                "wal_bytes": written["wal_bytes"], "writers_before": before, "writers_after": after,
                "buffers_written": counted.get("checkpoint_buffers_written"),
                "write_ms": counted.get("checkpoint_write_time"), "sync_ms": counted.get("checkpoint_sync_time")}

    # -- internals ------------------------------------------------------------------------
    def _checkpoint(self, conn: psycopg.Connection, window: Window | None = None) -> tuple[dict[str, Any], float]:
        """CHECKPOINT (inside window, when given), its seconds, and the checkpointer's counters once
        they count it: it reports them just after the checkpoint CHECKPOINT waited for."""
        done = _checkpoints(self._writers(conn))
        started = time.monotonic()
        with window() if window is not None else nullcontext():
            conn.execute(sqlfiles.text("ops/checkpoint.sql"))
        seconds = time.monotonic() - started
        deadline = time.monotonic() + COUNTERS_WAIT
        while True:
            writers = self._writers(conn)
            if _checkpoints(writers) > done or time.monotonic() > deadline:
                return writers, seconds
            time.sleep(0.05)

    def _writers(self, conn: psycopg.Connection) -> dict[str, Any]:
        return writers(conn)

    def _span(self, conn: psycopg.Connection, record: Any, wal_bytes: int, changes: int) -> int:
        """Blocks to cycle over so that wal_bytes of WAL change each about `changes` times: a first
        change's WAL (its full-page image) and a later one's measured on the first UPDATE_ROWS rows;
        never under REVISIT_SPAN times the buffer cache (redo must have evicted a block before its next
        change), never over the table."""
        statement = sqlfiles.composed("ops/update_range.sql", schema=sql.Identifier(catalog.data_schema(1)),
                                      table=sql.Identifier(catalog.DATA_TABLE))
        costs = []
        for _ in range(2):
            start = one_row(conn, sqlfiles.text("ops/wal_position.sql"))[0]
            conn.execute(statement, {"low": 1, "high": UPDATE_ROWS})
            costs.append(int(one_row(conn, sqlfiles.text("ops/wal_position.sql"))[0] - start) / UPDATE_ROWS)
        first, later = costs
        cache_blocks = int(one_row(conn, sqlfiles.text("ops/cache_blocks.sql"))[0])
        wanted = int(wal_bytes / (first + (changes - 1) * later))
        return min(record.spec.scale, max(REVISIT_SPAN * cache_blocks, wanted))

    def _dirty(self, conn: psycopg.Connection, record: Any, *, until_wal: int | None = None,
               rows: int | None = None, span: int | None = None) -> dict[str, int]:
        """UPDATEs of UPDATE_ROWS rows each, committed, over the first schema's keys in turn (wrapping
        at span, when given): until until_wal bytes of WAL were written, or rows distinct rows (blocks)
        were updated."""
        scale = span or record.spec.scale
        ident = {"schema": sql.Identifier(catalog.data_schema(1)), "table": sql.Identifier(catalog.DATA_TABLE)}
        statement = sqlfiles.composed("ops/update_range.sql", **ident)
        start = one_row(conn, sqlfiles.text("ops/wal_position.sql"))[0]
        done, key, wal, told = 0, 1, 0, 0
        limit = min(rows, scale) if rows is not None else None
        while (limit is None or done < limit) and (until_wal is None or wal < until_wal):
            high = key + UPDATE_ROWS - 1 if limit is None else min(key + UPDATE_ROWS - 1, limit)
            conn.execute(statement, {"low": key, "high": min(high, scale)})
            done += min(high, scale) - key + 1
            key = 1 if high >= scale else high + 1
            wal = int(one_row(conn, sqlfiles.text("ops/wal_position.sql"))[0] - start)
            if until_wal and wal * 4 // until_wal > told:
                told = wal * 4 // until_wal
                self.notify(f"{min(wal, until_wal) / 1e6:,.0f} of {until_wal / 1e6:,.0f} MB of WAL written")
        return {"rows": done, "wal_bytes": wal}


def _remove_partial(destination: Path, existed: bool) -> None:
    """What a failed or interrupted pg_basebackup wrote: the destination (checked empty or new before,
    writable only by us) back as it was."""
    if not destination.is_dir() or destination.is_symlink():
        return
    if existed:
        for entry in destination.iterdir():
            shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
    else:
        shutil.rmtree(destination)


def writers(conn: psycopg.Connection) -> dict[str, Any]:
    """The checkpointer's and background writer's counters, fresh (pg_stat_checkpointer from 17 on)."""
    version = one_row(conn, sqlfiles.text("ops/server_facts.sql"))[0]
    name = "stats/writers_17.sql" if version >= 170000 else "stats/writers_15.sql"
    conn.execute(sqlfiles.text("ops/writers_fresh.sql"))
    return dict(one_row(conn, sqlfiles.text(name))[0])


def checkpoint_now(conninfo: str, notify: Callable[[str], None]) -> dict[str, Any]:
    """A CHECKPOINT now, on a connection of its own (an --event's: jobs/disruptions.py), timed, with the
    buffers it wrote and its write and sync times, once the checkpointer's counters count it."""
    conn = server.connect(conninfo, application_name="dbio:event", notify=notify)
    try:
        before = writers(conn)
        done = _checkpoints(before)
        started = time.monotonic()
        conn.execute(sqlfiles.text("ops/checkpoint.sql"))
        seconds = time.monotonic() - started
        deadline = time.monotonic() + COUNTERS_WAIT
        after = writers(conn)
        while _checkpoints(after) <= done and time.monotonic() < deadline:
            time.sleep(0.05)
            after = writers(conn)
    finally:
        conn.close()
    counted = {k: v - (before.get(k) or 0) for k, v in after.items()
               if isinstance(v, (int, float)) and not isinstance(v, bool)}
    return {"seconds": round(seconds, 3), "buffers_written": counted.get("checkpoint_buffers_written"),
            "write_ms": counted.get("checkpoint_write_time"), "sync_ms": counted.get("checkpoint_sync_time")}


def _checkpoints(writers: dict[str, Any]) -> int:
    return int((writers.get("checkpoints_timed") or 0) + (writers.get("checkpoints_requested") or 0))

