-- A session's latency histogram map and bounds (histmap.py), kept in its user variables: the
-- work loop reads them once per slice and finds each latency's bucket in them without a table.
SET @dbio_hist_map = %(map)s, @dbio_hist_bounds = %(bounds)s
