"""The only module that imports plotext (6.x, a beta rewrite with a private figure class).

Each call builds on its own figure, so charts can be drawn from worker threads without
plotext's global state.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

# plotext 6.1 paints the frame and tick labels on a white background (48;5;15) in black
# (38;5;0) whatever ``canvas('default')`` says, which on a dark terminal is a white box: the
# chart is drawn on the terminal's own background instead (docs/decisions.md).
_BACKGROUND = re.compile(r"\x1b\[48;[0-9;]*m")
_FRAME = re.compile(r"\x1b\[38;5;(?:0|12)m")

_ASCII_FRAME = str.maketrans("┌┐└┘─│┤├┬┴┼", "++++-|+++++")

Color = str | tuple[int, int, int]


@dataclass(frozen=True)
class Series:
    xs: Sequence[float]
    ys: Sequence[float]
    marker: str | None = None  # None: draw as a line (plotext colours each series in turn)
    color: Color | None = None  # a plotext colour name or RGB; None: plotext's next colour
    line: str | None = None  # the character a line is drawn with; None: braille ("." in ASCII)


@dataclass(frozen=True)
class Label:
    """Text on the chart at (x, y) in data units, its first character there."""

    x: float
    y: float
    text: str
    color: Color | None = None


def preload() -> None:
    """Import plotext ahead of the first chart (140 ms on 2 cores; the TUI calls this from a
    worker thread after its first paint, so no key waits for it)."""
    import plotext  # noqa: F401
    from plotext._kernel.terminal import terminal  # noqa: F401


def decade_chart(
    series: Sequence[Series],
    width: int,
    height: int,
    xticks: tuple[list[float], list[str]],
    yticks: tuple[list[float], list[str]],
    *,
    ascii_only: bool = False,
    color: bool = True,
    labels: Sequence[Label] = (),
    frame: tuple[float, float, float, float] | None = None,
) -> str:
    """A chart of data already in log10 units, with decade ticks, as text (ANSI colour codes
    unless ``color`` is False), on the terminal's own background; ``frame`` is
    (x_lo, x_hi, y_lo, y_hi), the ranges the axes span."""
    import plotext
    from plotext._kernel.terminal import terminal as _Terminal

    term = _Terminal()
    term.limit(False, False)  # the size asked, not the size of the process's own terminal
    fig = term._master
    fig.plot_size(max(width, 20), max(height - 1, 6))  # the tick labels take one more row
    fig.canvas("default")
    for s in series:
        symbol = s.marker or s.line or ("." if ascii_only else "braille")
        marker = symbol if s.color is None else plotext.marker(symbol, s.color)
        signal = fig.signal(list(s.xs), list(s.ys), marker=marker)
        if s.marker is None:
            signal.lines()
        fig.draw(signal)
    for label in labels:
        text = label.text if label.color is None else plotext.colorize(label.text, label.color)
        fig.draw(fig.text(label.x, label.y, text))
    fig.ruler("x").ticks(*xticks)
    fig.ruler("y").ticks(*yticks)
    if frame is not None:  # plotext 6.1 sized some ranges from 0 up (docs/decisions.md)
        fig.ruler("x").lim(frame[0], frame[1])
        fig.ruler("y").lim(frame[2], frame[3])
    out = fig.build().string(colorless=not color)
    if ascii_only:  # plotext draws its frame in box characters whatever the markers
        out = out.translate(_ASCII_FRAME)
    return _FRAME.sub("\x1b[39m", _BACKGROUND.sub("", out)) if color else out
