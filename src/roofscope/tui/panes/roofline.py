"""Roofline pane: the step's groups (or its longest launches) on the report's roofs."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from roofscope.analysis.browse import Filter
from roofscope.charts.roofline import Point, Roof, legend, render
from roofscope.present.units import cut
from roofscope.quantities import (
    AI,
    FLOP_PER_S,
    FLOPS,
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
LEGEND_ROWS = 8  # at most; the chart takes the rest
TOP_TAGGED = 5  # the longest groups numbered on the chart, keyed in the legend


def _rank_tag(index: int) -> str:
    return str(index + 1) if index < TOP_TAGGED else ""


class RooflinePane(Pane, can_focus=True):
    KEY = "roofline"
    TITLE = "Roofline"
    RELOAD_ON = frozenset({Change.DATA, Change.REPORT, Change.FILTER})  # Kernels' filter
    EXPORT_SUFFIX = "txt"
    BINDINGS = [
        Binding("l", "level", "AI level", tooltip="arithmetic intensity at DRAM / L2 / L1"),
        Binding("t", "points", "Groups/launches", tooltip="groups or the 2,000 longest launches"),
    ]
    DEFAULT_CSS = """
    RooflinePane #roofline-chart { height: 1fr; min-height: 8; width: 1fr; }
    RooflinePane #roofline-legend { height: 5; color: $text-muted; }
    """

    def __init__(self, state: ViewState, **kwargs: Any):
        super().__init__(state, **kwargs)
        self.level = "dram"
        self.by = "group"
        # compute roofs of precisions the report did no work in, plus what the user toggled
        self.hidden_roofs: set[str] = set()
        self._defaults_for: int | None = None
        self.rows: list[dict[str, Any]] = []
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
        if self._defaults_for != report_id:  # a report's first chart: the roofs its work used
            self._defaults_for = report_id
            self.hidden_roofs = set(unused)
        self.redraw()

    def _selected_name(self) -> object:
        if self.by == "launch":
            return self.state.launch
        return self.state.group

    def redraw(self) -> None:
        """The legend first (its height depends on the width), then the chart in the rows
        left, so that the axes are never cut off under a legend that wrapped."""
        # the pane's width, not the chart's: that Static is as wide as its last content, so a
        # chart first drawn small stayed small at 200 columns
        width = self.size.width
        if width < 20:
            return
        selected = self._selected_name()
        points = [
            Point(
                str(r["name"]),
                r[AI][self.level] or 0.0,
                r[FLOP_PER_S] or 0.0,
                (r[TIME_PCT] or 0.0) / 100,
                r["name"] == selected,
                tag=cut(str(r["name"]), 24) if r["name"] == selected else _rank_tag(i),
            )
            for i, r in enumerate(self.rows)  # by time, longest first
        ]
        report = self.state.current
        roofs = [
            Roof(c.name, c.kind, c.value, c.source)
            for c in report.ceilings
            if c.name in ROOFS and c.name not in self.hidden_roofs
        ]
        pick = next((p for p in points if p.selected), None)
        lines = self._legend_lines(roofs, pick, report.is_nsys)
        legend_box = self.query_one("#roofline-legend", Static)
        rows = sum(len(Text(line).wrap(self.app.console, width)) for line in lines)
        legend_box.styles.height = min(rows, LEGEND_ROWS)
        legend_box.update("\n".join(lines))
        self.legend = lines
        height = self.size.height - min(rows, LEGEND_ROWS)
        if height < 6:
            return
        self.text = render(
            points,
            roofs,
            width,
            height,
            ascii_only=self.state.ascii_only,
            color=self.state.use_color,
        )
        self.query_one("#roofline-chart", Static).update(Text.from_ansi(self.text, no_wrap=True))

    def _legend_lines(self, roofs: list[Roof], pick: Point | None, nsys: bool) -> list[str]:
        lines = legend(roofs, pick, self.level)
        if pick is not None:  # the highlighted point first: it must survive a short terminal
            lines.insert(0, lines.pop())
        if nsys:
            lines.insert(
                0,
                "nsys exports have no FLOP or byte counters, so no points: open an ncu export "
                "of the same program beside it (roofscope open run.sqlite run.ncu-rep.csv)",
            )
        hidden = [PRECISION_TITLES.get(r, r.upper()) for r in PRECISIONS if r in self.hidden_roofs]
        if hidden:
            lines.append(f"hidden (Ctrl+P: Toggle roof): {', '.join(hidden)} (no work in them)")
        ranked = [f"{i + 1} {r['name']}" for i, r in enumerate(self.rows[:TOP_TAGGED])]
        if ranked:
            lines.insert(0, "longest: " + " · ".join(ranked))
        what = "groups" if self.by == "group" else f"the {LAUNCH_POINTS:,} longest launches"
        lines.insert(
            0,
            f"x: FLOP/byte at {LEVEL_TITLES[self.level]} (l) · y: FLOP/s · {what} (t): "
            "● ≥20% of time, • ≥5%, · less",
        )
        return lines

    def action_level(self) -> None:
        self.level = LEVELS_OUTERMOST_FIRST[
            (LEVELS_OUTERMOST_FIRST.index(self.level) + 1) % len(LEVELS_OUTERMOST_FIRST)
        ]
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
