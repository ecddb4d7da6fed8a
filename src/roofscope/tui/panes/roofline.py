"""Roofline pane: the step's groups (or its longest launches) on the report's roofs."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from roofscope.analysis.browse import Filter
from roofscope.charts.roofline import (
    LEVEL_MARKERS,
    OVER,
    Point,
    Roof,
    legend,
    over_roof,
    render,
    why_over,
)
from roofscope.present.text import shown
from roofscope.present.units import cut
from roofscope.quantities import (
    AI,
    BOUND_BASIS,
    FLOP_PER_S,
    FLOPS,
    FLOPS_COMPLETE,
    LEVEL_TITLES,
    LEVELS_OUTERMOST_FIRST,
    PRECISION_TITLES,
    PRECISIONS,
    ROOFS,
    TIME_PCT,
)
from roofscope.tui.panes.base import Command, Pane
from roofscope.tui.state import Change, ViewState
from roofscope.tui.widgets.plain import PlainStatic

if TYPE_CHECKING:
    from roofscope.session import Report

LAUNCH_POINTS = 2000  # the longest launches; a chart cell holds a few dozen anyway
TOP_TAGGED = 5  # the longest groups numbered on the chart, keyed in the legend
COVERAGES = (1.0, 0.95, 0.9, 0.8, 0.5)  # share of run time the points shown make up (c)


def _rank_tag(index: int) -> str:
    return str(index + 1) if index < TOP_TAGGED else ""


def covering(rows: list[dict[str, Any]], share: float) -> list[dict[str, Any]]:
    """The first rows (longest first) whose time makes up ``share`` of the run's."""
    if share >= 1:
        return rows
    taken, total = [], 0.0
    for row in rows:
        if total >= share * 100:
            break
        taken.append(row)
        total += row[TIME_PCT] or 0.0
    return taken


class RooflinePane(Pane, can_focus=True):
    KEY = "roofline"
    TITLE = "Roofline"
    RELOAD_ON = frozenset({Change.DATA, Change.REPORT, Change.FILTER})  # Kernels' filter
    EXPORT_SUFFIX = "txt"
    BINDINGS = [
        Binding("l", "level", "Level", tooltip="arithmetic intensity at DRAM / L2 / L1"),
        Binding("h", "hierarchy", "All levels", tooltip="each group at L1, L2 and DRAM at once"),
        Binding("t", "points", "Groups/launches", tooltip="groups or the 2,000 longest launches"),
        Binding("c", "coverage", "Time %", tooltip="only what makes up 100/95/90/80/50% of time"),
    ]
    DEFAULT_CSS = """
    RooflinePane #roofline-chart { height: 1fr; min-height: 8; width: 1fr; }
    RooflinePane #roofline-legend { height: 5; color: $text-muted; }
    """

    def __init__(self, state: ViewState, **kwargs: Any):
        super().__init__(state, **kwargs)
        self.level = "dram"
        self.hierarchical = False  # every level's point at once (h); l keeps one level
        self.coverage = 1.0  # of run time: the runtime filter (c)
        self.by = "group"
        # compute roofs of precisions the report did no work in, plus what the user toggled
        self.hidden_roofs: set[str] = set()
        self._defaults_for: int | None = None
        self.rows: list[dict[str, Any]] = []
        self.rows_version = 0  # counts the row sets loaded, for what the chart was drawn from
        self.drawn: tuple[Any, ...] | None = None
        self.text = ""
        self.legend: list[str] = []

    def compose(self) -> ComposeResult:
        yield PlainStatic(id="roofline-chart")
        yield PlainStatic(id="roofline-legend")

    def on_resize(self) -> None:
        if self.rows:
            self.redraw()

    def reload(self) -> None:
        self._load(self.state.current, self.by, self.state.filter)

    @work(thread=True, exclusive=True, group="roofline-rows")
    def _load(self, report: Report, by: str, flt: Filter) -> None:
        """The points Kernels' filter leaves (regex, efficiency bin, timeline window)."""
        limit = LAUNCH_POINTS if by == "launch" else None
        rows = report.rows(by, flt if flt != Filter() else None, limit=limit)
        flops = report.totals()[FLOPS]
        # counted and zero: a precision with no counters (a details page) stays shown
        unused = {p for p in PRECISIONS if p != "fp32" and flops.get(p) == 0}
        self.app.call_from_thread(self._loaded, rows, report.report_id, unused)

    def _loaded(self, rows: list[dict[str, Any]], report_id: int, unused: set[str]) -> None:
        self.rows = rows
        self.rows_version += 1
        if self._defaults_for != report_id:  # a report's first chart: the roofs its work used
            self._defaults_for = report_id
            self.hidden_roofs = set(unused)
        self.redraw()

    def _selected_name(self) -> object:
        if self.by == "launch":
            return self.state.launch
        return self.state.group

    def shown_rows(self) -> list[dict[str, Any]]:
        """The longest rows that together make up ``coverage`` of the run time (all of them
        at 100%): the runtime filter, applied on top of Kernels' filter."""
        return covering(self.rows, self.coverage)

    def points(self, rows: list[dict[str, Any]]) -> tuple[list[Point], list[tuple[Point, Point]]]:
        """One point per row at the chosen level, or (hierarchically) one per level joined by
        a line; the five longest numbered, the selection named."""
        selected = self._selected_name()
        points, links = [], []
        for i, r in enumerate(rows):  # by time, longest first
            if r.get(BOUND_BASIS) == "utilisation":
                # FLOPs incomplete and the utilisations name another roof than the measured
                # precisions' point: that point is no place to draw the row (docs/metrics.md §3)
                continue
            pick = r["name"] == selected
            name = shown(r["name"])  # a name from the file is data: control characters visible
            tag = cut(name, 24) if pick else _rank_tag(i)
            levels = LEVELS_OUTERMOST_FIRST if self.hierarchical else (self.level,)
            row = [
                Point(
                    name,
                    r[AI][level] or 0.0,
                    r[FLOP_PER_S] or 0.0,
                    (r[TIME_PCT] or 0.0) / 100,
                    pick,
                    level=level,
                    at_least=r.get(FLOPS_COMPLETE) is False,
                )
                for level in levels
            ]
            drawn = [p for p in row if p.ai > 0 and p.flop_per_s > 0]
            if not drawn:
                continue
            # the tag goes right of the rightmost point, where no level of its own sits
            right = max(drawn, key=lambda p: p.ai)
            points += [replace(p, tag=tag) if p is right else p for p in drawn]
            left = min(drawn, key=lambda p: p.ai)
            if left is not right:
                links.append((left, right))
        return points, links

    def redraw(self) -> None:
        """The legend first (its height depends on the width), then the chart in the rows
        left, so that the axes are never cut off under a legend that wrapped."""
        # the pane's width, not the chart's: that Static is as wide as its last content, so a
        # chart first drawn small stayed small at 200 columns
        width = self.size.width
        if width < 20:
            return
        # Shown again (a pane switch sends a Resize and shown()) with nothing changed: the
        # chart on screen is this one already; drawing it is ~25 ms of the UI thread
        drawing = (
            self.rows_version,
            self.size,
            self.level,
            self.hierarchical,
            self.coverage,
            self.by,
            frozenset(self.hidden_roofs),
            self._selected_name(),
            self.state.report,
            self.state.ascii_only,
            self.state.use_color,
        )
        if drawing == self.drawn:
            return
        rows = self.shown_rows()
        points, links = self.points(rows)
        report = self.state.current
        roofs = [
            Roof(c.name, c.kind, c.value, c.source)
            for c in report.ceilings
            if c.name in ROOFS
            and c.name not in self.hidden_roofs
            # one level: its own diagonal alone (the points' x is intensity at that level)
            and (self.hierarchical or c.kind != "memory" or c.name == self.level)
        ]
        pick = next((p for p in points if p.selected), None)
        lines = self._legend_lines(roofs, points, pick, report.is_nsys, len(rows))
        legend_box = self.query_one("#roofline-legend", Static)
        most = max(3, self.size.height // 3)
        used = min(sum(len(line.wrap(self.app.console, width)) for line in lines), most)
        legend_box.styles.height = used
        legend_box.update(Text("\n").join(lines))
        self.legend = [line.plain for line in lines]
        height = self.size.height - used
        if height < 6:
            return
        self.text = render(
            points,
            roofs,
            width,
            height,
            ascii_only=self.state.ascii_only,
            color=self.state.use_color,
            links=links,
            hierarchical=self.hierarchical,
        )
        self.query_one("#roofline-chart", Static).update(Text.from_ansi(self.text, no_wrap=True))
        self.drawn = drawing

    def _legend_lines(
        self, roofs: list[Roof], points: list[Point], pick: Point | None, nsys: bool, count: int
    ) -> list[Text]:
        """Most important first: the legend is cut to a third of the pane."""
        ascii_only, color = self.state.ascii_only, self.state.use_color
        what = "groups" if self.by == "group" else f"{LAUNCH_POINTS:,} longest launches"
        if count < len(self.rows):
            total = sum((r[TIME_PCT] or 0.0) for r in self.rows[:count])
            what = f"{count} of {len(self.rows)} {what} = {total:.0f}% of time"
        if self.hierarchical:
            marks = " ".join(
                f"{LEVEL_MARKERS[level][1 if ascii_only else 0]} {LEVEL_TITLES[level]}"
                for level in LEVELS_OUTERMOST_FIRST
            )
            axes = f"x: FLOP/B at each level (h) · y: FLOP/s · {what} (t c) · {marks}"
        else:
            sizes = "@ ≥20% of time o ≥5% . less" if ascii_only else "● ≥20% of time • ≥5% · less"
            level = LEVEL_TITLES[self.level]
            axes = f"x: FLOP/B at {level} (l h) · y: FLOP/s · {what} (t c) · {sizes}"
        lines = [Text(axes)]
        if nsys:
            lines.append(
                Text(
                    "nsys exports have no FLOP or byte counters, so no points: open an ncu export "
                    "of the same program beside it (roofscope open run.sqlite run.ncu-rep.csv)"
                )
            )
        elif not points and self.rows:  # e.g. `profile --preset time`: durations only
            lines.append(
                Text(
                    "no FLOP or byte counts in this export, so no points: profile with the "
                    "roofline or quick preset (ncu --section SpeedOfLight_RooflineChart)"
                )
            )
        keyed = legend(
            roofs, pick, self.level, ascii_only=ascii_only, color=color, width=self.size.width
        )
        if pick is not None:  # the highlighted point next: it must survive a short terminal
            lines.append(keyed.pop())
        ranked = [
            f"{i + 1} {shown(r['name'])}" for i, r in enumerate(self.shown_rows()[:TOP_TAGGED])
        ]
        if ranked and points:  # the key to the numbers on the chart
            lines.append(Text("  ".join(ranked)))
        lines += keyed
        over = [(p, *hit) for p in points if (hit := over_roof(p, roofs)) is not None]
        for p, ratio, roof in sorted(over, key=lambda o: -o[0].share)[:2]:
            lines.append(Text(f"{OVER} {why_over(p, ratio, roof)}"))
        if len(over) > 2:
            lines.append(Text(f"{OVER} {len(over) - 2} more points above their roof"))
        hidden = [PRECISION_TITLES.get(r, r.upper()) for r in PRECISIONS if r in self.hidden_roofs]
        if hidden:
            lines.append(
                Text(f"hidden (Ctrl+P: Toggle roof): {', '.join(hidden)} (no work in them)")
            )
        return lines

    def action_level(self) -> None:
        if self.hierarchical:  # back to the one-level view, at the level it had
            self.hierarchical = False
            self.redraw()
            return
        self.level = LEVELS_OUTERMOST_FIRST[
            (LEVELS_OUTERMOST_FIRST.index(self.level) + 1) % len(LEVELS_OUTERMOST_FIRST)
        ]
        self.redraw()

    def action_hierarchy(self) -> None:
        self.hierarchical = not self.hierarchical
        self.redraw()

    def action_coverage(self) -> None:
        self.coverage = COVERAGES[(COVERAGES.index(self.coverage) + 1) % len(COVERAGES)]
        self.redraw()

    def action_points(self) -> None:
        self.by = "launch" if self.by == "group" else "group"
        self.reload()

    def state_changed(self, change: Change) -> None:
        super().state_changed(change)
        if change is Change.SELECTION and self.display:
            self.redraw()  # the ◉ moves; hidden, it is drawn when shown

    def shown(self) -> None:
        if self.stale:
            super().shown()
        else:
            self.redraw()

    def commands(self) -> Iterable[Command]:
        for roof in ROOFS:
            yield (
                f"Toggle roof: {roof}",
                lambda r=roof: self.toggle_roof(r),
                "show/hide on Roofline",
            )

    def toggle_roof(self, name: str) -> None:
        self.hidden_roofs ^= {name}
        self.redraw()

    def current_text(self) -> str:
        """The chart as drawn (roofs labelled on it), then its axes and legend lines."""
        return "\n".join([Text.from_ansi(self.text).plain, "", *self.legend])
