"""The roofline as a reader sees it (issue 18): the terminal's own background, every roof's
colour readable on it, each roof labelled beside its line, the whole pane used, and only the
precisions the report worked in shown by default."""

from __future__ import annotations

import re

import pytest
from rich.color import Color, ColorSystem
from rich.terminal_theme import DEFAULT_TERMINAL_THEME

from roofscope.charts.roofline import (
    POINT_COLOR,
    ROOF_COLORS,
    SELECTED_COLOR,
    Point,
    Roof,
    render,
    roof_title,
)
from roofscope.tui.app import RoofscopeApp
from roofscope.tui.panes.roofline import RooflinePane
from tests.conftest import SAMPLES
from tests.test_tui import opened, settle

DARK = (18, 18, 18)  # Textual's dark background
BLACK = (0, 0, 0)  # a 16-colour terminal's
ROOFS = [
    Roof("fp32", "compute", 53.2e12, "report"),
    Roof("tensor", "compute", 851e12, "report"),
    Roof("dram", "memory", 3.33e12, "report"),
    Roof("l2", "memory", 8.68e12, "report"),
    Roof("l1", "memory", 26.6e12, "report"),
]
POINTS = [Point("conv", 100.0, 60e12, 0.4), Point("norm", 0.5, 1e12, 0.2, selected=True)]


def _luminance(rgb: tuple[int, int, int]) -> float:
    def channel(v: int) -> float:
        c = v / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = rgb
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


@pytest.mark.parametrize("name", [*ROOF_COLORS, "point", "selected"])
def test_every_line_and_marker_reads_3_to_1_in_truecolor_256_and_16_colours(name):
    rgb = {"point": POINT_COLOR, "selected": SELECTED_COLOR}.get(name) or ROOF_COLORS[name]
    color = Color.from_rgb(*rgb)
    eight_bit = tuple(color.downgrade(ColorSystem.EIGHT_BIT).get_truecolor(DEFAULT_TERMINAL_THEME))
    standard = tuple(color.downgrade(ColorSystem.STANDARD).get_truecolor(DEFAULT_TERMINAL_THEME))
    assert contrast(rgb, DARK) >= 3
    assert contrast(eight_bit, DARK) >= 3
    assert contrast(standard, BLACK) >= 3


def test_no_two_roofs_share_a_colour():
    assert len(set(ROOF_COLORS.values())) == len(ROOF_COLORS)


def test_drawn_on_the_terminal_background_with_every_roof_labelled():
    text = render(POINTS, ROOFS, 160, 48)
    assert "\x1b[48;" not in text, "no painted background: the app's own shows through"
    plain = re.sub(r"\x1b\[[0-9;]*m", "", text)
    for roof in ROOFS:
        assert roof_title(roof) in plain, roof_title(roof)
    assert roof_title(ROOFS[2]) == "DRAM 3.33 TB/s"
    assert roof_title(ROOFS[1]) == "tensor 851 TFLOP/s"


def test_labels_never_share_a_stretch_of_a_row():
    plain = re.sub(r"\x1b\[[0-9;]*m", "", render(POINTS, ROOFS, 80, 20))
    titles = [roof_title(r) for r in ROOFS]
    # a label drawn over another would leave neither whole: each shown one is whole, and the
    # ones left out for want of room are in the legend under the chart
    shown = [t for t in titles if t in plain]
    assert len(shown) >= 3
    for line in plain.splitlines():
        assert sum(t in line for t in titles) <= 2


def test_the_chart_takes_the_size_it_is_given_not_the_processes_terminal():
    lines = render(POINTS, ROOFS, 190, 55, color=False).splitlines()
    assert len(lines) >= 54 and max(map(len, lines)) >= 185


async def test_the_pane_uses_the_width_and_hides_roofs_of_unused_precisions(in_tmp_cwd):
    app = RoofscopeApp([str(SAMPLES / "resnet18_bf16_h100.ncu-raw.csv")])
    async with app.run_test(size=(200, 60)) as pilot:
        await opened(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        pane = app.query_one(RooflinePane)
        assert "fp64" in pane.hidden_roofs and "fp32" not in pane.hidden_roofs
        lines = re.sub(r"\x1b\[[0-9;]*m", "", pane.text).splitlines()
        assert max(map(len, lines)) >= 190
        assert "FP32 53.2 TFLOP/s" in pane.text or "FP32" in "".join(lines)
        legend = str(app.query_one("#roofline-legend").render())
        assert "hidden (Ctrl+P: Toggle roof): FP64" in legend
        pane.toggle_roof("fp64")
        assert "FP64" in re.sub(r"\x1b\[[0-9;]*m", "", pane.text)


async def test_the_kernels_filter_drives_the_points(in_tmp_cwd):
    app = RoofscopeApp([str(SAMPLES / "resnet18_fp32_h100.ncu-raw.csv")])
    async with app.run_test(size=(120, 40)) as pilot:
        await opened(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        pane = app.query_one(RooflinePane)
        every = len(pane.rows)
        await pilot.press("1", "slash", *"conv", "enter", "2")
        await settle(app, pilot)
        assert 0 < len(pane.rows) < every
        assert all("conv" in r["name"] for r in pane.rows)


async def test_a_report_without_flop_counters_hides_no_roof(in_tmp_cwd):
    """A details page counts no FLOPs at all: unknown is not "no work", so every roof stays."""
    app = RoofscopeApp([str(SAMPLES / "resnet18_fp32_h100.ncu-details.csv")])
    async with app.run_test(size=(100, 30)) as pilot:
        await opened(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        assert app.query_one(RooflinePane).hidden_roofs == set()
