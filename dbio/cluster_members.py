"""The members of an embedded cluster (a primary and its standbys, or a multi-writer cluster's nodes)
and which of them a run uses (pure).

Names are fixed: the primary is `primary`, the standbys `standby1`, `standby2`, ... in the order
they were made; a Galera cluster's nodes are `node1`, `node2`, ...
`--nodes` picks some of them, in the cluster's order whatever order it lists them."""

from __future__ import annotations

import re

from dbio.errors import UsageError

PRIMARY = "primary"
_NAME = re.compile(r"primary|standby[1-9][0-9]*|node[1-9][0-9]*")


def names(standbys: int) -> list[str]:
    """Every member's name: the primary first, then each standby."""
    return [PRIMARY] + [f"standby{k}" for k in range(1, standbys + 1)]


def role_of(name: str) -> str:
    return "primary" if name == PRIMARY else "standby"


def parse(text: str) -> list[str]:
    """--nodes as names; ValueError saying what is wrong (unknown form, a name twice, none)."""
    wanted = [part.strip() for part in text.split(",") if part.strip()]
    if not wanted:
        raise ValueError("names no member")
    bad = [name for name in wanted if not _NAME.fullmatch(name)]
    if bad:
        raise ValueError(f"{bad[0]!r} is not a member's name")
    twice = sorted({name for name in wanted if wanted.count(name) > 1})
    if twice:
        raise ValueError(f"names {twice[0]} twice")
    return wanted


def choose(available: list[str], wanted: str | None) -> list[str]:
    """The members a run uses: all of them, or those --nodes names (each must exist), in cluster order."""
    if wanted is None:
        return list(available)
    try:
        chosen = parse(wanted)
    except ValueError as exc:
        raise UsageError(f"--nodes {wanted}: {exc}", "name members of the embedded instance: "
                         + ", ".join(available)) from None
    missing = [name for name in chosen if name not in available]
    if missing:
        raise UsageError(f"--nodes {wanted}: the embedded instance has no member {missing[0]} (it has "
                         f"{', '.join(available)})", "name only those members, or make the instance with more "
                                                     "standbys (dbio instance init --standbys N)")
    return [name for name in available if name in chosen]
