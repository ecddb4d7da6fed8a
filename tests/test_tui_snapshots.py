"""Text snapshots of every view at 80×24 and 200×60, in colour and NO_COLOR, plus checks that
charts have content and that what they draw reads on the background.

A snapshot alone would happily keep a blank chart, so each test also asserts what must be on
the screen. ROOFSCOPE_UPDATE_SNAPSHOTS=1 rewrites tests/snapshots/ after a deliberate change.
"""

from __future__ import annotations

import pytest

from roofscope.tui.app import RoofscopeApp
from tests.screen_text import assert_snapshot, faint_cells, screen_text
from tests.test_tui import RESNET, opened, settle

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("shared_sample_cache")]

# Each view, the keys that open it from the one before, and what must be on it: a snapshot
# alone would happily keep a blank chart.
VIEWS = (
    ("kernels", "1", ["conv fprop", "GEMM", "layout transform"]),
    ("roofline", "2", ["┤", "roofs (report): FLOP/s", "DRAM 3.34", "◉", "1 layout transform"]),
    ("hierarchical", "h", ["┤", "■ DRAM ▲ L2 ● L1", "■", "▲", "L1 26.8 T"]),
    ("efficiency", "3", ["potential speedup", "90%–100%"]),
    ("detail", "4", ["time_s", "fp32", "metrics"]),
)
# Without colour each roof is its own character, the one its legend key shows
NO_COLOR_SHOWS = {"roofline": ["== FP32", "** DRAM", "*****", "====="], "hierarchical": [":: L1"]}
CHARTS = ("roofline", "hierarchical")


async def stable_screen(app: RoofscopeApp, pilot) -> str:
    """The screen once three captures in a row agree, each after a pause and the app idle
    again (DataTable sizes its columns on idle, the footer relabels its keys a moment after a
    focus change): two captures 50 ms apart agreed mid-update on a loaded machine."""
    previous, agreed = screen_text(app), 0
    for _ in range(60):
        await pilot.pause(0.05)
        await pilot.pause()
        current = screen_text(app)
        agreed = agreed + 1 if current == previous else 0
        if agreed >= 2:
            return current
        previous = current
    return previous


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch):
    # plotext clamps charts to the terminal it thinks it is in; make that independent of CI
    monkeypatch.setenv("COLUMNS", "300")
    monkeypatch.setenv("LINES", "100")


@pytest.mark.parametrize("colour", [True, False], ids=["colour", "NO_COLOR"])
@pytest.mark.parametrize("size", [(80, 24), (200, 60)], ids=["80x24", "200x60"])
async def test_every_view_in_colour_and_not(size, colour, monkeypatch, in_tmp_cwd):
    """One app per size and colour mode walks Kernels, Roofline (one level, hierarchical),
    Efficiency and Detail; each screen is checked and compared with its snapshot, and in
    colour every cell drawn on the chart reads at least 3:1 against the background."""
    if not colour:
        monkeypatch.setenv("NO_COLOR", "1")
    app = RoofscopeApp([RESNET], ascii_only=False)
    assert app.state.use_color is colour
    async with app.run_test(size=size) as pilot:
        await opened(app, pilot)
        await pilot.press("down", "down")  # select a group: highlighted on roofline, in detail
        await settle(app, pilot)
        for view, keys, must_show in VIEWS:
            await pilot.press(*keys)
            await settle(app, pilot, 5)
            text = await stable_screen(app, pilot)
            for needle in must_show + ([] if colour else NO_COLOR_SHOWS.get(view, [])):
                assert needle in text, f"{needle!r} missing from the {view} view"
            if view in CHARTS:
                chart_rows = [line for line in text.splitlines() if "│" in line or "┤" in line]
                assert len(chart_rows) >= (8 if size[1] == 24 else 25)
                if colour:
                    faint = faint_cells(app, "#roofline-chart")
                    assert not faint, f"under 3:1 on the {view} chart: {faint[:5]}"
            name = f"{view}-{size[0]}x{size[1]}" + ("" if colour else "-nocolor")
            assert_snapshot(name, text)
