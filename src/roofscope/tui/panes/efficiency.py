"""Efficiency pane: run time by hardware efficiency, the step's potential speedup, and the
headroom ranking ("what do I optimise first"). Enter on a bin filters Kernels to it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import DataTable, Static

from roofscope.analysis.browse import Filter
from roofscope.output.export import datum
from roofscope.present import units as f
from roofscope.quantities import EFFICIENCY, HEADROOM_S, LAUNCHES, TIME_S
from roofscope.tui.messages import FilterKernels, GroupSelected, ShowPane
from roofscope.tui.panes.base import Pane
from roofscope.tui.state import Change, ViewState
from roofscope.tui.widgets.plain import PlainStatic, PlainTable

if TYPE_CHECKING:
    from roofscope.session import Report


class EfficiencyPane(Pane):
    KEY = "efficiency"
    TITLE = "Efficiency"
    KEYS = (("Enter", "on a bin: Kernels filtered to its kernels"),)
    RELOAD_ON = frozenset({Change.DATA, Change.REPORT})
    DEFAULT_CSS = """
    EfficiencyPane #efficiency-summary { height: auto; }
    EfficiencyPane Horizontal { height: 1fr; }
    EfficiencyPane #bins { width: 1fr; }
    EfficiencyPane #ranking { width: 1fr; }
    """

    def __init__(self, state: ViewState, **kwargs: Any):
        super().__init__(state, **kwargs)
        self.data: dict[str, Any] = {}
        self.ranking: list[dict[str, Any]] = []

    def compose(self) -> ComposeResult:
        yield PlainStatic(id="efficiency-summary")
        with Horizontal():
            bins: DataTable[str] = PlainTable(id="bins", cursor_type="row")
            for title, width in (
                ("efficiency", 10),
                ("time", 9),
                ("kernels", 7),
                ("time × eff", 10),
                ("share", 20),
            ):
                bins.add_column(title, width=width)
            yield bins
            ranking: DataTable[str] = PlainTable(
                id="ranking", squeeze=("group",), cursor_type="row"
            )
            for title, width in (("group", 24), ("headroom", 9), ("speedup", 7), ("eff", 5)):
                ranking.add_column(title, width=width)
            yield ranking

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
        speed = data["potential_speedup"]
        unknown = data["unknown"]
        lines = [
            f"{self.state.label()} · potential speedup of the step if every kernel ran "
            f"at its roof: {f.num(speed)}× (Σtime / Σ(time × efficiency))",
            "efficiency = max(tensor, FP32, DRAM utilisation) per launch · "
            "Enter on a bin: show its kernels",
        ]
        if unknown[LAUNCHES]:
            lines.append(
                f"{unknown[LAUNCHES]:,} launches ({f.time(unknown[TIME_S])}) have "
                f"no utilisation data and are left out"
            )
        if self.state.current.is_nsys:
            lines.append(
                "nsys exports have no utilisation counters: open an ncu export of the same "
                "program beside it (roofscope open run.sqlite run.ncu-rep.csv)"
            )
        self.query_one("#efficiency-summary", Static).update("\n".join(lines))
        bins = self.query_one("#bins", DataTable)
        bins.clear()
        for i, b in enumerate(data["bins"]):
            bar = "█" * round(20 * b[TIME_S] / total)
            bins.add_row(
                f"{b['lo']:.0%}–{b['hi']:.0%}",
                f.time(b[TIME_S]),
                str(b["kernels"]),
                f.time(b["time_x_efficiency_s"]),
                bar,
                key=str(i),
            )
        table = self.query_one("#ranking", DataTable)
        table.clear()
        for r in ranking:
            table.add_row(
                str(r["name"]),
                f.time(r[HEADROOM_S]),
                f.num(r["speedup_if_at_roof"]),
                f.frac(r[EFFICIENCY]),
                key=str(r["name"]),
            )

    @on(DataTable.RowSelected, "#bins")
    def _bin_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            flt = self.state.filter
            bin_filter = Filter(flt.regex, None, int(event.row_key.value), flt.window)
            self.post_message(FilterKernels(bin_filter))
            self.post_message(ShowPane("kernels"))

    @on(DataTable.RowHighlighted, "#ranking")
    def _ranking_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key is not None and event.row_key.value is not None:
            self.post_message(GroupSelected(event.row_key.value))

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
