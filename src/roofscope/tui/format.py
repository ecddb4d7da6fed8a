"""Cell formatting shared by the panes (numbers as people read them)."""

from __future__ import annotations

from roofscope.output.text import shown
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
    """Text from the export (a name): verbatim, control characters visible."""
    return shown(v)


def count(v: int | None, width: int = 6) -> str:
    """``1,234`` while it fits ``width``, else a compact ``1.00M``: never a cut ``1,000,``."""
    if v is None:
        return "—"
    full = f"{v:,}"
    if len(full) <= width:
        return full
    return si(v, digits=3 if width >= 5 else 2).replace(" ", "")
