"""Human-readable numbers: SI prefixes, so 8.37e10 FLOP reads as 83.7 GFLOP."""

from __future__ import annotations

_PREFIXES = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""))
_SMALL = ((1e-3, "m"), (1e-6, "µ"), (1e-9, "n"))


def si(value: float | None, unit: str = "", digits: int = 3) -> str:
    """``si(0.0039, "s") == "3.92 ms"``; None reads as an em dash."""
    if value is None:
        return "—"
    if value == 0:
        return f"0 {unit}".strip()
    mag = abs(value)
    scales = _PREFIXES + _SMALL
    for i, (scale, prefix) in enumerate(scales):
        if mag >= scale:
            text = f"{value / scale:.{digits}g}"
            if i > 0 and abs(float(text)) >= 1000:  # 999,999 rounds to 1 M, not "1e+03 k"
                scale, prefix = scales[i - 1]
                text = f"{value / scale:.{digits}g}"
            return f"{text} {prefix}{unit}".strip()
    return f"{value:.{digits}g} {unit}".strip()


def pct(value: float | None, digits: int = 1) -> str:
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


def cut(text: str, width: int) -> str:
    """At most ``width`` characters, an ellipsis marking the cut (kernel signatures run to
    thousands of characters)."""
    return text if len(text) <= width else text[: width - 1] + "…"
