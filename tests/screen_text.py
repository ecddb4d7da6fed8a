"""Plain-text snapshots of a running app's screen (what a user sees, without colours)."""

from __future__ import annotations

import io
import os
from pathlib import Path

from rich.console import Console
from textual.app import App

SNAPSHOTS = Path(__file__).parent / "snapshots"


def screen_text(app: App) -> str:
    """The screen as text, built the way ``App.export_screenshot`` builds its SVG."""
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
    return "\n".join(line.rstrip() for line in console.export_text().splitlines())


def assert_snapshot(name: str, text: str) -> None:
    """Compare with tests/snapshots/NAME.txt; ROOFSCOPE_UPDATE_SNAPSHOTS=1 rewrites it."""
    path = SNAPSHOTS / f"{name}.txt"
    if os.environ.get("ROOFSCOPE_UPDATE_SNAPSHOTS") or not path.exists():
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_text(text + "\n", encoding="utf-8")
        if not os.environ.get("ROOFSCOPE_UPDATE_SNAPSHOTS"):
            raise AssertionError(f"new snapshot written to {path}; check it and run again")
    expected = path.read_text(encoding="utf-8").rstrip("\n")
    assert text == expected, f"screen differs from {path} (ROOFSCOPE_UPDATE_SNAPSHOTS=1 to accept)"
