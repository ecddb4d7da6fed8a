"""``nsys stats`` tables: per-kernel summaries, GPU traces and memory-operation summaries.

One file may hold one table (``--format csv --output base``) or many, when people capture the
console: ``Processing [...]``/``SKIPPED:`` banners separate them. Tables are told apart by their
headers across releases (``gpukernsum`` of 2020 has ``Average``/``Minimum``/``Maximum``; 2023+
``cuda_gpu_kern_sum`` has ``Avg (ns)``/``Med (ns)``…; ``--timeunit`` turns ``(ns)`` into
``(us)``…). nsys writes a 0-byte file for a report without data; it loads as an empty report.

Nothing is guessed; every value left out is named by line (JSON: row) and column:

* a cell that is not a plain number (``nan``, ``1231822285 ns``, empty) is left out, never
  rebuilt from the rounded ``Avg`` × ``Instances``; only a table with no ``Total Time`` column
  at all takes ``Avg`` as the time, and says so;
* a row whose ``Instances`` is not a whole count, or 0 with a time above 0, is left out;
* a row repeated exactly (``cat a a``, a paste) counts once. A summary names a kernel once
  (``cuda_gpu_kern_gb_sum``: once per name, grid and block); two rows of one kernel with
  different values cannot both be right and neither is known to be, so all of that kernel's
  rows are left out. In a trace two identical rows are the same launch when the table has a
  ``CorrId`` column or nanosecond times; otherwise (times printed in ms…) they may be two
  launches and are both kept, with a warning;
* a column the header names twice is read once when its copies agree; where they differ, a
  summary's number is left out for that row, and any other column (a name, a count, a
  trace's start or duration) leaves the row out.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from roofscope.errors import RoofscopeError
from roofscope.ingest.nsys.tables import (
    LATEST_NS,
    MEMOP_COLUMNS,
    create_staging,
    host_kind,
    write_report,
)
from roofscope.ingest.report_info import ReportInfo
from roofscope.ingest.sniff import GZIP_MAGIC, Gunzip
from roofscope.sqlutil import insert_rows

# Seconds per unit of the time units nsys prints (``--timeunit`` nsec/usec/msec/sec); any other
# unit is refused, never read as nanoseconds.
TIME_UNITS = {
    "ns": 1e-9,
    "nsec": 1e-9,
    "us": 1e-6,
    "\u03bcs": 1e-6,  # μs, Greek mu
    "\u00b5s": 1e-6,  # µs, the micro sign
    "usec": 1e-6,
    "ms": 1e-3,
    "msec": 1e-3,
    "s": 1.0,
    "sec": 1.0,
}
_REPORT_FILE = re.compile(
    r"_(cuda_gpu_kern_sum|cuda_gpu_kern_gb_sum|cuda_gpu_trace|cuda_gpu_mem_time_sum|"
    r"cuda_gpu_mem_size_sum|cuda_gpu_sum|cuda_api_sum|cuda_kern_exec_sum|nvtx_sum|"
    r"nvtx_kern_sum|osrt_sum|gpukernsum|gputrace|gpumemtimesum|gpumemsizesum|\w+_sum)"
    r"(_\w+)?\.(csv|tsv|json)$"
)
_BANNER = re.compile(
    r"^(Processing \[|SKIPPED:|Generating SQLite|NOTICE:|WARNING:|ERROR:|Exported successfully|"
    r"\*\* |Report file|\s*$)"
)
_HEADER_START = re.compile(r'^"?(Time ?\(%\)|Start \(\w+\)|Total \(MB\)|PID)"?[,\t]')
_HEADER_FIELD = re.compile(r"Time ?\(%\)|Start \(\w+\)|Total \(MB\)|PID")
NO_KERNEL_TABLE = (
    "no kernel table in this nsys stats file{found}; export cuda_gpu_kern_sum or cuda_gpu_trace "
    "(nsys stats --report cuda_gpu_kern_sum --format csv --output NAME REPORT)"
)


WRONG_FIELDS = "a wrong number of fields"


@dataclass
class Table:
    header: list[str]
    rows: list[list[str]]
    lines: list[int] = field(default_factory=list)  # each row's line in the file (JSON: row)
    skipped: dict[str, list[int]] = field(default_factory=dict)  # reason -> lines left out
    cut: bool = False  # the file ends inside this table's last row
    where: str = "line"  # what ``lines`` count: lines of a CSV, rows of a JSON list
    unreadable: list[tuple[int, str, str]] = field(default_factory=list)  # line, column, text
    left_out: set[tuple[int, str]] = field(default_factory=set)  # (line, column) said already

    def skip(self, line: int, reason: str) -> None:
        self.skipped.setdefault(reason, []).append(line)

    def keep(self, lines: set[int]) -> None:
        """Leave out the rows at ``lines``."""
        kept = [(r, n) for r, n in zip(self.rows, self.lines, strict=True) if n not in lines]
        self.rows, self.lines = [r for r, _ in kept], [n for _, n in kept]

    def kind(self) -> str:
        names = set(self.header)
        if "Category" in names and "Operation" in names:
            return "gpu_sum"
        if _col(self.header, "Start") is not None and _col(self.header, "Duration") is not None:
            return "trace"
        if "Operation" in names and _col(self.header, "Total Time") is not None:
            return "mem_time"
        if "Operation" in names and "Total (MB)" in names:
            return "mem_size"
        if "Name" in names and "Instances" in names and _col(self.header, "Total Time") is not None:
            return "kern_sum"
        return "other"


def is_nsys_stats(path: Path) -> bool:
    """By name (``NAME_<report>.csv``, also 0 bytes) or by a stats header near the top."""
    if _REPORT_FILE.search(path.name):
        return True
    try:
        raw, _ = read_bytes(path, 1 << 16)
    except (OSError, RoofscopeError):
        return False
    head = raw.replace(b"\x00", b"").decode("utf-8-sig", "replace")
    # a list of rows (pretty-printed or not) of a summary or a trace
    if re.match(r"\s*\[\s*\{", head) and re.search(r'"(Total Time|Start) \(', head):
        return True
    return any(_is_header(line) for line in head.splitlines()[:400])


def _is_header(line: str) -> bool:
    """A stats table's header, its columns in nsys's order or any other (a spreadsheet or a
    script may move them): at least three fields, one of them a stats anchor column."""
    if _HEADER_START.match(line):
        return True
    delimiter = "\t" if "\t" in line.split(",", 1)[0] else ","
    fields = next(csv.reader([line], delimiter=delimiter), [])
    return len(fields) >= 3 and any(_HEADER_FIELD.fullmatch(f.strip()) for f in fields)


def read_bytes(path: Path, limit: int | None = None) -> tuple[bytes, bool]:
    """The file's bytes (``limit`` of them at most), gunzipped when it is a gzip; and whether a
    gzip ended early (a truncated download keeps its complete rows, as ncu CSVs do)."""
    with open(path, "rb") as fh:
        if fh.read(2) != GZIP_MAGIC:
            fh.seek(0)
            return (fh.read() if limit is None else fh.read(limit)), False
    raw = Gunzip(path)
    try:
        with io.BufferedReader(raw) as stream:
            data = stream.read() if limit is None else stream.read(limit)
    except zlib.error as exc:
        raise RoofscopeError(
            f"gzip data is damaged ({exc})", path=str(path), hint="copy the file again"
        ) from exc
    return data, raw.truncated and (limit is None or len(data) < limit)


def _col(header: list[str], stem: str) -> int | None:
    """Index of ``stem`` with or without a unit suffix (``Avg (ns)``, ``Avg (us)``, ``Avg``)."""
    for i, name in enumerate(header):
        if name == stem or re.fullmatch(re.escape(stem) + r" \(\w+(/s)?\)", name):
            return i
    return None


def _scale(header: list[str], stem: str) -> float:
    """Seconds per unit of a time column; unit-less old columns are nanoseconds. A unit that is
    not a known time unit (``(min)``) is refused: read as nanoseconds it would be silently
    wrong."""
    i = _col(header, stem)
    if i is None:
        return 1e-9
    m = re.search(r"\((\w+)\)$", header[i])
    if not m:
        return 1e-9
    if m.group(1) not in TIME_UNITS:
        raise RoofscopeError(
            f"its column {header[i]!r} is in {m.group(1)!r}, not a time unit roofscope knows "
            f"(ns, us, \u03bcs, ms, s)",
            hint="export it again with nsys stats --timeunit nsec",
        )
    return TIME_UNITS[m.group(1)]


def complete_lines(path: Path, warnings: list[str]) -> bytes:
    """The file's bytes (gunzipped) up to its last complete line: a truncated gzip loses the
    row the cut went through, and says so."""
    raw, truncated = read_bytes(path)
    if truncated:
        raw = raw[: raw.rfind(b"\n") + 1]
        warnings.append("the gzip ends early (truncated file): its complete rows are read")
    return raw


def read_tables(path: Path, warnings: list[str] | None = None) -> list[Table]:
    raw = complete_lines(path, warnings if warnings is not None else [])
    # utf-8-sig: a byte order mark (spreadsheets write one) is not part of the header
    data = raw.replace(b"\x00", b"").decode("utf-8-sig", "replace")
    if data.lstrip().startswith("["):
        return _json_tables(path, data)
    if data.lstrip().startswith("{"):
        raise RoofscopeError(
            "is a JSON object, not an nsys stats table (nsys stats JSON is a list of rows)",
            path=str(path),
            hint="export with nsys stats --format json (or csv) --output NAME REPORT",
        )
    tables: list[Table] = []
    current: Table | None = None
    delimiter = ","
    short = False
    for number, line in enumerate(data.splitlines(), 1):
        if current is None:
            if _is_header(line):
                delimiter = "\t" if "\t" in line.split(",", 1)[0] else ","
                header = next(csv.reader([line], delimiter=delimiter))
                current = Table([h.strip() for h in header], [])
                tables.append(current)
            continue
        if _BANNER.match(line):
            current = None
            continue
        row = next(csv.reader([line], delimiter=delimiter))
        short = len(row) != len(current.header)
        if short:
            current.skip(number, WRONG_FIELDS)
        elif [c.strip() for c in row] == current.header:
            current.skip(number, "the header repeated (files joined together?)")
        else:
            current.rows.append(row)
            current.lines.append(number)
    # a short last row with no line end after it: the file was cut there
    if current is not None and short and not data.endswith(("\n", "\r")):
        current.cut = True
        current.skipped[WRONG_FIELDS].pop()
        if not current.skipped[WRONG_FIELDS]:
            del current.skipped[WRONG_FIELDS]
    return tables


def _json_tables(path: Path, data: str) -> list[Table]:
    try:
        items = json.loads(data)
    except json.JSONDecodeError as exc:
        raise RoofscopeError(
            f"is not valid JSON ({exc.msg} at line {exc.lineno})",
            path=str(path),
            hint="the file was cut or edited; export it again with nsys stats --format json",
        ) from exc
    if not isinstance(items, list) or not items or not isinstance(items[0], dict):
        return []
    header = list(items[0])
    numbered = [(n, r) for n, r in enumerate(items, 1) if isinstance(r, dict)]
    return [
        Table(
            header,
            [["" if r.get(h) is None else str(r.get(h)) for h in header] for _, r in numbered],
            lines=[n for n, _ in numbered],
            where="row",
        )
    ]


BIG = LATEST_NS  # counts, ids and nanosecond times past this are damage, not data


def _small_int(value: float | None) -> int | None:
    return int(value) if value is not None and abs(value) <= BIG else None


def _num(text: str) -> float | None:
    """A finite number, or None (``nan``/``inf`` included: no count or time is either)."""
    text = text.strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _dims(text: str) -> str | None:
    parts = text.split()
    return f"({', '.join(parts)})" if len(parts) == 3 else None


_DEVICE = re.compile(r"^(.*?)\s*\((\d+)\)$")


def ingest_nsys_stats(con: duckdb.DuckDBPyConnection, path: Path, report_id: int) -> ReportInfo:
    try:
        return _ingest(con, path, report_id)
    except RoofscopeError as exc:
        exc.path = exc.path or str(path)  # raised where the file is not known
        raise


def _ingest(con: duckdb.DuckDBPyConnection, path: Path, report_id: int) -> ReportInfo:
    info = ReportInfo(report_id, str(path), "nsys-stats")
    create_staging(con)
    if path.stat().st_size == 0:
        info.warnings.append(
            "the file is empty: nsys writes a 0-byte file for a report without data"
        )
        info.launches = write_report(con, report_id)
        return info
    tables = read_tables(path, info.warnings)
    kinds = [t.kind() for t in tables]
    if not tables:
        raise RoofscopeError(
            "has no nsys stats table in CSV form",
            path=str(path),
            hint="export with nsys stats --format csv (the column/table formats are for reading)",
        )
    used = {"mem_time", "mem_size", *(("trace",) if "trace" in kinds else ("kern_sum", "gpu_sum"))}
    for t in tables:
        if t.kind() in used:
            _merge_copies(t, info.warnings)
    for kind in sorted(used):
        _drop_repeats([t for t in tables if t.kind() == kind], kind, info.warnings)
    kernels: list[tuple] = []
    gpu_names: dict[int, str] = {}
    if "trace" in kinds:
        for t in (t for t in tables if t.kind() == "trace"):
            kernels += _trace(con, t, report_id, gpu_names)
        if "kern_sum" in kinds or "gpu_sum" in kinds:
            info.warnings.append("kernel summaries skipped: the GPU trace in the file has them all")
    else:
        for t in tables:
            if t.kind() == "kern_sum":
                kernels += _kern_sum(t, info.warnings)
            elif t.kind() == "gpu_sum" and "kern_sum" not in kinds:
                kernels += _kern_sum(t, info.warnings, category="CUDA_KERNEL")
    for t in tables:
        if t.kind() in ("mem_time", "mem_size") or (t.kind() == "gpu_sum" and "trace" not in kinds):
            _mem_summary(con, t, report_id)
    if not any(k in kinds for k in ("trace", "kern_sum", "gpu_sum")):
        others = sorted({_describe(t) for t in tables})
        found = f" (it holds: {', '.join(others)})" if others else ""
        info.warnings.append(NO_KERNEL_TABLE.format(found=found))
    if any(t.cut for t in tables):
        info.warnings.append(
            "the file ends in the middle of a row (truncated export); last row skipped"
        )
    where = tables[0].where
    skipped: dict[str, list[int]] = {}
    for t in tables:
        for reason, lines in t.skipped.items():
            skipped.setdefault(reason, []).extend(lines)
    for reason, lines in skipped.items():
        info.warnings.append(
            f"skipped {len(lines)} row(s) of its tables ({_at(lines, where)}): {reason}"
        )
    unreadable = [cell for t in tables for cell in t.unreadable]
    if unreadable:
        shown = "; ".join(
            f"{where} {line}, column {column}: {text[:40]!r}"
            for line, column, text in unreadable[:3]
        )
        more = f"; and {len(unreadable) - 3} more" if len(unreadable) > 3 else ""
        info.warnings.append(
            f"{len(unreadable)} cell(s) are not plain numbers and are left out ({shown}{more}); "
            f"a row without its Total Time has no time (its instances still count)"
        )
    insert_rows(
        con,
        "stg_kernels",
        (
            "source_row",
            "start_ns",
            "end_ns",
            "device",
            "stream",
            "kernel",
            "grid_size",
            "block_size",
            "invocations",
            "time_s",
            "time_min_s",
            "time_max_s",
            "time_med_s",
        ),
        kernels,
    )
    info.launches = write_report(con, report_id, info.warnings)
    for device, name in sorted(gpu_names.items()):
        con.execute(
            "INSERT INTO gpus (report_id, device, name) VALUES (?, ?, ?)", [report_id, device, name]
        )
    if gpu_names:
        info.gpu_name = gpu_names[min(gpu_names)]
    return info


def _at(lines: list[int], where: str = "line") -> str:
    """``line 7`` / ``lines 7, 9`` / ``lines 7, 9, 11, 13, 15, … (40 in all)``."""
    lines = sorted(lines)
    if len(lines) == 1:
        return f"{where} {lines[0]}"
    shown = ", ".join(str(n) for n in lines[:5])
    return f"{where}s {shown}" + (f", … ({len(lines)} in all)" if len(lines) > 5 else "")


_UNIT = re.compile(r"^(.*?) \((\w+(?:/s)?)\)$")
# a summary's numbers: a copy that differs leaves only that number out, not the row
_VALUES = {"Time (%)", "Time", "Total Time", "Avg", "Average", "Med", "Min", "Minimum", "Max"}
_VALUES |= {"Maximum", "StdDev", "Total (MB)", "Total"}


def _same(a: str, b: str, unit_a: str | None, unit_b: str | None) -> bool:
    """Two copies of one column agree: the same text, or the same number (after their time
    units, when the headers print different ones)."""
    a, b = a.strip(), b.strip()
    if a == b and unit_a == unit_b:
        return True
    x, y = _num(a), _num(b)
    if x is None or y is None:
        return False
    if unit_a != unit_b:
        if unit_a not in TIME_UNITS or unit_b not in TIME_UNITS:
            return False
        x, y = x * TIME_UNITS[unit_a], y * TIME_UNITS[unit_b]
    return abs(x - y) <= 1e-9 * max(abs(x), abs(y))


def _merge_copies(t: Table, warnings: list[str]) -> None:
    """A column the header names twice (``Total Time (ns)`` twice, or once in ns and once in
    us) is read from its first copy where every copy agrees. Where they differ, a summary's
    number is left out for that row; any other column leaves the row out (the readers take
    the first copy by name: it must not be a silent pick). Warns naming column and line."""
    groups: dict[str, list[int]] = {}
    for i, name in enumerate(t.header):
        m = _UNIT.match(name)
        groups.setdefault(m.group(1) if m else name, []).append(i)
    extra: set[int] = set()
    drop: set[int] = set()
    for stem, columns in groups.items():
        if len(columns) < 2:
            continue
        extra.update(columns[1:])
        units = [m.group(2) if (m := _UNIT.match(t.header[i])) else None for i in columns]
        value = stem in _VALUES and t.kind() in ("kern_sum", "gpu_sum", "mem_time", "mem_size")
        differ: list[tuple[int, str, str]] = []
        for row, line in zip(t.rows, t.lines, strict=True):
            first = row[columns[0]]
            other = next(
                (
                    row[i]
                    for i, u in zip(columns[1:], units[1:], strict=True)
                    if not _same(first, row[i], units[0], u)
                ),
                None,
            )
            if other is None:
                continue
            differ.append((line, first, other))
            if value:
                row[columns[0]] = ""
                t.left_out.add((line, t.header[columns[0]]))
            else:
                drop.add(line)
        if differ:
            line, a, b = differ[0]
            what = "its value is left out in those rows" if value else "those rows are left out"
            warnings.append(
                f"column {t.header[columns[0]]} appears more than once in the header and its "
                f"copies differ in {len(differ)} row(s) ({t.where} {line}: {a[:40]!r} vs "
                f"{b[:40]!r}); {what}"
            )
    if extra:
        keep = [i for i in range(len(t.header)) if i not in extra]
        t.header = [t.header[i] for i in keep]
        t.rows = [[row[i] for i in keep] for row in t.rows]
    t.keep(drop)


def _drop_repeats(tables: list[Table], kind: str, warnings: list[str]) -> None:
    """Rows of one kind of table (over every such table in the file) that repeat an earlier
    row exactly count once. In a summary, rows of one key (name; grid and block; category or
    operation) that differ are all left out. A trace's repeats are dropped only where they
    must be copies: a ``CorrId`` column, or start and duration to the nanosecond."""
    if not tables:
        return
    trace, where = kind == "trace", tables[0].where
    first: dict[tuple, tuple[int, tuple]] = {}  # key -> first line, its whole row
    repeats: list[tuple[int, int]] = []  # (line, the line it repeats)
    kept_repeats: list[tuple[int, int]] = []
    clashes: dict[tuple, list[int]] = {}
    for t in tables:
        h = t.header
        keys = [i for i, c in enumerate(h) if c in ("Name", "GridXYZ", "BlockXYZ", "Category")]
        keys += [i for i, c in enumerate(h) if c == "Operation"]
        certain = (
            not trace or "CorrId" in h or (_scale(h, "Start") == _scale(h, "Duration") == 1e-9)
        )
        for row, line in zip(t.rows, t.lines, strict=True):
            whole = tuple(sorted(zip(h, (c.strip() for c in row), strict=True)))
            key = whole if trace else tuple((h[i], row[i].strip()) for i in keys)
            if key not in first:
                first[key] = (line, whole)
            elif first[key][1] == whole:
                (repeats if certain else kept_repeats).append((line, first[key][0]))
            else:
                clashes.setdefault(key, [first[key][0]]).append(line)
    if repeats:
        warnings.append(
            f"{len(repeats)} row(s) repeat an earlier row exactly (first: {where} {repeats[0][0]}, "
            f"the same as {where} {repeats[0][1]}; a file joined to itself or a paste?); each "
            f"is counted once"
        )
    if kept_repeats:
        warnings.append(
            f"{len(kept_repeats)} row(s) of the trace repeat an earlier row exactly (first: "
            f"line {kept_repeats[0][0]}, the same as line {kept_repeats[0][1]}); with times "
            f"this coarse and no CorrId they may be two launches, so both are kept"
        )
    if clashes:
        key, lines = next(iter(clashes.items()))
        label = ", ".join(v for _, v in key)
        warnings.append(
            f"{len(clashes)} kernel(s) or operation(s) have more than one row with different "
            f"values (first: {label[:60]!r} on {where} {lines[0]} and {where} {lines[1]}); "
            f"which is right is unknown, so they are left out"
        )
    # the lines are the file's, so one set serves every table
    drop = {line for line, _ in repeats} | {n for lines in clashes.values() for n in lines}
    for t in tables:
        t.keep(drop)


def _describe(t: Table) -> str:
    names = set(t.header)
    if "Num Calls" in names:
        return "an API/OS-runtime summary"
    if "Range" in names:
        return "an NVTX summary"
    if t.kind() in ("mem_time", "mem_size"):
        return "a memory-operation summary"
    return "a table with columns " + ", ".join(t.header[:3]) + "…"


def _kern_sum(t: Table, warnings: list[str], category: str | None = None) -> list[tuple]:
    """One row per kernel: its instances and its average time, Total Time / Instances (the
    printed average is rounded to 0.1 of the unit). A Total Time that cannot be read exactly
    leaves that row's time out (``t.unreadable`` names it); only a table with no Total Time
    column at all takes the printed Avg, with a warning."""
    h = t.header
    name = h.index("Operation") if category else h.index("Name")
    cols = {
        stem: (_col(h, stem), _scale(h, stem))
        for stem in ("Avg", "Average", "Min", "Minimum", "Max", "Maximum", "Med", "Total Time")
    }

    def value(row: list[str], line: int, *stems: str, strict: bool = False) -> float | None:
        """The first of ``stems`` the table has, in seconds; a cell that is not a plain number
        is noted in ``t.unreadable`` (an empty one too when ``strict``)."""
        for stem in stems:
            i, scale = cols[stem]
            if i is not None:
                if (line, h[i]) in t.left_out:
                    return None
                v = _num(row[i])
                if v is None and (strict or row[i].strip()):
                    t.unreadable.append((line, h[i], row[i]))
                return None if v is None else v * scale
        return None

    grid, block = (
        h.index("GridXYZ") if "GridXYZ" in h else None,
        (h.index("BlockXYZ") if "BlockXYZ" in h else None),
    )
    instances = h.index("Instances") if "Instances" in h else None
    has_total = cols["Total Time"][0] is not None
    out = []
    zero: list[int] = []
    for n, (row, line) in enumerate(zip(t.rows, t.lines, strict=True)):
        if category and row[h.index("Category")] != category:
            continue
        count = _num(row[instances]) if instances is not None else None
        if count is None or not 0 <= count <= BIG or count != int(count):
            t.skip(line, "no valid instance count (a whole number)")
            continue
        if has_total:  # Total / Instances, not the printed average
            total = value(row, line, "Total Time", strict=True)
            avg = total / count if total is not None and count else None
        else:
            avg = value(row, line, "Avg", "Average", strict=True)
            total = avg * count if avg is not None else None
        if count == 0 and total:
            zero.append(line)
            continue
        out.append(
            (
                n,
                None,
                None,
                None,
                None,
                row[name],
                _dims(row[grid]) if grid is not None else None,
                _dims(row[block]) if block is not None else None,
                int(count),
                avg,
                value(row, line, "Min", "Minimum"),
                value(row, line, "Max", "Maximum"),
                value(row, line, "Med"),
            )
        )
    if zero:
        warnings.append(
            f"{len(zero)} row(s) have Instances 0 but a time above 0 ({_at(zero, t.where)}): "
            f"a time without launches cannot be placed; they are left out"
        )
    if not has_total and out:
        warnings.append(
            "the table has no Total Time column: kernel times are the printed Avg (rounded to "
            "0.1 of its unit) × Instances, not exact"
        )
    return out


def _trace(
    con: duckdb.DuckDBPyConnection, t: Table, report_id: int, gpu_names: dict[int, str]
) -> list[tuple]:
    h = t.header
    start, dur = _col(h, "Start"), _col(h, "Duration")
    start_scale, dur_scale = _scale(h, "Start") * 1e9, _scale(h, "Duration") * 1e9
    name = h.index("Name") if "Name" in h else None
    dims = [_col(h, c) for c in ("GrdX", "GrdY", "GrdZ", "BlkX", "BlkY", "BlkZ")]
    bytes_col = _col(h, "Bytes")
    device_col = h.index("Device") if "Device" in h else None
    stream_col = h.index("Strm") if "Strm" in h else None
    # the memory kind of each side of a copy (Pageable, Pinned, Device…), newer nsys only
    sides = [h.index(c) if c in h else None for c in ("SrcMemKd", "DstMemKd")]
    kernels, memops = [], []
    for n, (row, line) in enumerate(zip(t.rows, t.lines, strict=True)):
        s, d = _num(row[start]), _num(row[dur])  # type: ignore[index]
        if s is None or d is None:
            t.skip(line, "no valid start or duration")
            continue
        if max(abs(s * start_scale), abs(s * start_scale + d * dur_scale)) > BIG:
            t.skip(line, "a start or end centuries from the session's start")
            continue
        s_ns, e_ns = round(s * start_scale), round(s * start_scale + d * dur_scale)
        device = None
        if device_col is not None and (m := _DEVICE.match(row[device_col].strip())):
            device = _small_int(float(m.group(2)))
            if device is not None and device < 2**31:
                gpu_names.setdefault(device, m.group(1))
            else:
                device = None
        stream = _small_int(_num(row[stream_col])) if stream_col is not None else None
        label = row[name] if name is not None else "(unnamed)"
        if label.startswith("[CUDA mem"):
            size = _num(row[bytes_col]) if bytes_col is not None else None
            memops.append(
                (
                    report_id,
                    s_ns,
                    e_ns,
                    device,
                    stream,
                    size * 1e6 if size is not None else None,
                    _memop_kind(label),
                    1,
                    d * dur_scale / 1e9,
                    host_kind(*(row[i] if i is not None else None for i in sides)),
                )
            )
            continue
        g = [_num(row[i]) if i is not None else None for i in dims]
        sizes = [
            f"({int(a)}, {int(b)}, {int(c)})" if None not in (a, b, c) else None
            for a, b, c in (g[:3], g[3:])
        ]
        kernels.append(
            (
                n,
                s_ns,
                e_ns,
                device,
                stream,
                label,
                sizes[0],
                sizes[1],
                1,
                d * dur_scale / 1e9,
                None,
                None,
                None,
            )
        )
    insert_rows(con, "memops", (*MEMOP_COLUMNS, "host_kind"), memops)
    return kernels


def _memop_kind(label: str) -> str:
    """``[CUDA memcpy Host-to-Device]`` / older ``[CUDA memcpy HtoD]`` -> ``Host-to-Device``."""
    inner = label.strip("[]").removeprefix("CUDA ").strip()
    if inner.startswith("memset"):
        return "memset"
    kind = inner.removeprefix("memcpy").strip()
    short = {
        "HtoD": "Host-to-Device",
        "DtoH": "Device-to-Host",
        "DtoD": "Device-to-Device",
        "HtoH": "Host-to-Host",
        "PtoP": "Peer-to-Peer",
    }
    return short.get(kind, kind or inner)


def _mem_summary(con: duckdb.DuckDBPyConnection, t: Table, report_id: int) -> None:
    h = t.header
    op = h.index("Operation")
    total_time, scale = _col(h, "Total Time"), _scale(h, "Total Time")
    count = (
        h.index("Count") if "Count" in h else (h.index("Instances") if "Instances" in h else None)
    )
    size = h.index("Total (MB)") if "Total (MB)" in h else None
    rows = []

    def number(row: list[str], line: int, i: int | None) -> float | None:
        if i is None or (line, h[i]) in t.left_out:
            return None
        v = _num(row[i])
        if v is None and row[i].strip():
            t.unreadable.append((line, h[i], row[i]))
        return v

    for row, line in zip(t.rows, t.lines, strict=True):
        if "Category" in h and row[h.index("Category")] != "MEMORY_OPER":
            continue
        seconds = number(row, line, total_time)
        mb = number(row, line, size)
        n = _small_int(number(row, line, count))
        rows.append(
            (
                report_id,
                None,
                None,
                None,
                None,
                mb * 1e6 if mb is not None else None,
                _memop_kind(row[op]),
                int(n) if n is not None else None,
                seconds * scale if seconds is not None else None,
            )
        )
    insert_rows(con, "memops", MEMOP_COLUMNS, rows)
