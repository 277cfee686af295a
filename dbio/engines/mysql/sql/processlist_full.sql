-- processlist.sql's connections with their whole statements (the barrier's waiters are told by theirs).
SHOW FULL PROCESSLIST
