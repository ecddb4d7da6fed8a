"""The roofline as a reader sees it (issue 18): the terminal's own background, every roof's
colour readable on it, each roof labelled beside its line, the whole pane used, and only the
precisions the report worked in shown by default."""

from __future__ import annotations

import itertools
import re

import pytest
from rich.color import Color, ColorSystem
from rich.terminal_theme import DEFAULT_TERMINAL_THEME

from roofscope.charts.roofline import (
    FAMILIES,
    LEVEL_MARKERS,
    LINK_COLOR,
    POINT_COLOR,
    ROOF_COLORS,
    ROOF_GLYPHS,
    SELECTED_COLOR,
    Point,
    Roof,
    legend,
    over_roof,
    render,
    roof_name,
    roof_title,
    why_over,
)
from roofscope.tui.app import RoofscopeApp
from roofscope.tui.panes.roofline import RooflinePane
from tests.conftest import SAMPLES
from tests.screen_text import contrast
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


@pytest.mark.parametrize("name", [*ROOF_COLORS, "point", "selected", "link"])
def test_every_line_and_marker_reads_3_to_1_in_truecolor_256_and_16_colours(name):
    rgb = {"point": POINT_COLOR, "selected": SELECTED_COLOR, "link": LINK_COLOR}.get(
        name
    ) or ROOF_COLORS.get(name)
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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
async def test_a_report_without_flop_counters_hides_no_roof(in_tmp_cwd):
    """A details page counts no FLOPs at all: unknown is not "no work", so every roof stays."""
    app = RoofscopeApp([str(SAMPLES / "resnet18_fp32_h100.ncu-details.csv")])
    async with app.run_test(size=(100, 30)) as pilot:
        await opened(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        assert app.query_one(RooflinePane).hidden_roofs == set()


def _plain(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


@pytest.mark.parametrize("ascii_only", [False, True], ids=["NO_COLOR", "ascii"])
def test_without_colour_each_roof_is_its_own_character_the_legend_shows(ascii_only):
    chart = render(POINTS, ROOFS, 120, 36, color=False, ascii_only=ascii_only)
    key = "  ".join(line.plain for line in legend(ROOFS, None, "dram", color=False))
    for roof in ROOFS:
        mark = ROOF_GLYPHS[roof.name]
        assert mark * 3 in chart, f"{roof.name} is not drawn with {mark!r}"
        assert f"{mark * 2} {roof_name(roof)} " in key
    assert len(set(ROOF_GLYPHS.values())) == len(ROOF_GLYPHS)
    markers = set(FAMILIES[0][1]) | {m[1] for m in LEVEL_MARKERS.values()}
    assert not markers & set(ROOF_GLYPHS.values()), "a roof's character is a point marker"


def test_in_colour_the_legend_keys_each_roof_in_its_line_colour():
    lines = legend(ROOFS, None, "dram")
    key = next(line for line in lines if "DRAM" in line.plain)
    colours = {span.style for span in key.spans}
    for roof in ROOFS:
        r, g, b = ROOF_COLORS[roof.name]
        assert f"rgb({r},{g},{b})" in colours
    assert "roofs (report):" in key.plain  # one source, said once


def test_each_diagonal_ends_at_the_top_compute_roof_shown():
    # one diagonal and one roof, no points: the line's last cell is on the roof's row
    rows = render([], [ROOFS[2], ROOFS[0]], 100, 30, color=False, ascii_only=True).splitlines()
    diagonal = [i for i, line in enumerate(rows) if "*" in line]
    roof = [i for i, line in enumerate(rows) if "=" * 5 in line]
    assert diagonal and roof and min(diagonal) >= roof[0] - 1  # never above the roof


def test_hierarchical_view_marks_each_level_and_joins_a_groups_points():
    levels = [
        Point("conv", ai, 40e12, 0.4, level=lv)
        for lv, ai in (("dram", 90.0), ("l2", 20.0), ("l1", 4.0))
    ]
    links = [(levels[2], levels[0])]
    colour = _plain(render(levels, ROOFS, 120, 36, links=links, hierarchical=True))
    assert all(mark in colour for mark in "■▲●")
    ascii_chart = render(levels, ROOFS, 120, 36, links=links, hierarchical=True, ascii_only=True)
    row = next(line for line in _plain(ascii_chart).splitlines() if "@" in line)
    assert re.search(r"o-+\^?-*\^-+@|o-+.*@", row), row  # L1 ... L2 ... DRAM on one joined row


def test_a_point_above_its_roof_is_marked_and_explained():
    dram, fp32 = ROOFS[2], ROOFS[0]
    fast = Point("copy", 0.5, 3e12, 0.3, tag="1", level="dram")  # 6 TB/s over a 3.33 TB/s roof
    ratio, roof = over_roof(fast, ROOFS)
    assert roof is dram and ratio == pytest.approx(3e12 / (0.5 * 3.33e12))
    assert "1 copy: 1.80× DRAM 3.33 TB/s" in why_over(fast, ratio, roof)
    assert "1!" in _plain(render([fast], ROOFS, 120, 36))
    # with the tensor roof hidden, tensor-core work is above the highest roof shown
    gemm = Point("gemm", 300.0, 400e12, 0.5, level="dram")
    ratio, roof = over_roof(gemm, [fp32, dram])
    assert roof is fp32 and "hidden roof" in why_over(gemm, ratio, roof)
    assert over_roof(gemm, ROOFS) is None
    assert over_roof(Point("conv", 100.0, 60e12, 0.4, level="dram"), ROOFS) is None


@pytest.mark.parametrize("size", [(80, 20), (100, 30), (200, 55)])
def test_labels_are_whole_and_never_overlap_at_any_size(size):
    points = [
        Point(f"g{i}", 10 ** (i / 3 - 1), 10 ** (10 + i / 2), 0.3 - i / 40, tag=str(i + 1))
        for i in range(8)
    ]
    plain = _plain(render(points, ROOFS, *size))
    placed = [t for t in (roof_title(r) for r in ROOFS) if t in plain]
    assert len(placed) >= (2 if size[1] < 30 else 4)
    for line in plain.splitlines():
        spans = [(m.start(), m.end()) for t in placed for m in re.finditer(re.escape(t), line)]
        spans.sort()
        assert all(a[1] < b[0] for a, b in itertools.pairwise(spans)), line


@pytest.mark.slow
async def test_hierarchy_time_filter_and_points_above_their_roof_in_the_pane(in_tmp_cwd):
    """h shows every level at once (l goes back to one level), c keeps only the groups that
    make up a share of the time, and a point above its roof is marked and explained."""
    app = RoofscopeApp([str(SAMPLES / "resnet18_bf16_h100.ncu-raw.csv")])
    async with app.run_test(size=(120, 40)) as pilot:
        await opened(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        pane = app.query_one(RooflinePane)
        groups = len(pane.rows)
        one_level = _plain(pane.text)
        assert "L2 8.68 TB/s" not in one_level and "DRAM 3.33 TB/s" in one_level
        await pilot.press("h")
        assert pane.hierarchical and all(m in pane.text for m in "■▲●")
        assert "L2 8.68" in _plain(pane.text) and "■ DRAM ▲ L2 ● L1" in pane.legend[0]
        points, links = pane.points(pane.shown_rows())
        assert len(points) > 2 * groups and links  # one point per level, joined
        await pilot.press("l")
        assert not pane.hierarchical and pane.level == "dram"
        await pilot.press("c", "c", "c")  # 100% -> 95% -> 90% -> 80%
        shown = pane.shown_rows()
        covered = sum(r["time_pct"] for r in shown)
        assert pane.coverage == 0.8 and len(shown) < groups
        assert covered >= 80 and covered - shown[-1]["time_pct"] < 80  # the fewest that cover
        assert f"{len(shown)} of {groups} groups = {covered:.0f}% of time" in pane.legend[0]
        await pilot.press("c", "c")
        assert pane.coverage == 1.0 and len(pane.shown_rows()) == groups
        assert not [line for line in pane.legend if line.startswith("!")]
        pane.toggle_roof("tensor")  # bf16 convs ran on tensor cores: now above every roof shown
        over = [line for line in pane.legend if line.startswith("!")]
        assert over and "× FP16 106 TFLOP/s (report)" in over[0] and "hidden roof" in over[0]
        assert "!" in _plain(pane.text)


def test_a_chart_spanning_few_decades_uses_its_height_and_ascii_has_no_box_characters():
    # plotext 6.1 squeezed a range that starts far from 0 into its top rows unless told
    roofs = [Roof("fp32", "compute", 5e13, "report"), Roof("dram", "memory", 3e12, "report")]
    point = [Point("a", 1.0, 1e12, 0.3, tag="1")]
    chart = render(point, roofs, 60, 16, color=False, ascii_only=True)
    assert sum("*" in line for line in chart.splitlines()) >= 6
    assert not set(chart) & set("┌┐└┘─│┤├┬┴┼⠀⣀⠉"), "box or braille characters in --ascii"
