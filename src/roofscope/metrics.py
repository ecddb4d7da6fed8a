"""Derived per-launch quantities (DESIGN.md §4) as SQL, each with the formula it came from.

For every report a :class:`MetricPlan` picks, from the metrics the export actually contains, one
formula per quantity (time, FLOPs per precision, tensor ops, bytes per level in both
conventions, utilisations) and records it as provenance. The plan is then run as one SQL
projection over ``values_r{N}``, so a million launches cost one scan.

The tensor rule is the one the published studies got wrong: tensor FLOPs come from the aggregate
``sm__ops_path_tensor_src_*`` counters; ``512 × sm__inst_executed_pipe_tensor`` is used only on
CC 7.0 (V100); anywhere else a bare instruction count leaves tensor FLOPs unknown, with a
warning naming the metrics to collect.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field

import duckdb

from roofscope import metric_names as mn
from roofscope.quantities import (
    CACHE_LEVELS,
    CHART,
    PRECISIONS,
    SCALAR_PRECISIONS,
    TIME_MAX_S,
    TIME_MED_S,
    TIME_MIN_S,
    TIME_S,
    TRAFFIC,
    sum_known_sql,
)
from roofscope.sqlutil import quote_ident

FP16_CONVENTIONS = ("ncu", "nersc")
UTIL_FIELDS = ("util_tensor", "util_fp32", "util_dram")

TENSOR_HINT = (
    "collect the sm__ops_path_tensor_src_* counters (ncu --section "
    "SpeedOfLight_HierarchicalTensorRooflineChart, or --metrics "
    "sm__ops_path_tensor_src_fp16_dst_fp32.sum,sm__ops_path_tensor_src_bf16_dst_fp32.sum,"
    "sm__ops_path_tensor_src_tf32_dst_fp32.sum on ncu 2023.2 or newer)"
)

_WEIGHTS = {
    # precision: {op: (ncu weight, NERSC weight)}
    "fp64": {"dadd": (1, 1), "dmul": (1, 1), "dfma": (2, 2)},
    "fp32": {"fadd": (1, 1), "fmul": (1, 1), "ffma": (2, 2)},
    "fp16": {"hadd": (2, 1), "hmul": (2, 1), "hfma": (4, 2)},
}


@dataclass
class MetricPlan:
    """Per report: the SQL of each derived column and the words that explain it."""

    report_id: int
    exprs: dict[str, str] = field(default_factory=dict)
    provenance: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def set(self, name: str, expr: str | None, why: str) -> None:
        self.exprs[name] = expr if expr is not None else "NULL::DOUBLE"
        self.provenance[name] = why


def _col(metric: str) -> str:
    return f"v.{quote_ident(metric)}"


class _Available:
    """The report's numeric metrics, with helpers to pick count or rate forms."""

    def __init__(self, metrics: set[str]):
        self.metrics = metrics

    def has(self, metric: str) -> bool:
        return metric in self.metrics

    def first(self, *candidates: str) -> str | None:
        return next((m for m in candidates if m in self.metrics), None)

    def clock(self, counter: str) -> str | None:
        """The clock a ``.per_cycle_elapsed`` rate of this counter is per (by unit prefix)."""
        unit = counter.split("__", 1)[0]
        order = {
            "smsp": (mn.SMSP_CLOCK, mn.SM_CLOCK, mn.GPC_CLOCK),
            "sm": (mn.SM_CLOCK, mn.SMSP_CLOCK, mn.GPC_CLOCK),
            "dram": (mn.DRAM_CLOCK,),
            "lts": (mn.LTS_CLOCK,),
            "l1tex": (mn.L1_CLOCK,),
        }.get(unit, ())
        return self.first(*order)

    def count(self, counter: str, counted_only: bool = False) -> tuple[str, str] | None:
        """SQL and formula text for a counter's total, from the count or a rate form."""
        if self.has(counter):
            return _col(counter), counter
        if counted_only:
            return None
        if self.has(counter + ".per_second"):
            return (f"{_col(counter + '.per_second')} * time_s", f"{counter}.per_second × time")
        clock = self.clock(counter)
        if self.has(counter + ".per_cycle_elapsed") and clock:
            return (
                f"{_col(counter + '.per_cycle_elapsed')} * {_col(clock)} * time_s",
                f"{counter}.per_cycle_elapsed × {clock} × time",
            )
        return None

    def spelled(
        self, spellings: tuple[mn.Spelling, ...], counted_only: bool = False
    ) -> tuple[str, str] | None:
        """The first spelling the export has, scaled: counted forms of every spelling first.

        A count read from the export is exact; a rate × time rebuilds it with the rounding of
        two auto-scaled values, so an alias's count wins over the main name's rate (an export of
        ``dram__bytes.sum.per_second`` and ``dram__sectors_read.sum`` reads the sectors). Within
        one pass spellings are tried in table order, the exact metric before an alias.
        """
        if not counted_only:
            found = self.spelled(spellings, counted_only=True)
            if found is not None:
                return found
        for spelling in spellings:
            found = self.count(spelling.metric, counted_only)
            if found is None:
                continue
            if spelling.factor == 1:
                return found
            return f"{spelling.factor} * ({found[0]})", f"{spelling.factor} × {found[1]}"
        return None

    def unread(self, prefixes: tuple[str, ...], known: set[str]) -> list[str]:
        """Byte or sector counters of these units that no spelling reads (sorted)."""
        return sorted(
            m
            for m in self.metrics
            if m.startswith(prefixes)
            and ("bytes" in m or "sectors" in m)
            and m.split(".", 1)[0] not in known
            and (m.endswith(".sum") or m.endswith((".sum.per_second", ".sum.per_cycle_elapsed")))
        )


def _known_counters(*groups: tuple[mn.Spelling, ...]) -> set[str]:
    return {s.metric.split(".", 1)[0] for group in groups for s in group}


def _warn_unknown(plan: MetricPlan, have: _Available, level: str, words: str) -> None:
    """A level whose bytes are unknown gets a warning naming what to collect; when the export
    has counters of that unit under a spelling roofscope does not read, they are named too."""
    groups = {
        "dram": (mn.DRAM_SPELLINGS, mn.DRAM_READ_SPELLINGS, mn.DRAM_WRITE_SPELLINGS),
        "l2": (mn.L2_SPELLINGS,),
        "l1": (mn.L1_SPELLINGS,),
    }[level]
    unread = have.unread(mn.UNIT_PREFIXES[level], _known_counters(*groups))
    if not unread:
        return  # nothing of this unit was measured: an export without it is not an error
    shown = ", ".join(unread[:3]) + (f" and {len(unread) - 3} more" if len(unread) > 3 else "")
    plan.warnings.append(
        f"{words} unknown: the export has {shown}, which roofscope does not read as {words} "
        f"(collect {mn.COLLECT[level]})"
    )


def plan_report(
    report_id: int, metrics: set[str], cc: str | None, fp16_convention: str = "ncu"
) -> MetricPlan:
    """Choose a formula for every derived quantity of one report."""
    if fp16_convention not in FP16_CONVENTIONS:
        raise ValueError(fp16_convention)
    have = _Available(metrics)
    plan = MetricPlan(report_id)
    _plan_time(plan, have)
    for precision in SCALAR_PRECISIONS:
        _plan_flops(plan, have, precision, fp16_convention)
    _plan_tensor(plan, have, cc)
    _plan_bytes(plan, have)
    _plan_utilisation(plan, have)
    inst = have.spelled(mn.TENSOR_INST_SPELLINGS)
    plan.set("tensor_inst", inst[0] if inst else None, inst[1] if inst else "not measured")
    _warn_unmeasured_flops(plan)
    return plan


def _warn_unmeasured_flops(plan: MetricPlan) -> None:
    """Where the tensor precision was not measured but the export shows the tensor pipe's use
    (``--set detailed``: no tensor counters, the pipe utilisation there), say that the FLOPs
    of tensor work are lower bounds and the bounds then come from utilisations. (An export of
    the NERSC recipe, FP32 counters alone, says nothing of the tensor pipe: its rows carry
    ``flops_complete`` false and ``≥`` without a warning on every file.)"""
    if plan.exprs.get("tensor") != "NULL::DOUBLE" or plan.exprs.get("util_tensor") in (
        None,
        "NULL::DOUBLE",
    ):
        return
    plan.warnings.append(
        "tensor FLOPs not measured (no sm__ops_path_tensor_* counters; --set detailed has "
        "none): where the tensor pipe was busy, FLOPs, FLOP/s and intensity are lower "
        "bounds (unknown where the measured precisions are 0) and the bound is the busiest "
        f"unit by its utilisation ('by use'); {TENSOR_HINT}"
    )


def _plan_time(plan: MetricPlan, have: _Available) -> None:
    # nsys stats summaries carry each kernel's spread; single launches are their own spread.
    for stat in ("min", "max", "med"):
        metric = f"nsys__time_{stat}"
        found = have.has(metric)
        plan.set(f"time_{stat}_s", _col(metric) if found else None, metric if found else "time")
    if have.has("nsys__duration"):
        plan.set(
            TIME_S,
            _col("nsys__duration"),
            "nsys: end − start on the real timeline (stats summaries: average per instance)",
        )
    elif have.has(mn.TIME):
        plan.set(TIME_S, _col(mn.TIME), "gpu__time_duration.sum")
    elif pair := next(((c, k) for c, k, _ in mn.TIME_PAIRS if have.has(c) and have.has(k)), None):
        # X / X.per_second is the duration by ncu's definition of .per_second (metric_names)
        cycles, clock = pair
        plan.set(TIME_S, f"{_col(cycles)} / nullif({_col(clock)}, 0)", f"{cycles} / {clock}")
    else:
        plan.set(TIME_S, None, f"not measured (collect {mn.TIME})")
        halves = [
            f"{c} without {k}" if have.has(c) else f"{k} without {c}"
            for c, k, _ in mn.TIME_PAIRS
            if have.has(c) != have.has(k)
        ]
        has = f"; the export has {halves[0]}" if halves else ""
        plan.warnings.append(
            f"no kernel duration in this export: times, rates and shares are unknown "
            f"(collect {mn.TIME}{has})"
        )


def _plan_flops(plan: MetricPlan, have: _Available, precision: str, convention: str) -> None:
    terms: list[tuple[int, str]] = []
    words = []
    for op, (w_ncu, w_nersc) in _WEIGHTS[precision].items():
        weight = w_ncu if (precision != "fp16" or convention == "ncu") else w_nersc
        found = have.spelled(mn.sass_op_spellings(op))
        if found is None:
            continue
        sql, text = found
        terms.append((weight, sql))
        words.append(f"{weight}·{text}" if weight != 1 else text)
    if not terms:
        plan.set(precision, None, f"not measured (no {precision} instruction counters)")
        return
    label = ""
    if precision == "fp16":
        label = (
            " [Nsight Compute convention: packed half2 counts 2 per add/mul, 4 per fma]"
            if convention == "ncu"
            else " [NERSC convention: 1 per add/mul, 2 per fma]"
        )
    plan.set(precision, sum_known_sql(terms), " + ".join(words) + label)


def _plan_tensor(plan: MetricPlan, have: _Available, cc: str | None) -> None:
    for suffix in ("", ".per_second", ".per_cycle_elapsed"):
        counters = mn.tensor_aggregates(have.metrics, suffix)
        if not counters:
            continue
        found = [have.count(c[: len(c) - len(suffix)] if suffix else c) for c in counters]
        if any(f is None for f in found):
            continue  # a rate without its clock: try the next form
        terms = [(1, sql) for sql, _ in found]  # type: ignore[misc]
        words = " + ".join(text for _, text in found)  # type: ignore[misc]
        plan.set("tensor", sum_known_sql(terms), "Σ aggregate tensor-path ops: " + words)
        return
    inst = have.spelled(mn.TENSOR_INST_SPELLINGS)
    if inst is not None:
        if cc == "7.0":
            plan.set(
                "tensor",
                f"512 * ({inst[0]})",
                f"512 × {inst[1]} (V100 HMMA.884, FP32 accumulate)",
            )
            return
        where = f"CC {cc}" if cc else "a GPU of unknown compute capability"
        plan.set(
            "tensor",
            None,
            f"unknown: {inst[1]} counts instructions, and FLOPs per instruction vary on {where}",
        )
        plan.warnings.append(
            f"tensor FLOPs unknown: the export has only {inst[1]}, whose "
            f"FLOPs per instruction are not fixed on {where} (×512 holds only on V100); "
            f"{TENSOR_HINT}"
        )
        return
    plan.set("tensor", None, "not measured (no tensor-path counters in the export)")


def _plan_bytes(plan: MetricPlan, have: _Available) -> None:
    # precedence (docs/metrics.md, Metric spellings): dram__bytes.sum, else read + write with
    # each direction's first spelling (dram__bytes_read, _op_read, 32 × sectors)
    # counted totals before any rebuilt from a rate (MetricPlan.spelled): a counted read +
    # write beats dram__bytes.sum.per_second × time
    dram = read = write = None
    for counted_only in (True, False):
        dram = have.spelled(mn.DRAM_SPELLINGS, counted_only)
        if dram is not None:
            break
        read = have.spelled(mn.DRAM_READ_SPELLINGS, counted_only)
        write = have.spelled(mn.DRAM_WRITE_SPELLINGS, counted_only)
        if read and write:
            dram = (f"{read[0]} + {write[0]}", f"{read[1]} + {write[1]}")
            break
    if dram is None and (read or write):
        only = read or write
        dram = (only[0], f"{only[1]} only (a lower bound: the other direction not exported)")
        plan.warnings.append(f"DRAM bytes from {only[1]} alone: a lower bound")
    if dram is None:
        _warn_unknown(plan, have, "dram", "DRAM bytes")
    plan.set("dram", dram[0] if dram else None, dram[1] if dram else "not measured")
    traffic = {"l1": have.spelled(mn.L1_SPELLINGS), "l2": have.spelled(mn.L2_SPELLINGS)}
    for level in CACHE_LEVELS:
        found = traffic[level]
        plan.set(
            f"{level}_traffic",
            found[0] if found else None,
            f"{found[1]} (NERSC traffic convention)" if found else "not measured",
        )
    l1_wb = (
        have.count(mn.L1_WRITEBACK_LGDS)
        or have.count(mn.L1_WRITEBACK_LG)
        or have.count(mn.L1_WRITEBACK_OLD)
    )
    l2_x = have.count(mn.L2_LTS2XBAR)
    plan.set(
        CHART[0],
        f"128 * ({l1_wb[0]})" if l1_wb else None,
        f"128 × {l1_wb[1]} (Nsight Compute chart convention)" if l1_wb else "not measured",
    )
    plan.set(
        CHART[1],
        f"32 * ({l2_x[0]})" if l2_x else None,
        f"32 × {l2_x[1]} (Nsight Compute chart convention)" if l2_x else "not measured",
    )
    for level, words in (("l1", "L1 bytes"), ("l2", "L2 bytes")):
        if traffic[level] is None and plan.exprs[f"{level}_chart"] == "NULL::DOUBLE":
            _warn_unknown(plan, have, level, words)
    for level in CACHE_LEVELS:
        use = "traffic" if traffic[level] else "chart"
        plan.set(
            level,
            f"coalesce({plan.exprs[f'{level}_{use}']}, NULL::DOUBLE)",
            plan.provenance[f"{level}_{use}"],
        )


def _plan_utilisation(plan: MetricPlan, have: _Available) -> None:
    for name, candidates in (
        ("util_tensor", mn.UTIL_TENSOR),
        ("util_fp32", mn.UTIL_FP32),
        ("util_dram", mn.UTIL_DRAM),
    ):
        metric = have.first(*candidates)
        if metric is None:
            sum_form = [c.replace(".avg.", ".sum.") for c in candidates]
            metric = have.first(*sum_form)
        if metric is not None:
            plan.set(name, f"{_col(metric)} / 100.0", metric)
        else:
            plan.set(name, None, "not in export (achieved / ceiling used instead)")


FACT_COLUMNS = (
    TIME_S,
    TIME_MIN_S,
    TIME_MAX_S,
    TIME_MED_S,
    *PRECISIONS,
    "dram",
    "l1",
    "l2",
    *TRAFFIC,
    *CHART,
    *UTIL_FIELDS,
    "tensor_inst",
)


def facts_select(plan: MetricPlan) -> str:
    """One report's launches with every derived column, as a SELECT over ``values_r{N}``."""
    rid = plan.report_id
    time_expr = plan.exprs[TIME_S]
    inner = ", ".join(f"{plan.exprs[c]} AS {c}" for c in FACT_COLUMNS if c != TIME_S)
    return (
        f"SELECT l.report_id, l.launch_id, l.kernel, l.invocations, l.nvtx, l.block_size, "
        f"l.grid_size, t.* EXCLUDE (launch_id) FROM launches l JOIN ("
        f"SELECT launch_id, time_s, {inner} FROM (SELECT v.*, {time_expr} AS time_s "
        f"FROM values_r{rid} v) v) t ON t.launch_id = l.launch_id WHERE l.report_id = {rid}"
    )


def signature(plan: MetricPlan) -> str:
    """Identifies the formulas of a plan: equal signatures give equal facts."""
    blob = json.dumps(plan.exprs, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


# The launch columns of the facts, with their types; every derived column is a DOUBLE.
FACT_LAUNCH_COLUMNS = (
    ("report_id", "INTEGER"),
    ("launch_id", "BIGINT"),
    ("kernel", "VARCHAR"),
    ("invocations", "BIGINT"),
    ("nvtx", "VARCHAR"),
    ("block_size", "VARCHAR"),
    ("grid_size", "VARCHAR"),
)
_OPTIONAL_TEXT = ("nvtx", "block_size", "grid_size")
_ALWAYS_NULL = re.compile(r"(coalesce\()?NULL::DOUBLE(, NULL::DOUBLE)*\)?")


def _signature_key(report_id: int) -> str:
    return f"facts_signature_r{int(report_id)}"


def begin_facts(
    con: duckdb.DuckDBPyConnection, report_id: int, metrics: set[str], columns: list[str]
) -> str:
    """An empty ``facts_r{N}`` for a reader that writes a report's facts itself, as it writes
    its launches (an nsys trace: no join of a million launches with their values afterwards),
    marked as the facts of the default plan for ``metrics``; returns its name. ``columns``, a
    subset of the stored facts' in their order: every other one holds one value for every
    launch (see :func:`store_facts`). :func:`store_facts` keeps the table when its plan is that
    one, and builds it anew otherwise; :func:`drop_facts` takes it back."""
    rid = int(report_id)
    types = {**dict(FACT_LAUNCH_COLUMNS), **dict.fromkeys(FACT_COLUMNS, "DOUBLE")}
    order = [n for n, _ in FACT_LAUNCH_COLUMNS if n != "report_id"] + list(FACT_COLUMNS)
    picked = [c for c in order if c in columns]
    con.execute(f"CREATE TABLE facts_r{rid} ({', '.join(f'{c} {types[c]}' for c in picked)})")
    plan = plan_report(rid, metrics, None, "ncu")
    con.execute("INSERT INTO meta VALUES (?, ?)", [_signature_key(rid), signature(plan)])
    return f"facts_r{rid}"


def drop_facts(con: duckdb.DuckDBPyConnection, report_id: int) -> None:
    """Remove a report's stored facts and their mark (a reader giving up, a plan changed)."""
    con.execute(f"DROP TABLE IF EXISTS facts_r{int(report_id)}")
    con.execute("DELETE FROM meta WHERE key = ?", [_signature_key(report_id)])


def store_facts(con: duckdb.DuckDBPyConnection, plan: MetricPlan) -> None:
    """Persist one report's facts as ``facts_r{N}`` (run while the cache is being built),
    unless its reader already wrote them for this plan (:func:`begin_facts`).

    Columns that hold one value for every launch are left out and put back by
    :func:`_stored_facts`: NULL for a formula without metrics or text no launch has, the report
    id, an ``invocations`` of 1. DuckDB spends 30–50 ms per million rows on storing each such
    column, most of a trace's facts (docs/decisions.md)."""
    rid = plan.report_id
    written = con.execute("SELECT value FROM meta WHERE key = ?", [_signature_key(rid)]).fetchall()
    if written and written[0][0] == signature(plan):
        return
    drop_facts(con, rid)
    *counts, other_invocations = con.execute(
        f"SELECT {', '.join(f'count({c})' for c in _OPTIONAL_TEXT)}, "
        f"count(*) FILTER (WHERE invocations IS DISTINCT FROM 1) FROM launches "
        f"WHERE report_id = {rid}"
    ).fetchall()[0]
    keep = ["launch_id", "kernel", *(["invocations"] if other_invocations else [])]
    keep += [c for c, n in zip(_OPTIONAL_TEXT, counts, strict=True) if n]
    keep += [c for c in FACT_COLUMNS if c == TIME_S or not _ALWAYS_NULL.fullmatch(plan.exprs[c])]
    con.execute(
        f"CREATE TABLE facts_r{rid} AS SELECT {', '.join(keep)} FROM ({facts_select(plan)})"
    )
    con.execute("INSERT INTO meta VALUES (?, ?)", [_signature_key(rid), signature(plan)])


def _stored_facts(con: duckdb.DuckDBPyConnection, rid: int) -> str:
    """``facts_r{N}`` with every fact column in order, each one :func:`store_facts` left out put
    back (caches built before it stored them all; both read the same)."""
    have = {d[0] for d in con.execute(f"SELECT * FROM facts_r{rid} LIMIT 0").description}
    constant = {"report_id": str(int(rid)), "invocations": "1"}
    columns = [*FACT_LAUNCH_COLUMNS, *((c, "DOUBLE") for c in FACT_COLUMNS)]
    picked = ", ".join(
        n if n in have else f"CAST({constant.get(n, 'NULL')} AS {t}) AS {n}" for n, t in columns
    )
    return f"SELECT {picked} FROM facts_r{rid}"


def build_facts(con: duckdb.DuckDBPyConnection, plans: list[MetricPlan]) -> None:
    """The session's ``facts`` view: one row per launch of every report.

    A report whose plan matches the facts stored in the cache reads them from there (a cached
    re-open then computes nothing per launch); any other plan (``--fp16-convention nersc``,
    ``--gpu`` giving an unknown CC) is computed into a temporary table.
    """
    stored = dict(
        con.execute("SELECT key, value FROM meta WHERE key LIKE 'facts_signature_r%'").fetchall()
    )
    parts = []
    for plan in plans:
        rid = plan.report_id
        if stored.get(_signature_key(rid)) == signature(plan):
            parts.append(_stored_facts(con, rid))
        else:
            con.execute(f"CREATE OR REPLACE TEMP TABLE facts_tmp_r{rid} AS {facts_select(plan)}")
            parts.append(f"SELECT * FROM facts_tmp_r{rid}")
    union = " UNION ALL BY NAME ".join(f"({p})" for p in parts)
    con.execute(f"CREATE OR REPLACE TEMP VIEW facts AS {union}")
