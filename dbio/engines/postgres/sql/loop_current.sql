-- The installed loop (its body and tag), and whether the control table has the latest column an
-- installation adds (rate_sessions): an installation finds nothing to do when both are current.
SELECT p.prosrc, obj_description(p.oid, 'pg_proc'),
       EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'dbio.run_control'::regclass
                  AND attname = 'rate_sessions' AND NOT attisdropped)
  FROM pg_proc p
  JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = 'dbio' AND p.proname = 'slice'
