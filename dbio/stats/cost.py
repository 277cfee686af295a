"""What measured I/O costs (pure): prices per month for the instance, the volume's capacity and
its provisioned IOPS turned into "IOPS per GB" and "cost per 1,000 IOPS" at each measured rate.

Provisioned IOPS tied to capacity is the cloud's argument: a rate needs either that many GB or
that many provisioned IOPS. Here the volume is priced at the data set's size and the IOPS
provisioned are the ones measured, so each row is what that measured rate would cost."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

GIB = 1 << 30  # cloud prices count a GB as 2^30 bytes
# price name -> the unit it is quoted in (what follows the '/')
UNITS = {"instance": "month", "volume": "GB-month", "iops": "provisioned-IOPS-month"}
_PRICE = re.compile(r"^\s*([$€£]?)\s*([0-9]+(?:\.[0-9]+)?)\s*(?:/\s*([A-Za-z-]+))?\s*$")


@dataclass(frozen=True)
class Prices:
    instance: float = 0.0  # per month
    volume: float = 0.0  # per GB-month
    iops: float = 0.0  # per provisioned-IOPS-month
    currency: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"instance": self.instance, "volume": self.volume, "iops": self.iops, "currency": self.currency}

    def given(self) -> str:
        parts = [f"{name} {self.currency}{getattr(self, name):g}/{unit}" for name, unit in UNITS.items()
                 if getattr(self, name)]
        return ", ".join(parts) or "no prices"


def parse_price(text: str) -> tuple[str, float, str]:
    """'instance=300/month', 'volume=$0.08/GB-month', 'iops=0.065/provisioned-IOPS-month' ->
    (name, amount, currency); ValueError saying what is wrong."""
    name, sep, amount = (text or "").partition("=")
    name = name.strip().lower()
    if not sep or name not in UNITS:
        raise ValueError(f"price {text!r} is not NAME=AMOUNT/UNIT with NAME one of {', '.join(UNITS)} "
                         "(e.g. instance=300/month)")
    return (name, *_amount(name, amount, text))


def _amount(name: str, amount: Any, given: str) -> tuple[float, str]:
    if isinstance(amount, (int, float)) and not isinstance(amount, bool):
        amount = str(amount)
    found = _PRICE.match(amount) if isinstance(amount, str) else None
    if not found:
        raise ValueError(f"price {given!r}: {name} needs an amount per {UNITS[name]} (e.g. {_example(name)})")
    currency, number, unit = found.groups()
    if unit is not None and unit.lower() != UNITS[name].lower():
        raise ValueError(f"price {given!r}: {name} is priced per {UNITS[name]}, not per {unit} "
                         f"(e.g. {_example(name)})")
    return float(number), currency


def _example(name: str) -> str:
    return {"instance": "instance=300/month", "volume": "volume=0.08/GB-month",
            "iops": "iops=0.065/provisioned-IOPS-month"}[name]


def prices(items: Iterable[str] = (), table: Mapping[str, Any] | None = None) -> Prices | None:
    """A [cost] table's prices (name = "AMOUNT/UNIT" or a number), each --price over it; None
    when nothing is priced. One currency for all."""
    found: dict[str, tuple[float, str]] = {}
    for name, amount in (table or {}).items():
        if str(name).lower() not in UNITS:
            raise ValueError(f"[cost] {name}: not a price dbio knows (one of {', '.join(UNITS)})")
        if str(name).lower() in found:  # TOML's keys are case-sensitive, dbio's price names are not
            raise ValueError(f"[cost] {name}: {str(name).lower()} is priced twice; give each price once")
        found[str(name).lower()] = _amount(str(name).lower(), amount, f"{name} = {amount}")
    given: set[str] = set()
    for item in items:  # each over the table's price of its name, but once each (the command line refuses two)
        name, amount, currency = parse_price(item)
        if name in given:
            raise ValueError(f"{name} is priced twice; give each price once")
        given.add(name)
        found[name] = (amount, currency)
    if not found:
        return None
    currencies = {c for _, c in found.values() if c}
    if len(currencies) > 1:
        raise ValueError(f"prices in more than one currency ({', '.join(sorted(currencies))}): give them in one")
    return Prices(**{name: amount for name, (amount, _) in found.items()}, currency=currencies.pop() if currencies
                  else "")


@dataclass(frozen=True)
class Row:
    step: str
    sessions: int
    iops: float
    iops_per_gb: float | None
    monthly: float
    per_1000_iops: float | None


def rows(points: Iterable[tuple[str, int, float]], data_bytes: float | None, price: Prices) -> list[Row]:
    """(step, sessions, measured IOPS) -> what a month of that rate costs, on data_bytes of volume."""
    gb = data_bytes / GIB if data_bytes else None
    out = []
    for step, sessions, iops in points:
        monthly = price.instance + price.volume * (gb or 0.0) + price.iops * iops
        out.append(Row(step, sessions, iops, iops / gb if gb else None, monthly,
                       monthly / (iops / 1000) if iops > 0 else None))
    return out
