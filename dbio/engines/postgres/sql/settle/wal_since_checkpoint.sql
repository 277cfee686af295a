-- WAL written since the last checkpoint began (its redo point): the pages it changed may still be dirty in
-- the buffers, for the checkpointer or the background writer to write out inside the window. Whoever wrote
-- them: a CHECKPOINT writes every database's.
SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), redo_lsn)::bigint FROM pg_control_checkpoint()
