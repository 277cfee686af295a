"""Which node each session runs on (pure).

Without weights, sessions are dealt in turn (SLOB's rotor over its instances): 1 to the first
node, 2 to the second, ... With weights, each node's share of the sessions is its weight's share,
rounded by the largest remainder (ties to the earlier node), and the sessions are dealt in a smooth
weighted rotation so that each node's sessions are spread over the schemas like the rotor's.
"""

from __future__ import annotations


def shares(weights: list[float], sessions: int) -> list[int]:
    """Sessions per node: proportional to the weights, largest remainder, deterministic."""
    if not weights or any(w <= 0 for w in weights):
        raise ValueError("weights must be positive")
    total = sum(weights)
    exact = [sessions * w / total for w in weights]
    counts = [int(x) for x in exact]
    left = sessions - sum(counts)
    order = sorted(range(len(weights)), key=lambda i: (-(exact[i] - counts[i]), i))
    for i in order[:left]:
        counts[i] += 1
    return counts


def deal(weights: list[float], sessions: int) -> list[int]:
    """The node (index) of each session, in session order. Equal weights give the rotor: 0, 1, 2, 0, ..."""
    if len(set(weights)) <= 1:
        return [i % len(weights) for i in range(sessions)]
    counts = shares(weights, sessions)
    current = [0] * len(counts)
    out = []
    for _ in range(sessions):  # smooth weighted round robin over the counts: exactly counts[i] picks each
        for i, c in enumerate(counts):
            current[i] += c
        pick = max(range(len(counts)), key=lambda i: (current[i], -i))
        current[pick] -= sessions
        out.append(pick)
    return out


def ranges(numbers: list[int]) -> str:
    """1, 2, 3, 5, 7, 8 -> "1-3, 5, 7-8" (pure)."""
    parts: list[str] = []
    ordered = sorted(numbers)
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        parts.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ", ".join(parts)
