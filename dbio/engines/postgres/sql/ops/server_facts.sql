-- What an operation's record keeps of the server: its version number and the index build's memory.
SELECT current_setting('server_version_num')::int AS version_num,
       current_setting('maintenance_work_mem') AS maintenance_work_mem;
