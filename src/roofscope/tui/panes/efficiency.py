"""Efficiency pane: run time by hardware efficiency, the step's potential speedup, and the
headroom ranking ("what do I optimise first"), as two titled sections: side by side on a wide
terminal, one above the other below SIDE_BY_SIDE columns. Enter on a bin filters Kernels to
it. Efficiencies from incomplete utilisations read ``≥``, the speedups made from them ``≤``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import events, on, work
from textual.app import ComposeResult
from textual.containers import Container, Vertical
from textual.widgets import DataTable, Static

from roofscope.analysis.browse import Filter
from roofscope.output.export import datum
from roofscope.present import units as f
from roofscope.quantities import EFFICIENCY, EFFICIENCY_COMPLETE, HEADROOM_S, LAUNCHES, TIME_S
from roofscope.tui.messages import FilterKernels, GroupSelected, ShowPane
from roofscope.tui.panes.base import Pane
from roofscope.tui.state import Change, ViewState
from roofscope.tui.widgets.plain import PlainStatic, PlainTable

if TYPE_CHECKING:
    from roofscope.session import Report


# Below this width the two sections stack (the histogram takes 72 columns, the ranking ~56).
SIDE_BY_SIDE = 130


class EfficiencyPane(Pane):
    KEY = "efficiency"
    TITLE = "Efficiency"
    KEYS = (
        ("Enter", "on a bin: Kernels filtered to its kernels"),
        ("Tab", "between the histogram and the ranking"),
    )
    RELOAD_ON = frozenset({Change.DATA, Change.REPORT})
    DEFAULT_CSS = """
    EfficiencyPane #efficiency-summary { height: auto; }
    EfficiencyPane #efficiency-sections { height: 1fr; layout: horizontal; }
    EfficiencyPane .efficiency-section { width: 1fr; height: 1fr; }
    EfficiencyPane #bins-section { width: 72; margin-right: 2; }
    EfficiencyPane .efficiency-title { height: auto; text-style: bold; }
    EfficiencyPane.narrow #efficiency-sections { layout: vertical; }
    EfficiencyPane.narrow #bins-section { width: 1fr; height: auto; margin-right: 0; }
    EfficiencyPane.narrow #ranking-section { margin-top: 1; }
    EfficiencyPane #bins { height: auto; }
    EfficiencyPane #ranking { height: 1fr; }
    """

    def __init__(self, state: ViewState, **kwargs: Any):
        super().__init__(state, **kwargs)
        self.data: dict[str, Any] = {}
        self.ranking: list[dict[str, Any]] = []

    def compose(self) -> ComposeResult:
        yield PlainStatic(id="efficiency-summary")
        with Container(id="efficiency-sections"):
            with Vertical(id="bins-section", classes="efficiency-section"):
                yield PlainStatic(
                    "Run time by efficiency",
                    id="bins-title",
                    classes="efficiency-title",
                )
                bins: DataTable[str] = PlainTable(id="bins", cursor_type="row")
                for title, width in (
                    ("efficiency", 10),
                    ("time", 9),
                    ("kernels", 7),
                    ("time × eff", 10),
                    ("share", 16),
                ):
                    bins.add_column(title, width=width)
                yield bins
            with Vertical(id="ranking-section", classes="efficiency-section"):
                yield PlainStatic(
                    "Groups by headroom · speedup: the step's, if the group ran at its roof",
                    id="ranking-title",
                    classes="efficiency-title",
                )
                ranking: DataTable[str] = PlainTable(
                    id="ranking", squeeze=("group",), cursor_type="row"
                )
                for title, width in (("group", 24), ("headroom", 9), ("speedup", 8), ("eff", 5)):
                    ranking.add_column(title, width=width)
                yield ranking

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.width < SIDE_BY_SIDE, "narrow")

    def reload(self) -> None:
        self._load(self.state.current)

    @work(thread=True, exclusive=True, group="efficiency")
    def _load(self, report: Report) -> None:
        data = report.histogram()
        ranking = sorted(report.rows("group"), key=lambda r: r[HEADROOM_S] or 0.0, reverse=True)
        self.app.call_from_thread(self._show, data, ranking)

    def _show(self, data: dict[str, Any], ranking: list[dict[str, Any]]) -> None:
        self.data, self.ranking = data, ranking
        total = sum(b[TIME_S] for b in data["bins"]) or 1.0
        complete = data.get(EFFICIENCY_COMPLETE)
        speed = f.bounded(f"{f.num(data['potential_speedup'])}×", f.AT_MOST, complete)
        unknown = data["unknown"]
        lines = [
            f"{self.state.label()} · efficiency = max(tensor, FP32, DRAM utilisation) per launch"
        ]
        if complete is False:
            part = data["incomplete"]
            lines.append(
                f"{f.AT_LEAST} efficiency and {f.AT_MOST} speedup are bounds for "
                f"{f.counted(part[LAUNCHES], 'launch')} ({f.time(part[TIME_S])}): "
                f"{f.incomplete_reason(part['missing'])}"
            )
        if unknown[LAUNCHES]:
            lines.append(
                f"{f.counted(unknown[LAUNCHES], 'launch')} ({f.time(unknown[TIME_S])}) "
                f"{'has' if unknown[LAUNCHES] == 1 else 'have'} "
                f"no utilisation data and are left out"
            )
        if self.state.current.is_nsys:
            lines.append(
                "nsys exports have no utilisation counters: open an ncu export of the same "
                "program beside it (roofscope open run.sqlite run.ncu-rep.csv)"
            )
        self.query_one("#efficiency-summary", Static).update("\n".join(lines))
        self.query_one("#bins-title", Static).update(
            f"Run time by efficiency · potential speedup {speed} · Enter: its kernels"
        )
        bins = self.query_one("#bins", DataTable)
        bins.clear()
        for i, b in enumerate(data["bins"]):
            bar = "█" * round(16 * b[TIME_S] / total)
            bins.add_row(
                f"{b['lo']:.0%}–{b['hi']:.0%}",
                f.time(b[TIME_S]),
                str(b["kernels"]),
                f.bounded(f.time(b["time_x_efficiency_s"]), f.AT_LEAST, b.get(EFFICIENCY_COMPLETE)),
                bar,
                key=str(i),
            )
        table = self.query_one("#ranking", DataTable)
        table.clear()
        for r in ranking:
            row_complete = r.get(EFFICIENCY_COMPLETE)
            speedup = r["speedup_if_at_roof"]
            table.add_row(
                str(r["name"]),
                f.bounded(f.time(r[HEADROOM_S]), f.AT_MOST, row_complete),
                f.bounded(f"{f.num(speedup)}×" if speedup else "—", f.AT_MOST, row_complete),
                f.bounded(f.frac(r[EFFICIENCY]), f.AT_LEAST, row_complete),
                key=str(r["name"]),
            )
        self._follow_selection()

    def _follow_selection(self) -> None:
        """The ranking's cursor on the shared selection: showing this pane selects nothing."""
        names = [str(r["name"]) for r in self.ranking]
        if self.state.group in names:
            self.query_one("#ranking", DataTable).move_cursor(row=names.index(self.state.group))

    def state_changed(self, change: Change) -> None:
        super().state_changed(change)
        if change is Change.SELECTION and self.ranking:
            self._follow_selection()

    @on(DataTable.RowSelected, "#bins")
    def _bin_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            flt = self.state.filter
            bin_filter = Filter(flt.regex, None, int(event.row_key.value), flt.window)
            self.post_message(FilterKernels(bin_filter))
            self.post_message(ShowPane("kernels"))

    @on(DataTable.RowHighlighted, "#ranking")
    def _ranking_highlighted(self, event: DataTable.RowHighlighted) -> None:
        # only the user's moves: a table filled or following the selection posts one too
        name = event.row_key.value if event.row_key is not None else None
        if self.query_one("#ranking", DataTable).has_focus and name not in (None, self.state.group):
            self.post_message(GroupSelected(name))

    def current_table(self) -> tuple[list[str], list[list[str]]]:
        total = sum(b[TIME_S] for b in self.data.get("bins", [])) or 1.0
        header = [
            "efficiency_lo (fraction)",
            "efficiency_hi (fraction)",
            TIME_S,
            "kernels",
            "time_x_efficiency_s",
            "share (fraction)",
        ]
        rows = [
            [
                datum(b["lo"]),
                datum(b["hi"]),
                datum(b[TIME_S]),
                datum(b["kernels"]),
                datum(b["time_x_efficiency_s"]),
                datum(b[TIME_S] / total),
            ]
            for b in self.data.get("bins", [])
        ]
        return header, rows
