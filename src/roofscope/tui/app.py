"""``roofscope open``: the app shell — panes on number keys, one shared selection.

The app holds a :class:`roofscope.session.Session`; every query runs in a thread worker through
the session's lock and comes back with ``call_from_thread``, so the UI thread never waits on
DuckDB. Panes render; nothing here computes a metric.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events, on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.containers import Vertical
from textual.content import Content
from textual.fuzzy import Matcher
from textual.screen import Screen
from textual.widgets import ContentSwitcher, OptionList, Static
from textual.widgets.option_list import Option

from roofscope.errors import RoofscopeError
from roofscope.present.text import shown
from roofscope.tui import first_screen
from roofscope.tui.fatal import OneLineErrors
from roofscope.tui.help import help_text
from roofscope.tui.keys_driver import PromptEscape
from roofscope.tui.messages import (
    AxisChanged,
    FilterKernels,
    GroupSelected,
    LaunchSelected,
    OpenReports,
    RulesChanged,
    SearchDetail,
    ShowPane,
)
from roofscope.tui.panes.base import Pane
from roofscope.tui.panes.registry import PANES, PaneEntry, pane_classes
from roofscope.tui.screens.modals import ExportScreen, HelpScreen
from roofscope.tui.state import Change, ViewState
from roofscope.tui.widgets.footer import KeysFooter
from roofscope.tui.widgets.plain import PlainStatic

if TYPE_CHECKING:
    from concurrent.futures import Future

    from textual.widget import AwaitMount
    from textual.worker import Worker

    from roofscope.session import Session
    from roofscope.tui.first_screen import FirstScreen

# The footer shows the pane keys as one compact group ("12345678 panes") (? lists them), so that
# ? Help and q Quit stay in view at 80 columns.
PANE_KEYS = Binding.Group("panes", compact=True)
APP_KEYS = (("Ctrl+P", "command palette: panes, jump to a group, roofs"),)
HELP_TAIL = """The selection is shared: the group or launch under the cursor in Kernels is ◉ on
the Roofline and the subject of Detail. ncu times are replayed with clocks locked to base; nsys
times are the real timeline (opened together, Kernels shows both)."""


def ascii_terminal() -> bool:
    """No braille or box glyphs when the locale is not UTF-8 (or --ascii)."""
    encoding = (getattr(sys.stdout, "encoding", None) or "").lower()
    lang = " ".join(os.environ.get(k, "") for k in ("LC_ALL", "LC_CTYPE", "LANG")).lower()
    return "utf" not in encoding and "utf" not in lang


class RoofscopeCommands(Provider):
    """Palette entries: the panes, then what each pane offers (groups, roofs, axes)."""

    async def search(self, query: str) -> Hits:
        app = self.app
        matcher = self.matcher(query)
        entries = [*self._pane_entries(app)]
        entries += [command for pane in app.query(Pane) for command in pane.commands()]
        for text, callback, hint in entries:
            text = shown(text)
            score = matcher.match(text)
            if score > 0:
                yield Hit(score, _highlight(matcher, text), callback, help=hint)

    async def discover(self) -> Hits:
        """Before anything is typed: the panes (typing finds groups and roofs too)."""
        for text, callback, hint in self._pane_entries(self.app):
            yield DiscoveryHit(text, callback, help=hint)

    @staticmethod
    def _pane_entries(app: App[Any]) -> Iterator[tuple[str, Any, str]]:
        """The panes mounted or about to be (only Runs before a report is open)."""
        later = getattr(app, "later", [])
        for entry in PANES:
            if entry in later or app.query(f"#{entry.KEY}"):
                yield (
                    f"Pane: {entry.TITLE}",
                    lambda k=entry.KEY: app.post_message(ShowPane(k)),
                    ("switch pane"),
                )


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
        yield KeysFooter(compact=True)

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


class RoofscopeApp(OneLineErrors, PromptEscape, App[None]):
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
        Binding("question_mark", "help", "Help", id="help", tooltip="this help"),
        Binding("q", "quit", "Quit", id="quit"),
        *(
            Binding(
                str(i),
                f"show_pane('{entry.KEY}')",
                entry.TITLE,
                id=f"pane.{entry.KEY}",
                group=PANE_KEYS,
            )
            for i, entry in enumerate(PANES, start=1)
        ),
        Binding(
            "e",
            "export",
            "Export",
            id="export",
            tooltip="export what the pane shows (.csv/.md, .txt)",
        ),
        Binding(
            "full_stop",
            "next_report",
            "Next report",
            show=False,
            tooltip="next report, when several are open",
        ),
        Binding(
            "ctrl+r",
            "reload",
            "Reload",
            show=False,
            id="reload",
            tooltip="read the open reports again (changed on disk)",
        ),
    ]

    def __init__(
        self,
        paths: list[str],
        *,
        ascii_only: bool = False,
        session: Session | None = None,
        opening: Future[Session] | None = None,
        start_pane: str | None = None,
        runs_dir: str | Path | None = None,
        first: FirstScreen | None = None,
        **load_options: Any,
    ):
        super().__init__()
        self.paths = paths
        self.start_pane = start_pane
        self._came_from_runs = False
        self.chose_on_start = False  # a report picked on the start screen, not named on the CLI
        self.load_options = load_options
        # ``paths`` already being opened (session.load_in_thread, started before Textual was
        # imported): the first open waits for it instead of loading them again
        self._opening = opening
        # the load in flight (or last): the CLI leaves without waiting for one still running
        self.loading: Future[Session] | None = opening
        # ``first``: the Kernels pane's screen kept beside the cache (tui/first_screen.py),
        # drawn before the session is there; the keys typed until it is wait in ``_held``
        self._first_read = first
        self._held: list[events.Key] | None = None
        self.state = ViewState(
            ascii_only=ascii_only or ascii_terminal(),
            use_color="NO_COLOR" not in os.environ,
            runs_root=Path(runs_dir) if runs_dir else None,
        )
        self.state.open(session)
        self.state.first = first
        self.started = time.perf_counter()
        self.first_paint_s: float | None = None
        self._told_changed: list[str] = []
        self.later: list[PaneEntry] = []  # panes mounted after the first screen (_mount)
        self._mounting: AwaitMount | None = None  # the later panes, while they mount
        self._mounting_keys: set[str] = set()

    @property
    def session(self) -> Session | None:
        return self.state.session

    def compose(self) -> ComposeResult:
        if self.paths and self.state.first is not None and self.session is None:
            # the kept first screen in the first frame: no "loading…" drawn and replaced
            yield self._switcher(list(PANES), first_screen.PANE)
        else:
            yield PlainStatic("loading…", id="loading")
        yield KeysFooter(compact=True)  # ? Help and q Quit in view at 80 columns

    def on_mount(self) -> None:
        self.set_interval(5.0, self._watchdog)
        opening = self._opening
        if self.session is not None:
            self.call_after_refresh(self._mount_panes)
        elif opening is not None and opening.done() and opening.exception() is None:
            # opened while Textual was imported: the panes at once, no "loading…" screen drawn
            self._opening = None
            self._opened(opening.result(), self.paths)
        elif self.paths and self.state.first is not None:
            self._first_screen()
        elif self.paths:
            self._open(self.paths)
        elif self.start_pane is not None:
            self._mount_without_report()
        else:
            self.push_screen(StartScreen(start_choices()), self._start_chosen)

    def _start_chosen(self, choice: str | None) -> None:
        self.chose_on_start = True
        if choice == RUNS_CHOICE:
            self._mount_without_report()
        elif choice:
            self._open([choice])

    def _first_screen(self) -> None:
        """The Kernels pane from the kept first screen now, the session loaded once it is
        drawn (not during: DuckDB's import would share the GIL with the drawing); keys typed
        meanwhile wait for the session (``on_event``), and the other panes mount after it."""
        self._held = []
        self.call_after_refresh(self.action_show_pane, first_screen.PANE)
        self.call_after_refresh(self._painted)
        self.call_after_refresh(self._open, self.paths)

    async def on_event(self, event: events.Event) -> None:
        """While the kept first screen stands in for a session still loading, a key waits for
        it (each would act on the session: drill down, filter, another pane), and a click is
        dropped; quitting goes through at once."""
        held = self._held
        if held is not None and isinstance(event, events.InputEvent) and not event.is_forwarded:
            if isinstance(event, events.Key) and event.key not in ("q", "ctrl+q", "ctrl+c"):
                held.append(event)
                return
            if isinstance(event, events.MouseEvent) and not isinstance(event, events.MouseMove):
                return
        await super().on_event(event)

    def _mount(self, panes: list[PaneEntry], start: str) -> None:
        """The start pane now; the others once it has drawn its first data, or at once when
        a number key asks for one: composing and styling every pane came before the first
        screen and cost ~0.1 s of it (docs/performance.md, issue 20 item 4)."""
        self.query_one("#loading").remove()
        switcher = self._switcher(panes, start)
        mounted = self.mount(switcher, before=self.query_one(KeysFooter))
        self.call_after_refresh(self.action_show_pane, start)
        self._mount_later_soon(switcher, mounted)

    def _switcher(self, panes: list[PaneEntry], start: str) -> ContentSwitcher:
        """The switcher holding the start pane; the others left in ``later``."""
        first = next(entry for entry in panes if entry.KEY == start)  # noqa: SIM300
        self.later = [entry for entry in panes if entry is not first]
        self._mounting, self._mounting_keys = None, set()
        return ContentSwitcher(first.create(self.state), initial=start)

    def _mount_later_soon(self, switcher: ContentSwitcher, mounted: AwaitMount | None) -> None:
        self.run_worker(
            self._mount_later_when_ready(mounted, switcher),
            group="mount-later",
            exclusive=True,
            exit_on_error=False,
        )

    async def _mount_later_when_ready(
        self, mounted: AwaitMount | None, switcher: ContentSwitcher
    ) -> None:
        """Mount ``later`` after the start pane's first queries have finished (at most 1 s)
        and the screen showing them has been drawn."""
        if mounted is not None:
            await mounted
        running = [w for w in self.workers if w.node in switcher.children and not w.is_finished]
        if running:
            await asyncio.wait([asyncio.create_task(_finished(w)) for w in running], timeout=1.0)
        drawn = asyncio.Event()
        self.call_after_refresh(drawn.set)
        await drawn.wait()
        if switcher.is_attached and self.is_running:  # not replaced (Ctrl+R) nor closing
            await self._await_later()

    def _mount_later(self) -> AwaitMount | None:
        """Mount the panes left for later into the switcher (now, unless under way); what to
        await for them, None when every pane is mounted."""
        if self.later:
            panes = [entry.create(self.state) for entry in self.later]
            for pane in panes:
                pane.display = False  # the switcher hides only the children it started with
            self._mounting_keys = {entry.KEY for entry in self.later}
            self.later = []
            self._mounting = self.query_one(ContentSwitcher).mount(*panes)
        return self._mounting

    async def _await_later(self) -> None:
        mounting = self._mount_later()
        if mounting is not None:
            await mounting
            self._mounting, self._mounting_keys = None, set()

    def _pending(self, key: str) -> bool:
        """Whether pane ``key`` is left for later or still being mounted."""
        return any(entry.KEY == key for entry in self.later) or key in self._mounting_keys  # noqa: SIM300

    async def _shutdown(self) -> None:
        """Let a later mount under way finish before Textual closes the app (at most 2 s):
        Textual prunes widgets still mounting, and one whose ``on_mount`` reads its children
        then fails (``Select`` in the Runs pane), so ``q`` right after the first screen, or a
        test that ends there, would end in a traceback. (Textual's private shutdown step: both
        ``run`` and ``run_test`` end with it; Textual is pinned below 9.)"""
        if self._mounting is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.ensure_future(self._await_later()), timeout=2.0)
        await super()._shutdown()

    async def _show_when_mounted(self, key: str) -> None:
        if self.query(ContentSwitcher):  # not removed meanwhile (Ctrl+R)
            await self._await_later()
            self.action_show_pane(key)

    def _mount_without_report(self) -> None:
        """No report yet (``roofscope profile`` with no model): only the panes that need none,
        on ``start_pane`` if it is one of them."""
        panes = [entry for entry in PANES if not entry.NEEDS_REPORT]
        keys = [entry.KEY for entry in panes]
        self._mount(panes, self.start_pane if self.start_pane in keys else keys[0])

    def _start_pane(self) -> str:
        """The pane the open session starts on (the first that says so)."""
        return next(entry.KEY for entry in PANES if entry.start_here(self.session))

    def _mount_panes(self) -> None:
        self._mount(list(PANES), self._start_pane())
        self.call_after_refresh(self._painted)

    def action_reload(self) -> None:
        """Read the open reports again (after ncu or nsys rewrote one)."""
        if self.session is not None:
            self.open_report(self.paths, from_runs=self._came_from_runs)

    def open_report(self, paths: list[str], *, from_runs: bool = True) -> None:
        """Replace what is open with ``paths`` (a finished run's report): every pane reloads."""
        for pane in self.query(Pane):
            busy = pane.busy()
            if busy:
                self.notify(busy, severity="warning")
                return
        for switcher in self.query(ContentSwitcher):
            switcher.remove()
        self.later, self._mounting, self._mounting_keys = [], None, set()
        if self.session is not None:
            self.session.close()
        gc.unfreeze()  # the panes and session going away may be collected (frozen again after)
        self.state.open(None)
        self.state.keep_first = None  # a pane's load still under way keeps nothing
        self.paths = paths
        self._came_from_runs = from_runs
        self._told_changed = []
        self.mount(PlainStatic("loading…", id="loading"), before=self.query_one(KeysFooter))
        self._open(paths)

    def action_help_quit(self) -> None:
        """Ctrl+C says how to quit, as Textual's does, in plain text: ``notify`` here never
        reads markup, and Textual's own line showed its ``[b]`` tags."""
        for key, active in self.active_bindings.items():
            if active.binding.action in ("quit", "app.quit"):
                self.notify(f"Press {key} to quit the app", title="Do you want to quit?")
                return

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
        from roofscope.store import damaged_error, is_damaged  # DuckDB's: loaded by now

        if is_damaged(error):
            self.fatal_line = damaged_error().one_line()
            self.exit(return_code=2)
            return
        super()._handle_exception(error)

    @work(thread=True, exclusive=True, group="open")
    def _open(self, paths: list[str]) -> None:
        opening, self._opening = self._opening, None
        if opening is None:
            from roofscope.session import load_in_thread

            opening = load_in_thread(*paths, **self.load_options)
        self.loading = opening
        try:
            session = opening.result()
        except RoofscopeError as exc:
            self.call_from_thread(self._failed, exc)
            return
        self.call_from_thread(self._opened, session, paths)

    def _failed(self, exc: RoofscopeError) -> None:
        if self._held is not None:  # the kept first screen stood for what failed to load
            self.fatal_line = exc.one_line()
            self.exit(return_code=2)
            return
        if self.start_pane is not None or self.query(Pane) or self._came_from_runs:
            self.notify(exc.one_line(), severity="error", timeout=10)
            self._mount_without_report()  # back to the runs rather than a dead end
            return
        if self.chose_on_start:  # back to the list, to choose another
            self.notify(exc.one_line(), severity="error", timeout=10)
            self.push_screen(StartScreen(start_choices()), self._start_chosen)
            return
        # the files named on the command line: nothing to show; leave as `report` would,
        # with the line printed once the terminal is back and exit code 2
        self.fatal_line = exc.one_line()
        self.exit(return_code=2)

    def _opened(self, session: Session, paths: list[str]) -> None:
        held, self._held = self._held, None
        group = self.state.group
        self.state.open(session)
        if self._start_pane() == first_screen.PANE:  # not a recording, which opens on Monitor
            self.state.keep_first = lambda screen: self._keep_first(paths, screen)
        if held is None:
            self._mount_panes()
            return
        # behind the kept first screen: the pane queries the session (the same rows: nothing
        # moves), the cursor stays where it is, the other panes mount, the keys go through
        self.state.first = None
        self.state.group = group
        for pane in self.query(Pane):
            pane.reload()
        self._mount_later_soon(self.query_one(ContentSwitcher), None)
        self.call_after_refresh(self._painted)
        for key in held:
            self.post_message(events.Key(key.key, key.character))

    def _keep_first(self, paths: list[str], screen: FirstScreen) -> None:
        """Keep the Kernels pane's first screen for the next open of ``paths`` (once; in the
        pane's worker), unless it is the one read at this open."""
        self.state.keep_first = None
        if screen != self._first_read:
            first_screen.write(paths, self.load_options, screen)

    def _painted(self) -> None:
        if self.first_paint_s is None:
            self.first_paint_s = time.perf_counter() - self.started
        # What is there now (the session, the widgets, the stylesheet) lives as long as the
        # app: moved out of the collector's way, a full collection walks only what came later.
        # It walked ~150,000 objects for 40–170 ms, on one key in twenty (bench/tui.py).
        gc.freeze()
        if self.session is not None:  # not yet behind a kept first screen: once it is there
            self._warm_up()

    def on_unmount(self) -> None:
        gc.unfreeze()  # an app run in a longer process (tests, a notebook) leaves nothing pinned

    @work(thread=True, group="warm-up")
    def _warm_up(self) -> None:
        """Import the chart library while the user reads the first screen: its 140 ms import
        would otherwise land on the key that first shows a chart (bench/tui.py)."""
        from roofscope.charts.plotext_backend import preload

        preload()

    # -- the view state: panes ask, the app changes it and tells every pane -----------------
    def _changed(self, change: Change) -> None:
        """Each pane decides: reload now (shown), later (hidden), redraw, or nothing; so
        moving the cursor over a million launches never queues work for hidden panes. The
        first screen is no longer the one to keep once more than the selection moved."""
        if change is not Change.SELECTION:
            self.state.keep_first = None
        for pane in self.query(Pane):
            pane.state_changed(change)

    @on(GroupSelected)
    def _group_selected(self, message: GroupSelected) -> None:
        self.state.group = message.name
        self.state.launch = None
        self._changed(Change.SELECTION)

    @on(LaunchSelected)
    def _launch_selected(self, message: LaunchSelected) -> None:
        self.state.launch = message.launch_id
        self._changed(Change.SELECTION)

    @on(ShowPane)
    def _show_pane(self, message: ShowPane) -> None:
        self.action_show_pane(message.key)

    @on(SearchDetail)
    def _search_detail(self, message: SearchDetail) -> None:
        self.state.detail_search = message.pattern
        self._changed(Change.SELECTION)

    @on(FilterKernels)
    def _filter_kernels(self, message: FilterKernels) -> None:
        self.state.filter = message.filter
        self._changed(Change.FILTER)

    @on(RulesChanged)
    def _rules_changed(self, message: RulesChanged) -> None:
        assert self.session is not None
        self.session.set_rules(message.rules)
        self._changed(Change.DATA)

    @on(AxisChanged)
    def _axis_changed(self, message: AxisChanged) -> None:
        assert self.session is not None
        self.session.set_axis(message.axis)
        self.state.group = self.state.launch = None
        self._changed(Change.DATA)

    @on(OpenReports)
    def _open_reports(self, message: OpenReports) -> None:
        self.open_report(message.paths)

    # -- actions ---------------------------------------------------------------------------
    def _current(self) -> Pane | None:
        switchers = self.query(ContentSwitcher)
        key = switchers.first().current if switchers else None
        return self.query_one(f"#{key}", Pane) if key else None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Panes and export are left out of the footer (and passed on) on the start screen."""
        if action in ("show_pane", "export"):
            # the switcher is a child of the screen: no walk of the whole DOM, which this did
            # for each of the bindings every time the footer asked
            screens = self.children
            return bool(screens) and bool(screens[0].query_children(ContentSwitcher))
        return True

    def action_show_pane(self, key: str) -> None:
        switchers = self.query(ContentSwitcher)
        if not switchers:
            return
        if self._pending(key):
            self.call_next(self._show_when_mounted, key)  # not mounted yet: mount, then show
            return
        if not self.query(f"#{key}"):
            self.notify("open a report first: o or Enter on a finished run", severity="warning")
            return
        switchers.first().current = key
        self.refresh_bindings()
        pane = self.query_one(f"#{key}", Pane)
        pane.focus_first()
        pane.shown()

    def action_help(self) -> None:
        app_bindings = [b for b in self.BINDINGS if "show_pane" not in b.action]
        self.push_screen(
            HelpScreen(help_text("roofscope", pane_classes(), app_bindings, APP_KEYS, HELP_TAIL))
        )

    def action_next_report(self) -> None:
        if self.session is None:
            return
        reports = len(self.session.reports)
        if reports == 1:
            self.notify("only one report is open: roofscope open A B … opens several")
            return
        self.state.switch_report((self.state.report + 1) % reports)
        self._changed(Change.REPORT)

    def action_export(self) -> None:
        pane = self._current()
        if pane is None:
            return
        default = f"roofscope-{pane.KEY}-{time.strftime('%Y%m%d-%H%M%S')}.{pane.EXPORT_SUFFIX}"

        def done(path: str | None) -> None:
            if path:
                self._export(pane, path)

        self.push_screen(ExportScreen(default), done)

    def _export(self, pane: Pane, path: str) -> None:
        try:
            target = pane.export(path)
        except RoofscopeError as exc:
            self.notify(exc.one_line(), severity="error")
            return
        self.notify(f"exported to {target}")


async def _finished(worker: Worker[Any]) -> None:
    """Wait for ``worker`` to end, however it ends (its errors are its pane's to show)."""
    with contextlib.suppress(Exception):
        await worker.wait()
