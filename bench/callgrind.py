"""Reading callgrind's output files (--compress-strings, line positions), for the callgrind benches."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Profile:
    total: int
    own: dict[str, int]  # function -> its own instructions (all objects summed)
    inclusive: dict[str, int]  # function -> instructions inside its calls from other functions
    calls: dict[str, int]
    by_object: dict[str, int]  # shared object -> own instructions


def _plain(name: str) -> str:
    return re.sub(r"'\d+$", "", name)  # callgrind's recursion levels (exec_stmts'2) are one function


def read_profile(path: Path) -> Profile:
    """A callgrind output file (--compress-strings, line positions): each function's own cost, and
    each call edge's count and inclusive cost. A function's inclusive cost is the sum of its edges
    from other functions: exact for functions that do not call themselves through others."""
    names: dict[str, dict[str, str]] = {"ob": {}, "fn": {}}
    own: dict[tuple[str, str], int] = defaultdict(int)
    edges: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    ob = fn = callee = None
    calling: tuple[str, int] | None = None
    total = 0

    def named(kind: str, rest: str) -> str:
        m = re.match(r"\((\d+)\)(?: (.*))?$", rest)
        if not m:
            return rest
        if m.group(2) is not None:
            names[kind][m.group(1)] = m.group(2)
        return names[kind][m.group(1)]

    for line in path.read_text().splitlines():
        if not line:
            continue
        if line[0].isdigit() or line[0] in "+-*":
            fields = line.split()
            cost = int(fields[1]) if len(fields) > 1 else 0
            if calling is not None:
                edge = edges[(fn[1], calling[0])]
                edge[0] += calling[1]
                edge[1] += cost
                calling = None
            else:
                own[fn] += cost
            continue
        if line.startswith("totals:"):
            total = int(line.split()[1])
            continue
        key, _, rest = line.partition("=")
        if key == "ob":
            ob = named("ob", rest)
        elif key == "fn":
            fn = (ob, _plain(named("fn", rest)))
        elif key == "cob":
            named("ob", rest)  # only to learn a name a later ob= gives by number
        elif key == "cfn":
            callee = _plain(named("fn", rest))
        elif key == "calls":
            calling = (callee, int(rest.split()[0]))
    inclusive: dict[str, int] = defaultdict(int)
    calls: dict[str, int] = defaultdict(int)
    for (caller, target), (count, cost) in edges.items():
        if caller != target:
            inclusive[target] += cost
            calls[target] += count
    by_function: dict[str, int] = defaultdict(int)
    by_object: dict[str, int] = defaultdict(int)
    for (obj, name), cost in own.items():
        by_function[name] += cost
        by_object[Path(obj).name] += cost
    return Profile(total, dict(by_function), dict(inclusive), dict(calls), dict(by_object))
