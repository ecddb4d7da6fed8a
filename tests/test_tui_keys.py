"""What keeps keys fast at a million launches (issue 20, item 3), checked without timing: a
pane switch back and forth runs no SQL and draws nothing again, a burst of filter keys queries
once after the last key, and tables keep what they rendered while it is still right."""

from __future__ import annotations

import gc
import time
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.widgets import DataTable, Input

from roofscope.analysis.browse import Filter
from roofscope.tui.app import RoofscopeApp
from roofscope.tui.panes import kernels as kernels_module
from roofscope.tui.panes import roofline as roofline_module
from roofscope.tui.panes.kernels import KernelsPane
from roofscope.tui.panes.roofline import RooflinePane
from roofscope.tui.widgets.plain import PlainTable
from roofscope.tui.widgets.virtual_table import Column, VirtualTable
from tests.test_tui import RESNET, groups, opened, settle

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("shared_sample_cache")]
CONV = {"conv fprop", "conv dgrad", "conv wgrad"}


class CountingConnection:
    """The session's DuckDB connection, recording each statement sent through it."""

    def __init__(self, con: Any):
        self._con = con
        self.queries: list[str] = []

    def execute(self, query: str, *args: Any, **kwargs: Any) -> Any:
        self.queries.append(query)
        return self._con.execute(query, *args, **kwargs)

    def sql(self, query: str, *args: Any, **kwargs: Any) -> Any:
        self.queries.append(query)
        return self._con.sql(query, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._con, name)


def count_queries(app: RoofscopeApp) -> CountingConnection:
    session = app.session
    assert session is not None
    counting = CountingConnection(session.con)
    session.con = counting  # type: ignore[assignment]
    for report in session.reports:
        report._con = counting  # type: ignore[assignment]
    return counting


def rendered_cells(table: DataTable) -> int:
    """Cells rendered so far (DataTable keeps each one it renders in its cell cache)."""
    return len(table._cell_render_cache) + sum(len(kept[1]) for kept in table._kept.values())


async def test_pane_switches_run_no_sql_and_draw_nothing_again(in_tmp_cwd, monkeypatch):
    charts: list[int] = []
    real_render = roofline_module.render

    def counted_render(*args: Any, **kwargs: Any) -> str:
        charts.append(1)
        return real_render(*args, **kwargs)

    monkeypatch.setattr(roofline_module, "render", counted_render)
    app = RoofscopeApp([RESNET])
    async with app.run_test(size=(120, 40)) as pilot:
        await opened(app, pilot)
        for key in ("2", "1", "2", "1"):  # the roofline's points load once; each look seen once
            await pilot.press(key)
            await settle(app, pilot)
        kernels = app.query_one(KernelsPane)
        table = app.query_one("#groups", PlainTable)
        fills: list[int] = []
        real_fill = kernels._fill_groups
        kernels._fill_groups = lambda t: (fills.append(1), real_fill(t))[1]  # type: ignore[method-assign]
        sql = count_queries(app)
        charts.clear()
        cells, updates = rendered_cells(table), table._update_count
        for key in ("2", "1", "2", "1", "2", "1"):
            await pilot.press(key)
            await settle(app, pilot)
        assert sql.queries == []  # the data did not change: nothing is asked of DuckDB
        assert charts == []  # the roofline on screen is the one drawn before
        assert fills == [] and table._update_count == updates  # the groups are not refilled
        assert rendered_cells(table) == cells  # …nor a cell rendered again
        # a new selection is drawn when the roofline is shown next, still without SQL
        await pilot.press("down")
        await settle(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        assert len(charts) == 1
        assert any(app.state.group in line for line in app.query_one(RooflinePane).legend)
        assert sql.queries == []


async def test_a_burst_of_filter_keys_queries_once_after_the_last(in_tmp_cwd, monkeypatch):
    monkeypatch.setattr(kernels_module, "FILTER_DEBOUNCE_S", 1.5)  # wider than a slow key
    app = RoofscopeApp([RESNET])
    async with app.run_test(size=(120, 40)) as pilot:
        await opened(app, pilot)
        report = app.state.current
        asked: list[str | None] = []
        real_rows = report.rows

        def rows(by: str = "group", flt: Any = None, limit: int | None = None) -> Any:
            if by == "group":
                asked.append(flt.regex if flt else None)
            return real_rows(by, flt, limit)

        report.rows = rows  # type: ignore[method-assign]
        told: list[str] = []
        app.notify = lambda message, **kw: told.append(message)  # type: ignore[method-assign]
        await pilot.press("slash", *"conv")
        assert asked == [] and app.state.filter.regex is None  # typing only edits the box
        start = time.monotonic()
        while app.state.filter.regex != "conv" and time.monotonic() - start < 20:
            await pilot.pause(0.05)
        await settle(app, pilot)
        assert asked == ["conv"]  # one query, after the last key, for the final text
        assert set(groups(app)) == CONV
        box = app.query_one("#kernels-filter", Input)
        assert box.has_class("shown") and box.has_focus  # still typing
        await pilot.press("enter")  # keeps what is shown: nothing to ask again
        await settle(app, pilot)
        assert asked == ["conv"] and not box.has_class("shown")
        # a half-typed regex waits quietly (the box opens with its text selected: typing
        # replaces it); Esc cancels back to the filter from before
        await pilot.press("slash", *"conv|GEMM(")
        await pilot.pause(2.0)
        await settle(app, pilot)
        assert told == [] and app.state.filter.regex == "conv" and asked == ["conv"]
        await pilot.press("backspace")  # "conv|GEMM" is whole: applied once the keys pause
        start = time.monotonic()
        while app.state.filter.regex != "conv|GEMM" and time.monotonic() - start < 20:
            await pilot.pause(0.05)
        await settle(app, pilot)
        wider = {str(r["name"]) for r in real_rows("group", Filter("conv|GEMM"))}
        assert set(groups(app)) == wider and wider > CONV
        await pilot.press("escape")
        await settle(app, pilot)
        assert app.state.filter.regex == "conv" and set(groups(app)) == CONV
        assert asked == ["conv", "conv|GEMM", "conv"]


class _Table(App[None]):
    def compose(self) -> ComposeResult:
        table = PlainTable(id="t", cursor_type="row")
        table.add_columns("name", "value")
        for i in range(8):
            table.add_row(f"kernel {i}", f"{i * 1.5:.1f}", key=str(i))
        yield table
        yield Input(id="box")


def _cursor_background(table: PlainTable) -> Any:
    """The background of the cursor row as the table draws it now."""
    width, height = table.size
    strips = table.render_lines(Region(0, 0, width, height))
    row = table.cursor_row + 1  # under the header
    return next(s.style.bgcolor for s in strips[row] if s.style and s.text.strip())


async def test_the_table_keeps_its_cells_per_look_and_follows_focus_and_theme():
    app = _Table()
    async with app.run_test(size=(60, 16)) as pilot:
        table = app.query_one(PlainTable)
        table.focus()
        await pilot.pause()
        focused = _cursor_background(table)
        app.query_one("#box", Input).focus()
        await pilot.pause()
        blurred = _cursor_background(table)
        assert blurred != focused  # the cursor shows where the focus is
        cells = rendered_cells(table)
        table.focus()
        await pilot.pause()
        assert _cursor_background(table) == focused
        assert rendered_cells(table) == cells  # both looks were kept: nothing rendered again
        app.theme = "textual-light" if app.theme != "textual-light" else "textual-dark"
        await pilot.pause()
        # a new theme draws in its own colours, not from a look kept under the old one
        cursor = table.get_component_rich_style("datatable--cursor")
        assert _cursor_background(table) == cursor.bgcolor


async def test_the_launch_list_redraws_only_what_moved_and_holds_pages_not_all_rows():
    fetched: list[tuple[int, int]] = []

    def fetch(start: int, size: int) -> list[tuple]:
        fetched.append((start, size))
        return [(i, f"k{i}") for i in range(start, min(start + size, 1_000_000))]

    class _Launches(App[None]):
        def compose(self) -> ComposeResult:
            yield VirtualTable([Column("id", 8), Column("kernel", 10, right=False)])

    app = _Launches()
    async with app.run_test(size=(40, 12)) as pilot:
        table = app.query_one(VirtualTable)
        table.focus()
        table.set_source(fetch, 1_000_000, fetch(0, 128))
        await pilot.pause()
        lines = table.render_lines(Region(0, 0, *table.size))
        assert "k0" in lines[1].text and all("…" not in s.text for s in lines)
        drawn: list[int] = []
        real_draw = table._draw_line
        table._draw_line = lambda y, *a: (drawn.append(y), real_draw(y, *a))[1]  # type: ignore[method-assign]
        await pilot.press("down")
        lines = table.render_lines(Region(0, 0, *table.size))
        assert sorted(drawn) == [1, 2]  # the row left and the row reached, not the screen
        assert lines[2].text.strip().startswith("1") and table.cursor == 1
        await pilot.press("end")
        await pilot.pause()
        for _ in range(20):  # the last page arrives from its worker
            await pilot.pause(0.05)
            if table.row(table.cursor) is not None:
                break
        assert table.row(table.cursor) == (999_999, "k999999")
        held = sum(len(page) for page in table._pages.values())
        assert held <= 3 * 128 and len(fetched) <= 3  # pages on screen, not a million rows


async def test_startup_objects_stay_out_of_the_collector_while_the_app_runs(in_tmp_cwd):
    """A full collection walked everything startup made (40–170 ms, on one key in twenty);
    frozen after the first paint, and given back when the app ends."""
    app = RoofscopeApp([RESNET])
    async with app.run_test(size=(80, 24)) as pilot:
        await opened(app, pilot)
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0
