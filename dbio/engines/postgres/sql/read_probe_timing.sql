-- The engine's I/O timer on in the probe's session only (nothing server-wide changes): a superuser, or a
-- role granted SET ON PARAMETER track_io_timing, may.
SET track_io_timing = on
