-- pg_stat_io (PostgreSQL 18: byte counters, WAL rows). Only rows that have counted something.
SELECT coalesce(json_agg(json_build_object(
           'backend_type', backend_type, 'object', object, 'context', context,
           'reads', reads, 'read_bytes', read_bytes, 'read_time', read_time,
           'writes', writes, 'write_bytes', write_bytes, 'write_time', write_time,
           'writebacks', writebacks, 'writeback_time', writeback_time,
           'extends', extends, 'extend_bytes', extend_bytes, 'extend_time', extend_time,
           'hits', hits, 'evictions', evictions, 'reuses', reuses,
           'fsyncs', fsyncs, 'fsync_time', fsync_time)), '[]')
  FROM pg_stat_io
 WHERE coalesce(reads, 0) + coalesce(writes, 0) + coalesce(extends, 0) + coalesce(hits, 0)
     + coalesce(writebacks, 0) + coalesce(fsyncs, 0) + coalesce(evictions, 0) + coalesce(reuses, 0) > 0
