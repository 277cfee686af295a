-- What VACUUM and the earlier UPDATEs dirtied is written now, not by the background writer or
-- the sessions' evictions inside the window.
CHECKPOINT
