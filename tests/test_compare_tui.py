"""The Compare pane (7) driven through Pilot on the real H100 ResNet-18 fp32 and bf16 reports."""

from __future__ import annotations

import re

import pytest
from textual.widgets import DataTable

from roofscope.analysis.cost import load_prices
from roofscope.tui.app import RoofscopeApp
from roofscope.tui.panes.compare import ComparePane
from tests.conftest import SAMPLES
from tests.screen_text import assert_snapshot, screen_text
from tests.test_compare import RESNET_BF16, RESNET_FP32
from tests.test_tui import RESNET, opened, settle
from tests.test_tui_snapshots import stable_screen

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("shared_sample_cache")]


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "300")
    monkeypatch.setenv("LINES", "100")


async def compare_open(app: RoofscopeApp, pilot) -> ComparePane:
    await opened(app, pilot)
    await pilot.press("7")
    await settle(app, pilot, 5)
    return app.query_one(ComparePane)


async def test_compare_pane_rows_chart_and_keys(in_tmp_cwd):
    app = RoofscopeApp([RESNET_FP32, RESNET_BF16], ascii_only=False)
    app.state.use_color = False
    async with app.run_test(size=(100, 32)) as pilot:
        pane = await compare_open(app, pilot)
        table = app.query_one("#compare-table", DataTable)
        expected = app.session.diff(0, 1, "group")
        assert table.row_count == len(expected.rows)
        text = screen_text(app)
        assert "● resnet18_fp32_h100.ncu-raw.csv [1/2] → ■ resnet18_bf16_h100" in text
        assert "(-5.2%, 1.06× faster)" in text
        # each report's own roof after its marker, the roofs they share once, as in Roofline
        assert "● tensor 429 T" in text and "■ tensor 851 T" in text
        assert len(re.findall(r"FP32 53\.7 T(?!FLOP)", text)) == 1  # in the legend, once
        # without colour each roof has its own character, and each report's tensor roof is
        # labelled on the chart with its marker, as the Roofline pane labels its roofs
        chart = pane.current_text()
        assert "● tensor 429 TFLOP/s" in chart or "■ tensor 851 TFLOP/s" in chart
        # the first row is highlighted: its before and after points are marked and joined
        first = expected.rows[0].name
        assert f"▶ {first}:" in text
        assert "◉" in pane.current_text() and "▣" in pane.current_text()
        await pilot.press("down")
        await settle(app, pilot)
        assert f"▶ {expected.rows[1].name}:" in screen_text(app)
        assert app.state.group == expected.rows[1].name  # shared with the other panes
        await pilot.press("x")
        await settle(app, pilot, 5)
        assert "■ resnet18_fp32" in screen_text(app) and "(+5.5%, 1.06× slower)" in screen_text(app)
        await pilot.press("v")
        await settle(app, pilot, 5)
        assert pane.by == "kernel"
        assert table.row_count == len(app.session.diff(1, 0, "kernel").rows)
        header, rows = pane.current_table()
        assert header[0] == "kernel" and len(rows) == table.row_count


async def test_compare_cycles_reports_with_three_open(in_tmp_cwd):
    mobilenet = str(SAMPLES / "mobilenetv2_fp32_h100.ncu-raw.csv")
    app = RoofscopeApp([RESNET_FP32, RESNET_BF16, mobilenet], ascii_only=True)
    async with app.run_test(size=(100, 32)) as pilot:
        pane = await compare_open(app, pilot)
        assert (pane.before, pane.after) == (0, 1)
        await pilot.press("right_square_bracket")
        await settle(app, pilot, 5)
        assert (pane.before, pane.after) == (0, 2)
        assert "[3/3]" in screen_text(app)
        await pilot.press("left_square_bracket")
        await settle(app, pilot, 5)
        assert (pane.before, pane.after) == (1, 2)
        assert "X" in pane.current_text() and "Y" in pane.current_text()  # ASCII markers


async def test_compare_with_one_report_says_how(in_tmp_cwd):
    app = RoofscopeApp([RESNET], ascii_only=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await compare_open(app, pilot)
        assert "Compare needs two reports with kernels" in screen_text(app)


async def test_compare_snapshot_80x24(in_tmp_cwd):
    app = RoofscopeApp([RESNET_FP32, RESNET_BF16], ascii_only=False)
    app.state.use_color = False
    async with app.run_test(size=(80, 24)) as pilot:
        await compare_open(app, pilot)
        await pilot.press("down", "down")
        await settle(app, pilot)
        text = await stable_screen(app, pilot)
    chart_rows = [line for line in text.splitlines() if "┤" in line or "│" in line]
    assert len(chart_rows) >= 6
    assert "◉" in text and "▣" in text
    assert_snapshot("compare-80x24", text)


async def test_scaling_cost_and_mig_view(in_tmp_cwd, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))  # the shipped example prices
    b16 = str(SAMPLES / "resnet18_bf16_b16_h100.ncu-raw.csv.gz")
    b32 = str(SAMPLES / "resnet18_bf16_b32_h100.ncu-raw.csv.gz")
    rec = str(SAMPLES / "h100_matmul.parquet")
    app = RoofscopeApp([b16, b32, rec], ascii_only=False)
    async with app.run_test(size=(110, 60)) as pilot:
        pane = await compare_open(app, pilot)
        await pilot.press("s")
        await settle(app, pilot, 5)
        assert pane.has_class("decide")
        text = screen_text(app)
        assert "scaling across 2 reports on NVIDIA H100 80GB HBM3 (varying: batch)" in text
        assert "samples/s (more is better)" in text
        assert "cost of 1 epoch of 1,000,000 samples" in text and "EXAMPLES" in text
        cheapest = app.session.cost(load_prices(), epochs=1, samples=1_000_000)["rows"][0]
        assert f"${cheapest['cost_usd']:,.2f}" in text  # the cheapest row, as computed here
        assert "MIG: vm GPU 0" in text and "→ 7g.80gb (ID 0)" in text
        await pilot.press("s")
        await settle(app, pilot, 5)
        assert not pane.has_class("decide")
        assert app.query_one("#compare-table", DataTable).row_count > 0


async def test_the_first_drawing_at_80x24_is_the_one_it_keeps(in_tmp_cwd):
    """The chart's box must not change under it after the first draw: the legend grew from
    two rows to three after the chart was drawn, which cut the x axis off until the next
    redraw (a reviewer at 80×24, in colour, with no key pressed)."""
    app = RoofscopeApp([RESNET_FP32, RESNET_BF16], ascii_only=False)
    async with app.run_test(size=(80, 24)) as pilot:
        pane = await compare_open(app, pilot)
        first = await stable_screen(app, pilot)
        chart = app.query_one("#compare-chart")
        assert len(pane.current_text().splitlines()) <= chart.size.height
        assert "0.01" in first and "1k" in first  # the x axis' labels are on screen
        await pilot.press("down", "up")
        await settle(app, pilot, 5)
        assert await stable_screen(app, pilot) == first
