"""Nsight Compute CSV (raw, details and per-kernel summary pages) into the canonical tables.

pyarrow parses the table on every core (``ncu_arrow``; a raw page's wanted columns only), all
columns as text so ``n/a`` or a stray noise line never aborts a load, and DuckDB turns the
metrics into numbers; Python only finds the header and the units. Rows whose ``ID`` is not an
integer are noise (``==PROF==`` lines, application output) and are counted, not loaded. A file
pyarrow would not read exactly goes to DuckDB's ``","`` split of an all-quoted raw page, and
then to a slower Python pass that writes a cleaned copy first and says what it skipped
(truncated rows, unbalanced quotes). The copy is an unnamed temporary file (nothing is left in
``$TMPDIR``, even after ``kill -9``), and DuckDB and pyarrow read every file through an open
descriptor, never by the user's file name (see ``sniff.duckdb_name``).
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
import tempfile
import zlib
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import duckdb

if TYPE_CHECKING:
    import pyarrow as pa

from roofscope.errors import RoofscopeError
from roofscope.ingest.ncu.column_order import ID_COLUMNS, needs_reorder, reordered_copy
from roofscope.ingest.numbers import UNREADABLE, null_non_finite, number_sql
from roofscope.ingest.report_info import ReportInfo
from roofscope.ingest.sniff import (
    DETAILS,
    FIELD_LIMIT,
    RAW,
    SUMMARY,
    Sniffed,
    duckdb_name,
    open_input,
    open_text,
    sniff,
    split_line,
)
from roofscope.ingest.units import UnknownUnitError, ncu_base_unit, parse_unit
from roofscope.metric_names import CC_MAJOR, CC_MINOR, DEVICE_NAME, SM_COUNT, TIME, is_wanted
from roofscope.ncu_nvtx import push_pop_ranges
from roofscope.schema import (
    CATALOGUE,
    LAUNCH_NVTX,
    NCU_RULES,
    RAW_COLUMNS_R,
    RAW_R,
    VALUES_R,
    create_det,
    create_raw,
    create_values,
)
from roofscope.sqlutil import insert_rows, one, quote_ident, quote_str, scalar

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
# A launch ID or an Invocations count: digits (ncu may group them: "1,024"), at most 18 so the
# BIGINT cast cannot overflow.
_INT = r"^\s*([0-9]{1,18}|[0-9]{1,3}(,[0-9]{3}){1,5})\s*$"  # "2,0000" is no number
# A first field that swallowed its closing quote and the next fields (a stray byte between a
# quote and a comma defeats the ``","`` split): the row must be re-read by the CSV parser.
_INT_THEN_QUOTE = r'^\s*[0-9][0-9,]{0,17}"'
LONG_NAME = 8192  # characters; real demangled CUTLASS names reach ~3,500
RAW_TABLE_LIMIT = 64 << 20  # bytes of export up to which every raw value is copied to the store
# a raw page whose wanted columns hold more text than this is streamed (its text never held
# whole); below it pyarrow reads the page whole, tokenising blocks on every core (a wide
# 1.1 GB page of 100,000 launches: 1.2 s, against 2.0 s through the streaming reader, which
# tokenises one block at a time)
WHOLE_TEXT_LIMIT = 256 << 20
GZIP_RATIO = 9  # ncu's CSV pages shrink 8-12 times in gzip (the bundled samples)
READER_ENV = "ROOFSCOPE_NCU_READER"  # "duckdb": skip pyarrow (to compare, or to work around)
_ARROW_PAGE = "rs_arrow_page"  # the page as pyarrow read it, while a small page is loaded
TAIL_BYTES = 1 << 20  # how far back the fast path looks for the start of the last line
# A value as ncu writes it when it scaled the column to a unit (--print-units auto): six decimals.
_AUTO_SCALED = re.compile(r"^\s*-?[0-9][0-9,]*\.[0-9]{6}\s*$")


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


def _min_width(sn: Sniffed) -> int:
    """Fields a data row needs: all of them, but a details row may stop after its value (the
    rule columns are often left out)."""
    return sn.header.index("Metric Value") + 1 if sn.layout == DETAILS else len(sn.header)


def _record_closed(text: str) -> bool:
    """Whether a record the file ends in without a line break is whole: its last field is
    quoted and the quote closed (ncu quotes every field). A record cut inside a field has an
    odd number of quotes; a last field without quotes could have been cut anywhere."""
    body = text.rstrip()
    return body.endswith('"') and body.count('"') % 2 == 0


def _tail_is_clean(fd: int, sn: Sniffed) -> bool:
    """False when the file may end inside a row (a truncated export), which DuckDB would read
    as a short row padded with NULLs. A last line without a line break is fine when its
    record is closed and has the table's width (an export whose writer left the final
    newline out)."""
    if sn.compressed:
        return True  # DuckDB raises on a cut gzip stream, which sends it to the slow path
    size = os.fstat(fd).st_size
    if size == 0:
        return False
    tail = os.pread(fd, min(size, TAIL_BYTES), size - min(size, TAIL_BYTES))
    if tail.endswith(b"\n"):
        return True
    cut = tail.rfind(b"\n")
    if cut < 0 and len(tail) < size:
        return False  # a last line longer than the tail read: let the Python pass decide
    last = tail[cut + 1 :].replace(b"\x00", b"").decode("utf-8", errors="replace")
    row = split_line(last.lstrip("\ufeff"))
    return _record_closed(last) and _min_width(sn) <= len(row) <= len(sn.header)


def _read_csv_sql(
    name: str, sn: Sniffed, skip: int, parallel: bool, compressed: bool, split: bool = False
) -> str:
    """``read_csv`` of the table in the file DuckDB knows as ``name`` (``sniff.duckdb_name``:
    never a user's file name, which DuckDB would expand as a glob pattern). ``split`` reads
    ncu's all-quoted rows as fields separated by the three bytes ``","`` with quoting off: the
    tokenizer then does far less work (4.2 s vs 5.7 s for 100,000 rows of 1,279 columns); the
    first field keeps a leading and the last a trailing quote, which ``_select`` strips."""
    columns = ", ".join(f"{quote_str(c)}: 'VARCHAR'" for c in _unique(sn.header))
    dialect = (
        ["quote=''", "escape=''", "delim='\",\"'"]
        if split
        else ["quote='\"'", "escape='\"'", "delim=','"]
    )
    options = [
        f"skip={skip}",
        "header=false",
        "auto_detect=false",
        f"columns={{{columns}}}",
        "null_padding=true",
        "strict_mode=false",
        *dialect,
        f"parallel={'true' if parallel else 'false'}",
    ]
    if compressed:
        options.append("compression='gzip'")
    return f"read_csv({quote_str(name)}, {', '.join(options)})"


def _clean_copy(sn: Sniffed, warnings: list[str]) -> IO[str]:
    """Slow path: a temporary CSV holding only the header and well-formed data rows, as an
    open unnamed file (``O_TMPFILE`` where the system has it, else unlinked at once), so no
    copy of the user's data outlives the process however it ends.

    Streams the export through Python's ``csv`` (NUL bytes dropped); a row cut by the end of the
    file (or of a damaged gzip stream) is left out and reported. A last row without a line
    break is kept when its record is closed (``_record_closed``).
    """
    width = len(sn.header)
    min_width = _min_width(sn)
    skipped: list[int] = []  # line numbers (1-based) of the records left out
    truncated = False
    nul = replaced = 0
    out = tempfile.TemporaryFile(  # noqa: SIM115 (the caller closes it after DuckDB read it)
        "w+", newline="", encoding="utf-8", prefix="roofscope-clean-"
    )
    try:
        with open_text(sn.path) as src:
            writer = csv.writer(out, quoting=csv.QUOTE_ALL)
            writer.writerow(sn.header)
            for _ in range(sn.header_line + 1):
                src.readline()
            record: list[str] = []  # the physical lines of the record being parsed
            number = [sn.header_line + 1]

            def lines() -> Iterator[str]:
                nonlocal nul, replaced
                for line in src:
                    number[0] += 1
                    record.append(line)
                    if "\x00" in line:
                        nul += line.count("\x00")
                        line = line.replace("\x00", "")
                    replaced += line.count("\ufffd")
                    yield line

            pending: list[str] | None = None
            pending_text = ""
            pending_line = 0
            try:
                for row in csv.reader(lines(), strict=False):
                    if pending is not None and _write_if_row(writer, pending, sn, min_width, width):
                        skipped.append(pending_line)
                    pending, pending_text = row, "".join(record)
                    pending_line = number[0] - len(record) + 1
                    record.clear()
            except (OSError, zlib.error):  # Gunzip raises zlib.error on damaged data
                truncated = True
            except csv.Error as exc:  # a field over FIELD_LIMIT: a quote that never closed
                raise RoofscopeError(
                    f"has a field over {FIELD_LIMIT >> 20} MB near line {number[0]:,} ({exc}); "
                    f"a quote that never closes swallows the rest of the file",
                    path=str(sn.path),
                    hint="export it again, or remove the stray quote",
                ) from exc
            raw = getattr(getattr(src, "buffer", None), "raw", None)
            if getattr(raw, "truncated", False):
                truncated = True  # a gzip stream cut short (see sniff.Gunzip)
            if pending is not None:
                whole = pending_text.endswith("\n") or _record_closed(pending_text)
                # a last data row with too few fields was cut at a field boundary
                short = (
                    len(pending) < min_width
                    and pending_text.lstrip("\ufeff").startswith('"')
                    and re.match(_INT, pending[0]) is not None
                )
                if whole and not truncated and not short:
                    if _write_if_row(writer, pending, sn, min_width, width):
                        skipped.append(pending_line)
                elif pending and re.match(_INT, pending[0]):
                    truncated = True
                elif any(v.strip() for v in pending):
                    skipped.append(pending_line)
        out.flush()
    except BaseException:
        out.close()
        raise
    if truncated:
        where = f" (line {pending_line:,})" if pending_line else ""
        warnings.append(
            f"the file ends in the middle of a row (truncated export); last row{where} skipped"
        )
    if skipped:
        warnings.append(
            f"skipped {len(skipped)} line(s) that are not rows of the ncu table: "
            f"{_line_list(skipped)}"
        )
    if nul:
        warnings.append(
            f"dropped {nul} NUL byte(s) inside the table (application output mixed into the "
            f"export?); check the rows around them"
        )
    if replaced:
        warnings.append(
            f"{replaced} byte sequence(s) that are not UTF-8 (a Latin-1 file?) are shown as "
            f"'\ufffd' in names and read as missing in numbers"
        )
    return out


def _line_list(numbers: list[int], shown: int = 3) -> str:
    """``lines 12, 40 and 3 more``: the first few line numbers of a list."""
    if len(numbers) == 1:
        return f"line {numbers[0]:,}"
    head = [f"{n:,}" for n in numbers[:shown]]
    if len(numbers) > shown:
        return f"lines {', '.join(head)} and {len(numbers) - shown:,} more"
    return f"lines {', '.join(head[:-1])} and {head[-1]}"


def _write_if_row(writer: Any, row: list[str], sn: Sniffed, min_width: int, width: int) -> int:
    """Write a data row (or the raw page's units row); return 1 when it was noise instead."""
    if sn.layout == RAW and row[:3] == ["", "", ""]:
        writer.writerow(row)
        return 0
    # the first column is ID (Process ID on summary pages): an integer on every data row
    if min_width <= len(row) <= width and re.match(_INT, row[0]):
        writer.writerow(row + [""] * (width - len(row)))
        return 0
    return 1 if any(v.strip() for v in row) else 0


Projection = list[tuple[str, float | None]]  # (column, scale to base SI; None = keep text)


def _raw_catalogue(sn: Sniffed, info: ReportInfo) -> list[tuple]:
    """Every metric of a raw page with its unit (from the units row), checked up front."""
    header = _unique(sn.header)
    nvtx = set(_nvtx_columns(header))
    units = sn.units or _base_units(sn, header, info)
    unit_of = dict(zip(header, units, strict=False))
    catalogue = [
        _catalogue_row(info.report_id, m, None, None, unit_of.get(m, ""), "raw column", info)
        for m in header
        if m not in ID_COLUMNS and m not in nvtx
    ]
    _check_units(catalogue, info)
    return catalogue


def _base_units(sn: Sniffed, header: list[str], info: ReportInfo) -> list[str]:
    """Units of a raw page that lost its units row (hand-edited, ``skiprows``): ncu writes a
    value without its unit only in its base unit (ns, byte, cycle, hz), so each metric's unit
    is read from its name, and the user is told. A column whose values carry the six decimals
    ncu writes for a value it scaled (us, Mbyte, Ghz) cannot be read so: refused."""
    units = [ncu_base_unit(name.split("#")[0]) or "" for name in header]
    scaled = {"ns", "byte", "hz", "byte/s"}
    for row in sn.sample_rows:
        for name, unit, value in zip(header, units, row, strict=False):
            if unit in scaled and _AUTO_SCALED.match(value):
                raise RoofscopeError(
                    f"has no units row under its header, and {name} = {value!r} has the six "
                    f"decimals of a value ncu scaled to a unit it no longer names",
                    path=info.path,
                    hint="export it again with its units row (ncu --csv --page raw "
                    "--print-units base)",
                )
    info.warnings.append(
        "no units row under the header: values read in ncu's base units by metric name "
        "(durations in ns, bytes in byte, clocks in hz), as ncu writes a value without a unit"
    )
    return units


def _projection(sn: Sniffed, catalogue: list[tuple] | None) -> Projection | None:
    """Columns worth reading: a raw page has 300-2,200 metric columns, a few dozen feed numbers.

    DuckDB skips converting unprojected columns, and the wanted metrics are parsed to base SI
    DOUBLEs in the same scan (docs/performance.md has the measurements).
    """
    if sn.layout != RAW or catalogue is None:
        return None
    header = _unique(sn.header)
    nvtx = set(_nvtx_columns(header))
    known = {row[1]: row[6] for row in catalogue if row[9]}
    wanted = {row[1] for row in catalogue if row[8] and row[9]}
    # a wanted metric written twice: its copies are read too, to be compared (_duplicates)
    copies = {c for c in header if "#" in c and c.split("#")[0] in wanted}
    return [
        (c, known.get(c) if c in wanted or c in copies else None)
        for c in header
        if c in ID_COLUMNS or c in nvtx or c == DEVICE_NAME or c in wanted or c in copies
    ]


def _duplicates(con: duckdb.DuckDBPyConnection, src: str, info: ReportInfo) -> None:
    """A metric the header names twice is read from its first column when every copy holds
    the same value (after units); launches where a copy differs get no value, with a warning
    naming the column, the launch and the values."""
    numbers = {c for c, kind, *_ in con.execute(f"DESCRIBE {src}").fetchall() if kind == "DOUBLE"}
    for copy in sorted(c for c in numbers if "#" in c and c.split("#")[0] in numbers):
        metric = copy.split("#")[0]
        a, b = quote_ident(metric), quote_ident(copy)
        differ = (
            f"(({a} IS NULL) <> ({b} IS NULL) OR abs({a} - {b}) > "
            f"1e-9 * greatest(abs({a}), abs({b})))"
        )
        rows = con.execute(
            f"SELECT launch_id, {a}, {b}, count(*) OVER () FROM {src} WHERE {differ} "
            f"ORDER BY launch_id LIMIT 1"
        ).fetchall()
        if rows:
            launch, first, second, n = rows[0]
            con.execute(f"UPDATE {src} SET {a} = NULL WHERE {differ}")
            info.warnings.append(
                f"column {metric} appears more than once in the header and its copies differ "
                f"in {n} launch(es) (launch {launch}: {first!r} vs {second!r} in base units); "
                f"{metric} is left out for those launches"
            )
        con.execute(f"ALTER TABLE {src} DROP COLUMN {b}")


def _select(
    sn: Sniffed, columns: Projection | None, source: str, split: bool = False, parsed: bool = False
) -> str:
    """The query over ``source`` (a ``read_csv``, or the page as pyarrow read it): text
    columns as they are, metrics parsed and scaled (``parsed``: already numbers, as
    ``number_columns.parse_column`` made them in Arrow; only scaled).

    The metrics are parsed by one ``number_sql`` over a list of them: DuckDB plans a regular
    expression per use, so one expression per column cost ~1.7 ms a column to plan (130 ms for
    a raw page's ~80 metrics, longer than reading a short page) and the list form 20 ms; at
    100,000 launches both scan alike (docs/performance.md).

    In the ``","``-split dialect the first field keeps its opening and the last its closing
    quote, and text fields keep ncu's doubled quotes; both are undone here.
    """
    if columns is None:
        return f"SELECT * FROM {source}"
    header = _unique(sn.header)
    first = quote_ident(header[0])
    id_text = f"ltrim({first}, '\"')" if split else first
    parts = [f"TRY_CAST(replace(trim({id_text}), ',', '') AS BIGINT) AS launch_id"]
    metrics: list[str] = []
    for c, scale in columns:
        expr = quote_ident(c)
        if split and c == header[0]:
            expr = f"ltrim({expr}, '\"')"
        if split and c == header[-1]:
            expr = f"rtrim({expr}, '\"')"
        if scale is None:
            if split:
                expr = f"replace({expr}, '\"\"', '\"')"
        elif parsed:
            expr = f"{expr} * {scale!r}"
        else:
            metrics.append(expr)
            expr = f"rs_numbers[{len(metrics)}] * {scale!r}"
        parts.append(f"{expr} AS {quote_ident(c)}")
    if split:
        parts.append(f"{quote_ident(header[-1])} AS rs_last")
    if not metrics:
        return f"SELECT {', '.join(parts)} FROM {source}"
    parse = f"list_transform([{', '.join(metrics)}], lambda x: {number_sql('x', sn.decimal)})"
    return f"SELECT {', '.join(parts)} FROM (SELECT *, {parse} AS rs_numbers FROM {source})"


def _all_quoted(sn: Sniffed) -> bool:
    """ncu quotes every field; only then is the ``","`` split exact."""
    return sn.layout == RAW and sn.units is not None and sn.raw_header_line.startswith('"ID","')


def _create_as(table: str, select: str) -> str:
    """A raw page is scanned straight into its persistent ``values_r{N}`` (saves a copy of
    every value); other pages go through a temporary table."""
    if table.startswith(VALUES_R.prefix):
        return create_values(int(table.removeprefix(VALUES_R.prefix)), select, replace=True)
    return f"CREATE OR REPLACE TEMP TABLE {table} AS {select}"


def _try_split_read(
    con: duckdb.DuckDBPyConnection, src: str, sn: Sniffed, name: str, columns: Projection
) -> int | None:
    """Fast path for raw pages: the lines that are neither a launch nor full-width (noise)
    are counted, not stored, so the table is bounded by the rows, not by a file of millions
    of noise lines (issue 30); returns that count. None (and no table) when any row did not
    split into exactly the header's fields (its last field would then not end in the closing
    quote)."""
    first = quote_ident(_unique(sn.header)[0])
    bad = (
        f"(regexp_matches({first}, '{_INT}') AND NOT coalesce(ends_with(rs_last, '\"'), false)) "
        f"OR regexp_matches({first}, '{_INT_THEN_QUOTE}')"
    )
    # a launch (or a row that swallowed a quote) or a full-width row (the units row), read
    # before any value is parsed
    key = f"ltrim({first}, '\"')"
    keep = (
        f"coalesce(regexp_matches({key}, '{_INT}') OR regexp_matches({key}, "
        f"'{_INT_THEN_QUOTE}') OR {quote_ident(_unique(sn.header)[-1])} IS NOT NULL, false)"
    )
    read_sql = _read_csv_sql(name, sn, sn.header_line + 1, True, sn.compressed, split=True)
    kept = f"(SELECT * FROM {read_sql} WHERE {keep})"
    try:
        con.execute(_create_as(src, _select(sn, columns, kept, split=True)))
        ragged = scalar(con, f"SELECT count(*) FROM {src} WHERE {bad}")
        dropped = 0 if ragged else scalar(con, f"SELECT count(*) FROM {read_sql} WHERE NOT {keep}")
    except duckdb.Error:
        ragged = 1
    if ragged:
        con.execute(f"DROP TABLE IF EXISTS {src}")
        return None
    con.execute(f"ALTER TABLE {src} DROP COLUMN rs_last")
    return int(dropped)  # type: ignore[arg-type]


def _arrow_read(
    con: duckdb.DuckDBPyConnection,
    src: str,
    sn: Sniffed,
    fd: int,
    columns: Projection | None,
    every: bool,
) -> tuple[bool, pa.Table | None]:
    """Fast path (``ncu_arrow``): a raw page's projected columns parsed into ``src`` (a
    details or summary page's every column, as text) from pyarrow's reading. Returns
    whether pyarrow took the page, and with ``every`` the page's every column as text, for
    the full-text copy. A raw page's numbers are parsed in Arrow
    (``number_columns.parse_column``), and a page read by its wanted columns whose text there
    is over ``WHOLE_TEXT_LIMIT`` is streamed a block at a time: its text is never held whole.
    Nothing is left in ``src`` when pyarrow gave up."""
    if os.environ.get(READER_ENV, "").strip().lower() == "duckdb":
        return False, None
    from concurrent.futures import ThreadPoolExecutor

    from pyarrow import ArrowException

    from roofscope.ingest.ncu.arrow import read_page, stream_page
    from roofscope.ingest.number_columns import parse_columns

    names = _unique(sn.header)
    metrics = {c for c, scale in columns or [] if scale is not None}
    projected = None if columns is None else [c for c, _ in columns]
    wanted = None if every else projected
    streamed = wanted is not None and _wanted_text(fd, sn, wanted) > WHOLE_TEXT_LIMIT
    # a streamed page's groups are parsed on one thread, beside the tokeniser's and DuckDB's
    # (two parsing threads there made a million launches 0.5 s slower on two cores); a page
    # read whole has its columns parsed on every core
    with ThreadPoolExecutor(1 if streamed else os.cpu_count() or 1) as pool:

        def parse(page: Any) -> Any:
            return parse_columns(page, metrics, sn.decimal, pool)

        if streamed:
            stream = stream_page(fd, sn, names, wanted, parse)
            if stream is None:
                return False, None
            return _create_from_arrow(con, src, sn, columns, stream), None
        table = read_page(fd, sn, names, wanted)
        if table is None:
            return False, None
        try:
            page = table if projected is None else parse(table.select(projected))
        except ArrowException:  # no stored table yet: the DuckDB readers take the page
            return False, None
        return _create_from_arrow(con, src, sn, columns, page), table


def _wanted_text(fd: int, sn: Sniffed, wanted: list[str]) -> float:
    """About how many bytes of the page are in the ``wanted`` columns: the file's size (a
    gzip's times ``GZIP_RATIO``) by their share of the header's columns (the kernel names
    make it rough; it only picks between reading the page whole and streaming it)."""
    size = os.fstat(fd).st_size * (GZIP_RATIO if sn.compressed else 1)
    return size * len(wanted) / max(len(sn.header), 1)


def _create_from_arrow(
    con: duckdb.DuckDBPyConnection,
    src: str,
    sn: Sniffed,
    columns: Projection | None,
    page: Any,
) -> bool:
    """``src`` from a page pyarrow read (a table, or a ``PageStream`` checked once read);
    False, and no table, when DuckDB refused it or the stream was not the file's rows."""
    from pyarrow import ArrowException

    from roofscope.ingest.ncu.arrow import PageStream

    streamed = isinstance(page, PageStream)
    try:
        con.register(_ARROW_PAGE, page.reader() if streamed else page)
        try:
            con.execute(_create_as(src, _select(sn, columns, _ARROW_PAGE, parsed=True)))
        finally:
            con.unregister(_ARROW_PAGE)
        taken = page.exact() if streamed else True
    except (duckdb.Error, ArrowException, OSError):
        if streamed and page.failure is not None:
            raise page.failure from None
        taken = False
    finally:
        if streamed:
            page.close()
    if not taken:
        con.execute(f"DROP TABLE IF EXISTS {src}")
    return taken


def _try_read(con: duckdb.DuckDBPyConnection, src: str, query: str) -> duckdb.Error | None:
    try:
        con.execute(_create_as(src, query))
    except duckdb.Error as exc:
        return exc
    return None


def ingest_ncu_csv(
    con: duckdb.DuckDBPyConnection, path: str | Path, report_id: int, *, keep_raw: bool = False
) -> ReportInfo:
    """Load one ncu CSV export as report ``report_id`` into the open store connection.

    Tries, in order: pyarrow's reader (``ncu_arrow``), then for a raw page the ``","`` split
    of an all-quoted page; a page these give up on is read from a cleaned copy written by
    Python (truncated rows, stray quotes), which names what it skipped. ``keep_raw``: copy
    every raw value into the store whatever the page's size (a page converted from a binary
    report is a temporary file: Detail could not read it back later).
    """
    path = Path(path)
    sn = sniff(path)
    if sn.layout != SUMMARY and needs_reorder(sn):
        copy = reordered_copy(sn)
        try:
            info = ingest_ncu_csv(con, copy, report_id, keep_raw=True)
        finally:
            copy.unlink(missing_ok=True)
        info.path = str(path)
        info.warnings.insert(
            0,
            "the columns are not in ncu's order (ID first, then the identification columns), "
            "or the launch IDs are written as decimals: read from a copy put back in ncu's "
            "order; every metric is found by its name",
        )
        return info
    info = ReportInfo(report_id, str(path), sn.layout, decimal=sn.decimal)
    src = VALUES_R.name(report_id) if sn.layout == RAW else f"src_r{report_id}"
    catalogue = _raw_catalogue(sn, info) if sn.layout == RAW else None
    columns = _projection(sn, catalogue)
    fd = open_input(path)  # DuckDB reads this descriptor, never the name (a glob pattern)
    source, skip, compressed = duckdb_name(fd), sn.header_line + 1, sn.compressed
    tmp: IO[str] | None = None
    small = keep_raw or os.fstat(fd).st_size <= RAW_TABLE_LIMIT
    full: pa.Table | str | None = None  # the page as pyarrow read it, or a read_csv of it
    dropped: int | None = 0  # noise lines counted but not stored (the split read)
    try:
        loaded = False
        # NUL bytes inside the table misalign DuckDB's fields; the Python pass drops them
        if _tail_is_clean(fd, sn) and not sn.nul_after_header:
            if columns is not None or sn.layout != RAW:
                loaded, page = _arrow_read(con, src, sn, fd, columns, every=small)
                full = page if loaded and small and sn.layout == RAW else None
                del page  # a details page's text is in ``src`` now: not kept twice
            if not loaded and columns is not None and _all_quoted(sn):
                dropped = _try_split_read(con, src, sn, source, columns)
                loaded = dropped is not None
        # Everything else takes the Python pass: DuckDB's quoted reader on the file as it is
        # would pad a short, damaged row with NULLs without a word (decisions.md).
        if not loaded:
            tmp = _clean_copy(sn, info.warnings)
            source, skip, compressed = duckdb_name(tmp.fileno()), 1, False
            read_sql = _read_csv_sql(source, sn, 1, False, False)
            error = _try_read(con, src, _select(sn, columns, read_sql))
            if error is not None:
                raise RoofscopeError(
                    f"could not be parsed as an ncu CSV ({str(error).splitlines()[0]})",
                    path=str(path),
                    hint="export it again with ncu --csv",
                )
        text = _read_csv_sql(source, sn, skip, False, compressed)
        if full is None and sn.layout == RAW and small:
            full = text
        not_rows = _load_layout(con, src, sn, info, full, catalogue, text, dropped or 0)
    except BaseException:
        con.execute(f"DROP TABLE IF EXISTS {src}")
        raise
    finally:
        if sn.layout != RAW:
            con.execute(f"DROP TABLE IF EXISTS {src}")
        if tmp is not None:
            tmp.close()
        os.close(fd)
    if info.launches == 0:
        if not_rows > 0 or any(w.startswith("skipped ") for w in info.warnings):
            raise RoofscopeError(
                "has an ncu header, but none of the rows under it starts with an integer launch ID",
                path=str(path),
                hint="the ID column was edited or the rows are not ncu's; export it again",
            )
        raise RoofscopeError(
            "has an ncu header but no kernel rows",
            path=str(path),
            hint="the profiled application launched no kernels, or the export was cut",
        )
    _store_nvtx(con, info.report_id)
    _file_warnings(con, sn, info)
    return info


def _store_nvtx(con: duckdb.DuckDBPyConnection, rid: int) -> None:
    """Each launch's innermost and outermost NVTX push/pop range (``--nvtx``) into
    ``launch_nvtx``: ``--nvtx innermost`` (``n`` in the TUI) groups an ncu report by range as
    it does an nsys one."""
    rows = con.execute(
        f"SELECT launch_id, nvtx FROM launches WHERE report_id = {int(rid)} "
        "AND coalesce(nvtx, '') <> ''"
    ).fetchall()
    found = [(rid, launch, r[-1], r[0]) for launch, text in rows if (r := push_pop_ranges(text))]
    if found:
        insert_rows(con, LAUNCH_NVTX.name, LAUNCH_NVTX.names, found)


def _file_warnings(con: duckdb.DuckDBPyConnection, sn: Sniffed, info: ReportInfo) -> None:
    """What a user should know about a file that loaded: its locale, ncu's own errors, names
    that look like damage."""
    info.warnings.extend(sn.notes)
    if sn.decimal == ",":
        info.warnings.append(
            "numbers use ',' as the decimal mark and '.' to group digits (an export made in a "
            "European locale); read that way"
        )
    if sn.errors:
        info.warnings.append(
            f"ncu reported {len(sn.errors)} error(s) in the export, the first: "
            f"{sn.errors[0][:200]!r}; launches it names may lack values"
        )
    rid = info.report_id
    columns = {c for c, *_ in con.execute(f"DESCRIBE values_r{rid}").fetchall()}
    if TIME in columns:
        missing, total = con.execute(
            f"SELECT count(*) FILTER (WHERE {quote_ident(TIME)} IS NULL), count(*) "
            f"FROM values_r{rid}"
        ).fetchall()[0]
        if 0 < missing < total:
            info.warnings.append(
                f"{missing} of {total} launches have no duration ({TIME} is n/a, nan or left "
                f"out); times and shares count only the others"
            )
    long_names = one(
        con,
        f"SELECT count(*), max(length(kernel)) FROM launches WHERE report_id = {rid} "
        f"AND length(kernel) > {LONG_NAME}",
    )
    if long_names and long_names[0]:
        info.warnings.append(
            f"{long_names[0]} launch(es) have kernel names over {LONG_NAME:,} characters (the "
            f"longest: {long_names[1]:,}); check the export for a quote that swallowed rows"
        )


def _load_layout(
    con: duckdb.DuckDBPyConnection,
    src: str,
    sn: Sniffed,
    info: ReportInfo,
    full: pa.Table | str | None,
    catalogue: list[tuple] | None,
    text: str,
    dropped: int = 0,
) -> int:
    """Load the page's launches and values; returns how many lines of the table were not
    ncu rows (``dropped`` of them counted by the reader and never stored)."""
    header = _unique(sn.header)
    key_column = "Invocations" if sn.layout == SUMMARY else "ID"
    total, blank_keys = con.execute(
        f"SELECT count(*), count(*) FILTER (WHERE coalesce(trim({quote_ident(key_column)}), "
        f"'') = '') FROM {src}"
    ).fetchall()[0]
    if sn.layout == RAW and blank_keys > 1:  # a second units row: exports appended?
        _check_units_rows(sn)
    keep = f"coalesce(regexp_matches({quote_ident(key_column)}, '{_INT}'), false)"
    con.execute(f"DELETE FROM {src} WHERE NOT {keep}")
    data = int(scalar(con, f"SELECT count(*) FROM {src}"))  # type: ignore[arg-type]
    if sn.layout == RAW:
        _load_raw(con, src, header, info, full, catalogue or [], text)
    else:
        {DETAILS: _load_details, SUMMARY: _load_summary}[sn.layout](con, src, sn, header, info)
    noise = total + dropped - data - (1 if sn.layout == RAW and sn.units is not None else 0)
    if noise > 0:
        info.warnings.append(f"skipped {noise} line(s) inside the table that are not ncu rows")
    return noise


def _check_units_rows(sn: Sniffed) -> None:
    """Exports appended to one file (``ncu … >> f.csv``) repeat the header and the units row;
    values under a units row that differs from the first would be scaled by the wrong unit,
    so such a file is refused. Run only when the table holds a second row without an ID."""
    if sn.units is None:
        return
    width = len(sn.header)
    with open_text(sn.path) as src:
        for number, line in enumerate(src, start=1):
            if number <= sn.header_line + 1 or not line.startswith(('"",', ",")):
                continue
            row = [u.strip() for u in split_line(line.replace("\x00", ""))]
            if len(row) != width or any(row[:3]) or row == sn.units:
                continue
            i = next(i for i, (a, b) in enumerate(zip(sn.units, row, strict=True)) if a != b)
            raise RoofscopeError(
                f"holds several exports whose units differ: line {number} gives "
                f"{sn.header[i]} in {row[i]!r}, the first units row in {sn.units[i]!r}",
                path=str(sn.path),
                hint="split the file where the header repeats, or export each part with "
                "--print-units base",
            )


def _launch_select(
    header: list[str], id_expr: str, invocations: str, aggregate: bool = True
) -> str:
    """Identification columns of a launch; ``aggregate`` when the source has several rows per
    launch (details and summary pages), so each column is taken from any of them."""

    def one_of(expr: str) -> str:
        return f"any_value({expr})" if aggregate else expr

    parts = [f"{id_expr} AS launch_id"]
    for canon, name in LAUNCH_FIELDS.items():
        parts.append(
            f"{one_of(quote_ident(name))} AS {canon}"
            if name in header
            else f"NULL::VARCHAR AS {canon}"
        )
    nvtx = _nvtx_columns(header)
    if nvtx:
        joined = " || ' | ' || ".join(
            f"coalesce(trim(replace({quote_ident(c)}, '\"', '')), '')" for c in nvtx
        )
        parts.append(f"{one_of(joined)} AS nvtx")
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
    aggregate: bool = True,
) -> int:
    select = _launch_select(header, id_expr, "1", aggregate)
    # ordered: a GROUP BY's rows come in hash-table order, which varies from run to run, and
    # every later sum over the launches follows the stored order (the same report must print
    # the same bytes each time it is read)
    group_by = f" GROUP BY {id_expr} ORDER BY {id_expr}" if aggregate else ""
    con.execute(f"INSERT INTO launches SELECT {rid} AS report_id, {select} FROM {src}{group_by}")
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
    header: list[str],
    info: ReportInfo,
    full: pa.Table | str | None,
    catalogue: list[tuple],
    text: str,
) -> None:
    """Launches and values come from the projected, already parsed scan in ``src``; the full
    text of every column is copied too when the export is small (``full``). ``text`` reads
    the table as text, to name a value that is not a number."""
    rid = info.report_id
    id_expr = f"CAST(replace(trim({quote_ident('ID')}), ',', '') AS BIGINT)"
    repeated = int(scalar(con, f"SELECT count(*) - count(DISTINCT launch_id) FROM {src}"))  # type: ignore[arg-type]
    if repeated:
        # Concatenated exports (ncu … >> f.csv) repeat IDs; number the rows in file order.
        con.execute(
            f"CREATE OR REPLACE TABLE {src} AS SELECT row_number() OVER () - 1 AS launch_id, "
            f"* EXCLUDE (launch_id) FROM {src}"
        )
        id_expr = "row_number() OVER () - 1"
        info.warnings.append(
            f"{repeated} launch ID(s) repeat (several exports in one file?); launches are "
            f"numbered in file order instead"
        )
    _duplicates(con, src, info)
    unreadable: dict[str, int] = {}
    _left_out(null_non_finite(con, src, unreadable), info)
    _not_numbers(unreadable, info, lambda column: _first_raw_text(con, text, column, info))
    info.launches = _insert_launches(con, src, header, rid, "launch_id", aggregate=False)
    insert_rows(con, CATALOGUE.name, CATALOGUE.names, catalogue)
    info.raw_values = "source"
    if full is not None:
        try:
            _copy_raw_texts(con, rid, header, full, id_expr)
            info.raw_values = "table"
        except duckdb.Error:
            con.execute(f"DROP TABLE IF EXISTS {RAW_R.name(rid)}")
            con.execute(f"DROP TABLE IF EXISTS {RAW_COLUMNS_R.name(rid)}")
    _device_facts(con, info, text_source=src, header={row[1] for row in catalogue})


def _copy_raw_texts(
    con: duckdb.DuckDBPyConnection, rid: int, header: list[str], full: pa.Table | str, id_expr: str
) -> None:
    """``raw_r{N}``: each launch's other columns as one list of texts, named in order by
    ``raw_columns_r{N}``. A table of a raw page's ~1,270 text columns took ~0.2 s to create
    however few its rows, longer than reading the page; the list column takes ~0.03 s."""
    import numpy as np
    import pyarrow as pa

    from roofscope.arrowutil import arrow_array

    launches = f"coalesce(regexp_matches({quote_ident('ID')}, '{_INT}'), false)"
    # from a read_csv, only the launches' rows: never every column of every noise line
    page = (
        full
        if isinstance(full, pa.Table)
        else con.sql(f"SELECT * FROM {full} WHERE {launches}").to_arrow_table()
    )
    con.register(_ARROW_PAGE, page.select(["ID"]))
    try:
        rows = con.sql(
            f"SELECT coalesce(regexp_matches({quote_ident('ID')}, '{_INT}'), false) FROM "
            f"{_ARROW_PAGE}"
        ).to_arrow_table()
    finally:
        con.unregister(_ARROW_PAGE)
    page = page.filter(rows.column(0))  # the launches' rows, in file order
    con.register(_ARROW_PAGE, page.select(["ID"]))
    try:
        ids = con.sql(f"SELECT {id_expr} AS launch_id FROM {_ARROW_PAGE}").to_arrow_table()
    finally:
        con.unregister(_ARROW_PAGE)
    nvtx = set(_nvtx_columns(header))
    keep = [c for c in header if c not in ID_COLUMNS and c not in nvtx]
    kept = page.select(keep)
    n, width = kept.num_rows, len(keep)
    columns = [c.combine_chunks() for c in kept.columns]
    flat = pa.concat_arrays(columns) if columns else pa.nulls(0, pa.string())
    # column-major to row-major: launch r's values are flat[c * n + r] for each column c
    order = (np.arange(width)[None, :] * n + np.arange(n)[:, None]).ravel()
    offsets = np.arange(0, n * width + 1, max(width, 1), dtype=np.int32)
    texts = pa.ListArray.from_arrays(
        arrow_array(offsets, pa.int32()), flat.take(arrow_array(order, pa.int64()))
    )
    con.register(
        _ARROW_PAGE, pa.Table.from_arrays([ids.column(0), texts], names=["launch_id", "texts"])
    )
    try:
        con.execute(
            create_raw(
                rid, f"SELECT CAST(launch_id AS BIGINT) AS launch_id, texts FROM {_ARROW_PAGE}"
            )
        )
    finally:
        con.unregister(_ARROW_PAGE)
    con.execute(
        f"CREATE TABLE {RAW_COLUMNS_R.name(rid)} AS SELECT CAST(? AS VARCHAR[]) AS names", [keep]
    )


def _details_frame(
    con: duckdb.DuckDBPyConnection,
    src: str,
    header: list[str],
    rid: int,
    id_expr: str,
    value_col: str,
) -> None:
    """Long table ``det_r{rid}``: one row per (launch, metric) with label mapped to metric."""
    labels = _labels()
    label_rows = [(s, lab, m) for s, d in labels.items() for lab, m in d.items()]
    con.execute(
        "CREATE OR REPLACE TEMP TABLE rs_labels (section VARCHAR, label VARCHAR, metric VARCHAR)"
    )
    insert_rows(con, "rs_labels", ("section", "label", "metric"), label_rows)
    section = f"s.{quote_ident('Section Name')}" if "Section Name" in header else "NULL::VARCHAR"
    name = f"s.{quote_ident('Metric Name')}"
    exprs = {
        "launch_id": id_expr,
        "section": section,
        "metric": f"coalesce(l.metric, {name})",
        "label": f"CASE WHEN l.metric IS NULL THEN NULL ELSE {name} END",
        "unit": f"coalesce(s.{quote_ident('Metric Unit')}, '')",
        "value": f"s.{quote_ident(value_col)}",
    }
    source = (
        f"{src} s LEFT JOIN rs_labels l ON l.section = {section} AND l.label = {name} "
        f"WHERE coalesce({name}, '') <> ''"
    )
    con.execute(create_det(rid, exprs, source))


def raw_page_row(path: str | Path, launch_id: int) -> dict[str, str]:
    """One launch's row of a raw page, read from the export (pages too large to be copied into
    the store), column name → text as exported; {} when no row has that ID."""
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


def _left_out(found: dict[str, int], info: ReportInfo) -> None:
    if found:
        top = sorted(found.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
        info.warnings.append(
            f"left out {sum(found.values())} value(s) that are negative, NaN or infinite: "
            + ", ".join(f"{metric} ({n})" for metric, n in top)
            + (", …" if len(found) > 3 else "")
        )


def _not_numbers(
    found: dict[str, int], info: ReportInfo, first: Callable[[str], str | None]
) -> None:
    """Warn about values left out because they are not numbers in a shape ncu writes
    (``numbers.SHAPES``), naming each column (``first`` says where its first one is)."""
    if not found:
        return
    top = sorted(found.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
    parts = []
    for metric, n in top:
        where = first(metric)
        parts.append(f"{metric} ({n}{', first ' + where if where else ''})")
    info.warnings.append(
        f"left out {sum(found.values())} value(s) that are not numbers as ncu writes them "
        f"(digits grouped in threes by '{',' if info.decimal == '.' else '.'}'): "
        + ", ".join(parts)
        + (", …" if len(found) > 3 else "")
    )


def _first_raw_text(
    con: duckdb.DuckDBPyConnection, text: str, column: str, info: ReportInfo
) -> str | None:
    """Where the first unreadable value of a raw page's ``column`` is, and its text."""
    col, first = quote_ident(column), quote_ident("ID")
    try:
        row = one(
            con,
            f"SELECT trim({first}), {col} FROM {text} WHERE regexp_matches({first}, '{_INT}') "
            f"AND {number_sql(col, info.decimal)} = {UNREADABLE} LIMIT 1",
        )
    except duckdb.Error:  # a cut gzip stream: the count is said without the place
        return None
    return f"at launch ID {row[0]}: {row[1]!r}" if row else None


def _first_details_text(
    con: duckdb.DuckDBPyConnection, rid: int, metric: str, decimal: str
) -> str | None:
    """Where the first unreadable value of ``metric`` on a details page is, and its text."""
    row = one(
        con,
        f"SELECT launch_id, value FROM det_r{rid} WHERE metric = {quote_str(metric)} "
        f"AND {number_sql('value', decimal)} = {UNREADABLE} ORDER BY rowid LIMIT 1",
    )
    return f"at launch {row[0]}: {row[1]!r}" if row else None


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
                # the catalogue (and the error for a wanted metric) names the unit at fault
                row = (*row[:4], u, None, None, *row[7:9], False)
        catalogue.append(row)
    _check_units(catalogue, info)
    insert_rows(con, CATALOGUE.name, CATALOGUE.names, catalogue)
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
    select = (
        f"SELECT l.launch_id{''.join(', ' + c for c in cols)} "
        f"FROM launches l LEFT JOIN det_r{rid} d ON d.launch_id = l.launch_id "
        f"LEFT JOIN rs_units u ON u.unit = d.unit WHERE l.report_id = {rid} GROUP BY l.launch_id "
        f"ORDER BY l.launch_id"  # stored in launch order, as the launches (_insert_launches)
    )
    con.execute(create_values(rid, select))
    _details_conflicts(con, info, wanted, value)
    unreadable: dict[str, int] = {}
    _left_out(null_non_finite(con, f"values_r{rid}", unreadable), info)
    _not_numbers(
        unreadable, info, lambda metric: _first_details_text(con, rid, metric, info.decimal)
    )
    _device_facts(con, info, text_source=None, header={r[1] for r in catalogue})


def _details_conflicts(
    con: duckdb.DuckDBPyConnection, info: ReportInfo, wanted: list[str], value: str
) -> None:
    """A metric a launch lists twice (two sections, or a label and its name) is read once when
    the rows agree after units, as in every real export seen; where they differ the launch
    gets no value for it, with a warning naming the metric, the launch and both values, as
    for a raw page's repeated column (``_duplicates``)."""
    rid = info.report_id
    if not wanted:
        return
    names = ", ".join(quote_str(m) for m in wanted)
    rows = con.execute(
        f"SELECT launch_id, metric, lo, hi, count(*) OVER () FROM ("
        f"SELECT d.launch_id, d.metric, min({value}) AS lo, max({value}) AS hi "
        f"FROM det_r{rid} d LEFT JOIN rs_units u ON u.unit = d.unit "
        f"WHERE d.metric IN ({names}) GROUP BY ALL HAVING count(*) > 1) "
        f"WHERE hi - lo > 1e-9 * greatest(abs(lo), abs(hi)) ORDER BY launch_id, metric"
    ).fetchall()
    for metric in {r[1] for r in rows}:
        launches = [r[0] for r in rows if r[1] == metric]
        con.execute(
            f"UPDATE values_r{rid} SET {quote_ident(metric)} = NULL "
            f"WHERE list_contains(?, launch_id)",
            [launches],
        )
    if rows:
        launch, metric, lo, hi, n = rows[0]
        info.warnings.append(
            f"{n} launch metric(s) are listed twice with different values (launch {launch}: "
            f"{metric} = {lo!r} and {hi!r} in base units); each is left out for its launch"
        )


def _load_details(
    con: duckdb.DuckDBPyConnection, src: str, sn: Sniffed, header: list[str], info: ReportInfo
) -> None:
    rid = info.report_id
    id_expr = f"CAST(replace(trim({quote_ident('ID')}), ',', '') AS BIGINT)"
    mixed = scalar(
        con,
        f"SELECT count(*) FROM (SELECT 1 FROM {src} GROUP BY {quote_ident('ID')} "
        f"HAVING count(DISTINCT {quote_ident('Kernel Name')}) > 1)",
    )
    if mixed:
        info.warnings.append(
            f"{mixed} launch ID(s) name several kernels (several exports in one file?); "
            f"their metrics are merged — export each run to its own file"
        )
    info.launches = _insert_launches(con, src, header, rid, id_expr)
    _load_rules(con, src, header, info, id_expr)
    _details_frame(con, src, header, rid, id_expr, "Metric Value")
    _details_values(con, info, "details row")


def load_rule_rows(con: duckdb.DuckDBPyConnection, path: Path, info: ReportInfo) -> None:
    """A CSV of rule rows with a details page's columns (``ID``, ``Section Name``, ``Rule
    Name`` …), as the ``.ncu-rep`` reader writes them, into ``ncu_rules``."""
    fd = open_input(path)
    try:
        con.execute(
            "CREATE OR REPLACE TEMP TABLE rs_rule_rows AS SELECT * FROM read_csv("
            f"{quote_str(duckdb_name(fd))}, header = true, all_varchar = true, quote = '\"', "
            "escape = '\"', strict_mode = false)"
        )
    finally:
        os.close(fd)
    header = [c for c, *_ in con.execute("DESCRIBE rs_rule_rows").fetchall()]
    _load_rules(con, "rs_rule_rows", header, info, 'CAST("ID" AS BIGINT)')
    con.execute("DROP TABLE rs_rule_rows")


def _load_rules(
    con: duckdb.DuckDBPyConnection, src: str, header: list[str], info: ReportInfo, id_expr: str
) -> None:
    """ncu's rule rows (a details page collected with sections) into ``ncu_rules``, text as
    exported. ``Estimated Speedup`` (percent; newer ncu only) is read as a number from 0 to 100;
    older exports lack the pair, and another value is left out with a warning."""
    if "Rule Name" not in header:
        return

    def text(column: str) -> str:
        return f"nullif(trim({quote_ident(column)}), '')" if column in header else "NULL::VARCHAR"

    section = quote_ident("Section Name") if "Section Name" in header else "NULL::VARCHAR"
    description = (
        quote_ident("Rule Description") if "Rule Description" in header else "NULL::VARCHAR"
    )
    number = (
        number_sql(quote_ident("Estimated Speedup"), info.decimal)
        if "Estimated Speedup" in header
        else "NULL::DOUBLE"
    )
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE rs_rules AS SELECT {id_expr} AS launch_id, "
        f"{section} AS section, trim({quote_ident('Rule Name')}) AS rule, "
        f"upper({text('Rule Type')}) AS type, {description} AS description, "
        f"lower({text('Estimated Speedup Type')}) AS speedup_type, {number} AS speedup "
        f"FROM {src} WHERE coalesce(trim({quote_ident('Rule Name')}), '') <> ''"
    )
    bad = int(
        scalar(  # type: ignore[arg-type]
            con,
            "SELECT count(*) FROM rs_rules WHERE speedup IS NOT NULL "
            "AND NOT (isfinite(speedup) AND speedup BETWEEN 0 AND 100)",
        )
    )
    con.execute(
        f"INSERT INTO {NCU_RULES.name} SELECT {info.report_id}, launch_id, section, rule, type, "
        f"description, speedup_type, CASE WHEN isfinite(speedup) AND speedup BETWEEN 0 AND 100 "
        f"THEN speedup END FROM rs_rules"
    )
    con.execute("DROP TABLE rs_rules")
    if bad:
        info.warnings.append(
            f"{bad} ncu rule estimate(s) are not a percentage from 0 to 100; "
            f"those rules are read without an estimate"
        )


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
    invocations = f"any_value(CAST(replace(trim({quote_ident('Invocations')}), ',', '') AS BIGINT))"
    con.execute(
        f"INSERT INTO launches SELECT {rid}, "
        f"{_launch_select(header, 'rs_launch', invocations)} FROM {src_k} GROUP BY rs_launch "
        f"ORDER BY rs_launch"
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


DEVICE_LABELS = ("device name", "gpu name", "device display name", "display name")


def _details_device_name(con: duckdb.DuckDBPyConnection, info: ReportInfo) -> None:
    """A details page names its GPU only when a row holds it: the metric
    ``device__attribute_display_name`` (``--metrics``) or a section row labelled like
    "Device Name". A number there is not a name; several names are said."""
    rows = con.execute(
        f"SELECT trim(value), count(*) FROM det_r{info.report_id} "
        f"WHERE (metric = {quote_str(DEVICE_NAME)} OR lower(trim(coalesce(label, metric))) "
        f"IN ({', '.join(quote_str(x) for x in DEVICE_LABELS)})) "
        f"AND coalesce(trim(value), '') NOT IN ('', 'n/a') "
        f"AND TRY_CAST(replace(value, ',', '') AS DOUBLE) IS NULL "
        f"GROUP BY 1 ORDER BY 2 DESC, 1"
    ).fetchall()
    if rows:
        info.gpu_name = rows[0][0]
    if len(rows) > 1:
        info.warnings.append(
            f"the export names {len(rows)} devices ({', '.join(repr(r[0]) for r in rows[:3])}); "
            f"ceilings are those of {rows[0][0]!r}, the most frequent"
        )


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
    elif text_source is None:
        _details_device_name(con, info)
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
        if row and all(v is not None and math.isfinite(v) for v in row):
            info.cc = f"{int(row[0])}.{int(row[1])}"
    for metric in SM_COUNT:
        if metric in header:
            row = one(con, f"SELECT max({quote_ident(metric)}) FROM values_r{rid}")
            if row and row[0] and math.isfinite(row[0]):
                info.sm_count = int(row[0])
                break
