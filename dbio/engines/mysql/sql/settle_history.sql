-- The history list where global status does not give it (MySQL); needs the PROCESS privilege.
SELECT `COUNT` FROM information_schema.INNODB_METRICS WHERE NAME = 'trx_rseg_history_len'
