"""Compare pane: two of the open reports row by row, and how the rows moved on the roofline.

The table shows the same cells as ``roofscope diff`` (output/diff.py); the chart puts both
reports' groups on one roofline, each report in its own glyph family and colour with its own
roofs, and joins the highlighted row's before and after points with a line.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from rich.console import Group
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static

from roofscope.analysis.compare import Diff, DiffRow
from roofscope.charts.roofline import FAMILIES, Point, Roof, legend, render
from roofscope.errors import RoofscopeError
from roofscope.output import decide as decide_out
from roofscope.output import diff as out
from roofscope.output import scaling as scaling_out
from roofscope.output.export import dicts_table
from roofscope.present.text import plain, shown, shown_doc
from roofscope.present.units import cut
from roofscope.quantities import (
    AI,
    FLOP_PER_S,
    LEVEL_TITLES,
    LEVELS_OUTERMOST_FIRST,
    ROOFS,
    TIME_PCT,
)
from roofscope.tui.messages import GroupSelected
from roofscope.tui.panes.base import Pane
from roofscope.tui.state import Change, ViewState
from roofscope.tui.widgets.plain import PlainStatic, PlainTable

BYS = ("group", "kernel", "launch")
DECIDE_SAMPLES = 1_000_000  # cost compared per million training samples
# Column widths with the space before the next column (the table pads no cells), so that
# 80 columns hold every column beside a 16-character name.
WIDTHS = {
    "before": 8,
    "after": 8,
    "Δtime": 9,
    "Δ%": 8,
    "% of roof": 10,
    "ΔFLOP/s": 8,
    "kernels": 10,
}


LEGEND_ROWS = 3  # roofs on up to two rows, then the highlighted row: a fixed height, so that
# the chart drawn first keeps its height (an auto height grew after the first draw)


class ComparePane(Pane, can_focus=True):
    KEY = "compare"
    TITLE = "Compare"
    HINT = "two or more reports"
    RELOAD_ON = frozenset({Change.DATA, Change.REPORT})
    BINDINGS = [
        Binding("left_square_bracket", "before", "Before", tooltip="next before report"),
        Binding("right_square_bracket", "after", "After", tooltip="next after report"),
        Binding("x", "swap", "Swap", tooltip="swap before and after"),
        Binding("v", "by", "Rows", tooltip="rows by group / kernel / launch"),
        Binding("s", "decide", "Scaling/cost", tooltip="scaling, cost and MIG of the reports"),
        Binding("l", "level", "AI level", show=False, tooltip="AI at DRAM / L2 / L1"),
    ]
    DEFAULT_CSS = """
    ComparePane #compare-summary { height: auto; text-wrap: nowrap; text-overflow: ellipsis; }
    ComparePane #compare-table { height: 2fr; min-height: 5; }
    ComparePane #compare-chart { height: 3fr; min-height: 8; }
    ComparePane #compare-decide { height: 1fr; display: none; }
    ComparePane.decide #compare-decide { display: block; }
    ComparePane.decide #compare-table, ComparePane.decide #compare-chart,
    ComparePane.decide #compare-legend { display: none; }
    ComparePane #compare-legend { height: 3; color: $text-muted; }
    """

    def __init__(self, state: ViewState, **kwargs: Any):
        super().__init__(state, **kwargs)
        self.before = 0
        self.after = 1
        self.by = "group"
        self.level = "dram"
        self.diff: Diff | None = None
        self.doc: dict[str, Any] = {}
        self.cursor = 0
        self.text = ""
        self.drawn: tuple[Any, ...] | None = None  # what the chart on screen was drawn from

    def compose(self) -> ComposeResult:
        yield PlainStatic(id="compare-summary")
        yield PlainTable(
            id="compare-table",
            squeeze=("group", "kernel", "launch"),
            cursor_type="row",
            cell_padding=0,
        )
        yield PlainStatic(id="compare-chart")
        yield PlainStatic(id="compare-legend")
        with VerticalScroll(id="compare-decide"):
            yield PlainStatic(id="compare-decide-text")

    # -- which reports --------------------------------------------------------------------
    def comparable(self) -> list[int]:
        """Reports with kernels (GPU recordings are shown in Monitor)."""
        return [i for i, r in enumerate(self.session.reports) if not r.is_recording]

    def reload(self) -> None:
        if self.has_class("decide"):
            self._load_decide()
            return
        usable = self.comparable()
        if len(usable) < 2:
            self._message(
                "Compare needs two reports with kernels:\n"
                "  roofscope open BEFORE AFTER [MORE…]\n"
                "(another GPU, precision, batch size or a code change), e.g.\n"
                "  roofscope open sample_reports/resnet18_fp32_h100.ncu-raw.csv \\\n"
                "                 sample_reports/resnet18_bf16_h100.ncu-raw.csv"
            )
            return
        if self.before not in usable:
            self.before = usable[0]
        if self.after not in usable or self.after == self.before:
            self.after = next(i for i in usable if i != self.before)
        self._load(self.before, self.after, self.by)

    def _message(self, text: str) -> None:
        self.query_one("#compare-summary", Static).update(text)
        self.query_one("#compare-table", DataTable).clear(columns=True)
        self.query_one("#compare-chart", Static).update("")
        self.query_one("#compare-legend", Static).update("")

    @work(thread=True, exclusive=True, group="compare")
    def _load(self, before: int, after: int, by: str) -> None:
        try:
            diff = self.session.diff(before, after, by)
        except RoofscopeError as exc:
            self.app.call_from_thread(self._message, exc.one_line())
            return
        self.app.call_from_thread(self._show, diff)

    def _show(self, diff: Diff) -> None:
        self.diff, self.doc = diff, diff.to_dict()
        self.cursor = 0
        self._summary()
        table = self.query_one("#compare-table", DataTable)
        table.clear(columns=True)
        # numbers next to the names on a wide terminal, every column at 80 (- the scrollbar)
        name_width = max(14, min(64, self.size.width - sum(WIDTHS.values()) - 3))
        table.add_column(self.by, width=name_width)
        for name, _ in out.COLUMNS:
            table.add_column(name, width=WIDTHS.get(name, 10))
        for i, row in enumerate(self.doc["rows"]):
            name, *rest = out.cells(row, self.by)
            # cut one short: a space before the next column
            table.add_row(cut(shown(name), name_width - 1), *rest, key=str(i))
        if not self.doc["rows"]:
            self.redraw()  # with rows, the first one's RowHighlighted draws the chart

    def _summary(self) -> None:
        reports = self.session.reports
        n = len(reports)

        def who(i: int, series: int) -> str:
            mark = FAMILIES[series][1 if self.state.ascii_only else 0][0]
            return f"{mark} {out.label({'path': reports[i].path})} [{i + 1}/{n}]"

        gpus = {reports[i].gpu_name or "GPU ?" for i in (self.before, self.after)}
        k = self.doc["kernels"]
        lines = [
            f"{who(self.before, 0)} → {who(self.after, 1)} · {' → '.join(sorted(gpus))}",
            f"{out.headline(self.doc).replace(' GPU time of all kernels', '')} · kernels "
            f"{len(k['matched'])} matched, {len(k['new'])} new, {len(k['vanished'])} vanished",
            *(f"⚠ {w}" for w in self.doc["warnings"]),
        ]
        self.query_one("#compare-summary", Static).update(_lines(lines))

    # -- chart ----------------------------------------------------------------------------
    def selected_row(self) -> DiffRow | None:
        if self.diff is None or not self.diff.rows:
            return None
        return self.diff.rows[min(self.cursor, len(self.diff.rows) - 1)]

    def _point(self, row: dict[str, Any] | None, name: str, series: int, picked: bool):
        if row is None or not row.get(FLOP_PER_S) or not (row.get(AI) or {}).get(self.level):
            return None
        return Point(
            name,
            row[AI][self.level],
            row[FLOP_PER_S],
            (row[TIME_PCT] or 0) / 100,
            picked,
            series,
        )

    def redraw(self) -> None:
        chart = self.query_one("#compare-chart", Static)
        width, height = chart.size.width, chart.size.height
        if self.diff is None or width < 20 or height < 6:
            return
        # shown again (a pane switch sends a Resize) with nothing changed: it is on screen
        drawing = (
            self.diff,
            chart.size,
            self.cursor,
            self.level,
            self.before,
            self.after,
            self.state.ascii_only,
            self.state.use_color,
        )
        if self.drawn is not None and self.drawn[0] is self.diff and self.drawn[1:] == drawing[1:]:
            return
        picked = self.selected_row()
        points, link = [], None
        for row in self.diff.rows:
            a = self._point(row.before, row.name, 0, row is picked)
            b = self._point(row.after, row.name, 1, row is picked)
            points += [p for p in (a, b) if p is not None]
            if row is picked and a is not None and b is not None:
                link = (a, b)
        roofs = self._roofs()
        self.text = render(
            points,
            roofs,
            width,
            height,
            ascii_only=self.state.ascii_only,
            color=self.state.use_color,
            links=[link] if link else [],
        )
        chart.update(Text.from_ansi(self.text, no_wrap=True))
        self.drawn = drawing
        self.query_one("#compare-legend", Static).update(self._legend(picked, roofs))
        # The first draw can come before the layout settles (the table's rows, the summary's
        # lines): look again once it has, which redraws only if the chart's box changed
        self.call_after_refresh(self.redraw)

    def _roofs(self) -> list[Roof]:
        """Both reports' roofs, a roof they share (within 1%) once, as the Roofline pane draws
        it; one that differs (another precision's tensor roof, another GPU) once per report,
        tagged with its report (``series``), which the chart draws in that report's line."""
        reports = self.session.reports
        mine = [
            {
                c.name: Roof(c.name, c.kind, c.value, c.source, series)
                for c in reports[i].ceilings
                # the level's own diagonal alone: the points' x is intensity at that level
                if c.name in ROOFS and (c.kind != "memory" or c.name == self.level)
            }
            for series, i in enumerate((self.before, self.after))
        ]
        roofs = []
        for name in dict.fromkeys([*mine[0], *mine[1]]):
            a, b = mine[0].get(name), mine[1].get(name)
            if a is not None and b is not None and _close(a.value, b.value):
                roofs.append(replace(a, series=None))
            else:
                roofs += [r for r in (a, b) if r is not None]
        return roofs

    def _legend(self, picked: DiffRow | None, roofs: list[Roof]) -> Text:
        """Every roof keyed by its colour, as on the Roofline pane (one report's own roofs
        after its marker), then the highlighted row."""
        width = max(self.size.width, 20)
        lines = legend(
            roofs,
            None,
            self.level,
            ascii_only=self.state.ascii_only,
            color=self.state.use_color,
            width=width,
        )[: LEGEND_ROWS - 1]
        if picked is not None:  # one row, cut: the roofs above may take two
            line = (
                f"▶ {picked.name}: {out.signed(picked.delta_time_s, 's')} "
                f"({out.signed_pct(picked.delta_time_pct)}), % of roof "
                f"{out.cells(picked.to_dict())[5]}, AI at {LEVEL_TITLES[self.level]} · "
                "[ ] reports · x swap · v rows · l level"
            )
            lines.append(Text(cut(shown(line), width)))
        return Text("\n").join(lines)

    @on(DataTable.RowHighlighted, "#compare-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key is None or event.row_key.value is None or self.diff is None:
            return
        self.cursor = int(event.row_key.value)
        row = self.selected_row()
        if row is not None and self.by == "group":
            self.post_message(GroupSelected(row.name))  # Roofline and Detail follow
        self.redraw()

    def on_resize(self) -> None:
        if self.diff is not None:
            self.redraw()

    # -- actions --------------------------------------------------------------------------
    def _step(self, current: int, other: int) -> int:
        usable = [i for i in self.comparable() if i != other]
        if not usable:
            return current
        return usable[(usable.index(current) + 1) % len(usable)] if current in usable else usable[0]

    def action_before(self) -> None:
        self.before = self._step(self.before, self.after)
        self.reload()

    def action_after(self) -> None:
        self.after = self._step(self.after, self.before)
        self.reload()

    def action_swap(self) -> None:
        self.before, self.after = self.after, self.before
        self.reload()

    def action_by(self) -> None:
        self.by = BYS[(BYS.index(self.by) + 1) % len(BYS)]
        self.reload()

    def action_decide(self) -> None:
        """Scaling across every open report, the cost of a run on their GPUs and, with a
        recording open, the MIG slice the job needs."""
        self.toggle_class("decide")
        self.reload()

    @work(thread=True, exclusive=True, group="compare")
    def _load_decide(self) -> None:
        session = self.session
        width = max(self.size.width - 2, 40)
        parts: list[Any] = []
        try:
            if len(self.comparable()) >= 1:
                measured = session.scaling()
                parts.append(
                    scaling_out.renderable(shown_doc(measured), width, self.state.ascii_only)
                )
                doc = session.cost(epochs=1, samples=DECIDE_SAMPLES, measured=measured)
                parts += [
                    Text(""),
                    decide_out.cost_renderable(shown_doc(doc), width, self.state.ascii_only),
                ]
            advice = session.mig_advice()
            if advice:
                parts += [Text(""), decide_out.mig_renderable(shown_doc({"advice": advice}))]
            else:
                parts += [
                    Text(""),
                    Text(
                        "MIG: open a roofscope recording of the job beside the reports "
                        "(roofscope open run.parquet …) for a slice suggestion"
                    ),
                ]
        except RoofscopeError as exc:
            parts = [Text(exc.one_line())]
        parts.append(Text("\ns back to the diff · roofscope scaling/cost/mig print the same"))
        self.app.call_from_thread(self._show_decide, Group(*parts))

    def _show_decide(self, content: Group) -> None:
        self.query_one("#compare-summary", Static).update(
            f"Scaling and cost of all {len(self.comparable())} reports (settings from file "
            f"names; cost of training on {DECIDE_SAMPLES:,} samples)"
        )
        self.query_one("#compare-decide-text", Static).update(content)

    def action_level(self) -> None:
        self.level = LEVELS_OUTERMOST_FIRST[
            (LEVELS_OUTERMOST_FIRST.index(self.level) + 1) % len(LEVELS_OUTERMOST_FIRST)
        ]
        self.redraw()

    def current_table(self) -> tuple[list[str], list[list[str]]]:
        if not self.doc:
            return [], []
        return out.header(self.doc), [out.cells(r, self.by) for r in self.doc["rows"]]

    def current_data(self) -> tuple[list[str], list[list[str]]]:
        """The diff rows as ``roofscope diff --format csv`` writes them (base units)."""
        if not self.doc:
            return [], []
        return dicts_table(out.flat_rows(self.doc))

    def current_text(self) -> str:
        return Text.from_ansi(self.text).plain


def _close(a: float, b: float) -> bool:
    """Roofs within 1% are the same roof (the locked clock differs a little between runs)."""
    return abs(a - b) <= 0.01 * max(abs(a), abs(b))


def _lines(lines: list[str]) -> Text:
    """One screen row per line, cut with an ellipsis rather than wrapped."""
    text = plain("\n".join(lines), lines=True, no_wrap=True, overflow="ellipsis")
    return text
