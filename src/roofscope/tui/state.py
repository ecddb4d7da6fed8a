"""The view state every pane reads: which report, the shared selection, Kernels' filter.

Only the app writes it, in its message handlers (:mod:`roofscope.tui.messages`); a pane that
wants it changed posts a message. So "who changed the selection?" has one answer, and a pane
never needs the app's type to read what it shows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from roofscope.analysis.browse import Filter
    from roofscope.session import Report, Session
    from roofscope.tui.first_screen import FirstScreen


def _no_filter() -> Filter:
    # imported here: ``roofscope monitor`` builds a state too and never loads DuckDB
    from roofscope.analysis.browse import Filter

    return Filter()


class Change(StrEnum):
    """What moved, so each pane decides whether it must reload, redraw or do nothing."""

    SELECTION = "selection"  # the group or launch under a cursor
    FILTER = "filter"  # Kernels' regex, efficiency bin or timeline window
    DATA = "data"  # grouping rules or axis: every group changed
    REPORT = "report"  # another of the open reports


@dataclass
class ViewState:
    session: Session | None = None
    report: int = 0  # index into session.reports
    group: str | None = None
    launch: int | None = None
    filter: Filter = field(default_factory=_no_filter)
    ascii_only: bool = False
    use_color: bool = True
    runs_root: Path | None = None
    detail_search: str = ""  # a search Detail applies when it next loads (Advice's `d`)
    # The Kernels pane's first screen as kept beside the cache: what it shows while the
    # session loads (tui/first_screen.py); None once the session is there
    first: FirstScreen | None = None
    # Where the pane hands the first screen it computed, to be kept for the next open; the
    # app sets it with a session and takes it back once rules, axis, filter or report moved
    keep_first: Callable[[FirstScreen], None] | None = None

    def open(self, session: Session | None) -> None:
        """A new session: start on a report with kernels (a recording lives in Monitor)."""
        self.session = session
        reports = session.reports if session is not None else []
        self.report = next((i for i, r in enumerate(reports) if not r.is_recording), 0)
        self.group = self.launch = None
        self.filter = _no_filter()

    def switch_report(self, report: int) -> None:
        """Another open report: its own selection and filter, from nothing."""
        self.report = report
        self.group = self.launch = None
        self.filter = _no_filter()

    @property
    def current(self) -> Report:
        assert self.session is not None, "no report is open"
        return self.session.reports[self.report]

    def label(self) -> str:
        """``name.csv [2/3] · H100`` — the first words of every pane's status line."""
        assert self.session is not None, "no report is open"
        reports = self.session.reports
        more = f" [{self.report + 1}/{len(reports)}]" if len(reports) > 1 else ""
        return f"{Path(self.current.path).name}{more} · {self.current.gpu_name or 'GPU ?'}"
