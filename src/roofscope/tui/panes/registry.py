"""Every pane of ``roofscope open``, in number-key order: adding a pane is its file and a line
here (the app, the help screen and the palette loop over this)."""

from __future__ import annotations

from roofscope.tui.panes.advice import AdvicePane
from roofscope.tui.panes.base import Pane
from roofscope.tui.panes.compare import ComparePane
from roofscope.tui.panes.detail import DetailPane
from roofscope.tui.panes.efficiency import EfficiencyPane
from roofscope.tui.panes.kernels import KernelsPane
from roofscope.tui.panes.monitor import MonitorPane
from roofscope.tui.panes.roofline import RooflinePane
from roofscope.tui.panes.runs import RunsPane
from roofscope.tui.panes.timeline import TimelinePane

PANES: tuple[type[Pane], ...] = (
    KernelsPane,
    RooflinePane,
    EfficiencyPane,
    DetailPane,
    MonitorPane,
    RunsPane,
    ComparePane,
    TimelinePane,
    AdvicePane,
)
