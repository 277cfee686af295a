-- Every connection of the server, as it walks its sessions (Id, User, Host, db, Command, Time, State, Info...).
-- Not information_schema.PROCESSLIST: a query of it fills an internal temporary table, on disk in Aria for its
-- INFO text (its own wait: wait/io/file/aria/MAD open), twice a second for the sampler; a managed MariaDB 10.11
-- died once in such a table's drop (ha_maria::drop_table) under it. SHOW PROCESSLIST writes its rows out as it goes.
SHOW PROCESSLIST
