"""The hierarchical roofline as text: memory diagonals, compute horizontals, points.

A pure function of data and size. plotext draws the axes and lines; the log-log transform is
done here (log10 of the data on linear axes with decade ticks), because plotext 6.1's own log
rulers with explicit ticks collapsed the plot (docs/decisions.md).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from roofscope.charts.plotext_backend import Label, Series, decade_chart
from roofscope.present.units import si
from roofscope.quantities import LEVEL_TITLES, PRECISION_TITLES


@dataclass(frozen=True)
class Point:
    name: str
    ai: float  # FLOP/B at the chosen memory level
    flop_per_s: float
    share: float  # of the run time, 0..1
    selected: bool = False
    series: int = 0  # which report, when several share a chart (Compare)
    tag: str = ""  # drawn beside the marker: the top groups' numbers, the selection's name


@dataclass(frozen=True)
class Roof:
    name: str  # fp32, tensor, dram, l2, …
    kind: str  # compute | memory
    value: float  # FLOP/s or B/s
    source: str
    series: int | None = None  # which report's roof, when several share a chart


_ANSI = re.compile(r"\x1b\[[0-9;]*m")

# Compare: each report its own glyph family (big, medium, small, selected) and colour.
FAMILIES = (
    ("●•·◉", "@o.X"),
    ("■▪▫▣", "#+,Y"),
    ("▲▴˄◬", "^*'Z"),
    ("◆◇⋄◈", "%&`W"),
)
COLORS = ("blue", "red", "green", "magenta")
# One colour per roof, each at least 3:1 against a dark terminal background (#121212, black)
# in truecolor and in its 256- and 16-colour approximations (tests/test_roofline_chart.py),
# and no two alike: FP64 and the L2 diagonal used to share one pink.
ROOF_COLORS: dict[str, tuple[int, int, int]] = {
    "fp64": (240, 98, 146),  # pink
    "fp32": (255, 183, 77),  # orange
    "fp16": (255, 241, 118),  # yellow
    "tensor": (206, 147, 216),  # lilac
    "dram": (79, 195, 247),  # light blue
    "l2": (129, 199, 132),  # green
    "l1": (224, 224, 224),  # light grey
}
POINT_COLOR = (255, 255, 255)
SELECTED_COLOR = (255, 112, 67)  # the ◉ of the selection: orange-red


def roof_title(roof: Roof) -> str:
    """``DRAM 3.35 TB/s``, ``FP32 53.7 TFLOP/s`` — a roof as labelled on the chart."""
    name = LEVEL_TITLES.get(roof.name) or PRECISION_TITLES.get(roof.name) or roof.name.upper()
    unit = "B/s" if roof.kind == "memory" else "FLOP/s"
    return f"{name} {si(roof.value, unit)}"


def glyph(share: float, selected: bool, ascii_only: bool, series: int = 0) -> str:
    """Marker by share of run time (the big consumers stand out), in the report's family."""
    family = FAMILIES[series % len(FAMILIES)][1 if ascii_only else 0]
    if selected:
        return family[3]
    if share >= 0.2:
        return family[0]
    if share >= 0.05:
        return family[1]
    return family[2]


def series_color(series: int | None) -> str | None:
    return None if series is None else COLORS[series % len(COLORS)]


def _decades(lo: float, hi: float, slots: int = 99) -> tuple[list[float], list[str]]:
    """Decade ticks, every n-th one when more decades than ``slots`` would crowd the axis
    (two labels on one row of a short chart read as one number)."""
    a, b = math.floor(lo), math.ceil(hi)
    step = max(1, math.ceil((b - a + 1) / max(slots, 2)))
    ticks = list(range(a, b + 1, step))
    return [float(t) for t in ticks], [si(10.0**t, compact=True) for t in ticks]


def render(
    points: list[Point],
    roofs: list[Roof],
    width: int,
    height: int,
    *,
    ascii_only: bool = False,
    color: bool = True,
    links: Sequence[tuple[Point, Point]] = (),
) -> str:
    """The chart (``height`` rows) for the given points and roofs; empty roofs are allowed.
    ``links`` draws a line from each first point to its second (Compare: before → after)."""
    several = any(p.series for p in points) or any(r.series is not None for r in roofs)
    memory = [r for r in roofs if r.kind == "memory" and r.value > 0]
    compute = [r for r in roofs if r.kind == "compute" and r.value > 0]
    pts = [p for p in points if p.ai > 0 and p.flop_per_s > 0]
    xs = [p.ai for p in pts]
    ys = [p.flop_per_s for p in pts]
    top = max((r.value for r in compute), default=max(ys, default=1e12))
    widest = max((r.value for r in memory), default=None)
    ridges = [top / r.value for r in memory]
    x_lo = math.log10(min([*xs, *ridges, 1.0])) - 0.5
    x_hi = math.log10(max([*xs, *ridges, 1.0])) + 0.5
    y_lo = math.log10(min([*ys, *(10**x_lo * r.value for r in memory), top])) - 0.3
    y_hi = math.log10(top) + 0.3
    series: list[Series] = []
    for r in memory:
        x_end = math.log10(top / r.value)
        series.append(
            Series(
                [x_lo, x_end],
                [x_lo + math.log10(r.value), math.log10(top)],
                color=_roof_color(r, several),
            )
        )
    for r in compute:
        x_start = math.log10(r.value / widest) if widest else x_lo
        series.append(
            Series(
                [max(x_start, x_lo), x_hi],
                [math.log10(r.value)] * 2,
                color=_roof_color(r, several),
            )
        )
    for a, b in links:
        if min(a.ai, b.ai, a.flop_per_s, b.flop_per_s) > 0:
            series.append(
                Series(
                    [math.log10(a.ai), math.log10(b.ai)],
                    [math.log10(a.flop_per_s), math.log10(b.flop_per_s)],
                    color="yellow",
                )
            )
    # draw small points first so that the big and the selected ones stay on top
    for p in sorted(pts, key=lambda p: (p.selected, p.share)):
        series.append(
            Series(
                [math.log10(p.ai)],
                [math.log10(p.flop_per_s)],
                marker=glyph(p.share, p.selected, ascii_only, p.series),
                color=series_color(p.series)
                if several
                else (SELECTED_COLOR if p.selected else POINT_COLOR),
            )
        )
    if not series:
        return "nothing to draw: no FLOPs, bytes or ceilings in this report"
    # pin the axes: invisible corner points keep every roof and point inside the frame
    series.insert(0, Series([x_lo, x_hi], [y_lo, y_hi], marker=" "))
    frame = (x_lo, x_hi, y_lo, y_hi)
    yticks = _decades(y_lo, y_hi, height - 3)
    # the plot area: the y tick labels and the frame's two sides take columns, the frame and
    # the x tick labels four rows (plotext's layout, 6.1)
    area = (width - max(map(len, yticks[1]), default=0) - 2, height - 4)
    labels = [] if several else roof_labels(memory, compute, top, frame, area, pts)
    xticks = _decades(x_lo, x_hi)

    def draw(labels: list[Label]) -> tuple[str, str]:
        """The chart as asked, and its text without colour codes (to check labels in)."""
        out = decade_chart(series, width, height, xticks, yticks, ascii_only=ascii_only,
                           color=color, labels=labels)  # fmt: skip
        return out, _ANSI.sub("", out) if color else out

    # plotext rounds a label's place its own way: while two still collide on screen, the labels
    # of lowest priority (point tags, then roofs by the order placed) are left out
    roof_texts = {roof_title(r) for r in roofs}
    tags = next((i for i, label in enumerate(labels) if label.text not in roof_texts), len(labels))
    out, plain = draw(labels)
    for _ in range(len(labels)):
        damaged = [i for i, label in enumerate(labels) if label.text not in plain]
        if not damaged:
            break
        # a damaged point tag goes, else the label of lowest priority (one render per try:
        # this runs on the UI thread at every redraw)
        culprit = next((i for i in damaged if i >= tags), len(labels) - 1)
        labels.pop(culprit)
        tags -= culprit < tags
        out, plain = draw(labels)
    return out


def _roof_color(roof: Roof, several: bool) -> str | tuple[int, int, int] | None:
    if several:
        return series_color(roof.series)
    return ROOF_COLORS.get(roof.name, POINT_COLOR)


def roof_labels(
    memory: list[Roof],
    compute: list[Roof],
    top: float,
    frame: tuple[float, float, float, float],
    area: tuple[int, int],
    points: Sequence[Point] = (),
) -> list[Label]:
    """Each roof's name and value beside its line, no two on one stretch of one row: compute
    roofs at the right end just above their line, bandwidths at the left along their diagonal.
    A label that fits nowhere is left out (the legend under the chart lists every roof). Then
    each tagged point's tag just right of its marker, where it fits."""
    x_lo, x_hi, y_lo, y_hi = frame
    cols, rows = max(area[0], 10), max(area[1], 4)  # the plot area, in cells
    dx = (x_hi - x_lo) / (cols - 1)  # data units per column and per row
    dy = (y_hi - y_lo) / (rows - 1)
    taken: list[tuple[int, int, int]] = []  # (row, first column, last column)

    def place(x: float, y: float, text: str) -> bool:
        row = round((y_hi - y) / dy)
        col = round((x - x_lo) / dx)
        if row < 0 or row >= rows or col < 0 or col + len(text) > cols:
            return False
        # one cell of margin each side: plotext rounds a position its own way
        if any(r == row and c0 - 1 <= col + len(text) and col <= c1 + 1 for r, c0, c1 in taken):
            return False
        taken.append((row, col, col + len(text)))
        return True

    for p in points:  # a label never covers a marker
        if p.ai > 0 and p.flop_per_s > 0:
            row = round((y_hi - math.log10(p.flop_per_s)) / dy)
            col = round((math.log10(p.ai) - x_lo) / dx)
            taken.append((row, col, col))
    labels = []
    for r in sorted(compute, key=lambda r: -r.value):
        text = roof_title(r)
        right = x_hi - (len(text) + 1) * dx
        spots = [
            (right - k * (len(text) + 2) * dx, math.log10(r.value) + side * dy)
            for side in (1, -1)  # the row above the line, else the row below
            for k in range(3)
        ]
        for x, y in spots:
            if place(x, y, text):
                labels.append(Label(x, y, text, ROOF_COLORS.get(r.name)))
                break
    for r in sorted(memory, key=lambda r: r.value):
        text = roof_title(r)
        x_end = math.log10(top / r.value)
        for step in range(cols):
            x = x_lo + (step + 1) * 2 * dx
            y = x + math.log10(r.value) + dy  # just above the diagonal where the label starts
            if x >= x_end:
                break
            if place(x, y, text):
                labels.append(Label(x, y, text, ROOF_COLORS.get(r.name)))
                break
    for p in sorted(points, key=lambda p: (not p.selected, -p.share)):
        if p.tag and p.ai > 0 and p.flop_per_s > 0:
            x, y = math.log10(p.ai) + 2 * dx, math.log10(p.flop_per_s)
            if place(x, y, p.tag):
                labels.append(Label(x, y, p.tag, SELECTED_COLOR if p.selected else POINT_COLOR))
    return labels


def short_source(source: str) -> str:
    """``report: 2 × …`` -> ``report``; ``tensor_bf16 (…); datasheet …`` -> ``datasheet``."""
    for kind in ("report", "datasheet", "user", "measured"):
        if source.startswith(kind) or f"; {kind}" in source:
            return kind
    return source.split(":")[0][:12]


def legend(roofs: list[Roof], selected: Point | None, level: str) -> list[str]:
    """Compact lines under the chart: every roof with its value and source, then the
    selected point."""

    def item(r: Roof) -> str:
        return f"{r.name.upper()} {si(r.value, compact=True)} ({short_source(r.source)})"

    compute = "  ".join(item(r) for r in roofs if r.kind == "compute")
    memory = "  ".join(item(r) for r in roofs if r.kind == "memory")
    lines = []
    if compute:
        lines.append(f"FLOP/s: {compute}")
    if memory:
        lines.append(f"B/s: {memory}")
    if selected is not None:
        lines.append(
            f"▶ {selected.name}: AI({level}) {selected.ai:.3g} FLOP/B, "
            f"{si(selected.flop_per_s, 'FLOP/s', compact=True)}, {selected.share:.1%} of time"
        )
    return lines
