"""Connection strings without secrets: parse, redact, describe."""

from __future__ import annotations

import re

import psycopg
from psycopg import conninfo

from dbio.engines.postgres.redact import KV_SECRET, URI_SECRET, scrub

_SECRET_KEYS = ("password", "sslpassword")


def parse(dsn: str) -> dict[str, str]:
    # parsed from a string, every value is a string (ints come only from keyword arguments, none here)
    return conninfo.conninfo_to_dict(dsn) if dsn else {}  # type: ignore[return-value]


def parse_or_none(dsn: str) -> dict[str, str] | None:
    """The connection string's keywords, None when it cannot be parsed (problem() says why)."""
    try:
        return parse(dsn)
    except psycopg.Error:
        return None


def socket_directories(dsn: str) -> list[str]:
    """The unix-socket directories a connection string (or PGHOST) may connect through."""
    import os

    try:
        hosts = parse(dsn).get("host") or os.environ.get("PGHOST") or ""
    except psycopg.Error:
        return []
    return [h for h in hosts.split(",") if h.startswith("/")]


def _unencoded_at(dsn: str) -> bool:
    """A URI whose user:password part holds an "@": libpq ends that part at the first "@", and the rest of
    the password would be read as the host, and printed and stored as one."""
    _, sep, rest = dsn.strip().partition("://")
    return bool(sep) and rest.split("/", 1)[0].split("?", 1)[0].count("@") > 1


def problem(dsn: str) -> str | None:
    """Why libpq would refuse this connection string before connecting anywhere, or None. libpq's own
    words are left out when the string may hold a password: they quote the part it could not read
    ('unexpected spaces found in "pass word"'), which may be that password."""
    if _unencoded_at(dsn):
        return 'the user:password part holds an "@" (write it %40 in a URI)'
    try:
        params = parse(dsn)
    except psycopg.Error as exc:
        lines = str(exc).strip().splitlines()
        reason = scrub(lines[0]) if lines else "it cannot be parsed"
        if _may_quote(reason, _loose_secrets(dsn)):
            return ("libpq cannot read it (its words are not shown: they may quote the password); in a URI, write "
                    "a space, '@', '/', ':' or '%' in the password as %20, %40, %2F, %3A or %25")
        return reason
    if any("@" in host for host in (params.get("host") or "").split(",")):  # the rest of a password, at a '@'
        return "a host name holds '@': an '@' in the user name or password of a URI is written %40"
    for port in (params.get("port") or "").split(","):
        if port and not (port.isascii() and port.isdigit() and 0 < int(port) < 65536):
            return f'port "{port}" is not a number from 1 to 65535'
    return None


def _loose_secrets(dsn: str) -> list[str]:
    """What may be a password in a connection string libpq cannot parse (pure): each password=... value and
    a URI's user:...@ part, read loosely."""
    found = [m.group(2).strip("'") for m in KV_SECRET.finditer(dsn)] + [m.group(2) for m in URI_SECRET.finditer(dsn)]
    return [secret for secret in found if secret]


def _may_quote(text: str, secrets: list[str]) -> bool:
    """Whether text may show some of a secret: a quoted part of it that overlaps one, or one's words (pure)."""
    quoted = re.findall(r'"([^"]*)"', text)
    return any(q and (q in secret or secret in q) for q in quoted for secret in secrets) or any(
        word in text for secret in secrets for word in secret.split() if len(word) >= 3)


def dsn_has_password(dsn: str) -> bool:
    try:
        return any(k in parse(dsn) for k in _SECRET_KEYS)
    except Exception:  # an unparsable DSN is reported when connecting; scrub defensively meanwhile
        return bool(KV_SECRET.search(dsn) or URI_SECRET.search(dsn))


def redact_dsn(dsn: str) -> str:
    """The DSN with any password removed, safe to print and store."""
    if _unencoded_at(dsn):
        return scrub(dsn)  # not as libpq reads it: its host would hold the password's end
    try:
        params = {k: v for k, v in parse(dsn).items() if k not in _SECRET_KEYS}
        return conninfo.make_conninfo(**params)
    except Exception:
        return scrub(dsn)


def same_server(dsn: str, redacted: str) -> bool:
    """Whether dsn names the server (and user, database...) a stored, redacted connection string names."""
    return problem(dsn) is None and parse(redact_dsn(dsn)) == parse(redacted)


__all__ = ["dsn_has_password", "parse", "parse_or_none", "problem", "redact_dsn", "same_server", "scrub",
           "socket_directories"]
