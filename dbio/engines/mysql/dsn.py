"""MySQL connection strings: mysql://user@host:port/dbname[?unix_socket=/path] (pure, no driver).

A password never comes from the connection string: only from MYSQL_PWD or the client option
file (~/.my.cnf), read when connecting and never stored."""

from __future__ import annotations

import configparser
import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote, urlsplit

from dbio import readback

SCHEMES = ("mysql", "mariadb")
DEFAULT_PORT = 3306
# Where Debian, Red Hat and upstream builds put the server's socket, in the order looked at.
DEFAULT_SOCKETS = ("/run/mysqld/mysqld.sock", "/var/run/mysqld/mysqld.sock", "/var/lib/mysql/mysql.sock",
                   "/tmp/mysql.sock")
_PARAMS = ("unix_socket", "auth")
# any scheme's: a user may give one engine another engine's connection string; the password runs to the
# token's last "@" (one typed unencoded holds an "@": hiding the host as well is the lesser harm)
_URI_SECRET = re.compile(r"([a-z][a-z0-9+.-]*://[^:/@\s]*:)(\S*)(@)", re.IGNORECASE)
_KV_SECRET = re.compile(r"(\bpassword\s*=\s*)(\S+)", re.IGNORECASE)


class DsnError(ValueError):
    """Why a connection string cannot be used (one line)."""


@dataclass(frozen=True)
class Dsn:
    user: str
    host: str | None  # None: the local socket
    port: int
    database: str
    unix_socket: str | None
    password_given: bool = False  # the string held one (refused by the checks)
    socket_auth: bool = False  # auth=socket: the server knows the user by the socket's peer; no password is sent

    @property
    def via_socket(self) -> bool:
        return self.host is None


def _first(query: dict[str, list[str]], name: str) -> str | None:
    """A parameter's first value, None when it is not given."""
    values = query.get(name)
    return values[0] if values else None


def parse(text: str) -> Dsn:
    """The parts of a mysql:// connection string; raises DsnError saying what is wrong."""
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise DsnError(f"it cannot be parsed ({exc})") from None
    if parts.scheme.lower() not in SCHEMES:
        raise DsnError("it does not begin with mysql://")
    query = parse_qs(parts.query, keep_blank_values=True)
    unknown = sorted(set(query) - set(_PARAMS) - {"password"})
    if unknown:
        raise DsnError(f"unknown parameter {unknown[0]!r} (the only ones are unix_socket and auth)")
    auth = _first(query, "auth")
    if auth not in (None, "socket"):
        raise DsnError(f"auth={auth!r}: the only value is auth=socket (no password, the socket's peer)")
    database = unquote(parts.path.lstrip("/"))
    if not database or "/" in database:
        raise DsnError("it names no database (mysql://user@host/dbname)")
    unix_socket = _first(query, "unix_socket") or None
    host = unquote(parts.hostname or "") or "localhost"
    if unix_socket is None and host == "localhost" and port is None:
        host_or_none = None  # as the mysql client does: localhost is the local socket
    elif unix_socket is not None:
        if host != "localhost":
            raise DsnError("unix_socket needs the host localhost")
        host_or_none = None
    else:
        host_or_none = host
    if port is not None and not 0 < port < 65536:
        raise DsnError(f'port "{port}" is not a number from 1 to 65535')
    user = unquote(parts.username or "") or _login_name()
    return Dsn(user=user, host=host_or_none, port=port or DEFAULT_PORT, database=database, unix_socket=unix_socket,
               password_given=parts.password is not None or "password" in query, socket_auth=auth == "socket")


def problem(text: str) -> str | None:
    try:
        parse(text)
    except DsnError as exc:
        return str(exc)
    return None


def has_password(text: str) -> bool:
    try:
        return parse(text).password_given
    except DsnError:
        return bool(_URI_SECRET.search(text) or _KV_SECRET.search(text))


def redact(text: str) -> str:
    """The connection string as it can be printed and stored: any password removed."""
    try:
        dsn = parse(text)
    except DsnError:
        return scrub(text)
    return unparse(dsn)


def unparse(dsn: Dsn) -> str:
    netloc = quote(dsn.user, safe="") + "@" + (dsn.host or "localhost")
    if dsn.host is not None and dsn.port != DEFAULT_PORT:
        netloc += f":{dsn.port}"
    params = ([f"unix_socket={quote(dsn.unix_socket, safe='/')}"] if dsn.unix_socket else []) \
        + (["auth=socket"] if dsn.socket_auth else [])
    query = "?" + "&".join(params) if params else ""
    return f"mysql://{netloc}/{quote(dsn.database, safe='')}{query}"


def same_server(text: str, redacted: str) -> bool:
    return problem(text) is None and problem(redacted) is None and parse(redact(text)) == parse(redacted)


def scrub(text: str) -> str:
    """Free text with anything that looks like a password of a connection string removed."""
    return _KV_SECRET.sub(r"\1***", _URI_SECRET.sub(r"\1***\3", text))


def socket_path(dsn: Dsn) -> str | None:
    """The socket a local connection uses: the DSN's, MYSQL_UNIX_PORT, or the first default that exists."""
    if dsn.host is not None:
        return None
    if dsn.unix_socket:
        return dsn.unix_socket
    env = os.environ.get("MYSQL_UNIX_PORT")
    if env:
        return env
    return next((p for p in DEFAULT_SOCKETS if os.path.exists(p)), DEFAULT_SOCKETS[0])


def describe(dsn: Dsn) -> str:
    where = f"socket {socket_path(dsn)}" if dsn.via_socket else f"{dsn.host}:{dsn.port}"
    return f"MySQL at {where}, database {dsn.database}, user {dsn.user}"


def password(option_file: Path | None = None) -> str | None:
    """The password from MYSQL_PWD, else from the [client] group of ~/.my.cnf; None when neither has one."""
    env = os.environ.get("MYSQL_PWD")
    if env is not None:
        return env
    path = option_file or Path.home() / ".my.cnf"
    parser = configparser.ConfigParser(allow_no_value=True, interpolation=None, strict=False)
    try:
        parser.read_string(readback.read_bytes(path, readback.OPTION_FILE).decode())
    except (OSError, configparser.Error, UnicodeDecodeError, readback.Refused):
        return None
    for group in ("client", "mysql"):
        if parser.has_option(group, "password"):
            value = parser.get(group, "password") or ""
            return value.strip().strip("'\"")
    return None


def _login_name() -> str:
    import getpass

    try:
        return getpass.getuser()
    except Exception:
        return "root"
