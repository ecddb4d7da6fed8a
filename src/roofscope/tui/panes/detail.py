"""Detail pane: every metric of the selected launch (or group), raw and derived, searchable."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Input, Static
from textual.widgets.data_table import ColumnKey

from roofscope.analysis.detail import MetricRow
from roofscope.errors import RoofscopeError
from roofscope.present.units import counted, cut_middle, raw_number, si
from roofscope.regex import check_regex, search
from roofscope.tui.messages import ShowPane
from roofscope.tui.panes.base import Pane
from roofscope.tui.state import Change, ViewState
from roofscope.tui.widgets.plain import PlainStatic, PlainTable

if TYPE_CHECKING:
    from roofscope.session import Report


METRIC_MIN = 36  # the metric column's width when names are short or the terminal narrow
VALUE_MIN, UNIT_MIN = 14, 8
SOURCE_MIN = 40  # of the formula / source, beside a long metric name on a wide terminal


def value_text(row: MetricRow) -> str:
    """The value as read, ``≥ 8.0%`` where it is a lower bound (its source says why)."""
    if isinstance(row.value, float | int) and not isinstance(row.value, bool):
        if row.unit == "fraction":
            text = f"{100 * row.value:.1f}%"
        else:
            text = si(float(row.value), row.unit) if row.unit else raw_number(row.value)
        return f"{row.bound} {text}" if row.bound else text
    return "—" if row.value is None else str(row.value)


class DetailPane(Pane):
    KEY = "detail"
    TITLE = "Detail"
    HINT = "every metric of the selection"
    RELOAD_ON = frozenset({Change.DATA, Change.REPORT, Change.SELECTION})
    BINDINGS = [
        Binding("slash", "search", "Search", tooltip="search metric names and formulas"),
        Binding(
            "escape",
            "back",
            "Back",
            show=False,
            tooltip="back to Kernels (its launches if you came from there)",
        ),
    ]
    DEFAULT_CSS = """
    DetailPane #detail-title { height: auto; text-style: bold; }
    DetailPane #detail-search { display: none; }
    DetailPane #detail-search.shown { display: block; }
    DetailPane DataTable { height: 1fr; }
    """

    def __init__(self, state: ViewState, **kwargs: Any):
        super().__init__(state, **kwargs)
        self.metrics: list[MetricRow] = []
        self.pattern = ""
        self._searched_for = ""  # the last search asked for through the view state
        self.metric_width = METRIC_MIN

    def compose(self) -> ComposeResult:
        yield PlainStatic("select a group or launch in Kernels (1)", id="detail-title")
        yield Input(placeholder="search metric names and formulas (regex)", id="detail-search")
        table: DataTable[str] = PlainTable(
            id="metrics",
            squeeze=("metric", "unit", "formula / source"),
            cursor_type="row",
            zebra_stripes=True,
        )
        for title, width in (
            ("kind", 7),
            ("metric", METRIC_MIN),
            ("value", VALUE_MIN),
            ("unit", UNIT_MIN),
            ("formula / source", 100),
        ):
            table.add_column(title, key=title, width=width)
        yield table

    def focus_first(self) -> None:
        """The table, never the search box: number keys switch panes, Esc goes back."""
        self.query_one("#metrics", DataTable).focus()

    def on_resize(self, event: events.Resize) -> None:
        if self.metrics and self._metric_width() != self.metric_width:
            self._fill()

    def _metric_width(self) -> int:
        """As wide as the longest name while the kind, value and unit columns fit beside it
        (and, on a wide terminal, SOURCE_MIN columns of the source); longer names are cut in
        the middle."""
        need = max((len(r.name) for r in self.metrics), default=METRIC_MIN)
        value = max((len(value_text(r)) for r in self.metrics), default=0)
        unit = max((len(r.unit) for r in self.metrics), default=0)
        beside = 7 + max(VALUE_MIN, value) + max(UNIT_MIN, unit) + 2 * 3  # and their padding
        room = self.size.width - beside - 4  # the metric column's padding, the scrollbar
        if room - SOURCE_MIN >= METRIC_MIN:
            room -= SOURCE_MIN
        return max(METRIC_MIN, min(need, room))

    def reload(self) -> None:
        state = self.state
        if state.detail_search != self._searched_for:  # asked for elsewhere (Advice's d)
            self._searched_for = state.detail_search
            box = self.query_one("#detail-search", Input)
            box.value = self.pattern = state.detail_search
            box.set_class(bool(self.pattern), "shown")
        if state.launch is not None:
            title = f"launch {state.launch}"
            self._load(state.current, launch=state.launch, group=None, title=title)
        elif state.group is not None:
            title = f"group {state.group!r} (raw values: sums; rates: time-weighted)"
            self._load(state.current, launch=None, group=state.group, title=title)

    @work(thread=True, exclusive=True, group="detail")
    def _load(self, report: Report, launch: int | None, group: str | None, title: str) -> None:
        try:
            rows = (
                report.launch_detail(launch)
                if launch is not None
                else report.group_detail(group or "")
            )
        except RoofscopeError as exc:
            self.app.call_from_thread(self.app.notify, exc.one_line(), severity="error")
            return
        self.app.call_from_thread(self._show, rows, title)

    def _show(self, rows: list[MetricRow], title: str) -> None:
        self.metrics = rows
        # a bound's reason ends its source, often off screen at 80 columns: say it here too
        bounds = [f"{r.name} {r.bound} ({r.source.rpartition('; ')[2]})" for r in rows if r.bound]
        self.query_one("#detail-title", Static).update(
            " · ".join(
                [
                    title,
                    *bounds,
                    f"{counted(len(rows), 'metric')} · / search · Esc: back to Kernels",
                ]
            )
        )
        self._fill()

    def _fill(self) -> None:
        table = self.query_one("#metrics", DataTable)
        table.clear()
        self.metric_width = width = self._metric_width()
        table.columns[ColumnKey("metric")].width = width
        rows = self.metrics
        if self.pattern:
            try:
                check_regex(self.pattern)
            except RoofscopeError:
                pass  # half-typed: keep every row until the pattern parses
            else:
                # names then sources, one query: each text is matched on its own
                hits = search(self.pattern, [r.name for r in rows] + [r.source for r in rows])
                n = len(rows)
                rows = [r for i, r in enumerate(rows) if hits[i] or hits[n + i]]
        for row in rows:
            name = cut_middle(row.name, width)
            table.add_row(row.kind, name, value_text(row), row.unit, row.source)

    def action_back(self) -> None:
        self.post_message(ShowPane("kernels"))

    def action_search(self) -> None:
        box = self.query_one("#detail-search", Input)
        box.add_class("shown")
        box.focus()

    @on(Input.Changed, "#detail-search")
    def _search(self, event: Input.Changed) -> None:
        self.pattern = event.value
        self._fill()

    @on(Input.Submitted, "#detail-search")
    def _search_done(self, event: Input.Submitted) -> None:
        self.query_one("#metrics").focus()

    def current_table(self) -> tuple[list[str], list[list[str]]]:
        header = ["kind", "metric", "value", "unit", "source"]
        return header, [
            [r.kind, r.name, "" if r.value is None else str(r.value), r.unit, r.source]
            for r in self.metrics
        ]
