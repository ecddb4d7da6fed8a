"""Cell formatting shared by the panes (numbers as people read them)."""

from __future__ import annotations

from roofscope.output.units import pct, ratio_pct, si


def time(v: float | None) -> str:
    return si(v, "s")


def rate(v: float | None) -> str:
    return si(v, "FLOP/s")


def num(v: float | None) -> str:
    return "—" if v is None else f"{v:.3g}"


def share(v: float | None) -> str:
    return pct(v)


def frac(v: float | None) -> str:
    return ratio_pct(v)


def text(v: object) -> str:
    return "—" if v is None else str(v)
