-- Checkpointer and background writer (PostgreSQL 17+: separate views).
SELECT json_build_object('checkpoints_timed', c.num_timed, 'checkpoints_requested', c.num_requested,
                         'checkpoint_write_time', c.write_time, 'checkpoint_sync_time', c.sync_time,
                         'checkpoint_buffers_written', c.buffers_written,
                         'bgwriter_buffers_clean', b.buffers_clean, 'bgwriter_maxwritten_clean', b.maxwritten_clean,
                         'buffers_alloc', b.buffers_alloc)
  FROM pg_stat_checkpointer c, pg_stat_bgwriter b
