-- Every connection with its whole statement: the caller counts those waiting for the run's barrier lock (their
-- state a user lock, their statement naming it). SHOW, not information_schema.PROCESSLIST: processlist.sql says why.
SHOW FULL PROCESSLIST
