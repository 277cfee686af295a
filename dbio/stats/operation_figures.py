"""The figures of a maintenance operation (pure): dbio ops, an "ops" document's figures, and which
each operation reports. Read by name through stats/catalogue.py's `ops_figure`.
"""

from __future__ import annotations

from dbio.stats.figure_record import DIFFERENCE, HIGHER, LOWER, POINTS, Figure
from dbio.stats.figure_record import at_path as _fig

# Read through ops_figure(), never mixed with a run's: a run has none of them, an operation none of a run's.

OPS_FIGURES: tuple[Figure, ...] = (
    _fig("ops_seconds", "seconds", "Time", "s", "seconds", "the operation's timed part, real elapsed seconds", **LOWER),
    _fig("ops_bytes", "bytes", "Bytes processed", "bytes", "count", "data read (index: the tables), written (backup, "
         "checkpoint) or WAL replayed (recovery)", compare=DIFFERENCE),
    _fig("ops_mb_per_s", "mb_per_s", "MB/s", "MB/s", "rate", "bytes processed / time, decimal MB", **HIGHER),
    _fig("ops_busy_pct", "cpu.host.busy_pct", "Host CPU busy", "%", "pct", "/proc/stat over the timed part",
         compare=POINTS),
    _fig("ops_busy_cores", "cpu.host.busy_cores", "Busy CPUs", "CPUs", "rate", "busy CPU seconds / elapsed seconds"),
    _fig("ops_iowait_pct", "cpu.host.iowait_pct", "Host CPU iowait", "%", "pct", compare=POINTS),
    _fig("load_streams", "load.streams", "Load streams", "streams", "count", compare=DIFFERENCE),
    _fig("index_bytes", "index.index_bytes", "Index size", "bytes", "count", compare=DIFFERENCE),
    _fig("index_count", "index.indexes", "Indexes re-created", "indexes", "count", compare=DIFFERENCE),
    _fig("backup_files", "backup.files", "Backup files", "files", "count", compare=DIFFERENCE),
    _fig("sequential_read_mb_per_s", "backup.sequential_read_mb_per_s", "Device sequential read (fio)", "MB/s", "rate",
         "fio 1 MiB O_DIRECT sequential reads of the data files just before the backup", **HIGHER),
    _fig("backup_share_of_sequential", "backup.share_of_sequential", "Backup MB/s / sequential read", "ratio", "rate",
         "the backup's rate against the device's sequential read rate", **HIGHER),
    _fig("wal_written_bytes", "recovery.wal_written_bytes", "WAL written before the crash", "bytes", "count",
         compare=DIFFERENCE),
    _fig("wal_replayed_bytes", "recovery.wal_replayed_bytes", "WAL replayed", "bytes", "count",
         "redo done LSN - redo start LSN (server log)", compare=DIFFERENCE),
    _fig("recovery_seconds", "recovery.recovery_seconds", "Recovery (start to ready)", "s", "seconds",
         "server log: starting PostgreSQL to ready to accept connections", **LOWER),
    _fig("redo_seconds", "recovery.redo_seconds", "Redo", "s", "seconds", "server log: redo done ... elapsed", **LOWER),
    _fig("after_redo_seconds", "recovery.after_redo_seconds", "After redo", "s", "seconds",
         "server log: redo done to ready (the end-of-recovery checkpoint writes what redo dirtied)", **LOWER),
    _fig("recovery_seconds_per_gb", "recovery.seconds_per_gb", "Recovery seconds per GB of WAL", "s/GB", "rate",
         "recovery seconds / GB of WAL replayed: recovery time for any WAL size", **LOWER),
    _fig("redo_seconds_per_gb", "recovery.redo_seconds_per_gb", "Redo seconds per GB of WAL", "s/GB", "rate", **LOWER),
    _fig("checkpoints_during", "recovery.checkpoints_during", "Checkpoints while WAL accumulated", "checkpoints",
         "count", compare=DIFFERENCE),
    _fig("dirtied_bytes", "checkpoint.dirtied_bytes", "Dirtied before the checkpoint", "bytes", "count",
         compare=DIFFERENCE),
    _fig("checkpoint_buffers_written", "checkpoint.buffers_written", "Buffers the checkpoint wrote", "buffers", "count",
         compare=DIFFERENCE),
    _fig("checkpoint_write_ms", "checkpoint.write_ms", "Checkpoint write time", "ms", "count",
         "the checkpointer's write_time", **LOWER),
    _fig("checkpoint_sync_ms", "checkpoint.sync_ms", "Checkpoint sync time", "ms", "count",
         "the checkpointer's sync_time", **LOWER),
)
_OPS_BY_NAME = {f.name: f for f in OPS_FIGURES}
# the figures each operation reports, after the common ones
OPS_COMMON = ("ops_seconds", "ops_bytes", "ops_mb_per_s", "ops_busy_pct", "ops_busy_cores", "ops_iowait_pct")
OPS_OWN = {"load": ("load_streams",), "index": ("index_count", "index_bytes"),
           "backup": ("backup_files", "sequential_read_mb_per_s", "backup_share_of_sequential"),
           "recovery": ("wal_written_bytes", "wal_replayed_bytes", "recovery_seconds", "redo_seconds",
                        "after_redo_seconds", "recovery_seconds_per_gb", "redo_seconds_per_gb", "checkpoints_during"),
           "checkpoint": ("dirtied_bytes", "checkpoint_buffers_written", "checkpoint_write_ms", "checkpoint_sync_ms")}
