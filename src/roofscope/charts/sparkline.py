"""One-line sparklines: a series of numbers as block glyphs (or ASCII), scaled to a maximum."""

from __future__ import annotations

BLOCKS = " ▁▂▃▄▅▆▇█"
ASCII = " .:-=+*#@"


def sparkline(
    values: list[float | None], top: float | None = None, ascii_only: bool = False
) -> str:
    """``top`` fixes the full-height value (1.0 for fractions); None scales to the maximum.
    Missing values are blank; a positive value never rounds down to blank."""
    glyphs = ASCII if ascii_only else BLOCKS
    known = [v for v in values if v is not None]
    scale = top if top is not None else max(known, default=0.0)
    out = []
    for v in values:
        if v is None or scale <= 0:
            out.append(" ")
            continue
        level = round(min(max(v / scale, 0.0), 1.0) * (len(glyphs) - 1))
        out.append(glyphs[max(level, 1 if v > 0 else 0)])
    return "".join(out)
