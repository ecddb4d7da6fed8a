"""Nsight Compute CSV (raw, details and per-kernel summary pages) into the canonical tables.

DuckDB parses the file in one scan (all columns as text, so ``n/a`` or a stray noise line never
aborts a load); Python only finds the header and the units. Rows whose ``ID`` is not an integer
are noise (``==PROF==`` lines, application output) and are counted, not loaded. When DuckDB
cannot parse the file as it is (a truncated last row, a noise line with an unbalanced quote), a
slower Python pass writes a cleaned copy first and says what it skipped.
"""

from __future__ import annotations

import csv
import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import duckdb

from roofscope.errors import RoofscopeError
from roofscope.ingest.numbers import number_sql
from roofscope.ingest.sniff import DETAILS, RAW, SUMMARY, Sniffed, open_text, sniff
from roofscope.ingest.units import UnknownUnitError, parse_unit
from roofscope.metric_names import CC_MAJOR, CC_MINOR, DEVICE_NAME, SM_COUNT, is_wanted
from roofscope.sqlutil import insert_rows, one, quote_ident, quote_str, scalar

ID_COLUMNS = (
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Kernel Time",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
)
DETAIL_COLUMNS = ("Section Name", "Body Item Label", "Metric Name", "Metric Unit", "Metric Value")
RULE_COLUMNS = (
    "Rule Name",
    "Rule Type",
    "Rule Description",
    "Estimated Speedup Type",
    "Estimated Speedup",
)
SUMMARY_COLUMNS = ("Invocations", "Minimum", "Maximum", "Average")
LAUNCH_FIELDS = {
    "process_id": "Process ID",
    "process_name": "Process Name",
    "host": "Host Name",
    "kernel": "Kernel Name",
    "kernel_time": "Kernel Time",
    "context": "Context",
    "stream": "Stream",
    "block_size": "Block Size",
    "grid_size": "Grid Size",
    "device": "Device",
    "cc": "CC",
}
_INT = r"^\s*[0-9]+\s*$"
RAW_TABLE_LIMIT = 64 << 20  # bytes of export up to which every raw value is copied to the store
CATALOGUE_COLUMNS = (
    "report_id",
    "metric",
    "label",
    "section",
    "unit",
    "base_unit",
    "scale",
    "source",
    "wanted",
    "known_unit",
)


@dataclass
class ReportInfo:
    """What one ingested export contributed, for the ``reports`` table and warnings."""

    report_id: int
    path: str
    layout: str
    launches: int = 0
    gpu_name: str | None = None
    cc: str | None = None
    sm_count: int | None = None
    decimal: str = "."
    raw_values: str = "table"  # "source": too large to copy; read from the export on demand
    warnings: list[str] = field(default_factory=list)


def _labels() -> dict[str, dict[str, str]]:
    text = resources.files("roofscope.data").joinpath("ncu_labels.json").read_text("utf-8")
    return json.loads(text)


def _unique(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for name in names:
        key = name or "column"
        if key in seen:
            seen[key] += 1
            key = f"{key}#{seen[key]}"
        else:
            seen[key] = 0
        out.append(key)
    return out


def _nvtx_columns(header: list[str]) -> list[str]:
    """Columns ``--nvtx`` inserts between ``Host Name`` and ``Kernel Name``."""
    try:
        start, end = header.index("Host Name"), header.index("Kernel Name")
    except ValueError:
        return []
    return header[start + 1 : end]


def _tail_is_clean(path: Path, compressed: bool) -> bool:
    """False when the file ends mid-line (a truncated export)."""
    if compressed:
        return False  # cannot seek a gzip stream cheaply; the checked slow path handles it
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        if fh.tell() == 0:
            return False
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"


def _read_csv_sql(path: Path, sn: Sniffed, skip: int, parallel: bool, compressed: bool) -> str:
    columns = ", ".join(f"{quote_str(c)}: 'VARCHAR'" for c in _unique(sn.header))
    options = [
        f"skip={skip}",
        "header=false",
        "auto_detect=false",
        f"columns={{{columns}}}",
        "null_padding=true",
        "strict_mode=false",
        "quote='\"'",
        "escape='\"'",
        "delim=','",
        f"parallel={'true' if parallel else 'false'}",
        "max_line_size=67108864",
    ]
    if compressed:
        options.append("compression='gzip'")
    return f"read_csv({quote_str(str(path))}, {', '.join(options)})"


def _clean_copy(sn: Sniffed, warnings: list[str]) -> Path:
    """Slow path: a temporary CSV holding only the header and well-formed data rows."""
    width = len(sn.header)
    min_width = width
    if sn.layout == DETAILS:
        min_width = sn.header.index("Metric Value") + 1
    id_index = 0
    skipped = 0
    truncated = False
    fd, tmp = tempfile.mkstemp(prefix="roofscope-clean-", suffix=".csv")
    with os.fdopen(fd, "w", newline="", encoding="utf-8") as out, open_text(sn.path) as src:
        writer = csv.writer(out, quoting=csv.QUOTE_ALL)
        writer.writerow(sn.header)
        for _ in range(sn.header_line + 1):
            src.readline()
        cleaned = (line.replace("\x00", "") for line in src)
        reader = csv.reader(cleaned, strict=False)
        try:
            rows = list(reader)
        except (EOFError, OSError):
            rows, truncated = [], True
        if rows and not _ends_with_newline(sn.path):
            rows.pop()
            truncated = True
        for row in rows:
            if sn.layout == RAW and row and row[0] == "" and all(not v for v in row[:3]):
                writer.writerow(row)  # the units row
                continue
            ok = min_width <= len(row) <= width and re.match(
                _INT, row[id_index] if sn.layout != SUMMARY else row[0] or "x"
            )
            if ok:
                writer.writerow(row + [""] * (width - len(row)))
            elif any(v.strip() for v in row):
                skipped += 1
    if truncated:
        warnings.append("the file ends in the middle of a row (truncated export); last row skipped")
    if skipped:
        warnings.append(f"skipped {skipped} line(s) that are not rows of the ncu table")
    return Path(tmp)


def _ends_with_newline(path: Path) -> bool:
    try:
        with open_text(path) as fh:
            last = ""
            for chunk in iter(lambda: fh.read(1 << 20), ""):
                last = chunk
            return last.endswith("\n")
    except (EOFError, OSError):
        return False


def _projection(sn: Sniffed) -> list[str] | None:
    """Columns worth parsing: a raw page has 300-2,200 metric columns, a few dozen feed numbers.

    DuckDB skips converting unprojected columns; on a 1,279-column export this cut the scan
    from 4.6 s to 0.8 s per 10,000 launches (docs/performance.md).
    """
    if sn.layout != RAW:
        return None
    header = _unique(sn.header)
    nvtx = set(_nvtx_columns(header))
    return [c for c in header if c in ID_COLUMNS or c in nvtx or c == DEVICE_NAME or is_wanted(c)]


def ingest_ncu_csv(con: duckdb.DuckDBPyConnection, path: str | Path, report_id: int) -> ReportInfo:
    """Load one ncu CSV export as report ``report_id`` into the open store connection."""
    path = Path(path)
    sn = sniff(path)
    info = ReportInfo(report_id, str(path), sn.layout, decimal=sn.decimal)
    src = f"src_r{report_id}"
    columns = _projection(sn)
    tmp: Path | None = None
    try:
        read_sql = None
        if _tail_is_clean(path, sn.compressed):
            read_sql = _read_csv_sql(path, sn, sn.header_line + 1, True, sn.compressed)
            try:
                _materialise(con, src, read_sql, columns)
            except duckdb.Error:
                read_sql = None
        if read_sql is None:
            tmp = _clean_copy(sn, info.warnings)
            read_sql = _read_csv_sql(tmp, sn, 1, False, False)
            try:
                _materialise(con, src, read_sql, columns)
            except duckdb.Error as exc:
                raise RoofscopeError(
                    f"could not be parsed as an ncu CSV ({str(exc).splitlines()[0]})",
                    path=str(path),
                    hint="export it again with ncu --csv",
                ) from exc
        full = read_sql if sn.layout == RAW and _size(path) <= RAW_TABLE_LIMIT else None
        _load_layout(con, src, sn, info, full)
    finally:
        con.execute(f"DROP TABLE IF EXISTS {src}")
        if tmp is not None:
            tmp.unlink(missing_ok=True)
    if info.launches == 0:
        raise RoofscopeError(
            "has an ncu header but no kernel rows",
            path=str(path),
            hint="the profiled application launched no kernels, or the export was cut",
        )
    return info


def _size(path: Path) -> int:
    return path.stat().st_size


def _materialise(
    con: duckdb.DuckDBPyConnection, name: str, read_sql: str, columns: list[str] | None
) -> None:
    select = "*" if columns is None else ", ".join(quote_ident(c) for c in columns)
    con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS SELECT {select} FROM {read_sql}")


def _load_layout(
    con: duckdb.DuckDBPyConnection, src: str, sn: Sniffed, info: ReportInfo, full: str | None
) -> None:
    header = _unique(sn.header)
    total = int(scalar(con, f"SELECT count(*) FROM {src}"))  # type: ignore[arg-type]
    key_column = "Invocations" if sn.layout == SUMMARY else "ID"
    keep = f"coalesce(regexp_matches({quote_ident(key_column)}, '{_INT}'), false)"
    con.execute(f"DELETE FROM {src} WHERE NOT {keep}")
    data = int(scalar(con, f"SELECT count(*) FROM {src}"))  # type: ignore[arg-type]
    if sn.layout == RAW:
        _load_raw(con, src, sn, header, info, full)
    else:
        {DETAILS: _load_details, SUMMARY: _load_summary}[sn.layout](con, src, sn, header, info)
    noise = total - data - (1 if sn.layout == RAW and sn.units is not None else 0)
    if noise > 0:
        info.warnings.append(f"skipped {noise} line(s) inside the table that are not ncu rows")


def _launch_select(header: list[str], id_expr: str, invocations: str) -> str:
    parts = [f"{id_expr} AS launch_id"]
    for canon, name in LAUNCH_FIELDS.items():
        parts.append(
            f"any_value({quote_ident(name)}) AS {canon}"
            if name in header
            else f"NULL::VARCHAR AS {canon}"
        )
    nvtx = _nvtx_columns(header)
    if nvtx:
        joined = " || ' | ' || ".join(
            f"coalesce(trim(replace({quote_ident(c)}, '\"', '')), '')" for c in nvtx
        )
        parts.append(f"any_value({joined}) AS nvtx")
    else:
        parts.append("NULL::VARCHAR AS nvtx")
    parts.append(f"{invocations} AS invocations")
    return ", ".join(parts)


def _insert_launches(
    con: duckdb.DuckDBPyConnection,
    src: str,
    header: list[str],
    rid: int,
    id_expr: str,
    invocations: str = "1",
    group_by: str | None = None,
) -> int:
    group_by = group_by or id_expr
    con.execute(
        f"INSERT INTO launches SELECT {rid} AS report_id, "
        f"{_launch_select(header, id_expr, invocations)} FROM {src} GROUP BY {group_by}"
    )
    return int(scalar(con, f"SELECT count(*) FROM launches WHERE report_id = {rid}"))  # type: ignore[arg-type]


def _catalogue_row(
    rid: int,
    metric: str,
    label: str | None,
    section: str | None,
    unit: str,
    source: str,
    info: ReportInfo,
) -> tuple:
    try:
        u = parse_unit(unit)
        base, scale, known = u.base, u.scale, True
    except UnknownUnitError:
        base, scale, known = None, None, False
    return (rid, metric, label, section, unit, base, scale, source, is_wanted(metric), known)


def _check_units(catalogue: list[tuple], info: ReportInfo) -> None:
    bad_wanted = [(row[1], row[4]) for row in catalogue if not row[9] and row[8]]
    if bad_wanted:
        metric, unit = bad_wanted[0]
        raise RoofscopeError(
            f"metric {metric} has the unknown unit {unit!r}; its values cannot be converted",
            path=info.path,
            hint="export with --print-units base, or report the unit spelling as a bug",
        )
    others = sorted({row[4] for row in catalogue if not row[9]})
    if others:
        info.warnings.append(
            f"{sum(1 for r in catalogue if not r[9])} metric(s) with unknown units kept as text "
            f"only: {', '.join(repr(u) for u in others[:5])}"
        )


def _load_raw(
    con: duckdb.DuckDBPyConnection,
    src: str,
    sn: Sniffed,
    header: list[str],
    info: ReportInfo,
    full: str | None,
) -> None:
    rid = info.report_id
    id_expr = f"CAST(trim({quote_ident('ID')}) AS BIGINT)"
    info.launches = _insert_launches(con, src, header, rid, id_expr)
    nvtx = set(_nvtx_columns(header))
    metrics = [c for c in header if c not in ID_COLUMNS and c not in nvtx]
    units = sn.units or [""] * len(header)
    unit_of = dict(zip(header, units, strict=False))
    if sn.units is None:
        info.warnings.append("no units row under the header; values taken as base units")
    catalogue = [
        _catalogue_row(rid, m, None, None, unit_of.get(m, ""), "raw column", info) for m in metrics
    ]
    _check_units(catalogue, info)
    insert_rows(con, "catalogue", CATALOGUE_COLUMNS, catalogue)
    if full is not None:
        ids = ", ".join(quote_ident(c) for c in header if c in ID_COLUMNS or c in nvtx)
        con.execute(
            f"CREATE TABLE raw_r{rid} AS SELECT {id_expr} AS launch_id, * EXCLUDE ({ids}) "
            f"FROM {full} WHERE regexp_matches({quote_ident('ID')}, '{_INT}')"
        )
    else:
        info.raw_values = "source"
    typed = [
        f"{number_sql(quote_ident(row[1]), sn.decimal)} * {row[6]!r} AS {quote_ident(row[1])}"
        for row in catalogue
        if row[8] and row[9]
    ]
    select = ", ".join(["launch_id", *typed])
    # A plain projection gains nothing from the optimizer, which spends ~10 ms per column
    # rewriting the number-parsing CASE (measured: 0.96 s vs 0.09 s for 70 columns).
    con.execute("PRAGMA disable_optimizer")
    try:
        con.execute(
            f"CREATE TABLE values_r{rid} AS SELECT {select} FROM "
            f"(SELECT {id_expr} AS launch_id, * FROM {src})"
        )
    finally:
        con.execute("PRAGMA enable_optimizer")
    _device_facts(con, info, text_source=src, header=set(metrics))


def _details_frame(
    con: duckdb.DuckDBPyConnection,
    src: str,
    header: list[str],
    rid: int,
    id_expr: str,
    value_col: str,
    extra: str = "",
) -> None:
    """Long table ``det_r{rid}``: one row per (launch, metric) with label mapped to metric."""
    labels = _labels()
    label_rows = [(s, lab, m) for s, d in labels.items() for lab, m in d.items()]
    con.execute(
        "CREATE OR REPLACE TEMP TABLE rs_labels (section VARCHAR, label VARCHAR, metric VARCHAR)"
    )
    insert_rows(con, "rs_labels", ("section", "label", "metric"), label_rows)
    section = quote_ident("Section Name") if "Section Name" in header else "NULL"
    con.execute(
        f"CREATE TABLE det_r{rid} AS SELECT {id_expr} AS launch_id, "
        f"s.{section} AS section, coalesce(l.metric, s.{quote_ident('Metric Name')}) AS metric, "
        f"CASE WHEN l.metric IS NULL THEN NULL ELSE s.{quote_ident('Metric Name')} END AS label, "
        f"coalesce(s.{quote_ident('Metric Unit')}, '') AS unit, s.{quote_ident(value_col)} AS value"
        f"{extra} "
        f"FROM {src} s LEFT JOIN rs_labels l ON l.section = s.{section} "
        f"AND l.label = s.{quote_ident('Metric Name')} "
        f"WHERE coalesce(s.{quote_ident('Metric Name')}, '') <> ''"
    )


def _details_values(con: duckdb.DuckDBPyConnection, info: ReportInfo, source: str) -> None:
    """Catalogue and the typed wide table from the long ``det_r{rid}``."""
    rid = info.report_id
    rows = con.execute(
        f"SELECT metric, any_value(label), any_value(section), mode(unit), "
        f"list(DISTINCT unit) FROM det_r{rid} GROUP BY metric ORDER BY min(rowid)"
    ).fetchall()
    catalogue = []
    all_units: set[str] = set()
    for metric, label, section, unit, units in rows:
        row = _catalogue_row(rid, metric, label, section, unit, source, info)
        for u in units:
            all_units.add(u)
            try:
                parse_unit(u)
            except UnknownUnitError:
                row = (*row[:9], False)
        catalogue.append(row)
    _check_units(catalogue, info)
    insert_rows(con, "catalogue", CATALOGUE_COLUMNS, catalogue)
    con.execute("CREATE OR REPLACE TEMP TABLE rs_units (unit VARCHAR, scale DOUBLE)")
    scales = []
    for u in all_units:
        try:
            scales.append((u, parse_unit(u).scale))
        except UnknownUnitError:
            continue
    insert_rows(con, "rs_units", ("unit", "scale"), scales)
    wanted = [row[1] for row in catalogue if row[8] and row[9]]
    value = f"{number_sql('d.value', info.decimal)} * u.scale"
    cols = [
        f"first({value} ORDER BY d.label NULLS FIRST) FILTER (WHERE d.metric = {quote_str(m)}) "
        f"AS {quote_ident(m)}"
        for m in wanted
    ]
    con.execute(
        f"CREATE TABLE values_r{rid} AS SELECT l.launch_id{''.join(', ' + c for c in cols)} "
        f"FROM launches l LEFT JOIN det_r{rid} d ON d.launch_id = l.launch_id "
        f"LEFT JOIN rs_units u ON u.unit = d.unit WHERE l.report_id = {rid} GROUP BY l.launch_id"
    )
    _device_facts(con, info, text_source=None, header={r[1] for r in catalogue})


def _load_details(
    con: duckdb.DuckDBPyConnection, src: str, sn: Sniffed, header: list[str], info: ReportInfo
) -> None:
    rid = info.report_id
    id_expr = f"CAST(trim({quote_ident('ID')}) AS BIGINT)"
    info.launches = _insert_launches(con, src, header, rid, id_expr)
    _details_frame(con, src, header, rid, id_expr, "Metric Value")
    _details_values(con, info, "details row")


def _load_summary(
    con: duckdb.DuckDBPyConnection, src: str, sn: Sniffed, header: list[str], info: ReportInfo
) -> None:
    """Per-kernel summary: one pseudo-launch per (kernel, config) weighted by Invocations."""
    rid = info.report_id
    key_cols = [
        c for c in ("Process ID", "Kernel Name", "Block Size", "Grid Size", "Device") if c in header
    ]
    key = " || '\x1f' || ".join(f"coalesce({quote_ident(c)}, '')" for c in key_cols)
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE {src}_k AS SELECT *, "
        f"dense_rank() OVER (ORDER BY {key}) - 1 AS rs_launch FROM {src}"
    )
    src_k = f"{src}_k"
    invocations = f"any_value(CAST(trim({quote_ident('Invocations')}) AS BIGINT))"
    con.execute(
        f"INSERT INTO launches SELECT {rid}, "
        f"{_launch_select(header, 'rs_launch', invocations)} FROM {src_k} GROUP BY rs_launch"
    )
    info.launches = int(
        scalar(con, f"SELECT sum(invocations) FROM launches WHERE report_id = {rid}") or 0  # type: ignore[arg-type]
    )
    _details_frame(con, src_k, header, rid, "rs_launch", "Average")
    info.warnings.append(
        "per-kernel summary page: each row stands for Invocations launches with the Average "
        "value; totals are Invocations × Average"
    )
    _details_values(con, info, "summary row (Average)")
    con.execute(f"DROP TABLE IF EXISTS {src_k}")


def _device_facts(
    con: duckdb.DuckDBPyConnection, info: ReportInfo, text_source: str | None, header: set[str]
) -> None:
    rid = info.report_id
    if text_source and DEVICE_NAME in header:
        row = one(
            con,
            f"SELECT {quote_ident(DEVICE_NAME)} FROM {text_source} "
            f"WHERE coalesce({quote_ident(DEVICE_NAME)}, '') <> '' LIMIT 1",
        )
        info.gpu_name = row[0].strip() if row else None
    cc = one(
        con, f"SELECT cc FROM launches WHERE report_id = {rid} AND coalesce(cc, '') <> '' LIMIT 1"
    )
    if cc:
        info.cc = cc[0].strip()
    elif CC_MAJOR in header and CC_MINOR in header:
        row = one(
            con,
            f"SELECT any_value({quote_ident(CC_MAJOR)}), any_value({quote_ident(CC_MINOR)}) "
            f"FROM values_r{rid}",
        )
        if row and row[0] is not None and row[1] is not None:
            info.cc = f"{int(row[0])}.{int(row[1])}"
    for metric in SM_COUNT:
        if metric in header:
            row = one(con, f"SELECT max({quote_ident(metric)}) FROM values_r{rid}")
            if row and row[0]:
                info.sm_count = int(row[0])
                break
