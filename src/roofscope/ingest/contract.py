"""The reader contract: what every input format's reader does, and what a report *is* as a
record rather than a name to test.

A :class:`Reader` claims a file from its name and first bytes with a confidence (0: not mine,
1: certainly mine), ingests it into the store as one report, and gives a launch's raw values
back for Detail. What it produced is a :class:`Layout`, stored by name in ``reports.layout``
and known above ``ingest/`` only through its fields (``family``, ``timeline``, ``counters``…):
no floor above this one tests a layout name. The registry (:mod:`roofscope.ingest.registry`)
lists the readers; adding an input format is one reader module and one line there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import duckdb

    from roofscope.ingest.report_info import ReportInfo

# Why an export cannot be read again for values the store does not hold (None: it can). The
# caller decides (has the file changed since it was loaded?), since that is the store's to know.
ExportProblem = Callable[[str], str | None]

NCU, NSYS, RECORDING = "ncu", "nsys", "recording"  # families


@dataclass(frozen=True)
class Layout:
    """What one kind of report holds, for the floors above ingest."""

    name: str  # as stored and as JSON's "format" says it: ncu-raw, nsys-sqlite, gpu-recording…
    family: str  # NCU, NSYS or RECORDING
    counters: bool  # hardware counters: FLOPs, bytes, a place on the roofline
    timeline: bool  # durations from the real timeline, shown as times and paired with ncu
    kernels: bool  # launches to list (a GPU recording has none)
    rules: bool  # may hold ncu's rule results (roofscope advise)
    container: str  # what the file holds: text, an SQLite database, Parquet, a binary report
    unnamed_gpu: str = ""  # why such a report may not name its GPU, for the warning that says so


@dataclass(frozen=True)
class StoredReport:
    """A row of ``reports``: what a reader needs to go back to a launch's values."""

    report_id: int
    layout: str
    raw_values: str  # "table": copied into the store; "source": read from the export again
    decimal: str
    path: str


@dataclass(frozen=True)
class RawValue:
    """One value of a launch: ``kind`` is ``raw`` (as exported, in base SI where the unit is
    known) or ``nsys`` (where and when a timeline launch ran)."""

    kind: str
    name: str
    value: object
    unit: str
    source: str


class Reader(Protocol):
    """One input format (or a family of close ones). Its module imports nothing heavy: the
    readers' parsers are imported by :meth:`ingest` when a file of its format is read."""

    name: str
    layouts: tuple[Layout, ...]  # what :meth:`ingest` may produce

    def claim(self, path: Path) -> float:
        """How sure this reader is that ``path`` is its format, from its name and first bytes:
        0 not at all, 1 certainly. Cheap: every input meets every reader's claim."""
        ...

    def ingest(self, con: duckdb.DuckDBPyConnection, path: Path, report_id: int) -> ReportInfo: ...

    def launch_values(
        self,
        con: duckdb.DuckDBPyConnection,
        report: StoredReport,
        launch_id: int,
        problem: ExportProblem,
    ) -> list[RawValue]:
        """Every value of one launch the export holds, scaled to base SI where the unit is
        known; empty for a format with no rows to go back to."""
        ...
