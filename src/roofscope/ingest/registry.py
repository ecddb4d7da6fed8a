"""Every reader roofscope has, in one list: the input formats, and the one place that picks a
file's reader. Adding a format is a reader module (:mod:`roofscope.ingest.contract`) and a
line in :data:`READERS`.

Each reader claims a file with a confidence; the most confident reads it (the first listed
wins a tie, and a certain claim ends the search: the content-sniffing claims of the text
formats run only when nothing was sure).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from roofscope.ingest.contract import NCU, Layout, RawValue, Reader, StoredReport
from roofscope.ingest.ncu.reader import NCU_CSV, NCU_REP
from roofscope.ingest.nsys.reader import (
    NSYS_EVENTS,
    NSYS_PARQUETDIR,
    NSYS_REP,
    NSYS_SQLITE,
    NSYS_STATS,
)
from roofscope.ingest.recording import RECORDING_READER

if TYPE_CHECKING:
    import duckdb

    from roofscope.ingest.contract import ExportProblem

READERS: tuple[Reader, ...] = (
    RECORDING_READER,
    NSYS_PARQUETDIR,
    NSYS_SQLITE,
    NSYS_REP,
    NCU_REP,
    NSYS_EVENTS,
    NSYS_STATS,
    NCU_CSV,  # the fallback: any text is tried as an ncu page, which names what is wrong
)
LAYOUTS: dict[str, Layout] = {lay.name: lay for r in READERS for lay in r.layouts}
_BY_LAYOUT: dict[str, Reader] = {}
for _reader in READERS:
    for _layout in _reader.layouts:
        _BY_LAYOUT.setdefault(_layout.name, _reader)


def reader_for(path: Path) -> Reader:
    """The reader that claims ``path`` most confidently."""
    best, sure = READERS[-1], 0.0
    for reader in READERS:
        confidence = reader.claim(path)
        if confidence > sure:
            best, sure = reader, confidence
        if sure >= 1.0:
            break
    return best


def layout(name: str) -> Layout:
    """The record of a stored layout name (a name no reader lists reads as an ncu page's)."""
    return LAYOUTS.get(name) or Layout(
        name, NCU, counters=True, timeline=False, kernels=True, rules=False, container="text"
    )


def launch_values(
    con: duckdb.DuckDBPyConnection, report_id: int, launch_id: int, problem: ExportProblem
) -> list[RawValue]:
    """Every exported value of one launch, through the reader of its report's layout."""
    found = con.execute(
        "SELECT layout, raw_values, decimal, path FROM reports WHERE report_id = ?", [report_id]
    ).fetchall()
    if not found:
        return []
    stored = StoredReport(report_id, *found[0])
    reader = _BY_LAYOUT.get(stored.layout)
    return reader.launch_values(con, stored, launch_id, problem) if reader else []
