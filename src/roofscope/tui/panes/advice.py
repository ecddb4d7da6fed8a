"""Advice pane: what to change first, ranked by estimated gain (``roofscope advise``), with the
highlighted item's action, evidence and the model behind its estimate. Enter shows its groups
in Kernels; ``d`` shows the first group in Detail, searched to the metrics the rule read."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Static

from roofscope.analysis.advice import METRICS_READ, Advice
from roofscope.analysis.browse import Filter
from roofscope.output.advise import share_text, speedup_text, together_line
from roofscope.present import units as f
from roofscope.present.text import shown
from roofscope.quantities import LAUNCHES, TIME_PCT, TIME_S
from roofscope.tui.messages import FilterKernels, GroupSelected, SearchDetail, ShowPane
from roofscope.tui.panes.base import Pane
from roofscope.tui.state import Change, ViewState
from roofscope.tui.widgets.plain import PlainStatic, PlainTable

if TYPE_CHECKING:
    from roofscope.session import Report

COLUMNS = (("#", 3), ("rule", 22), ("from", 9), ("of step", 8), ("est. gain", 10), ("step ×", 7))
_SPECIAL = set("\\.^$|?*+()[]{}")


def exact(names: list[str]) -> str:
    """A regex (RE2) matching exactly these group names."""
    quoted = ("".join("\\" + c if c in _SPECIAL else c for c in n) for n in names)
    return "^(" + "|".join(quoted) + ")$"


class AdvicePane(Pane):
    KEY = "advice"
    TITLE = "Advice"
    HINT = "what to change first"
    KEYS = (("Enter", "on an item: its groups in Kernels"),)
    BINDINGS = [
        Binding("d", "detail", "Its metrics", tooltip="the first group in Detail, searched"),
    ]
    RELOAD_ON = frozenset({Change.DATA, Change.REPORT})
    DEFAULT_CSS = """
    AdvicePane #advice-summary { height: auto; }
    AdvicePane #advice-items { height: 1fr; min-height: 4; }
    AdvicePane #advice-detail { height: auto; max-height: 50%; margin-top: 1; }
    """

    def __init__(self, state: ViewState, **kwargs: Any):
        super().__init__(state, **kwargs)
        self.items: list[Advice] = []

    def compose(self) -> ComposeResult:
        yield PlainStatic(id="advice-summary")
        table: DataTable[str] = PlainTable(id="advice-items", squeeze=("rule",), cursor_type="row")
        for title, width in COLUMNS:
            table.add_column(title, width=width)
        yield table
        yield PlainStatic(id="advice-detail")

    def reload(self) -> None:
        self._load(self.state.current)

    @work(thread=True, exclusive=True, group="advice")
    def _load(self, report: Report) -> None:
        items = report.advice()
        together = report.ncu_rules_together()
        self.app.call_from_thread(self._show, items, together)

    def _show(self, items: list[Advice], together: dict | None = None) -> None:
        self.items = items
        ncu = sum(a.source == "ncu" for a in items)
        lines = [
            f"{self.state.label()} · {f.counted(len(items), 'item')}, {ncu} from ncu's rules · "
            "ranked by estimated gain (unknown last) · Enter: its groups in Kernels · "
            "d: its metrics"
        ]
        line = together_line({"ncu_rules_together": together})
        if line:
            lines.append(line)
        if not ncu and self.state.current.kind.rules:
            lines.append(
                "no ncu rule results in this export: profile with sections (--set full) and "
                "export the details page for ncu's own advice"
            )
        self.query_one("#advice-summary", Static).update("\n".join(lines))
        table = self.query_one("#advice-items", DataTable)
        table.clear()
        for i, a in enumerate(items):
            table.add_row(
                str(i + 1),
                shown(a.rule),
                a.source,
                share_text(a.time_s, a.launches, a.time_pct),
                f.time(a.est_gain_s) if a.est_gain_s is not None else "—",
                speedup_text(a.est_step_speedup),
                key=str(i),
            )
        self._describe(items[0] if items else None)

    def _describe(self, item: Advice | None) -> None:
        box = self.query_one("#advice-detail", Static)
        if item is None:
            box.update("nothing to advise in this report")
            return
        text = Text(shown(item.title), style="bold")
        text.append(f"\ndo: {shown(item.action)}")
        for line in item.evidence:
            text.append(f"\n· {shown(line)}")
        for line in item.assumptions:
            text.append(f"\nmodel: {shown(line)}", style="dim")
        box.update(text)

    def _current(self) -> Advice | None:
        table = self.query_one("#advice-items", DataTable)
        if not self.items or table.cursor_row is None or table.cursor_row >= len(self.items):
            return None
        return self.items[table.cursor_row]

    @on(DataTable.RowHighlighted, "#advice-items")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._describe(self._current())

    @on(DataTable.RowSelected, "#advice-items")
    def _selected(self, event: DataTable.RowSelected) -> None:
        item = self._current()
        if item is None:
            return
        if not item.groups:  # a recording's stretches, an nsys trace's pageable copies
            self.notify(f"{shown(item.rule)} covers no kernel group: its evidence is above")
            return
        self.post_message(FilterKernels(Filter(exact(item.groups))))
        self.post_message(GroupSelected(item.groups[0]))
        self.post_message(ShowPane("kernels"))

    def action_detail(self) -> None:
        item = self._current()
        if item is None or not item.groups:
            return
        self.post_message(GroupSelected(item.groups[0]))
        self.post_message(SearchDetail(METRICS_READ.get(item.rule, "")))
        self.post_message(ShowPane("detail"))

    def current_table(self) -> tuple[list[str], list[list[str]]]:
        header = ["rule", "source", "title", "action", "groups", LAUNCHES, TIME_S, TIME_PCT,
                  "est_gain_s", "est_step_speedup"]  # fmt: skip
        return header, [
            [
                a.rule,
                a.source,
                a.title,
                a.action,
                "; ".join(a.groups),
                str(a.launches),
                repr(a.time_s),
                f"{a.time_pct:.6g}",
                "" if a.est_gain_s is None else repr(a.est_gain_s),
                "" if a.est_step_speedup is None else repr(a.est_step_speedup),
            ]
            for a in self.items
        ]
