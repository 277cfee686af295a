-- The probe's lookups of one second as one statement (run/read_probe.py), prepared once on its connection
-- with a generic plan (the session's plan_cache_mode: read_probe_init.sql), so that no second plans it again:
-- its branches, one lookup each (read_probe_lookup.sql), joined by UNION ALL.
PREPARE dbio_probe AS {lookups}
