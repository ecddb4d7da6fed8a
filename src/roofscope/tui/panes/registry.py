"""Every pane of ``roofscope open``, in number-key order: adding a pane is its file and a line
here (the app, the help screen and the palette loop over this).

A pane is listed by key, title and where its class lives, and its module is imported when the
pane is first mounted or asked about: importing all nine (and what they import: charts,
profiling, telemetry, the diff) cost ~30 ms of the first paint on the 2-core VM, for panes
that mount after it (issue 31). ``tests/test_tui_contract.py`` holds each entry to its class.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from roofscope.session import Session
    from roofscope.tui.panes.base import Pane
    from roofscope.tui.state import ViewState


@dataclass(frozen=True)
class PaneEntry:
    """A pane as the app knows it before its class is imported (the names match the class's)."""

    KEY: str  # its widget id, its show_pane argument and its module under roofscope.tui.panes
    TITLE: str
    name: str  # the class
    NEEDS_REPORT: bool = True  # mounted only once a report is open

    def load(self) -> type[Pane]:
        return getattr(import_module(f"roofscope.tui.panes.{self.KEY}"), self.name)

    def create(self, state: ViewState) -> Pane:
        return self.load().create(state)

    def start_here(self, session: Session | None) -> bool:
        return self.load().start_here(session)


PANES: tuple[PaneEntry, ...] = (
    PaneEntry("kernels", "Kernels", "KernelsPane"),
    PaneEntry("roofline", "Roofline", "RooflinePane"),
    PaneEntry("efficiency", "Efficiency", "EfficiencyPane"),
    PaneEntry("detail", "Detail", "DetailPane"),
    PaneEntry("monitor", "Monitor", "MonitorPane"),
    PaneEntry("runs", "Runs", "RunsPane", NEEDS_REPORT=False),
    PaneEntry("compare", "Compare", "ComparePane"),
    PaneEntry("timeline", "Timeline", "TimelinePane"),
    PaneEntry("advice", "Advice", "AdvicePane"),
)


def pane_classes() -> list[type[Pane]]:
    """Every pane's class, in number-key order (the help screen reads their bindings)."""
    return [entry.load() for entry in PANES]
