"""Horizontal bars as text: the small charts of scaling and cost, readable over any link."""

from __future__ import annotations

from collections.abc import Callable, Sequence


def hbars(
    items: Sequence[tuple[str, float | None]],
    width: int,
    fmt: Callable[[float], str],
    *,
    ascii_only: bool = False,
) -> list[str]:
    """One line per item: ``label  ████████▌  value``, bars scaled to the largest value; an
    unknown value shows a dash and no bar."""
    known = [v for _, v in items if v is not None and v > 0]
    top = max(known, default=0.0)
    label_w = max((len(label) for label, _ in items), default=0)
    values = [fmt(v) if v is not None else "—" for _, v in items]
    value_w = max((len(v) for v in values), default=0)
    room = max(width - label_w - value_w - 4, 4)
    full, half = ("#", "=") if ascii_only else ("█", "▌")
    lines = []
    for (label, v), text in zip(items, values, strict=True):
        cells = 2 * room * v / top if v is not None and v > 0 and top else 0.0
        n = round(cells)
        bar = full * (n // 2) + (half if n % 2 else "")
        lines.append(f"{label.ljust(label_w)}  {bar.ljust(room)}  {text.rjust(value_w)}")
    return lines
