"""The one contract every pane of ``roofscope open`` keeps, so the app can loop over them.

A pane is given the :class:`ViewState` it reads; it asks for changes by posting messages
(:mod:`roofscope.tui.messages`) and never imports the app. The app calls only what is here:
``state_changed`` when the state moved, ``shown`` when its number key brings it up,
``export`` for ``e``, ``commands`` for the palette; ``BINDINGS`` (and ``KEYS`` for keys a
child widget handles) make the help screen.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual.containers import Vertical

from roofscope.output.export import write_table, write_text
from roofscope.tui.state import Change, ViewState

if TYPE_CHECKING:
    from roofscope.session import Session

# (palette text, what it does, the palette's help line)
Command = tuple[str, Callable[[], Any], str]


class Pane(Vertical):
    KEY: ClassVar[str]  # its widget id, as in show_pane('kernels')
    TITLE: ClassVar[str]
    HINT: ClassVar[str] = ""  # a few words in the help after the title
    # keys a child widget handles (Enter on a table), as (key, what it does), for the help
    KEYS: ClassVar[tuple[tuple[str, str], ...]] = ()
    RELOAD_ON: ClassVar[frozenset[Change]] = frozenset()  # state changes it must reload on
    EAGER: ClassVar[bool] = False  # reload on those even when hidden (others: when shown)
    NEEDS_REPORT: ClassVar[bool] = True  # mounted only once a report is open
    EXPORT_SUFFIX: ClassVar[str] = "csv"

    def __init__(self, state: ViewState, **kwargs: Any):
        kwargs.setdefault("id", self.KEY)
        super().__init__(**kwargs)
        self.state = state
        # a hidden pane loads when first shown, not at start-up
        self.stale = bool(self.RELOAD_ON) and not self.EAGER

    @classmethod
    def create(cls, state: ViewState) -> Pane:
        """The pane as the app mounts it (a pane needing more than the state overrides this)."""
        return cls(state)

    @classmethod
    def start_here(cls, session: Session | None) -> bool:
        """Whether the app opens on this pane for ``session`` (the first that says so wins)."""
        return False

    @property
    def session(self) -> Session:
        assert self.state.session is not None, "no report is open"
        return self.state.session

    # -- the app's calls ---------------------------------------------------------------------
    def reload(self) -> None:
        """Query the session again (in a worker) and show the result."""

    def state_changed(self, change: Change) -> None:
        """Reload on the changes it depends on: now when shown (or EAGER), else when shown."""
        if change not in self.RELOAD_ON:
            return
        if self.display or self.EAGER:
            self.stale = False
            self.reload()
        else:
            self.stale = True

    def shown(self) -> None:
        """Its number key brought it up."""
        if self.stale:
            self.stale = False
            self.reload()

    def focus_first(self) -> None:
        focusable = [w for w in self.query("*") if w.focusable and w.display]
        (focusable[0] if focusable else self).focus()

    def busy(self) -> str | None:
        """Why the open reports cannot be replaced now (a run going), or None."""
        return None

    def commands(self) -> Iterable[Command]:
        """Command-palette entries beyond "Pane: TITLE"."""
        return ()

    # -- export (e) ------------------------------------------------------------------------
    def current_table(self) -> tuple[list[str], list[list[str]]]:
        """What the pane shows, as a header and rows of text."""
        return [], []

    def current_data(self) -> tuple[list[str], list[list[str]]]:
        """What the pane shows as data, for a CSV file: numbers in base units, every digit,
        units in the header (as ``roofscope report --format csv`` writes them)."""
        return self.current_table()

    def current_text(self) -> str:
        """What a chart pane shows, as plain text."""
        return ""

    def export(self, path: str) -> Path:
        if self.EXPORT_SUFFIX == "txt":
            return write_text(path, self.current_text())
        # Markdown is pasted for people to read; CSV is read by programs
        markdown = Path(path).suffix.lower() == ".md"
        header, rows = self.current_table() if markdown else self.current_data()
        return write_table(path, header, rows)
