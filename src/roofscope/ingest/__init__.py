"""Readers for profiler exports; each writes the canonical tables described in store.py."""

from __future__ import annotations

from pathlib import Path

import duckdb

from roofscope.ingest.ncu_csv import ReportInfo, ingest_ncu_csv
from roofscope.ingest.ncu_rep import converted_csv, is_ncu_rep


def ingest_file(con: duckdb.DuckDBPyConnection, path: Path, report_id: int) -> ReportInfo:
    """Load one export, converting a binary ``.ncu-rep`` through ``ncu`` first."""
    if is_ncu_rep(path):
        with converted_csv(path) as csv_path:
            info = ingest_ncu_csv(con, csv_path, report_id)
        info.path = str(path)
        return info
    return ingest_ncu_csv(con, path, report_id)


__all__ = ["ReportInfo", "ingest_file"]
