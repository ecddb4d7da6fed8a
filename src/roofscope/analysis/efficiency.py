"""Hardware efficiency per launch (DESIGN.md §4) and the step's efficiency histogram.

efficiency = max(tensor-pipe, FP32-pipe, DRAM utilisation), each the export's
``…pct_of_peak_sustained_elapsed`` metric when present, else achieved rate ÷ ceiling. The
histogram puts run time into ten bins of efficiency; time × efficiency is the time left after
perfect optimisation, so Σtime / Σ(time × efficiency) is the step's potential speedup.

Where a launch lacks a component (a details page without tensor or FP32 utilisation) its
efficiency is the maximum of the rest: a lower bound (``efficiency_complete`` false), so the
potential speedup made from it is an upper bound.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from roofscope.hardware.ceilings import Ceiling
from roofscope.quantities import EFFICIENCY_COMPLETE, LAUNCHES, TIME_S
from roofscope.sqlutil import insert_rows

BINS = 10

_COMPONENTS = (
    ("util_tensor", "tensor", "tensor"),
    ("util_fp32", "fp32", "fp32"),
    ("util_dram", "dram", "dram"),
)


def build_launch_table(con: duckdb.DuckDBPyConnection, ceilings: dict[int, list[Ceiling]]) -> None:
    """``launch_facts``: facts plus each utilisation (measured or achieved/ceiling) and
    the efficiency, for every launch of every report."""
    con.execute(
        "CREATE OR REPLACE TEMP TABLE ceilings (report_id INTEGER, name VARCHAR, value DOUBLE)"
    )
    insert_rows(
        con,
        "ceilings",
        ("report_id", "name", "value"),
        [(rid, c.name, c.value) for rid, cs in ceilings.items() for c in cs],
    )
    pivot = ", ".join(
        f"max(value) FILTER (WHERE name = '{name}') AS c_{name}" for _, name, _ in _COMPONENTS
    )
    utils = []
    for util, ceiling, quantity in _COMPONENTS:
        utils.append(
            f"coalesce(f.{util}, f.{quantity} / nullif(f.time_s, 0) / c.c_{ceiling}) AS {util}_eff"
        )
    # Unknown stays unknown: DuckDB's least() skips NULLs (least(1, NULL) = 1), and a launch
    # that used the tensor pipe without a measurable tensor utilisation has no honest maximum.
    best = "greatest(util_tensor_eff, util_fp32_eff, util_dram_eff)"
    # Complete: every component known, or a known one already at 100% (the rest cannot raise
    # it). Otherwise the maximum of the known ones is a lower bound (docs/metrics.md §4).
    all_known = " AND ".join(f"{util}_eff IS NOT NULL" for util, _, _ in _COMPONENTS)
    con.execute(
        f"CREATE OR REPLACE TEMP VIEW launch_facts AS "
        f"SELECT *, CASE WHEN efficiency IS NULL THEN NULL "
        f"ELSE ({all_known}) OR efficiency >= 1.0 END AS {EFFICIENCY_COMPLETE} FROM ("
        f"SELECT *, CASE WHEN {best} IS NULL THEN NULL "
        f"WHEN util_tensor_eff IS NULL AND coalesce(tensor_inst, 0) > 0 THEN NULL "
        f"ELSE least(1.0, {best}) END AS efficiency "
        f"FROM (SELECT f.*, {', '.join(utils)} FROM facts f "
        f"LEFT JOIN (SELECT report_id, {pivot} FROM ceilings GROUP BY report_id) c "
        f"ON c.report_id = f.report_id))"
    )


@dataclass(frozen=True)
class Bin:
    lo: float
    hi: float
    time_s: float
    kernels: int
    launches: int
    time_x_efficiency_s: float
    complete: bool = True  # False: a launch in the bin has a lower-bound efficiency

    def to_dict(self) -> dict[str, object]:
        return {
            "lo": self.lo,
            "hi": self.hi,
            TIME_S: self.time_s,
            "kernels": self.kernels,
            LAUNCHES: self.launches,
            "time_x_efficiency_s": self.time_x_efficiency_s,
            EFFICIENCY_COMPLETE: self.complete,
        }


def histogram(
    con: duckdb.DuckDBPyConnection, report_id: int, where: str = "TRUE"
) -> tuple[list[Bin], dict[str, float | int], dict[str, object]]:
    """Ten efficiency bins of one report, the launches whose efficiency is unknown, and those
    whose efficiency is a lower bound (``incomplete``: with the components they lack).

    One query: the bins and the unknown launches are its groups (``b`` NULL: unknown), the
    lower bounds its grand total row (``GROUPING SETS``). Planning a query over the
    ``launch_facts`` view costs ~3-5 ms whatever its rows, three queries twice that more."""
    known = "efficiency IS NOT NULL AND time_s IS NOT NULL"
    partial = f"FILTER (WHERE {known} AND NOT {EFFICIENCY_COMPLETE})"
    rows = con.execute(
        f"SELECT grouping(b) = 1 AS whole, b, sum(t), count(DISTINCT kernel), sum(invocations), "
        f"sum(t * efficiency), bool_and({EFFICIENCY_COMPLETE}), "
        f"sum(t) {partial}, count(DISTINCT kernel) {partial}, sum(invocations) {partial} "
        f"FROM (SELECT *, time_s * invocations AS t, CASE WHEN {known} THEN "
        f"least(CAST(floor(efficiency * {BINS}) AS INTEGER), {BINS - 1}) END AS b "
        f"FROM launch_facts WHERE report_id = {int(report_id)} AND ({where})) "
        f"GROUP BY GROUPING SETS ((b), ())"
    ).fetchall()
    by_bin = {r[1]: r for r in rows if not r[0] and r[1] is not None}
    unknown = next((r for r in rows if not r[0] and r[1] is None), None)
    whole = next((r for r in rows if r[0]), None)
    bins = []
    for b in range(BINS):
        r = by_bin.get(b)
        bins.append(
            Bin(
                b / BINS,
                (b + 1) / BINS,
                float(r[2]) if r else 0.0,
                int(r[3]) if r else 0,
                int(r[4]) if r else 0,
                float(r[5] or 0.0) if r else 0.0,
                bool(r[6]) if r else True,
            )
        )
    lower = (whole[7] or 0.0, whole[8] or 0, whole[9] or 0) if whole else (0.0, 0, 0)
    return (
        bins,
        {
            TIME_S: float(unknown[2] or 0.0) if unknown else 0.0,
            "kernels": int(unknown[3]) if unknown else 0,
            LAUNCHES: int(unknown[4] or 0) if unknown else 0,
        },
        {
            TIME_S: float(lower[0]),
            "kernels": int(lower[1]),
            LAUNCHES: int(lower[2]),
            "missing": missing_components(con, report_id, where) if lower[2] else [],
        },
    )


def missing_components(
    con: duckdb.DuckDBPyConnection, report_id: int, where: str = "TRUE"
) -> list[str]:
    """The components (``tensor``, ``fp32``, ``dram``) unknown in some launch whose efficiency
    is a lower bound: why it is one."""
    lacking = ", ".join(f"bool_or({util}_eff IS NULL)" for util, _, _ in _COMPONENTS)
    row = con.execute(
        f"SELECT {lacking} FROM launch_facts WHERE report_id = {report_id} "
        f"AND NOT {EFFICIENCY_COMPLETE} AND ({where})"
    ).fetchall()[0]
    return [name for (_, name, _), miss in zip(_COMPONENTS, row, strict=True) if miss]


def potential_speedup(bins: list[Bin]) -> float | None:
    """Σtime / Σ(time × efficiency) over launches of known efficiency (Amdahl at 100%)."""
    total = sum(b.time_s for b in bins)
    floor_time = sum(b.time_x_efficiency_s for b in bins)
    if total <= 0 or floor_time <= 0:
        return None
    return total / floor_time
