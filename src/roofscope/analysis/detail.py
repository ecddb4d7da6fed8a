"""Every metric of one launch (or of a group) for the drill-down, raw and derived.

Raw values come from the store (``raw_r{N}`` / ``det_r{N}``) or, for raw pages too large to
copy, from the export itself. A group shows extensive quantities (bytes, instructions, cycles,
seconds) summed and intensive ones (percentages, rates, clocks) time-weighted, and says which.
"""

from __future__ import annotations

import csv
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import duckdb

from roofscope.ingest.nsys_export import kernel_row
from roofscope.ingest.numbers import SHAPES
from roofscope.ingest.sniff import open_text, sniff
from roofscope.ingest.units import UnknownUnitError, parse_unit
from roofscope.quantities import (
    CHART,
    EFFICIENCY,
    LEVELS_OUTERMOST_FIRST,
    PRECISIONS,
    QUANTITIES,
    SUM,
    TIME_S,
    TRAFFIC,
    UTIL_EFF,
    Quantity,
)
from roofscope.sqlutil import quote_ident, quote_str
from roofscope.store import changed_since_loaded, stored_identity

# what Detail lists of a launch or a group, each aggregated over a group as its record says
DERIVED: tuple[Quantity, ...] = tuple(
    QUANTITIES[key]
    for key in (
        TIME_S,
        *PRECISIONS,
        *LEVELS_OUTERMOST_FIRST,
        *TRAFFIC,
        *CHART,
        *UTIL_EFF,
        EFFICIENCY,
    )
)


@dataclass(frozen=True)
class MetricRow:
    kind: str  # "derived" or "raw"
    name: str
    value: float | str | None
    unit: str
    source: str  # formula, provenance or how a group value was aggregated


def parse_number(text: str | None, decimal: str = ".") -> float | None:
    """Python twin of ingest.numbers.number_sql, for single values: only the shapes ncu writes
    (``SHAPES``) are numbers, so Detail never shows ``20,992000`` as 20,992,000; any other text
    is None and shown as the text it is."""
    if text is None:
        return None
    head = text.strip().split(" (", 1)[0]
    if not re.fullmatch(SHAPES[decimal], head):
        return None
    head = head.replace(".", "").replace(",", ".") if decimal == "," else head.replace(",", "")
    try:
        value = float(head)
    except ValueError:
        return None
    return None if value != value or value in (float("inf"), float("-inf")) else value


def _intensive(unit: str) -> bool:
    """Averaged over a group, not summed: rates, shares, and unitless values (device
    attributes, sizes), whose sum over launches means nothing (60 launches of CC 9 ≠ 540)."""
    return not unit or "/" in unit or unit in ("%", "Hz")


def derived_rows(
    con: duckdb.DuckDBPyConnection, report_id: int, where: str, provenance: dict[str, str]
) -> list[MetricRow]:
    """Derived quantities of the launches matching ``where`` (sums; utilisations time-weighted)."""
    exprs = []
    for q in DERIVED:
        name = q.key
        if q.aggregation == SUM:
            exprs.append(f"sum({name} * invocations)")
        else:
            exprs.append(
                f"sum({name} * time_s * invocations) / nullif(sum(time_s * invocations) "
                f"FILTER (WHERE {name} IS NOT NULL), 0)"
            )
    row = con.execute(
        f"SELECT {', '.join(exprs)} FROM launch_view WHERE report_id = {report_id} AND ({where})"
    ).fetchall()[0]
    out = []
    for q, value in zip(DERIVED, row, strict=True):
        name, unit = q.key, q.unit
        key = name.removesuffix("_eff")
        why = provenance.get(key) or provenance.get(name) or ""
        if name.endswith("_eff"):
            why = f"{why}; else achieved ÷ ceiling" if why else "achieved ÷ ceiling"
        if name == EFFICIENCY:
            why = "max(tensor, FP32, DRAM utilisation)"
        out.append(MetricRow("derived", name, value, unit or "fraction", why))
    return out


def raw_rows_for_launch(
    con: duckdb.DuckDBPyConnection, report_id: int, launch_id: int
) -> list[MetricRow]:
    """Every exported value of one launch, scaled to base SI where the unit is known."""
    layout, raw_values, decimal, path = con.execute(
        f"SELECT layout, raw_values, decimal, path FROM reports WHERE report_id = {report_id}"
    ).fetchall()[0]
    units = {
        m: (u, s)
        for m, u, s in con.execute(
            f"SELECT metric, unit, scale FROM catalogue WHERE report_id = {report_id}"
        ).fetchall()
    }
    if layout.startswith("nsys"):
        return _nsys_rows(con, report_id, launch_id, layout, path)
    if layout == "ncu-raw":
        if raw_values == "table":
            result = con.execute(f"SELECT * FROM raw_r{report_id} WHERE launch_id = {launch_id}")
            names = [d[0] for d in result.description]
            found = result.fetchall()
            values = dict(zip(names, found[0], strict=True)) if found else {}
        elif problem := _export_problem(con, path):
            return [MetricRow("raw", "(other exported columns)", None, "", problem)]
        else:
            values = _row_from_export(path, launch_id)
        values.pop("launch_id", None)
        return [
            _raw_row(m, v, units.get(m, ("", None)), decimal, "raw column")
            for m, v in values.items()
            if m in units
        ]
    rows = con.execute(
        f"SELECT metric, any_value(label), any_value(unit), any_value(value) "
        f"FROM det_r{report_id} WHERE launch_id = {launch_id} GROUP BY metric ORDER BY metric"
    ).fetchall()
    out = []
    for metric, label, unit, value in rows:
        try:
            scale = parse_unit(unit).scale
        except UnknownUnitError:
            scale = None
        source = f"details label {label!r}" if label else "details row"
        out.append(_raw_row(metric, value, (unit, scale), decimal, source))
    return out


def _nsys_rows(
    con: duckdb.DuckDBPyConnection, report_id: int, launch_id: int, layout: str, path: str
) -> list[MetricRow]:
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
        MetricRow("nsys", "start", start / 1e9 if start is not None else None, "s", "timeline"),
        MetricRow("nsys", "end", end / 1e9 if end is not None else None, "s", "timeline"),
        MetricRow("nsys", "device", device, "", "timeline"),
        MetricRow("nsys", "stream", stream, "", "timeline"),
        MetricRow("nsys", "grid", grid, "", "launch"),
        MetricRow("nsys", "block", block, "", "launch"),
        MetricRow("nsys", "NVTX innermost", inner, "", "range open on the launching thread"),
        MetricRow("nsys", "NVTX outermost", outer, "", "range open on the launching thread"),
    ]
    # only an nsys export is a table of rows to go back to (stats and Events View CSVs are not;
    # a .nsys-rep's SQLite was temporary)
    if source_row is not None and layout in ("nsys-sqlite", "nsys-parquetdir"):
        if problem := _export_problem(con, path):
            return [*out, MetricRow("raw", "(export row)", None, "", problem)]
        try:
            row = kernel_row(Path(path), int(source_row))
        except (sqlite3.Error, duckdb.Error, OSError):
            row = {}
        out += [MetricRow("raw", k, v, "", "export row") for k, v in row.items()]
    return out


def _export_problem(con: duckdb.DuckDBPyConnection, path: str) -> str | None:
    """Why the export cannot be read for values the store does not hold (None: it can).

    Reading a file that changed since it was loaded would show another report's values.
    """
    if not Path(path).exists():
        return f"not copied into the store and {path} is gone"
    resolved = str(Path(path).resolve())
    if changed_since_loaded([i for i in stored_identity(con) if i["path"] == resolved]):
        return f"{path} changed since it was opened: reopen it (Ctrl+R in roofscope open)"
    return None


def _raw_row(
    metric: str, text: str | None, unit_scale: tuple, decimal: str, source: str
) -> MetricRow:
    unit, scale = unit_scale
    number = parse_number(text, decimal)
    if number is not None and scale is not None:
        base = parse_unit(unit).base if unit else ""
        return MetricRow("raw", metric, number * scale, base, f"{source}: {text} {unit}".strip())
    return MetricRow("raw", metric, text, unit or "", source)


def _row_from_export(path: str, launch_id: int) -> dict[str, str]:
    """One row of a raw page read from the export (too large to have been copied)."""
    sn = sniff(path)
    with open_text(sn.path) as fh:
        for _ in range(sn.header_line):
            fh.readline()
        reader = csv.reader(line.replace("\x00", "") for line in fh)
        header = next(reader)
        for row in reader:
            if row and row[0].strip() == str(launch_id):
                return dict(zip(header, row, strict=False))
    return {}


def raw_rows_for_group(
    con: duckdb.DuckDBPyConnection, report_id: int, where: str
) -> list[MetricRow]:
    """Numeric metrics of the matching launches: extensive ones summed, intensive ones
    time-weighted (from the typed values; every metric roofscope computes with)."""
    cat = con.execute(
        f"SELECT metric, base_unit FROM catalogue WHERE report_id = {report_id} "
        f"AND wanted AND known_unit ORDER BY metric"
    ).fetchall()
    present = {d[0] for d in con.execute(f"SELECT * FROM values_r{report_id} LIMIT 0").description}
    cat = [(m, u or "") for m, u in cat if m in present]
    if not cat:
        return []
    exprs = []
    for metric, unit in cat:
        col = f"v.{quote_ident(metric)}"
        if _intensive(unit):
            exprs.append(
                f"sum({col} * f.time_s * f.invocations) / nullif(sum(f.time_s * "
                f"f.invocations) FILTER (WHERE {col} IS NOT NULL), 0)"
            )
        else:
            exprs.append(f"sum({col} * f.invocations)")
    row = con.execute(
        f"SELECT {', '.join(exprs)} FROM values_r{report_id} v JOIN launch_view f "
        f"ON f.launch_id = v.launch_id AND f.report_id = {report_id} WHERE {where}"
    ).fetchall()[0]
    return [
        MetricRow("raw", m, value, unit, "time-weighted mean" if _intensive(unit) else "sum")
        for (m, unit), value in zip(cat, row, strict=True)
    ]


def group_where(group: str) -> str:
    return f"grp = {quote_str(group)}"
