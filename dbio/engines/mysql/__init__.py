"""The MySQL / MariaDB (InnoDB) engine."""
