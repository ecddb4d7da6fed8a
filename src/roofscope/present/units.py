"""Numbers as people read them, for every front end: SI prefixes (8.37e10 FLOP reads as
83.7 GFLOP), percentages, clocks, and the cells of tables."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from roofscope.present.text import shown
from roofscope.quantities import UTIL_COMPONENTS, UTIL_TITLES

_PREFIXES = ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""))
_SMALL = ((1e-3, "m"), (1e-6, "µ"), (1e-9, "n"), (1e-12, "p"))


def si(value: float | None, unit: str = "", digits: int = 3, *, compact: bool = False) -> str:
    """``si(0.00392, "s") == "3.92 ms"``; None reads as an em dash. ``compact``: no prefix
    below 1, and a bare number takes no space before its prefix (``si(2e12, compact=True) ==
    "2T"``, ``0.5`` stays ``0.5``), for chart axes and narrow cells. A number with a unit is
    always written one way, a space before the prefix: ``164 GFLOP/s``, never ``164GFLOP/s``."""
    if value is None:
        return "—"
    if value == 0:
        return f"0 {unit}".strip()
    mag = abs(value)
    scales = _PREFIXES if compact else _PREFIXES + _SMALL
    for i, (scale, prefix) in enumerate(scales):
        if mag >= scale:
            text = f"{value / scale:.{digits}g}"
            if i > 0 and abs(float(text)) >= 1000:  # 999,999 rounds to 1 M, not "1e+03 k"
                scale, prefix = scales[i - 1]
                text = f"{value / scale:.{digits}g}"
            return f"{text}{prefix}" if compact and not unit else f"{text} {prefix}{unit}".strip()
    text = f"{value:.{digits}g}"
    return f"{text} {unit}".strip()


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``counted(1, "launch") == "1 launch"``, ``counted(1234, "launch") == "1,234 launches"``:
    never ``1 launches``."""
    if n == 1:
        return f"1 {noun}"
    many = plural or (noun + "es" if noun.endswith(("ch", "sh", "s", "x")) else noun + "s")
    return f"{n:,} {many}"


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


def _shared_suffix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[-1 - i] == b[-1 - i]:
        i += 1
    return i


@dataclass(frozen=True)
class _Span:
    """Where a name first differs from a neighbour: the differing characters to the end of
    their word (``core``), in their whole word (``start``..``end``), so that ``64x64x32``
    reads as ``tilesize64x64x32``."""

    start: int
    core_start: int
    core_end: int
    end: int


_CONTEXT = 12  # at most this much of a word before where it differs: a long word is context


def _differs(name: str, other: str) -> _Span:
    core_start = min(_shared_prefix(name, other), len(name) - 1)
    start = core_start
    while start > max(0, core_start - _CONTEXT) and name[start - 1].isalnum():
        start -= 1
    core_end = core_start + 1
    while core_end < len(name) and name[core_end].isalnum():
        core_end += 1
    return _Span(start, core_start, core_end, core_end)


def _merged(spans: list[_Span]) -> list[_Span]:
    out: list[_Span] = []
    for s in sorted(spans, key=lambda s: s.start):
        if out and s.start <= out[-1].end + 2:  # overlapping or a separator apart: one stretch
            last = out[-1]
            out[-1] = _Span(
                last.start,
                min(last.core_start, s.core_start),
                max(last.core_end, s.core_end),
                max(last.end, s.end),
            )
        else:
            out.append(s)
    return out


def distinct(names: list[str] | tuple[str, ...], width: int) -> dict[str, str]:
    """Each name in at most ``width`` characters, names that share long stretches kept apart.

    A name that fits stays whole; one whose differences from its nearest neighbours (in sorted
    order) lie within an end cut is cut at the end (:func:`cut`); otherwise it keeps its lead
    (a C++ kernel's own name, without return type and namespaces, else its head), then, each
    after an ``…``, the word where it first differs from each neighbour. cuDNN's
    names differ in a tile size near the middle and a variant near the end:
    ``sm90_xmma…tilesize64x64x32…on…`` beside ``sm90_xmma…tilesize64x64x32…split…``."""
    unique = sorted(set(names))
    out: dict[str, str] = {}
    for i, name in enumerate(unique):
        if len(name) <= width:
            out[name] = name
            continue
        near = [unique[j] for j in (i - 1, i + 1) if 0 <= j < len(unique)]
        begin, head = _lead(name, width)
        begins_late = begin > 0  # a C++ kernel: its own name comes first
        spans = _merged(
            [
                span
                for other in near
                # a difference before the kernel's own name needs no showing when that name
                # differs already (another function, not another namespace of the same one)
                if not (
                    (span := _differs(name, other)).start < begin
                    and _lead_text(other, width) != name[begin:head]
                )
            ]
        )
        if width < 8 or not spans or (not begins_late and spans[-1].end <= width - 1):
            out[name] = cut(name[begin:] if width >= 8 else name, width)
            continue
        out[name] = _abridged(name, spans, width)
    return out


def _lead(name: str, width: int) -> tuple[int, int]:
    """Where a cut name starts and what it keeps first: a C++ kernel's own name (``void
    engines_precompiled::nchwToNhwcKernel<float,…>(…)`` → ``nchwToNhwcKernel``: the return
    type and namespaces say less than it), else the name's head to a word's end, up to a
    third of ``width``."""
    bracket = min((i for i in (name.find("<"), name.find("(")) if i > 0), default=-1)
    if bracket > 0:
        start = max(name.rfind("::", 0, bracket) + 2, name.rfind(" ", 0, bracket) + 1)
        if bracket - start >= 4:
            return start, min(bracket, start + width // 2)
    limit = max(4, width // 3)
    head = max((i for i in range(4, limit + 1) if not name[i - 1 : i + 1].isalnum()), default=limit)
    return 0, head


def _lead_text(name: str, width: int) -> str:
    begin, head = _lead(name, width)
    return name[begin:head]


def _abridged(name: str, spans: list[_Span], width: int) -> str:
    """The lead of ``name`` (:func:`_lead`), then each span after an ellipsis; an ellipsis at
    the end when the name goes on. Each span gets its differing
    characters first (an equal share of the room, cut at its end when short), then what room
    is left as context: its word's start, then its end."""
    begin, head = _lead(name, width)
    if spans[0].start <= head + 2:  # the first difference is in the lead: one piece from it
        first = spans.pop(0)
        begin = min(begin, first.start)
        spans.insert(0, _Span(begin, begin, max(first.core_end, head), first.end))
    else:
        spans.insert(0, _Span(begin, begin, head, head))
    tail = 1 if spans[-1].end < len(name) else 0
    room = width - (len(spans) - 1) - tail
    # the differing characters of each piece, in equal shares where they do not all fit
    cores = [s.core_end - s.core_start for s in spans]
    shown = [0] * len(spans)
    left = room
    for k in sorted(range(len(spans)), key=lambda k: cores[k]):
        share = left // sum(1 for j in range(len(spans)) if (shown[j] == 0 and j != k) or j == k)
        shown[k] = max(1, min(cores[k], share))
        left -= shown[k]
    pieces = [[s.core_start, s.core_start + n] for s, n in zip(spans, shown, strict=True)]
    for k, s in enumerate(spans):  # context while room is left: the word's start, then its end
        if pieces[k][1] < s.core_end:
            continue
        grow = min(left, pieces[k][0] - s.start)
        pieces[k][0] -= grow
        left -= grow
        grow = min(left, s.end - pieces[k][1])
        pieces[k][1] += grow
        left -= grow
    for k, piece in enumerate(pieces):  # room still left: each piece reads on, head first
        limit = pieces[k + 1][0] if k + 1 < len(pieces) else len(name)
        grow = max(0, min(left, limit - piece[1]))
        piece[1] += grow
        left -= grow
    joined = [pieces[0]]
    for a, b in pieces[1:]:  # pieces that now touch read as one, without an ellipsis
        if a <= joined[-1][1]:
            joined[-1][1] = max(joined[-1][1], b)
        else:
            joined.append([a, b])
    text = "…".join(name[a:b] for a, b in joined) + ("…" if joined[-1][1] < len(name) else "")
    return text if len(text) <= width else cut(text, width)


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


def raw_number(v: float) -> str:
    """A value as an export gave it, without a unit to scale by: every digit of a whole number
    (``1,081,344``), six significant digits of a fraction, and never an exponent where the
    digits fit (``1.08134e+06`` read as noise beside ``1,081,344``)."""
    if float(v).is_integer() and abs(v) < 1e15:
        return f"{int(v):,}"
    if 1e5 <= abs(v) < 1e15:
        return f"{v:,.0f}"
    return f"{v:.6g}"


def num(v: float | None) -> str:
    """A plain number, three significant digits (arithmetic intensity, a speedup); a prefix
    from 1,000 up (``1.16k``, as the roofline's axis reads), never ``1.16e+03``."""
    if v is None:
        return "—"
    return si(v, compact=True) if abs(v) >= 1000 else f"{v:.3g}"


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
