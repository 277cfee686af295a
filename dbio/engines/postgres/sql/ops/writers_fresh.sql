-- Read the cumulative statistics afresh (not from this transaction's snapshot) before the writers' counters.
SELECT pg_stat_clear_snapshot();
