"""Numbers as people read them, for every front end: SI prefixes (8.37e10 FLOP reads as
83.7 GFLOP), percentages, clocks, and the cells of tables."""

from __future__ import annotations

import re
from collections.abc import Iterable

from roofscope.present.text import shown
from roofscope.quantities import UTIL_COMPONENTS, UTIL_TITLES

_PREFIXES = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""))
_SMALL = ((1e-3, "m"), (1e-6, "µ"), (1e-9, "n"))


def si(value: float | None, unit: str = "", digits: int = 3, *, compact: bool = False) -> str:
    """``si(0.00392, "s") == "3.92 ms"``; None reads as an em dash. ``compact``: no space before
    the prefix and none below 1 (``si(2e12, compact=True) == "2T"``, ``0.5`` stays ``0.5``),
    for chart axes and narrow cells."""
    if value is None:
        return "—"
    if value == 0:
        return f"0{unit}" if compact else f"0 {unit}".strip()
    mag = abs(value)
    scales = _PREFIXES if compact else _PREFIXES + _SMALL
    for i, (scale, prefix) in enumerate(scales):
        if mag >= scale:
            text = f"{value / scale:.{digits}g}"
            if i > 0 and abs(float(text)) >= 1000:  # 999,999 rounds to 1 M, not "1e+03 k"
                scale, prefix = scales[i - 1]
                text = f"{value / scale:.{digits}g}"
            return f"{text}{prefix}{unit}" if compact else f"{text} {prefix}{unit}".strip()
    text = f"{value:.{digits}g}"
    return f"{text}{unit}" if compact else f"{text} {unit}".strip()


def pct(value: float | None, digits: int = 1) -> str:
    """A value already in percent: ``pct(22.61) == "22.6%"``."""
    return "—" if value is None else f"{value:.{digits}f}%"


def ratio_pct(value: float | None) -> str:
    """A 0..1 fraction as a percentage."""
    return "—" if value is None else f"{100 * value:.0f}%"


def clock(seconds: float | None) -> str:
    """``clock(202) == "3:22"``, ``clock(4000) == "1:06:40"``; None reads as "?"."""
    if seconds is None:
        return "?"
    m, s = divmod(int(seconds + 0.5), 60)
    return f"{m // 60}:{m % 60:02d}:{s:02d}" if m >= 60 else f"{m}:{s:02d}"


def ago(seconds: float) -> str:
    """How long ago, to the unit a person reads at a glance: ``40 s``, ``12 min``, ``3.5 h``."""
    if seconds < 120:
        return f"{max(0.0, seconds):.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 172800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.0f} days"


def cut(text: str, width: int) -> str:
    """At most ``width`` characters, an ellipsis marking the cut (kernel signatures run to
    thousands of characters)."""
    return text if len(text) <= width else text[: width - 1] + "…"


def _shared_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def distinct(names: list[str] | tuple[str, ...], width: int) -> dict[str, str]:
    """Each name in at most ``width`` characters, names that share a long prefix kept apart.

    A name that fits stays whole; one whose difference from its nearest neighbour lies within
    an end cut is cut at the end (:func:`cut`); one whose difference lies past it (Julia and
    CUTLASS template instantiations differ deep inside) keeps its head, then ``…`` and the
    stretch where it starts to differ, so ``void cutlass::Kernel<…_128x256_…>`` and
    ``void cutlass::Kernel<…_256x128_…>`` still read apart."""
    unique = sorted(set(names))
    out: dict[str, str] = {}
    for i, name in enumerate(unique):
        if len(name) <= width:
            out[name] = name
            continue
        if width < 8:
            out[name] = cut(name, width)
            continue
        # where this name first differs from the names nearest it in sorted order
        near = [unique[j] for j in (i - 1, i + 1) if 0 <= j < len(unique)]
        differs = max((_shared_prefix(name, other) for other in near), default=0)
        if differs < width - 1:
            out[name] = cut(name, width)
            continue
        head = max(4, width // 3)
        rest = width - head - 1  # the window after the first ellipsis
        start = max(head, differs - rest // 3)  # a little context before the difference
        window = name[start:]
        if len(window) > rest:
            window = window[: rest - 1] + "…"
        out[name] = name[:head] + "…" + window
    return out


def shares(parts: list[dict], least: float = 0.005) -> str:
    """``TF32 tensor 95%, FP32 5%``: the precision shares of a report (Report.precision),
    those under ``least`` left out; an em dash when no FLOPs were counted."""
    shown_parts = [p for p in parts if p["share"] >= least] or parts[:1]
    if not shown_parts:
        return "—"
    return ", ".join(f"{p['title']} {100 * p['share']:.0f}%" for p in shown_parts)


_PARTS = re.compile(r"(\.|__)")  # ncu names: unit__counter.rollup.submetric


def cut_middle(text: str, width: int) -> str:
    """At most ``width`` characters, cut in the middle where metric names repeat themselves.
    An ncu name's parts (``unit__counter.rollup.submetric``) are cut to one length, the longest
    first, each keeping a third of its head and the rest of its tail, so short parts (the
    unit, ``avg``/``sum``) stay whole: at 36, ``gpu__dram…roughput.avg.pct_…_elapsed``.
    Other text keeps a third of its head and the rest of its tail."""
    if len(text) <= width:
        return text
    if width < 2:
        return text[:width]
    pieces = _PARTS.split(text)  # parts at even indices, separators between them
    parts, seps = pieces[0::2], sum(len(p) for p in pieces[1::2])
    for limit in range(max(map(len, parts)) - 1, 3, -1):
        if seps + sum(min(len(p), limit) for p in parts) <= width:
            pieces[0::2] = [_cut_part(p, limit) for p in parts]
            return "".join(pieces)
    return _cut_part(text, width)


def _cut_part(text: str, width: int) -> str:
    if len(text) <= width:
        return text
    head = (width - 1) // 3
    return text[:head] + "…" + text[len(text) - (width - 1 - head) :]


# -- bounds: an efficiency from incomplete utilisations (docs/metrics.md §4) -----------------
AT_LEAST, AT_MOST = "≥", "≤"  # a lower bound (efficiency), an upper bound (headroom, speedup)


def bounded(text: str, mark: str, complete: bool | None) -> str:
    """``text`` with ``mark`` before it when the value is a bound (``complete`` is False):
    ``bounded("8%", AT_LEAST, False) == "≥ 8%"``; an unknown value stays ``—``."""
    return f"{mark} {text}" if complete is False and text != "—" else text


def incomplete_reason(missing: Iterable[str]) -> str:
    """Why an efficiency is a lower bound, from the components it lacks (``["tensor", "fp32"]``):
    ``"no tensor or FP32 utilisation, so efficiency from DRAM alone"``."""
    titles = dict(zip(UTIL_COMPONENTS, UTIL_TITLES, strict=True))
    lack = [titles[c] for c in UTIL_COMPONENTS if c in set(missing)]
    have = [titles[c] for c in UTIL_COMPONENTS if titles[c] not in lack]
    if not lack or not have:
        return "some utilisations unknown"
    return f"no {' or '.join(lack)} utilisation, so efficiency from {' and '.join(have)} alone"


# -- cells of tables (the panes' and the report's) -------------------------------------------
def time(v: float | None) -> str:
    return si(v, "s")


def rate(v: float | None) -> str:
    return si(v, "FLOP/s")


def num(v: float | None) -> str:
    """A plain number, three significant digits (arithmetic intensity, a speedup)."""
    return "—" if v is None else f"{v:.3g}"


share = pct  # a share of time, already in percent
frac = ratio_pct  # a 0..1 fraction (efficiency, utilisation)


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
    return si(v, digits=3 if width >= 5 else 2, compact=True)


def exact(v: int | None) -> str:
    """A count with every digit (``1,234,567``): files and the headless report keep them."""
    return "—" if v is None else f"{v:,}"
