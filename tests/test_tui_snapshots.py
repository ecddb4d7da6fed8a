"""Text snapshots of every pane at 80×24 and 160×50, plus checks that charts have content.

A snapshot alone would happily keep a blank chart, so each test also asserts what must be on
the screen. ROOFSCOPE_UPDATE_SNAPSHOTS=1 rewrites tests/snapshots/ after a deliberate change.
"""

from __future__ import annotations

import pytest

from roofscope.tui.app import RoofscopeApp
from tests.screen_text import assert_snapshot, screen_text
from tests.test_tui import RESNET, opened, settle

pytestmark = pytest.mark.usefixtures("shared_sample_cache")

PANES = {"1": "kernels", "2": "roofline", "3": "efficiency", "4": "detail"}
MUST_SHOW = {
    "kernels": ["conv fprop", "GEMM", "layout transform"],
    "roofline": ["┤", "FLOP/s: FP64", "B/s: L1", "(report)"],
    "efficiency": ["potential speedup", "90%–100%"],
    "detail": ["time_s", "fp32", "metrics"],
}


async def stable_screen(app: RoofscopeApp, pilot) -> str:
    """The screen once two captures agree (DataTable sizes its columns on idle)."""
    previous = screen_text(app)
    for _ in range(40):
        await pilot.pause(0.05)
        current = screen_text(app)
        if current == previous:
            return current
        previous = current
    return previous


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch):
    # plotext clamps charts to the terminal it thinks it is in; make that independent of CI
    monkeypatch.setenv("COLUMNS", "300")
    monkeypatch.setenv("LINES", "100")


@pytest.mark.parametrize("size", [(80, 24), (160, 50)], ids=["80x24", "160x50"])
@pytest.mark.parametrize("key", sorted(PANES))
async def test_pane_snapshot(key, size, in_tmp_cwd):
    app = RoofscopeApp([RESNET], ascii_only=False)
    app.state.use_color = False
    async with app.run_test(size=size) as pilot:
        await opened(app, pilot)
        await pilot.press("down", "down")  # select a group: highlighted on roofline, in detail
        await settle(app, pilot)
        await pilot.press(key)
        await settle(app, pilot, 5)
        text = await stable_screen(app, pilot)
    pane = PANES[key]
    for needle in MUST_SHOW[pane]:
        assert needle in text, f"{needle!r} missing from the {pane} pane"
    if pane == "roofline":
        chart_rows = [line for line in text.splitlines() if "│" in line or "┤" in line]
        assert len(chart_rows) >= (8 if size[1] == 24 else 25)
        assert "◉" in text  # the selected group
    assert_snapshot(f"{pane}-{size[0]}x{size[1]}", text)
