"""Plain-text snapshots of a running app's screen (what a user sees, without colours)."""

from __future__ import annotations

import io
import os
from pathlib import Path

from rich.cells import cell_len
from rich.console import Console
from rich.style import Style
from rich.terminal_theme import DEFAULT_TERMINAL_THEME
from textual.app import App

SNAPSHOTS = Path(__file__).parent / "snapshots"


def _recorded(app: App) -> Console:
    """A console that printed the screen, built the way ``App.export_screenshot`` builds it."""
    width, height = app.size
    console = Console(
        width=width,
        height=height,
        file=io.StringIO(),
        force_terminal=True,
        color_system="truecolor",
        record=True,
        legacy_windows=False,
        safe_box=False,
    )
    console.print(app.screen._compositor.render_update(full=True))
    return console


def screen_text(app: App) -> str:
    """The screen as text (what a user sees, without colours)."""
    return "\n".join(line.rstrip() for line in _recorded(app).export_text().splitlines())


def _luminance(rgb: tuple[int, int, int]) -> float:
    def channel(v: int) -> float:
        c = v / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = rgb
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    """WCAG contrast ratio of two colours (1 to 21)."""
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def screen_cells(app: App) -> dict[tuple[int, int], tuple[str, Style]]:
    """Every cell of the screen as drawn: (x, y) -> (character, style)."""
    console = _recorded(app)
    cells: dict[tuple[int, int], tuple[str, Style]] = {}
    x = y = 0
    for segment in console._record_buffer:
        for char in segment.text:
            if char == "\n":
                x, y = 0, y + 1
                continue
            cells[(x, y)] = (char, segment.style or Style())
            x += max(cell_len(char), 1)
    return cells


def faint_cells(app: App, selector: str, minimum: float = 3.0) -> list[str]:
    """The characters inside a widget drawn at under ``minimum``:1 against their background
    (computed from the rendered segments, truecolor), as ``'c' x,y ratio``."""
    region = app.query_one(selector).region
    theme = DEFAULT_TERMINAL_THEME
    faint = []
    for (x, y), (char, style) in screen_cells(app).items():
        if char.strip() in ("", "⠀") or not region.contains(x, y):
            continue
        if style.color is None or style.bgcolor is None:
            continue  # the terminal's own colours: readable by definition
        fg = tuple(style.color.get_truecolor(theme))
        bg = tuple(style.bgcolor.get_truecolor(theme, foreground=False))
        ratio = contrast(fg, bg)
        if ratio < minimum:
            faint.append(f"{char!r} {x},{y} {ratio:.2f}")
    return faint


def assert_snapshot(name: str, text: str) -> None:
    """Compare with tests/snapshots/NAME.txt; ROOFSCOPE_UPDATE_SNAPSHOTS=1 rewrites it."""
    path = SNAPSHOTS / f"{name}.txt"
    if os.environ.get("ROOFSCOPE_UPDATE_SNAPSHOTS") or not path.exists():
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_text(text + "\n", encoding="utf-8")
        if not os.environ.get("ROOFSCOPE_UPDATE_SNAPSHOTS"):
            raise AssertionError(f"new snapshot written to {path}; check it and run again")
    expected = path.read_text(encoding="utf-8").rstrip("\n")
    if text != expected:  # the lines that differ, so that a failure in CI can be read there
        import difflib

        diff = "\n".join(
            difflib.unified_diff(expected.splitlines(), text.splitlines(), "snapshot", "screen")
        )
        raise AssertionError(
            f"screen differs from {path} (ROOFSCOPE_UPDATE_SNAPSHOTS=1 to accept):\n{diff}"
        )
