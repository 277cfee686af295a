-- pg_stat_io (PostgreSQL 16 and 17: counts in units of op_bytes, no WAL rows).
SELECT coalesce(json_agg(json_build_object(
           'backend_type', backend_type, 'object', object, 'context', context,
           'reads', reads, 'read_bytes', reads * op_bytes, 'read_time', read_time,
           'writes', writes, 'write_bytes', writes * op_bytes, 'write_time', write_time,
           'writebacks', writebacks, 'writeback_time', writeback_time,
           'extends', extends, 'extend_bytes', extends * op_bytes, 'extend_time', extend_time,
           'hits', hits, 'evictions', evictions, 'reuses', reuses,
           'fsyncs', fsyncs, 'fsync_time', fsync_time)), '[]')
  FROM pg_stat_io
 WHERE coalesce(reads, 0) + coalesce(writes, 0) + coalesce(extends, 0) + coalesce(hits, 0)
     + coalesce(writebacks, 0) + coalesce(fsyncs, 0) + coalesce(evictions, 0) + coalesce(reuses, 0) > 0
