-- Checkpointer and background writer (PostgreSQL 15 and 16: one view, plus backend writes).
SELECT json_build_object('checkpoints_timed', checkpoints_timed, 'checkpoints_requested', checkpoints_req,
                         'checkpoint_write_time', checkpoint_write_time, 'checkpoint_sync_time', checkpoint_sync_time,
                         'checkpoint_buffers_written', buffers_checkpoint,
                         'bgwriter_buffers_clean', buffers_clean, 'bgwriter_maxwritten_clean', maxwritten_clean,
                         'buffers_alloc', buffers_alloc, 'backend_buffers_written', buffers_backend,
                         'backend_fsyncs', buffers_backend_fsync)
  FROM pg_stat_bgwriter
