"""The mysql engine's managed local instance: MariaDB's (or MySQL's) server binaries on this machine,
run by dbio in a directory of its own, with its own socket and no TCP listener."""
