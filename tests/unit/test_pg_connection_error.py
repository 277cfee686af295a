"""The one line a failed connection to PostgreSQL gets: libpq's reason, once, and dbio's hint."""

import pytest

from dbio.engines.postgres.server import connection_error

# libpq's messages as psycopg raises them (PostgreSQL 18's libpq)
REFUSED = ('connection failed: connection to server at "127.0.0.1", port 1 failed: Connection refused\n'
           '\tIs the server running on that host and accepting TCP/IP connections?')
NO_SOCKET = ('connection failed: connection to server on socket "/nonexistent/.s.PGSQL.5432" failed: '
             'No such file or directory\n\tIs the server running locally and accepting connections on that socket?')
NO_ROLE = ('connection failed: connection to server at "127.0.0.1", port 5432 failed: '
           'FATAL:  role "nobody" does not exist')


@pytest.mark.parametrize("message, conninfo, expected", [
    (REFUSED, "host=127.0.0.1 port=1 dbname=x",
     "cannot connect to PostgreSQL at 127.0.0.1:1, database x: Connection refused; "
     "is the server running and listening there? check host and port"),
    (NO_SOCKET, "host=/nonexistent dbname=x",
     "cannot connect to PostgreSQL at socket /nonexistent port 5432, database x: No such file or directory; "
     "is the server running and listening there? check host and port"),
    (NO_ROLE, "host=127.0.0.1 dbname=x",
     'cannot connect to PostgreSQL at 127.0.0.1:5432, database x: role "nobody" does not exist; '
     "connect as an existing role (user=... in --dsn)"),
])
def test_the_reason_is_libpq_s_and_the_hint_is_given_once(message, conninfo, expected, monkeypatch):
    for name in ("PGHOST", "PGPORT", "PGDATABASE"):
        monkeypatch.delenv(name, raising=False)
    assert str(connection_error(conninfo, Exception(message))) == expected
