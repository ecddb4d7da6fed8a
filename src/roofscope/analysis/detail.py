"""Every metric of one launch (or of a group) for the drill-down, raw and derived.

Raw values come from the report's reader (``ingest/registry.py``), which knows where each format
keeps them (the store, or the export read again); the session fetches them and hands them
here, so analysis imports neither the readers nor the store. A group shows extensive
quantities (bytes, instructions, cycles, seconds) summed and intensive ones (percentages,
rates, clocks) time-weighted, and says which.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from roofscope.present.units import AT_LEAST, incomplete_reason
from roofscope.quantities import (
    CHART,
    EFFICIENCY,
    EFFICIENCY_COMPLETE,
    LEVELS_OUTERMOST_FIRST,
    PRECISIONS,
    QUANTITIES,
    SUM,
    TIME_S,
    TRAFFIC,
    UTIL_COMPONENTS,
    UTIL_EFF,
    Quantity,
)
from roofscope.schema import NCU_HOT
from roofscope.sqlutil import quote_ident, quote_str

if TYPE_CHECKING:
    import duckdb

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
    bound: str = ""  # AT_LEAST where the value is a lower bound (an incomplete efficiency)


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
    lacking = ", ".join(f"bool_or({u} IS NULL AND NOT {EFFICIENCY_COMPLETE})" for u in UTIL_EFF)
    result = con.execute(
        f"SELECT {', '.join(exprs)}, bool_and({EFFICIENCY_COMPLETE}), {lacking} "
        f"FROM launch_view WHERE report_id = {report_id} AND ({where})"
    ).fetchall()[0]
    row, complete, missing = result[: len(DERIVED)], result[len(DERIVED)], result[-3:]
    out = []
    for q, value in zip(DERIVED, row, strict=True):
        name, unit = q.key, q.unit
        key = name.removesuffix("_eff")
        why = provenance.get(key) or provenance.get(name) or ""
        if name.endswith("_eff"):
            why = f"{why}; else achieved ÷ ceiling" if why else "achieved ÷ ceiling"
        bound = ""
        if name == EFFICIENCY:
            why = "max(tensor, FP32, DRAM utilisation)"
            if complete is False:
                lack = [c for c, m in zip(UTIL_COMPONENTS, missing, strict=True) if m]
                why = f"{why}; a lower bound: {incomplete_reason(lack)}"
                bound = AT_LEAST
        out.append(MetricRow("derived", name, value, unit or "fraction", why, bound))
    return out


def hot_instruction_rows(
    con: duckdb.DuckDBPyConnection, report_id: int, launch_id: int
) -> list[MetricRow]:
    """A launch's hottest SASS instructions by sampled warp stalls, where a binary report held
    source counters: what a terminal over SSH never showed of a kernel before."""
    rows = con.execute(
        f"SELECT address, instruction, samples, share FROM {NCU_HOT.name} "
        "WHERE report_id = ? AND launch_id = ? ORDER BY samples DESC",
        [report_id, launch_id],
    ).fetchall()
    return [
        MetricRow(
            "sass",
            f"{address} {' '.join(str(instruction).split())}",
            share,
            "fraction",
            f"{samples:,} warp samples stalled here (ncu source counters)",
        )
        for address, instruction, samples, share in rows
    ]


def raw_rows(values: list[Any]) -> list[MetricRow]:
    """Every exported value of one launch (its reader's ``RawValue`` records, which the
    session fetched), as Detail lists them."""
    return [MetricRow(v.kind, v.name, v.value, v.unit, v.source) for v in values]


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
