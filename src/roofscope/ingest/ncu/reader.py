"""The Nsight Compute readers: CSV pages (raw, details, summary) and binary ``.ncu-rep``
reports. Light to import: the parsers load when a file of theirs is read."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from roofscope.ingest.contract import NCU, ExportProblem, Layout, RawValue, StoredReport
from roofscope.ingest.ncu.binary import is_ncu_rep

if TYPE_CHECKING:
    import duckdb

    from roofscope.ingest.report_info import ReportInfo

RAW = Layout(
    "ncu-raw", NCU, counters=True, timeline=False, kernels=True, rules=True, container="text",
    unnamed_gpu="its device__attribute_display_name column is missing",
)  # fmt: skip
DETAILS = Layout(
    "ncu-details", NCU, counters=True, timeline=False, kernels=True, rules=True,
    container="text", unnamed_gpu="details pages rarely do",
)  # fmt: skip
SUMMARY = Layout(
    "ncu-summary", NCU, counters=True, timeline=False, kernels=True, rules=False,
    container="text", unnamed_gpu="summary pages never do",
)  # fmt: skip


def _ncu_values(
    con: duckdb.DuckDBPyConnection, report: StoredReport, launch_id: int, problem: ExportProblem
) -> list[RawValue]:
    from roofscope.ingest.raw_rows import ncu_values

    return ncu_values(con, report, launch_id, problem)


class NcuCsv:
    """ncu ``--csv`` pages: the fallback for any text no other reader claims."""

    name = "Nsight Compute CSV page"
    layouts = (RAW, DETAILS, SUMMARY)
    launch_values = staticmethod(_ncu_values)

    def claim(self, path: Path) -> float:
        return 0.0 if path.is_dir() else 0.1

    def ingest(self, con: duckdb.DuckDBPyConnection, path: Path, report_id: int) -> ReportInfo:
        from roofscope.ingest.ncu.pages import ingest_ncu_csv
        from roofscope.ingest.recording import refuse_parquet

        refuse_parquet(path)  # a Parquet file that is no recording: say so, not "no header"
        return ingest_ncu_csv(con, path, report_id)


class NcuRep:
    """Binary ``.ncu-rep`` reports (gzipped too), through NVIDIA's reader or ``ncu``."""

    name = "Nsight Compute report"
    layouts = (RAW,)  # the raw page of the report, read as ncu's CSV export gives it
    launch_values = staticmethod(_ncu_values)

    def claim(self, path: Path) -> float:
        return 1.0 if is_ncu_rep(path) else 0.0

    def ingest(self, con: duckdb.DuckDBPyConnection, path: Path, report_id: int) -> ReportInfo:
        from roofscope.ingest.ncu.binary import ingest_ncu_rep

        return ingest_ncu_rep(con, path, report_id)


NCU_CSV, NCU_REP = NcuCsv(), NcuRep()
