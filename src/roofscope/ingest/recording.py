"""GPU recordings (``roofscope record``) into the store's ``gpu_samples`` table, so a recording
opens beside the profile of the same job and its numbers are queried like any report's."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa

from roofscope.ingest.report_info import ReportInfo
from roofscope.monitor.recording import SCHEMA as RECORDING
from roofscope.monitor.recording import read_recording
from roofscope.sqlutil import quote_ident, scanned


def _sql_type(name: str, arrow: pa.DataType) -> str:
    if name == "ts":
        return "DOUBLE"  # seconds since the epoch, like every time in the store
    if name == "processes":
        return "STRUCT(pid BIGINT, name VARCHAR, mem_bytes BIGINT)[]"
    if pa.types.is_floating(arrow):
        return "DOUBLE"
    if pa.types.is_integer(arrow):
        return "INTEGER"
    if pa.types.is_boolean(arrow):
        return "BOOLEAN"
    return "VARCHAR"


COLUMNS = [(f.name, _sql_type(f.name, f.type)) for f in RECORDING]
SCHEMA = (
    "CREATE TABLE gpu_samples (report_id INTEGER, "
    + ", ".join(f"{quote_ident(n)} {t}" for n, t in COLUMNS)
    + ");\n"
)


def ingest_recording(con: duckdb.DuckDBPyConnection, path: Path, report_id: int) -> ReportInfo:
    table = read_recording(path)
    info = ReportInfo(report_id, str(path), "gpu-recording")
    select = ", ".join("epoch_us(ts) / 1e6" if n == "ts" else quote_ident(n) for n, _ in COLUMNS)
    # No kernels: an empty metric table keeps every kernel query valid (and empty).
    con.execute(f"CREATE TABLE values_r{report_id} (launch_id BIGINT)")
    with scanned(con, rec_rows=table):
        con.execute(f"INSERT INTO gpu_samples SELECT {report_id}, {select} FROM rec_rows")
    names = con.execute(
        "SELECT DISTINCT name FROM gpu_samples WHERE report_id = ? ORDER BY 1", [report_id]
    ).fetchall()
    info.gpu_name = ", ".join(n for (n,) in names if n) or None
    if table.num_rows == 0:
        info.warnings.append("the recording holds no samples yet")
    return info
