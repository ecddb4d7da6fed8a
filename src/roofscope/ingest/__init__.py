"""Readers for profiler exports; each writes the canonical tables defined in schema.py.

The format is decided by content: an SQLite file is an nsys export, a folder of Parquet tables
an nsys parquetdir (or a GPU recording, when roofscope wrote it), ``.nsys-rep``/``.ncu-rep``
binaries go through the user's own nsys/ncu, and a CSV is an nsys stats table or an ncu
page depending on its header.

The readers are imported when a file of their format is read, never with this package: the
cache's readers (``roofscope report`` of a cached export, the TUI) import ``roofscope.ingest``
through the store and must not pay for pyarrow (the nsys and recording readers) or the
CSV readers. The detectors tried on every file are the cheap ones, on the first bytes.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from roofscope.ingest.ncu.binary import is_ncu_rep
from roofscope.ingest.nsys.binary import is_nsys_rep
from roofscope.ingest.nsys.parquet import is_parquet_dir
from roofscope.ingest.report_info import ReportInfo
from roofscope.ingest.sniff import check_input, is_sqlite
from roofscope.telemetry.recording import is_recording

if TYPE_CHECKING:
    import duckdb

# What a file name promises, for the formats whose content is unmistakable.
_SUFFIX_KINDS = {
    ".sqlite": "an SQLite database",
    ".sqlite3": "an SQLite database",
    ".db": "an SQLite database",
    ".parquet": "Parquet",
    ".csv": "text",
    ".tsv": "text",
    ".json": "text",
    ".txt": "text",
}
_LAYOUT_KINDS = {
    "nsys-sqlite": "an SQLite database",
    "nsys-parquetdir": "Parquet",
    "gpu-recording": "Parquet",
}


def ingest_file(con: duckdb.DuckDBPyConnection, path: Path, report_id: int) -> ReportInfo:
    """Load one export, converting binary reports with the profiler that wrote them."""
    info = _ingest(con, path, report_id)
    if info.layout.startswith("ncu"):
        from roofscope.ingest.ncu.gaps import warn_partial_metrics

        warn_partial_metrics(con, info)
    promised = _SUFFIX_KINDS.get(path.suffix.lower())
    found = _LAYOUT_KINDS.get(info.layout, "text")
    if promised is not None and promised != found:
        info.warnings.append(
            f"the name ends in {path.suffix} but the file holds {found} ({info.layout}); it "
            f"was read by its content"
        )
    return info


def _ingest(con: duckdb.DuckDBPyConnection, path: Path, report_id: int) -> ReportInfo:
    check_input(path)  # before anything opens it: a FIFO would block the first open
    if is_recording(path):  # before parquetdir: a recording is a folder of Parquet too
        from roofscope.ingest.recording import ingest_recording

        return ingest_recording(con, path, report_id)
    if path.is_dir() and is_parquet_dir(path):
        from roofscope.ingest.nsys.export import ingest_nsys_parquet

        return ingest_nsys_parquet(con, path, report_id)
    if is_sqlite(path):
        from roofscope.ingest.nsys.export import ingest_nsys_sqlite

        return ingest_nsys_sqlite(con, path, report_id)
    if is_nsys_rep(path):
        return _ingest_nsys_rep(con, path, report_id)
    from roofscope.ingest.ncu.pages import ingest_ncu_csv

    if is_ncu_rep(path):
        from roofscope.ingest.ncu.binary import ingest_ncu_rep

        return ingest_ncu_rep(con, path, report_id)
    from roofscope.ingest.nsys.events import ingest_nsys_events, is_nsys_events
    from roofscope.ingest.nsys.stats import ingest_nsys_stats, is_nsys_stats

    if is_nsys_events(path):  # the Nsight Systems GUI's Events View saved as CSV
        return ingest_nsys_events(con, path, report_id)
    if is_nsys_stats(path):
        return ingest_nsys_stats(con, path, report_id)
    from roofscope.ingest.recording import refuse_parquet

    refuse_parquet(path)
    return ingest_ncu_csv(con, path, report_id)


def _ingest_nsys_rep(con: duckdb.DuckDBPyConnection, path: Path, report_id: int) -> ReportInfo:
    """Through the user's nsys; where there is none, through a sibling export, with a note."""
    import os
    import shutil

    from roofscope.ingest.nsys.binary import converted_sqlite, sibling_export
    from roofscope.ingest.nsys.export import ingest_nsys_sqlite

    sibling = sibling_export(path)
    if sibling is not None and not (os.environ.get("ROOFSCOPE_NSYS") or shutil.which("nsys")):
        info = ingest_nsys_sqlite(con, sibling, report_id)
        info.warnings.append(
            f"nsys is not on PATH: read {sibling.name}, the export beside the report "
            "(newer than it)"
        )
    else:
        with converted_sqlite(path) as sqlite_path:
            info = ingest_nsys_sqlite(con, sqlite_path, report_id)
    info.path, info.layout = str(path), "nsys-rep"
    return info


__all__ = ["ReportInfo", "check_input", "ingest_file"]
