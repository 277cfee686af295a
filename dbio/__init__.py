"""dbio: SQL-driven database physical I/O testing (the SLOB method) for open databases."""

__version__ = "0.1.0"
