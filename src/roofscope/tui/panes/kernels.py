"""Kernels pane: groups → launches, sortable, filterable, with the shared selection."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.timer import Timer
from textual.widgets import DataTable, Input, Static
from textual.worker import get_current_worker

from roofscope.analysis.browse import LAUNCH_KEYS, Filter
from roofscope.errors import RoofscopeError
from roofscope.grouping import AXES
from roofscope.output.export import datum
from roofscope.present import columns as cols
from roofscope.present import units as f
from roofscope.present.text import plain
from roofscope.present.units import distinct as cut_names
from roofscope.quantities import EFFICIENCY
from roofscope.tui.first_screen import FirstScreen, Groups, Heading, heading, query_groups
from roofscope.tui.messages import (
    AxisChanged,
    FilterKernels,
    GroupSelected,
    LaunchSelected,
    ShowPane,
)
from roofscope.tui.panes.base import Command, Pane
from roofscope.tui.screens.modals import RuleEditor
from roofscope.tui.state import Change, ViewState
from roofscope.tui.widgets.plain import PlainStatic, PlainTable
from roofscope.tui.widgets.virtual_table import PAGE, Column, VirtualTable

if TYPE_CHECKING:
    from roofscope.session import Report, Session

# The pane's columns, from the registry `roofscope report` reads too (present.columns): ncu
# groups, nsys groups, the nsys columns beside an ncu report opened with an nsys export of the
# same program, and the launch list in the order of the pager's rows.
GROUP_COLUMNS = cols.column_set(cols.GROUP, cols.PANE)
NSYS_COLUMNS = cols.column_set(cols.NSYS, cols.PANE)
JOINED_COLUMNS = cols.column_set(cols.JOINED, cols.PANE)
LAUNCH_COLUMNS = cols.by_keys(cols.LAUNCH, LAUNCH_KEYS)
# The filter applies this long after the last key typed into it: a burst of keys queries once,
# and each key only edits the box (a query over a million launches takes ~0.5 s in a worker)
FILTER_DEBOUNCE_S = 0.25


def _sort_value(row: dict[str, Any], key: str) -> Any:
    value = cols.value(row, key)
    return (value is None, value if value is not None else 0)


class KernelsPane(Pane):
    """Groups table; Enter opens the group's launches (paged from DuckDB); Esc goes back."""

    KEY = "kernels"
    TITLE = "Kernels"
    HINT = "groups → launches"
    KEYS = (("Enter", "drill down: group → launches → every metric of a launch (Detail)"),)
    RELOAD_ON = frozenset({Change.DATA, Change.REPORT, Change.FILTER})
    EAGER = True  # the palette's groups and the start screen read its rows
    BINDINGS = [
        Binding("s", "sort", "Sort", tooltip="cycle the sort column"),
        Binding("r", "reverse", "Reverse", tooltip="reverse the order"),
        Binding(
            "slash",
            "filter",
            "Filter",
            tooltip="filter groups and kernels by regex, as you type (Enter keeps, Esc cancels)",
        ),
        Binding("g", "rules", "Rules", tooltip="grouping-rule editor (Ctrl+S saves it)"),
        Binding(
            "n",
            "axis",
            "NVTX/rules",
            show=False,
            tooltip="group by name rules / innermost / outermost NVTX range (nsys)",
        ),
        Binding(
            "escape",
            "back",
            "Back",
            show=False,
            tooltip="back: launches → groups; then clears the filter",
        ),
    ]
    DEFAULT_CSS = """
    KernelsPane #kernels-status { height: auto; max-height: 3; color: $text-muted; }
    KernelsPane #kernels-filter { display: none; }
    KernelsPane #kernels-filter.shown { display: block; }
    KernelsPane #launches { display: none; }
    KernelsPane.drilled #launches { display: block; }
    KernelsPane.drilled #groups { display: none; }
    KernelsPane DataTable { height: 1fr; }
    """

    def __init__(self, state: ViewState, **kwargs: Any):
        super().__init__(state, **kwargs)
        self.group_sort = 2  # time
        self.launch_sort = 2
        self.descending = True
        self.rows: list[dict[str, Any]] = []
        self.eff_missing: list[str] | None = None  # the utilisations lower-bound effs lack
        self.drilled_group: str | None = None
        self.pager: Any = None
        self.columns = GROUP_COLUMNS
        self.table_layout: cols.Layout | None = None
        # the widths the tables were last laid out in: Textual sends Resize to a pane each time
        # it is shown again, and refilling the groups then cost a full re-render of the table
        self.filled_width: int | None = None
        self.launch_width: int | None = None
        self.kernel_names: list[str] = []
        self.precision: list[dict[str, Any]] = []  # the report's FLOPs per precision
        self.typing: Timer | None = None  # the filter box's debounce
        self.filter_before: Filter | None = None  # the filter when / opened the box (Esc)

    @classmethod
    def start_here(cls, session: Session | None) -> bool:
        return session is not None and not all(r.is_recording for r in session.reports)

    def compose(self) -> ComposeResult:
        yield PlainStatic(id="kernels-status")
        yield Input(
            placeholder="regex over kernel and group names (as you type; Enter keeps, Esc cancels)",
            id="kernels-filter",
        )
        table: DataTable[str] = PlainTable(
            id="groups", squeeze=("group",), cursor_type="row", zebra_stripes=True
        )
        table.fixed_columns = 1  # the names stay put when scrolling right
        yield table
        yield VirtualTable(self._launch_columns(None, 0), id="launches", fixed=2)

    def on_mount(self) -> None:
        self.reload()

    # -- loading ---------------------------------------------------------------------------
    def reload(self) -> None:
        if self.state.session is None:  # the kept first screen, drawn while the session loads
            if self.state.first is not None:
                self._show_groups(self.state.first.groups)
            return
        # the heading taken now, with the query: a report or axis switched while the worker
        # runs must not label these groups
        self._load_groups(self.state.current, self.state.filter, self._heading())
        if self.drilled_group is not None:
            self._open_launches(self.drilled_group)

    @work(thread=True, exclusive=True, group="kernels-groups")
    def _load_groups(self, report: Report, flt: Filter, head: Heading) -> None:
        try:
            groups = query_groups(report, flt)
        except RoofscopeError as exc:
            self.app.call_from_thread(self.app.notify, exc.one_line(), severity="error")
            return
        self.app.call_from_thread(self._show_groups, groups)
        keep = self.state.keep_first
        if keep is not None and flt == Filter():  # kept for the next open (off the UI thread)
            keep(FirstScreen(head, groups))

    def _groups(self) -> Groups:
        """The groups shown, to be shown again (another sort)."""
        return Groups(self.rows, self.precision, self.eff_missing)

    def _heading(self) -> Heading:
        """What the columns and status line depend on: the session's, or the kept first
        screen's while the session loads."""
        if self.state.session is None and self.state.first is not None:
            return self.state.first.heading
        return heading(self.state.label(), self.state.current, self.session.axis)

    def _column_set(self) -> tuple[cols.Column, ...]:
        return {"nsys": NSYS_COLUMNS, "joined": GROUP_COLUMNS + JOINED_COLUMNS}.get(
            self._heading().kind, GROUP_COLUMNS
        )

    def _show_groups(self, groups: Groups) -> None:
        self.precision = groups.precision
        self.eff_missing = groups.missing  # None: every efficiency shown is exact
        table = self.query_one("#groups", DataTable)
        columns = self._column_set()
        same_columns = columns == self.columns
        if not same_columns:
            self.columns = columns
            self.group_sort = 2  # time
        key = self.columns[self.group_sort].key
        rows = sorted(groups.rows, key=lambda r: _sort_value(r, key), reverse=self.descending)
        if self.descending:  # keep unknowns last either way
            rows = [r for r in rows if _sort_value(r, key)[0] is False] + [
                r for r in rows if _sort_value(r, key)[0] is True
            ]
        # the session's rows replacing the kept first screen's are most often the same rows:
        # the table stays as drawn (a redraw would move nothing, and costs a frame)
        same = same_columns and rows == self.rows and self.table_layout is not None
        self.rows = rows
        if not (same and self._width() == self.filled_width):
            self._fill_groups(table)
        self._status()

    def _width(self) -> int:
        """The width tables lay out in: the pane's, less a vertical scrollbar."""
        return max((self.size.width or self.app.size.width) - 2, 40)

    def _fill_groups(self, table: DataTable) -> None:
        """The rows in columns fitted to the pane's width (present.columns.fit)."""
        rows = self.rows
        self.filled_width = self._width()
        layout = cols.fit(self.columns, rows, self.filled_width, pad=2 * table.cell_padding)
        if layout != self.table_layout:
            self.table_layout = layout
            table.clear(columns=True)
            for c, w in zip(layout.columns, layout.widths, strict=True):
                label = c.title if c.left else Text(c.title, justify="right")
                table.add_column(label, key=c.title, width=w)
        selected = self.state.group
        table.clear()
        names = cut_names([str(r["name"]) for r in rows], layout.widths[0])
        for r in rows:
            cells: list[str | Text] = [names[str(r["name"])]]
            for c in layout.columns[1:]:
                cell = c.cell(r, narrow=layout.narrow)
                cells.append(cell if c.left else plain(cell, justify="right"))
            table.add_row(*cells, key=str(r["name"]))
        keys = [r["name"] for r in rows]
        if selected in keys:
            table.move_cursor(row=keys.index(selected))

    def on_resize(self) -> None:
        """Lay the tables out again only when the width changed: a pane shown again gets a
        Resize of the same size."""
        width = self._width()
        if self.rows and self.table_layout is not None and width != self.filled_width:
            self._fill_groups(self.query_one("#groups", DataTable))
        if self.drilled_group is not None and width != self.launch_width:
            self._set_launch_columns(self.query_one("#launches", VirtualTable))

    def _set_launch_columns(self, table: VirtualTable) -> None:
        self.launch_width = self._width()
        table.set_columns(self._launch_columns(self.kernel_names, self.launch_width))

    def _launch_columns(self, kernels: list[str] | None, width: int) -> list[Column]:
        """The launch list's columns; the kernel names take the width the others leave (at
        least NAME_MIN), names sharing a long prefix cut apart."""
        others = sum(c.width + 1 for c in LAUNCH_COLUMNS if c.key != "kernel")
        longest = max((len(k) for k in kernels or ()), default=0)
        room = width - others - 1
        if room < cols.NAME_WANT:  # narrow: the columns up to eff stay in sight, more scroll
            upto = [c.key for c in LAUNCH_COLUMNS].index(EFFICIENCY) + 1
            room = width - sum(c.width + 1 for c in LAUNCH_COLUMNS[:upto] if c.key != "kernel")
        name_width = max(cols.NAME_MIN, min(longest, room - 1))
        names = cut_names(kernels or [], name_width)
        out = []
        for c in LAUNCH_COLUMNS:
            if c.key == "kernel":
                fmt = lambda v, n=names: n.get(str(v)) or f.text(v)  # noqa: E731
                out.append(Column(c.title, name_width, fmt, right=False))
            else:
                out.append(Column(c.title, c.width, c.fmt, right=not c.left))
        return out

    def _status(self) -> None:
        head = self._heading()
        parts = [head.label]
        flt = self.state.filter
        if self.drilled_group is not None:
            count = self.pager.count if self.pager else 0
            parts.append(f"group {self.drilled_group!r}: {f.counted(count, 'launch')}")
            sort_title = LAUNCH_COLUMNS[self.launch_sort].title
        else:
            parts.append(f.counted(len(self.rows), "group"))
            if self.precision:  # which precision did the work (an "fp32" run may be TF32)
                parts.append(f"FLOPs {f.shares(self.precision)}")
            sort_title = self.columns[self.group_sort].title
        if flt.regex:
            parts.append(f"filter /{flt.regex}/")
        if flt.eff_bin is not None:
            lo = flt.eff_bin * 10
            parts.append(f"efficiency {lo}–{lo + 10}%")
        if flt.window is not None:
            _, t0, t1 = flt.window
            parts.append(f"window {f.time(t0 / 1e9)}–{f.time(t1 / 1e9)}")
        if head.axis != "rules":
            parts.append(f"groups: {head.axis.replace('nvtx-', 'NVTX ')}most range")
        if head.kind == "joined":
            parts.append("nsys columns: real timeline; ncu times: replayed, locked clocks")
        if self.eff_missing is not None and self.drilled_group is None:
            why = f.incomplete_reason(self.eff_missing)
            parts.append(f"eff {f.AT_LEAST}: a lower bound ({why})")
        parts.append(f"sort {sort_title} {'↓' if self.descending else '↑'}")
        if self.drilled_group is not None:
            parts.append("Enter: every metric · Esc: back to the groups")
        if self.state.session is None:  # the kept first screen: keys wait for the session
            parts.append("loading the report…")
        # a load that ends as the app quits finds the pane's children gone: nothing to update
        for status in self.query("#kernels-status").results(Static):
            status.update(" · ".join(parts))

    def _open_launches(self, group: str) -> None:
        self.drilled_group = group
        self.add_class("drilled")
        # focus the list now, with the class: Textual would move the focus off the hidden
        # groups a frame later, and the restyling would take a frame of its own
        self.query_one("#launches", VirtualTable).focus()
        flt = self.state.filter
        self._load_launches(
            self.state.current,
            Filter(flt.regex, group, flt.eff_bin, flt.window),
            LAUNCH_COLUMNS[self.launch_sort].key,
            self.descending,
        )

    @work(thread=True, exclusive=True, group="kernels-launches")
    def _load_launches(self, report: Report, flt: Filter, sort: str, descending: bool) -> None:
        pager = report.pager(flt, sort, descending)
        kernels = report.kernel_names(flt)
        first = report.page(pager, 0, PAGE)  # the first screen's rows, in the same trip
        if get_current_worker().is_cancelled:  # a newer sort or filter replaced this one
            report.close_pager(pager)
            return

        def fetch(start: int, size: int) -> list[tuple]:
            return report.page(pager, start, size)

        self.app.call_from_thread(self._show_launches, pager, fetch, kernels, first)

    @work(thread=True, group="kernels-close")
    def _close_pager(self, pager: Any) -> None:
        """Drop a replaced launch list's table off the UI thread (it waits for the session lock)."""
        self.state.current.close_pager(pager)

    def _show_launches(
        self, pager: Any, fetch: Any, kernels: list[str], first: list[tuple]
    ) -> None:
        old, self.pager = self.pager, pager
        table = self.query_one("#launches", VirtualTable)
        self.kernel_names = kernels
        self._set_launch_columns(table)
        table.set_source(fetch, pager.count, first)
        self._close_pager(old)
        table.focus()
        self._status()

    # -- events ----------------------------------------------------------------------------
    @on(DataTable.RowHighlighted, "#groups")
    def _group_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key is not None and event.row_key.value is not None:
            self.post_message(GroupSelected(event.row_key.value))

    @on(DataTable.RowSelected, "#groups")
    def _group_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self._open_launches(event.row_key.value)

    @on(VirtualTable.Highlighted, "#launches")
    def _launch_highlighted(self, event: VirtualTable.Highlighted) -> None:
        if event.row is not None:
            self.post_message(LaunchSelected(int(event.row[0])))

    @on(VirtualTable.Selected, "#launches")
    def _launch_selected(self, event: VirtualTable.Selected) -> None:
        self.post_message(LaunchSelected(int(event.row[0])))
        self.post_message(ShowPane("detail"))

    @on(Input.Submitted, "#kernels-filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        self._stop_typing()
        self.apply_filter(event.value.strip() or None)
        event.input.remove_class("shown")
        self._focus_table()

    @on(Input.Changed, "#kernels-filter")
    def _filter_typed(self, event: Input.Changed) -> None:
        """Filter as the user types, once the keys pause: a key only restarts the timer."""
        self._stop_typing()
        if event.input.has_class("shown"):
            self.typing = self.set_timer(FILTER_DEBOUNCE_S, self._typing_paused)

    def _typing_paused(self) -> None:
        self.typing = None
        box = self.query_one("#kernels-filter", Input)
        if box.has_class("shown"):  # half-typed regexes (``conv(``) wait for more keys
            self.apply_filter(box.value.strip() or None, quiet=True)

    def _stop_typing(self) -> None:
        if self.typing is not None:
            self.typing.stop()
            self.typing = None

    # -- actions ---------------------------------------------------------------------------
    def apply_filter(self, regex: str | None, *, quiet: bool = False) -> None:
        """Narrow the view to ``regex`` (the efficiency bin and window stay); nothing to do
        when that is the filter shown already. ``quiet``: a bad regex says nothing (typing)."""
        flt = self.state.filter
        try:
            candidate = Filter(regex, None, flt.eff_bin, flt.window)
            candidate.sql()
        except RoofscopeError as exc:
            if not quiet:
                self.app.notify(exc.one_line(), severity="error")
            return
        if candidate != flt:
            self.post_message(FilterKernels(candidate))

    def action_axis(self) -> None:
        axes = list(AXES)
        self.set_axis(axes[(axes.index(self.session.axis) + 1) % len(axes)])

    def set_axis(self, axis: str) -> None:
        """Group by name rules or by NVTX range (nsys reports with NVTX)."""
        if axis != "rules" and not self.state.current.has_nvtx():
            self.app.notify(
                "no kernels attributed to NVTX ranges in this report (nsys exports with NVTX "
                "ranges and a CUDA API trace have them)",
                severity="warning",
            )
            return
        self.post_message(AxisChanged(axis))

    def jump_to(self, name: str) -> None:
        """The palette's "Group: NAME": show Kernels with NAME under the cursor."""
        self.post_message(ShowPane(self.KEY))
        names = [str(r["name"]) for r in self.rows]
        if name in names:
            self.query_one("#groups", DataTable).move_cursor(row=names.index(name))
        self.post_message(GroupSelected(name))

    def commands(self) -> Iterable[Command]:
        for r in self.rows:
            name = str(r["name"])
            yield f"Group: {name}", lambda n=name: self.jump_to(n), "select in Kernels"
        for axis in AXES:
            yield f"Group by: {axis}", lambda a=axis: self.set_axis(a), "grouping axis of Kernels"

    def _focus_table(self) -> None:
        target = "#launches" if self.drilled_group is not None else "#groups"
        self.query_one(target).focus()

    def action_filter(self) -> None:
        box = self.query_one("#kernels-filter", Input)
        self.filter_before = self.state.filter
        box.value = self.state.filter.regex or ""
        box.add_class("shown")
        box.focus()

    def action_back(self) -> None:
        box = self.query_one("#kernels-filter", Input)
        if box.has_class("shown"):  # cancel: back to the filter from before the box opened
            self._stop_typing()
            box.remove_class("shown")
            before = self.filter_before
            if before is not None and before != self.state.filter:
                self.post_message(FilterKernels(before))
            self._focus_table()
        elif self.drilled_group is not None:
            self.drilled_group = None
            self._close_pager(self.pager)
            self.pager = None
            self.remove_class("drilled")
            self.post_message(GroupSelected(self.state.group))
            self.query_one("#groups").focus()
            self._status()
        elif self.state.filter != Filter():
            self.post_message(FilterKernels(Filter()))

    def action_sort(self) -> None:
        if self.drilled_group is not None:
            self.launch_sort = (self.launch_sort + 1) % len(LAUNCH_COLUMNS)
            self._open_launches(self.drilled_group)
        else:
            self.group_sort = (self.group_sort + 1) % len(self.columns)
            self._show_groups(self._groups())

    def action_reverse(self) -> None:
        self.descending = not self.descending
        if self.drilled_group is not None:
            self._open_launches(self.drilled_group)
        else:
            self._show_groups(self._groups())

    def action_rules(self) -> None:
        self.app.push_screen(RuleEditor(list(self.session.grouper.rules), self.session))

    def current_table(self) -> tuple[list[str], list[list[str]]]:
        """What the pane shows, for export: header and formatted rows."""
        if self.drilled_group is not None and self.pager is not None:
            rows = self.state.current.page(self.pager, 0, self.pager.count)
            header = [c.title for c in LAUNCH_COLUMNS]
            return header, [
                [c.fmt(v) for c, v in zip(LAUNCH_COLUMNS, r, strict=True)] for r in rows
            ]
        header = [c.title for c in self.columns]
        # a file keeps every digit
        body = [[c.cell(r, full=True) for c in self.columns] for r in self.rows]
        return header, body

    def current_data(self) -> tuple[list[str], list[list[str]]]:
        """The groups or the launch list in base units, headed by row key and unit."""
        if self.drilled_group is not None and self.pager is not None:
            rows = self.state.current.page(self.pager, 0, self.pager.count)
            header = [c.unit_title for c in LAUNCH_COLUMNS]
            return header, [[datum(v) for v in r] for r in rows]
        header = [c.unit_title for c in self.columns]
        return header, [[datum(cols.value(r, c.key)) for c in self.columns] for r in self.rows]
