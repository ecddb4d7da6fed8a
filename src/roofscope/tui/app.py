"""``roofscope open``: the app shell — panes on number keys, one shared selection.

The app holds a :class:`roofscope.api.Session`; every query runs in a thread worker through
the session's lock and comes back with ``call_from_thread``, so the UI thread never waits on
DuckDB. Panes render; nothing here computes a metric.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.containers import Vertical
from textual.content import Content
from textual.fuzzy import Matcher
from textual.screen import Screen
from textual.widgets import ContentSwitcher, Footer, OptionList, Static
from textual.widgets.option_list import Option

from roofscope.analysis.browse import Filter
from roofscope.analysis.timeline import Window
from roofscope.api import AXES, Session, load
from roofscope.errors import RoofscopeError
from roofscope.grouping import Rule
from roofscope.monitor.source import GpuSource
from roofscope.output.export import write_table, write_text
from roofscope.present.text import shown
from roofscope.quantities import ROOFS
from roofscope.store import damaged_error, is_damaged
from roofscope.tui.panes.compare import ComparePane
from roofscope.tui.panes.detail import DetailPane
from roofscope.tui.panes.efficiency import EfficiencyPane
from roofscope.tui.panes.kernels import KernelsPane
from roofscope.tui.panes.monitor import MonitorPane
from roofscope.tui.panes.roofline import RooflinePane
from roofscope.tui.panes.runs import RunsPane
from roofscope.tui.panes.timeline import TimelinePane
from roofscope.tui.screens.modals import ExportScreen, HelpScreen, RuleEditor
from roofscope.tui.widgets.plain import PlainStatic

PANES = (
    ("kernels", "Kernels"),
    ("roofline", "Roofline"),
    ("efficiency", "Efficiency"),
    ("detail", "Detail"),
    ("monitor", "Monitor"),
    ("runs", "Runs"),
    ("compare", "Compare"),
    ("timeline", "Timeline"),
)

STALE = ("roofline", "efficiency", "detail", "timeline", "compare")
# The footer shows the pane keys as one compact "12345678 panes" (? lists them), so that
# ? Help and q Quit stay in view at 80 columns.
PANE_KEYS = Binding.Group("panes", compact=True)

HELP = """[b]roofscope[/b] — keys  (↑ ↓ PgUp PgDn scroll · Esc closes)

  1 2 3 4      Kernels · Roofline · Efficiency · Detail
  5 6 7 8      Monitor (GPUs) · Runs (profile bundled models) ·
               Compare (two or more reports) · Timeline (nsys)
  Enter        drill down: group → launches → every metric of a
               launch; an efficiency bin → its kernels
  Escape       back: Detail → launches → groups; then clears the
               filter
  /            filter by regex (Kernels) · search metrics (Detail)
  s  r         Kernels: cycle the sort column · reverse the order
  g            grouping-rule editor (Enter applies, Ctrl+S saves
               to ./roofscope.toml)
  n            Kernels: group by name rules / innermost /
               outermost NVTX range (nsys)
  l  t         Roofline: AI at DRAM/L2/L1 · groups or the
               2,000 longest launches
  + - 0        Timeline: zoom at the cursor · whole run
  ← →  < >     Timeline: move the cursor · pan
  d  f         Timeline: next device · filter Kernels to the
               window (Enter too; Escape there clears)
  f s + - ← →  Monitor: sample faster / slower (also ] [), zoom,
               scroll back
  Home  End    Monitor: the session's start · live
  s c o R      Runs: start the run set in the form (Tab reaches
               it) · cancel it · open a run's report (or Enter) ·
               read the runs folder again
  [ ] x        Compare: next before / after report · swap them
  v l s        Compare: rows by group/kernel/launch · AI level ·
               scaling, cost and MIG across the open reports
  .            next report, when several are open
  e            export what the pane shows (.csv/.md, .txt)
  Ctrl+R       read the open reports again (changed on disk)
  Ctrl+P       command palette: panes, jump to a group, roofs
  ?  q         this help · quit

The selection is shared: the group or launch under the cursor
in Kernels is ◉ on the Roofline and the subject of Detail. ncu
times are replayed with clocks locked to base; nsys times are
the real timeline (opened together, Kernels shows both).
"""


def ascii_terminal() -> bool:
    """No braille or box glyphs when the locale is not UTF-8 (or --ascii)."""
    encoding = (getattr(sys.stdout, "encoding", None) or "").lower()
    lang = " ".join(os.environ.get(k, "") for k in ("LC_ALL", "LC_CTYPE", "LANG")).lower()
    return "utf" not in encoding and "utf" not in lang


class RoofscopeCommands(Provider):
    """Palette entries: panes, every group (jump to it), roof toggles."""

    async def search(self, query: str) -> Hits:
        app = self.app
        assert isinstance(app, RoofscopeApp)
        matcher = self.matcher(query)
        entries: list[tuple[str, Any, str]] = [
            (f"Pane: {title}", lambda k=key: app.action_show_pane(k), "switch pane")
            for key, title in PANES
        ]
        if app.session is None:  # only the Runs pane so far
            entries = [e for e in entries if e[0] == "Pane: Runs"]
        else:
            entries += self._report_entries(app)
        for text, callback, help_text in entries:
            text = shown(text)
            score = matcher.match(text)
            if score > 0:
                yield Hit(score, _highlight(matcher, text), callback, help=help_text)

    async def discover(self) -> Hits:
        """Before anything is typed: the panes (typing finds groups and roofs too)."""
        app = self.app
        assert isinstance(app, RoofscopeApp)
        for key, title in PANES:
            if app.query(f"#{key}"):
                yield DiscoveryHit(
                    f"Pane: {title}", lambda k=key: app.action_show_pane(k), help="switch pane"
                )

    @staticmethod
    def _report_entries(app: RoofscopeApp) -> list[tuple[str, Any, str]]:
        entries: list[tuple[str, Any, str]] = [
            (f"Group: {name}", lambda n=name: app.jump_to_group(n), "select in Kernels")
            for name in app.group_names()
        ]
        entries += [
            (f"Toggle roof: {roof}", lambda r=roof: app.toggle_roof(r), "show/hide on Roofline")
            for roof in ROOFS
        ]
        entries += [
            (f"Group by: {axis}", lambda a=axis: app.set_axis(a), "grouping axis of Kernels")
            for axis in AXES
        ]
        return entries


def _highlight(matcher: Matcher, text: str) -> Content:
    """``Matcher.highlight`` without reading ``text`` as markup (a group named ``[/]``)."""
    content = Content(text)
    for offset in matcher.fuzzy_search.match(matcher.query, text)[1]:
        if not text[offset].isspace():
            content = content.stylize(matcher.match_style, offset, offset + 1)
    return content


class StartScreen(Screen[str]):
    """``roofscope open`` with no file: the bundled samples and recently opened reports."""

    BINDINGS = [Binding("q", "app.quit", "Quit")]

    def __init__(self, choices: list[str]):
        super().__init__()
        self.choices = choices

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(
                "[b]roofscope[/b] — choose a report (Enter), or q to quit.\n"
                "Open your own with: roofscope open FILE…"
            )
            yield OptionList(
                *[Option(Content(shown(_short_path(c))), id=c) for c in self.choices],
                id="start-choices",
            )
        yield Footer(compact=True)

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        if event.option.id:
            self.dismiss(event.option.id)


RUNS_CHOICE = "⟶ profile a bundled model (Runs pane)"


def _short_path(path: str) -> str:
    """``sample_reports/x.csv`` under the working directory, ``~/…`` under home: one row each
    at 80 columns rather than a wrapped absolute path."""
    for base, prefix in ((Path.cwd(), ""), (Path.home(), "~/")):
        try:
            return prefix + str(Path(path).relative_to(base))
        except ValueError:
            continue
    return path


def start_choices() -> list[str]:
    from roofscope.store import recent_inputs

    found: list[str] = []
    for folder in (
        Path.cwd() / "sample_reports",
        Path(__file__).resolve().parents[3] / "sample_reports",
    ):
        if folder.is_dir():
            exports = [*folder.glob("*.csv*"), *folder.glob("*.parquet")]  # + recordings
            found += [str(p) for p in sorted(exports) if str(p) not in found]
    return [RUNS_CHOICE, *found, *(p for p in recent_inputs() if p not in found)]


class RoofscopeApp(App[None]):
    TITLE = "roofscope"
    CSS = """
    Screen { layout: vertical; }
    #loading { height: 1fr; content-align: center middle; }
    ContentSwitcher { height: 1fr; }
    *:focus { border: none; }
    Footer.-compact FooterLabel { margin: 0 1 0 0; }
    Footer.-compact FooterKey.-command-palette { margin-right: 0; padding-right: 1; }
    """
    COMMANDS = App.COMMANDS | {RoofscopeCommands}
    BINDINGS = [  # in footer order: help and quit before what a narrow terminal may cut
        Binding("question_mark", "help", "Help", id="help"),
        Binding("q", "quit", "Quit", id="quit"),
        *(
            Binding(str(i), f"show_pane('{key}')", title, id=f"pane.{key}", group=PANE_KEYS)
            for i, (key, title) in enumerate(PANES, start=1)
        ),
        Binding("escape", "back", "Back", show=False),
        Binding("e", "export", "Export", id="export"),
        Binding("full_stop", "next_report", "Next report", show=False),
        Binding("ctrl+r", "reload", "Reload", show=False, id="reload"),
    ]

    def __init__(
        self,
        paths: list[str],
        *,
        ascii_only: bool = False,
        session: Session | None = None,
        start_pane: str | None = None,
        runs_dir: str | Path | None = None,
        **load_options: Any,
    ):
        super().__init__()
        self.paths = paths
        self.start_pane = start_pane
        self.runs_root = Path(runs_dir) if runs_dir else None
        self._came_from_runs = False
        self.load_options = load_options
        self.session: Session = session  # type: ignore[assignment]
        self.report = 0
        self.selected_group: str | None = None
        self.selected_launch: int | None = None
        self.ascii_only = ascii_only or ascii_terminal()
        self.use_color = "NO_COLOR" not in os.environ
        self.started = time.perf_counter()
        self.stale = set(STALE)  # load when first shown
        self.first_paint_s: float | None = None
        self._told_changed: list[str] = []

    def compose(self) -> ComposeResult:
        yield PlainStatic("loading…", id="loading")
        yield Footer(compact=True)  # ? Help and q Quit in view at 80 columns

    def on_mount(self) -> None:
        self.set_interval(5.0, self._watchdog)
        if self.session is not None:
            self.call_after_refresh(self._mount_panes)
        elif self.paths:
            self._open(self.paths)
        elif self.start_pane == "runs":
            self._mount_runs_only()
        else:
            self.push_screen(StartScreen(start_choices()), self._start_chosen)

    def _start_chosen(self, choice: str | None) -> None:
        if choice == RUNS_CHOICE:
            self._mount_runs_only()
        elif choice:
            self._open([choice])

    def _mount_runs_only(self) -> None:
        """No report yet (``roofscope profile`` with no model): only the Runs pane."""
        self.query_one("#loading").remove()
        switcher = ContentSwitcher(RunsPane(self.runs_root, id="runs"), initial="runs")
        self.mount(switcher, before=self.query_one(Footer))
        self.call_after_refresh(lambda: self.query_one("#runs-table").focus())
        self.call_after_refresh(self.refresh_bindings)

    def action_reload(self) -> None:
        """Read the open reports again (after ncu or nsys rewrote one)."""
        if self.session is not None:
            self.open_report(self.paths, from_runs=self._came_from_runs)

    def open_report(self, paths: list[str], *, from_runs: bool = True) -> None:
        """Replace what is open with ``paths`` (a finished run's report): every pane reloads."""
        runs = self.query(RunsPane)
        if runs and runs.first().runner is not None:
            self.notify("a run is going: open reports when it ends (c cancels it)",
                        severity="warning")  # fmt: skip
            return
        for switcher in self.query(ContentSwitcher):
            switcher.remove()
        if self.session is not None:
            self.session.close()
            self.session = None  # type: ignore[assignment]
        self.paths = paths
        self.report = 0
        self._came_from_runs = from_runs
        self._told_changed = []
        self.selected_group = self.selected_launch = None
        self.stale = set(STALE)
        self.mount(PlainStatic("loading…", id="loading"), before=self.query_one(Footer))
        self._open(paths)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: Any = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Every notification is plain text: messages carry file and kernel names."""
        super().notify(
            shown(message, lines=True),
            title=shown(title),
            severity=severity,
            timeout=timeout,
            markup=False,
        )

    def _watchdog(self) -> None:
        """Leave when the terminal is gone (an SSH link that dropped), like dolphie does; say
        when an open report changed on disk, since the panes show the version loaded."""
        if os.getppid() == 1 and not sys.__stdin__.isatty():  # pragma: no cover - needs a tty
            self.exit()
        changed = self.session.changed_on_disk() if self.session is not None else []
        if changed and changed != self._told_changed:
            self._told_changed = changed
            self.notify(
                f"{', '.join(Path(c).name for c in changed)} changed on disk since it was "
                "opened: these numbers are from the version loaded · Ctrl+R reloads",
                severity="warning",
                timeout=30,
            )

    def _handle_exception(self, error: Exception) -> None:
        # A cache that rotted under us: remove it and leave with the one line that says so.
        if is_damaged(error):
            self.exit(return_code=2, message=damaged_error().one_line())
            return
        super()._handle_exception(error)

    @work(thread=True, exclusive=True, group="open")
    def _open(self, paths: list[str]) -> None:
        try:
            session = load(*paths, **self.load_options)
        except RoofscopeError as exc:
            self.call_from_thread(self._failed, exc)
            return
        self.call_from_thread(self._opened, session)

    def _failed(self, exc: RoofscopeError) -> None:
        self.notify(exc.one_line(), severity="error", timeout=10)
        if self.start_pane == "runs" or self.query(RunsPane) or self._came_from_runs:
            self._mount_runs_only()  # back to the runs rather than a dead end
            return
        self.query_one("#loading", Static).update(exc.one_line())

    def _opened(self, session: Session) -> None:
        self.session = session
        self._mount_panes()

    def _mount_panes(self) -> None:
        self.query_one("#loading").remove()
        # Start on a report with kernels; a GPU recording opened beside it lives in pane 5.
        reports = self.session.reports
        self.report = next((i for i, r in enumerate(reports) if not r.is_recording), 0)
        switcher = ContentSwitcher(
            KernelsPane(id="kernels"),
            RooflinePane(id="roofline"),
            EfficiencyPane(id="efficiency"),
            DetailPane(id="detail"),
            TimelinePane(id="timeline"),
            ComparePane(id="compare"),
            MonitorPane(
                self._monitor_source, autostart=False, ascii_only=self.ascii_only, id="monitor"
            ),
            RunsPane(self.runs_root, id="runs"),
            initial="kernels",
        )
        self.mount(switcher, before=self.query_one(Footer))
        self.call_after_refresh(self._painted)
        self.call_after_refresh(self.refresh_bindings)

    def _monitor_source(self) -> GpuSource:
        """Recordings opened in this session, else this machine's GPUs through NVML."""
        stored = self.session.recording_source()
        if stored is not None:
            return stored
        from roofscope.monitor.nvml import NvmlSource

        return NvmlSource()

    def _painted(self) -> None:
        self.first_paint_s = time.perf_counter() - self.started
        self._warm_up()
        if all(r.is_recording for r in self.session.reports):
            self.action_show_pane("monitor")  # nothing to show in the kernel panes
        else:
            self.query_one("#groups").focus()

    @work(thread=True, group="warm-up")
    def _warm_up(self) -> None:
        """Import the chart library while the user reads the first screen: its 140 ms import
        would otherwise land on the key that first shows a chart (bench/tui.py)."""
        from roofscope.charts.plotext_backend import preload

        preload()

    # -- shared state ----------------------------------------------------------------------
    def report_label(self) -> str:
        report = self.session.reports[self.report]
        name = Path(report.path).name
        more = (
            f" [{self.report + 1}/{len(self.session.reports)}]"
            if len(self.session.reports) > 1
            else ""
        )
        return f"{name}{more} · {report.gpu_name or 'GPU ?'}"

    def select_group(self, name: str | None) -> None:
        self.selected_group = name
        self.selected_launch = None
        self._selection_changed()

    def select_launch(self, launch_id: int) -> None:
        self.selected_launch = launch_id
        self._selection_changed()

    def _current(self) -> str | None:
        switchers = self.query(ContentSwitcher)
        return switchers.first().current if switchers else None

    def _selection_changed(self) -> None:
        """Only the visible pane follows the selection at once; the others catch up when
        shown, so moving the cursor over a million launches never queues work."""
        current = self._current()
        if current == "roofline":
            self.query_one(RooflinePane).redraw()
        elif current == "detail":
            self.query_one(DetailPane).reload()

    def group_names(self) -> list[str]:
        pane = self.query(KernelsPane)
        return [str(r["name"]) for r in pane.first().rows] if pane else []

    def kernel_names(self) -> list[str]:
        with self.session.lock:
            rows = self.session.con.execute(
                "SELECT DISTINCT kernel FROM launches WHERE kernel IS NOT NULL ORDER BY 1"
            ).fetchall()
        return [r[0] for r in rows]

    def set_rules(self, rules: list[Rule]) -> None:
        with self.session.lock:
            self.session.set_rules(rules)
        self._reload_all()

    def _reload_all(self) -> None:
        """Data changed (rules, report): reload the visible pane, mark the others stale."""
        self.stale = set(STALE)
        self.query_one(KernelsPane).reload()
        current = self._current()
        if current in self.stale:
            self._refresh_pane(current)

    def _refresh_pane(self, key: str) -> None:
        self.stale.discard(key)
        if key == "roofline":
            self.query_one(RooflinePane).reload()
        elif key == "efficiency":
            self.query_one(EfficiencyPane).reload()
        elif key == "detail":
            self.query_one(DetailPane).reload()
        elif key == "timeline":
            self.query_one(TimelinePane).reload()
        elif key == "compare":
            self.query_one(ComparePane).reload()

    def set_axis(self, axis: str) -> None:
        """Group Kernels by name rules or by NVTX range (nsys reports with NVTX)."""
        if axis != "rules" and not self.session.has_nvtx(self.report):
            self.notify(
                "no kernels attributed to NVTX ranges in this report (nsys exports with NVTX "
                "ranges and a CUDA API trace have them)",
                severity="warning",
            )
            return
        self.session.set_axis(axis)
        self.selected_group = self.selected_launch = None
        self._reload_all()

    def filter_window(self, window: Window) -> None:
        kernels = self.query_one(KernelsPane)
        rid = self.session.reports[self.report].report_id
        kernels.apply_window((rid, window.t0, window.t1))
        self.action_show_pane("kernels")

    # -- actions ---------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Keys that would do nothing are left out of the footer (and passed on): panes and
        export on the start screen, Escape outside Detail (the panes' own Escape comes
        first)."""
        if action in ("show_pane", "export"):
            return bool(self.query(ContentSwitcher))
        if action == "back":
            return self._current() == "detail"
        return True

    def action_back(self) -> None:
        """Escape on Detail: back to the launches (or groups) it was opened from."""
        self.action_show_pane("kernels")

    def action_show_pane(self, key: str) -> None:
        switchers = self.query(ContentSwitcher)
        if not switchers:
            return
        if not self.query(f"#{key}"):
            self.notify("open a report first: o or Enter on a finished run", severity="warning")
            return
        switchers.first().current = key
        self.refresh_bindings()  # Escape on Detail
        pane = self.query_one(f"#{key}")
        focusable = [w for w in pane.query("*") if w.focusable and w.display]
        if key == "runs":  # the list first; Tab reaches the form
            focusable = list(pane.query("#runs-table"))
        (focusable[0] if focusable else pane).focus()
        if key == "monitor":
            pane.start()  # type: ignore[attr-defined]
            pane.redraw()  # type: ignore[attr-defined]
        elif key == "runs":
            pane.shown()  # type: ignore[attr-defined]
        elif key in self.stale:
            self._refresh_pane(key)
        elif key == "roofline":
            pane.redraw()  # type: ignore[attr-defined]
        elif key == "detail":
            pane.reload()  # type: ignore[attr-defined]

    def action_help(self) -> None:
        self.push_screen(HelpScreen(HELP))

    def action_rules(self) -> None:
        self.push_screen(RuleEditor(list(self.session.grouper.rules)))

    def action_next_report(self) -> None:
        if self.session is not None and len(self.session.reports) == 1:
            self.notify("only one report is open: roofscope open A B … opens several")
        if self.session is not None and len(self.session.reports) > 1:
            self.report = (self.report + 1) % len(self.session.reports)
            self.selected_group = self.selected_launch = None
            self.query_one(KernelsPane).flt = Filter()
            timeline = self.query_one(TimelinePane)
            timeline.window = timeline.full = None
            timeline.devices = []
            self._reload_all()

    def jump_to_group(self, name: str) -> None:
        self.action_show_pane("kernels")
        kernels = self.query_one(KernelsPane)
        names = [str(r["name"]) for r in kernels.rows]
        if name in names:
            kernels.query_one("#groups").move_cursor(row=names.index(name))  # type: ignore[attr-defined]
        self.select_group(name)

    def toggle_roof(self, name: str) -> None:
        self.query_one(RooflinePane).toggle_roof(name)

    def filter_efficiency_bin(self, index: int) -> None:
        kernels = self.query_one(KernelsPane)
        kernels.apply_filter(kernels.flt.regex, index)
        self.action_show_pane("kernels")

    def action_export(self) -> None:
        switchers = self.query(ContentSwitcher)
        if not switchers:
            return
        pane = switchers.first().current or "kernels"
        suffix = "txt" if pane == "roofline" else "csv"
        default = f"roofscope-{pane}-{time.strftime('%Y%m%d-%H%M%S')}.{suffix}"

        def done(path: str | None) -> None:
            if path:
                self._export(pane, path)

        self.push_screen(ExportScreen(default), done)

    def _export(self, pane: str, path: str) -> None:
        try:
            widget = self.query_one(f"#{pane}")
            if pane == "roofline":
                target = write_text(path, widget.current_text())  # type: ignore[attr-defined]
            else:
                header, rows = widget.current_table()  # type: ignore[attr-defined]
                target = write_table(path, header, rows)
        except RoofscopeError as exc:
            self.notify(exc.one_line(), severity="error")
            return
        self.notify(f"exported to {target}")
