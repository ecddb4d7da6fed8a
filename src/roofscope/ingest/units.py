"""One unit table for every spelling ncu has used (2019-2025), mapping to base SI.

ncu auto-scales per column and per file (``us``, ``Mbyte``, ``Tbyte/s``, ``Ghz``), and older
versions spell ``nsecond``, ``cycle/second``. A unit is parsed compositionally: each side of a
``/`` is an optional prefix plus a known base word, so ``Kbyte/cycle`` or ``sector/ns`` need no
table row of their own. Byte prefixes are decimal (Kbyte = 1e3), as measured on ncu 2025.3.1.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

# Base words (lower-case spelling) -> canonical base unit.
_BASE_WORDS: dict[str, str] = {
    "byte": "B",
    "bytes": "B",
    "b": "B",
    "second": "s",
    "seconds": "s",
    "s": "s",
    "sec": "s",
    "hz": "Hz",
    "cycle": "cycle",
    "cycles": "cycle",
    "inst": "inst",
    "warp": "warp",
    "thread": "thread",
    "block": "block",
    "sector": "sector",
    "sectors": "sector",
    "request": "request",
    "requests": "request",
    "branches": "branch",
    "pass": "pass",
    "register": "register",
    "cluster": "cluster",
    "sm": "SM",
    "sample": "sample",
    "flop": "FLOP",
    "%": "%",
}

# Prefixes accepted in front of a base word. Time prefixes are lower-case (ns/us/ms); size and
# frequency prefixes upper-case (Kbyte/Mhz); ``nsecond``/``usecond`` are the old spellings.
_PREFIXES: dict[str, int] = {
    "n": -9,
    "u": -6,
    "µ": -6,
    "m": -3,
    "K": 3,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
}


@dataclass(frozen=True)
class Unit:
    """A unit as written in the export, with its base SI form and scale."""

    text: str
    base: str
    scale: float


class UnknownUnitError(ValueError):
    """Raised for a unit spelling the table cannot normalise."""


def _word(part: str) -> tuple[str, int]:
    """(base unit, power-of-ten exponent) of one side of a unit."""
    key = part.strip()
    if key.lower() in _BASE_WORDS:
        return _BASE_WORDS[key.lower()], 0
    if len(key) > 1 and key[0] in _PREFIXES and key[1:].lower() in _BASE_WORDS:
        return _BASE_WORDS[key[1:].lower()], _PREFIXES[key[0]]
    raise UnknownUnitError(part)


@lru_cache(maxsize=4096)
def parse_unit(text: str) -> Unit:
    """Normalise one unit string; ``""`` is dimensionless. Raises UnknownUnitError."""
    raw = (text or "").strip()
    if raw == "":
        return Unit(text, "", 1.0)
    parts = raw.split("/")
    bases: list[str] = []
    exponent = 0
    for i, part in enumerate(parts):
        if i == 0 and part.strip() == "1" and len(parts) > 1:  # "1/s": a count per second
            bases.append("1")
            continue
        base, exp = _word(part)
        exponent += exp if i == 0 else -exp
        bases.append(base)
    scale = 10.0**exponent
    base = "/".join(bases)
    # A rate over seconds is written as a frequency-style base: byte/s stays B/s, cycle/s -> Hz.
    if base == "cycle/s":
        base = "Hz"
    return Unit(text, base, scale)


def is_known_unit(text: str) -> bool:
    try:
        parse_unit(text)
    except UnknownUnitError:
        return False
    return True


def ncu_base_unit(metric: str) -> str | None:
    """The unit ``ncu --print-units base`` writes for ``metric``, read from its name, for the
    families whose name says it (durations, bytes, cycles, clocks, instructions, percentages).
    None when the name does not say. Only used for a raw page that lost its units row."""
    name = metric.strip()
    if ".pct_of_peak" in name:
        return "%"
    for suffix, per in ((".per_second", "s"), (".per_cycle_elapsed", "cycle")):
        if name.endswith(suffix):
            inner = ncu_base_unit(name[: -len(suffix)])
            if inner == "cycle" and per == "s":
                return "hz"
            return f"{inner}/{per}" if inner and inner not in ("%", "ns") else None
    if name.endswith(".peak_sustained"):
        inner = ncu_base_unit(name[: -len(".peak_sustained")])
        return f"{inner}/cycle" if inner and inner not in ("%", "ns") else None
    counter = name.split(".", 1)[0]
    if "time_duration" in counter or "__time_" in counter:
        return "ns"
    if "bytes" in counter:
        return "byte"
    if "cycles" in counter:
        return "cycle"
    if "inst_executed" in counter:
        return "inst"
    return None
