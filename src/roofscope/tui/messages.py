"""What a pane or a dialog asks of the app; the app alone changes the view state.

Dataclass messages (toolong's style) that bubble from the pane to the app; none carries a
widget, so a handler never reaches into the pane that sent it.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from roofscope.analysis.browse import Filter
from roofscope.grouping import Rule


@dataclass
class GroupSelected(Message):
    """The group under a cursor (Kernels, Efficiency's ranking, Compare by group)."""

    name: str | None


@dataclass
class LaunchSelected(Message):
    launch_id: int


@dataclass
class ShowPane(Message):
    key: str


@dataclass
class FilterKernels(Message):
    """Narrow Kernels to ``filter`` (a pane elsewhere posts ``ShowPane`` after it)."""

    filter: Filter


@dataclass
class SearchDetail(Message):
    """Detail narrowed to the metrics matching ``pattern`` (Advice: the metrics a rule read)."""

    pattern: str


@dataclass
class RulesChanged(Message):
    """The rule editor's new rule list: regroup every report."""

    rules: list[Rule]


@dataclass
class AxisChanged(Message):
    """Group by name rules or by an NVTX range (``n`` in Kernels)."""

    axis: str


@dataclass
class OpenReports(Message):
    """Replace what is open (a finished run's report, from Runs)."""

    paths: list[str]
