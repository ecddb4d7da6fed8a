"""The Nsight Systems readers: SQLite exports, parquetdir folders, binary ``.nsys-rep``
reports, ``nsys stats`` tables and the GUI's Events View CSV. Light to import: the parsers load
when a file of theirs is read."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from roofscope.ingest.contract import NSYS, ExportProblem, Layout, RawValue, StoredReport
from roofscope.ingest.nsys.binary import is_nsys_rep
from roofscope.ingest.nsys.parquet import is_parquet_dir
from roofscope.ingest.sniff import is_sqlite

if TYPE_CHECKING:
    import duckdb

    from roofscope.ingest.report_info import ReportInfo


def _timeline(name: str, container: str, unnamed_gpu: str = "") -> Layout:
    return Layout(
        name, NSYS, counters=False, timeline=True, kernels=True, rules=False,
        container=container, unnamed_gpu=unnamed_gpu,
    )  # fmt: skip


SQLITE = _timeline("nsys-sqlite", "an SQLite database")
PARQUETDIR = _timeline("nsys-parquetdir", "Parquet")
REP = _timeline("nsys-rep", "a binary report")
STATS = _timeline("nsys-stats", "text", "nsys stats tables never do")
EVENTS = _timeline("nsys-events", "text", "the Events View has no device name")


def _nsys_values(
    con: duckdb.DuckDBPyConnection, report: StoredReport, launch_id: int, problem: ExportProblem
) -> list[RawValue]:
    from roofscope.ingest.raw_rows import nsys_values

    return nsys_values(con, report, launch_id, problem)


class NsysSqlite:
    name = "Nsight Systems SQLite export"
    layouts = (SQLITE,)
    launch_values = staticmethod(_nsys_values)

    def claim(self, path: Path) -> float:
        return 1.0 if is_sqlite(path) else 0.0

    def ingest(self, con: duckdb.DuckDBPyConnection, path: Path, report_id: int) -> ReportInfo:
        from roofscope.ingest.nsys.export import ingest_nsys_sqlite

        return ingest_nsys_sqlite(con, path, report_id)


class NsysParquetDir:
    name = "Nsight Systems parquetdir export"
    layouts = (PARQUETDIR,)
    launch_values = staticmethod(_nsys_values)

    def claim(self, path: Path) -> float:
        # below a GPU recording's certainty: a recording is a folder of Parquet too
        return 0.95 if path.is_dir() and is_parquet_dir(path) else 0.0

    def ingest(self, con: duckdb.DuckDBPyConnection, path: Path, report_id: int) -> ReportInfo:
        from roofscope.ingest.nsys.export import ingest_nsys_parquet

        return ingest_nsys_parquet(con, path, report_id)


class NsysRep:
    """Through the user's nsys; where there is none, through a sibling export of the same
    report, with a note; else one line with the exact ``nsys export`` command."""

    name = "Nsight Systems report"
    layouts = (REP,)
    launch_values = staticmethod(_nsys_values)

    def claim(self, path: Path) -> float:
        return 1.0 if is_nsys_rep(path) else 0.0

    def ingest(self, con: duckdb.DuckDBPyConnection, path: Path, report_id: int) -> ReportInfo:
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
        info.path, info.layout = str(path), REP.name
        return info


class NsysEvents:
    """The Nsight Systems GUI's Events View saved as CSV."""

    name = "Nsight Systems Events View CSV"
    layouts = (EVENTS,)
    launch_values = staticmethod(_nsys_values)

    def claim(self, path: Path) -> float:
        from roofscope.ingest.nsys.events import is_nsys_events

        return 0.8 if is_nsys_events(path) else 0.0

    def ingest(self, con: duckdb.DuckDBPyConnection, path: Path, report_id: int) -> ReportInfo:
        from roofscope.ingest.nsys.events import ingest_nsys_events

        return ingest_nsys_events(con, path, report_id)


class NsysStats:
    """``nsys stats`` tables (CSV, TSV, JSON, console captures)."""

    name = "nsys stats table"
    layouts = (STATS,)
    launch_values = staticmethod(_nsys_values)

    def claim(self, path: Path) -> float:
        from roofscope.ingest.nsys.stats import is_nsys_stats

        return 0.7 if is_nsys_stats(path) else 0.0

    def ingest(self, con: duckdb.DuckDBPyConnection, path: Path, report_id: int) -> ReportInfo:
        from roofscope.ingest.nsys.stats import ingest_nsys_stats

        return ingest_nsys_stats(con, path, report_id)


NSYS_SQLITE, NSYS_PARQUETDIR, NSYS_REP = NsysSqlite(), NsysParquetDir(), NsysRep()
NSYS_EVENTS, NSYS_STATS = NsysEvents(), NsysStats()
