"""The TUI over a store of 1,000,000 synthetic launches: scroll, sort and filter stay usable."""

from __future__ import annotations

import pytest

from roofscope.tui.app import RoofscopeApp
from roofscope.tui.panes.kernels import KernelsPane
from roofscope.tui.widgets.virtual_table import PAGE, VirtualTable
from tests.synthetic import synthetic_session
from tests.test_tui import opened, settle

pytestmark = pytest.mark.slow  # loads real reports, drives the TUI or starts processes

N = 1_000_000


@pytest.fixture(scope="module")
def million():
    return synthetic_session(N)


async def test_million_launches_scroll_sort_filter(million, in_tmp_cwd):
    app = RoofscopeApp([], session=million)
    async with app.run_test(size=(160, 50)) as pilot:
        await opened(app, pilot)
        kernels = app.query_one(KernelsPane)
        assert sum(r["launches"] for r in kernels.rows) == N
        gemm = next(r for r in kernels.rows if r["name"] == "GEMM")
        app.query_one(KernelsPane).jump_to("GEMM")
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot, 5)
        table = app.query_one("#launches", VirtualTable)
        assert table.count == gemm["launches"]
        # the first page came with the list; the table holds pages on screen, not every row
        assert list(table._pages) == [0] and len(table._pages[0]) == PAGE
        await pilot.press("end")
        await settle(app, pilot, 5)
        assert table.cursor == table.count - 1
        assert table.row(table.cursor) is not None  # the last page was fetched on demand
        for _ in range(3):
            await pilot.press("pageup")
        await settle(app, pilot, 5)
        assert table.row(table.cursor) is not None
        await pilot.press("r")  # ascending time
        await settle(app, pilot, 5)
        first = [table.row(i)[2] for i in range(20)]
        assert first == sorted(first)
        await pilot.press("escape", "slash", *"reduce", "enter")
        await settle(app, pilot, 5)
        assert [r["name"] for r in kernels.rows] == ["reduction"]
        assert kernels.rows[0]["launches"] == N // 6
