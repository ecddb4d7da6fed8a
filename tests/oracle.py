"""An independent reader of Nsight Compute / Nsight Systems exports, for tests only.

Written apart from ``roofscope.ingest`` (no shared code, standard library only) from DESIGN.md
§4, reference/formats.md and docs/metrics.md, so that a bug in roofscope's readers shows up as a
disagreement with this one. It computes only report totals: launches, kernel time, FLOPs per
precision and bytes per memory level, ``None`` where the file does not have the quantity.

Kept deliberately plain: one pass with :mod:`csv` over the text from the header on, one unit
table, and the formulas of docs/metrics.md §1 chosen once per report. Anything it cannot read
exactly (an unknown unit, a number in an unknown format) raises :class:`OracleError` rather than
being guessed; files that are not a kernel export it knows raise :class:`NotAnExport`.
"""

from __future__ import annotations

import csv
import functools
import gzip
import io
import json
import re
import sqlite3
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

FLOPS = ("fp64", "fp32", "fp16", "tensor")
BYTES = ("l1", "l2", "dram")


class OracleError(Exception):
    """The file is an export, but something in it cannot be read exactly."""


class NotAnExport(Exception):
    """The file is not a kernel export this reader knows (with the reason)."""


@dataclass
class Totals:
    """Report totals in base SI units; ``None`` = the file does not have it."""

    kind: str
    launches: int
    time_s: float | None
    flops: dict[str, float | None] = field(default_factory=dict)
    bytes: dict[str, float | None] = field(default_factory=dict)

    def as_dict(self) -> dict[str, float | int | None]:
        out: dict[str, float | int | None] = {"launches": self.launches, "time_s": self.time_s}
        out.update({f"flops.{k}": self.flops.get(k) for k in FLOPS})
        out.update({f"bytes.{k}": self.bytes.get(k) for k in BYTES})
        return out


# -- units and numbers --------------------------------------------------------------------------

_PREFIX = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_SECONDS = {"ns": 1e-9, "nsecond": 1e-9, "us": 1e-6, "usecond": 1e-6, "μs": 1e-6, "µs": 1e-6,
            "ms": 1e-3, "msecond": 1e-3, "s": 1.0, "second": 1.0}  # fmt: skip
_UNITS: dict[str, float] = {"": 1.0, "inst": 1.0, "cycle": 1.0, "inst/cycle": 1.0}
_UNITS.update(_SECONDS)
for _p, _f in _PREFIX.items():
    _UNITS[f"{_p}byte"] = _f  # decimal prefixes: Kbyte = 1e3 (formats.md §1.5)
    for _per in ("s", "second"):
        _UNITS[f"{_p}byte/{_per}"] = _f
    _UNITS[f"{_p}hz" if _p == "" else f"{_p}hz".capitalize()] = _f  # hz, Khz, Mhz, Ghz
_UNITS["sector"] = 1.0
for _t, _f in _SECONDS.items():
    _UNITS[f"cycle/{_t}"] = 1.0 / _f  # cycle/second, cycle/nsecond, cycle/us, ...
    _UNITS[f"sector/{_t}"] = 1.0 / _f

_GROUPED = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$")
_PLAIN = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def number(text: str) -> float | None:
    """ncu's value text as a float: thousands separators, ``n/a``/``nan``/empty = None, and an
    instanced value ``"65,536 (0; 0; …)"`` is its aggregate before the parenthesis."""
    s = text.strip()
    if " (" in s:
        s = s.split(" (", 1)[0].strip()
    if s.lower() in ("", "n/a", "nan", "-nan"):
        return None
    if _GROUPED.match(s):
        return float(s.replace(",", ""))
    if _PLAIN.match(s):
        return float(s)
    raise OracleError(f"cannot read number {text!r}")


def in_base(text: str, unit: str) -> float | None:
    value = number(text)
    if value is None:
        return None
    if unit not in _UNITS:
        raise OracleError(f"unknown unit {unit!r} (value {text!r})")
    return value * _UNITS[unit]


# -- reading the file ---------------------------------------------------------------------------


def _text(path: Path) -> str:
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    text = data.decode("utf-8", errors="strict")
    return text.removeprefix("\ufeff")


_NCU_HEADER = re.compile(r'^\ufeff?"?(ID"?,"?Process ID|Process ID"?,"?Process Name)"?,', re.M)


def read(path: str | Path) -> Totals:
    """Totals of one export file (ncu CSV pages, nsys SQLite, nsys stats CSV/TSV/JSON, the
    Nsight Systems GUI Events View CSV)."""
    path = Path(path)
    if path.is_dir():
        raise NotAnExport("a folder (parquetdir needs a Parquet reader; not in the stdlib)")
    head = path.read_bytes()[:16]
    if head.startswith(b"SQLite format 3\x00"):
        return _nsys_sqlite(path)
    text = _text(path)
    m = _NCU_HEADER.search(text)
    if m:
        return _ncu(text[m.start() :])
    if text.lstrip().startswith(("[", "{")):
        return _nsys_json(text)
    return _nsys_stats(text)


# -- Nsight Compute -----------------------------------------------------------------------------


# Section body labels of a details page and the metric each one shows (verified row by row
# against ``--print-metric-name name`` of the same H100 report, samples/generated).
_LABELS = {
    ("GPU Speed Of Light Throughput", "Duration"): "gpu__time_duration.sum",
    ("GPU Speed Of Light Throughput", "DRAM Frequency"): "dram__cycles_elapsed.avg.per_second",
    ("GPU Speed Of Light Throughput", "SM Frequency"): "gpc__cycles_elapsed.avg.per_second",
    ("Memory Workload Analysis", "Memory Throughput"): "dram__bytes.sum.per_second",
}


@dataclass
class _Launch:
    weight: int  # 1, or Invocations for a per-kernel summary row
    cc: str | None
    values: dict[str, tuple[str, str]]  # metric -> (value text, unit)


def _ncu(text: str) -> Totals:
    rows = csv.reader(io.StringIO(text, newline=""))
    header = next(rows)
    if "Metric Name" in header and "Invocations" in header:
        launches, kind = _summary_page(header, rows), "ncu-summary"
    elif "Metric Name" in header:
        launches, kind = _details_page(header, rows), "ncu-details"
    else:
        launches, kind = _raw_page(header, rows), "ncu-raw"
    return _ncu_totals(kind, launches)


def _raw_page(header: list[str], rows) -> list[_Launch]:
    first = next(rows, None)
    if first is None:
        return []
    data = []
    if first and first[0].strip() == "":
        units = first
    else:
        raise OracleError("raw page without a units row: units of its values are unknown")
    cc_col = header.index("CC") if "CC" in header else None
    for row in rows:
        if len(row) != len(header) or not row[0].strip().isdigit():
            continue
        values = {h: (v, u) for h, v, u in zip(header, row, units, strict=True)}
        cc = row[cc_col].strip() if cc_col is not None else None
        if cc is None:
            major = values.get("device__attribute_compute_capability_major")
            minor = values.get("device__attribute_compute_capability_minor")
            if major and minor and number(major[0]) is not None:
                cc = f"{int(number(major[0]))}.{int(number(minor[0]) or 0)}"
        data.append(_Launch(1, cc, values))
    return data


def _details_page(header: list[str], rows) -> list[_Launch]:
    i_name, i_unit, i_value = (
        header.index(c) for c in ("Metric Name", "Metric Unit", "Metric Value")
    )
    i_section = header.index("Section Name")
    i_cc = header.index("CC") if "CC" in header else None
    launches: dict[str, _Launch] = {}
    labelled: dict[str, dict[str, tuple[str, str]]] = {}
    for row in rows:
        if len(row) <= i_value or len(row) > len(header) or not row[0].strip().isdigit():
            continue  # noise, a free-text line, a rule row of another width
        launch = launches.setdefault(row[0].strip(), _Launch(1, None, {}))
        if i_cc is not None:
            launch.cc = row[i_cc].strip()
        name = row[i_name]
        if not name:
            continue  # a rule row
        if (row[i_section], name) in _LABELS:
            labelled.setdefault(row[0].strip(), {}).setdefault(
                _LABELS[row[i_section], name], (row[i_value], row[i_unit])
            )
        launch.values.setdefault(name, (row[i_value], row[i_unit]))
    for key, values in labelled.items():  # a metric's own row wins over its label's
        for name, value in values.items():
            launches[key].values.setdefault(name, value)
    return list(launches.values())


def _summary_page(header: list[str], rows) -> list[_Launch]:
    i_name, i_unit, i_avg = (header.index(c) for c in ("Metric Name", "Metric Unit", "Average"))
    i_section, i_inv = header.index("Section Name"), header.index("Invocations")
    i_cc = header.index("CC") if "CC" in header else None
    groups: dict[tuple[str, ...], _Launch] = {}
    labelled: dict[tuple[str, ...], dict[str, tuple[str, str]]] = {}
    for row in rows:
        if len(row) <= i_avg or len(row) > len(header) or not row[i_inv].strip():
            continue
        inv = number(row[i_inv])
        if inv is None:
            continue
        key = tuple(row[:i_section])
        cc = row[i_cc].strip() if i_cc is not None else None
        group = groups.setdefault(key, _Launch(int(inv), cc, {}))
        name = row[i_name]
        if (row[i_section], name) in _LABELS:
            labelled.setdefault(key, {}).setdefault(
                _LABELS[row[i_section], name], (row[i_avg], row[i_unit])
            )
        if name:
            group.values.setdefault(name, (row[i_avg], row[i_unit]))
    for key, values in labelled.items():
        for name, value in values.items():
            groups[key].values.setdefault(name, value)
    return list(groups.values())


def _ncu_totals(kind: str, launches: list[_Launch]) -> Totals:
    present: set[str] = set()
    for launch in launches:
        present.update(launch.values)
    time = _time_formula(present)
    per_launch = [(lt, _launch_quantities(lt, present, time)) for lt in launches]
    totals = Totals(kind, sum(lt.weight for lt in launches), None)
    keys = ("time_s", *(f"flops.{k}" for k in FLOPS), *(f"bytes.{k}" for k in BYTES))
    sums: dict[str, float | None] = {}
    for key in keys:
        known = [q[key] * lt.weight for lt, q in per_launch if q[key] is not None]
        sums[key] = sum(known) if known else None
    totals.time_s = sums["time_s"]
    totals.flops = {k: sums[f"flops.{k}"] for k in FLOPS}
    totals.bytes = {k: sums[f"bytes.{k}"] for k in BYTES}
    return totals


def _time_formula(present: set[str]) -> tuple[str, ...] | None:
    """DESIGN §4 *Time*: gpu__time_duration.sum, else cycles ÷ cycles per second."""
    if "gpu__time_duration.sum" in present:
        return ("gpu__time_duration.sum",)
    for p in ("sm__", "smsp__"):
        if {f"{p}cycles_elapsed.avg", f"{p}cycles_elapsed.avg.per_second"} <= present:
            return (f"{p}cycles_elapsed.avg", f"{p}cycles_elapsed.avg.per_second")
    return None


_CLOCKS = {"smsp__": ("smsp__", "sm__", "gpc__"), "sm__": ("sm__", "smsp__", "gpc__"),
           "dram__": ("dram__",), "lts__": ("lts__",), "l1tex__": ("l1tex__",)}  # fmt: skip
_FORMS = ("", ".per_second", ".per_cycle_elapsed")

# A term is a list of alternatives (weight, counter); a formula is a list of terms.
Term = list[tuple[float, str]]


def _op(name: str) -> Term:
    base = f"sass_thread_inst_executed_op_{name}_pred_on"
    return [(1, f"smsp__{base}"), (1, f"sm__{base}")]  # smsp__ first; both count the same


def _bytes(stem: str) -> Term:
    """``X__…bytes`` or 32 × the matching ``…sectors`` counter (a sector is 32 B)."""
    return [(1, stem), (32, stem.replace("bytes", "sectors"))]


_DRAM = ([_bytes("dram__bytes")], [_bytes("dram__bytes_read"), _bytes("dram__bytes_write")])
_L2 = (([_bytes("lts__t_bytes")],), ([[(32, "lts__lts2xbar_cycles_active")]],))
_L1 = (
    ([_bytes("l1tex__t_bytes")],),
    ([[(128, "l1tex__lsu_writeback_active_mem_lgds")]],
     [[(128, "l1tex__lsu_writeback_active_mem_lg")]],
     [[(128, "l1tex__lsu_writeback_active")]]),
)  # fmt: skip


def _launch_quantities(
    launch: _Launch, present: set[str], time: tuple[str, ...] | None
) -> dict[str, float | None]:
    def get(name: str) -> float | None:
        if name not in launch.values:
            return None
        return in_base(*launch.values[name])

    t: float | None = None
    if time is not None and len(time) == 1:
        t = get(time[0])
    elif time is not None:
        cycles, rate = get(time[0]), get(time[1])
        t = cycles / rate if cycles is not None and rate else None

    def value(counter: str, form: str) -> float | None:
        """The counter's ``.sum`` in one form: the count, ``.per_second`` × time, or
        ``.per_cycle_elapsed`` × its unit's clock × time."""
        v = get(f"{counter}.sum{form}")
        if form == "" or v is None:
            return v
        if t is None:
            return None
        if form == ".per_second":
            return v * t
        unit = counter.split("__", 1)[0] + "__"
        for p in _CLOCKS.get(unit, (unit,)):
            if f"{p}cycles_elapsed.avg.per_second" in present:
                clock = get(f"{p}cycles_elapsed.avg.per_second")
                return v * clock * t if clock is not None else None
        return None

    def term_in(term: Term, form: str) -> tuple[float, str] | None:
        return next(((w, c) for w, c in term if f"{c}.sum{form}" in present), None)

    def resolve(*formulas: list[Term]) -> float | None:
        """Exact counts before values rebuilt from rates; within a form, the first formula
        that has any of its terms (a missing term counts 0; all unknown = None)."""
        for form in _FORMS:
            for formula in formulas:
                chosen = [term_in(term, form) for term in formula]
                if not any(chosen):
                    continue
                values = [(w, value(c, form)) for w, c in filter(None, chosen)]
                known = [w * v for w, v in values if v is not None]
                return sum(known) if known else None
        return None

    def by_convention(conventions) -> float | None:
        """Traffic counters when the report has them, else the chart convention (per report)."""
        for formulas in conventions:
            if any(term_in(term, f) for formula in formulas for term in formula for f in _FORMS):
                return resolve(*formulas)
        return None

    out: dict[str, float | None] = {"time_s": t}
    out["flops.fp64"] = resolve([[(1, c) for _, c in _op("dadd")], _op("dmul"),
                                 [(2, c) for _, c in _op("dfma")]])  # fmt: skip
    out["flops.fp32"] = resolve([_op("fadd"), _op("fmul"), [(2, c) for _, c in _op("ffma")]])
    out["flops.fp16"] = resolve([[(2, c) for _, c in _op("hadd")], [(2, c) for _, c in _op("hmul")],
                                 [(4, c) for _, c in _op("hfma")]])  # fmt: skip
    out["flops.tensor"] = _tensor(launch, present, resolve)
    out["bytes.dram"] = resolve(*_DRAM)
    out["bytes.l2"] = by_convention(_L2)
    out["bytes.l1"] = by_convention(_L1)
    return out


_TENSOR = re.compile(r"^sm__ops_path_tensor_src_[a-z0-9]+(_dst_[a-z0-9]+)?(_sparsity_(on|off))?$")


@functools.lru_cache(maxsize=16)
def _tensor_stems(present: frozenset[str]) -> list[str]:
    """The aggregate sm__ops_path_tensor_src_* counters among ``present`` (the same for every
    launch of a file: worked out once, not once per launch)."""
    stems = set()
    for name in present:
        stem = re.sub(r"\.sum(\.per_second|\.per_cycle_elapsed)?$", "", name)
        if stem != name and _TENSOR.match(stem):
            stems.add(stem)
    chosen = []
    for stem in sorted(stems):
        family = re.sub(r"_sparsity_(on|off)$", "", stem)
        if family != stem and family in stems:
            continue  # the family's aggregate is there: its halves would double count
        chosen.append(stem)
    return chosen


def _tensor(launch: _Launch, present: set[str], resolve) -> float | None:
    """Σ of the aggregate sm__ops_path_tensor_src_* counters (never the _op_ splits; a family
    exported only as _sparsity_on/_off adds its two halves); 512 × pipe_tensor only on CC 7.0."""
    chosen = _tensor_stems(frozenset(present))
    if chosen:
        return resolve([[(1, s)] for s in chosen])
    if launch.cc == "7.0" and "sm__inst_executed_pipe_tensor.sum" in present:
        v = launch.values.get("sm__inst_executed_pipe_tensor.sum")
        n = in_base(*v) if v else None
        return 512 * n if n is not None else None
    return None


# -- binary .ncu-rep, through NVIDIA's own reader ----------------------------------------------

_REP_UNITS: dict[str, str] = {}  # the module spells units as the CSV pages do


def read_ncu_rep(path: str | Path) -> Totals:
    """A binary report's totals read with NVIDIA's ``ncu_report`` module directly (no CSV, no
    roofscope code): each launch's numeric metrics with the units the module gives, then the
    same formulas as the CSV pages. Raises ``ImportError`` without the module."""
    import ncu_report

    context = ncu_report.load_report(str(path))
    launches = []
    for r in range(context.num_ranges()):
        workload = context.range_by_idx(r)
        for a in range(workload.num_actions()):
            action = workload.action_by_idx(a)
            values: dict[str, tuple[str, str]] = {}
            for name in action.metric_names():
                metric = action.metric_by_name(name)
                if metric is None or not metric.has_value() or ":" in name:
                    continue
                value = metric.value()
                if isinstance(value, str):
                    continue
                unit = metric.unit() or ""
                values[name] = (repr(float(value)), _REP_UNITS.get(unit, unit))
            major = values.get("device__attribute_compute_capability_major")
            minor = values.get("device__attribute_compute_capability_minor")
            cc = f"{int(float(major[0]))}.{int(float(minor[0]))}" if major and minor else None
            launches.append(_Launch(1, cc, values))
    return _ncu_totals("ncu-rep", launches)


# -- Nsight Systems -----------------------------------------------------------------------------


def _nsys_sqlite(path: Path) -> Totals:
    uri = "file:" + urllib.parse.quote(str(path.resolve())) + "?mode=ro"
    con = sqlite3.connect(uri, uri=True)
    try:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "CUPTI_ACTIVITY_KIND_KERNEL" not in tables:
            return Totals("nsys-sqlite", 0, None, dict.fromkeys(FLOPS), dict.fromkeys(BYTES))
        n, ns = con.execute(
            'SELECT count(*), sum("end" - start) FROM CUPTI_ACTIVITY_KIND_KERNEL'
        ).fetchone()
    finally:
        con.close()
    time_s = ns / 1e9 if ns is not None else None
    return Totals("nsys-sqlite", int(n), time_s, dict.fromkeys(FLOPS), dict.fromkeys(BYTES))


_TIME_UNIT = re.compile(r"\((ns|us|ms|s)\)\s*$")


def _column_seconds(name: str) -> float:
    m = _TIME_UNIT.search(name)
    if not m:
        raise OracleError(f"no time unit in column {name!r}")
    return _SECONDS[m.group(1)]


def _stats_table(header: list[str], rows: list[list[str]]) -> Totals:
    """Σ of an nsys stats table of kernels: a summary (Instances, Total Time), the gpu summary
    (kernels only) or the trace (kernel rows: those with a grid)."""
    col = {h.strip(): i for i, h in enumerate(header)}
    none_f, none_b = dict.fromkeys(FLOPS), dict.fromkeys(BYTES)
    total = next((h for h in col if h.startswith("Total Time")), None)
    if total and "Instances" in col and ("Name" in col or "Operation" in col):
        scale = _column_seconds(total)
        keep = rows
        if "Category" in col:
            keep = [r for r in rows if r[col["Category"]] == "CUDA_KERNEL"]
        n = sum(int(number(r[col["Instances"]]) or 0) for r in keep)
        times = [number(r[col[total]]) for r in keep]
        known = [x for x in times if x is not None]
        return Totals("nsys-stats", n, sum(known) * scale if known else None, none_f, none_b)
    duration = next((h for h in col if h.startswith("Duration")), None)
    if duration and "GrdX" in col:
        scale = _column_seconds(duration)
        kernels = [r for r in rows if r[col["GrdX"]].strip() != ""]
        times = [number(r[col[duration]]) for r in kernels]
        known = [x for x in times if x is not None]
        return Totals(
            "nsys-stats", len(kernels), sum(known) * scale if known else None, none_f, none_b
        )
    raise NotAnExport(f"an nsys stats table without kernels ({', '.join(header[:4])}…)")


def _nsys_stats(text: str) -> Totals:
    lines = text.splitlines()
    events = re.compile(r"^Name,Start,Duration,")
    for i, line in enumerate(lines):
        if events.match(line):
            return _events_view(lines[i:])
    kernel_tables = []
    for i, line in enumerate(lines):
        delim = "\t" if "\t" in line else ","
        cells = [c.strip() for c in next(csv.reader([line], delimiter=delim))] if line else []
        if not any(c.startswith(("Total Time", "Start (")) for c in cells):
            continue
        body = []
        for row_line in lines[i + 1 :]:
            if not row_line.strip():
                break
            body.append(row_line)
        rows = [r for r in csv.reader(body, delimiter=delim) if len(r) == len(cells)]
        try:
            kernel_tables.append(_stats_table(cells, rows))
        except NotAnExport:
            continue
    if len(kernel_tables) == 1:
        return kernel_tables[0]
    if len(kernel_tables) > 1:
        raise NotAnExport("several kernel tables in one capture")
    raise NotAnExport("no nsys stats table of kernels and no ncu header")


def _nsys_json(text: str) -> Totals:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotAnExport(f"not JSON and no CSV header: {exc}") from None
    if not isinstance(data, list) or not data or not isinstance(data[0], dict):
        raise NotAnExport("a JSON document that is not an nsys stats list of rows")
    header = list(data[0])
    rows = [["" if r.get(h) is None else str(r.get(h)) for h in header] for r in data]
    return _stats_table(header, rows)


_EVENT_TIME = re.compile(r"^\s*([0-9.]+)\s*(ns|μs|µs|us|ms|s)\s*$")


def _events_view(lines: list[str]) -> Totals:
    """Nsight Systems GUI Events View saved as CSV: Name,Start,Duration,… with unit suffixes."""
    rows = list(csv.reader(lines))
    header = rows[0]
    i = header.index("Duration")
    n, total = 0, 0.0
    for row in rows[1:]:
        if len(row) != len(header):
            continue
        m = _EVENT_TIME.match(row[i])
        if not m:
            raise OracleError(f"cannot read duration {row[i]!r}")
        n += 1
        total += float(m.group(1)) * _SECONDS[m.group(2)]
    return Totals(
        "nsys-events", n, total if n else None, dict.fromkeys(FLOPS), dict.fromkeys(BYTES)
    )


# -- ncu's rule rows, rolled up per rule (roofscope advise) -------------------------------------


@dataclass
class RuleTotals:
    launches: int
    time_s: float
    est_gain_s: float | None  # Σ estimate % × launch time; None: no launch has an estimate


def ncu_rules(path: str | Path, types: tuple[str, ...] = ("OPT", "WRN")) -> dict[str, RuleTotals]:
    """Per ncu rule firing as one of ``types``: the launches it fires on, their time (each
    launch's ``gpu__time_duration.sum`` or its Speed Of Light ``Duration`` label) and the gain
    its Estimated Speedups claim (a rule twice on one launch: its larger estimate)."""
    text = _text(Path(path))
    m = _NCU_HEADER.search(text)
    if not m:
        raise NotAnExport("no ncu header")
    rows = csv.reader(io.StringIO(text[m.start() :], newline=""))
    header = next(rows)
    col = {name: i for i, name in enumerate(header)}
    duration: dict[str, float] = {}
    fired: dict[str, dict[str, float | None]] = {}  # rule -> launch -> estimate %
    for row in rows:
        if not row or not row[0].strip().isdigit():
            continue
        launch = row[0].strip()
        name = row[col["Metric Name"]] if len(row) > col["Metric Name"] else ""
        if name:
            key = (row[col["Section Name"]], name)
            if name == "gpu__time_duration.sum" or _LABELS.get(key) == "gpu__time_duration.sum":
                seconds = in_base(row[col["Metric Value"]], row[col["Metric Unit"]])
                if seconds is not None:
                    duration.setdefault(launch, seconds)
            continue
        if "Rule Name" not in col or len(row) <= col["Rule Type"]:
            continue
        rule, kind = row[col["Rule Name"]].strip(), row[col["Rule Type"]].strip().upper()
        if not rule or kind not in types:
            continue
        estimate = None
        if "Estimated Speedup" in col and len(row) > col["Estimated Speedup"]:
            estimate = number(row[col["Estimated Speedup"]])
        launches = fired.setdefault(rule, {})
        old = launches.get(launch)
        launches[launch] = estimate if old is None else max(old, estimate or old)
    out = {}
    for rule, launches in fired.items():
        gains = [
            pct / 100 * duration[launch]
            for launch, pct in launches.items()
            if pct is not None and launch in duration
        ]
        out[rule] = RuleTotals(
            len(launches),
            sum(duration.get(launch, 0.0) for launch in launches),
            sum(gains) if gains else None,
        )
    return out
