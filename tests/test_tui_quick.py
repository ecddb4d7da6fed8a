"""The quick loop's one walk through the TUI (``pytest -m "not slow"``): the smallest bundled
sample (one 4096³ GEMM launch) opened at 80×24, every pane by its number key, a drill-down
and back. The thorough TUI tests are marked slow."""

from __future__ import annotations

from textual.widgets import ContentSwitcher

from roofscope.tui.app import RoofscopeApp
from roofscope.tui.panes.registry import PANES
from tests.conftest import SAMPLES
from tests.screen_text import screen_text
from tests.test_tui import groups, opened, settle

GEMM = str(SAMPLES / "gemm4096_bf16_h100.ncu-raw.csv")


async def test_every_pane_by_its_number_key_at_80x24(in_tmp_cwd):
    app = RoofscopeApp([GEMM])
    async with app.run_test(size=(80, 24)) as pilot:
        await opened(app, pilot)
        assert groups(app) == ["GEMM"]
        switcher = app.query_one(ContentSwitcher)
        for number, pane in enumerate(PANES, start=1):
            await pilot.press(str(number))
            await settle(app, pilot)
            assert switcher.current == pane.KEY, pane.KEY
            assert screen_text(app).strip()
        await pilot.press("1", "enter")  # the GEMM group's one launch
        await settle(app, pilot)
        assert "1 launch" in screen_text(app) and "1 launches" not in screen_text(app)
        await pilot.press("escape")
        await settle(app, pilot)
        assert "GEMM" in screen_text(app)
