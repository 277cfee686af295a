"""Secrets of PostgreSQL connection strings removed from free text (needs no driver: error paths use it)."""

from __future__ import annotations

import re

# key=value pairs and URI user:password@ parts, for scrubbing free text such as error messages
KV_SECRET = re.compile(r"(\b(?:password|sslpassword)\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)
# any scheme's (a user may give one engine another engine's connection string); the password runs to the
# line's last "@" (one libpq cannot parse may hold spaces, or an "@" typed unencoded: hiding the host as well is
# the lesser harm)
URI_SECRET = re.compile(r"([a-z][a-z0-9+.-]*://[^:/@\s]*:)([^\n]*)(@)", re.IGNORECASE)


def scrub(text: str) -> str:
    """Remove anything that looks like a password from free text."""
    text = KV_SECRET.sub(r"\1***", text)
    return URI_SECRET.sub(r"\1***\3", text)
