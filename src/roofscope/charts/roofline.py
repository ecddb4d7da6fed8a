"""The hierarchical roofline as text: memory diagonals, compute horizontals, points.

A pure function of data and size. plotext draws the axes and lines; the log-log transform is
done here (log10 of the data on linear axes with decade ticks), because plotext 6.1's own log
rulers with explicit ticks collapsed the plot (docs/decisions.md).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from rich.text import Text

from roofscope.charts.plotext_backend import Color, Label, Series, decade_chart
from roofscope.present.units import si
from roofscope.quantities import LEVEL_TITLES, PRECISION_TITLES


@dataclass(frozen=True)
class Point:
    name: str
    ai: float  # FLOP/B at the memory level ``level``
    flop_per_s: float
    share: float  # of the run time, 0..1
    selected: bool = False
    series: int = 0  # which report, when several share a chart (Compare)
    tag: str = ""  # drawn beside the marker: the top groups' numbers, the selection's name
    level: str = ""  # dram | l2 | l1: the diagonal that bounds it (its marker, hierarchically)
    at_least: bool = False  # FLOPs a lower bound (a precision not measured): AI and FLOP/s ≥


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
# Compare: a roof one report has and the other has at another value is drawn in the roof's
# colour with its report's line (braille, then light box lines; in ASCII ".", then "-"), and
# labelled with its report's marker: "● tensor 429 TFLOP/s", "■ tensor 851 TFLOP/s".
SERIES_LINES = ((None, "."), ("─", "-"), ("┄", ":"), ("╌", "~"))
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
# Without colour (NO_COLOR, a monochrome terminal, --ascii) each roof is drawn with its own
# character, the one the legend shows beside its name; none is a marker of one report's points
# (Compare, where the other reports' markers take these characters, keeps plain lines).
ROOF_GLYPHS: dict[str, str] = {
    "fp64": "%",
    "fp32": "=",
    "fp16": "~",
    "tensor": "#",
    "dram": "*",
    "l2": "+",
    "l1": ":",
}
# The hierarchical view: a group's point at each level, shaped (and coloured) by level, as
# Nsight Compute's hierarchical roofline does; (Unicode, ASCII).
LEVEL_MARKERS: dict[str, tuple[str, str]] = {
    "dram": ("■", "@"),
    "l2": ("▲", "^"),
    "l1": ("●", "o"),
}
POINT_COLOR = (255, 255, 255)
SELECTED_COLOR = (255, 112, 67)  # the ◉ of the selection: orange-red
LINK_COLOR = (176, 176, 176)  # the line joining one group's levels: grey, 8:1 on #121212
OVER = "!"  # beside a point above its roof (the legend says why)


def roof_title(roof: Roof) -> str:
    """``DRAM 3.35 TB/s``, ``FP32 53.7 TFLOP/s`` — a roof as labelled on the chart."""
    return f"{roof_name(roof)} {si(roof.value, roof_unit(roof))}"


def series_mark(series: int | None, ascii_only: bool) -> str:
    """The marker of a report's biggest points (``●``, ``■``…), which its own roofs carry in
    their labels; empty for a roof every report shares."""
    return "" if series is None else FAMILIES[series % len(FAMILIES)][1 if ascii_only else 0][0]


def roof_name(roof: Roof) -> str:
    return LEVEL_TITLES.get(roof.name) or PRECISION_TITLES.get(roof.name) or roof.name.upper()


def roof_unit(roof: Roof) -> str:
    return "B/s" if roof.kind == "memory" else "FLOP/s"


def _titles(roof: Roof, ascii_only: bool = False) -> tuple[str, str]:
    """A roof's label on the chart, then the short form tried where that does not fit; a
    roof of one report's alone starts with that report's marker."""
    mark = series_mark(roof.series, ascii_only)
    mark = f"{mark} " if mark else ""
    return f"{mark}{roof_title(roof)}", f"{mark}{roof_name(roof)} {si(roof.value)}"


def roof_key(roof: Roof, ascii_only: bool, color: bool) -> str:
    """The legend's sample of a roof's line: a bar in its colour (a report's own roof in
    Compare: its report's line), or the character it is drawn with where there is no colour."""
    if color:
        if roof.series is not None and roof.series % len(SERIES_LINES):
            return SERIES_LINES[roof.series % len(SERIES_LINES)][1 if ascii_only else 0] * 2
        return "--" if ascii_only else "━━"
    return ROOF_GLYPHS.get(roof.name, ".") * 2


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


def over_roof(point: Point, roofs: Sequence[Roof]) -> tuple[float, Roof] | None:
    """How far a point lies above the roofs shown, and the roof it breaks: the lower of the
    highest compute roof and its level's diagonal at its intensity (``None`` when under both).
    A point above its roof means the roof is not what ran: a precision whose roof is hidden,
    clocks above the roof's, or a datasheet bandwidth below what the GPU sustained."""
    compute = [r for r in roofs if r.kind == "compute" and r.value > 0]
    bounds = [(r.value, r) for r in compute if r.value == max(c.value for c in compute)]
    bounds += [
        (r.value * point.ai, r)
        for r in roofs
        if r.kind == "memory" and r.value > 0 and r.name == point.level
    ]
    if not bounds or point.ai <= 0 or point.flop_per_s <= 0:
        return None
    bound, roof = min(bounds, key=lambda b: b[0])
    ratio = point.flop_per_s / bound
    return (ratio, roof) if ratio > 1.005 else None  # half a percent: rounding in the counters


def why_over(point: Point, ratio: float, roof: Roof) -> str:
    """One line for the legend: which roof the point breaks, by how much, and what that means."""
    name = f"{point.tag} {point.name}" if point.tag.isdigit() else point.name
    where = f"{name}: {ratio:.2f}× {roof_title(roof)} ({short_source(roof.source)})"
    if roof.kind == "memory":
        return (
            f"{where} at its intensity: more bytes/s than that roof, which is below what the GPU "
            "sustained (a datasheet or base-clock value)"
        )
    return (
        f"{where}, the highest roof shown: its work ran on a hidden roof (Ctrl+P: Toggle roof) "
        "or above the roof's clock"
    )


def _decades(lo: float, hi: float, rows: int | None = None) -> tuple[list[float], list[str]]:
    """Decade ticks; on an axis of ``rows`` rows, every n-th one where a decade takes less
    than 1.1 rows, so that no two labels can round to one row (``100T`` and ``1P`` on one row
    of a short chart read ``101P``)."""
    a, b = math.ceil(lo), math.floor(hi)  # inside: plotext widens the frame to its ticks
    per_decade = (max(rows, 2) - 1) / max(hi - lo, 1e-9) if rows is not None else 99.0
    step = max(1, math.ceil(1.1 / per_decade))
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
    hierarchical: bool = False,
) -> str:
    """The chart (``height`` rows) for the given points and roofs; empty roofs are allowed.
    ``links`` draws a line from each first point to its second (Compare: before → after; the
    hierarchical view: one group's levels). ``hierarchical`` marks points by their level."""
    several = any(p.series for p in points) or any(r.series is not None for r in roofs)
    memory = [r for r in roofs if r.kind == "memory" and r.value > 0]
    compute = [r for r in roofs if r.kind == "compute" and r.value > 0]
    pts = [p for p in points if p.ai > 0 and p.flop_per_s > 0]
    if not several:  # a point above its roof carries a mark (the legend says why)
        pts = [replace(p, tag=p.tag + OVER) if over_roof(p, roofs) is not None else p for p in pts]
    xs = [p.ai for p in pts]
    ys = [p.flop_per_s for p in pts]
    top = max((r.value for r in compute), default=max(ys, default=1e12))
    widest = max((r.value for r in memory), default=None)
    ridges = [top / r.value for r in memory]
    x_lo = math.log10(min([*xs, *ridges, 1.0])) - 0.5
    x_hi = math.log10(max([*xs, *ridges, 1.0])) + 0.5
    y_lo = math.log10(min([*ys, *(10**x_lo * r.value for r in memory), top])) - 0.3
    # room above the top roof for its label: a row, up to a decade
    row = (math.log10(top) - y_lo) / max(height - 5, 1)
    y_hi = math.log10(top) + min(1.0, max(0.3, 1.2 * row))
    series: list[Series] = []
    for r in memory:  # each diagonal ends where it meets the top compute roof
        x_end = math.log10(top / r.value)
        series.append(
            Series(
                [x_lo, x_end],
                [x_lo + math.log10(r.value), math.log10(top)],
                color=ROOF_COLORS.get(r.name, POINT_COLOR) if color else None,
                line=_roof_line(r, ascii_only, color),
            )
        )
    for r in compute:  # each compute roof starts where the widest diagonal meets it
        x_start = math.log10(r.value / widest) if widest else x_lo
        series.append(
            Series(
                [max(x_start, x_lo), x_hi],
                [math.log10(r.value)] * 2,
                color=ROOF_COLORS.get(r.name, POINT_COLOR) if color else None,
                line=_roof_line(r, ascii_only, color),
            )
        )
    for a, b in links:
        if min(a.ai, b.ai, a.flop_per_s, b.flop_per_s) > 0:
            series.append(
                Series(
                    [math.log10(a.ai), math.log10(b.ai)],
                    [math.log10(a.flop_per_s), math.log10(b.flop_per_s)],
                    color=LINK_COLOR if hierarchical else "yellow",
                    line="-" if ascii_only else None,
                )
            )
    # draw small points first so that the big and the selected ones stay on top
    for p in sorted(pts, key=lambda p: (p.selected, p.share)):
        series.append(
            Series(
                [math.log10(p.ai)],
                [math.log10(p.flop_per_s)],
                marker=_marker(p, ascii_only, hierarchical),
                color=_point_color(p, several, hierarchical),
            )
        )
    if not series:
        return "nothing to draw: no FLOPs, bytes or ceilings in this report"
    # pin the axes: invisible corner points keep every roof and point inside the frame
    series.insert(0, Series([x_lo, x_hi], [y_lo, y_hi], marker=" "))
    frame = (x_lo, x_hi, y_lo, y_hi)
    yticks = _decades(y_lo, y_hi, height - 4)  # the plot's rows (plotext's layout, 6.1)
    # the plot area: the y tick labels and the frame's two sides take columns, the frame and
    # the x tick labels four rows (plotext's layout, 6.1)
    area = (width - max(map(len, yticks[1]), default=0) - 2, height - 4)
    labels = roof_labels(memory, compute, top, frame, area, pts, ascii_only)
    xticks = _decades(x_lo, x_hi)

    def draw(labels: list[Label]) -> tuple[str, str]:
        """The chart as asked, and its text without colour codes (to check labels in)."""
        out = decade_chart(series, width, height, xticks, yticks, ascii_only=ascii_only,
                           color=color, labels=labels, frame=frame)  # fmt: skip
        return out, _ANSI.sub("", out) if color else out

    # plotext rounds a label's place its own way: while a label is not whole on screen (two
    # collided), the damaged one of lowest priority (tags, then roofs by the order placed) is
    # left out, one render per try: this runs on the UI thread at every redraw
    out, plain = draw(labels)
    for _ in range(len(labels)):
        damaged = [i for i, label in enumerate(labels) if label.text not in plain]
        if not damaged:
            break
        labels.pop(damaged[-1])
        out, plain = draw(labels)
    return out


def _marker(p: Point, ascii_only: bool, hierarchical: bool) -> str:
    if hierarchical and p.level in LEVEL_MARKERS:
        return LEVEL_MARKERS[p.level][1 if ascii_only else 0]
    return glyph(p.share, p.selected, ascii_only, p.series)


def _point_color(p: Point, several: bool, hierarchical: bool) -> Color | None:
    if several:
        return series_color(p.series)
    if p.selected:
        return SELECTED_COLOR
    if hierarchical:
        return ROOF_COLORS.get(p.level, POINT_COLOR)
    return POINT_COLOR


def _roof_line(roof: Roof, ascii_only: bool, color: bool) -> str | None:
    """Braille in colour; without colour (or in ASCII) the roof's own character. A roof of
    one report's alone (Compare) takes its report's line where there is colour to tell the
    roofs apart."""
    if roof.series is not None and color:
        return SERIES_LINES[roof.series % len(SERIES_LINES)][1 if ascii_only else 0]
    if color and not ascii_only:
        return None
    return ROOF_GLYPHS.get(roof.name, ".")


def roof_labels(
    memory: list[Roof],
    compute: list[Roof],
    top: float,
    frame: tuple[float, float, float, float],
    area: tuple[int, int],
    points: Sequence[Point] = (),
    ascii_only: bool = False,
) -> list[Label]:
    """Each roof's name and value beside its line, and each tagged point's tag beside its
    marker, none over another label, a marker or a line: the tags first (right of their
    marker, else left), then compute roofs at the right end above their line (else below),
    then each diagonal's label on its upper-left side. A roof label that fits nowhere is left
    out (the legend lists every roof); a tag that fits only over a line goes there.
    Returned roofs first, tags last: the order in which labels are dropped is from the end."""
    x_lo, x_hi, y_lo, y_hi = frame
    cols, rows = max(area[0], 10), max(area[1], 4)  # the plot area, in cells
    dx = (x_hi - x_lo) / (cols - 1)  # data units per column and per row
    dy = (y_hi - y_lo) / (rows - 1)
    taken: list[tuple[int, int, int]] = []  # labels and markers: (row, first col, last col)
    drawn: list[tuple[int, int, int]] = []  # the lines' cells

    def cell(x: float, y: float) -> tuple[int, int]:
        return round((y_hi - y) / dy), round((x - x_lo) / dx)

    def free(row: int, col: int, text: str, spans: list[tuple[int, int, int]]) -> bool:
        # one cell of margin each side: plotext rounds a position its own way
        end = col + len(text) - 1
        return not any(r == row and c0 <= end + 1 and col - 1 <= c1 for r, c0, c1 in spans)

    def place(x: float, y: float, text: str, over_lines: bool = False) -> bool:
        row, col = cell(x, y)
        if row < 0 or row >= rows or col < 0 or col + len(text) > cols:
            return False
        if not free(row, col, text, taken) or not (over_lines or free(row, col, text, drawn)):
            return False
        taken.append((row, col, col + len(text) - 1))
        return True

    def key(r: Roof) -> tuple[str, int | None]:  # Compare: a roof each of two reports has
        return r.name, r.series

    diagonal: dict[tuple, dict[int, list[int]]] = {}  # each diagonal's columns by row
    for r in memory:
        for col in range(cols):
            x = x_lo + col * dx
            if x > math.log10(top / r.value) + dx:
                break
            row, _ = cell(x, x + math.log10(r.value))
            drawn.append((row, col, col))
            diagonal.setdefault(key(r), {}).setdefault(row, []).append(col)

    def rows_at(y: float) -> list[int]:
        """The row a line or marker at ``y`` lands on, both rows when it is near half-way:
        plotext rounds those its own way."""
        at = (y_hi - y) / dy
        return sorted({math.floor(at + 0.35), math.floor(at + 0.65)})

    flat: dict[int, set[tuple]] = {}  # rows with a compute roof's line: a label there is its
    lines: dict[tuple, list[int]] = {}  # each compute roof's row(s)
    widest = max((m.value for m in memory), default=None)
    for r in compute:
        first = cell(math.log10(r.value / widest) if widest else x_lo, 0)[1]
        lines[key(r)] = rows_at(math.log10(r.value))
        for row in lines[key(r)]:
            drawn.append((row, max(first, 0), cols))
            flat.setdefault(row, set()).add(key(r))

    def beside(r: Roof, y: float) -> bool:
        """Not on the row of another roof's horizontal line, where it would read as that's."""
        return flat.get(cell(x_lo, y)[0], {key(r)}) <= {key(r)}

    for p in points:  # a label never covers a marker
        if p.ai > 0 and p.flop_per_s > 0:
            col = cell(math.log10(p.ai), 0)[1]
            taken += [(row, col, col) for row in rows_at(math.log10(p.flop_per_s))]
    tags = []
    for p in sorted(points, key=lambda p: (not p.selected, -p.share)):
        if p.tag and p.ai > 0 and p.flop_per_s > 0:
            x, y = math.log10(p.ai), math.log10(p.flop_per_s)
            left = x - (len(p.tag) + 1) * dx
            # beside the marker, else on the row above or below it, reading as attached
            spots = [(x + 2 * dx, y), (left, y)]
            spots += [(s, y + side * dy) for side in (1, -1) for s in (x + dx, left + dx)]
            spot = next((s for s in spots if place(*s, p.tag)), None)
            if spot is None:
                spot = next((s for s in spots if place(*s, p.tag, over_lines=True)), None)
            if spot is not None:
                color = SELECTED_COLOR if p.selected else POINT_COLOR
                tags.append(Label(*spot, p.tag, color))
    labels = []
    widest = max((m.value for m in memory), default=None)
    for r in sorted(memory, key=lambda r: r.value):
        rows_up = sorted(diagonal.get(key(r), {}).items(), reverse=True)
        # the full title, else its short form, else the short form over a neighbouring
        # diagonal (parallel ones a few cells apart leave no gap between them)
        titles = _titles(r, ascii_only)
        for text, over_lines in (*((t, False) for t in titles), (titles[1], True)):
            # row by row up the diagonal: the label ending left of the line's cells in that
            # row, else starting right of them (below the line)
            # (a cell apart more than the margin: plotext draws a line a cell off at times)
            spots = [(x_lo + (min(c) - 2 - len(text)) * dx, y_hi - row * dy) for row, c in rows_up]
            spots += [(x_lo + (max(c) + 3) * dx, y_hi - row * dy) for row, c in rows_up]
            spot = next((s for s in spots if beside(r, s[1]) and place(*s, text, over_lines)), None)
            if spot is not None:
                labels.append(Label(*spot, text, ROOF_COLORS.get(r.name)))
                break
    for r in sorted(compute, key=lambda r: -r.value):
        start = math.log10(r.value / widest) if widest else x_lo
        # the row above the line, else the row below (a whole row, clear of a line that
        # may land on either of two)
        beside_rows = (min(lines[key(r)]) - 1, max(lines[key(r)]) + 1)
        for text in _titles(r, ascii_only):  # the full title, else its short form
            right = x_hi - (len(text) + 1) * dx
            spots = [
                (right - k * 2 * dx, y_hi - row * dy)
                for row in beside_rows
                for k in range(cols // 2)
            ]
            # at least half of it over its own line, not off before the line starts
            spot = next(
                (
                    s
                    for s in spots
                    if s[0] + len(text) / 2 * dx >= start and beside(r, s[1]) and place(*s, text)
                ),
                None,
            )
            if spot is not None:
                labels.append(Label(*spot, text, ROOF_COLORS.get(r.name)))
                break
    return labels + tags


def short_source(source: str) -> str:
    """``report: 2 × …`` -> ``report``; ``tensor_bf16 (…); datasheet …`` -> ``datasheet``."""
    for kind in ("report", "datasheet", "user", "measured"):
        if source.startswith(kind) or f"; {kind}" in source:
            return kind
    return source.split(":")[0][:12]


def legend(
    roofs: list[Roof],
    selected: Point | None,
    level: str,
    *,
    ascii_only: bool = False,
    color: bool = True,
    width: int | None = None,
) -> list[Text]:
    """Compact lines under the chart: every roof keyed by its line's colour (or character),
    with its value (a roof of one report's alone after that report's marker), the source said
    once when all agree; then the selected point. With ``width`` the roofs are packed into
    lines of at most that many cells, never breaking between a key and its roof."""
    sources = {short_source(r.source) for r in roofs}

    def item(r: Roof) -> Text:
        key = Text(
            roof_key(r, ascii_only, color), style=_rgb(ROOF_COLORS.get(r.name)) if color else ""
        )
        source = "" if len(sources) == 1 else f" ({short_source(r.source)})"
        mark = series_mark(r.series, ascii_only)
        return key + f" {mark + ' ' if mark else ''}{roof_name(r)} {si(r.value)}{source}"

    origin = f" ({next(iter(sources))})" if len(sources) == 1 else ""
    pieces: list[Text] = []  # what may start a line: the first carries the title
    for kind, title in (("compute", "FLOP/s"), ("memory", "B/s")):
        items = [item(r) for r in roofs if r.kind == kind]
        if items:
            lead = Text(f"roofs{origin}: " if not pieces else "· ") + Text(f"{title} ")
            pieces += [lead + items[0], *items[1:]]
    lines = _packed(pieces, width) if pieces else []
    if selected is not None:
        bound = "≥ " if selected.at_least else ""  # FLOPs with a precision not measured
        lines.append(
            Text(
                f"▶ {selected.name}: AI({level}) {bound}{selected.ai:.3g} FLOP/B, "
                f"{bound}{si(selected.flop_per_s, 'FLOP/s')}, {selected.share:.1%} of time"
            )
        )
    return lines


def _packed(pieces: list[Text], width: int | None) -> list[Text]:
    """``pieces`` two spaces apart, a new line where the next would pass ``width`` (one line
    without a width)."""
    lines = [pieces[0].copy()]
    for piece in pieces[1:]:
        if width is not None and lines[-1].cell_len + 2 + piece.cell_len > width:
            lines.append(piece.copy())
        else:
            lines[-1].append("  ")
            lines[-1].append_text(piece)
    return lines


def _rgb(rgb: tuple[int, int, int] | None) -> str:
    return "" if rgb is None else f"rgb({rgb[0]},{rgb[1]},{rgb[2]})"
