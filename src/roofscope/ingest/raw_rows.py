"""Every exported value of one launch, for the Detail view: the ncu and nsys readers'
``launch_values`` (:mod:`roofscope.ingest.contract`).

Where a report's values are (the store's copy, or the export read again) and how they are
written depends on its format, which only its reader knows. The parsers that read an export
again are imported when a launch needs them (the nsys reader imports pyarrow).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import duckdb

from roofscope.ingest.contract import ExportProblem, RawValue, StoredReport
from roofscope.ingest.numbers import parse_number
from roofscope.ingest.sniff import DETAILS, SUMMARY
from roofscope.ingest.units import UnknownUnitError, parse_unit
from roofscope.schema import DET_R, RAW_COLUMNS_R, RAW_R

# nsys layouts whose export is a table of rows to go back to (stats and Events View CSVs are
# not; a .nsys-rep's SQLite was temporary).
_NSYS_EXPORTS = ("nsys-sqlite", "nsys-parquetdir")


def ncu_values(
    con: duckdb.DuckDBPyConnection, report: StoredReport, launch_id: int, problem: ExportProblem
) -> list[RawValue]:
    """An ncu page's values of one launch (a raw page's columns, or a details page's rows)."""
    if report.layout in (DETAILS, SUMMARY):
        return _ncu_details(con, report.report_id, launch_id, report.decimal)
    return _ncu_raw(
        con, report.report_id, launch_id, report.raw_values, report.decimal, report.path, problem
    )


def nsys_values(
    con: duckdb.DuckDBPyConnection, report: StoredReport, launch_id: int, problem: ExportProblem
) -> list[RawValue]:
    """A timeline launch's values: where and when it ran, and the export's row."""
    return _nsys(con, report.report_id, launch_id, report.layout, report.path, problem)


def _ncu_raw(
    con: duckdb.DuckDBPyConnection,
    report_id: int,
    launch_id: int,
    raw_values: str,
    decimal: str,
    path: str,
    problem: ExportProblem,
) -> list[RawValue]:
    """A raw page: its columns from ``raw_r{N}``, or from the export when it was too large."""
    units = {
        m: (u, s)
        for m, u, s in con.execute(
            f"SELECT metric, unit, scale FROM catalogue WHERE report_id = {report_id}"
        ).fetchall()
    }
    if raw_values == "table":
        found = con.execute(
            f"SELECT n.names, r.texts FROM {RAW_R.name(report_id)} r, "
            f"{RAW_COLUMNS_R.name(report_id)} n WHERE r.launch_id = {launch_id}"
        ).fetchall()
        values = dict(zip(found[0][0], found[0][1], strict=True)) if found else {}
    elif why := problem(path):
        return [RawValue("raw", "(other exported columns)", None, "", why)]
    else:
        from roofscope.ingest.ncu.pages import raw_page_row

        values = raw_page_row(path, launch_id)
    values.pop("launch_id", None)
    return [
        _value(m, v, units.get(m, ("", None)), decimal, "raw column")
        for m, v in values.items()
        if m in units
    ]


def _ncu_details(
    con: duckdb.DuckDBPyConnection, report_id: int, launch_id: int, decimal: str
) -> list[RawValue]:
    """A details or summary page: its rows of the launch from ``det_r{N}``."""
    rows = con.execute(
        f"SELECT metric, any_value(label), any_value(unit), any_value(value) "
        f"FROM {DET_R.name(report_id)} WHERE launch_id = {launch_id} GROUP BY metric "
        f"ORDER BY metric"
    ).fetchall()
    out = []
    for metric, label, unit, value in rows:
        try:
            scale = parse_unit(unit).scale
        except UnknownUnitError:
            scale = None
        source = f"details label {label!r}" if label else "details row"
        out.append(_value(metric, value, (unit, scale), decimal, source))
    return out


def _nsys(
    con: duckdb.DuckDBPyConnection,
    report_id: int,
    launch_id: int,
    layout: str,
    path: str,
    problem: ExportProblem,
) -> list[RawValue]:
    """A timeline launch: where and when it ran, its NVTX ranges, and the export's row."""
    found = con.execute(
        f"SELECT s.start_ns, s.end_ns, s.device, s.stream, s.source_row, l.grid_size, "
        f"l.block_size, n.innermost, n.outermost FROM launches l LEFT JOIN spans s "
        f"ON s.report_id = l.report_id AND s.launch_id = l.launch_id LEFT JOIN launch_nvtx n "
        f"ON n.report_id = l.report_id AND n.launch_id = l.launch_id "
        f"WHERE l.report_id = {report_id} AND l.launch_id = {launch_id}"
    ).fetchall()
    if not found:
        return []
    start, end, device, stream, source_row, grid, block, inner, outer = found[0]
    out = [
        RawValue("nsys", "start", start / 1e9 if start is not None else None, "s", "timeline"),
        RawValue("nsys", "end", end / 1e9 if end is not None else None, "s", "timeline"),
        RawValue("nsys", "device", device, "", "timeline"),
        RawValue("nsys", "stream", stream, "", "timeline"),
        RawValue("nsys", "grid", grid, "", "launch"),
        RawValue("nsys", "block", block, "", "launch"),
        RawValue("nsys", "NVTX innermost", inner, "", "range open on the launching thread"),
        RawValue("nsys", "NVTX outermost", outer, "", "range open on the launching thread"),
    ]
    if source_row is not None and layout in _NSYS_EXPORTS:
        if why := problem(path):
            return [*out, RawValue("raw", "(export row)", None, "", why)]
        from roofscope.ingest.nsys.export import kernel_row

        try:
            row = kernel_row(Path(path), int(source_row))
        except (sqlite3.Error, duckdb.Error, OSError):
            row = {}
        out += [RawValue("raw", k, v, "", "export row") for k, v in row.items()]
    return out


def _value(metric: str, text: str | None, unit_scale: tuple, decimal: str, source: str) -> RawValue:
    """A value as exported: in base SI when it is a number ncu writes and its unit is known,
    else the text as it is."""
    unit, scale = unit_scale
    number = parse_number(text, decimal)
    if number is not None and scale is not None:
        base = parse_unit(unit).base if unit else ""
        return RawValue("raw", metric, number * scale, base, f"{source}: {text} {unit}".strip())
    return RawValue("raw", metric, text, unit or "", source)
