"""The Nsight Systems GUI's Events View saved as CSV (right-click → "Save as CSV").

The GUI lists the events of the timeline row a user selected; for a GPU row (``CUDA HW``, a
stream) the header is ``Name,Start,Duration,GPU,Context`` (more columns in some releases) and
every time carries its own unit: ``4.89664s``, ``296.991 μs``. Each time is read exactly, as a
decimal number times its unit (ns, μs/µs/us, ms, s, with or without a space); any other text
refuses the load, naming row and column.

What each row becomes:

* ``[CUDA memcpy …]``/``[CUDA memset …]`` (older GUIs) and ``Memcpy HtoD (…)``/``Memset (…)``
  (newer): memory operations, onto the timeline (``memops``) with their duration, without
  bytes (the view does not print them);
* every other row of a GPU row: one kernel launch, as a row of ``nsys stats``'s
  ``cuda_gpu_trace`` is (start, end = start + duration, device from ``GPU 0``, stream from
  ``Stream 7``).

A view without a ``GPU`` column lists CPU-side events (CUDA API calls, NVTX ranges, OS runtime
calls), which are not kernels: it is refused. A column the header names twice is read from
its first copy; rows where a copy differs are left out with a warning naming column and line.
Identical rows are all kept: start times are rounded, so two short launches of one kernel on
one stream can print the same. The GUI prints start times to about six
significant digits (10 µs at ~5 s into a run), so timeline positions and idle gaps are
approximate and say so; durations are printed to the nanosecond and are exact.
"""

from __future__ import annotations

import csv
import io
import re
from decimal import Decimal, InvalidOperation
from pathlib import Path

import duckdb

from roofscope.errors import RoofscopeError
from roofscope.ingest.nsys.stats import TIME_UNITS, complete_lines, read_bytes
from roofscope.ingest.nsys.tables import (
    LATEST_NS,
    MEMOP_COLUMNS,
    create_staging,
    host_kind,
    write_report,
)
from roofscope.ingest.report_info import ReportInfo
from roofscope.sqlutil import insert_rows

REQUIRED = ("Name", "Start", "Duration")
# nanoseconds per unit; the GUI writes μ (Greek mu), some systems µ (micro sign)
# the units the GUI prints, from the one table of nsys time units (in ns, as integers)
UNITS_NS = {u: round(TIME_UNITS[u] * 1e9) for u in ("ns", "\u03bcs", "\u00b5s", "us", "ms", "s")}
_TIME = re.compile(r"([+-]?(?:\d+(?:\.\d*)?|\.\d+))\s*([^\s\d.+-]+)")
_MEMOP = re.compile(r"^\[CUDA mem(cpy|set)\b[^\]]*\]$|^Mem(cpy|set)\b( \S+)?( \(.*\))?$")
_MEMCPY_KINDS = {
    "HtoD": "Host-to-Device",
    "DtoH": "Device-to-Host",
    "DtoD": "Device-to-Device",
    "HtoH": "Host-to-Host",
    "PtoP": "Peer-to-Peer",
    "HtoA": "Host-to-Array",
    "AtoH": "Array-to-Host",
    "AtoA": "Array-to-Array",
    "AtoD": "Array-to-Device",
    "DtoA": "Device-to-Array",
}
# the memory kinds of a copy's sides, where the label names them: "(Device -> Pageable)"
_SIDES = re.compile(r"\(\s*([A-Za-z][\w ]*?)\s*->\s*([A-Za-z][\w ]*?)\s*\)$")
_GPU = re.compile(r"^GPU\s*(\d+)\b")
_STREAM = re.compile(r"^Stream\s*(\d+)\b")
NOT_GPU = (
    "is a Nsight Systems Events View of CPU-side events (no GPU column: CUDA API calls, NVTX "
    "or OS runtime ranges), not of GPU kernels"
)
HINT = (
    "in the GUI select a CUDA HW (GPU) row before saving the Events View, or export the report: "
    "nsys export --type sqlite REPORT.nsys-rep"
)


def _header(text: str) -> list[str] | None:
    for line in text.splitlines():
        if line.strip():
            try:
                return [h.strip() for h in next(csv.reader([line]))]
            except csv.Error:
                return None
    return None


def is_nsys_events(path: Path) -> bool:
    """A CSV whose first line has ``Name``, ``Start`` and ``Duration`` columns, unit-less (the
    units are in the cells; ``nsys stats`` writes ``Start (ns)``)."""
    if path.is_dir():
        return False
    try:
        head = read_bytes(path, 1 << 16)[0].decode("utf-8-sig", "replace")  # gzip too
    except (OSError, RoofscopeError):
        return False
    header = _header(head)
    return header is not None and all(h in header for h in REQUIRED)


def parse_time_ns(text: str) -> tuple[int, int] | None:
    """``"296.991 μs"`` -> (296991, 1): nanoseconds (rounded to the nearest) and the
    resolution the text was printed to, in ns; None for anything not a number and a known
    unit."""
    m = _TIME.fullmatch(text.strip())
    if not m or m.group(2) not in UNITS_NS:
        return None
    try:
        number = Decimal(m.group(1))
    except InvalidOperation:
        return None
    scale = UNITS_NS[m.group(2)]
    exponent = number.as_tuple().exponent
    assert isinstance(exponent, int)  # a finite decimal: the regex admits no nan/inf
    step = Decimal(scale).scaleb(exponent)
    return int((number * scale).to_integral_value()), max(1, int(step.to_integral_value()))


def _memop_kind(label: str) -> str:
    words = label.strip("[]").removeprefix("CUDA ").split()
    if words[0].lower() == "memset":
        return "memset"
    return _MEMCPY_KINDS.get(words[1], words[1]) if len(words) > 1 else "memcpy"


def ingest_nsys_events(con: duckdb.DuckDBPyConnection, path: Path, report_id: int) -> ReportInfo:
    info = ReportInfo(report_id, str(path), "nsys-events")
    text = complete_lines(path, info.warnings).decode("utf-8-sig", "replace")
    rows = csv.reader(io.StringIO(text, newline=""))
    header = [h.strip() for h in next((r for r in rows if any(c.strip() for c in r)), [])]
    if "GPU" not in header:
        raise RoofscopeError(NOT_GPU, path=str(path), hint=HINT)
    name, start, dur, gpu = (header.index(c) for c in (*REQUIRED, "GPU"))
    context = header.index("Context") if "Context" in header else None
    copies = {
        header.index(c): [i for i, h in enumerate(header) if h == c][1:]
        for c in (*REQUIRED, "GPU", "Context")
        if header.count(c) > 1
    }
    differ: dict[int, list[tuple[int, str, str]]] = {}
    create_staging(con)
    kernels: list[tuple] = []
    memops: list[tuple] = []
    skipped = impossible = 0
    start_step = dur_step = 1
    for row in rows:
        line = rows.line_num
        if not any(c.strip() for c in row):
            continue
        if len(row) != len(header):
            skipped += 1
            continue
        if conflict := _conflict(row, copies, times=(start, dur)):
            column, other = conflict
            differ.setdefault(column, []).append((line, row[column], other))
            continue
        times = []
        for column in (start, dur):
            parsed = parse_time_ns(row[column])
            if parsed is None:
                raise RoofscopeError(
                    f"line {line}, column {header[column]}: {row[column][:40]!r} is not a time "
                    f"with a unit roofscope knows (ns, \u03bcs, us, ms, s)",
                    path=str(path),
                    hint="save the Events View again from the Nsight Systems GUI, unedited",
                )
            times.append(parsed)
        (s_ns, s_step), (d_ns, d_step) = times
        start_step, dur_step = max(start_step, s_step), max(dur_step, d_step)
        e_ns = s_ns + d_ns
        if max(abs(s_ns), abs(e_ns)) > LATEST_NS:  # centuries: damage, and past BIGINT
            impossible += 1
            continue
        m = _GPU.match(row[gpu].strip())
        device = int(m.group(1)) if m and int(m.group(1)) < 2**31 else None
        m = _STREAM.match(row[context].strip()) if context is not None else None
        stream = int(m.group(1)) if m and int(m.group(1)) < 2**63 else None
        label = row[name].strip() or "(unnamed)"
        if _MEMOP.match(label):
            kind = _memop_kind(label)
            host = host_kind(*m.groups()) if (m := _SIDES.search(label)) else None
            memops.append((report_id, s_ns, e_ns, device, stream, None, kind, 1, d_ns / 1e9, host))
        else:
            kernels.append((line, s_ns, e_ns, device, stream, label, 1, d_ns / 1e9))
    columns = ("source_row", "start_ns", "end_ns", "device", "stream", "kernel", "invocations")
    insert_rows(con, "stg_kernels", (*columns, "time_s"), kernels)
    insert_rows(con, "memops", (*MEMOP_COLUMNS, "host_kind"), memops)
    if skipped:
        info.warnings.append(f"skipped {skipped} row(s) with a wrong number of fields")
    for column, rows_differ in differ.items():
        line, first, other = rows_differ[0]
        info.warnings.append(
            f"column {header[column]} appears more than once in the header and its copies "
            f"differ in {len(rows_differ)} row(s) (line {line}: {first[:40]!r} vs "
            f"{other[:40]!r}); those rows are left out"
        )
    if impossible:
        info.warnings.append(
            f"skipped {impossible} row(s) whose start or end is centuries from the session's "
            f"start (a damaged or edited file)"
        )
    if start_step > 1 and (kernels or memops):
        info.warnings.append(
            f"the Events View prints start times rounded (here to as much as "
            f"{_show_ns(start_step)}): timeline positions and idle gaps are approximate to that; "
            f"durations are as printed"
        )
    if dur_step > 1 and (kernels or memops):
        info.warnings.append(
            f"some durations are printed rounded to {_show_ns(dur_step)}; kernel times carry "
            f"that rounding"
        )
    info.launches = write_report(con, report_id, info.warnings)
    if info.launches == 0:
        info.warnings.append("no kernel rows in this Events View")
    return info


def _conflict(
    row: list[str], copies: dict[int, list[int]], times: tuple[int, int]
) -> tuple[int, str] | None:
    """The first column (and its differing copy's text) whose copies disagree in ``row``:
    times compared as times (``2 μs`` is ``2000 ns``), other columns as text."""
    for column, others in copies.items():
        for i in others:
            a, b = row[column].strip(), row[i].strip()
            if a == b:
                continue
            ta, tb = (parse_time_ns(a), parse_time_ns(b)) if column in times else (None, None)
            if ta is not None and tb is not None and ta[0] == tb[0]:
                continue
            return column, row[i]
    return None


def _show_ns(ns: int) -> str:
    for unit, scale in (("s", 10**9), ("ms", 10**6), ("\u03bcs", 1000)):
        if ns >= scale:
            return f"{ns / scale:g} {unit}"
    return f"{ns} ns"
