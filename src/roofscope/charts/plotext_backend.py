"""The only module that imports plotext (6.x, a beta rewrite with a private figure class).

Each call builds on its own figure, so charts can be drawn from worker threads without
plotext's global state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Series:
    xs: Sequence[float]
    ys: Sequence[float]
    marker: str | None = None  # None: draw as a line (plotext colours each series in turn)
    color: str | None = None  # a plotext colour name; None: the next colour of plotext's cycle


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
) -> str:
    """A chart of data already in log10 units, with decade ticks, as text (ANSI colour codes
    unless ``color`` is False)."""
    import plotext
    from plotext._kernel.terminal import terminal as _Terminal

    fig = _Terminal()._master
    fig.plot_size(max(width, 20), max(height - 1, 6))  # the tick labels take one more row
    for s in series:
        symbol = s.marker if s.marker is not None else ("." if ascii_only else "braille")
        marker = symbol if s.color is None else plotext.marker(symbol, s.color)
        signal = fig.signal(list(s.xs), list(s.ys), marker=marker)
        if s.marker is None:
            signal.lines()
        fig.draw(signal)
    fig.ruler("x").ticks(*xticks)
    fig.ruler("y").ticks(*yticks)
    return fig.build().string(colorless=not color)
